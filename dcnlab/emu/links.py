"""Veth links, batched: one ``ip -batch`` for all pairs, one ``tc -batch`` for shaping.

Every switch-side end lives in the run's network namespace (:mod:`dcnlab.emu.netns`); a host's end is
created directly in its Mininet host's namespace. Names therefore only need to be unique within
the run, two runs of the same fabric never clash, and nothing is created in the machine's own
namespace. IPv6 is off in the run namespace before any interface exists (the kernel sends
nothing that the counters would see). Deleting the run namespace deletes every link at once.
"""

from __future__ import annotations

import math
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from dcnlab.emu.netns import command
from dcnlab.topos.errors import UserError

IFNAMSIZ = 15


class LinkSetupError(UserError):
    pass


SKF_AD_RANDOM = 0xFFFFF000 + 56
"""Classic BPF's ancillary load of a random 32-bit number (``ld rand``; SKF_AD_OFF + SKF_AD_RANDOM)."""


def loss_bytecode(loss_pct: float) -> str:
    """A classic BPF program, in tc's ``bytecode`` form, for cls_bpf in direct-action mode: draw a
    random 32-bit number and drop the frame (TC_ACT_SHOT) if it is below ``loss_pct`` % of 2^32,
    else let it pass (TC_ACT_OK)."""
    threshold = min(max(round(loss_pct / 100 * 2**32), 1), 2**32 - 1)
    prog = [(0x20, 0, 0, SKF_AD_RANDOM),     # ld rand
            (0x35, 0, 1, threshold),         # jge #threshold: next (pass), else skip one (drop)
            (0x06, 0, 0, 0),                 # ret #TC_ACT_OK
            (0x06, 0, 0, 2)]                 # ret #TC_ACT_SHOT
    return ",".join([str(len(prog))] + [" ".join(map(str, insn)) for insn in prog])


@dataclass(frozen=True)
class Shaping:
    """tc shaping of one direction: rate (Mbit/s), delay (e.g. "1ms"), queue limit (packets) and
    random loss (percent).

    Everything applies to what an interface transmits. On a veth the other direction cannot be
    shaped at this end: a packet socket (BMv2's libpcap) sees a received frame before tc's ingress
    hook, so a frame dropped there would still reach the switch. A link is therefore shaped in both
    directions by giving both of its ends the same Shaping."""

    bw_mbps: float | None = None
    delay: str | None = None
    max_queue: int | None = None
    loss_pct: float | None = None
    """Percent of transmitted frames dropped at random, 0 < loss < 100. Without netem: a classic BPF
    filter (:func:`loss_bytecode`) on the interface's clsact egress hook, ahead of any root qdisc."""

    def __post_init__(self) -> None:
        v = self.loss_pct
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                              or not 0 < v < 100):
            raise LinkSetupError(f"link loss={v!r} is out of range; valid: 0 < loss < 100 (percent of frames "
                                 f"dropped at random; leave loss out for none)")

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.bw_mbps, self.delay, self.max_queue, self.loss_pct))

    def tc_lines(self, dev: str) -> list[str]:
        """htb for the rate; under it netem for delay (with the queue limit), else pfifo for the limit;
        the loss filter on the clsact egress hook."""
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
        if self.loss_pct is not None:
            lines += [f"qdisc add dev {dev} clsact",
                      f'filter add dev {dev} egress prio 1 bpf da bytecode "{loss_bytecode(self.loss_pct)}"']
        return lines

    def check_kernel(self) -> None:
        """Delay needs the kernel's netem qdisc, loss its clsact qdisc and BPF classifier; say so before
        any link exists."""
        if self.delay and not netem_available():
            raise LinkSetupError(f"link delay {self.delay} needs the kernel's netem qdisc (sch_netem), "
                                 f"which this kernel ({os.uname().release}) lacks; drop --delay")
        if self.loss_pct is not None and not loss_available():
            raise LinkSetupError(f"link loss {self.loss_pct:g}% needs the kernel's clsact qdisc (sch_ingress) and "
                                 f"BPF classifier (cls_bpf), which this kernel ({os.uname().release}) lacks; "
                                 f"drop loss")


def _tc_works(what: str, lines: Sequence[str]) -> bool:
    """Whether ``tc -batch`` takes ``lines`` on the loopback of a throwaway network namespace (which
    is all it changes)."""
    ns = f"dcnlab-{what}-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        return False
    try:
        return subprocess.run(command(ns, "tc", "-batch", "-"), input="".join(f"{x}\n" for x in lines),
                              capture_output=True, text=True).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def netem_available() -> bool:
    """Try netem on the loopback of a throwaway network namespace (changes nothing else)."""
    return _tc_works("netem", ["qdisc add dev lo root netem delay 1ms"])


def loss_available() -> bool:
    """Try the loss filter of :class:`Shaping` on the loopback of a throwaway network namespace."""
    return _tc_works("loss", Shaping(loss_pct=1).tc_lines("lo"))


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
    proc = subprocess.run(command(netns, tool, "-batch", "-"), input="\n".join(lines) + "\n", capture_output=True,
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
    return subprocess.run(command(netns, *args), capture_output=True, text=True).stdout
