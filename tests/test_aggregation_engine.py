"""The compiled engine builds exactly the trees of the reference implementations.

References: :func:`dcnlab.controller.aggregation.irs.irs_forest` and :func:`dcnlab.controller.aggregation.unicast.unicast_forest`
(numpy over batches of trees) and :func:`dcnlab.controller.aggregation.steiner.kmb_reference` (plain Python per tree).
Every instance is compared hop by hop (child, parent, switch level, sender flag), and the engine's cost-only
kernels (``irs_costs``, ``unicast_costs``, ``kmb_costs``) against the costs of the reference trees.
"""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation import engine
from dcnlab.controller.aggregation.irs import irs_forest
from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.steiner import kmb_reference
from dcnlab.controller.aggregation.unicast import unicast_forest

DELTAS = (0.0, 0.25, 0.7, 1.0)


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    engine.warm_up()


def hops(f) -> set[tuple[int, int, int, int, bool]]:
    """Every hop of a forest as (tree, child, parent, level, child is a sender), in relabelled labels."""
    rows = np.flatnonzero(f.parent >= 0)
    return set(zip(f.tree[rows].tolist(), f.node[rows].tolist(), f.node[f.parent[rows]].tolist(),
                   f.level[rows].astype(int).tolist(), f.sender[rows].tolist()))


def instances(count: int, seed: int, max_m: int = 40):
    """Random (space, receivers, senders) on BCube(n,k), n = 2..7 (powers of two and not), k = 0..3."""
    rng = np.random.default_rng(seed)
    made = 0
    while made < count:
        space = LabelSpace(int(rng.integers(2, 8)), int(rng.integers(0, 4)))
        if space.N < 3:
            continue
        m = int(rng.integers(1, min(space.N - 1, max_m) + 1))
        B = int(rng.integers(1, min(space.N - m, 4) + 1))
        pick = rng.choice(space.N, m + B, replace=False)
        made += 1
        yield space, pick[:B], pick[B:]


def _pairs(receivers: np.ndarray, senders: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    B, m = receivers.shape[0], senders.shape[0]
    return np.repeat(np.arange(B), m), np.tile(senders, B)


def _check_costs(batch: engine.BatchCosts, ref) -> None:
    assert np.array_equal(batch.nodes, ref.sizes())
    for i, d in enumerate(DELTAS):
        assert np.allclose(batch.traffic[i], ref.costs(d)), d
        assert np.allclose(batch.root_output[i], ref.root_output(d)), d


def test_irs_same_trees_and_costs():
    for space, rec, snd in instances(800, seed=1):
        pt, ps = _pairs(rec, snd)
        for intra in (True, False):
            ref, _ = irs_forest(space, rec, pt, ps, intra_stage=intra)
            got = engine.irs_forest(space, rec, snd, intra_stage=intra)
            got.validate(np.full(rec.shape[0], snd.shape[0]))
            assert hops(got) == hops(ref), (space, rec, snd, intra)
            _check_costs(engine.irs_costs(space, rec, snd, DELTAS, intra_stage=intra), ref)


def test_unicast_same_trees_and_costs():
    for t, (space, rec, snd) in enumerate(instances(600, seed=2)):
        pt, ps = _pairs(rec, snd)
        ref, _ = unicast_forest(space, rec, pt, ps, seed=t)
        got = engine.unicast_forest(space, rec, snd, seed=t)
        got.validate(np.full(rec.shape[0], snd.shape[0]))
        assert hops(got) == hops(ref), (space, rec, snd, t)
        _check_costs(engine.unicast_costs(space, rec, snd, DELTAS, seed=t), ref)


def test_kmb_same_trees_and_shared_mst_costs():
    for space, rec, snd in instances(600, seed=3):
        got = engine.kmb_forest(space, rec, snd)
        got.validate(np.full(rec.shape[0], snd.shape[0]))
        for b, r in enumerate(rec.tolist()):
            rows = np.flatnonzero((got.tree == b) & (got.parent >= 0))
            tree = {int(space.unrelabel(got.node[i], r)): int(space.unrelabel(got.node[got.parent[i]], r))
                    for i in rows}
            assert tree == kmb_reference(space, r, snd), (space, r, snd)
        # the cost kernel shares the senders' MST across receivers: same trees, so the same sizes
        assert np.array_equal(engine.kmb_costs(space, rec, snd), got.sizes())


@pytest.mark.parametrize("n,k,m,B", [(8, 5, 400, 3), (4, 8, 300, 2), (6, 3, 250, 4)])
def test_paper_scale_spaces(n, k, m, B):
    """Large sender sets on the papers' BCubes (hash tables and Bloom filters under load)."""
    space = LabelSpace(n, k)
    pick = np.random.default_rng(n * 100 + k).choice(space.N, m + B, replace=False)
    rec, snd = pick[:B], pick[B:]
    pt, ps = _pairs(rec, snd)
    ref, _ = irs_forest(space, rec, pt, ps)
    assert hops(engine.irs_forest(space, rec, snd)) == hops(ref)
    _check_costs(engine.irs_costs(space, rec, snd, DELTAS), ref)
    ref, _ = unicast_forest(space, rec, pt, ps, seed=5)
    assert hops(engine.unicast_forest(space, rec, snd, seed=5)) == hops(ref)
    got = engine.kmb_forest(space, rec[:1], snd)
    assert len(kmb_reference(space, int(rec[0]), snd)) == got.sizes()[0] - 1
    assert engine.kmb_costs(space, rec[:1], snd)[0] == got.sizes()[0]


def test_paper_example_costs():
    """003 Figs. 2-3 on BCube(4,1): IRS 14 (16 without the intra-stage step) to v0, 14 to v3, 12 to v8."""
    space = LabelSpace(4, 1)
    snd = np.array([2, 5, 9, 10, 11, 14])
    assert engine.irs_costs(space, np.array([0, 3, 8]), snd).traffic[0].tolist() == [14.0, 14.0, 12.0]
    assert engine.irs_costs(space, np.array([0]), snd, intra_stage=False).traffic[0].tolist() == [16.0]


def test_results_do_not_depend_on_batching():
    """A receiver's tree is the same alone or in a batch (per-process scratch tables are reused)."""
    space = LabelSpace(5, 3)
    pick = np.random.default_rng(9).choice(space.N, 80, replace=False)
    rec, snd = pick[:20], pick[20:]
    whole = engine.irs_costs(space, rec, snd, DELTAS)
    uni = engine.unicast_costs(space, rec, snd, DELTAS, seed=3)
    kmb = engine.kmb_costs(space, rec, snd)
    for b in (0, 7, 19):
        one = rec[b:b + 1]
        assert np.allclose(engine.irs_costs(space, one, snd, DELTAS).traffic[:, 0], whole.traffic[:, b])
        assert np.allclose(engine.unicast_costs(space, one, snd, DELTAS, seed=3).traffic[:, 0], uni.traffic[:, b])
        assert engine.kmb_costs(space, one, snd)[0] == kmb[b]


@pytest.mark.parametrize("n,k", [(2, 9), (4, 8), (8, 5), (6, 3), (7, 2), (16, 3)])
def test_whole_label_arithmetic(n, k):
    """Relabelling, Hamming distances and layers by word operations (n a power of two) or digits."""
    space = LabelSpace(n, k)
    K, n_, sh, pw = engine._params(space)
    hm = np.uint64(engine._hmask(sh))
    rng = np.random.default_rng(n * 10 + k)
    xs = rng.integers(0, space.N, 300)
    for r in rng.integers(0, space.N, 5).tolist():
        out = np.empty_like(xs)
        engine._relabel(xs, r, K, n_, sh, pw, out)
        assert np.array_equal(out, space.relabel(xs, r))
    ys = rng.integers(0, space.N, 300)
    # one-digit pairs: plant neighbours (digit 1 or 0 moved by one), then compare with brute force
    d = 1 if K > 1 else 0
    near = xs[:40] + pw[d] * np.where(xs[:40] // pw[d] % n == n - 1, -1, 1)
    s = np.unique(np.concatenate([xs[:60], near]))
    want = {(a, b, int(space.differing_dim(s[a], s[b]))) for a in range(s.shape[0]) for b in range(a + 1, s.shape[0])
            if space.hamming(s[a], s[b]) == 1}
    got = engine._one_digit_pairs(s, K, n_, sh, pw)
    assert {tuple(row) for row in got.tolist()} == want and got.shape[0] == len(want) >= 10
    for x, y in zip(xs.tolist(), ys.tolist()):
        assert engine._hamming(x, y, K, n_, sh, pw, hm) == space.hamming(x, y)
        assert engine._layer(x, K, n_, sh, pw, hm) == space.layer(x)
