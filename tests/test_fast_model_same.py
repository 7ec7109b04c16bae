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
