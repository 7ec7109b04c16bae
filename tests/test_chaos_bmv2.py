"""Crash and clean: kill -9 ``dcnlab run`` at random moments, run ``dcnlab clean``, find nothing left.

``dcnlab bench chaos --cycles 100`` is the full campaign; CI runs a few cycles.
"""

from __future__ import annotations

import pytest

from dcnlab.bench.chaos import run_chaos

pytestmark = pytest.mark.bmv2


def test_kill_minus_nine_then_clean_leaves_nothing_and_changes_nothing_else():
    cycles = run_chaos(cycles=4, spec="bcube:n=2,k=1", hold=0.5, seed=7, max_delay=3.0)
    assert [(c.index, c.leftovers, c.changes) for c in cycles if c.leftovers or c.changes] == []
    assert {c.phase for c in cycles} & {"bring-up", "run"}, "no cycle killed a live run"
