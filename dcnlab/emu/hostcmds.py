"""A topology file's host ``commands``, run at bring-up with a bounded wait, and stopped at teardown.

Each command runs as ``bash -c COMMAND`` inside its host (``prefix`` enters it:
:func:`dcnlab.emu.hosts.enter_prefix` for a Mininet host, :func:`dcnlab.emu.netns.exec_prefix` for a plain
namespace), with stdin from
``/dev/null`` and its output appended to ``<log_dir>/commands-<host>.log``, in a process group of its own. A host's commands
run one after the other; the hosts run theirs at the same time.

Mininet's ``host.cmd`` (and dcnlab's former shell group) waits for the shell's prompt after a command,
without a limit: ``cat`` waiting on stdin, ``sleep 1000`` or an unterminated quote (the shell then
waits for the rest of the line) hung the bring-up. Here:

* a command that has not finished within ``timeout`` seconds is stopped (its process group: only what
  that command started) and the bring-up fails with one line naming the host, the command (escaped,
  cut short), the limit and the log;
* a syntax error (``echo 'abc``) is bash's own message, at once (bash parses before it runs);
* a command that fails (exit status not 0) fails the bring-up with its status and the end of its output;
* a command ending in ``&`` (as some of the p4lang tutorials' commands do) returns at once: bash starts
  the job and exits, the job runs on in the command's process group, and :meth:`HostCommands.stop`
  ends it at teardown, like anything else a command left running in its group.

Every process carries the run's tag (``env``), so ``dcnlab clean`` finds what a crashed run left.
A finished command's exit is read without reaping it (``waitid(WNOWAIT)``): the zombie keeps its
process group id reserved until teardown, so the signal to that group can never reach a stranger's
processes that got the same number.
"""

from __future__ import annotations

import logging
import os
import re
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import escape, quote, show_path

log = logging.getLogger(__name__)

__all__ = ["DEFAULT_TIMEOUT", "HostCommandError", "HostCommands"]

DEFAULT_TIMEOUT = 10.0
"""Seconds a host command may take (``NetOptions.host_command_timeout``); end it with ``&`` to let it run."""
OUTPUT_SHOWN = 300
"""Characters of a failed command's output quoted in the error (its end)."""
STOP_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL at teardown."""
PARALLEL = 64
"""Hosts whose commands run at the same time (each running command holds a pidfd)."""
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class HostCommandError(UserError):
    """A host command that failed or did not finish in time (one line: host, command, why)."""


@dataclass
class _Running:
    host: str
    index: int
    command: str
    proc: subprocess.Popen
    pidfd: int
    deadline: float
    log_path: Path
    offset: int


class HostCommands:
    """Runs hosts' commands (:meth:`run`) and stops what they left running (:meth:`stop`)."""

    def __init__(self, log_dir: Path, timeout: float = DEFAULT_TIMEOUT, env: Mapping[str, str] | None = None,
                 where: str = "") -> None:
        """``where``: what the error messages start with (the topology file)."""
        self.log_dir = Path(log_dir)
        self.timeout = timeout
        self.env = dict(os.environ, **(env or {}))
        self.where = where
        self.started: list[subprocess.Popen] = []
        """Every command's ``bash`` (its pid is its process group's id), not reaped before :meth:`stop`."""
        self._stopped = False

    # -- bring-up -------------------------------------------------------------------------------------
    def run(self, jobs: Mapping[str, tuple[Sequence[str], Sequence[str]]], parallel: int = PARALLEL) -> None:
        """Run ``jobs`` (host -> (prefix that enters it, its commands)): each host's commands in order,
        up to ``parallel`` hosts at once. Returns when every command has finished; raises
        :class:`HostCommandError` for the first one that fails or runs past the limit (the others still
        running are left to :meth:`stop`)."""
        todo = {h: deque(enumerate(cmds)) for h, (_, cmds) in jobs.items() if cmds}
        waiting = deque(todo)
        sel = selectors.DefaultSelector()
        running: list[_Running] = []
        try:
            while waiting and len(running) < parallel:
                host = waiting.popleft()
                running.append(self._start(host, jobs[host][0], todo[host], sel))
            while running:
                wait = min(r.deadline for r in running) - time.monotonic()
                ready = [key.data for key, _ in sel.select(max(wait, 0))] if wait > 0 else []
                if not ready:
                    late = min(running, key=lambda r: r.deadline)
                    if late.deadline <= time.monotonic():
                        _end_groups({late.proc.pid}, STOP_GRACE)
                        raise HostCommandError(self._timeout_message(late))
                    continue
                for r in ready:
                    sel.unregister(r.pidfd)
                    os.close(r.pidfd)
                    running.remove(r)
                    try:
                        info = os.waitid(os.P_PID, r.proc.pid, os.WEXITED | os.WNOWAIT)
                    except ChildProcessError:   # reaped by someone else: its status is gone
                        info = None
                    if info is not None and (info.si_code != os.CLD_EXITED or info.si_status != 0):
                        raise HostCommandError(self._failure_message(r, info))
                    host = r.host if todo[r.host] else waiting.popleft() if waiting else None
                    if host is not None:
                        running.append(self._start(host, jobs[host][0], todo[host], sel))
        finally:
            for r in running:
                os.close(r.pidfd)
            sel.close()

    def _start(self, host: str, prefix: Sequence[str], todo: deque, sel: selectors.BaseSelector) -> _Running:
        index, command = todo.popleft()
        path = self.log_dir / f"commands-{_SAFE.sub('_', host)}.log"
        with path.open("ab") as out:
            out.write(f"$ {command}\n".encode(errors="replace"))
            out.flush()
            offset = out.tell()
            proc = subprocess.Popen([*prefix, "bash", "-c", command], stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=self.env, close_fds=True, start_new_session=True)
        self.started.append(proc)
        pidfd = os.pidfd_open(proc.pid)
        r = _Running(host, index, command, proc, pidfd, time.monotonic() + self.timeout, path, offset)
        sel.register(pidfd, selectors.EVENT_READ, r)
        return r

    def _name(self, r: _Running) -> str:
        return f"{self.where + ': ' if self.where else ''}host {r.host} commands[{r.index}] {quote(r.command)}"

    def _timeout_message(self, r: _Running) -> str:
        return (f"{self._name(r)}: did not finish within {self.timeout:g} s, so it was stopped (a command that "
                f"should keep running ends with &; output: {show_path(r.log_path)})")

    def _failure_message(self, r: _Running, info: os.waitid_result) -> str:
        how = (f"exit status {info.si_status}" if info.si_code == os.CLD_EXITED
               else f"killed by signal {info.si_status}")
        return f"{self._name(r)}: failed ({how}): {_tail(r.log_path, r.offset) or 'no output'}"

    # -- teardown -------------------------------------------------------------------------------------
    def stop(self, grace: float = STOP_GRACE) -> None:
        """End every process the commands left in their process groups (background jobs, a command
        stopped mid-way): SIGTERM, then SIGKILL after ``grace`` seconds; then reap the commands' shells.
        Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        _end_groups({p.pid for p in self.started}, grace)
        for p in self.started:
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                log.warning("host command shell %d did not exit", p.pid)


def _end_groups(groups: set[int], grace: float) -> None:
    """SIGTERM to every process of ``groups``, SIGKILL to those left after ``grace`` seconds; returns
    when none is left (or, should SIGKILL not end one, ``grace`` seconds later, with a warning)."""
    if not groups or not _members(groups):
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for g in groups:
            try:
                os.killpg(g, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.monotonic() + grace
        while _members(groups) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not _members(groups):
            return
    log.warning("host command processes still alive after SIGKILL: %s", sorted(_members(groups)))


def _members(groups: set[int]) -> set[int]:
    """Live (not zombie) processes whose process group is one of ``groups``."""
    out = set()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z" and int(fields[2]) in groups:
            out.add(int(d))
    return out


def _tail(path: Path, offset: int) -> str:
    """The end of what a command printed, on one line, escaped and cut short."""
    try:
        with path.open("rb") as f:
            f.seek(max(offset, f.seek(0, os.SEEK_END) - 4 * OUTPUT_SHOWN))
            text = f.read().decode(errors="replace")
    except OSError:
        return ""
    text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
    if len(text) > OUTPUT_SHOWN:
        text = "..." + text[-OUTPUT_SHOWN:]
    return escape(text)
