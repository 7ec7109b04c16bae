"""Options of an emulated run, validated before anything is created."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from dcnlab.emu.hostcmds import DEFAULT_TIMEOUT as HOST_COMMAND_TIMEOUT
from dcnlab.emu.links import Shaping
from dcnlab.topos.errors import UserError

LOG_LEVELS = ("off", "error", "warn", "info", "debug", "trace")
_DELAY = re.compile(r"^([0-9]{1,12}(\.[0-9]{1,12})?)(us|ms|s)$")   # ASCII digits only ("٤ms" is no delay)
MAX_DELAY_S = 60.0
"""The longest link delay (netem holds every packet that long)."""
_DELAY_UNIT_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
MAX_EMULATED_HOSTS = 4096
"""Hosts an emulation brings up at most (one Mininet host, with its shell, per host)."""
MAX_SWITCHES = 512
"""BMv2 processes an emulation brings up at most by default (``NetOptions.max_switches``); the
machine's memory is the other bound (:func:`check_memory`)."""
SWITCH_MIB = 40.0
"""Memory one BMv2 switch costs the machine with dcnlab's sized program and routes: the drop in
``MemAvailable`` per switch that ``dcnlab bench emu`` measures (its "machine" column), rounded up."""
HOST_MIB = 4.0
"""Memory one emulated host costs (its shell, namespace and veth pair)."""
MEMORY_HEADROOM = 0.9
"""Fraction of the machine's available memory an emulation may plan to use."""

RANGES: dict[str, tuple[type, float, float, str]] = {
    "--bw": (float, 0.001, 100_000, "Mbit/s"),
    "--max-queue": (int, 1, 1_000_000, "packets"),
    "--queue-rate": (int, 1, 10_000_000, "packets/s"),
    "--queue-depth": (int, 1, 1_000_000, "packets"),
    "--timeout": (float, 0.1, 3600, "s"),
    "--hold": (float, 0, 86_400, "s"),
}
"""option -> (type, lowest, highest, unit): what the CLI accepts and :meth:`NetOptions.validate` checks."""


def _check(name: str, value: float | None, lo: float | None = None, hi: float | None = None, unit: str = "") -> None:
    if name in RANGES:
        _, lo, hi, unit = RANGES[name]
    if value is not None and not lo <= value <= hi:  # type: ignore[operator]
        raise UserError(f"option {name}={value} is out of range; valid: {lo:g} <= {name} <= {hi:g} {unit}".rstrip())


@dataclass
class NetOptions:
    bw_mbps: float | None = None
    """Link rate (Mbit/s) shaped with tc on every link end; None = unshaped."""
    delay: str | None = None
    """Link delay for netem, e.g. "1ms"."""
    max_queue: int | None = None
    """tc queue limit in packets."""
    queue_rate_pps: int | None = None
    """BMv2 egress queue rate (packets/s) on every port (Thrift)."""
    queue_depth: int | None = None
    """BMv2 egress queue depth (packets) on every port (Thrift)."""
    log_level: str = "off"
    pcap: bool = False
    grpc_log: bool = False
    ecmp: bool = True
    agents: bool = True
    routes: bool = True
    watch: bool = False
    """Restart a switch that dies and re-push its pipeline and state; also re-push to a switch
    that was restarted behind the controller's back."""
    monitor: bool = True
    """Notice dying switches (see ``monitor_interval``) and log which one and why."""
    monitor_interval: float = 0.2
    start_timeout: float = 30.0
    host_command_timeout: float = HOST_COMMAND_TIMEOUT
    """Seconds each of a topology file's host ``commands`` may take at bring-up; one still running
    then is stopped and fails the bring-up (a command ending in ``&`` runs on until teardown)."""
    max_switches: int = MAX_SWITCHES
    thrift_base: int = 9090
    """Thrift port of the first switch (inside the run's namespace; they never clash between runs)."""
    bmv2_args: list[str] = field(default_factory=list)
    """Extra simple_switch_grpc options (before ``--``)."""
    controller: bool = True
    """False: push each switch's pipeline (and the topology file's entries), then step down, so that a
    user's controller (finsy, p4runtime-shell, the tutorials' ``p4runtime_lib``) becomes primary;
    dcnlab installs no routes of its own."""
    grpc_tcp: int | None = None
    """First loopback TCP port for P4Runtime (switch ``i`` in topology order on ``grpc_tcp + i``,
    relayed to its Unix socket; see :mod:`dcnlab.emu.loopback`); None: Unix sockets only."""

    def shaping(self) -> Shaping:
        return Shaping(self.bw_mbps, self.delay, self.max_queue)

    def validate(self) -> None:
        """Raise :class:`UserError` naming the first option out of its valid range."""
        _check("--bw", self.bw_mbps)
        if self.delay is not None:
            m = _DELAY.match(self.delay)
            if not m or float(m.group(1)) <= 0:
                raise UserError(f"option --delay={self.delay!r} is not a delay; valid: a positive number "
                                f"with unit us, ms or s, e.g. 1ms")
            if float(m.group(1)) * _DELAY_UNIT_S[m.group(3)] > MAX_DELAY_S:
                raise UserError(f"option --delay={self.delay} is out of range; valid: a positive delay of at most "
                                f"{MAX_DELAY_S:g}s")
        _check("--max-queue", self.max_queue)
        _check("--queue-rate", self.queue_rate_pps)
        _check("--queue-depth", self.queue_depth)
        _check("--timeout", self.start_timeout)
        _check("monitor_interval", self.monitor_interval, 0.01, 10, "s")
        _check("host_command_timeout", self.host_command_timeout, 0.01, 3600, "s")
        _check("max_switches", self.max_switches, 1, 10_000)
        _check("thrift_base", self.thrift_base, 1024, 65535 - self.max_switches)
        _check("--grpc-tcp", self.grpc_tcp, 1024, 65535 - self.max_switches, "(first port)")
        if self.log_level not in LOG_LEVELS:
            raise UserError(f"option --log-level={self.log_level!r} is not a level; valid: {', '.join(LOG_LEVELS)}")


def mem_available_mib() -> float:
    """The machine's ``MemAvailable`` in MiB (inf where /proc/meminfo has none)."""
    try:
        text = Path("/proc/meminfo").read_text(encoding="ascii")
    except OSError:
        return float("inf")
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return float("inf")


def memory_needed_mib(switches: int, hosts: int) -> float:
    return switches * SWITCH_MIB + hosts * HOST_MIB


def check_memory(spec: str, switches: int, hosts: int, available_mib: float | None = None) -> None:
    """Refuse a fabric whose switches and hosts would not fit in the machine's available memory
    (estimated from :data:`SWITCH_MIB` and :data:`HOST_MIB`), with a clear error naming both."""
    avail = mem_available_mib() if available_mib is None else available_mib
    need = memory_needed_mib(switches, hosts)
    if need > avail * MEMORY_HEADROOM:
        fit = int(max(0.0, avail * MEMORY_HEADROOM - hosts * HOST_MIB) // SWITCH_MIB)
        raise UserError(f"{spec} needs about {need / 1024:.1f} GiB ({switches:,} BMv2 switches at ~{SWITCH_MIB:g} MiB, "
                        f"{hosts:,} hosts at ~{HOST_MIB:g} MiB) but this machine has {avail / 1024:.1f} GiB "
                        f"available; valid here: at most about {fit:,} switches with that many hosts (free memory, "
                        f"or use the model backend)")
