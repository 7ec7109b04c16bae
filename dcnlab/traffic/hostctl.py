"""Controller-side handles on host agents (:mod:`dcnlab.traffic.agent`) running inside hosts."""

from __future__ import annotations

import functools
import json
import os
import site
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dcnlab.controller.runtime.errors import RuntimeErrorBase
from dcnlab.traffic.frames import udp_frame

PROJECT_ROOT = Path(__file__).resolve().parents[2]   # the directory holding the dcnlab package


class AgentError(RuntimeErrorBase):
    pass


def stop_child(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM a child process we started, wait up to ``grace`` seconds, then SIGKILL it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class HostAddr:
    name: str
    iface: str
    ip: str
    mac: str


@functools.cache
def agent_path() -> str:
    """PYTHONPATH for agents: the project, then this interpreter's site directories."""
    dirs = [str(PROJECT_ROOT), *site.getsitepackages(), site.getusersitepackages()]
    extra = os.environ.get("PYTHONPATH")
    return os.pathsep.join(dirs + ([extra] if extra else []))


class AgentHandle:
    """A running agent process. ``prefix`` enters the host (e.g. ``nsenter --net=/run/netns/NS --`` or mnexec)."""

    def __init__(self, host: HostAddr, prefix: Sequence[str] = (), popen=None, log_file: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.host = host
        # -S: no site processing (its .pth files cost more than the whole agent); the project and the
        # interpreter's site directories go on PYTHONPATH instead, so mechanism modules import as usual.
        argv = [*prefix, sys.executable, "-S", "-m", "dcnlab.traffic.agent"]
        env = dict(os.environ, **(env or {}), PYTHONPATH=agent_path())
        spawn = popen or subprocess.Popen
        if log_file is not None:
            with log_file.open("ab") as err:
                self.proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=env,
                                  text=True, bufsize=1)
        else:
            self.proc = spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, text=True, bufsize=1)
        self._ready = False
        self._quit_sent = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self) -> None:
        if not self._ready:
            self._read()
            self._ready = True

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise AgentError(f"agent on {self.host.name} exited (status {self.proc.poll()})")
        return json.loads(line)

    def submit(self, req: dict) -> None:
        self.wait_ready()
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise AgentError(f"agent on {self.host.name} is gone") from None

    def result(self) -> dict:
        rep = self._read()
        if "error" in rep:
            raise AgentError(f"{self.host.name}: {rep['error']}")
        return rep

    def call(self, req: dict) -> dict:
        self.submit(req)
        return self.result()

    # -- convenience ---------------------------------------------------------------
    def send_request(self, dst: HostAddr, count: int, size: int = 100, rate_pps: float = 0, dport: int = 5001,
                     sport: int = 40000, flow: int = 0, ecn: int = 0, seq: int = 0) -> dict:
        frame = udp_frame(self.host.mac, dst.mac, self.host.ip, dst.ip, sport, dport, size, ecn)
        return {"cmd": "send", "iface": self.host.iface, "frame": frame.hex(), "flow": flow, "count": count,
                "rate_pps": rate_pps, "seq": seq}

    def request_quit(self) -> None:
        """Ask the agent to exit without waiting (once; a gone agent needs no asking)."""
        if self._quit_sent or self.proc.poll() is not None:
            return
        self._quit_sent = True
        try:
            self.proc.stdin.write('{"cmd": "quit"}\n')
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass   # it is exiting already; close() reaps it

    def close(self) -> None:
        self.request_quit()
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            if f:
                try:
                    f.close()
                except BrokenPipeError:
                    pass   # bytes still buffered for an agent that has exited: nobody to read them


def call_all(agents: Sequence[AgentHandle], reqs: Sequence[dict]) -> list[dict]:
    """Submit one request per agent, then collect the replies: the agents work concurrently."""
    for a, r in zip(agents, reqs):
        a.submit(r)
    return [a.result() for a in agents]
