"""The in-packet Bloom filter of IRS/SRS (Guo et al.), §4.3: the size that keeps false forwards below one per packet.

The paper puts each flow's path, as a set of directed links, into a Bloom filter in the
packet header; switches and servers forward on the links the filter matches. A filter holds
``n0 = 2(k+1)`` links. A server at stage ``i`` (``i`` digits left to correct) tests only its ``i``
links towards neighbours one hop closer to the receiver, one of which is on the path, so ``i - 1``
tests can be false positives; switches make none, and a packet meets at most ``k`` servers. With the
optimal number of hash functions, ``h = (m / n0) ln 2``, one test is a false positive with probability
``0.6185^(m/n0)``, so (formula (2))::

    E[false forwards per packet] = 0.6185^(m / (2(k+1))) * k(k-1)/2

and requiring it below 1 gives formula (3), ``m >= 2(k+1) log_0.6185(2 / (k(k-1)))`` bits: 19, 38
and 102 for k = 3, 4, 7 (003 Table 2), 58 and 79 for k = 5, 6, and none for k <= 2.

dcnlab forwards aggregation traffic on per-tree table entries, not on in-packet filters, so this is
a model only. :func:`simulate_false_forwards` checks formula (2) by Monte Carlo: an ideal filter
(independent uniform hash positions) holding the ``2(k+1)`` links of a longest path (``k + 1``
digits to correct, ``k`` servers met), and the ``i - 1`` off-path tests at the server of every stage
``i``. Only these counts matter to an ideal filter, not which links they are. ``h`` is rounded to
the nearest whole number (at least 1): a real filter has a whole number of hash functions, the
formula's ``h`` is real. Measured at formula (3)'s sizes this gives 1.01-1.03 false forwards per
packet, not fewer than one (the formula's 0.96-0.997 assumes the real ``h``); :func:`min_bits_measured`
finds the size that keeps the measured mean below 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["FP_BASE", "BloomCheck", "expected_false_forwards", "min_bits", "min_bits_measured",
           "simulate_false_forwards"]

FP_BASE = 0.6185
"""``(1/2)^(ln 2)``: the false-positive rate of an optimal Bloom filter per bit per item (003's constant)."""


def min_bits(k: int) -> int:
    """Formula (3): the fewest filter bits for fewer than one expected false forward per packet."""
    if k < 0:
        raise ValueError(f"k={k}: valid: k >= 0")
    if k <= 2:                       # k(k-1)/2 <= 1: a filter of any size satisfies the bound
        return 0
    return math.ceil(2 * (k + 1) * math.log(2 / (k * (k - 1)), FP_BASE))


def expected_false_forwards(m: int, k: int) -> float:
    """Formula (2): expected false forwards of one packet with an ``m``-bit filter on BCube(n,k)."""
    return FP_BASE ** (m / (2 * (k + 1))) * k * (k - 1) / 2


@dataclass(frozen=True)
class BloomCheck:
    k: int
    bits: int
    hashes: int
    packets: int
    false_forwards: float
    """Mean false forwards per packet, measured."""
    formula: float
    """Formula (2)'s expectation at the same size."""


def simulate_false_forwards(k: int, bits: int, packets: int = 20_000, seed: int = 0) -> BloomCheck:
    """Monte Carlo of formula (2) for BCube(n,k) (any n) with an ideal ``bits``-bit filter (module text)."""
    if bits < 1 or k < 1:
        raise ValueError(f"bits={bits}, k={k}: valid: bits >= 1, k >= 1")
    rng = np.random.default_rng(seed)
    n0 = 2 * (k + 1)
    h = max(1, round(bits / n0 * math.log(2)))
    # the path's links set h random bits each: a filter per packet
    filt = np.zeros((packets, bits), dtype=bool)
    pos = rng.integers(0, bits, size=(packets, n0 * h))
    np.put_along_axis(filt, pos, True, axis=1)
    # at stage i (i = k .. 1) a server tests i - 1 links off the path, each with h fresh positions
    # (distinct links hash independently); a test is positive when all its h bits are set
    tests = k * (k - 1) // 2
    probe = rng.integers(0, bits, size=(packets, tests, h))
    hits = np.take_along_axis(filt[:, None, :].repeat(tests, axis=1), probe, axis=2).all(axis=2)
    return BloomCheck(k, bits, h, packets, float(hits.sum(axis=1).mean()), expected_false_forwards(bits, k))


def min_bits_measured(k: int, packets: int = 20_000, seed: int = 0) -> BloomCheck:
    """The smallest filter, from formula (3)'s size up, whose measured false forwards stay below 1."""
    bits = max(1, min_bits(k))
    while True:
        check = simulate_false_forwards(k, bits, packets, seed)
        if check.false_forwards < 1 or bits > 4 * max(min_bits(k), 8):
            return check
        bits += 1
