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
from typing import Any

TAG_VAR = "DCNLAB_RUN"
"""Environment variable carrying the run id in every process a run starts."""

SHORT_SOCKET_ROOT = Path("/run/dcnlab")
"""Where a run keeps its sockets when its run directory's path is too long for a Unix socket."""
UNIX_PATH_MAX = 107


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
    socket_dir: str = ""
    """where the switches' P4Runtime sockets are: the run directory, or a root-only directory under
    /run/dcnlab when the run directory's path is too long for a Unix socket (107 bytes)."""
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
    def create(cls, spec: str, name: str | None = None) -> RunDir:
        """A new run directory; ``name``: its name (a cluster run's part on another machine,
        ``<run id>-m<i>``), else one made of the time, a random token and the spec."""
        root = run_root()
        root.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        safe = "".join(c if c.isalnum() else "-" for c in spec)[:24].strip("-")
        path = root / (name or f"{stamp}-{secrets.token_hex(3)}-{safe}")
        path.mkdir(mode=0o700)
        os.chmod(path, 0o700)  # whatever the umask
        state = RunState(spec=spec, started=time.time(), owner_pid=os.getpid(), socket_dir=str(path))
        if len(str(path / "sw65535.sock")) > UNIX_PATH_MAX:
            state.socket_dir = str(SHORT_SOCKET_ROOT / path.name)
        rd = cls(path, state)
        rd.save()
        if state.socket_dir != str(path):
            SHORT_SOCKET_ROOT.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(SHORT_SOCKET_ROOT, 0o700)
            Path(state.socket_dir).mkdir(mode=0o700)
        return rd

    @property
    def sockets(self) -> Path:
        return Path(self.state.socket_dir or self.path)

    def remove_sockets(self) -> None:
        """Delete the switches' sockets (and the run's directory under /run/dcnlab, if it has one)."""
        d = self.sockets
        for sock in d.glob("*.sock"):
            sock.unlink(missing_ok=True)
        if d != self.path and d.parent == SHORT_SOCKET_ROOT and d.is_dir():
            d.rmdir()

    @property
    def id(self) -> str:
        return self.path.name

    @property
    def tag(self) -> dict[str, str]:
        """The environment entry every process of this run carries."""
        return {TAG_VAR: self.id}

    @classmethod
    def load(cls, path: Path) -> RunDir:
        """The run recorded in ``path``; a ``state.json`` that cannot be read, is not JSON or holds a field
        of the wrong type is a :class:`~dcnlab.topos.errors.UserError` naming the file and the field."""
        from dcnlab.topos.inputs import read_json

        file = path / "state.json"
        data = read_json(file, "run file")
        return cls(path, RunState(**_state_fields(data, file)))

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


_TYPES: dict[str, tuple[type, ...]] = {"spec": (str,), "started": (int, float), "owner_pid": (int,),
                                       "finished": (bool,), "netns": (str,), "socket_dir": (str,),
                                       "processes": (dict,), "process_cmds": (dict,)}


def _state_fields(data: object, file: Path) -> dict[str, Any]:
    """The known fields of a ``state.json`` document, each of its type (an int is no bool, nor a bool an int)."""
    from dcnlab.topos.errors import UserError
    from dcnlab.topos.inputs import quote, show_path

    if not isinstance(data, dict):
        raise UserError(f"run file '{show_path(file)}': not a JSON object; valid: what 'dcnlab run' writes")
    out: dict[str, Any] = {}
    for f in fields(RunState):
        if f.name not in data:
            continue
        v = data[f.name]
        ok = isinstance(v, _TYPES[f.name]) and (f.name == "finished" or not isinstance(v, bool))
        if ok and f.name == "processes":
            ok = all(isinstance(k, str) and isinstance(x, int) and not isinstance(x, bool) for k, x in v.items())
        elif ok and f.name == "process_cmds":
            ok = all(isinstance(x, str) for x in v.values())
        if not ok:
            raise UserError(f"run file '{show_path(file)}': field {f.name!r} is {quote(v)}; valid: what 'dcnlab run' "
                            f"writes ({' or '.join(t.__name__ for t in _TYPES[f.name])})")
        out[f.name] = v
    return out


def all_runs(root: Path | None = None, damaged: list[tuple[str, str]] | None = None) -> list[RunDir]:
    """Every run recorded under ``root`` (default: :func:`run_root`). A run whose ``state.json`` is damaged is a
    :class:`~dcnlab.topos.errors.UserError` naming the file and field, or, given ``damaged``, left out and
    ``(run id, the error's message)`` appended there (``dcnlab clean`` skips it and cleans the others)."""
    from dcnlab.topos.errors import UserError

    root = root or run_root()
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.iterdir()):
        if (p / "state.json").is_file():
            try:
                out.append(RunDir.load(p))
            except UserError as e:
                if damaged is None:
                    raise
                damaged.append((p.name, str(e)))
    return out
