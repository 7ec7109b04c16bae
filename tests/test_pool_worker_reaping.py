"""A pool worker that dies is named with how it ended even when the pool's own thread reaps it first.

On a broken pool, ``ProcessPoolExecutor``'s manager thread fails the futures, then terminates and joins the
workers, while :func:`dcnlab.sweep.local.fan_out` stops and joins them too: whichever thread's ``waitpid`` loses
gets ECHILD and, until the winner has stored it, sees no exit code. The message then said "ended" and named
every task that was running (seen about 1 run in 6 on Python 3.10). Here the manager thread is made to store the
status late, so the race goes that way every time.
"""

from __future__ import annotations

import os
import threading
import time
from multiprocessing import popen_fork

import pytest

from dcnlab.sweep import local, pool


def _exit_3(how: str) -> None:
    if how == "exit":
        os._exit(3)
    time.sleep(0.2)


def _slow_reaping_poll(self, flag=os.WNOHANG):
    """``popen_fork.Popen.poll``, but the manager thread stores a status it reaped late, and the main thread
    waits a little before its own ``waitpid``: the manager thread reaps first, the main thread gets ECHILD."""
    if self.returncode is None:
        main = threading.current_thread() is threading.main_thread()
        if main:
            time.sleep(0.1)
        try:
            pid, sts = os.waitpid(self.pid, flag)
        except OSError:
            return None
        if pid == self.pid:
            if not main:
                time.sleep(1.0)
            self.returncode = os.waitstatus_to_exitcode(sts)
    return self.returncode


def test_a_dead_worker_reaped_by_the_pools_thread_is_still_named_with_its_exit_status(monkeypatch):
    monkeypatch.setattr(popen_fork.Popen, "poll", _slow_reaping_poll)
    tasks = [("fine",), ("exit",), *[("fine",)] * 4]
    with pytest.raises(local.WorkerDied) as e:
        list(pool.fan_out(_exit_3, tasks, workers=2))
    assert str(e.value) == ("a worker process exited with status 3 while running task _exit_3(exit); the sweep "
                            "stopped, its other tasks were cancelled")
