"""The model's fast paths compute what the slow ones did: the same trees, costs and figures.

``fixtures/mr4lms_golden.json`` was written by the MR4LMS-like baseline before its masks became numpy arrays
(commit 4780fb0's ``baselines.py``): per case, a digest of every tree (id, color, root, groups, links), the
group -> tree map and the merge count, over 4 fabrics, 1 to 70 colors (70: beyond one 64-bit word), both merge
rules and both table scopes.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from dcnlab.controller.multicast.baselines import MR4LMSLike, _shape
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.tree import shape
from dcnlab.topos import parse_spec

GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "mr4lms_golden.json").read_text())


def _mr4lms_digest(spec: str, colors: int, merge: str, scope: str, seed: int, groups: int, lo: int, hi: int
                   ) -> list[object]:
    h = hierarchy_for(parse_spec(spec))
    rng = random.Random(seed)
    pl = MR4LMSLike(h, colors, merge=merge, scope=scope)
    for mgid in range(groups):
        pl.add_group(mgid, rng.sample(range(h.num_hosts), min(h.num_hosts, rng.randint(lo, hi))))
    recs = [(t.tid, t.color, t.tnid, t.x, t.level, t.root_key, list(t.groups), sorted(t.links)) for t in pl.trees()]
    blob = json.dumps([recs, sorted(pl._tree_of.items()), pl.merges]).encode()
    return [hashlib.sha256(blob).hexdigest()[:16], len(recs), pl.merges]


@pytest.mark.parametrize("spec", sorted({k.split("|")[0] for k in GOLDEN}))
def test_mr4lms_trees_as_before(spec):
    cases = {k: v for k, v in GOLDEN.items() if k.startswith(spec + "|")}
    assert len(cases) == 40
    got = {}
    for key in cases:
        _, colors, merge, scope, seed, groups, lo, hi = key.split("|")
        got[key] = _mr4lms_digest(spec, int(colors), merge, scope, int(seed), int(groups), int(lo), int(hi))
    assert got == cases
    assert sum(v[2] for v in cases.values()) > 100      # the merges ran (the path that changed most)


@pytest.mark.parametrize("spec", ["midplane:", "fattree:k=16"])
def test_numpy_shape_is_shape(spec):
    """The numpy member counts of a large virtual group: the same dicts, keys in the same order."""
    h = hierarchy_for(parse_spec(spec))
    rng = random.Random(3)
    for size in (1, 255, 256, 300, 3000):
        hosts = {x: rng.randint(1, 4) for x in rng.sample(range(h.num_hosts), min(size, h.num_hosts))}
        want, got = shape(h, hosts), _shape(h, hosts)
        assert got == want and [list(c.items()) for c in got[0]] == [list(c.items()) for c in want[0]]
    one_cn = {x: 1 for x in range(h.t * 2 * 8)}       # 256+ members under few switches: a lower root level
    assert _shape(h, one_cn) == shape(h, one_cn)


def _one_digit_pairs_brute(space, s):
    """Every pair a < b of labels differing in exactly one digit d, as the kernel did it before (all pairs)."""
    import numpy as np
    dig = space.digits(s)
    out = [(a, b, int(np.flatnonzero(dig[a] != dig[b])[0])) for a in range(len(s)) for b in range(a + 1, len(s))
           if int((dig[a] != dig[b]).sum()) == 1]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


@pytest.mark.parametrize("n,k,m", [(4, 8, 300), (6, 2, 150), (3, 3, 60), (8, 5, 500), (2, 3, 16), (6, 6, 120)])
def test_one_digit_pairs_as_every_pair(n, k, m):
    """The sorted-key pairs of IRS's top stage: the rows all-pairs gave, in the same order, duplicates skipped."""
    import numpy as np

    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace

    sp = LabelSpace(n, k)
    K, nn, sh, pw = engine._params(sp)
    for seed in range(3):
        s = np.random.default_rng(seed).choice(sp.N, min(m, sp.N), replace=False).astype(np.int64)
        if seed == 2:
            s = np.concatenate([s, s[:5]])      # a shuffle may name a server twice: equal labels are no pair
        assert np.array_equal(engine._one_digit_pairs(s, K, nn, sh, pw), _one_digit_pairs_brute(sp, s))


@pytest.mark.parametrize("n,k", [(6, 3), (8, 5), (4, 8), (3, 2)])
def test_compiled_unrelabel_is_unrelabel(n, k):
    import numpy as np

    from dcnlab.controller.aggregation import engine
    from dcnlab.controller.aggregation.labels import LabelSpace

    sp = LabelSpace(n, k)
    rng = np.random.default_rng(0)
    x, r = rng.integers(0, sp.N, 4000), rng.integers(0, sp.N, 4000)
    assert np.array_equal(engine.unrelabel(sp, x, r), sp.unrelabel(x, r))
    assert np.array_equal(engine.unrelabel(sp, x, 5), sp.unrelabel(x, 5))
    assert engine.unrelabel(sp, x[:0], r[:0]).shape == (0,)


@pytest.mark.parametrize("part,point", [("000-k", 3), ("000-k", 6), ("000-size", 500), ("000-size", 1500)])
def test_m2_family_memo_is_the_same_trees(part, point):
    """M2 and MIB share one branch-owner computation per incast; each tree is the one computed afresh."""
    import numpy as np

    from dcnlab.controller.aggregation import mib
    from dcnlab.controller.aggregation.labels import LabelSpace

    n, k, m = (6, point, 120) if part == "000-k" else (4, 8, point)
    sp = LabelSpace(n, k)
    pick = np.random.default_rng([1, 3, point, 0]).choice(sp.N, m + 1, replace=False)
    r, s = int(pick[0]), pick[1:]
    shared = {a: mib.m2_family(sp, r, s, a) for a in ("m2", "mib", "mc")}
    fresh = {}
    for a in ("m2", "mib", "mc"):
        mib._LAST_OWNER.clear()
        fresh[a] = mib.m2_family(sp, r, s, a)
    for a in shared:
        for attr in ("node", "tree", "parent", "level", "sender"):
            assert np.array_equal(getattr(shared[a], attr), getattr(fresh[a], attr)), (a, attr)


M2_GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "m2_family_golden.json").read_text())
"""Digests of M2-, MIB- and MC-based trees (node, tree, parent, level, sender) and their cost, written by
``mib.py`` of commit 4780fb0 (before its routes, groups and clustering were made cheaper): 7 BCubes, 2 draws,
both routing orders; BCube(6,7), (6,8), (4,8) at 4,000 senders and (5,3) by ``mib.py`` of commit 3d04f01 (before
the groups and branch owners were compiled, :mod:`dcnlab.controller.aggregation.mib_kernels`)."""


@pytest.mark.parametrize("space", sorted({"|".join(k.split("|")[:3]) for k in M2_GOLDEN}))
def test_m2_family_trees_as_before(space):
    import numpy as np

    from dcnlab.controller.aggregation import mib
    from dcnlab.controller.aggregation.labels import LabelSpace

    n, k, m = (int(v) for v in space.split("|"))
    sp = LabelSpace(n, k)
    got, want = {}, {key: v for key, v in M2_GOLDEN.items() if key.startswith(space + "|")}
    for key in want:
        seed, algo, order = key.split("|")[3:]
        pick = np.random.default_rng([int(seed), n, k, m]).choice(sp.N, m + 1, replace=False)
        f = mib.m2_family(sp, int(pick[0]), pick[1:], algo, order)
        h = hashlib.sha256()
        for attr in ("node", "tree", "parent", "level", "sender"):
            h.update(np.ascontiguousarray(getattr(f, attr)).astype(np.int64).tobytes())
        got[key] = [h.hexdigest()[:16], float(f.costs()[0])]
    assert got == want and len(want) == 12


@pytest.mark.parametrize("algo", ["cmr4lms-fixed", "mr4lms", "opensm", "global"])
def test_metrics_presence_table_counts_as_unique(algo, monkeypatch):
    """The table entries per port counted in a presence table are the sorted-unique count's."""
    from dcnlab.controller.multicast import metrics
    from dcnlab.controller.multicast.planning import mapping_for, plan
    from dcnlab.controller.multicast.workload import build_pattern

    h = hierarchy_for(parse_spec("midplane:q=2,m=4,p=2,k=4,w=4,cns=16,terminals=4"))
    wl = build_pattern(h, "random:60:seed=3", mapping_for(h, 4))
    res = plan(h, wl, algo, 4)
    dense = metrics.compute(h, res.trees, 0, 0.0, 4)
    monkeypatch.setattr(metrics, "DENSE_ENTRIES", 0)
    assert metrics.compute(h, res.trees, 0, 0.0, 4) == dense
    assert dense.entries_per_port_max >= 1
