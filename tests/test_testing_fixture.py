"""dcnlab.testing, the pytest plugin with the fake P4Runtime server: the example in
examples/controller-unit-test passes under pytest, the plugin loads through its entry point and
through ``pytest_plugins`` (both at once too), and it costs a run that does not use it nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:       # Python 3.10: the test extra installs tomli, the same parser under its earlier name
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "controller-unit-test"


def pytest_run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=120)


def test_the_example_controller_unit_test_passes():
    r = pytest_run([str(EXAMPLE)], cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "5 passed" in r.stdout


def test_the_example_passes_without_plugin_autoloading():
    r = pytest_run([str(EXAMPLE)], cwd=ROOT, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert r.returncode == 0, r.stdout + r.stderr


def test_pyproject_registers_the_plugin():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["project"]["entry-points"]["pytest11"] == {"dcnlab.testing": "dcnlab.testing"}


def _entry_point_dist(where: Path) -> None:
    """A distribution whose only content is dcnlab's pytest11 entry point, as an install writes it."""
    info = where / "dcnlab_plugin_probe-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dcnlab-plugin-probe\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[pytest11]\ndcnlab.testing = dcnlab.testing\n")


USER_TEST = '''
from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.entities import TableEntry

INFO = P4Info.from_file({p4info!r})

def test_fixtures_from_the_entry_point(p4runtime_server, p4runtime_servers):
    a, b = p4runtime_servers(2)
    assert len({{p4runtime_server.addr, a.addr, b.addr}}) == 3
    c = SwitchClient("s1", 0, a.addr, (0, 3))
    try:
        c.set_pipeline(INFO, b"{{}}")
        c.write(INFO, [+TableEntry("RIngress.routes", {{"hdr.ipv4.dst": ("10.0.0.0", 8)}}, "RIngress.drop")])
    finally:
        c.close()
    assert a.arbitrations == [(0, 3)] and len(a.table_entries("RIngress.routes")) == 1
    assert b.arbitrations == [] and p4runtime_server.write_requests == []
'''


def test_the_entry_point_loads_the_plugin_and_pytest_plugins_is_then_harmless(tmp_path):
    site = tmp_path / "site"
    _entry_point_dist(site)
    user = tmp_path / "user"
    user.mkdir()
    (user / "test_user.py").write_text(USER_TEST.format(p4info=str(ROOT / "tests" / "fixtures" / "router.p4info.txtpb")))
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    r = pytest_run(["test_user.py"], cwd=user, env=env)      # no pytest_plugins, no conftest: the entry point
    assert r.returncode == 0, r.stdout + r.stderr
    r = pytest_run([str(EXAMPLE)], cwd=ROOT, env=env)         # entry point + the example's pytest_plugins
    assert r.returncode == 0, r.stdout + r.stderr
    r = pytest_run(["-p", "no:dcnlab.testing", "test_user.py"], cwd=user, env=env)
    assert r.returncode != 0 and "fixture 'p4runtime_server' not found" in r.stdout


def test_importing_the_plugin_is_cheap_and_needs_pytest():
    code = ("import sys, dcnlab.testing; "
            "assert 'grpc' not in sys.modules and 'dcnlab.controller.runtime.fake_server' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    code = "import sys; sys.modules['pytest'] = None; import dcnlab.testing"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "dcnlab.testing is a pytest plugin and needs pytest" in r.stderr
