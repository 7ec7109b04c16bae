"""A machine's agent: ``python -m dcnlab.emu.cluster.agent serve|clean RUN_ID|leftovers RUN_ID``.

``serve`` is started by the coordinating dcnlab over the machine's SSH master and holds that
machine's :class:`~dcnlab.emu.cluster.side.Side`. It reads one JSON request per line on stdin
(``{"op": ..., "args": {...}}``) and answers one JSON line on stdout (``{"ok": true, "result": ...}``
or ``{"ok": false, "error": ..., "type": ...}``); it logs to stderr, which the coordinator keeps in
its run directory (``agent-m<i>.log``). When stdin closes, because the coordinator finished, died
or lost the connection, the agent tears its machine's part down and exits: a coordinator that is
killed leaves nothing behind on the other machines for longer than SSH takes to notice
(``ServerAliveInterval``). ``clean RUN_ID`` is ``dcnlab clean`` for one run on this machine (what the
coordinator's ``dcnlab clean`` runs over SSH); ``leftovers RUN_ID`` lists what is left of it.

The agent and the coordinator must be the same dcnlab: ``hello`` checks :data:`PROTOCOL`.
:class:`AgentClient` is the coordinator's end; :class:`RemoteSide` has :class:`Side`'s methods.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from dcnlab.topos.errors import UserError
from dcnlab.traffic.hostctl import stop_child

log = logging.getLogger(__name__)

__all__ = ["PROTOCOL", "AgentClient", "AgentError", "RemoteSide", "main"]

PROTOCOL = 1
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")
REMOTE_TOOLS = ("simple_switch_grpc", "mnexec", "ip", "tc", "nsenter", "ethtool")
"""What a machine other than the first runs: BMv2, Mininet's host shells, iproute2, util-linux."""


class AgentError(UserError):
    """A request failed on another machine (its message names the machine)."""


# -- the agent -------------------------------------------------------------------------
def _problems() -> list[str]:
    from dcnlab.controller.runtime.toolchain import find_tool

    out = []
    if os.geteuid() != 0:
        out.append(f"not root (uid {os.geteuid()})")
    gone = [t for t in REMOTE_TOOLS if (find_tool(t) if t == "simple_switch_grpc" else shutil.which(t)) is None
            and shutil.which(t, path="/usr/sbin:/sbin") is None]
    if gone:
        out.append(f"{', '.join(gone)} not found")
    return out


class _Agent:
    def __init__(self) -> None:
        self.side: Any = None

    def op_hello(self) -> dict[str, Any]:
        from dcnlab import __version__
        return {"protocol": PROTOCOL, "version": __version__, "problems": _problems(), "pid": os.getpid(),
                "ssh_connection": os.environ.get("SSH_CONNECTION", "")}

    def op_create(self, run_id: str, spec: str) -> dict[str, Any]:
        from dcnlab.emu.cluster.side import Side
        from dcnlab.emu.rundir import RunDir
        if not RUN_ID.match(run_id):
            raise UserError(f"bad run id {run_id!r}")
        run = RunDir.create(spec, name=run_id)
        self.side = Side(run, f"dcnlab-{run_id}")
        return self.side.setup()

    def op_record(self, processes: list[list[Any]]) -> None:
        self.side.record([(str(n), int(p), str(e)) for n, p, e in processes])

    def op_links(self, veths: list[dict[str, Any]], ends: list[dict[str, Any]], switch_ends: list[str],
                 tc: list[str]) -> None:
        from dcnlab.emu.cluster.tunnels import TunnelEnd
        from dcnlab.emu.links import VethPair
        self.side.links([VethPair(**v) for v in veths], [TunnelEnd(**e) for e in ends], switch_ends, tc)

    def op_start_switches(self, configs: list[dict[str, Any]]) -> dict[str, int]:
        from dcnlab.emu.cluster.side import config_from_dict
        return self.side.start_switches([config_from_dict(c) for c in configs])

    def op_wait_ready(self, timeout: float) -> None:
        self.side.wait_ready(timeout)

    def op_failures(self) -> list[tuple[str, int, str]]:
        return self.side.failures() if self.side is not None else []

    def op_probe_open(self, hosts: list[list[Any]], names: list[str], ips: list[str], port: int) -> None:
        from dcnlab.emu.reachability import ProbeHost
        self.side.probe_open([ProbeHost(str(n), str(ip), int(pid)) for n, ip, pid in hosts], names, ips, port)

    def op_probe_send(self, attempt: int, rate: float, missing: dict[str, list[int]] | None) -> int:
        return self.side.probe.send(attempt, rate, missing)

    def op_probe_status(self) -> tuple[int, int]:
        return self.side.probe.status()

    def op_probe_heard(self) -> dict[int, int]:
        return self.side.probe.heard()

    def op_probe_close(self) -> None:
        self.side.probe_close()

    def op_stop(self) -> float:
        return self.side.stop() if self.side is not None else 0.0

    def teardown(self) -> None:
        if self.side is not None:
            try:
                self.side.stop()
            except Exception as e:  # noqa: BLE001 - logged; the machine's dcnlab clean finishes
                log.error("teardown: %s", e)


def serve(stdin: IO[str], stdout: IO[str]) -> int:
    agent = _Agent()

    def on_signal(signum: int, frame: object) -> None:
        agent.teardown()
        os._exit(0)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        for line in stdin:
            try:
                req = json.loads(line)
                fn = getattr(agent, f"op_{req['op']}")
                reply = {"ok": True, "result": fn(**req.get("args", {}))}
            except Exception as e:  # noqa: BLE001 - every failure goes back to the coordinator
                log.debug("request failed", exc_info=True)
                reply = {"ok": False, "error": str(e) or type(e).__name__, "type": type(e).__name__}
            try:
                stdout.write(json.dumps(reply) + "\n")
                stdout.flush()
            except (BrokenPipeError, OSError):
                break
    finally:
        agent.teardown()
    return 0


def clean(run_id: str) -> dict[str, Any]:
    """``dcnlab clean`` for run ``run_id`` on this machine, owner alive or not."""
    from dcnlab.emu.cleanup import CleanReport, clean_run, stop_processes, tagged
    from dcnlab.emu.rundir import RunDir, run_root
    if not RUN_ID.match(run_id):
        raise UserError(f"bad run id {run_id!r}")
    report = CleanReport()
    path = run_root() / run_id
    if (path / "state.json").is_file():
        run = RunDir.load(path)
        if not run.state.finished:
            clean_run(run, report)
    pids = set(tagged(run_id))            # started but never recorded (or no run directory yet)
    if pids:
        stop_processes(pids)
        report.killed += len(pids)
    return asdict(report)


def leftovers(run_id: str) -> list[str]:
    from dcnlab.emu.cleanup import leftovers as all_leftovers
    from dcnlab.emu.cleanup import tagged
    from dcnlab.emu.rundir import run_root
    if not RUN_ID.match(run_id):
        raise UserError(f"bad run id {run_id!r}")
    out = [x for x in all_leftovers(run_root()) if x.startswith(f"{run_id}:")]
    if not (run_root() / run_id).exists():
        out += [f"{run_id}: tagged pid {p}" for p in tagged(run_id)]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="agent %(levelname)s %(name)s: %(message)s")
    if args == ["serve"]:
        # the protocol gets the real stdout; anything else that writes to fd 1 (a child, a library)
        # goes to stderr, the coordinator's log of this agent, instead of corrupting it
        proto = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        return serve(sys.stdin, proto)
    if len(args) == 2 and args[0] in ("clean", "leftovers"):
        try:
            result = clean(args[1]) if args[0] == "clean" else leftovers(args[1])
        except UserError as e:
            print(f"dcnlab agent: {e}", file=sys.stderr)
            return 2
        print(json.dumps(result))
        return 0
    print("usage: python -m dcnlab.emu.cluster.agent serve | clean RUN_ID | leftovers RUN_ID", file=sys.stderr)
    return 2


# -- the coordinator's end ----------------------------------------------------------------
class AgentClient:
    """One machine's agent, started over its SSH master; :meth:`call` is one request and its answer."""

    def __init__(self, machine: str, argv: Sequence[str], log_file: Path, env: Mapping[str, str]) -> None:
        self.machine = machine
        self.log_file = log_file
        with log_file.open("ab") as err:
            self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                         text=True, bufsize=1, env={**os.environ, **env}, start_new_session=True)
        self._lock = threading.Lock()

    def _tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace").strip()[-500:]
        except OSError:
            return ""

    def call(self, op: str, args: Mapping[str, Any] | None = None, timeout: float = 120.0) -> Any:
        with self._lock:
            if self.proc.poll() is not None or self.proc.stdin is None or self.proc.stdout is None:
                raise AgentError(f"server {self.machine}: its dcnlab agent has exited ({self.proc.returncode}): "
                                 f"{self._tail() or 'no message'}")
            try:
                self.proc.stdin.write(json.dumps({"op": op, "args": dict(args or {})}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise AgentError(f"server {self.machine}: lost its dcnlab agent: {self._tail()}") from None
            deadline = time.monotonic() + timeout
            while True:
                r, _, _ = select.select([self.proc.stdout], [], [], max(0.0, min(1.0, deadline - time.monotonic())))
                if r:
                    line = self.proc.stdout.readline()
                    break
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AgentError(f"server {self.machine}: no answer to {op} "
                                     f"({'agent exited: ' + self._tail() if self.proc.poll() is not None else 'timeout'})")
            if not line:
                raise AgentError(f"server {self.machine}: its dcnlab agent closed during {op}: {self._tail()}")
            reply = json.loads(line)
        if not reply["ok"]:
            raise AgentError(f"server {self.machine}: {op}: {reply['error']}")
        return reply["result"]

    def close(self, timeout: float = 30.0) -> None:
        """Close the agent's stdin (it tears its machine's part down and exits) and wait for it."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_child(self.proc)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class RemoteSide:
    """:class:`~dcnlab.emu.cluster.side.Side`'s methods, run by another machine's agent."""

    def __init__(self, client: AgentClient) -> None:
        self.client = client

    def setup(self, run_id: str, spec: str) -> dict[str, Any]:
        return self.client.call("create", {"run_id": run_id, "spec": spec})

    def record(self, processes: Sequence[tuple[str, int, str]]) -> None:
        self.client.call("record", {"processes": [list(p) for p in processes]})

    def links(self, veths: Sequence[Any], ends: Sequence[Any], switch_ends: Sequence[str], tc: Sequence[str]) -> None:
        self.client.call("links", {"veths": [asdict(v) for v in veths], "ends": [asdict(e) for e in ends],
                                   "switch_ends": list(switch_ends), "tc": list(tc)})

    def start_switches(self, configs: Sequence[Any]) -> dict[str, int]:
        from dcnlab.emu.cluster.side import config_to_dict
        return self.client.call("start_switches", {"configs": [config_to_dict(c) for c in configs]})

    def wait_ready(self, timeout: float) -> None:
        self.client.call("wait_ready", {"timeout": timeout}, timeout=timeout + 30.0)

    def failures(self) -> list[tuple[str, int, str]]:
        return [(str(n), int(rc), str(tail)) for n, rc, tail in self.client.call("failures")]

    def probe_open(self, hosts: Sequence[Any], names: Sequence[str], ips: Sequence[str], port: int) -> None:
        self.client.call("probe_open", {"hosts": [[h.name, h.ip, h.pid] for h in hosts], "names": list(names),
                                        "ips": list(ips), "port": port})

    # ProbeSideLike, for probe_cluster
    def send(self, attempt: int, rate: float, missing: Mapping[int, Sequence[int]] | None) -> int:
        return int(self.client.call("probe_send", {
            "attempt": attempt, "rate": rate,
            "missing": None if missing is None else {str(k): list(v) for k, v in missing.items()}}, timeout=600.0))

    def status(self) -> tuple[int, int]:
        p, r = self.client.call("probe_status")
        return int(p), int(r)

    def heard(self) -> dict[int, int]:
        return {int(k): int(v) for k, v in self.client.call("probe_heard").items()}

    def close(self) -> None:
        self.client.call("probe_close")

    def stop(self) -> float:
        return float(self.client.call("stop", timeout=120.0))


if __name__ == "__main__":
    sys.exit(main())
