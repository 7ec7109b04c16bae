"""M2's routing order (000 leaves open in which digit order a server reaches its meeting point, its ambiguity 4):
the default corrects the highest differing digit first; the IRS-like variant moves the servers of a group together,
one shared digit at a time. Both build shortest-path incast trees; on 000's own draws they cost the same."""

from __future__ import annotations

import numpy as np
import pytest

from dcnlab.controller.aggregation.labels import LabelSpace
from dcnlab.controller.aggregation.mib import m2_family


def _draw(space: LabelSpace, m: int, seed: int) -> tuple[int, np.ndarray]:
    pick = np.random.default_rng([seed, 3]).choice(space.N, size=m + 1, replace=False)
    return int(pick[0]), pick[1:]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_shared_order_builds_a_shortest_path_tree_over_every_sender(k: int) -> None:
    space = LabelSpace(4, k)
    for seed in range(8):
        r, s = _draw(space, min(12, space.N - 1), seed)
        f = m2_family(space, r, s, "m2", "shared")
        assert f.sizes()[0] >= len(s) + 1                       # every sender and the receiver in the tree
        assert f.costs()[0] <= m2_family(space, r, s, "mc", "shared").costs(1.0)[0]
        # shortest paths: the cost at delta = 1 (no merging) is 2 x the senders' total Hamming distance
        assert f.costs(1.0)[0] == pytest.approx(2 * space.layer(space.relabel(s, r)).sum())


def test_the_routing_order_leaves_m2_unchanged_on_the_papers_draws() -> None:
    """After MC's clustering, the servers routed to one meeting point share no further digit, so no order can
    merge them earlier: M2 (and its loss to IRS at k = 3) does not come from the digit order."""
    space = LabelSpace(6, 3)
    for seed in range(5):
        r, s = _draw(space, 120, seed)
        assert m2_family(space, r, s, "m2", "shared").costs()[0] == m2_family(space, r, s, "m2").costs()[0]
    with pytest.raises(ValueError, match="routing order"):
        m2_family(space, r, s, "m2", "lowest")
