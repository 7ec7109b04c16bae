"""000's waiting time: the link-bound model (pure) and the BMv2 experiment's bookkeeping and plot."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.mib import m2_family
from dcnlab.controller.aggregation.waiting import busiest_link, link_seconds, none_busiest, unit_seconds
from dcnlab.reproduce.aggregation import waiting as aw
from dcnlab.topos.errors import UserError


def _brute_busiest(space: LabelSpace, forest) -> int:
    """Directed links loaded by each hop, counted one by one (u -> switch, switch -> parent)."""
    loads: dict[tuple, int] = {}
    for row in np.flatnonzero(forest.parent >= 0):
        u, p = int(forest.node[row]), int(forest.node[forest.parent[row]])
        du, dp = space.digits(u), space.digits(p)
        d = int(np.flatnonzero(du != dp)[0])
        sw = (d, tuple(np.delete(du, d)))
        for link in (("up", u, sw), ("down", sw, p)):
            loads[link] = loads.get(link, 0) + 1
    return max(loads.values(), default=1)


@pytest.mark.parametrize("n,k,m,seed", [(4, 1, 6, 1), (4, 2, 20, 2), (6, 3, 60, 3), (3, 4, 40, 4)])
def test_busiest_link_counts_siblings_behind_one_switch(n, k, m, seed):
    space = LabelSpace(n, k)
    pick = np.random.default_rng(seed).choice(space.N, m + 1, replace=False)
    for f in (m2_family(space, int(pick[0]), pick[1:], "m2"), engine.irs_forest(space, pick[:1], pick[1:])):
        assert busiest_link(f)[0] == _brute_busiest(space, f)
        assert 1 <= busiest_link(f)[0] <= n - 1 + 1


def test_none_busiest_primary_paths():
    space = LabelSpace(4, 1)
    # receiver v0; senders v1, v2, v3 (level 0 neighbours) and v4, v8 (level 1): every path ends on
    # v0's level-0 link except the two that differ only in digit 1
    assert none_busiest(space, 0, np.array([1, 2, 3, 4, 8])) == 3
    assert none_busiest(space, 0, np.array([5, 6, 7])) == 3          # 5 -> 4 -> 0 ... all end via level 0
    assert none_busiest(space, 0, np.array([1, 4]), spread=True) == 1
    assert none_busiest(space, 0, np.array([], dtype=np.int64)) == 0


def test_paper_scale_model_saves_more_than_the_paper_says():
    """The link-bound model at 000's setting: M2's busiest link is a few units, no aggregation's ~m(n-1)/n."""
    space = LabelSpace(6, 2)
    pick = np.random.default_rng(7).choice(space.N, 121, replace=False)
    m2 = busiest_link(m2_family(space, int(pick[0]), pick[1:], "m2"))[0]
    none = none_busiest(space, int(pick[0]), pick[1:])
    assert m2 <= 5 and none >= 80
    assert 1 - m2 / none > 2 / 3


def test_link_seconds():
    assert unit_seconds(64, 118, 0.25) == pytest.approx(64 * 118 * 8 / 250_000)
    assert link_seconds({("a", "b"): 3, ("b", "c"): 1}, 64, 118, 0.25) == pytest.approx(3 * unit_seconds(64, 118, 0.25))


def _result() -> aw.WaitResult:
    cfg = aw.WaitConfig(spec="bcube:n=4,k=1", senders=(4, 8), runs=3)
    res = aw.WaitResult(cfg, 24, 16, 1.5)
    for m in cfg.senders:
        for run in range(cfg.runs):
            res.jobs.append(aw.WaitJob(m, run, "m2", 0.5 + 0.01 * run, 0.48, 2, True))
            res.jobs.append(aw.WaitJob(m, run, "none", 0.24 * m + 0.02 * run, 0.24 * m, m, True))
    return res


def test_wait_result_statistics_and_json():
    res = _result()
    p = res.point(8)
    assert p["m2"]["mean_s"] == pytest.approx(0.51)
    assert p["none"]["sd_s"] == pytest.approx(0.02)
    assert p["model_saving"] == pytest.approx(100 * (1 - 0.48 / 1.92))
    assert 0 < p["saving"] < 100 and p["saving_sd"] > 0
    js = res.to_json()
    assert js["points"][0]["senders"] == 4 and js["runs"] == 3 and res.ok
    assert all(len(line) <= 100 for line in res.summary_lines())


def test_wait_plot_is_clean(tmp_path, monkeypatch):
    monkeypatch.setenv("DCNLAB_PLOTCHECK", "strict")     # a problem raises instead of writing the file
    path = tmp_path / aw.PLOT
    aw.plot(_result(), path)
    assert path.exists()


def test_wait_config_errors_name_the_parameter():
    with pytest.raises(UserError, match="runs=0"):
        aw.WaitConfig(runs=0).validate(16)
    with pytest.raises(UserError, match="senders=.*valid: 2..15"):
        aw.WaitConfig(senders=(20,)).validate(16)
