"""C-MR4LMS multicast on BMv2 (marker ``bmv2``; root, p4c and BMv2): ``reproduce
multicast``'s experiment (C-MR4LMS (Chen et al.), Algorithms 1-3, Fig. 5's dual trees) as assertions, short."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from dcnlab.emu.cleanup import leftovers
from dcnlab.reproduce.multicast import bmv2 as exp
from dcnlab.topos.spec import parse_spec

pytestmark = pytest.mark.bmv2


def _ours(names: set[str]) -> set[str]:
    """Interfaces a run of the experiment's fabric could create (other engineers' runs and chaos canaries may
    come and go in the machine's namespace meanwhile)."""
    fabric = parse_spec(exp.DEFAULT_SPEC)
    nodes = {n.name for n in fabric.nodes()}
    return {n for n in names if n.rpartition("-eth")[0] in nodes}


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    """Each test gets its own run root; afterwards none of its runs (link watcher included) may have left
    anything, and no interface of the fabric is left in the machine's own namespace."""
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    links = set(os.listdir("/sys/class/net"))
    yield
    if root.is_dir():
        assert leftovers(root) == []
    assert _ours(set(os.listdir("/sys/class/net")) - links) == set(), "the machine's own namespace changed"


def test_groups_deliver_exactly_once_match_the_model_and_survive_a_cut_link(tmp_path):
    cfg = exp.QUICK
    result = exp.run_experiment(cfg)
    summary = "\n".join(result.summary_lines())
    assert result.checks() == {"exactly_once": True, "outsiders": True, "counters": True, "readback": True,
                               "failover_detected": True, "failover_no_loss": True}, summary
    assert (result.switches, result.hosts, result.colors) == (32, 16, 3)
    assert result.merges == 6 and result.merges_more_colors == 0          # C=3 forces merges, C=8 would not
    assert result.entries_per_port_max <= 3
    names = [w.name for w in result.windows]
    assert names == ["steady", "churned", "failure", "failed-over"]
    for w in result.windows:
        assert w.outsider_delivered == 0 and w.lost == 0 and w.delivered == w.receptions > 0
        if w.model_checked:   # the MGID filter was exercised, and every directed link carried the model's count
            assert w.filtered == w.filtered_model > 0 and w.link_packets == w.link_model > 0
            assert w.links_compared == 2 * 64 and not w.link_mismatches and not w.copy_mismatches
    churn = {o["op"] for o in result.churn}
    assert churn == {"add", "remove", "join", "leave"} and all(o["accepted"] for o in result.churn)
    # incremental: no churn operation rewrote every switch that holds multicast state
    assert max(o["switches"] for o in result.churn) < result.readback["switches"]
    assert result.readback["ok"] and result.readback["entries"] > 0 and result.readback["groups"] > 0
    f = result.failover
    assert f is not None and f.cut == "drop" and f.detected and f.groups
    # the order of events, not their time (the times are in the experiment's output: summary_lines)
    assert 0 < f.detection_seconds <= f.total_seconds and 0 < f.failover_seconds <= f.total_seconds and f.updates > 0
    assert "controller failover" in summary and "cut-to-switched" in summary
    assert f.lost_while_switching == 0 and f.rescued > 0     # the second tree's copies carried the gap
    png, js = exp.write_outputs(result, tmp_path / "out")
    assert png.stat().st_size > 10_000 and js.stat().st_size > 1_000


def test_link_set_down_is_noticed_by_the_watcher_and_loses_nothing():
    """The issue's way of cutting: both ends set down; ip monitor notices.  BMv2 freezes both end switches (see
    reproduce/multicast/bmv2/setup.py), both in the first plane, so the second tree still delivers everything."""
    cfg = replace(exp.QUICK, cut="down", churn=False)
    result = exp.run_experiment(cfg)
    summary = "\n".join(result.summary_lines())
    checks = result.checks()
    assert checks["failover_detected"] and checks["failover_no_loss"] and checks["exactly_once"], summary
    assert checks["counters"] and checks["outsiders"], summary
    f = result.failover
    assert f is not None and f.cut == "down" and 0 < f.detection_seconds <= f.total_seconds     # noticed after the cut
    assert "carrier loss seen by ip monitor after" in summary      # how long it took is reported, not judged
    assert [w.name for w in result.windows] == ["steady", "failure", "failed-over"]
    assert not result.windows[-1].model_checked
