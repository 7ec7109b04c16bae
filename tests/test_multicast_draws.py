"""001's random patterns are draws: the reproduction runs each over several seeds, keeps every draw's rows, and
its headlines carry the mean over the draws with their standard error (judged on the 95% interval)."""

from __future__ import annotations

import math
import random

import pytest

from dcnlab.reproduce.multicast import headlines
from dcnlab.reproduce.multicast import model as mm


def row(pattern: str, algo: str, draw: int | None = None, **kw) -> dict:
    r = {"pattern": pattern, "algo": algo, "ppn": 4 if "ppn=4" in pattern else 1, "groups_in": 1000, "groups": 1000, "trees": 512,
         "refused": 0, "tfi_max": 2, "tfi_avg": 1.5, "efi_max": 10, "efi_avg": 2.0, "entries_per_port_max": 3,
         "seconds": 1.0, "cpu_seconds": 1.0}
    if draw is not None:
        r["draw"] = draw
    r.update(kw)
    return r


def drawn(efi: list[int], kept: list[int]) -> list[dict]:
    """Grid rows, and per draw the random patterns' rows: C-MR4LMS's max EFI (1 ppn), MR4LMS's trees (4 ppn)."""
    rows = [row("64x32x16", "cmr4lms-fixed", tfi_max=7), row("64x32x16", "cmr4lms-dynamic", tfi_max=2)]
    for d, (e, k) in enumerate(zip(efi, kept), 1):
        rows += [row(mm.RANDOM_1PPN, "cmr4lms-fixed", d, efi_max=e - 1),
                 row(mm.RANDOM_1PPN, "cmr4lms-dynamic", d, efi_max=e),
                 row(mm.RANDOM_4PPN, "mr4lms", d, trees=k)]
    return rows


def by_statement(rows: list[dict]) -> dict:
    return {h.statement: h for h in headlines.multicast(rows)}


EFI = "C-MR4LMS max EFI 69 on random patterns (1 ppn, §4.2)"
KEPT = "MR4LMS keeps only 32 of 1,000 random groups (4 ppn, §4.3)"


def test_random_headlines_carry_the_mean_and_standard_error_over_draws():
    hs = by_statement(drawn([68, 70, 69, 71, 67], [30, 34, 31, 33, 32]))
    h = hs[EFI]
    assert h.model == pytest.approx(69.0)            # the mean of the per-draw maxima
    assert h.spread == pytest.approx(math.sqrt(2.5 / 5)) and h.spread_of == "5 draws"
    # Student's t for 5 draws (4 degrees of freedom): 2.776 standard errors, not 1.96
    assert h.spread_n == 5 and h.interval == pytest.approx([69 - 2.776 * h.spread, 69 + 2.776 * h.spread], abs=1e-3)
    # the mean is 69, but the count misses on 4 of the 5 draws: a claim that fails on any draw deviates
    assert h.verdict == "deviates" and "deviates on 4 of 5 draws" in h.stability
    assert h.draws == {"1": 68, "2": 70, "3": 69, "4": 71, "5": 67}
    assert "per draw: 68, 70, 69, 71, 67" in h.reading
    k = hs[KEPT]
    assert (k.model, k.spread_of, k.verdict) == (32.0, "5 draws", "deviates")
    assert k.spread == pytest.approx(math.sqrt(2.5 / 5))
    grid = hs["C-MR4LMS-fixed max TFI 7 on 64×32×16 (1 ppn, Fig. 9)"]
    assert (grid.model, grid.spread, grid.spread_of, grid.verdict) == (7.0, None, "", "reproduced")


def test_a_random_figure_whose_interval_misses_the_paper_deviates():
    hs = by_statement(drawn([28, 24, 32, 27, 30], [523, 516, 525, 519, 520]))
    assert hs[EFI].model == pytest.approx(28.2) and hs[EFI].spread is not None and hs[EFI].verdict == "deviates"
    assert hs[KEPT].model == pytest.approx(520.6) and hs[KEPT].verdict == "deviates"


def test_a_figure_the_same_on_every_draw_has_spread_zero_and_one_draw_none():
    hs = by_statement(drawn([69] * 3, [32] * 3))
    assert (hs[EFI].model, hs[EFI].spread, hs[EFI].spread_of, hs[EFI].verdict) == (69.0, 0.0, "3 draws", "reproduced")
    one = by_statement(drawn([28], [523]))
    assert (one[EFI].model, one[EFI].spread, one[EFI].spread_of) == (28.0, None, "")


def test_headlines_do_not_depend_on_the_order_of_the_rows():
    rows = drawn([28, 24, 32, 27, 30], [523, 516, 525, 519, 520])
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert headlines.multicast(shuffled) == headlines.multicast(rows)
    assert mm.sort_rows(shuffled) == mm.sort_rows(rows)


@pytest.mark.parametrize("quick", [True, False])
def test_tasks_run_every_draw_of_each_random_pattern(quick):
    tasks = mm.tasks_for(quick)
    draws = mm.QUICK_DRAWS if quick else mm.DRAWS
    assert draws >= 2
    randoms = {(t.pattern, t.algo) for t in tasks if mm.is_random(t.pattern)}
    assert (mm.RANDOM_1PPN, "cmr4lms-fixed") in randoms
    assert quick or (mm.RANDOM_4PPN, "mr4lms") in randoms
    for p, a in randoms:
        assert sorted(t.draw for t in tasks if (t.pattern, t.algo) == (p, a)) == list(range(1, draws + 1))
    grids = [t for t in tasks if not mm.is_random(t.pattern)]
    assert len(grids) == len({(t.pattern, t.algo) for t in grids}) and {t.draw for t in grids} == {1}
    assert mm.run_pattern(mm.RANDOM_1PPN, draw=3) == f"random:{mm.DEFAULT_SETTING['random-1ppn-groups']}:seed=3"
    assert mm.run_pattern("random:1000:ppn=4", draw=2) == "random:1000:ppn=4:seed=2"
    assert mm.run_pattern("random:5000:seed=2", draw=4) == "random:5000:seed=2"     # the search's own seed


def test_claims_and_table_over_draws():
    rows = drawn([28, 24, 32, 27, 30], [60, 62, 70, 61, 63])
    cs = {c.statement: c for c in mm.claims(rows)}
    kept = cs["MR4LMS groups kept, 1,000 random groups (4 ppn)"]
    assert kept.agrees is False and kept.ours == "draws 1-5: 60 | 62 | 70 | 61 | 63"     # <= 64 on every draw
    text = mm.table(rows)
    assert f"{mm.RANDOM_4PPN} (5 draws)" in text and "mean over 5 draws" in text
    means = {(r["pattern"], r["algo"]): r for r in mm.mean_rows(rows)}
    assert means[(mm.RANDOM_4PPN, "mr4lms")]["trees"] == pytest.approx(63.2)
    assert means[("64x32x16", "cmr4lms-fixed")]["draws"] == 1
