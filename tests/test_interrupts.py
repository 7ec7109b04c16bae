"""The interrupt tests' children get SIGINT even when the test runner ignores it (the
Ctrl-C lab test hung whenever pytest itself had been started in the background)."""

import signal
import subprocess
import sys

from interrupts import popen, sigint_default

PROBE = "import signal, sys; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"


def _child_sees_sigint(preexec) -> str:
    """From a parent that ignores SIGINT (a background job's), what a Python child's SIGINT handler is."""
    code = ("import signal, subprocess, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
            f"print(subprocess.run([sys.executable, '-c', {PROBE!r}], capture_output=True, text=True, "
            f"preexec_fn={preexec}).stdout.strip())")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=str(__import__("pathlib").Path(__file__).parent)).stdout.strip()


def test_an_ignoring_parent_passes_its_ignore_on():
    assert _child_sees_sigint("None") == "False"                 # what made the lab test hang


def test_the_tests_children_get_sigint_back():
    assert _child_sees_sigint("__import__('interrupts').sigint_default") == "True"


def test_popen_interrupts_a_dcnlab_child_started_from_an_ignoring_parent():
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        p = popen("plan", "multicast", "--help")                 # any child: it must start with SIGINT live
    finally:
        signal.signal(signal.SIGINT, old)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0 and "usage: dcnlab plan multicast" in out, err
    assert sigint_default() is None
