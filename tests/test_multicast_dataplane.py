"""C-MR4LMS in the data plane without BMv2: compiled per-port tables simulated packet by packet, incremental
installs checked against P4Runtime's write semantics, failover to the dual tree, and the model's prediction."""

from __future__ import annotations

import random
from collections import Counter, deque

import pytest
import fake_switches

from dcnlab.controller.multicast.dataplane import (GROUP_FIRST, GROUP_LAST, MulticastDataplane, TableLimitError,
                                            host_addresses)
from dcnlab.controller.multicast.hierarchy import hierarchy_for
from dcnlab.controller.multicast.tree import port_tables
from dcnlab.controller.replication import HOST_PORT_TABLE, KIND_MULTICAST, REPLICATE_TABLE, TreeKey
from dcnlab.controller.runtime.entities import MulticastGroup, TableEntry
from dcnlab.topos.errors import UserError
from dcnlab.topos.spec import parse_spec

SPEC = "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=2"
JOBS = [  # the experiment's initial groups (4x2 grid, 2x2 grid, two pairs), MGIDs for C=3 in dual mode
    (0, (0, 1, 2, 3)), (3, (4, 5, 6, 7)), (1, (0, 4)), (4, (1, 5)), (7, (2, 6)), (10, (3, 7)),
    (2, (0, 1, 2, 3, 4, 5, 6, 7)), (6, (8, 9)), (9, (10, 11)), (13, (8, 10)), (16, (9, 11)), (5, (8, 9, 10, 11)),
    (12, (12, 13)), (15, (14, 15)),
]


class FakeSwitches(fake_switches.FakeSwitches):
    """Shared write semantics plus what the tests read: a switch's replication for a packet, a port's rewrite."""

    def forward(self, sw: str, in_port: int, color: int) -> list[int]:
        st = self.state.get(sw, {})
        match = tuple(sorted({"std.ingress_port": in_port, "hdr.tree.kind": KIND_MULTICAST,
                              "hdr.tree.tree": color}.items()))
        entry = st.get(("table", REPLICATE_TABLE, match, 0, False))
        if entry is None:
            return []
        assert isinstance(entry, TableEntry)
        group = st[("mcast", dict(entry.params)["mcast_grp"])]
        assert isinstance(group, MulticastGroup)
        return [p for p, _ in group.replicas]

    def rewrites(self, sw: str, port: int) -> dict | None:
        e = self.state.get(sw, {}).get(("table", HOST_PORT_TABLE, (("std.egress_port", port),), 0, False))
        return dict(e.params) if isinstance(e, TableEntry) else None


def flood(fabric, sw: FakeSwitches, sender: int, color: int, failed: frozenset[tuple[str, str]] = frozenset()
          ) -> tuple[Counter, Counter]:
    """(packets per directed link, copies per host) for one message, simulated through the switch state;
    frames sent onto a failed link (an unordered node pair) are lost."""
    node, port = fabric.host_attachment(sender)
    name = fabric.host_name(sender)
    links: Counter = Counter({(name, node): 1})
    hosts: Counter = Counter()
    queue = deque([(node, port)])
    while queue:
        s, pin = queue.popleft()
        for out in sw.forward(s, pin, color):
            peer, pport = fabric.peer(s, out)
            if frozenset((s, peer)) in failed:
                continue
            links[(s, peer)] += 1
            if fabric.node(peer).forwards:
                queue.append((peer, pport))
            else:
                info = next(h for h in fabric.hosts() if h.name == peer)
                assert sw.rewrites(s, out) == {"mac": info.mac, "ip": info.ip}, "copy to a host keeps foreign addresses"
                hosts[peer] += 1
        assert sum(links.values()) < 10_000, "replication loop"
    return links, hosts


def _setup(spec: str = SPEC, colors: int = 3, **kw) -> tuple[object, object, FakeSwitches, MulticastDataplane]:
    fabric = parse_spec(spec)
    h = hierarchy_for(fabric)
    sw = FakeSwitches()
    return fabric, h, sw, MulticastDataplane(sw, h, colors, **kw)


def _check_consistent(dp: MulticastDataplane, sw: FakeSwitches) -> None:
    assert dp.verify() == []
    installed = dp.installed()
    for name in set(installed) | set(sw.state):
        want = set(installed[name].groups) | set(installed[name].entries) | set(installed[name].host_ports) \
            if name in installed else set()
        assert sw.entities(name) == want, name
        for g in (installed[name].groups if name in installed else ()):
            assert GROUP_FIRST <= g.mgid <= GROUP_LAST
        per_port = Counter(dict(e.match)["std.ingress_port"] for e in (installed[name].entries if name in installed
                                                                         else ()))
        assert max(per_port.values(), default=0) <= dp.colors


def _check_floods(fabric, dp: MulticastDataplane, sw: FakeSwitches,
                  failed: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Every member's message reaches every other member; links and host copies equal the model."""
    for mgid, members in dp.groups().items():
        names = {fabric.host_name(x) for x in members}
        for x in members:
            links, hosts = flood(fabric, sw, x, dp.color(mgid), failed)
            assert fabric.host_name(x) not in hosts, "a copy went back to the sender"
            assert names - {fabric.host_name(x)} <= set(hosts), f"group {mgid} from {x}: missing members"
            if not failed:
                assert links == dp.predicted_copies(x, mgid), f"group {mgid} from {fabric.host_name(x)}"


def test_jobs_workload_compiles_floods_and_matches_the_model():
    fabric, h, sw, dp = _setup()
    for mgid, members in JOBS:
        st = dp.add_group(mgid, members)
        assert st.accepted
    _check_consistent(dp, sw)
    _check_floods(fabric, dp, sw)
    # C=3 forces merges: the four columns of the 4x2 grid all cross the same L1-L2 links (CN 0 and CN 1 meet
    # at one L2 per TN), the two columns of the 2x2 grid share their L0 up-links
    shared = {t.groups for t in dp.trees() if t.plane == 0 and t.tfi > 1}
    assert shared == {(1, 4, 7, 10), (13, 16)}
    # a member two L0s away gets one copy per tree; a member under the sender's L0 gets one
    _, hosts = flood(fabric, sw, 0, dp.color(2))
    assert hosts["h0_0_1"] == 1 and hosts["h1_1_1"] == 2
    # outsiders on a merged tree hear the other group (and must filter it by MGID)
    _, hosts = flood(fabric, sw, 0, dp.color(1))
    assert set(hosts) == {f"h{c}_{i}_{x}" for c in (0, 1) for i in (0, 1) for x in (0, 1)} - {"h0_0_0"}
    assert hosts["h1_0_0"] == 2                            # the member of group 1; the six others filter it


def test_both_feed_without_failures_equals_the_per_port_tables_of_the_trees():
    _, h, _, dp = _setup()
    for mgid, members in JOBS:
        dp.add_group(mgid, members)
    tables = port_tables(h, dp.trees())
    want = {sw: {TreeKey(p, KIND_MULTICAST, c): outs for (p, c), outs in tab.items() if outs}
            for sw, tab in tables.items()}
    assert dp.installed_rules() == {sw: t for sw, t in want.items() if t}


@pytest.mark.parametrize("spec,dual,variant", [(SPEC, True, "fixed"), (SPEC, True, "dynamic"),
                                               (SPEC, False, "fixed"), ("fattree:k=4", True, "fixed"),
                                               ("fattree:k=4", False, "dynamic")])
def test_random_joins_and_leaves_stay_consistent_and_incremental(spec, dual, variant):
    fabric, h, sw, dp = _setup(spec, colors=2, dual=dual, variant=variant)
    rng = random.Random(f"{spec}{dual}{variant}")
    n = h.num_hosts
    live: dict[int, set[int]] = {}
    for step in range(60):
        before = {name: dict(rules) for name, rules in dp.installed_rules().items()}
        nwrites = len(sw.writes)
        r = rng.random()
        if not live or r < 0.3:
            mgid = rng.randrange(0, 64)
            if mgid in live:
                continue
            st = dp.add_group(mgid, rng.sample(range(n), rng.randint(1, 5)))
            if st.accepted:
                live[mgid] = set(dp.groups()[mgid])
        elif r < 0.45:
            mgid = rng.choice(sorted(live))
            dp.remove_group(mgid)
            del live[mgid]
        elif r < 0.75:
            mgid = rng.choice(sorted(live))
            x = rng.randrange(n)
            if x not in live[mgid] and dp.join(mgid, x).accepted:
                live[mgid].add(x)
        else:
            mgid = rng.choice(sorted(live))
            x = rng.choice(sorted(live[mgid]))
            dp.leave(mgid, x)
            live[mgid].discard(x)
            if not live[mgid]:
                del live[mgid]
        assert {g: set(m) for g, m in dp.groups().items()} == live
        _check_consistent(dp, sw)
        after = dp.installed_rules()
        changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
        written = {name for w in sw.writes[nwrites:] for name in w}
        assert written == changed, f"step {step}: wrote {written - changed} needlessly, missed {changed - written}"
    _check_floods(fabric, dp, sw)


def test_group_ids_are_kept_for_unchanged_out_port_sets():
    _, _, sw, dp = _setup()
    dp.add_group(2, range(8))
    groups = {name: {g.mgid: g.replicas for g in rep.groups} for name, rep in dp.installed().items()}
    dp.add_group(12, (12, 13))          # another CN: the first group's switches are not touched
    for name, gs in groups.items():
        assert {g.mgid: g.replicas for g in dp.installed()[name].groups} == gs


def test_failover_moves_only_edge_entries_and_loses_nothing():
    fabric, h, sw, dp = _setup()
    for mgid, members in JOBS:
        dp.add_group(mgid, members)
    rules_before = dp.installed_rules()
    world = dp.group_trees(2)[0]
    link = next(lk for lk in sorted(world.links) if h.link_level(lk) == 1)     # an L1-L2 link of the 4x2 world
    u, up, d, _ = h.link_ends(link)
    users = {g for t in dp.trees() if t.plane == 0 and link in t.links for g in t.groups}
    n = len(sw.writes)
    stats = dp.port_down(u, up)
    assert stats is not None and stats.down and stats.link == (u, d)
    assert set(stats.groups) == users and 2 in users
    assert dp.port_down(d, h.link_ends(link)[3]) is None          # the other end reports the same link
    written = {name for w in sw.writes[n:] for name in w}
    assert written and all(name.startswith("l0_") for name in written), written
    assert stats.switched_seconds <= stats.seconds
    for mgid in users:
        assert dp.fed_planes(mgid) == (1,)
    _check_consistent(dp, sw)
    failed = frozenset({frozenset((u, d))})
    _check_floods(fabric, dp, sw, failed)
    for mgid in users:               # moved groups: nothing crosses the cut, exactly the second tree's copies
        for x in dp.groups()[mgid]:
            links, hosts = flood(fabric, sw, x, dp.color(mgid), failed)
            pred = dp.predicted_copies(x, mgid)
            assert links == pred and (u, d) not in links and (d, u) not in links
            assert set(hosts.values()) <= {1}
    up_stats = dp.port_up(u, up)
    assert up_stats is not None and not up_stats.down and set(up_stats.groups) == users
    assert dp.installed_rules() == rules_before
    _check_consistent(dp, sw)
    _check_floods(fabric, dp, sw)


def test_primary_feed_loses_until_failover_then_delivers_once():
    fabric, h, sw, dp = _setup(feed="primary")
    for mgid, members in JOBS:
        dp.add_group(mgid, members)
    _check_floods(fabric, dp, sw)
    _, hosts = flood(fabric, sw, 0, dp.color(2))
    assert set(hosts.values()) == {1}                  # one tree fed: one copy each
    world = dp.group_trees(2)[0]
    link = next(lk for lk in sorted(world.links) if h.link_level(lk) == 1)
    u, up, d, _ = h.link_ends(link)
    failed = frozenset({frozenset((u, d))})
    _, hosts = flood(fabric, sw, 0, dp.color(2), failed)
    assert len(hosts) < 7                               # before the controller reacts, members behind the cut miss
    dp.port_down(u, up)
    _, hosts = flood(fabric, sw, 0, dp.color(2), failed)
    assert len(hosts) == 7 and set(hosts.values()) == {1}
    _check_consistent(dp, sw)


def test_joins_on_a_broken_tree_stay_on_the_healthy_one():
    fabric, h, sw, dp = _setup()
    dp.add_group(2, range(8))
    link = next(lk for lk in sorted(dp.group_trees(2)[0].links) if h.link_level(lk) == 1)
    u, up, d, _ = h.link_ends(link)
    dp.port_down(u, up)
    dp.join(2, 9)
    dp.leave(2, 3)
    assert dp.fed_planes(2) == (1,)
    _check_consistent(dp, sw)
    _check_floods(fabric, dp, sw, frozenset({frozenset((u, d))}))


def test_single_tree_mode_has_nothing_to_fail_over_to():
    fabric, h, sw, dp = _setup("fattree:k=4", colors=2, dual=False)
    dp.add_group(0, [0, 5, 9, 14])
    _check_floods(fabric, dp, sw)
    for x in (0, 5, 9, 14):
        _, hosts = flood(fabric, sw, x, dp.color(0))
        assert set(hosts.values()) == {1} and len(hosts) == 3
    link = next(lk for lk in sorted(dp.group_trees(0)[0].links) if lk >= h.num_hosts)
    u, up, _, _ = h.link_ends(link)
    n = len(sw.writes)
    stats = dp.port_down(u, up)
    assert stats is not None and stats.groups == (0,) and stats.updates == 0 and len(sw.writes) == n
    assert dp.fed_planes(0) == (0,)


def test_host_addresses_cover_every_host_port():
    fabric = parse_spec(SPEC)
    addrs = host_addresses(hierarchy_for(fabric))
    assert sum(len(v) for v in addrs.values()) == fabric.num_hosts()
    assert addrs["l0_0_0"][0] == (fabric.host(0).mac, fabric.host(0).ip)


def test_bad_input_is_refused_with_the_valid_range():
    fabric = parse_spec(SPEC)
    h = hierarchy_for(fabric)
    with pytest.raises(UserError, match=r"colors=0 .*valid: 1\.\.256"):
        MulticastDataplane(FakeSwitches(), h, 0)
    with pytest.raises(UserError, match=r"colors=300"):
        MulticastDataplane(FakeSwitches(), h, 300)
    with pytest.raises(UserError, match=r"feed 'x' is unknown; valid: both, primary"):
        MulticastDataplane(FakeSwitches(), h, 3, feed="x")
    dp = MulticastDataplane(FakeSwitches(), h, 3)
    with pytest.raises(UserError, match=r"mgid 70000 is out of range; valid: 0\.\.65535"):
        dp.add_group(70000, [0, 1])
    with pytest.raises(UserError, match=r"unknown member 'h9_9_9'"):
        dp.add_group(1, ["h0_0_0", "h9_9_9"])
    with pytest.raises(UserError, match=r"l0_0_0 port 17 is not a wired switch port"):
        dp.port_down("l0_0_0", 17)
    dp.add_group(2, ["h0_0_0", "h1_0_0"])
    with pytest.raises(ValueError, match="not a member of group 2; only members send"):
        dp.predicted_copies("h0_1_0", 2)
    with pytest.raises(TableLimitError, match="exceed the table of C=1"):
        dp.colors = 1
        dp._check_limit("l0_0_0", {TreeKey(0, 1, 0): frozenset({1}), TreeKey(0, 1, 1): frozenset({1})})
