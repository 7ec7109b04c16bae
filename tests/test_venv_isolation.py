"""dcnlab's venv imports its own packages and, of the system's Python, only Mininet (``setup-venv``), so the
regular package ``google`` that PI's ``make install`` and p4lang's packages put into a system site
directory cannot hide the venv's ``google.protobuf``.

The "system site directory" here is the base interpreter's *user* site directory under a temporary
HOME. It is the faithful stand-in that needs neither root nor a write into /usr/local: like
/usr/local/lib/python3.X/dist-packages, it is on the path of the system interpreter and of a venv made
with --system-site-packages, and on no isolated venv's path. (PYTHONPATH is not: it reaches every venv,
isolated or not; the tests of the one-line guard use it for that reason.) The throwaway venvs are made
``--without-pip``; the packages a real venv would hold (protobuf, finsy, grpc, pytest, dcnlab) come from
the running interpreter's site directory through a .pth, so nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from dcnlab.controller.runtime import toolchain

ROOT = Path(__file__).resolve().parent.parent
SETUP_VENV = ROOT / "setup-venv"
BASE = getattr(sys, "_base_executable", None) or sys.executable   # the interpreter this venv was made from
HANG = 300   # s: a hang guard, far above what any of these takes


def pi_tree(site: Path) -> None:
    """What PI's ``make install --with-proto`` leaves in its site directory (the modules' bodies left out)."""
    for pkg in ("google", "google/rpc", "p4", "p4/v1"):
        (site / pkg).mkdir(parents=True, exist_ok=True)
        (site / pkg / "__init__.py").write_text("")


def run(argv: list, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, env=env, timeout=HANG,
                          cwd=kw.pop("cwd", ROOT), **kw)


@pytest.fixture
def system(tmp_path):
    """(env, site): an environment whose base interpreter sees ``site`` as a site directory, holding PI's
    tree and a Mininet of its own (so the test needs no Debian package and can tell where Mininet came from)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["HOME"] = str(tmp_path / "home")
    out = run([BASE, "-c", "import json, site; print(json.dumps([site.ENABLE_USER_SITE, site.getusersitepackages()]))"],
              env=env)
    enabled, user_site = json.loads(out.stdout)
    if not enabled:
        pytest.skip(f"{BASE} has no user site directory here")
    site = Path(user_site)
    pi_tree(site)
    (site / "mininet").mkdir()
    (site / "mininet" / "__init__.py").write_text("")
    (site / "mininet" / "net.py").write_text("class Mininet: pass\n")
    return env, site


def with_packages(venv: Path) -> None:
    """Give a throwaway venv the packages of the running interpreter (as if pip had installed them), ahead of
    anything else a .pth adds, as a real venv's own site-packages is."""
    import finsy
    import google.protobuf
    import grpc
    dirs = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
            *(str(Path(m.__file__).parents[n]) for m, n in ((finsy, 1), (google.protobuf, 2), (grpc, 1), (pytest, 1))),
            str(ROOT)]
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "00-dcnlab-test-packages.pth").write_text("\n".join(dict.fromkeys(dirs)) + "\n")


PROBE = """
import json, importlib, os
out = {}
for m in ("google.protobuf", "finsy.proto", "dcnlab.controller.runtime", "mininet.net", "p4", "google.rpc"):
    try:
        mod = importlib.import_module(m)
        out[m] = os.path.realpath(mod.__file__)
    except ImportError as e:
        out[m] = "ImportError: " + str(e)
print(json.dumps(out))
"""


def probe(venv: Path, env: dict, *flags: str) -> dict:
    r = run([venv / "bin" / "python", *flags, "-c", PROBE], env=env)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def assert_isolated(venv: Path, env: dict, site: Path) -> None:
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg and "= true" not in cfg
    for flags in ((), ("-I",)):      # -I: as the cluster mode runs its agents on the other machines
        got = probe(venv, env, *flags)
        for m in ("google.protobuf", "finsy.proto", "dcnlab.controller.runtime"):
            assert not got[m].startswith("ImportError"), (flags, m, got[m])
        assert got["mininet.net"] == str((site / "mininet" / "net.py").resolve()), got   # the system's Mininet
        for m in ("p4", "google.rpc"):                                                     # and nothing else of it
            assert got[m].startswith("ImportError"), (flags, m, got[m])


def setup_venv(venv: Path, env: dict, *modules: str) -> subprocess.CompletedProcess:
    # as ./setup runs it: the system interpreter, -E
    return run([BASE, "-E", SETUP_VENV, "--without-pip", venv, *(modules or ("mininet",))], env=env)


def test_an_old_venv_is_switched_to_its_own_packages_and_the_controller_tests_pass(system, tmp_path):
    env, site = system
    venv = tmp_path / "venv"
    r = run([BASE, "-m", "venv", "--system-site-packages", "--without-pip", venv], env=env)   # what ./setup did
    assert r.returncode == 0, r.stderr
    with_packages(venv)
    before = probe(venv, env)
    assert before["google.protobuf"].startswith("ImportError: No module named 'google.protobuf'"), before   # the defect
    assert before["p4"] == str((site / "p4" / "__init__.py").resolve())

    r = setup_venv(venv, env)
    assert r.returncode == 0, r.stderr
    assert "saw every system site directory" in r.stderr
    assert_isolated(venv, env, site)
    r = run([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/controller-unit-test"],
            env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout and "error" not in r.stdout.lower()


def test_a_new_venv_is_isolated_and_a_second_run_changes_nothing(system, tmp_path):
    env, site = system
    venv = tmp_path / "venv"
    r = setup_venv(venv, env)
    assert r.returncode == 0, r.stderr
    with_packages(venv)
    assert_isolated(venv, env, site)
    pth = next((venv / "lib").glob("python3*/site-packages/_dcnlab_system_modules.pth"))
    link = venv / "system-modules" / "mininet"
    assert link.is_symlink() and Path(os.readlink(link)) == site / "mininet"
    state = [(p, p.lstat().st_mtime_ns, p.lstat().st_ino) for p in (venv / "pyvenv.cfg", pth, link)]
    r = setup_venv(venv, env)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert [(p, p.lstat().st_mtime_ns, p.lstat().st_ino) for p, _, _ in state] == state


def test_a_module_the_system_lacks_is_refused_before_anything_is_made(system, tmp_path):
    env, _ = system
    venv = tmp_path / "venv"
    r = setup_venv(venv, env, "mininet", "no_such_module_dcnlab")
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "no module 'no_such_module_dcnlab'" in r.stderr, r.stderr
    assert not venv.exists()


def test_setup_makes_its_venv_with_setup_venv_not_with_the_system_site_packages():
    code = [line.split("#", 1)[0] for line in (ROOT / "setup").read_text().splitlines()]
    assert any("setup-venv .venv mininet" in line for line in code)
    assert not any("--system-site-packages" in line for line in code)
    assert os.access(SETUP_VENV, os.X_OK)


# -- the guard: PYTHONPATH reaches any venv, so dcnlab names the file instead of failing deep in finsy --------
def hidden_env(tmp_path: Path) -> tuple[dict, Path]:
    pi_tree(tmp_path / "pi")
    return dict(os.environ, PYTHONPATH=str(tmp_path / "pi")), tmp_path / "pi" / "google" / "__init__.py"


def test_importing_the_runtime_names_the_google_package_that_hides_protobuf(tmp_path):
    """The package itself loads lazily (no protobuf for ``runtime.netns``); its protobuf door checks."""
    env, init = hidden_env(tmp_path)
    ok = run([sys.executable, "-c", "import dcnlab.controller.runtime.netns, dcnlab.controller.runtime.toolchain"],
             env=env)
    assert ok.returncode == 0, ok.stderr
    r = run([sys.executable, "-c", "import dcnlab.controller.runtime; dcnlab.controller.runtime.Controller"], env=env)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("dcnlab.controller.runtime.protobuf_check.ProtobufUnavailable: "), r.stderr
    assert repr(str(init)) in last and "./setup" in last


@pytest.mark.parametrize("argv", [["--help"], ["topo", "fattree:k=4"]])
def test_the_cli_says_one_line_when_protobuf_is_hidden(tmp_path, argv):
    env, init = hidden_env(tmp_path)
    r = run([sys.executable, "-m", "dcnlab", *argv], env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("dcnlab: error: ") and repr(str(init)) in r.stderr and "Traceback" not in r.stderr


def test_simple_switch_cli_sees_the_python_modules_of_a_debian_packaged_toolchain(tmp_path, monkeypatch):
    """BMv2's CLI runs under the venv's interpreter, which no longer sees /usr/lib/python3/dist-packages."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib" / "python3" / "dist-packages").mkdir(parents=True)
    monkeypatch.setenv(toolchain.PREFIX_VAR, str(tmp_path))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    assert toolchain.tool_env()["PYTHONPATH"].split(os.pathsep) == [str(tmp_path / "lib" / "python3" / "dist-packages")]
