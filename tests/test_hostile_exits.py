"""How a ``dcnlab`` command ends when the code it runs does not play along (the CLI and pool side):

* a ``SystemExit`` that is not argparse's or dcnlab's own (a user's code calling ``sys.exit()``) is one error
  line naming where it was called, status 2, never a silent 0; ``--help``, ``--version``, ``--algo list`` and
  usage errors exit as they always did;
* a local pool worker that dies in a task (``os._exit`` in a plug-in, SIGKILL as the kernel's out-of-memory
  killer sends it) is one line naming the task and the plug-in, not a ``BrokenProcessPool`` traceback;
* Ctrl-C while a plug-in module is imported (during argument parsing) is ``dcnlab: interrupted``, status 130;
* the first task that raises ends the sweep at once: what has not started never starts, what runs is stopped;
* a plug-in's prints, in this process or in a pool worker, go to stderr: ``--json`` stays one JSON document;
* SIGTERM and SIGHUP stop the pool's workers with the command, as Ctrl-C does (status 130).

The plug-ins are ``file.py:name`` references to files written here; the sweeps are ``reproduce aggregation
--quick --only 000-k --rounds 1`` (a second or two of work), run as a child ``python -m dcnlab`` where the
process itself is what is tested (exit status, signals, file descriptor 1).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import interrupts
from dcnlab.cli import main
from dcnlab.sweep import local, pool

GUARD = 120.0
"""Seconds a hang guard waits (a child's start-up and one quick round take a few seconds on an idle machine)."""

PLUGINS = '''
import os, signal, sys, time
from pathlib import Path

from dcnlab.controller.aggregation import incast_tree


def irs(fabric, receiver, senders, seed=0):
    return incast_tree(fabric, receiver, senders, "irs", seed=seed).parent


def os_exit(fabric, receiver, senders, seed=0):
    os._exit(3)


def oom_killed(fabric, receiver, senders, seed=0):
    os.kill(os.getpid(), signal.SIGKILL)


def noisy(fabric, receiver, senders, seed=0):
    print("plug-in noise", {"not": "json"})
    sys.stdout.write("more noise\\n")
    os.write(1, b"noise on file descriptor 1\\n")
    return irs(fabric, receiver, senders, seed)


def noisy_print(fabric, receiver, senders, seed=0):
    print("plug-in noise", {"not": "json"})
    sys.stdout.write("more noise\\n")
    return irs(fabric, receiver, senders, seed)


def sleeper(fabric, receiver, senders, seed=0):
    Path(os.environ["DCNLAB_TEST_PIDS"], str(os.getpid())).touch()
    time.sleep(%(guard)r)
    return irs(fabric, receiver, senders, seed)
''' % {"guard": GUARD}

CTRL_C_AT_IMPORT = '''
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)       # Ctrl-C while this module is still being imported
time.sleep(%(guard)r)


def tree(fabric, receiver, senders, seed=0):
    return {}
''' % {"guard": GUARD}

PLAN = ["plan", "aggregation", "--topo", "bcube:n=4,k=1", "--receiver", "v0", "--senders", "random:3"]
SWEEP = ["reproduce", "aggregation", "--emulate", "off", "--quick", "--only", "000-k", "--rounds", "1",
         "--workers", "2"]


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Path:
    f = tmp_path_factory.mktemp("plugins") / "hostile_exits.py"
    f.write_text(PLUGINS)
    return f


def dcnlab(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dcnlab", *argv], capture_output=True, text=True,
                          timeout=10 * GUARD, env=env)


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err and "BrokenProcessPool" not in err, err
    assert lines and lines[-1].startswith("dcnlab: error: "), err
    return lines[-1]


# -- item 1: SystemExit that is not dcnlab's own ---------------------------------------------------------------

@pytest.mark.parametrize("code, said", [(0, "sys.exit(0)"), (None, "sys.exit()"), ("bye", "sys.exit('bye')"),
                                        (3, "sys.exit(3)")])
def test_a_sys_exit_during_a_command_is_an_error_line_not_a_silent_zero(monkeypatch, capsys, code, said):
    def exits(fabric):
        sys.exit(code)

    monkeypatch.setattr("dcnlab.cli.topo.describe", exits)
    assert main(["topo", "show", "bcube:n=2,k=0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"dcnlab: error: code in {__file__}, line "), err
    assert err.endswith(f", called {said} before the command had finished\n"), err


def test_a_sys_exit_while_the_arguments_are_parsed_is_an_error_line(monkeypatch, capsys):
    from dcnlab.cli import argtypes

    class Exits:
        def get(self, name, what):
            sys.exit(0)

    monkeypatch.setattr(argtypes._AlgoAction, "_registry", lambda self: Exits())
    assert main([*PLAN, "--algo", "mine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"dcnlab: error: code in {__file__}, line "), err
    assert "called sys.exit(0)" in err


@pytest.mark.parametrize("argv, code, stream, text", [
    (["--help"], 0, "out", "usage: dcnlab"),
    (["--version"], 0, "out", "dcnlab "),
    (["plan", "aggregation", "--algo", "list"], 0, "out", "irs"),
    (["plan", "aggregation", "--topo"], 2, "err", "dcnlab plan aggregation: error: argument --topo: expected one"),
    (["topo", "show", "nosuch:n=1"], 2, "err", "dcnlab: error: "),
])
def test_argparse_and_dcnlab_exits_are_as_they_were(argv, code, stream, text, capsys):
    try:
        got = main(argv)
    except SystemExit as e:
        got = e.code
    out, err = capsys.readouterr()
    assert got == code and text in (out if stream == "out" else err), out + err
    assert "before the command had finished" not in err


def _dies(how: str) -> None:
    if how == "exit":
        os._exit(3)
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.parametrize("how, ended", [("exit", "exited with status 3"),
                                        ("kill", "was killed by SIGKILL (out of memory, or kill -9)")])
def test_a_pool_worker_that_dies_is_one_error_naming_its_task(how, ended):
    tasks = [("fine",), (how,), *[("fine",)] * 6]
    with pytest.raises(local.WorkerDied) as e:
        list(pool.fan_out(_dies, tasks, workers=2))
    assert str(e.value) == (f"a worker process {ended} while running task _dies({how}); the sweep stopped, its other "
                            f"tasks were cancelled")


def test_a_plugin_that_ends_its_pool_worker_is_one_line_naming_it(plugins, tmp_path):
    r = dcnlab(*SWEEP, "--algo", f"{plugins}:os_exit", "--out", str(tmp_path / "out"))
    line = one_error_line(r.stderr)
    assert r.returncode == 2
    assert line.startswith("dcnlab: error: a worker process exited with status 3 while running task ")
    assert "000-k, " in line                                    # the part, in the task's arguments
    assert line.endswith(f" with plug-in {plugins}:os_exit; the sweep stopped, its other tasks were cancelled")


# -- item 2: Ctrl-C while a plug-in imports --------------------------------------------------------------------

def test_ctrl_c_while_a_plugin_module_imports_is_one_line_and_130(tmp_path):
    f = tmp_path / "ctrl_c_at_import.py"
    f.write_text(CTRL_C_AT_IMPORT)
    p = interrupts.popen(*PLAN, "--algo", f"{f}:tree")
    out, err = p.communicate(timeout=GUARD)
    assert (p.returncode, out, err) == (130, "", "dcnlab: interrupted\n")


# -- item 7: fail fast -----------------------------------------------------------------------------------------

def _task(marks: str, i: int, kind: str) -> int:
    """Task ``i``: marks that it started; then returns (``quick``), fails (``fail``) or waits for a release that
    never comes (``block``, until a guard), marking that it finished."""
    Path(marks, f"started-{i}").touch()
    if kind == "fail":
        raise ValueError(f"task {i} failed")
    deadline = time.monotonic() + GUARD / 2
    while kind == "block" and time.monotonic() < deadline and not Path(marks, "release").exists():
        time.sleep(0.05)
    Path(marks, f"finished-{i}").touch()
    return i


def test_the_first_task_that_raises_ends_the_sweep_at_once(tmp_path):
    tasks = [(str(tmp_path), i, "fail" if i == 1 else "block") for i in range(12)]
    try:
        with pytest.raises(ValueError, match="task 1 failed"):
            list(pool.fan_out(_task, tasks, workers=2))
        # one worker was in task 0, the other took task 2 after task 1 at most: both were stopped, not waited for
        assert sorted(p.name for p in tmp_path.iterdir()) in (["started-0", "started-1"],
                                                              ["started-0", "started-1", "started-2"])
    finally:
        (tmp_path / "release").touch()


def test_a_caller_that_stops_reading_stops_the_workers(tmp_path):
    tasks = [(str(tmp_path), i, "quick" if i == 0 else "block") for i in range(8)]
    sweep = pool.fan_out(_task, tasks, workers=2)
    try:
        assert next(sweep) == (0, 0)
        sweep.close()           # what a caller's error does to the generator: the blocked tasks are stopped
        assert not [p.name for p in tmp_path.glob("finished-*") if p.name != "finished-0"]
    finally:
        (tmp_path / "release").touch()


# -- item 8: a plug-in's prints and --json ---------------------------------------------------------------------

def test_a_plugins_prints_in_this_process_go_to_stderr(plugins, capsys):
    assert main([*PLAN, "--json", "--algo", f"{plugins}:noisy_print"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["algorithm"] == f"{plugins}:noisy_print"
    assert "plug-in noise {'not': 'json'}\nmore noise\n" in err


def test_a_plugins_prints_in_pool_workers_go_to_stderr(plugins, tmp_path):
    r = dcnlab(*SWEEP, "--json", "--algo", f"{plugins}:noisy", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "results" in json.loads(r.stdout)
    assert "plug-in noise" in r.stderr and "more noise" in r.stderr and "noise on file descriptor 1" in r.stderr


# -- item 16: SIGTERM and SIGHUP -------------------------------------------------------------------------------

def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_the_pool_workers_with_the_command(plugins, tmp_path, sig):
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "DCNLAB_TEST_PIDS": str(pids)}
    p = interrupts.popen(*SWEEP, "--algo", f"{plugins}:sleeper", "--out", str(tmp_path / "out"), env=env)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + GUARD
        while len(workers) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
            workers = [int(f.name) for f in pids.iterdir()]
        assert len(workers) == 2, p.communicate()
        p.send_signal(getattr(signal, sig))
        out, err = p.communicate(timeout=GUARD)
        assert p.returncode == 130 and err.strip().splitlines()[-1] == f"dcnlab: interrupted ({sig})", err
        assert "Traceback" not in err
        assert [w for w in workers if _alive(w)] == []
    finally:
        for w in workers:       # before the fix: the workers this test started were left running
            if _alive(w):
                os.kill(w, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.communicate()


def test_an_ignored_sighup_stays_ignored_and_the_handlers_come_back(monkeypatch, capsys):
    seen = {}

    def describe(fabric):
        seen.update({s: signal.getsignal(s) for s in (signal.SIGHUP, signal.SIGTERM)})
        return "described"

    monkeypatch.setattr("dcnlab.cli.topo.describe", describe)
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)        # nohup dcnlab ...
    try:
        before = signal.getsignal(signal.SIGTERM)
        assert main(["topo", "show", "bcube:n=2,k=0"]) == 0
        assert seen[signal.SIGHUP] is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is before
    finally:
        signal.signal(signal.SIGHUP, old)
    assert capsys.readouterr().out == "described\n"
