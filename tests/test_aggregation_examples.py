"""The papers' worked examples as exact tests (IRS/SRS (Guo et al.), Figs. 2-3 and §3.3; M2 (Fang et al.),
§3.2-3.4)."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import incast_tree, shuffle_plan
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.mib import branch_owner, m2_family, related_senders
from dcnlab.controller.aggregation.shuffle import cluster_receivers, srs_groups
from dcnlab.controller.aggregation.unicast import unicast_forest
from dcnlab.topos.spec import parse_spec

BCUBE41 = parse_spec("bcube:n=4,k=1")
SENDERS = ["v2", "v5", "v9", "v10", "v11", "v14"]


@pytest.mark.parametrize("receiver,intra,cost,links", [
    ("v0", False, 16, 12),   # Fig. 2(b)
    ("v0", True, 14, 11),    # Fig. 2(c)
    ("v3", True, 14, 11),    # Fig. 3(a)
    ("v8", True, 12, 9),     # Fig. 3(b)
])
def test_irs_figures(receiver, intra, cost, links):
    tree = incast_tree(BCUBE41, receiver, SENDERS, "irs", intra_stage=intra)
    tree.check_fabric(BCUBE41)
    assert (tree.cost, tree.links) == (cost, links)


def test_irs_fig2_groups_and_intra_stage_redirect():
    tree = incast_tree(BCUBE41, "v0", SENDERS, "irs")
    assert tree.info["routing_symbols"] == {"e2": 1, "e1": 0}
    parent = tree.parent
    # e2 = 1: {v5, v9} -> v1 and {v10, v14} -> v2; the singleton v11 goes sideways to v9 (or v10)
    assert parent["v5"] == parent["v9"] == "v1"
    assert parent["v10"] == parent["v14"] == "v2"
    assert parent["v11"] in ("v9", "v10")
    assert "v3" not in tree.nodes


def test_irs_fig3b_v10_aggregates_three_flows():
    tree = incast_tree(BCUBE41, "v8", SENDERS, "irs")
    plan = tree.port_plan(BCUBE41)
    assert plan["v10"].role == "aggregate" and plan["v10"].expected == 3


def test_unicast_fig2a_is_a_draw_where_no_paths_meet():
    space = LabelSpace(4, 1)
    s = np.array([2, 5, 9, 10, 11, 14])
    # 11 -> 10, 21 -> 01, 22 -> 20, 23 -> 03, 32 -> 30: the paths of Fig. 2(a)
    forest, steps = unicast_forest(space, np.array([0]), np.zeros(6, np.int64), s,
                                   first_dims=np.array([0, 0, 1, 0, 1, 0]))
    assert (forest.costs()[0], forest.links()[0]) == (22, 18)
    assert steps.costs(1)[0] == 22          # nothing aggregates: equal to no aggregation
    tree = incast_tree(BCUBE41, "v0", SENDERS, "unicast", seed=60)   # the seeded draw that gives Fig. 2(a)
    assert (tree.cost, tree.links) == (22, 18)
    fixed, _ = unicast_forest(space, np.array([0]), np.zeros(6, np.int64), s, first_dims=np.array([0, 1, 1, 1, 1, 1]))
    assert (fixed.costs()[0], fixed.links()[0]) == (16, 12)   # highest digit first: another tree than Fig. 2(a)'s draw


def test_srs_entry_point_example():
    space = LabelSpace(4, 1)
    receivers = np.array([0, 3, 8])
    assert cluster_receivers(space, receivers) == [[0, 1, 2]]
    groups = srs_groups(space, receivers, np.array([14.0, 14.0, 12.0]))
    assert groups[0].entry_costs == (46.0, 48.0, 42.0)
    assert groups[0].head == 0 and groups[0].entry == 8
    plan = shuffle_plan(BCUBE41, ["v0", "v3", "v8"], SENDERS, "srs")
    assert plan.cost == 42
    assert plan.routes["v3"][-2:] == (("v8", "v0"), ("v0", "v3"))   # entry -> head -> member


def _labels(texts):
    return np.array([int(t, 4) for t in texts], dtype=np.int64)


M2_SENDERS = "002 003 010 011 031 121 202 211 221 300 301 321 322 323".split()


def test_m2_related_sender_sets():
    space = LabelSpace(4, 2)
    rel = _labels(M2_SENDERS)
    related = related_senders(space, rel)
    got = {M2_SENDERS[i]: {M2_SENDERS[j] for j in js} for i, js in enumerate(related) if js}
    assert got == {"002": {"202", "322"}, "003": {"323"}, "010": {"011", "211"}, "011": {"211"},
                   "300": {"301", "321", "322", "323"}, "301": {"321"}}
    owner = branch_owner(space, rel)
    roots = {M2_SENDERS[i] for i, a in enumerate(owner) if a < 0}
    assert roots - {"002", "003", "010", "300"} == {"031", "121", "221"}   # related to no layer-1 node
    owners = {M2_SENDERS[i]: M2_SENDERS[a] for i, a in enumerate(owner) if a >= 0}
    assert owners == {"011": "010", "202": "002", "211": "011", "301": "300", "321": "301",
                      "322": "300", "323": "300"}


def test_m2_example_branch_and_clustering_steps():
    space = LabelSpace(4, 2)
    forest = m2_family(space, 0, _labels(M2_SENDERS), "m2")
    forest.validate(np.array([14]))
    parent, _, _ = forest.parent_map(0)
    p = {np.base_repr(c, 4).zfill(3): np.base_repr(v, 4).zfill(3) for c, v in parent.items()}
    assert p["322"] == p["323"] == "320" and p["320"] == "300"     # MIB: meet at 320 under root 300
    assert p["121"] == p["221"] == "021"                           # MC: share d1=2, d0=1
    assert p["021"] == p["031"] == "001" and p["001"] == "000"      # MC: share d0=1
    assert p["321"] == "301" and p["211"] == "011" and p["202"] == "002"
