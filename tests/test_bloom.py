"""003's in-packet Bloom filter sizes (Table 2) and formula (2) against a Monte Carlo."""

import pytest

from dcnlab.controller.aggregation.bloom import (
    expected_false_forwards,
    min_bits,
    min_bits_measured,
    simulate_false_forwards,
)


def test_table_2_sizes_from_formula_3():
    assert [min_bits(k) for k in (3, 4, 7)] == [19, 38, 102]      # 003 Table 2
    assert min_bits(2) == 0 and min_bits(5) == 58 and min_bits(6) == 79
    for k in range(3, 9):
        assert expected_false_forwards(min_bits(k), k) < 1 <= expected_false_forwards(min_bits(k) - 1, k)


@pytest.mark.parametrize("k", [3, 4, 7])
def test_monte_carlo_agrees_with_formula_2(k):
    """The Monte Carlo matches the classic expectation with its whole number of hashes
    (``(1 - (1 - 1/m)^(h n0))^h`` per test) within 10%: that formula assumes the bits independent and
    slightly underestimates small filters (Bose et al., IPL 2008); formula (2) within 15%."""
    for bits in (min_bits(k), 2 * min_bits(k)):
        c = simulate_false_forwards(k, bits, packets=40_000, seed=k)
        n0 = 2 * (k + 1)
        exact = (1 - (1 - 1 / bits) ** (c.hashes * n0)) ** c.hashes * k * (k - 1) / 2
        assert c.false_forwards == pytest.approx(exact, rel=0.10)
        assert c.false_forwards == pytest.approx(c.formula, rel=0.15)


def test_measured_size_keeps_false_forwards_below_one():
    for k in (3, 4, 7):
        c = min_bits_measured(k)
        assert c.false_forwards < 1 and min_bits(k) <= c.bits <= min_bits(k) + 5


def test_bad_input():
    with pytest.raises(ValueError, match="k=-1"):
        min_bits(-1)
    with pytest.raises(ValueError, match="bits=0"):
        simulate_false_forwards(3, 0)
