"""What a cluster run records for ``dcnlab clean``: its machines, and how to reach them again.

``<run>/cluster.json`` is written before anything exists on another machine. It names each
machine's SSH destination, the run id of its part there (``<run id>-m<i>``), the SSH configuration
file, the Python that runs dcnlab there, the run root, and the directory of the SSH control sockets.
``dcnlab clean`` on this machine first stops this run's local processes (among them every SSH
client: the agents then see their stdin close and tear their machines down), then runs
``python -m dcnlab.emu.cluster.agent clean <id>`` over a fresh SSH connection on each other machine.
The run is marked finished only when every machine answered; otherwise a later ``dcnlab clean``
tries again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from dcnlab.emu.rundir import SHORT_SOCKET_ROOT, UNIX_PATH_MAX, RunDir

log = logging.getLogger(__name__)

__all__ = ["ClusterRecord", "clean", "control_dir", "leftovers", "load", "remote_leftovers", "save"]

FILE = "cluster.json"
SSH_TEMP_SUFFIX = 17
"""ssh binds a control socket as ``PATH.<16 random characters>`` before renaming it."""


@dataclass
class ClusterRecord:
    servers: list[str]
    """SSH destinations, machine 1 onwards (machine 0 is this one)."""
    remote_runs: dict[str, str] = field(default_factory=dict)
    """SSH destination -> the run id of its part there."""
    ssh_config: str | None = None
    python: str = ""
    run_root: str = ""
    control_dir: str = ""


def save(run: RunDir, rec: ClusterRecord) -> None:
    tmp = run.path / (FILE + ".tmp")
    tmp.write_text(json.dumps(asdict(rec), indent=1))
    tmp.replace(run.path / FILE)


def load(run: RunDir) -> ClusterRecord | None:
    p = run.path / FILE
    if not p.is_file():
        return None
    return ClusterRecord(**json.loads(p.read_text()))


def control_dir(run: RunDir) -> Path:
    """Where the run's SSH control sockets go: its socket directory, or (path too long for
    ``m<i>.<k>.<16 characters>``) a root-only directory under /run/dcnlab named after the run."""
    if len(str(run.sockets / "m63.9")) + SSH_TEMP_SUFFIX <= UNIX_PATH_MAX:
        return run.sockets
    return SHORT_SOCKET_ROOT / f"ssh-{hashlib.sha1(run.id.encode()).hexdigest()[:12]}"


def ssh_argv(rec: ClusterRecord, dest: str, cmd: list[str]) -> list[str]:
    """A fresh SSH connection (no master) that runs ``cmd`` on ``dest``."""
    import shlex

    from dcnlab.emu.cluster.remote import ssh_base
    return [*ssh_base(Path(rec.ssh_config) if rec.ssh_config else None), "-o", "ControlPath=none", "-T", dest,
            shlex.join(cmd)]


def _agent(rec: ClusterRecord, dest: str, what: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
    rid = rec.remote_runs[dest]
    cmd = ["env", f"DCNLAB_RUN_ROOT={rec.run_root}", rec.python, "-I", "-m", "dcnlab.emu.cluster.agent", what, rid]
    # (remote.agent_command's form, with the recorded interpreter)
    return subprocess.run(ssh_argv(rec, dest, cmd), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def clean_remote(rec: ClusterRecord) -> tuple[int, list[str]]:
    """Clean every machine's part of the run. Returns (processes stopped there, failures)."""
    killed, failed = 0, []
    for dest in rec.servers:
        if dest not in rec.remote_runs:
            continue
        try:
            r = _agent(rec, dest, "clean")
        except (OSError, subprocess.SubprocessError) as e:
            failed.append(f"{dest}: {e}")
            continue
        if r.returncode != 0:
            failed.append(f"{dest}: {(r.stderr or r.stdout).strip()[-300:] or f'exit status {r.returncode}'}")
            continue
        try:
            killed += int(json.loads(r.stdout.strip().splitlines()[-1]).get("killed", 0))
        except (ValueError, IndexError):
            pass
    return killed, failed


def remove_control_dir(run: RunDir, rec: ClusterRecord) -> None:
    d = Path(rec.control_dir) if rec.control_dir else None
    if d is not None and d != run.sockets and d.parent == SHORT_SOCKET_ROOT and d.is_dir():
        shutil.rmtree(d, ignore_errors=True)


def clean(run: RunDir) -> tuple[int, list[str]]:
    """``dcnlab clean``'s part for a cluster run (after its local processes are gone): every other
    machine, then the control socket directory. Returns (processes stopped there, failures)."""
    rec = load(run)
    if rec is None:
        return 0, []
    killed, failed = clean_remote(rec)
    remove_control_dir(run, rec)
    return killed, failed


def leftovers(run: RunDir) -> list[str]:
    """This machine's leftovers of a cluster run (the other machines': :func:`remote_leftovers`)."""
    rec = load(run)
    if rec is None:
        return []
    out = []
    d = Path(rec.control_dir) if rec.control_dir else None
    if d is not None and d != run.sockets and d.exists():
        out.append(f"{run.id}: ssh control directory {d}")
    if d is not None:
        out += [f"{run.id}: ssh control socket {p}" for p in sorted(d.glob("m*")) if p.is_socket()]
    return out


def remote_leftovers(run: RunDir) -> list[str]:
    """What is left of the run on the other machines (asked over SSH), as ``dcnlab clean`` would see it."""
    rec = load(run)
    if rec is None:
        return []
    out = []
    for dest in rec.servers:
        if dest not in rec.remote_runs:
            continue
        r = _agent(rec, dest, "leftovers")
        if r.returncode != 0:
            out.append(f"{dest}: cannot ask: {(r.stderr or r.stdout).strip()[-200:]}")
            continue
        out += [f"{dest}: {x}" for x in json.loads(r.stdout.strip().splitlines()[-1])]
    return out
