"""Baselines (OpenSM-like, global tree, MR4LMS-like) and the metrics."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from dcnlab.controller.multicast import metrics
from dcnlab.controller.multicast.baselines import GlobalTree, MR4LMSLike, OpenSMLike
from dcnlab.controller.multicast.cmr4lms import CMR4LMS
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.planning import plan
from dcnlab.controller.multicast.workload import GroupSpec, Workload
from test_multicast_model import check_invariants
from dcnlab.topos import parse_spec

SPECS = ["midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2", "fattree:k=4"]


@pytest.mark.parametrize("spec", SPECS)
def test_opensm_root_minimises_max_hops(spec):
    """Oracle: BFS over the whole fabric; the root is the first switch (node order) with the least max hops."""
    f = parse_spec(spec)
    h = hierarchy_for(f)
    g = nx.Graph((l.a, l.b) for l in f.links())
    switches = [n.name for n in f.forwarding_nodes()]
    rng = random.Random(1)
    pl = OpenSMLike(h, 1000)
    for mgid in range(40):
        members = rng.sample(range(h.num_hosts), rng.randint(1, 5))
        pl.add_group(mgid, members)
        names = [f.host_name(x) for x in members]
        hops = {s: max(nx.shortest_path_length(g, s, n) for n in names) for s in switches}
        best = min(hops.values())
        first = next(s for s in switches if hops[s] == best)
        tree = pl.trees()[-1]
        assert tree.root(h) == first and tree.color == mgid
    check_invariants(h, pl, 1000)


def test_opensm_refuses_when_table_full():
    h = hierarchy_for(parse_spec("fattree:k=4"))
    pl = OpenSMLike(h, 3)
    assert [pl.add_group(m, [m]) for m in range(5)] == [True, True, True, False, False]
    assert "table full (all 3 entries in use)" in pl.refused[3]
    assert len(pl.trees()) == 3


def test_global_tree_floods_everything():
    h = hierarchy_for(parse_spec("fattree:k=4"))
    wl = Workload("t", 1, 4, tuple(GroupSpec(m, (m, m + 5)) for m in range(6)))
    res = plan(h, wl, "global", 4)
    m = res.metrics
    assert m.trees == 1 and m.tfi_max == 6 and m.efi_max == 6 and m.efi_avg == 6
    tree = res.trees[0]
    assert set(range(h.num_hosts)) <= tree.links
    assert len(tree.links) == h.num_hosts + 8 + 4   # edges to agg 0, agg 0 of each pod to core 0
    assert isinstance(GlobalTree(h), GlobalTree)


def test_mr4lms_roots_in_turn_and_first_fit_colors():
    h = hierarchy_for(parse_spec("fattree:k=4"))
    pl = MR4LMSLike(h, 2)
    pl.add_group(0, [0, 4])                  # pods 0 and 1: all cores are candidates, core 0 first
    pl.add_group(1, [2, 6])                  # least-loaded core next (c1), color 0 fits
    pl.add_group(2, [0, 6])                  # shares terminals with both: color 1
    roots = [(t.root(h), t.color) for t in pl.trees()]
    assert roots[:2] == [("c0", 0), ("c1", 0)] and roots[2][1] == 1
    check_invariants(h, pl, 2)


@pytest.mark.parametrize("spec", SPECS)
def test_mr4lms_merges_when_colors_run_out(spec):
    h = hierarchy_for(parse_spec(spec))
    rng = random.Random(4)
    pl = MR4LMSLike(h, 1)
    for mgid in range(30):
        pl.add_group(mgid, rng.sample(range(h.num_hosts), rng.randint(2, 4)))
    trees = check_invariants(h, pl, 1)
    assert pl.merges > 0 and max(t.tfi for t in trees) > 1
    assert sum(t.tfi for t in trees) == 30


def test_metrics_count_groups_per_link():
    """A tree shared by n merged groups adds n to the EFI of each of its links; TFI = n."""
    h = hierarchy_for(parse_spec("fattree:k=4"))
    pl = CMR4LMS(h, 1)
    pl.add_group(0, [0, 4])
    pl.add_group(2, [1, 5])                  # same spanning tree (C·m = 2), shares links -> merged
    pl.add_group(1, [8])                     # other spanning tree, alone under one edge switch
    trees = pl.trees()
    m = metrics.compute(h, trees, 0, 0.5, 1)
    merged = next(t for t in trees if t.tfi == 2)
    assert (m.trees, m.tfi_max, m.tfi_avg, m.groups) == (2, 2, 1.5, 3)
    switch_links = [lk for lk in merged.links if lk >= h.num_hosts]
    assert m.efi_max == 2 and m.efi_avg == 2.0
    assert m.efi_avg_all == pytest.approx(2 * len(switch_links) / h.num_switch_links)
    assert m.terminal_efi_max == 2           # a member of a merged group hears both groups
    assert m.entries_per_port_max == 1 and m.seconds == 0.5
