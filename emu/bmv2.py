"""BMv2 ``simple_switch_grpc`` processes: argv, start, concurrent readiness, stop.

gRPC is bound to 127.0.0.1. Thrift cannot be bound (BMv2 listens on every interface), so
:mod:`emu.guard` drops outside traffic to the Thrift ports. Each switch starts
with ``--no-p4``; the controller pushes the pipeline over P4Runtime. Output goes to
``<rundir>/bmv2-<name>.out``; at a log level other than ``off`` BMv2 logs to ``bmv2-<name>.txt``
(it appends ``.txt`` to ``--log-file``).
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.runtime.errors import RuntimeErrorBase
from controller.runtime.toolchain import require_tool, tool_env

log = logging.getLogger(__name__)


class SwitchStartError(RuntimeErrorBase):
    pass


@dataclass
class BMv2Config:
    name: str
    device_id: int
    ports: dict[int, str]
    """BMv2 port number -> interface name."""
    grpc_port: int
    thrift_port: int
    run_dir: Path
    log_level: str = "off"
    pcap: bool = False
    extra: Sequence[str] = field(default_factory=tuple)

    @property
    def grpc_addr(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def out_file(self) -> Path:
        return self.run_dir / f"bmv2-{self.name}.out"

    @property
    def log_file(self) -> Path:
        return self.run_dir / f"bmv2-{self.name}.txt"

    def argv(self, binary: Path) -> list[str]:
        a = [str(binary), "--device-id", str(self.device_id)]
        for port, intf in sorted(self.ports.items()):
            a += ["-i", f"{port}@{intf}"]
        # No --notifications-addr: simple_switch_grpc routes notifications through P4Runtime, opens
        # no nanomsg socket, and warns if one is given.
        a += ["--thrift-port", str(self.thrift_port)]
        if self.log_level != "off":
            a += ["--log-file", str(self.run_dir / f"bmv2-{self.name}"), "--log-flush", "-L", self.log_level]
        if self.pcap:
            pdir = self.run_dir / "pcap"
            pdir.mkdir(exist_ok=True)
            a += ["--pcap", str(pdir)]
        a += [*self.extra, "--no-p4", "--", "--grpc-server-addr", self.grpc_addr]
        return a


class BMv2Process:
    def __init__(self, cfg: BMv2Config) -> None:
        self.cfg = cfg
        self.proc: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def start(self) -> None:
        binary = require_tool("simple_switch_grpc")
        out = self.cfg.out_file.open("wb")
        try:
            self.proc = subprocess.Popen(self.cfg.argv(binary), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=tool_env(), start_new_session=True)
        finally:
            out.close()

    def log_tail(self, lines: int = 15) -> str:
        """The start and end of the switch's output: BMv2 prints an option error first, then its usage."""
        texts = []
        for p in (self.cfg.out_file, self.cfg.log_file):
            if p.is_file():
                texts += p.read_text(errors="replace").splitlines()
        if len(texts) > lines + 3:
            texts = texts[:3] + ["..."] + texts[-lines:]
        return "\n".join(texts) or "(empty log)"

    def failed(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def ready(self) -> bool:
        with socket.socket() as s:
            s.settimeout(0.2)
            return s.connect_ex(("127.0.0.1", self.cfg.grpc_port)) == 0

    def signal(self, sig: int) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass


def wait_ready(switches: Sequence[BMv2Process], timeout: float = 30.0, poll: float = 0.02,
               progress: Callable[[int, int], None] | None = None) -> None:
    """Wait for every switch's gRPC port, concurrently, polling with a sleep. Raise with the log tail."""
    pending = list(switches)
    total = len(pending)
    deadline = time.monotonic() + timeout
    while pending:
        still = []
        for sw in pending:
            rc = sw.failed()
            if rc is not None:
                raise SwitchStartError(f"switch {sw.cfg.name} exited with status {rc} during start; "
                                       f"log tail:\n{sw.log_tail()}")
            if not sw.ready():
                still.append(sw)
        if len(still) != len(pending) and progress:
            progress(total - len(still), total)
        pending = still
        if not pending:
            return
        if time.monotonic() > deadline:
            sw = pending[0]
            raise SwitchStartError(f"{len(pending)} switch(es) not ready after {timeout:.0f} s "
                                   f"({', '.join(s.cfg.name for s in pending[:5])}); {sw.cfg.name} log tail:\n"
                                   f"{sw.log_tail()}")
        time.sleep(poll)


def stop_all(switches: Sequence[BMv2Process], timeout: float = 5.0) -> None:
    """SIGTERM every switch at once, wait, then SIGKILL what is left."""
    for sw in switches:
        sw.signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for sw in switches:
        if sw.proc is None:
            continue
        try:
            sw.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop on SIGTERM; killing", sw.cfg.name)
            sw.signal(signal.SIGKILL)
            sw.proc.wait(timeout=5)


def free_ports(count: int, start: int, host: str = "0.0.0.0") -> list[int]:
    """``count`` TCP ports from ``start`` up that can currently be bound on ``host``."""
    out: list[int] = []
    port = start
    while len(out) < count:
        if port > 65535:
            raise SwitchStartError(f"no {count} free TCP ports from {start}")
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind((host, port))
                out.append(port)
            except OSError:
                pass
        port += 1
    return out
