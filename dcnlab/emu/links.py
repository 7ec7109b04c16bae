"""Veth links, batched: one ``ip -batch`` for all pairs, one ``tc -batch`` for shaping.

Every switch-side end lives in the run's network namespace (:mod:`dcnlab.emu.netns`); a host's end is
created directly in its Mininet host's namespace. Names therefore only need to be unique within
the run, two runs of the same fabric never clash, and nothing is created in the machine's own
namespace. IPv6 is off in the run namespace before any interface exists (the kernel sends
nothing that the counters would see). Deleting the run namespace deletes every link at once.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dcnlab.topos.errors import UserError

IFNAMSIZ = 15


class LinkSetupError(UserError):
    pass


@dataclass(frozen=True)
class Shaping:
    """tc shaping of one direction: rate (Mbit/s), delay (e.g. "1ms") and queue limit (packets)."""

    bw_mbps: float | None = None
    delay: str | None = None
    max_queue: int | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.bw_mbps, self.delay, self.max_queue))

    def tc_lines(self, dev: str) -> list[str]:
        """htb for the rate; under it netem for delay (with the queue limit), else pfifo for the limit."""
        if not self.active:
            return []
        lines = []
        parent = "root"
        if self.bw_mbps is not None:
            lines += [f"qdisc add dev {dev} root handle 1: htb default 1",
                      f"class add dev {dev} parent 1: classid 1:1 htb rate {self.bw_mbps}mbit burst 15k quantum 1514"]
            parent = "parent 1:1"
        if self.delay:
            limit = f" limit {self.max_queue}" if self.max_queue is not None else ""
            lines.append(f"qdisc add dev {dev} {parent} handle 10: netem delay {self.delay}{limit}")
        elif self.max_queue is not None:
            lines.append(f"qdisc add dev {dev} {parent} handle 10: pfifo limit {self.max_queue}")
        return lines

    def check_kernel(self) -> None:
        """Delay needs the kernel's netem qdisc; say so before any link exists."""
        if self.delay and not netem_available():
            raise LinkSetupError(f"link delay {self.delay} needs the kernel's netem qdisc (sch_netem), "
                                 f"which this kernel ({os.uname().release}) lacks; drop --delay")


def netem_available() -> bool:
    """Try netem on the loopback of a throwaway network namespace (changes nothing else)."""
    ns = f"dcnlab-netem-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        return False
    try:
        return subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                               "delay", "1ms"], capture_output=True).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@dataclass(frozen=True)
class VethPair:
    a: str
    b: str
    b_netns_pid: int | None = None
    """If set, end ``b`` is created directly in the network namespace of that pid."""


def check_names(names: Iterable[str]) -> None:
    for n in names:
        if len(n) > IFNAMSIZ:
            raise LinkSetupError(f"interface name {n!r} is longer than {IFNAMSIZ} characters; "
                                 f"this fabric is too large to emulate with per-port interfaces")


def _batch(tool: str, netns: str, lines: Sequence[str]) -> None:
    if not lines:
        return
    proc = subprocess.run([tool, "-n", netns, "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise LinkSetupError(f"{tool} -batch in {netns} failed: {proc.stderr.strip()[-800:]}")


def create(netns: str, pairs: Sequence[VethPair]) -> None:
    """Create ``pairs`` in namespace ``netns`` (peer ``b`` in a host's namespace if given) and bring
    the ``netns`` ends up."""
    adds = []
    ups = []
    for p in pairs:
        where = f" netns {p.b_netns_pid}" if p.b_netns_pid else ""
        adds.append(f"link add name {p.a} type veth peer name {p.b}{where}")
        ups.append(f"link set dev {p.a} up")
        if not p.b_netns_pid:
            ups.append(f"link set dev {p.b} up")
    _batch("ip", netns, adds)
    _batch("ip", netns, ups)


def shape(netns: str, lines: Sequence[str]) -> None:
    _batch("tc", netns, lines)


def show(netns: str, *args: str) -> str:
    """Output of ``ip|tc ... `` run in ``netns`` (for tests and diagnostics), e.g. ``show(ns, "tc", "qdisc")``."""
    return subprocess.run([args[0], "-n", netns, *args[1:]], capture_output=True, text=True).stdout
