"""The Congestion Control Table (CCT) and the time scale that lets BMv2 follow it.

IB CC partitioning (Zhang et al.), §5: the experiments use the "reference design" table
``CCT(i) = 14 * i**2 / 11236`` µs. Each entry is an IRD (injection rate delay): Algorithm 2 lets
one *aggregate* of packets (4 in the IB spec) start per IRD.

Decisions on the paper's ambiguities:

* **Denominator.** The extracted text of §5 reads "1062"; we read it as a flattened ``106²`` =
  11236 (``DEFAULT_DENOMINATOR``). With 4 x 1024 B aggregates the table then spans line rate down to
  25 Mb/s over 1024 entries, which covers the paper's 1-3 Gb/s operating points near i = 90-150. The
  other reading (1062) is available as ``Cct.paper(denominator=1062)``; both satisfy the §4.2
  convexity property (:meth:`Cct.is_convex`).
* **Units.** Entries are absolute delays in seconds (of IB time), as the paper treats them.
  :func:`ib_entry` converts a delay to the IBTA 16-bit entry (2-bit shift, 14-bit multiplier,
  relative to the maximum packet's egress time, as ``hfi1`` computes it) for completeness.
* **IRD per aggregate (Algorithm 2 and Fig. 4 disagree).** We follow Algorithm 2 literally: one IRD per aggregate of
  ``aggregate`` packets, so the rate limit at index i is ``aggregate * l / CCT[i]`` (capped by the
  NIC line rate). The paper's Fig. 4 arithmetic (20.48 µs -> "100MB") matches neither reading
  exactly; Algorithm 2 is the normative description.
* **Size.** The paper does not give the table size; the default is 1024 entries (16 blocks of 64).
  ``CCT[0] = 0`` means no limit, as in the paper.

**Time scale for BMv2.** BMv2 forwards 5-20 k packets/s, about 100x fewer than a 10 Gb/s IB link
(8 Gb/s of data after 8b/10b, i.e. 976 k packets/s of 1024 B). :class:`TimeScale` stretches every
time constant of the control loop by ``factor = ib_packet_rate / emulated_packet_rate``: CCT
entries, ``CCTI_Timer`` and the sampling of results are multiplied by ``factor``, and rates are
divided by it. Queue thresholds stay in packets. Packets per IRD, marks per BECN, BECNs per timer
period and the queue in packets are then identical to the IB system, so the emulation follows the
same trajectory in packets, just slower. Example: a bottleneck at 10 k packets/s gives factor 97.7;
CCT[127] = 20.1 µs becomes 1.96 ms and the 153.6 µs default ``CCTI_Timer`` becomes 15 ms, well above
the few-hundred-µs host RTT of a Mininet run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.controller.congestion.params import MAX_CCT_ENTRIES, TIMER_TICK_S, CongestionParamError, check_field

DEFAULT_DENOMINATOR = 11236
"""106², our reading of the paper's flattened "1062"."""
DEFAULT_CCT_SIZE = 1024
IB_DATA_RATE_BPS = 8e9
"""The paper's 10 Gb/s links (4X SDR) carry 8 Gb/s of data after 8b/10b encoding."""


def paper_cct_us(i: int, denominator: float = DEFAULT_DENOMINATOR) -> float:
    """The paper's IRD for index ``i`` in µs: 14 i² / denominator."""
    return 14.0 * i * i / denominator


@dataclass(frozen=True)
class Cct:
    """A CCT: ascending IRDs in seconds (IB time). ``delays[0] == 0`` means unlimited."""

    delays: tuple[float, ...]

    def __post_init__(self) -> None:
        check_field("CCT size", len(self.delays), 1, MAX_CCT_ENTRIES, "entries; 64 per block, at most 255 blocks")
        prev = 0.0
        for i, d in enumerate(self.delays):
            if not d >= prev:
                raise CongestionParamError(f"CCT entry {i}={d!r} s must be >= entry {i - 1} ({prev} s); "
                                           "valid: ascending delays >= 0")
            prev = d

    @classmethod
    def paper(cls, size: int = DEFAULT_CCT_SIZE, denominator: float = DEFAULT_DENOMINATOR) -> Cct:
        """The paper's reference table with ``size`` entries."""
        check_field("CCT size", size, 1, MAX_CCT_ENTRIES, "entries; 64 per block, at most 255 blocks")
        if not denominator > 0:
            raise CongestionParamError(f"CCT denominator={denominator} must be > 0")
        return cls(tuple(paper_cct_us(i, denominator) * 1e-6 for i in range(size)))

    @classmethod
    def from_us(cls, delays_us: Sequence[float]) -> Cct:
        return cls(tuple(d * 1e-6 for d in delays_us))

    def __len__(self) -> int:
        return len(self.delays)

    def delay(self, index: int) -> float:
        """IRD at ``index`` in seconds."""
        check_field("CCTI", index, 0, len(self.delays) - 1, f"the CCT has {len(self.delays)} entries")
        return self.delays[index]

    def rate(self, index: int, packet_bytes: int = 1024, aggregate: int = 4,
             line_rate_bps: float = IB_DATA_RATE_BPS) -> float:
        """Sending-rate limit (bit/s) at ``index`` under Algorithm 2: one aggregate per IRD, at most line rate."""
        return aggregate_rate(self.delay(index), packet_bytes, aggregate, line_rate_bps)

    def rates(self, packet_bytes: int = 1024, aggregate: int = 4,
              line_rate_bps: float = IB_DATA_RATE_BPS) -> list[float]:
        return [aggregate_rate(d, packet_bytes, aggregate, line_rate_bps) for d in self.delays]

    def index_for_rate(self, rate_bps: float, packet_bytes: int = 1024, aggregate: int = 4,
                       line_rate_bps: float = IB_DATA_RATE_BPS) -> int:
        """Smallest index whose rate limit is at or below ``rate_bps`` (the last index if none is)."""
        for i, d in enumerate(self.delays):
            if aggregate_rate(d, packet_bytes, aggregate, line_rate_bps) <= rate_bps:
                return i
        return len(self.delays) - 1

    def is_convex(self, packet_bytes: int = 1024, aggregate: int = 4) -> bool:
        """The §4.2 property: for a < b, rate(a) - rate(a+1) >= rate(b) - rate(b+1) (no line-rate cap).

        Checked on consecutive steps over the entries with a finite rate (index >= 1); it implies the
        paper's statement for every step x by summing. Equality is allowed for flat stretches."""
        r = [aggregate * packet_bytes * 8 / d for d in self.delays if d > 0]
        drops = [r[i] - r[i + 1] for i in range(len(r) - 1)]
        return all(drops[i] >= drops[i + 1] - 1e-9 * r[0] for i in range(len(drops) - 1))

    def scaled(self, scale: TimeScale) -> Cct:
        """The same table in emulated time (every delay multiplied by ``scale.factor``)."""
        return Cct(tuple(scale.time(d) for d in self.delays))


def aggregate_rate(ird_s: float, packet_bytes: int, aggregate: int, line_rate_bps: float) -> float:
    """Rate (bit/s) of a source sending ``aggregate`` packets per ``ird_s``, capped at the line rate."""
    bits = aggregate * packet_bytes * 8
    return line_rate_bps if ird_s * line_rate_bps <= bits else bits / ird_s


@dataclass(frozen=True)
class TimeScale:
    """Stretch of IB time into emulated time: emulated seconds = ``factor`` x IB seconds."""

    factor: float = 1.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.factor) and self.factor > 0):
            raise CongestionParamError(f"time scale factor={self.factor} must be a finite number > 0")

    @classmethod
    def for_link(cls, emulated_pps: float, ib_rate_bps: float = IB_DATA_RATE_BPS,
                 packet_bytes: int = 1024) -> TimeScale:
        """Scale so that an IB link of ``ib_rate_bps`` maps onto a bottleneck of ``emulated_pps`` packets/s."""
        if not emulated_pps > 0:
            raise CongestionParamError(f"emulated_pps={emulated_pps} must be > 0 (BMv2 queue rate, packets/s)")
        check_field("packet_bytes", packet_bytes, 64, 65535, "bytes")
        return cls(ib_rate_bps / (8 * packet_bytes) / emulated_pps)

    def time(self, ib_seconds: float) -> float:
        return ib_seconds * self.factor

    def rate(self, ib_rate: float) -> float:
        """An IB-time rate (anything per second) in emulated time."""
        return ib_rate / self.factor

    def timer_s(self, ccti_timer: int) -> float:
        """``CCTI_Timer`` field value -> emulated seconds."""
        return ccti_timer * TIMER_TICK_S * self.factor


def ib_entry(delay_s: float, max_packet_time_s: float) -> tuple[int, int]:
    """IBTA CCT entry ``(shift, multiplier)`` whose IPD ``(max_packet_time >> shift) * multiplier`` is nearest.

    ``hfi1`` computes the inter-packet delay as the maximum packet's egress time shifted right by
    ``shift`` (2 bits) times ``multiplier`` (14 bits). The largest shift that still fits the
    multiplier gives the finest resolution."""
    if not max_packet_time_s > 0:
        raise CongestionParamError(f"max_packet_time_s={max_packet_time_s} must be > 0")
    if delay_s < 0:
        raise CongestionParamError(f"CCT delay={delay_s} s must be >= 0")
    for shift in (3, 2, 1, 0):
        mult = round(delay_s * (1 << shift) / max_packet_time_s)
        if mult <= 0x3FFF:
            return shift, mult
    raise CongestionParamError(f"CCT delay={delay_s} s is too long; valid: at most 16383 x the maximum "
                               f"packet time ({16383 * max_packet_time_s} s)")
