"""CIST constructions on Dragonfly: partitions, trees, the paper's examples and the parameter limits."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from dcnlab.controller.cist import (CistError, check_cists, check_partition, check_paths, cist_partition, pair_partition,
                             partition_from_names, plan_cists, plan_from_partition)
from dcnlab.controller.cist.graph import SwitchGraph
from dcnlab.controller.cist.partition import absolute_label, absolute_partition, relative_h1_obstruction
from dcnlab.topos.dragonfly import Dragonfly

ARRANGEMENTS = ("relative", "absolute", "circulant")
# (a, h) for which the construction does not apply (h = 1: dcnlab.controller.cist.partition's conditions, which
# the sweep confirms).
RELATIVE_BAD = {(5, 1), (7, 1), (8, 1), (9, 1), (11, 1), (13, 1), (14, 1), (15, 1)}
ABSOLUTE_BAD = {(6, 1), (9, 1), (12, 1), (13, 1), (15, 1)}
SMALL_GRID = [(a, h) for a in range(2, 17) for h in range(1, 9) if a * (a * h + 1) <= 400]
LARGE_GRID = [(a, h) for a in range(2, 17) for h in range(1, 9) if a * (a * h + 1) > 400]


def _fabric(a: int, h: int, arrangement: str, p: int = 0) -> Dragonfly:
    return Dragonfly(p=p, a=a, h=h, arrangement=arrangement)


def _expect_ok(a: int, h: int, arrangement: str) -> bool:
    bad = RELATIVE_BAD if arrangement == "relative" else ABSOLUTE_BAD if arrangement == "absolute" else set()
    return (a, h) not in bad


def _check_plan(a: int, h: int, arrangement: str, rule: str = "generic") -> None:
    fabric = _fabric(a, h, arrangement)
    if not _expect_ok(a, h, arrangement):
        with pytest.raises(CistError, match=f"a={a}"):
            plan_cists(fabric, rule=rule)  # type: ignore[arg-type]
        return
    plan = plan_cists(fabric, rule=rule)  # type: ignore[arg-type]
    assert plan.k == a // 2 == len(plan.parts)
    assert plan.validation.ok
    n = a * (a * h + 1)
    assert sorted(v for part in plan.parts for v in part) == sorted(SwitchGraph.from_fabric(fabric).names)
    for t, tree in enumerate(plan.trees):
        assert tree.tree_id == t and len(tree.edges) == n - 1
        assert tree.internal() <= set(plan.parts[t])
    # every group holds 2 routers of each part, 3 of part 0 for odd a (Dragonfly CISTs (Bian et al.), Lemma 7)
    for i in range(fabric.g):
        sizes = [len(plan.partition.members(t, i)) for t in range(plan.k)]
        assert sizes == [2 + (a % 2)] + [2] * (plan.k - 1)
    # the validator is run again here, from scratch, on a graph built independently of SwitchGraph
    G = nx.Graph()
    G.add_edges_from((link.a, link.b) for link in fabric.links())
    assert check_cists(G, plan.parts, [t.edges for t in plan.trees]).ok


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_sweep_small(arrangement):
    for a, h in SMALL_GRID:
        if arrangement == "circulant" and h % 2:
            continue
        _check_plan(a, h, arrangement)


@pytest.mark.parametrize("arrangement", ("relative", "circulant"))
def test_sweep_small_algorithm3(arrangement):
    for a, h in SMALL_GRID:
        if arrangement == "circulant" and h % 2:
            continue
        _check_plan(a, h, arrangement, rule="algorithm3")


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
def test_sweep_large_sample(arrangement):
    rng = random.Random(f"cist-{arrangement}")
    cases = [c for c in LARGE_GRID if arrangement != "circulant" or c[1] % 2 == 0]
    for a, h in rng.sample(cases, 4):
        _check_plan(a, h, arrangement)


def test_algorithm3_refuses_absolute_partition():
    with pytest.raises(CistError, match="algorithm3"):
        plan_cists(_fabric(6, 2, "absolute"), rule="algorithm3")


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.parametrize("a,h", [(2, 2), (3, 2), (4, 1), (4, 2), (5, 2), (6, 1), (4, 3), (6, 2)])
def test_paths_disjoint_by_definition(arrangement, a, h):
    """Cross-check of Hasunuma's condition: every pair's tree paths are internally disjoint."""
    if (arrangement == "circulant" and h % 2) or not _expect_ok(a, h, arrangement):
        return
    plan = plan_cists(_fabric(a, h, arrangement))
    assert check_paths(plan.graph, [t.edges for t in plan.trees]).ok


def test_paths_disjoint_sampled_large():
    plan = plan_cists(_fabric(8, 4, "absolute"))
    names = plan.graph.names
    rng = random.Random(7)
    pairs = [tuple(rng.sample(names, 2)) for _ in range(150)]
    assert check_paths(plan.graph, [t.edges for t in plan.trees], pairs).ok  # type: ignore[arg-type]


# -- the paper's and the report's examples --------------------------------------------------------------
def test_paper_example_relative_d42():
    """Algorithm 1 on D(p,4,2): V[0] = switches {0,3}, V[1] = switches {1,2} of all 9 groups (typo removed)."""
    plan = plan_cists(_fabric(4, 2, "relative", p=1))
    assert plan.parts == (tuple(f"s{i}_{j}" for i in range(9) for j in (0, 3)),
                          tuple(f"s{i}_{j}" for i in range(9) for j in (1, 2)))
    assert len(plan.graph) == 36 and plan.k == 2


def test_paper_example_circulant_d42():
    part = cist_partition(_fabric(4, 2, "circulant"))
    assert part.names() == pair_partition(4, 9).names()


def test_paper_printed_relative_lists_are_not_a_partition():
    """The printed V[0]/V[1] list group 7 twice and omit group 5: the validator must say so."""
    v0 = [(0, 0), (0, 3), (1, 0), (1, 3), (2, 0), (2, 3), (8, 0), (8, 3), (7, 0), (7, 3), (3, 0), (3, 3), (4, 0),
          (4, 3), (6, 0), (6, 3), (7, 0), (7, 3)]
    v1 = [(i, 1 if j == 0 else 2) for i, j in v0]
    parts = [sorted({f"s{i}_{j}" for i, j in v0}), sorted({f"s{i}_{j}" for i, j in v1})]
    result = check_partition(SwitchGraph.from_fabric(_fabric(4, 2, "relative")), parts)
    assert not result.ok and any("in no part" in p for p in result.problems)


# Dragonfly CISTs (Bian et al.), §3.2: our consistent reading of Algorithm 2's example for absolute D(p,4,2), which
# is corrupted as printed (S(5,6) for a = 4, duplicates, a V[1] without group 0).
ABSOLUTE_D42 = [[(0, 2), (0, 2), (0, 1), (1, 3), (1, 3), (0, 3), (0, 3), (2, 3), (1, 3)],
                [(1, 3), (1, 3), (2, 3), (0, 2), (0, 2), (1, 2), (1, 2), (0, 1), (0, 2)]]


def test_report_absolute_d42_table_is_a_cist_partition():
    fabric = _fabric(4, 2, "absolute", p=1)
    names = [[f"s{i}_{j}" for i, pair in enumerate(row) for j in pair] for row in ABSOLUTE_D42]
    partition = partition_from_names(fabric, names)
    assert check_partition(SwitchGraph.from_fabric(fabric), partition.names()).ok
    plan = plan_from_partition(fabric, partition)
    assert plan.validation.ok and plan.k == 2
    assert check_paths(plan.graph, [t.edges for t in plan.trees]).ok


@pytest.mark.parametrize("a,h", [(4, 2), (5, 2), (6, 3), (8, 2), (8, 4)])
def test_relative_pairs_fail_under_absolute(a, h):
    """Reusing the relative pairs {t, a-1-t} (Algorithm 1, §3.1 of Dragonfly CISTs (Bian et al.)) under the absolute
    arrangement disconnects some G[V_t]: the absolute arrangement needs a construction of its own."""
    fabric = _fabric(a, h, "absolute")
    result = check_partition(SwitchGraph.from_fabric(fabric), pair_partition(a, fabric.g).names())
    assert not result.ok and any("disconnected" in p for p in result.problems)


def test_absolute_labels_are_global_components():
    """Our label construction for the absolute arrangement (not in the paper): the labels are exactly the
    components of the global-links-only graph."""
    for a, h in [(4, 2), (5, 3), (6, 1), (7, 2)]:
        fabric = _fabric(a, h, "absolute")
        G = nx.Graph()
        G.add_nodes_from(f"s{i}_{j}" for i in range(fabric.g) for j in range(a))
        G.add_edges_from((link.a, link.b) for link in fabric.links() if link.a.split("_")[0] != link.b.split("_")[0])
        by_label: dict[tuple[int, int], set[str]] = {}
        for i in range(fabric.g):
            for j in range(a):
                by_label.setdefault(absolute_label(i, j, h), set()).add(f"s{i}_{j}")
        comps = {frozenset(c) for c in nx.connected_components(G)}
        assert comps == {frozenset(s) for s in by_label.values()}
        assert len(comps) == a * (a + 1) // 2


@pytest.mark.parametrize("a,h,expected", [
    (4, 2, {"relative": [11, 9], "absolute": [10, 11], "circulant": [8, 9]}),
    (8, 4, {"relative": [19, 11, 13, 13], "absolute": [12, 14, 19, 19], "circulant": [12, 10, 12, 10]}),
])
def test_report_diameter_table(a, h, expected):
    """The trees' diameters as we build them (BFS skeleton from a centre + generic leaf rule); Dragonfly CISTs
    (Bian et al.) gives none."""
    for arrangement, diameters in expected.items():
        assert plan_cists(_fabric(a, h, arrangement)).diameters == diameters


def test_absolute_partition_shape():
    part = absolute_partition(7, 3)
    assert part.k == 3 and part.g == 22 and part.method == "labels"


# -- parameter limits ------------------------------------------------------------------------------------
def test_relative_h1_condition_matches_validator():
    for a in range(2, 25):
        fabric = _fabric(a, 1, "relative")
        raw = check_partition(SwitchGraph.from_fabric(fabric), pair_partition(a, fabric.g).names()).ok
        assert raw == (relative_h1_obstruction(a) is None), a


def test_relative_h1_error_message():
    with pytest.raises(CistError, match=r"h=1 and a=8.*gcd\(a\+1, 3\) = 3.*a\+1 prime"):
        plan_cists(_fabric(8, 1, "relative"))


def test_absolute_h1_error_message():
    with pytest.raises(CistError, match=r"absolute construction for a=6, h=1: G\[V_1\] is disconnected"):
        plan_cists(_fabric(6, 1, "absolute"))


def test_a1_has_no_trees():
    with pytest.raises(CistError, match="a=1.*valid: a >= 2"):
        plan_cists(_fabric(1, 2, "relative"))


def test_not_a_dragonfly():
    from dcnlab.topos.spec import parse_spec
    with pytest.raises(CistError, match="needs a dragonfly"):
        plan_cists(parse_spec("fattree:k=4"))  # type: ignore[arg-type]


def test_partition_from_names_errors():
    fabric = _fabric(4, 2, "relative")
    names = pair_partition(4, fabric.g).names()
    with pytest.raises(CistError, match="not a router"):
        partition_from_names(fabric, [list(names[0]) + ["x9"], names[1]])
    with pytest.raises(CistError, match="in parts 0 and 1"):
        partition_from_names(fabric, [names[0], list(names[1]) + ["s0_0"]])
    with pytest.raises(CistError, match="in no part"):
        partition_from_names(fabric, [names[0]])
    with pytest.raises(CistError, match="part 1 is empty"):
        partition_from_names(fabric, [list(names[0]) + list(names[1]), []])
