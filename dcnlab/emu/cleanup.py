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

A run whose owner process is still alive is skipped unless ``force`` is set.
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


def tagged(run_id: str) -> list[int]:
    """Processes whose environment carries ``DCNLAB_RUN=<run_id>``."""
    needle = f"{TAG_VAR}={run_id}".encode()
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(d.name))
    return out


def leftovers(root: Path | None = None) -> list[str]:
    """What the runs recorded under ``root`` left behind: live processes (recorded and still carrying
    the run's tag, or merely tagged), the namespace, P4Runtime sockets and their directory, and runs
    never marked finished. Empty after a clean teardown or a ``dcnlab clean``."""
    out = []
    for run in all_runs(root):
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
    return out


def _tagged_with(pid: int, run_id: str) -> bool:
    try:
        return f"{TAG_VAR}={run_id}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False


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
    for run in all_runs():
        if run.state.finished:
            continue
        if run.state.owner_pid != os.getpid() and alive(run.state.owner_pid) and not force:
            report.skipped_live.append(run.id)
            continue
        clean_run(run, report)
    return report
