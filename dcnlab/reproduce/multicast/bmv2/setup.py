"""What the BMv2 multicast experiment runs on and with: the instance, the configuration, the run's state.

**The instance** (:data:`DEFAULT_SPEC`): ``midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2`` — 4 CNs of 2 L0 and
2 L1 switches, 4 TNs of 2 L2 and 2 L3 switches: 32 BMv2 switches and 16 hosts, every level of the paper's
4-level model present (root rules L0, L1, L2 and L3 all occur), small enough for two busy cores.  m = 2 is the
least that allows dual trees (one spanning tree per color and plane, formula (4)).  **C = 3** colors: the
jobs' communicators need 3 MGID layers (rows, columns, the whole job), so every layer gets a single color
and groups of one layer that cross the same L0 up-links must merge (Algorithm 2) — with C = 8 the same
workload merges nothing (the summary shows the model's count for both).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dcnlab.emu.faults import CUT_MODES, CutMode
from dcnlab.topos.errors import UserError

DEFAULT_SPEC = "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"
DEFAULT_COLORS = 3
COMPARE_COLORS = 8
CUTS = CUT_MODES
"""``drop``: every frame sent on either end is dropped (``pfifo limit 0``); the interfaces stay up, so the fault
injector delivers the port-down notification itself.  ``down``: ``ip link set <intf> down`` on both ends and an
``ip monitor link`` watcher notices; BMv2 1.15 with libpcap 1.10 stops receiving on *every* port of a switch
one of whose interfaces goes down (its packet loop stays inside ``pcap_next_ex`` on the downed interface until
the interface is up again and a frame arrives there), so this cut also freezes both end switches: a double
switch failure, survivable in dual mode only because the cut is above L0 (both ends in the first plane)."""
Progress = Callable[[str], None]


class EmulationError(UserError):
    """The emulation could not do what the experiment needs (a command failed, a switch died)."""


@dataclass(frozen=True)
class JobSpec:
    size: int
    dims: tuple[int, ...] = ()
    """Process grid (1 process per terminal, x fastest); () = only the job's world group."""


@dataclass(frozen=True)
class EmuConfig:
    spec: str = DEFAULT_SPEC
    colors: int = DEFAULT_COLORS
    variant: str = "fixed"
    feed: str = "both"
    cut: CutMode = "drop"
    """How the link is cut: see :data:`CUTS`."""
    jobs: tuple[JobSpec, ...] = (JobSpec(8, (4, 2)), JobSpec(4, (2, 2)), JobSpec(2), JobSpec(2))
    churn: bool = True
    rate_pps: float = 5.0
    """Messages per second per stream."""
    count: int = 8
    """Messages per stream in the steady, churned and failed-over windows."""
    fail_count: int = 16
    """Messages per stream in the failure window."""
    cut_at: float = 1.4
    """Seconds into the failure window when the link is cut."""
    size: int = 128
    settle: float = 0.6
    """Seconds to wait for copies in flight before reading receivers and counters."""
    detect_timeout: float = 5.0
    algorithms: tuple[str, ...] = ()
    """Routers run beside C-MR4LMS, before it (``--algo``; :mod:`~dcnlab.reproduce.multicast.bmv2.algorithms`)."""

    def validate(self) -> None:
        if not 0 < self.rate_pps <= 200:
            raise UserError(f"rate_pps={self.rate_pps} is out of range; valid: 0 < rate_pps <= 200")
        if self.count < 1 or self.fail_count < 2:
            raise UserError(f"count={self.count}, fail_count={self.fail_count}: valid: count >= 1, fail_count >= 2")
        if not 0 < self.cut_at < (self.fail_count - 1) / self.rate_pps:
            raise UserError(f"cut_at={self.cut_at} s must fall inside the failure window of "
                            f"{self.fail_count / self.rate_pps:.2f} s (fail_count / rate_pps), before its last message")
        if not self.jobs:
            raise UserError("the experiment needs at least one job")
        if self.cut not in CUTS:
            raise UserError(f"cut {self.cut!r} is unknown; valid: {', '.join(CUTS)}")
        for j in self.jobs:
            if j.dims and _prod(j.dims) != j.size:
                raise UserError(f"job of size {j.size}: grid {'x'.join(map(str, j.dims))} has {_prod(j.dims)} "
                                f"processes; valid: a grid with exactly size processes (1 per terminal)")
            if j.size < 2:
                raise UserError(f"job size {j.size}: valid: >= 2 terminals (a group needs two members)")


def _prod(dims: Sequence[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


QUICK = EmuConfig(count=5, fail_count=12, rate_pps=6.0, cut_at=0.9, settle=0.5)
"""A shorter run of the same instance and workload (the BMv2 test)."""


def quick(cfg: EmuConfig) -> EmuConfig:
    return replace(cfg, count=QUICK.count, fail_count=QUICK.fail_count, rate_pps=QUICK.rate_pps,
                   cut_at=QUICK.cut_at, settle=QUICK.settle)


@dataclass
class Run:
    net: Any
    fabric: Any
    dp: Any
    cfg: EmuConfig
    frames: dict[str, bytes]
    say: Progress
    joined: dict[str, set[int]] = field(default_factory=dict)
    link_points: list[tuple[int, int]] = field(default_factory=list)

    def host_name(self, x: int) -> str:
        return self.fabric.host_name(x)
