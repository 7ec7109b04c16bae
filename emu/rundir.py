"""Run directories: logs, pcaps and a record of everything a run started.

``/var/tmp/dcnlab/runs/<id>/`` (or ``$DCNLAB_RUN_ROOT``), not ``/tmp/*.log``, which Mininet's
cleanup deletes. ``state.json`` lists the processes, interfaces, namespaces and firewall rules
the run created. ``dcnlab clean`` stops exactly those, and nothing else.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


def run_root() -> Path:
    return Path(os.environ.get("DCNLAB_RUN_ROOT", "/var/tmp/dcnlab/runs"))


@dataclass
class RunState:
    spec: str = ""
    started: float = 0.0
    owner_pid: int = 0
    finished: bool = False
    processes: dict[str, int] = field(default_factory=dict)
    """name -> pid (BMv2 switches, Mininet host shells, agents)."""
    process_cmds: dict[str, str] = field(default_factory=dict)
    """name -> executable basename, to avoid killing a reused pid."""
    interfaces: list[str] = field(default_factory=list)
    """root-namespace interfaces created by the run."""
    link_group: int | None = None
    """interface group of the root-side interfaces (for one-batch deletion)."""
    firewall: list[list[str]] = field(default_factory=list)
    """iptables/ip6tables rule specs (argv after -I/-D) to delete."""


class RunDir:
    def __init__(self, path: Path, state: RunState) -> None:
        self.path = path
        self.state = state
        self._lock = threading.Lock()

    @classmethod
    def create(cls, spec: str) -> RunDir:
        root = run_root()
        root.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe = "".join(c if c.isalnum() else "-" for c in spec)[:48].strip("-")
        path = root / f"{stamp}-{os.getpid()}-{safe}"
        path.mkdir()
        rd = cls(path, RunState(spec=spec, started=time.time(), owner_pid=os.getpid()))
        rd.save()
        return rd

    @classmethod
    def load(cls, path: Path) -> RunDir:
        data = json.loads((path / "state.json").read_text())
        return cls(path, RunState(**data))

    def save(self) -> None:
        with self._lock:
            tmp = self.path / "state.json.tmp"
            tmp.write_text(json.dumps(asdict(self.state), indent=1))
            tmp.replace(self.path / "state.json")

    def record_process(self, name: str, pid: int, exe: str) -> None:
        with self._lock:
            self.state.processes[name] = pid
            self.state.process_cmds[name] = os.path.basename(exe)
        self.save()

    def record_interfaces(self, names: list[str]) -> None:
        with self._lock:
            self.state.interfaces.extend(n for n in names if n not in self.state.interfaces)
        self.save()

    def record_firewall(self, rule: list[str]) -> None:
        with self._lock:
            self.state.firewall.append(rule)
        self.save()

    def mark_finished(self) -> None:
        self.state.finished = True
        self.save()


def all_runs() -> list[RunDir]:
    root = run_root()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.iterdir()):
        if (p / "state.json").is_file():
            out.append(RunDir.load(p))
    return out
