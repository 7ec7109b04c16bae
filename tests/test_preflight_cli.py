"""Commands that emulate (or compile) check root and the P4 toolchain before any work.

Each command runs in a subprocess with ``PATH=/usr/bin:/bin`` and no ``$DCNLAB_P4_PREFIX``, so BMv2 and
p4c are missing whether or not they are installed (under /usr/local or a prefix). The answer must be one
line ``dcnlab: error: ...`` naming what is missing and only that (root is not mentioned
to root, nor a binary that is there), exit status 2, no traceback, nothing torn down, and an earlier result
in ``--out`` left as it was; and it must come before any work: every place where a command's work starts
(:data:`work_starts.WORK_STARTS`: a model sweep, an emulation, a compile) holds a sentinel that would end
the command with another status, so the order is checked, not the time it took.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from as_nobody import run_cli_as_nobody
from dcnlab.controller.runtime.toolchain import PREFIX_VAR
from work_starts import SENTINEL_CLI, WORK_MARKER

BARE_PATH = "/usr/bin:/bin"
EMU_TOOLS = ("simple_switch_grpc", "simple_switch_CLI", "p4c")
MARKER = "results of an earlier run\n"

#: argv (``{out}``: the --out directory), the binaries the command needs, whether it needs root
COMMANDS = [
    (["run", "fattree:k=4"], EMU_TOOLS, True),
    (["run", "bcube:n=2,k=0", "--bw", "10"], EMU_TOOLS, True),
    (["compile"], ("p4c",), False),
    (["reproduce", "aggregation", "--emulate", "on", "--out", "{out}"], EMU_TOOLS, True),
    (["reproduce", "multicast", "--emulate", "on", "--out", "{out}"], EMU_TOOLS, True),
    (["reproduce", "multicast", "--emulate", "on", "--quick", "--out", "{out}"], EMU_TOOLS, True),
    (["reproduce", "cist", "--emulate", "on", "--out", "{out}"], EMU_TOOLS, True),
    (["reproduce", "cist", "--emulate", "on", "--quick", "--json", "--out", "{out}"], EMU_TOOLS, True),
    (["reproduce", "congestion", "--emulate", "on", "--out", "{out}"], EMU_TOOLS, True),
    (["bench", "emu"], EMU_TOOLS, True),
    (["bench", "chaos", "--cycles", "1"], EMU_TOOLS, True),
]


def _bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PREFIX_VAR}
    env.update(PATH=BARE_PATH, DCNLAB_RUN_ROOT=str(tmp_path / "runs"), **extra)
    return env


def _earlier_results(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text(MARKER)
    return out


def _assert_untouched(out: Path, tmp_path: Path) -> None:
    assert sorted(p.name for p in out.iterdir()) == ["results.json"]
    assert (out / "results.json").read_text() == MARKER
    assert not (tmp_path / "runs").exists()


def _assert_one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "torn down" not in r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dcnlab: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("argv, tools, root", COMMANDS, ids=[" ".join(c[0][:3]) for c in COMMANDS])
def test_missing_toolchain_is_one_line_before_any_work(tmp_path, argv, tools, root):
    if not all(shutil.which(t, path=BARE_PATH) is None for t in tools):
        pytest.skip(f"{', '.join(tools)} installed in {BARE_PATH}: nothing is missing there")
    out = _earlier_results(tmp_path)
    argv = [a.format(out=out) for a in argv]
    # a hang guard (the refusal takes about 2 s, imports included, on an idle machine), not a benchmark
    r = subprocess.run([sys.executable, "-c", SENTINEL_CLI, *argv], capture_output=True, text=True,
                       env=_bare_env(tmp_path), cwd=tmp_path, timeout=120)
    assert WORK_MARKER not in r.stderr, f"the command started its work before the check: {r.stderr[-500:]}"
    line = _assert_one_line_error(r)
    what = "dcnlab " + " ".join(a for a in argv[:2] if not a.startswith("-") and ":" not in a)
    assert line.startswith(f"dcnlab: error: {what}"), line
    assert PREFIX_VAR in line and "see README, 'The P4 toolchain'" in line
    if root and os.geteuid() != 0:
        assert f"needs root and {', '.join(tools)}: not root" in line and f"{', '.join(tools)} not found on PATH" in line
    else:       # only the binaries are missing: root is not mentioned
        assert f"needs {', '.join(tools)}: not found on PATH" in line and "root" not in line, line
    assert r.stdout == ""
    _assert_untouched(out, tmp_path)


@pytest.mark.parametrize("gone", [(), ("p4c",), ("simple_switch_CLI",), ("simple_switch_grpc", "p4c"), EMU_TOOLS])
@pytest.mark.parametrize("uid", [0, 1000])
def test_the_refusal_names_only_what_is_missing(monkeypatch, gone, uid):
    """Every combination of root and missing binaries: the line names root only when not root, and only the
    binaries not found (root was once told it needs root and the whole toolchain)."""
    from dcnlab.controller.runtime import toolchain
    from dcnlab.emu import preflight
    from dcnlab.cli.errors import UserError

    monkeypatch.setattr(toolchain, "missing", lambda *names: [n for n in names if n in gone])
    monkeypatch.setattr(preflight.os, "geteuid", lambda: uid)
    monkeypatch.delenv(PREFIX_VAR, raising=False)
    for tools, root in ((EMU_TOOLS, True), (("p4c",), False)):
        missing = [t for t in tools if t in gone]
        if not missing and not (root and uid):
            preflight.require("dcnlab x", tools, root)      # nothing missing: no error
            assert preflight.problems(tools, root) == []
            continue
        with pytest.raises(UserError) as e:
            preflight.require("dcnlab x", tools, root)
        line = str(e.value)
        need = " and ".join((["root"] if root and uid else []) + ([", ".join(missing)] if missing else []))
        assert line.startswith(f"dcnlab x needs {need}: "), line
        assert ("root" in line) == bool(root and uid), line
        assert "toolchain:" not in line and "needs the P4 toolchain" not in line
        for t in EMU_TOOLS:         # a binary that is there is not named
            assert (t in line) == (t in missing), (t, line)
        if missing:
            assert "not found on PATH" in line and PREFIX_VAR in line


@pytest.fixture
def fake_prefix() -> Iterator[Path]:
    """A $DCNLAB_P4_PREFIX whose tools exist but fail (p4c exits 1), readable by nobody."""
    pre = Path(tempfile.mkdtemp(prefix="dcnlab-fake-p4-"))
    try:
        (pre / "bin").mkdir()
        for tool in EMU_TOOLS:
            f = pre / "bin" / tool
            f.write_text("#!/bin/sh\necho 'fake toolchain' >&2\nexit 1\n")
            f.chmod(0o755)
        pre.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
        yield pre
    finally:
        shutil.rmtree(pre)


@pytest.mark.parametrize("argv", [["run", "bcube:n=2,k=0"], ["reproduce", "cist", "--emulate", "on", "--quick"],
                                  ["reproduce", "multicast", "--emulate", "on"], ["bench", "emu"]])
def test_not_root_is_named_even_with_the_toolchain(tmp_path, fake_prefix, argv):
    """As nobody, with every binary present: only 'not root' is missing; --out is left as it was."""
    out = _earlier_results(tmp_path)
    if argv[0] == "reproduce":
        argv = [*argv, "--out", str(out)]
    r = run_cli_as_nobody(argv, env=_bare_env(tmp_path, **{PREFIX_VAR: str(fake_prefix)}))
    line = _assert_one_line_error(r)
    assert "needs root: not root" in line and "not found" not in line and "toolchain" not in line
    _assert_untouched(out, tmp_path)


def test_run_that_fails_before_bring_up_reports_no_teardown(tmp_path, fake_prefix):
    """Tools present (the preflight passes) but p4c fails: the one error, no 'torn down' for a network
    that never came up, nothing created."""
    if os.geteuid() != 0:
        pytest.skip("needs root to get past the preflight")
    r = subprocess.run([sys.executable, "-m", "dcnlab", "run", "bcube:n=2,k=0"], capture_output=True, text=True,
                       env=_bare_env(tmp_path, **{PREFIX_VAR: str(fake_prefix)}), cwd=tmp_path, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("dcnlab: error: p4c failed"), r.stderr
    assert "Traceback" not in r.stderr and "torn down" not in r.stdout + r.stderr
    assert not (tmp_path / "runs").exists()
