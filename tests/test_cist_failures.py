"""Failure model: which pairs a broadcast still reaches over CISTs vs a single BFS tree; adversary; sweeps."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import numpy as np
import pytest

from dcnlab.controller.cist import (CistError, Failures, adversarial_failures, delivery, failure_sweep, intact_matrix,
                             parse_failures, plan_cists, random_failures, single_tree)
from dcnlab.topos.dragonfly import Dragonfly


@pytest.fixture(scope="module")
def d42():
    return plan_cists(Dragonfly(p=1, a=4, h=2))


@pytest.fixture(scope="module")
def d82():
    return plan_cists(Dragonfly(p=0, a=8, h=2, arrangement="circulant"))


def _brute_force(plan_graph, trees, failures: Failures) -> tuple[int, int, int]:
    """(pairs, delivered, min intact) from first principles with networkx."""
    G = plan_graph.to_networkx()
    alive = [v for v in G if v not in failures.switches]
    comps = []
    for edges in trees:
        T = nx.Graph()
        T.add_nodes_from(alive)
        T.add_edges_from((u, v) for u, v in edges if u in T and v in T and tuple(sorted((u, v))) not in failures.links)
        comps.append({v: i for i, c in enumerate(nx.connected_components(T)) for v in c})
    pairs = delivered = 0
    min_intact = len(trees)
    for s, d in itertools.permutations(alive, 2):
        intact = sum(c[s] == c[d] for c in comps)
        pairs += 1
        delivered += intact > 0
        min_intact = min(min_intact, intact)
    return pairs, delivered, min_intact


def test_no_failures(d42):
    d = delivery(d42.graph, d42.trees)
    assert (d.pairs, d.delivered, d.lost, d.min_intact, d.fraction) == (36 * 35, 36 * 35, 0, 2, 1.0)


def test_matches_brute_force(d42):
    rng = np.random.default_rng(5)
    trees = [t.edges for t in d42.trees]
    for f in range(5):
        for kind in ("switch", "link", "mixed"):
            fails = random_failures(d42.graph, f, kind, rng)  # type: ignore[arg-type]
            d = delivery(d42.graph, d42.trees, fails)
            assert (d.pairs, d.delivered, d.min_intact) == _brute_force(d42.graph, trees, fails)
            assert len(d.lost_pairs) == min(d.lost, 100)
            m = intact_matrix(d42.graph, d42.trees, fails)
            assert int((m > 0).sum()) == d.delivered and int((m >= 0).sum()) == d.pairs
            assert (m == m.T).all() and int(m[m >= 0].min(initial=2)) == d.min_intact
            for s, t in d.lost_pairs:
                assert m[d42.graph.vertex(s), d42.graph.vertex(t)] == 0


@pytest.mark.parametrize("kind", ["switch", "link", "mixed"])
def test_up_to_k_minus_1_failures_lose_nothing(d82, kind):
    """k = 4 CISTs: any f <= 3 failures leave every pair of working switches >= k-f intact trees."""
    rng = np.random.default_rng(11)
    for f in range(d82.k):
        for _ in range(8):
            fails = random_failures(d82.graph, f, kind, rng)  # type: ignore[arg-type]
            d = delivery(d82.graph, d82.trees, fails)
            assert d.lost == 0 and d.min_intact >= d82.k - f, (fails, d)


def test_internal_switch_failures_targeted(d82):
    """Worst placement of k-1 switch failures: internal switches of k-1 different trees, same group."""
    fails = Failures.of([d82.trees[t].root for t in range(d82.k - 1)])
    d = delivery(d82.graph, d82.trees, fails)
    assert d.lost == 0 and d.min_intact >= 1


def test_single_tree_baseline(d42):
    base = single_tree(d42.graph)
    assert base.root == "s0_0" and len(base.edges) == 35 and base.diameter <= 6
    assert nx.is_tree(nx.Graph(list(base.edges)))
    # one failed switch inside the BFS tree cuts it; the CISTs lose nothing
    fails = Failures.of(["s0_0"])
    assert delivery(d42.graph, [base], fails).lost > 0
    assert delivery(d42.graph, d42.trees, fails).lost == 0
    assert single_tree(d42.graph, "s3_2").root == "s3_2"


@pytest.mark.parametrize("kind", ["switch", "link", "mixed"])
def test_adversary_cuts_with_k_failures(d42, kind):
    attack = adversarial_failures(d42.graph, d42.trees, kind)  # type: ignore[arg-type]
    assert len(attack.failures) == d42.k
    assert attack.delivery.lost > 0 and attack.delivery.min_intact == 0
    s, d = attack.pair
    assert s not in attack.failures.switches and d not in attack.failures.switches
    # the chosen pair really is cut in every tree
    for tree in d42.trees:
        T = nx.Graph(list(tree.edges))
        T.remove_nodes_from(attack.failures.switches)
        T.remove_edges_from(attack.failures.links)
        assert not nx.has_path(T, s, d)


def test_adversary_sampled_on_larger_fabric(d82):
    attack = adversarial_failures(d82.graph, d82.trees, "switch", candidates=6, seed=1)
    assert len(attack.failures.switches) == d82.k and attack.delivery.lost > 0


def test_adversary_kind_and_single_tree():
    plan = plan_cists(Dragonfly(p=0, a=2, h=1))  # 6 switches, one tree
    with pytest.raises(CistError, match="kind"):
        adversarial_failures(plan.graph, plan.trees, "nope")  # type: ignore[arg-type]
    attack = adversarial_failures(plan.graph, plan.trees, "switch")
    assert len(attack.failures) == 1 and attack.delivery.lost > 0


def test_random_failures_are_distinct_and_deterministic(d42):
    a = random_failures(d42.graph, 6, "mixed", np.random.default_rng([1, 2]))
    b = random_failures(d42.graph, 6, "mixed", np.random.default_rng([1, 2]))
    assert a == b and len(a) == 6
    assert len(random_failures(d42.graph, 5, "link", np.random.default_rng(0)).links) == 5
    assert len(random_failures(d42.graph, 5, "switch", np.random.default_rng(0)).switches) == 5
    with pytest.raises(CistError, match="out of range"):
        random_failures(d42.graph, 37, "switch", np.random.default_rng(0))


def test_parse_failures(d42):
    f = parse_failures("s0_1, s3_2-s8_1 ,s0_0-s0_3", d42.graph)
    assert f.switches == {"s0_1"} and f.links == {("s3_2", "s8_1"), ("s0_0", "s0_3")}
    assert str(f) == "s0_1,s0_0-s0_3,s3_2-s8_1"
    with pytest.raises(CistError, match="no such switch"):
        parse_failures("s99_0", d42.graph)
    with pytest.raises(CistError, match="no link"):
        parse_failures("s0_0-s5_0", d42.graph)


def test_failed_endpoints_are_not_counted(d42):
    d = delivery(d42.graph, d42.trees, Failures.of(["s1_1", "s2_2"]))
    assert d.pairs == 34 * 33


def test_sweep_deterministic_across_workers(d42):
    base = single_tree(d42.graph)
    one = failure_sweep(d42.graph, d42.trees, base, 3, rounds=6, kind="mixed", seed=4, workers=1)
    two = failure_sweep(d42.graph, d42.trees, base, 3, rounds=6, kind="mixed", seed=4, workers=2)
    assert one == two
    assert [p.failures for p in one] == [0, 1, 2, 3]
    assert one[0].cist_min == one[0].single_min == 1.0
    assert one[1].cist_min == 1.0  # k = 2: one failure never loses anything
    assert one[1].cist_mean > one[1].single_mean


def test_lost_pairs_listed(d42):
    rng = random.Random(2)
    for _ in range(5):
        attack = adversarial_failures(d42.graph, d42.trees, "mixed", seed=rng.randrange(100))
        lost = attack.delivery.lost_pairs
        assert lost and all(s != d for s, d in lost)
