"""``dcnlab clean``: stop what dcnlab runs started, from their run records, and nothing else.

For each run directory not marked finished:

1. Signal the run's processes: the recorded ones (while ``/proc/<pid>`` still shows the recorded
   program, so a reused pid is never killed), every process whose environment carries the run's
   tag ``DCNLAB_RUN=<id>`` (one started but not yet recorded when the run died), and every process
   inside the run's network namespace. SIGTERM, then SIGKILL what is left.
2. Delete the run's network namespace, which deletes every switch-side interface and, with them,
   their peers in the (by then empty) host namespaces.
3. Remove the switches' sockets; for a run over several machines, clean its part on each other
   machine over SSH (:mod:`dcnlab.emu.cluster.records`); mark the run finished, unless another
   machine could not be cleaned (the next ``dcnlab clean`` tries again).

A run whose owner process is still alive is skipped unless ``force`` is set. A run whose ``state.json`` is
damaged (not JSON, or a field of the wrong type) is skipped, its error kept in the report (the command warns in
one line naming the file and ends non-zero), and every other run is cleaned.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from dcnlab.emu import netns
from dcnlab.emu.cluster import records as cluster_records
from dcnlab.emu.rundir import TAG_VAR, RunDir, all_runs

log = logging.getLogger(__name__)


@dataclass
class CleanReport:
    runs: list[str] = field(default_factory=list)
    skipped_live: list[str] = field(default_factory=list)
    killed: int = 0
    namespaces: int = 0
    remote_failed: list[str] = field(default_factory=list)
    """Other machines of cluster runs that could not be cleaned (those runs stay unfinished)."""
    damaged: list[tuple[str, str]] = field(default_factory=list)
    """Runs skipped because their ``state.json`` is damaged: (run id, the error naming the file and field)."""


def alive(pid: int) -> bool:
    """Running (a zombie has exited; its parent just has not reaped it yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _matches(pid: int, exe: str) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(os.path.basename(a.decode(errors="replace")).startswith(exe) for a in cmdline if a)


PF_KTHREAD = 0x00200000
"""``/proc/PID/stat`` flags (field 9): a kernel thread (no environment, ever)."""
EXEC_WAIT = 2.0
"""How long (seconds) a process caught inside ``execve`` is read again before it is judged untagged. It
leaves that state within microseconds on an idle machine; this is a hang guard."""


def _pending(pid: int) -> bool:
    """Whether ``pid``, whose environment has just read empty, is to be read again. ``execve`` switches to the
    new memory, then lays out the new arguments and environment (``env_start``, ``env_end``: ``/proc/PID/stat``
    fields 50 and 51), and only then records the program's code (``start_code``, field 26); until then
    ``/proc/PID/environ`` reads empty although the environment being set up, a tag too, is there a moment
    later. So a live process, not a kernel thread, is read again while its ``start_code`` is still 0 (inside
    ``execve``) or its ``env_end`` lies beyond ``env_start`` (the environment is in place: the read came just
    before). A process started with an empty environment (``env -i``: ``env_end`` equals ``env_start``, its
    code recorded) is not. Without those fields (kernels before 3.5) every live process that reads empty is."""
    try:
        rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    if rest[0] in "ZX" or int(rest[6]) & PF_KTHREAD:
        return False
    return len(rest) < 49 or rest[23] == "0" or int(rest[48]) > int(rest[47])


def _environ(pid: int) -> bytes | None:
    """``/proc/PID/environ`` (None: gone, or not ours to read). A process caught inside ``execve``, whose
    environment reads empty for that moment, is read again (:func:`_pending`) until it reads otherwise or
    :data:`EXEC_WAIT` has passed: read right after ``Popen`` returned, a child's environment was empty 1,756
    times in 2,000, and ``dcnlab clean`` would then have left a tagged process running."""
    path = Path(f"/proc/{pid}/environ")
    deadline, pause = time.monotonic() + EXEC_WAIT, 0.0002
    while True:
        try:
            env = path.read_bytes()
        except OSError:
            return None
        if env or time.monotonic() > deadline or not _pending(pid):
            return env
        time.sleep(pause)
        pause = min(2 * pause, 0.02)


def _tagged_with(pid: int, run_id: str) -> bool:
    """Whether ``pid``'s environment carries ``DCNLAB_RUN=<run_id>`` (read again while it is inside ``execve``)."""
    env = _environ(pid)
    return env is not None and f"{TAG_VAR}={run_id}".encode() in env.split(b"\0")


def tagged(run_id: str) -> list[int]:
    """Processes whose environment carries ``DCNLAB_RUN=<run_id>``, those inside ``execve`` included."""
    me = os.getpid()
    return [int(d.name) for d in Path("/proc").iterdir()
            if d.name.isdigit() and int(d.name) != me and _tagged_with(int(d.name), run_id)]


def leftovers(root: Path | None = None) -> list[str]:
    """What the runs recorded under ``root`` left behind: live processes (recorded and still carrying
    the run's tag, or merely tagged), the namespace, P4Runtime sockets and their directory, and runs
    never marked finished, and runs whose ``state.json`` is damaged. Empty after a clean teardown or a
    ``dcnlab clean``."""
    damaged: list[tuple[str, str]] = []
    out = []
    for run in all_runs(root, damaged):
        st = run.state
        out += [f"{run.id}: tagged pid {p}" for p in tagged(run.id)]
        out += [f"{run.id}: recorded pid {p}" for p in st.processes.values() if alive(p) and _tagged_with(p, run.id)]
        if st.netns and netns.exists(st.netns):
            out.append(f"{run.id}: namespace {st.netns}")
        out += [f"{run.id}: socket {s}" for s in run.sockets.glob("*.sock")]
        if run.sockets != run.path and run.sockets.exists():
            out.append(f"{run.id}: socket directory {run.sockets}")
        if not st.finished:
            out.append(f"{run.id}: not marked finished")
        out += cluster_records.leftovers(run)
    return out + [f"{run_id}: damaged run file: {why}" for run_id, why in damaged]


def run_processes(run: RunDir) -> set[int]:
    """Every live process that belongs to ``run``."""
    st = run.state
    pids = {pid for name, pid in st.processes.items() if _matches(pid, st.process_cmds.get(name, "?"))}
    pids |= set(tagged(run.id))
    if st.netns:
        pids |= set(netns.pids(st.netns))
    pids.discard(os.getpid())
    return {p for p in pids if alive(p)}


def stop_processes(pids: set[int], grace: float = 3.0, first: signal.Signals = signal.SIGTERM) -> None:
    """Send ``first`` (SIGTERM; SIGHUP for interactive shells, which ignore SIGTERM) to ``pids``, wait up to
    ``grace`` seconds, then SIGKILL what is left."""
    victims = set(pids)
    for sig in (first, signal.SIGKILL):
        for pid in victims:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while any(alive(p) for p in victims) and time.monotonic() < deadline:
            time.sleep(0.05)
        victims = {p for p in victims if alive(p)}
        if not victims:
            return
    log.warning("processes still alive after SIGKILL: %s", sorted(victims))


def clean_run(run: RunDir, report: CleanReport) -> None:
    victims = run_processes(run)
    report.killed += len(victims)
    stop_processes(victims)
    if run.state.netns and netns.exists(run.state.netns):
        netns.delete(run.state.netns)
        report.namespaces += 1
    run.remove_sockets()
    killed, failed = cluster_records.clean(run)     # a cluster run's other machines (none otherwise)
    report.killed += killed
    report.remote_failed += failed
    if failed:
        return                                     # unfinished: the next dcnlab clean tries them again
    run.mark_finished()
    report.runs.append(run.id)


def clean(force: bool = False) -> CleanReport:
    report = CleanReport()
    for run in all_runs(damaged=report.damaged):
        if run.state.finished:
            continue
        if run.state.owner_pid != os.getpid() and alive(run.state.owner_pid) and not force:
            report.skipped_live.append(run.id)
            continue
        clean_run(run, report)
    return report
