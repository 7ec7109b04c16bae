"""InfiniBand congestion-control parameters, validated against the IB field ranges.

Paper: IB CC partitioning (Zhang et al., Chinese Journal of Computers 2012), "Differentiated Transport-Layer
Network Bandwidth Allocation for InfiniBand Datacenter", §4.1 and Table 1. Field widths follow the IBTA CC
annex as exposed by OpenSM/``ibccconfig`` and the Linux
``hfi1`` driver:

=====================  ======  ======================================================================
field                  width   valid values here
=====================  ======  ======================================================================
``CCTI_Increase``      8 bit   1..255 (0 would disable the back-off; turn CC off instead)
``CCTI_Timer``         16 bit  1..65535, in units of 1.024 µs (0 would never recover)
``CCTI_Min``           8 bit   0..255, and ``CCTI_Min <= CCTI_Limit``
``CCTI_Limit``         16 bit  0..CCT size − 1
CCT size               —       1..16320 entries: the CCT is sent in blocks of 64 entries and
                               ``ControlTableCap`` (8 bit) counts the blocks a CA supports
``Threshold``          4 bit   0..15 (0 = no marking, 15 = lowest queue threshold)
``Marking_Rate``       16 bit  0..65535: mean number of eligible packets *between* two marks
``Packet_Size``        8 bit   0..255, in 64-byte credits: smaller packets are never marked
BECN coalescing ``C``  —       1..65535 marked packets per congestion notification (paper §4.2)
aggregate              —       1..64 packets per IRD comparison (Algorithm 2; the spec uses 4)
=====================  ======  ======================================================================

Decisions where the paper is ambiguous, made here:

* **Granularity (§4.1: per QP).** The paper gives every QP its own CCT parameters; the IBTA puts them per
  (port, SL). We keep them **per flow** (one flow = one QP = one sender object in a host agent). In
  the paper's experiment 2 every flow has its own source host, so both readings coincide there.
* **Timer semantics (Algorithm 1 resets the timer; the specification does not).** ``timer_mode="reset"``
  (default) is the paper's Algorithm 1: a BECN
  that raises CCTI restarts the timer, so CCTI only falls after a BECN-free ``CCTI_Timer``.
  ``timer_mode="free"`` is the specification's free-running timer (``hfi1``): it ticks every
  ``CCTI_Timer`` regardless of BECNs. See :mod:`dcnlab.traffic.cc` for the exact state machine.
* **Timer unit (Table 1 gives 150 without a unit).** ``CCTI_Timer`` counts 1.024 µs ticks (IBTA); Table 1's 150 is the default,
  i.e. 153.6 µs.
* **Threshold level -> queue depth (§4.1 gives the levels, not the depths).** Level 0 is off; levels 15..1 are a linear
  increase (the spec's "linear above 60% occupancy"): ``depth = step * (16 - level)`` packets,
  so with the default step of 8 packets level 15 marks from 8 queued packets, level 12 from 32
  and level 1 from 120. The switch (``p4src/ecn.p4``) compares ``enq_qdepth`` with this depth.
* **Marking rate (§4.1 does not say how marks are spaced).** ``Marking_Rate = m`` marks one of every ``m + 1`` *eligible* packets
  (eligible = queue at or above the threshold, ECN-capable, not smaller than ``Packet_Size``).
  ``marking_mode="nth"`` does it with a counter (deterministic), ``"random"`` with probability
  ``1/(m+1)``. Packets below the threshold are never marked. Defaults: level 15 (8 packets) and
  ``Marking_Rate`` 0 (every eligible packet), the readings pre-registered from the paper's text
  (``dcnlab.results.open_settings``): 15 is the one level §4.1 ties to a quantity and credits with lowering
  congestion spreading; §4.1-4.2 give the marking proportion α no value, and marking every eligible packet is
  the simplest reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dcnlab.topos.errors import UserError

TIMER_TICK_S = 1.024e-6
"""One ``CCTI_Timer`` unit (IBTA; ``hfi1``: 1.024 µs)."""

CCT_BLOCK = 64
MAX_CCT_ENTRIES = 255 * CCT_BLOCK
DEFAULT_THRESHOLD_STEP = 8

TimerMode = Literal["reset", "free"]
MarkingMode = Literal["nth", "random"]
TIMER_MODES: tuple[str, ...] = ("reset", "free")
MARKING_MODES: tuple[str, ...] = ("nth", "random")


class CongestionParamError(UserError, ValueError):
    """An IB congestion-control parameter is out of its field's range; the message names both."""


def check_field(field: str, value: object, lo: int, hi: int, why: str = "") -> int:
    """``value`` as an int, or :class:`CongestionParamError` naming ``field`` and ``lo..hi``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CongestionParamError(f"{field}={value!r} must be an integer; valid: {lo}..{hi}"
                                   + (f" ({why})" if why else ""))
    if not lo <= value <= hi:
        raise CongestionParamError(f"{field}={value} is out of range; valid: {lo}..{hi}"
                                   + (f" ({why})" if why else ""))
    return value


def check_choice(field: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise CongestionParamError(f"{field}={value!r} is not valid; valid: {', '.join(choices)}")
    return value


@dataclass(frozen=True)
class HcaParams:
    """Per-flow source (HCA) parameters: the CACongestionSetting entry and the CCT limit."""

    ccti_increase: int = 1
    ccti_timer: int = 150
    ccti_min: int = 0
    ccti_limit: int = 1023
    timer_mode: TimerMode = "reset"

    def __post_init__(self) -> None:
        check_field("CCTI_Increase", self.ccti_increase, 1, 255, "8-bit IB field; 0 would disable the back-off")
        check_field("CCTI_Timer", self.ccti_timer, 1, 65535, "16-bit IB field, units of 1.024 us")
        check_field("CCTI_Min", self.ccti_min, 0, 255, "8-bit IB field")
        check_field("CCTI_Limit", self.ccti_limit, 0, MAX_CCT_ENTRIES - 1, "16-bit IB field below the CCT size")
        if self.ccti_min > self.ccti_limit:
            raise CongestionParamError(f"CCTI_Min={self.ccti_min} is out of range; valid: 0..CCTI_Limit"
                                       f"={self.ccti_limit}")
        check_choice("timer_mode", self.timer_mode, TIMER_MODES)

    @property
    def timer_s(self) -> float:
        """``CCTI_Timer`` in seconds of IB time."""
        return self.ccti_timer * TIMER_TICK_S

    def check_cct(self, cct_size: int) -> None:
        """Raise unless ``CCTI_Limit`` indexes into a CCT of ``cct_size`` entries."""
        check_field("CCTI_Limit", self.ccti_limit, 0, cct_size - 1, f"the CCT has {cct_size} entries")


@dataclass(frozen=True)
class SwitchParams:
    """Per-port switch marking parameters (SwitchPortCongestionSetting)."""

    threshold: int = 15
    marking_rate: int = 0
    packet_size: int = 0
    marking_mode: MarkingMode = "nth"
    threshold_step: int = DEFAULT_THRESHOLD_STEP

    def __post_init__(self) -> None:
        check_field("Threshold", self.threshold, 0, 15, "4-bit IB field; 0 = no marking")
        check_field("Marking_Rate", self.marking_rate, 0, 65535, "16-bit IB field: packets between marks")
        check_field("Packet_Size", self.packet_size, 0, 255, "8-bit IB field, 64-byte credits")
        check_choice("marking_mode", self.marking_mode, MARKING_MODES)
        check_field("threshold_step", self.threshold_step, 1, 1 << 14, "packets per threshold level")

    @property
    def enabled(self) -> bool:
        return self.threshold > 0

    @property
    def threshold_packets(self) -> int:
        """Queue depth (packets) at and above which packets are eligible for marking; 0 when off."""
        return threshold_depth(self.threshold, self.threshold_step)

    @property
    def mark_probability(self) -> float:
        """The paper's α: the fraction of eligible packets that get marked."""
        return 1.0 / (self.marking_rate + 1)

    @property
    def min_marked_bytes(self) -> int:
        return self.packet_size * 64


def threshold_depth(level: int, step: int = DEFAULT_THRESHOLD_STEP) -> int:
    """Queue depth in packets for IB threshold ``level`` (0 = off -> 0; 15 -> ``step``; 1 -> 15*step)."""
    check_field("Threshold", level, 0, 15, "4-bit IB field; 0 = no marking")
    return 0 if level == 0 else step * (16 - level)


@dataclass(frozen=True)
class ReceiverParams:
    """Receiver (CA) side: one congestion notification per ``becn_every`` marked packets (the paper's C)."""

    becn_every: int = 1

    def __post_init__(self) -> None:
        check_field("C", self.becn_every, 1, 65535, "marked packets per BECN")


@dataclass(frozen=True)
class PacerParams:
    """Algorithm 2: packets per IRD comparison (``aggregate``) and the mean packet length l."""

    aggregate: int = 4
    packet_bytes: int = 1024

    def __post_init__(self) -> None:
        check_field("aggregate", self.aggregate, 1, 64, "packets per IRD comparison; the IB spec uses 4")
        check_field("packet_bytes", self.packet_bytes, 64, 65535, "bytes")
