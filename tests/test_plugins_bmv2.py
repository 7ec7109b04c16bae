"""A user's algorithm in a BMv2 experiment beside the papers': the example Takahashi-Matsuyama tree
builder in the aggregation experiment on BCube(4,1), the papers' example incast and shuffle."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from dcnlab.emu.cleanup import leftovers
from dcnlab.reproduce.aggregation import bmv2 as exp

TM = f"{Path(__file__).resolve().parents[1]}/examples/plugins/dcnlab_example_plugins/aggregation.py:takahashi_matsuyama"


@pytest.mark.bmv2
def test_a_plugin_tree_builder_runs_on_bmv2_beside_the_papers(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    result = exp.run_experiment(replace(exp.QUICK, extra_algorithms=(TM,)), lambda m: None)
    (fabric,) = result.fabrics
    jobs = {(j.kind, j.algorithm): j for j in fabric.jobs}
    for kind in ("incast", "shuffle"):
        mine, irs = jobs[(kind, TM)], jobs[(kind, "irs" if kind == "incast" else "srs")]
        assert mine.exact and mine.agrees(exp.QUICK.tolerance), mine        # exact, link bytes = the model's
        assert mine.model_bytes < jobs[(kind, "none")].model_bytes          # it aggregates
        assert irs.exact and irs.agrees(exp.QUICK.tolerance)
    assert result.ok
    table = "\n".join(result.summary_lines())
    assert "takahashi_matsuyama" in table
    assert leftovers(tmp_path / "runs") == []
