"""``dcnlab clean``: stop what dcnlab runs started, from their run records, and nothing else.

For each run directory not marked finished, we do four things. We signal the recorded
processes, but only while ``/proc/<pid>`` still shows the recorded program, so that a
reused pid is never killed. We delete the recorded interfaces that still exist. We delete
the recorded firewall rules. Then we mark the run finished. A run whose owner process is
still alive is skipped unless ``force`` is set.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from emu import guard, links
from emu.rundir import RunDir, all_runs

log = logging.getLogger(__name__)


@dataclass
class CleanReport:
    runs: list[str] = field(default_factory=list)
    skipped_live: list[str] = field(default_factory=list)
    killed: int = 0
    interfaces: int = 0
    rules: int = 0


def _alive(pid: int) -> bool:
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


def clean_run(run: RunDir, report: CleanReport) -> None:
    st = run.state
    victims = [pid for name, pid in st.processes.items() if _matches(pid, st.process_cmds.get(name, "?"))]
    report.killed += len(victims)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in victims:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 3
        while any(_alive(p) for p in victims) and time.monotonic() < deadline:
            time.sleep(0.05)
        victims = [p for p in victims if _alive(p)]
        if not victims:
            break
    present = [d for d in st.interfaces if Path("/sys/class/net", d).exists()]
    links.delete(present, st.link_group)
    report.interfaces += len(present)
    guard.remove(st.firewall)
    report.rules += len(st.firewall)
    run.mark_finished()
    report.runs.append(run.path.name)


def clean(force: bool = False) -> CleanReport:
    report = CleanReport()
    for run in all_runs():
        if run.state.finished:
            continue
        if run.state.owner_pid != os.getpid() and _alive(run.state.owner_pid) and not force:
            report.skipped_live.append(run.path.name)
            continue
        clean_run(run, report)
    return report
