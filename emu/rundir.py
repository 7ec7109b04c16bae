"""Run directories: logs, pcaps and a record of everything a run started.

``/var/tmp/dcnlab/runs/<id>/`` (or ``$DCNLAB_RUN_ROOT``), not ``/tmp/*.log``, which Mininet's
cleanup deletes. The directory is root's alone (mode 0700): it holds the switches' P4Runtime
sockets. ``state.json`` names the run's network namespace (recorded before it is created) and
the processes the run started. Every process a run starts also carries ``DCNLAB_RUN=<id>`` in
its environment, so that ``dcnlab clean`` finds even one that was started but not yet recorded
when the run was killed. ``dcnlab clean`` stops exactly those, and nothing else.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

TAG_VAR = "DCNLAB_RUN"
"""Environment variable carrying the run id in every process a run starts."""


def run_root() -> Path:
    return Path(os.environ.get("DCNLAB_RUN_ROOT", "/var/tmp/dcnlab/runs"))


@dataclass
class RunState:
    spec: str = ""
    started: float = 0.0
    owner_pid: int = 0
    finished: bool = False
    netns: str = ""
    """the run's network namespace (BMv2 processes and switch-side interfaces)."""
    processes: dict[str, int] = field(default_factory=dict)
    """name -> pid (BMv2 switches, Mininet host shells, agents)."""
    process_cmds: dict[str, str] = field(default_factory=dict)
    """name -> executable basename, to avoid killing a reused pid."""


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
        safe = "".join(c if c.isalnum() else "-" for c in spec)[:32].strip("-")
        path = root / f"{stamp}-{secrets.token_hex(3)}-{safe}"
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)  # whatever the umask
        rd = cls(path, RunState(spec=spec, started=time.time(), owner_pid=os.getpid()))
        rd.save()
        return rd

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def tag(self) -> dict[str, str]:
        """The environment entry every process of this run carries."""
        return {TAG_VAR: self.id}

    @classmethod
    def load(cls, path: Path) -> RunDir:
        data = json.loads((path / "state.json").read_text())
        known = {f.name for f in fields(RunState)}
        return cls(path, RunState(**{k: v for k, v in data.items() if k in known}))

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

    def record_netns(self, name: str) -> None:
        with self._lock:
            self.state.netns = name
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
