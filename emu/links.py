"""Veth links, batched: one ``ip -batch`` for all pairs, one ``tc -batch`` for shaping.

Mininet's ``Link`` runs ``ip link del`` on the requested names first, which could delete an
interface that is not ours. It also costs several shell round trips per link. Here we refuse
names that already exist, create every pair in one ``ip`` process, disable IPv6 on the
root-side ends before they come up (so the kernel sends nothing the counters would see),
and bring them up in a second batch.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from topos.errors import UserError

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
        if Path("/sys/class/net", n).exists():
            raise LinkSetupError(f"interface {n} already exists (a previous run? try `dcnlab clean`)")


def _batch(tool: str, lines: Sequence[str]) -> None:
    if not lines:
        return
    proc = subprocess.run([tool, "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if proc.returncode != 0:
        raise LinkSetupError(f"{tool} -batch failed: {proc.stderr.strip()[-800:]}")


def disable_ipv6(dev: str) -> None:
    p = Path("/proc/sys/net/ipv6/conf", dev, "disable_ipv6")
    if p.exists():
        p.write_text("1\n")


def free_group(seed: str) -> int:
    """An interface group number derived from ``seed`` that no existing interface uses."""
    used = set()
    for d in Path("/sys/class/net").iterdir():
        try:
            used.add(int((d / "netdev_group").read_text()))
        except (OSError, ValueError):
            pass
    g = (int(hashlib.sha256(seed.encode()).hexdigest(), 16) % (1 << 30)) + 1000
    while g in used:
        g += 1
    return g


def create(pairs: Sequence[VethPair], root_ends: Sequence[str], group: int | None = None) -> None:
    """Create ``pairs``; disable IPv6 on ``root_ends``, put them in ``group`` and bring them up."""
    adds = []
    for p in pairs:
        where = f" netns {p.b_netns_pid}" if p.b_netns_pid else ""
        adds.append(f"link add name {p.a} type veth peer name {p.b}{where}")
    _batch("ip", adds)
    for dev in root_ends:
        disable_ipv6(dev)
    grp = f" group {group}" if group is not None else ""
    _batch("ip", [f"link set dev {d}{grp} up" for d in root_ends])


def shape(lines: Sequence[str]) -> None:
    _batch("tc", lines)


def _group_members(group: int) -> set[str]:
    out = set()
    for d in Path("/sys/class/net").iterdir():
        try:
            if int((d / "netdev_group").read_text()) == group:
                out.add(d.name)
        except (OSError, ValueError):
            pass
    return out


def delete(root_ends: Sequence[str], group: int | None = None) -> None:
    """Delete the given root-namespace interfaces (and so their peers); ignore ones already gone.

    With ``group``, and only if every interface in that group is one of ``root_ends``, the kernel
    deletes them all in one batch (one RCU grace period instead of one per interface)."""
    present = [d for d in root_ends if Path("/sys/class/net", d).exists()]
    if present and group is not None:
        members = _group_members(group)
        if members and members <= set(root_ends):
            proc = subprocess.run(["ip", "link", "del", "group", str(group)], capture_output=True, text=True)
            if proc.returncode == 0:
                present = [d for d in present if Path("/sys/class/net", d).exists()]
    if present:
        proc = subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"link del dev {d}\n" for d in present),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            still = [d for d in present if Path("/sys/class/net", d).exists()]
            if still:
                raise LinkSetupError(f"could not delete interfaces {', '.join(still[:5])}: {proc.stderr.strip()}")
