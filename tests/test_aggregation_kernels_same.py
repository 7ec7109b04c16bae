"""The shortcuts of the model's aggregation rounds against the slow ways they replace, exactly.

A shuffle's detail (003-k) builds each tree kind once (:func:`engine.forest_costs`) and takes SRS's entry trees out
of the incast ones (:meth:`Forest.select`) instead of building them again; no aggregation's links are counted by a
kernel (:func:`engine.path_links`) instead of numpy path steps; every ratio is folded in one pass
(:func:`engine._tree_flows`); M2 and MIB share MIB's branches (:func:`mib.m2_family_timed`). Each is checked here
against the reference it replaces, on small BCubes of both digit kinds (``n`` a power of two or not)."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import engine, mib
from dcnlab.controller.aggregation.forest import Forest
from dcnlab.controller.aggregation.irs import irs_forest as irs_reference
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.shuffle import count_distinct, shuffle_costs, step_link_keys
from dcnlab.controller.aggregation.steiner import kmb_reference
from dcnlab.controller.aggregation.unicast import first_dimension
from dcnlab.controller.aggregation.unicast import unicast_forest as unicast_reference

SPACES = [(4, 2), (3, 3), (6, 2), (8, 2), (5, 2), (2, 5), (7, 1)]
DELTAS = (0.0, 0.05, 0.35, 0.7, 1.0)


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    engine.warm_up()


def _draw(space: LabelSpace, m: int, b: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    pick = np.random.default_rng(seed).choice(space.N, size=min(m + b, space.N), replace=False)
    b = min(b, pick.shape[0] // 2)
    return pick[:b], pick[b:]


def _hops(f: Forest) -> list[set[tuple[int, int, int, bool]]]:
    """Per tree, its hops as (child, parent, level, child is a sender) in relabelled labels."""
    out: list[set[tuple[int, int, int, bool]]] = [set() for _ in range(f.trees)]
    for r in np.flatnonzero(f.parent >= 0).tolist():
        out[int(f.tree[r])].add((int(f.node[r]), int(f.node[f.parent[r]]), int(f.level[r]), bool(f.sender[r])))
    return out


def _kmb_hops(space: LabelSpace, receiver: int, senders: np.ndarray) -> set[tuple[int, int]]:
    parent = kmb_reference(space, receiver, senders)
    rel = {v: int(space.relabel(np.array([v]), receiver)[0]) for v in {*parent, *parent.values()}}
    return {(rel[c], rel[p]) for c, p in parent.items()}


@pytest.mark.parametrize("n,k", SPACES)
def test_forest_costs_are_the_reference_trees_and_the_cost_kernels(n, k):
    """One build gives the same trees as the numpy references, and bit for bit the costs of the costs-only kernels
    (which the shuffle's figures come from without detail)."""
    space = LabelSpace(n, k)
    for seed in range(4):
        rec, snd = _draw(space, 12 + 5 * seed, 6, seed)
        pair_tree, pair_sender = np.repeat(np.arange(rec.shape[0]), snd.shape[0]), np.tile(snd, rec.shape[0])
        for intra in (True, False):
            f, c = engine.forest_costs(space, rec, snd, "irs", DELTAS, intra_stage=intra)
            ref, _ = irs_reference(space, rec, pair_tree, pair_sender, intra_stage=intra)
            assert _hops(f) == _hops(ref)
            alone = engine.irs_costs(space, rec, snd, DELTAS, intra_stage=intra)
            assert np.array_equal(c.traffic, alone.traffic) and np.array_equal(c.root_output, alone.root_output)
            assert np.array_equal(c.nodes, f.sizes())
        f, c = engine.forest_costs(space, rec, snd, "unicast", DELTAS, seed=seed)
        ref, _ = unicast_reference(space, rec, pair_tree, pair_sender, seed=seed)
        assert _hops(f) == _hops(ref)
        alone = engine.unicast_costs(space, rec, snd, DELTAS, seed=seed)
        assert np.array_equal(c.traffic, alone.traffic) and np.array_equal(c.root_output, alone.root_output)
        f, c = engine.forest_costs(space, rec, snd, "kmb")
        assert np.array_equal(c.nodes, engine.kmb_costs(space, rec, snd))
        for b, r in enumerate(rec.tolist()):
            assert {(ch, p) for ch, p, _, _ in _hops(f)[b]} == _kmb_hops(space, r, snd)


@pytest.mark.parametrize("n,k", SPACES)
def test_select_is_the_forest_built_for_those_receivers(n, k):
    """SRS's entry trees taken out of every receiver's trees are the forest built for the entries alone, array for
    array (so their links, aggregators and receiver input are too)."""
    space = LabelSpace(n, k)
    rec, snd = _draw(space, 15, 8, n * 10 + k)
    whole = engine.irs_forest(space, rec, snd)
    rng = np.random.default_rng(k)
    for idx in (np.arange(rec.shape[0]), rng.permutation(rec.shape[0])[: max(1, rec.shape[0] // 2)], np.array([0])):
        got, alone = whole.select(idx), engine.irs_forest(space, rec[idx], snd)
        for name in ("receivers", "node", "tree", "parent", "level", "sender"):
            assert np.array_equal(getattr(got, name), getattr(alone, name)), name
            assert getattr(got, name).dtype == getattr(alone, name).dtype, name
        assert np.array_equal(got.links(), alone.links()) and np.array_equal(got.aggregators(), alone.aggregators())


@pytest.mark.parametrize("n,k", SPACES)
def test_path_links_count_the_numpy_path_steps(n, k):
    """No aggregation's links by the kernel are the distinct links of the numpy unicast paths (the code it replaces)."""
    space = LabelSpace(n, k)
    for seed in range(3):
        rec, snd = _draw(space, 10 + 7 * seed, 5, seed + 100)
        B, m = rec.shape[0], snd.shape[0]
        _, steps = unicast_reference(space, rec, np.repeat(np.arange(B), m), np.tile(snd, B), seed=seed)
        slow = int(np.unique(step_link_keys(space, steps, rec)).shape[0])
        assert engine.path_links(space, rec, snd, seed=seed) == slow
        assert count_distinct(step_link_keys(space, steps, rec)) == slow


@pytest.mark.parametrize("n,k", [*SPACES, (6, 8), (8, 5), (4, 8), (9, 2)])
def test_unrelabel_and_first_digits_match_the_label_space(n, k):
    """The word-wise / constant-divisor label arithmetic against :class:`LabelSpace`'s digit arrays, and the
    branch-free first digits against :func:`first_dimension`."""
    space = LabelSpace(n, k)
    rng = np.random.default_rng(n * 100 + k)
    x, r = rng.integers(0, space.N, 500), rng.integers(0, space.N, 500)
    want = np.array([int(space.unrelabel(np.array([a]), int(b))[0]) for a, b in zip(x.tolist(), r.tolist())])
    assert np.array_equal(engine.unrelabel(space, x, r), want)
    K, nn, sh, pw = engine._params(space)
    for receiver in r[:5].tolist():
        s = x[x != receiver]
        rel = space.relabel(s, receiver)
        got = np.empty(s.shape[0], np.int64)
        engine._first_dims(np.uint64(7), receiver, s, rel, K, nn, sh, pw, got)
        assert np.array_equal(got, first_dimension(space, np.full(s.shape[0], receiver), s, rel, 7))


def _costs(algo: str, space: LabelSpace, rec: np.ndarray, snd: np.ndarray, deltas) -> engine.BatchCosts:
    if algo == "irs":
        return engine.irs_costs(space, rec, snd, deltas)
    return engine.unicast_costs(space, rec, snd, deltas, seed=3)


def test_all_ratios_in_one_pass_are_each_ratio_alone():
    """Folding every ratio in one topological pass gives each ratio's figures bit for bit as a pass of its own."""
    for n, k in ((8, 2), (6, 2), (3, 3)):
        space = LabelSpace(n, k)
        rec, snd = _draw(space, 30, 6, n + k)
        for algo in ("irs", "unicast"):
            together = _costs(algo, space, rec, snd, DELTAS)
            for i, d in enumerate(DELTAS):
                alone = _costs(algo, space, rec, snd, (d,))
                assert np.array_equal(together.traffic[i], alone.traffic[0])
                assert np.array_equal(together.root_output[i], alone.root_output[0])


def test_shuffle_detail_is_measured_on_trees_built_alone():
    """A shuffle's detail (links, aggregators, receiver input per method) as before the shared builds: every tree
    kind built on its own for its receivers, SRS's for the group entries only."""
    from dcnlab.controller.aggregation.shuffle import _aggregator_keys, forest_detail, srs_groups

    space = LabelSpace(6, 2)
    rec, snd = _draw(space, 25, 25, 5)
    c = shuffle_costs(space, snd, rec, (0.0,), seed=2, detail=True)
    for name, f in (("incast", engine.irs_forest(space, rec, snd)),
                    ("unicast", engine.unicast_forest(space, rec, snd, seed=2)),
                    ("kmb", engine.kmb_forest(space, rec, snd))):
        assert (c.links[name], c.aggregators[name], c.receiver_input[name]) == forest_detail(f)
        assert c.aggregators_summed[name] == _aggregator_keys(f).shape[0]
    assert c.traffic["kmb"][0] == float(f.costs().sum())
    groups = srs_groups(space, rec, engine.irs_costs(space, rec, snd).traffic[0])
    entries = engine.irs_forest(space, np.array([g.entry for g in groups]), snd)
    assert c.aggregators_summed["srs"] == _aggregator_keys(entries).shape[0]
    assert c.aggregators["srs"] == count_distinct(_aggregator_keys(entries))


@pytest.mark.parametrize("n,k,m", [(4, 3, 40), (6, 3, 60), (3, 4, 30), (4, 8, 300)])
def test_m2_and_mib_sharing_their_branches_build_the_trees_alone(n, k, m):
    space = LabelSpace(n, k)
    for seed in range(3):
        rec, snd = _draw(space, m, 1, seed)
        together = mib.m2_family_timed(space, int(rec[0]), snd)
        assert list(together) == list(mib.ALGORITHMS)
        for algo, (f, seconds) in together.items():
            assert seconds >= 0
            alone = mib.m2_family_timed(space, int(rec[0]), snd, (algo,))[algo][0]
            for name in ("node", "tree", "parent", "level", "sender"):
                assert np.array_equal(getattr(f, name), getattr(alone, name)), (algo, name)
