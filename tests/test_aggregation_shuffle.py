"""Shuffles: the batch model engine agrees with the named trees; SRS, union and no-aggregation totals."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import incast_tree, shuffle_plan
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.shuffle import cluster_receivers, neighbour_pairs, shuffle_costs
from dcnlab.topos.spec import parse_spec


@pytest.mark.parametrize("spec,m,n,seed", [("bcube:n=4,k=1", 5, 4, 1), ("bcube:n=3,k=2", 8, 6, 2),
                                            ("bcube:n=4,k=2", 12, 10, 3), ("bcube:n=2,k=4", 6, 8, 4)])
def test_model_engine_matches_named_plans(spec, m, n, seed):
    fabric = parse_spec(spec)
    space = LabelSpace(fabric.n, fabric.k)
    pick = np.random.default_rng(seed).choice(space.N, m + n, replace=False)
    rec, snd = pick[:n], pick[n:]
    names_r, names_s = [f"v{x}" for x in rec], [f"v{x}" for x in snd]
    for delta in (0.0, 0.4):
        model = shuffle_costs(space, snd, rec, (delta,), seed=seed, detail=delta == 0.0)
        for algo in ("srs", "incast", "unicast", "none"):
            plan = shuffle_plan(fabric, names_r, names_s, algo, delta, seed=seed)
            assert plan.cost == pytest.approx(model.traffic[algo][0]), algo
            if delta == 0.0:
                assert plan.links == model.links[algo], algo
                if algo != "none":
                    assert len(plan.aggregators) == model.aggregators[algo], algo
        if delta == 0.0:
            kmb = shuffle_plan(fabric, names_r, names_s, "kmb")
            assert kmb.cost <= model.traffic["none"][0]
    assert model.traffic["none"][0] >= max(model.traffic[a][0] for a in ("srs", "incast", "unicast"))


def test_clustering_is_algorithm_1():
    space = LabelSpace(4, 1)
    rec = np.array([0, 1, 2, 4, 5, 15])        # 00 01 02 10 11 33
    assert neighbour_pairs(space, rec) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 4), (3, 4)]
    groups = cluster_receivers(space, rec)
    # 00 and 01 both have 3 neighbours: the smaller label heads {00, 01, 02, 10}; then {11}, {33}
    assert groups == [[0, 1, 2, 3], [4], [5]]
    assert sorted(i for g in groups for i in g) == list(range(6))


def test_srs_group_of_neighbours_uses_one_entry_tree():
    fabric = parse_spec("bcube:n=4,k=2")
    receivers = ["v0", "v1", "v2", "v3"]          # one level-0 switch: one group
    senders = [f"v{i}" for i in range(20, 60, 3)]
    srs = shuffle_plan(fabric, receivers, senders, "srs")
    incast = shuffle_plan(fabric, receivers, senders, "incast")
    assert len(srs.groups) == 1
    assert srs.cost == min(srs.groups[0].entry_costs)          # formula (1) at delta = 0
    # SRS reuses one tree: fewer active links than four separate IRS trees (not always less traffic)
    assert srs.links < incast.links
    entry = srs.groups[0].entry
    for r in receivers:
        assert srs.trees[r].receiver == f"v{entry}"
        assert srs.routes[r][-1][1] == r or r == f"v{entry}"


def test_shuffle_none_equals_unicast_at_delta_one():
    fabric = parse_spec("bcube:n=3,k=2")
    r, s = ["v0", "v13"], ["v1", "v5", "v9", "v20", "v26"]
    none = shuffle_plan(fabric, r, s, "none")
    assert none.cost == sum(incast_tree(fabric, x, s, "unicast", 1.0).cost for x in r)
    assert none.aggregators == ()


@pytest.mark.parametrize("algo,delta,per_receiver", [("srs", 0.0, 1), ("srs", 0.4, 2), ("incast", 0.0, 1),
                                                    ("none", 0.0, 1)])
def test_shuffle_reports_progress_tree_by_tree(algo, delta, per_receiver):
    """The work is one tree per receiver (two for SRS at delta > 0): progress says so, in order, to the end."""
    fabric = parse_spec("bcube:n=4,k=2")
    calls = []
    receivers, senders = ["v0", "v1", "v5", "v21"], ["v2", "v7", "v30", "v63"]
    shuffle_plan(fabric, receivers, senders, algo, delta, progress=lambda done, total: calls.append((done, total)))
    total = per_receiver * len(receivers)
    assert calls == [(i, total) for i in range(1, total + 1)]


def test_bcube_hop_paths_cross_the_switch_of_the_differing_digit():
    """The per-hop path (integer arithmetic) against the label space's vectorised digit comparison."""
    from dcnlab.controller.aggregation import _bcube_hop
    fabric = parse_spec("bcube:n=3,k=2")
    space, path = LabelSpace(3, 2), _bcube_hop(fabric)
    for a in range(space.N):
        for b in range(space.N):
            if int(space.hamming(a, b)) == 1:
                level = int(space.differing_dim(a, b))
                assert path(f"v{a}", f"v{b}") == (f"v{a}", fabric.switch_name(level, fabric.switch_of(a, level)),
                                                  f"v{b}")
