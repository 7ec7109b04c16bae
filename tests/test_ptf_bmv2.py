"""``dcnlab ptf`` on BMv2: dcnlab's own PTF tests of examples/programs/router.p4 (examples/ptf-router) pass, a
failing test is named and sets the exit status, a p4c error is p4c's message, a hanging test ends at PTF's
timeout, Ctrl-C is one line, two runs go at once beside a BMv2 holding 127.0.0.1:9559, and nothing of any run
is left (processes, namespace, veths, sockets). The p4lang tutorials' own tests are not needed here."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import interrupts
import ports

from dcnlab.emu import netns
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.rundir import all_runs

ROOT = Path(__file__).resolve().parent.parent
ROUTER = ROOT / "examples" / "programs" / "router.p4"
EXAMPLE_TESTS = ROOT / "examples" / "ptf-router" / "ptf"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "ptf"

pytestmark = [pytest.mark.bmv2, pytest.mark.p4c, pytest.mark.netns]


def _tests(tmp_path: Path, src: Path) -> Path:
    """A copy of a PTF test directory (dcnlab writes build/ and logs/ beside the tests, as make test does)."""
    d = tmp_path / "work" / "ptf"
    shutil.copytree(src, d)
    return d


def _ptf(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcnlab", "ptf", *argv], capture_output=True, text=True,
                          timeout=timeout, check=False)


def _nothing_left() -> None:
    assert leftovers() == []
    for run in all_runs():
        assert run.state.netns and not netns.exists(run.state.netns)


def test_example_tests_pass(tmp_path):
    tests = _tests(tmp_path, EXAMPLE_TESTS)
    r = _ptf("--program", str(ROUTER), "--tests", str(tests), "--ports", "4")
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("Forward", "Drop", "LpmTieBreak", "Multicast"):
        assert f"router_tests.{name} ... ok" in r.stderr, r.stderr
    assert "Ran 4 tests" in r.stderr and "\nOK\n" in r.stderr
    assert "BMv2 with 4 ports up in namespace dcnlab-" in r.stderr and "PTF exited with status 0" in r.stderr
    assert (tests.parent / "build" / "router.json").is_file() and (tests.parent / "logs").is_dir()
    (run,) = all_runs()
    assert "router_tests.Multicast" in (run.path / "ptf.log").read_text()     # PTF's log, in the run directory
    _nothing_left()


def test_a_failing_test_is_named_and_sets_the_status(tmp_path):
    tests = _tests(tmp_path, FIXTURES / "failing")
    r = _ptf("--program", str(ROUTER), "--tests", str(tests), "--ports", "4")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "failing_tests.RightPort ... ok" in r.stderr
    assert "failing_tests.WrongPort ... FAIL" in r.stderr and "FAIL: failing_tests.WrongPort" in r.stderr
    assert "Received packet that we expected not to receive on device 0, port 2" in r.stderr   # it left by 2
    _nothing_left()


def test_test_selection_and_ptf_options_pass_through(tmp_path):
    tests = _tests(tmp_path, FIXTURES / "failing")
    r = _ptf("--program", str(ROUTER), "--tests", str(tests), "--ports", "4", "failing_tests.RightPort", "--",
             "--failfast")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Ran 1 test" in r.stderr and "WrongPort" not in r.stderr


def test_p4c_error_is_p4cs_message_and_nothing_is_made(tmp_path):
    bad = tmp_path / "bad" / "bad.p4"
    bad.parent.mkdir()
    bad.write_text(ROUTER.read_text().replace("header udp_t {", "header udp_t { bit<8> oops"))
    r = _ptf("--program", str(bad), "--tests", str(_tests(tmp_path, EXAMPLE_TESTS)))
    assert r.returncode == 1
    assert "bad.p4" in r.stderr and "error" in r.stderr.lower()
    assert r.stderr.strip().splitlines()[-1].startswith(f"dcnlab: error: p4c failed on {bad} (exit ")
    assert all_runs() == []


def test_a_hanging_test_ends_at_ptfs_timeout_then_teardown(tmp_path):
    r = _ptf("--program", str(ROUTER), "--tests", str(_tests(tmp_path, FIXTURES / "hanging")), "--ports", "2", "--",
             "--test-case-timeout", "5")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "hanging test started" in r.stderr and "ERROR: hanging_tests.Hang" in r.stderr
    assert "TimeoutError" in r.stderr
    _nothing_left()


def test_ctrl_c_is_one_line_and_leaves_nothing(tmp_path):
    tests = _tests(tmp_path, FIXTURES / "hanging")
    proc = interrupts.popen("ptf", "--program", str(ROUTER), "--tests", str(tests), "--ports", "2")
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 600
    for line in proc.stderr:                          # until the test is running
        seen.append(line)
        if "hanging test started" in line or time.monotonic() > deadline:
            break
    assert any("hanging test started" in x for x in seen), "".join(seen)
    (run,) = all_runs()
    ptf_pid = run.state.processes["ptf"]
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "dcnlab: interrupted"
    assert not Path(f"/proc/{ptf_pid}").exists() or "Z" in Path(f"/proc/{ptf_pid}/stat").read_text().split()[2]
    _nothing_left()


@pytest.fixture
def bmv2_on_9559(tmp_path):
    """A BMv2 of someone else's on the machine's 127.0.0.1:9559 (the tutorials' runptf.sh address), stopped by its
    pid afterwards."""
    from dcnlab.controller.runtime.toolchain import require_tool, tool_env
    thrift = ports.free_block(1, 42000)
    out = (tmp_path / "other-bmv2.out").open("wb")
    proc = subprocess.Popen([str(require_tool("simple_switch_grpc")), "--no-p4", "--thrift-port", str(thrift),
                             "--", "--grpc-server-addr", "127.0.0.1:9559"], stdout=out, stderr=subprocess.STDOUT,
                            env=tool_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            r = subprocess.run(["ss", "-Hltnp", "sport = :9559"], capture_output=True, text=True, check=False)
            if f"pid={proc.pid}," in r.stdout:
                break
            time.sleep(0.1)
        if proc.poll() is not None:
            pytest.skip(f"127.0.0.1:9559 is held by another process: {(tmp_path / 'other-bmv2.out').read_text()[-300:]}")
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        out.close()


def test_two_runs_at_once_beside_a_bmv2_on_9559(tmp_path, bmv2_on_9559):
    argv = [[sys.executable, "-m", "dcnlab", "ptf", "--program", str(ROUTER), "--tests", str(tests), "--ports", "4"]
            for tests in (_tests(tmp_path / "a", EXAMPLE_TESTS), _tests(tmp_path / "b", EXAMPLE_TESTS))]
    procs = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for a in argv]
    results = [p.communicate(timeout=900) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, out + err
        assert "Ran 4 tests" in err and "\nOK\n" in err
    spaces = {line.split("namespace ")[1].split(",")[0] for _, err in results for line in err.splitlines()
              if "up in namespace" in line}
    assert len(spaces) == 2
    assert bmv2_on_9559.poll() is None                # the other BMv2 is untouched
    _nothing_left()
