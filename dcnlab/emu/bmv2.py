"""BMv2 ``simple_switch_grpc`` processes: argv, start, concurrent readiness, stop.

Every switch of a run runs inside the run's network namespace (:mod:`dcnlab.emu.netns`). Its P4Runtime
server listens on a Unix socket in the run directory, which only root can enter, so only root can
become a switch's primary controller. Its Thrift server, which BMv2 cannot bind to one address,
listens on every interface *of the run's namespace*, where nothing but the run's switches and the
controller's CLI processes live. Each switch starts with ``--no-p4``; the controller pushes the
pipeline over P4Runtime. Output goes to ``<rundir>/bmv2-<name>.out``; at a log level other than
``off`` BMv2 logs to ``bmv2-<name>.txt`` (it appends ``.txt`` to ``--log-file``).
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

from dcnlab.controller.runtime.errors import RuntimeErrorBase
from dcnlab.controller.runtime.netns import exec_prefix
from dcnlab.controller.runtime.toolchain import require_tool, tool_env

log = logging.getLogger(__name__)


class SwitchStartError(RuntimeErrorBase):
    pass


@dataclass
class BMv2Config:
    name: str
    device_id: int
    ports: dict[int, str]
    """BMv2 port number -> interface name."""
    thrift_port: int
    run_dir: Path
    netns: str | None = None
    socket_dir: Path | None = None
    """Directory of the P4Runtime socket (default: ``run_dir``)."""
    """Network namespace to run in (None: the caller's)."""
    log_level: str = "off"
    pcap: bool = False
    extra: Sequence[str] = field(default_factory=tuple)
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment (the run tag)."""

    @property
    def socket_path(self) -> Path:
        return (self.socket_dir or self.run_dir) / f"sw{self.device_id}.sock"

    @property
    def grpc_addr(self) -> str:
        return f"unix:{self.socket_path}"

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
        else:
            # Without -L, BMv2 logs at 'trace' into a sink that discards: it still formats every
            # message, a local-time timestamp included, about half of its CPU per packet (perf on a
            # fat-tree k=4: 2.3 -> 1.2 ms of switch CPU per all-pairs probe with -L off).
            a += ["-L", "off"]
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
        self.cfg.socket_path.unlink(missing_ok=True)  # a restart: BMv2 will not bind over the old socket
        out = self.cfg.out_file.open("ab")
        try:
            argv = self.cfg.argv(binary)
            if self.cfg.netns:
                argv = exec_prefix(self.cfg.netns) + argv   # nsenter execs BMv2: same pid
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**tool_env(), **self.cfg.env}, start_new_session=True)
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
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(0.2)
            return s.connect_ex(str(self.cfg.socket_path)) == 0

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
