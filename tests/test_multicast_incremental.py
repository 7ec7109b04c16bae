"""Incremental group join/leave, the paper's figure examples, and the entry changes a controller applies."""

from __future__ import annotations

import random

import pytest

from dcnlab.controller.multicast.cmr4lms import CMR4LMS
from dcnlab.controller.multicast.dual import DualCMR4LMS
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.tree import port_tables
from test_multicast_model import check_invariants
from dcnlab.topos import parse_spec
from dcnlab.topos.errors import UserError

# one terminal per L0 and per CN, one L1 per CN, one TN: terminal c sits in CN c, CN group c // 2
LINE = "midplane:q=1,m=1,p=1,k=4,w=2,cns=8,terminals=1"
WIDE = "midplane:q=1,m=1,p=1,k=6,w=3,cns=18,terminals=1"
MID = "midplane:q=2,m=2,p=2,k=4,w=2,cns=8,terminals=2"


def table_diff(h, before, after) -> set[tuple[str, int, int, frozenset | None, frozenset | None]]:
    out = set()
    for sw in before.keys() | after.keys():
        a, b = before.get(sw, {}), after.get(sw, {})
        for key in a.keys() | b.keys():
            if a.get(key) != b.get(key):
                out.add((sw, key[0], key[1], a.get(key), b.get(key)))
    return out


def entries_set(changes) -> set[tuple[str, int, int, frozenset | None, frozenset | None]]:
    return {(e.switch, e.in_port, e.color, e.before, e.after) for e in changes}


# -- the paper's figures ---------------------------------------------------------------------
def test_fig4_groups_share_an_l3_root_on_disjoint_l2s():
    h = hierarchy_for(parse_spec(LINE))
    pl = CMR4LMS(h, 1)
    pl.add_group(0, [0, 2])                         # CN groups 0 and 1
    ch = pl.add_group(1, [4, 6])                    # CN groups 2 and 3: same spanning tree, other L2s
    assert ch.accepted and not ch.merged
    a, b = pl.group_tree(0), pl.group_tree(1)
    assert a.root(h) == b.root(h) == "l3_0_0" and a.tid != b.tid


@pytest.mark.parametrize("variant,merged,roots", [("fixed", (0,), {"l3_0_0"}), ("dynamic", (), {"l3_0_0", "l3_0_1"})])
def test_fig6_shared_l2_conflicts_under_fixed_not_dynamic(variant, merged, roots):
    h = hierarchy_for(parse_spec(LINE))
    pl = CMR4LMS(h, 1, variant)
    pl.add_group(0, [0, 2])
    ch = pl.add_group(1, [1, 3])                    # same L2 switches: the L2-L3 links clash at one root
    assert ch.merged == merged
    assert {t.root(h) for t in pl.trees()} == roots


def test_fig7_dynamic_needs_a_second_merge():
    """Merged trees had other top roots, so the virtual group's new tree uses links nobody checked."""
    h = hierarchy_for(parse_spec(WIDE))
    groups = [[17, 11], [1, 16, 6], [9, 15], [10, 14], [8, 6], [2, 14]]
    dyn, fix = CMR4LMS(h, 1, "dynamic"), CMR4LMS(h, 1, "fixed")
    for mgid, members in enumerate(groups):
        d, f = dyn.add_group(mgid, members), fix.add_group(mgid, members)
        assert f.merge_rounds <= 1
    assert d.merge_rounds == 2 and d.merged
    check_invariants(h, dyn, 1)
    check_invariants(h, fix, 1)


# -- join / leave ------------------------------------------------------------------------------
def test_join_touches_only_new_links():
    h = hierarchy_for(parse_spec(MID))
    pl = CMR4LMS(h, 4)
    pl.add_group(7, [0])
    assert pl.group_tree(7).root(h) == "l0_0_0"
    ch = pl.join(7, 1)                              # same L0: one terminal link
    assert len(ch.link_ops) == 1
    ch = pl.join(7, 2)                              # other L0 of the CN: terminal + two L0-L1 links, root L1
    assert len(ch.link_ops) == 3 and pl.group_tree(7).level == 1
    ch = pl.join(7, 4)                              # other CN: climbs to the L2
    assert pl.group_tree(7).level == 2
    ch = pl.leave(7, 4)
    assert pl.group_tree(7).level == 1 and all(after is None for *_, after in ch.link_ops)
    assert pl.leave(7, 2).link_ops and pl.group_tree(7).level == 0
    with pytest.raises(UserError, match="not a member"):
        pl.leave(7, 5)
    ch = pl.leave(7, 1)
    ch = pl.leave(7, 0)
    assert ch.tree_after is None and not pl.groups() and not pl._owner


@pytest.mark.parametrize("variant", ["fixed", "dynamic"])
@pytest.mark.parametrize("seed", range(6))
def test_random_joins_and_leaves(variant, seed):
    """After every operation: invariants hold, trees equal their members' up-paths (oracle), the reported
    link ops are exactly the owner changes, and the entry changes are exactly the table difference."""
    h = hierarchy_for(parse_spec(MID))
    rng = random.Random(seed)
    colors = 2
    pl = CMR4LMS(h, colors, variant, track_entries=True)
    tables = {}
    for _ in range(60):
        owners = dict(pl._owner)
        groups = pl.groups()
        op = rng.random()
        if op < 0.5 or not groups:
            mgid, host = rng.randrange(10), rng.randrange(h.num_hosts)
            ch = pl.join(mgid, host)
        elif op < 0.85:
            mgid = rng.choice(sorted(groups))
            ch = pl.leave(mgid, rng.choice(sorted(groups[mgid])))
        else:
            ch = pl.remove_group(rng.choice(sorted(groups)))
        if not ch.accepted:
            assert pl._owner == owners and pl.groups() == groups
            continue
        new_tables = port_tables(h, pl.trees())
        assert entries_set(ch.entries) == table_diff(h, tables, new_tables)
        tables = new_tables
        changed = {k for k in owners.keys() | pl._owner.keys() if owners.get(k) != pl._owner.get(k)}
        reported = {lk * colors + c for lk, c, *_ in ch.link_ops}
        assert changed <= reported
        assert all(owners.get(lk * colors + c) == a and pl._owner.get(lk * colors + c) == b
                   for lk, c, a, b in ch.link_ops)
        check_invariants(h, pl, colors)


def test_dual_join_leave_entries():
    h = hierarchy_for(parse_spec(MID))
    pl = DualCMR4LMS(h, 2, track_entries=True)
    rng = random.Random(3)
    tables = {}
    for _ in range(40):
        groups = pl.groups()
        if rng.random() < 0.6 or not groups:
            ch = pl.join(rng.randrange(6), rng.randrange(h.num_hosts))
        else:
            mgid = rng.choice(sorted(groups))
            ch = pl.leave(mgid, rng.choice(sorted(groups[mgid])))
        if not ch.accepted:
            continue
        new_tables = port_tables(h, pl.trees())
        assert entries_set(ch.entries) == table_diff(h, tables, new_tables)
        tables = new_tables


def test_refusal_names_the_terminal_and_changes_nothing():
    h = hierarchy_for(parse_spec(MID))
    pl = CMR4LMS(h, 2)
    pl.add_group(0, [0, 5])                         # color 0, TN group 0
    owners = dict(pl._owner)
    ch = pl.add_group(1, [0, 9])                    # color 0, TN group 1, shares terminal 0
    assert not ch.accepted and "terminal h0_0_0" in ch.reason and "MGID layers" in ch.reason
    assert pl._owner == owners and 1 in pl.refused and 1 not in pl.groups()
    ch = pl.join(0, 3)
    assert ch.accepted
    pl.add_group(5, [7])                            # color 0, TN group 1
    ch = pl.join(5, 0)                              # would need terminal 0 in color 0 on another TN group
    assert not ch.accepted and 0 not in pl.members(5)


def test_bad_requests():
    h = hierarchy_for(parse_spec(MID))
    pl = CMR4LMS(h, 2)
    pl.add_group(3, [1])
    with pytest.raises(UserError, match="already exists"):
        pl.add_group(3, [2])
    with pytest.raises(UserError, match="no members"):
        pl.add_group(4, [])
    with pytest.raises(UserError, match="out of range"):
        pl.add_group(4, [h.num_hosts])
    with pytest.raises(UserError, match="no group with mgid 9"):
        pl.remove_group(9)
    with pytest.raises(UserError, match="negative"):
        pl.add_group(-1, [0])
    with pytest.raises(UserError, match="variant"):
        CMR4LMS(h, 2, "lazy")
