"""Routing state -> P4 table entries."""

from __future__ import annotations

from dcnlab.controller.routing import compute_forwarding, router_for
from dcnlab.controller.rules import ECMP_TABLE, HOST_TABLE, forwarding_updates, node_rules
from dcnlab.controller.runtime import UpdateType
from p4fixtures import p4info
from dcnlab.topos import parse_spec


def test_ecmp_groups_are_shared_and_members_come_first():
    table = router_for(parse_spec("fattree:k=4")).table("a0_0")
    r = node_rules(table)
    # agg a0_0: 4 in-pod hosts down (2 edges), 12 remote hosts over 2 core uplinks
    assert len(r.hosts) == 16
    groups = {dict(e.params)["base"] for e in r.hosts if e.action.endswith("set_ecmp")}
    assert len(r.ecmp) == 2 * len(groups)  # one group per distinct rotation of the 2 uplinks
    ups = r.inserts()
    assert all(u.type is UpdateType.INSERT for u in ups)
    assert [u.entity.table for u in ups[:len(r.ecmp)]] == [ECMP_TABLE] * len(r.ecmp)


def test_no_ecmp_installs_primaries_only():
    table = router_for(parse_spec("fattree:k=4")).table("e1_1")
    r = node_rules(table, ecmp=False)
    assert r.ecmp == [] and all(e.action.endswith("set_port") for e in r.hosts)
    assert {dict(e.params)["port"] for e in r.hosts} <= {0, 1, 2, 3}


def test_every_fabric_compiles_to_valid_protos():
    info = p4info()
    for spec in ("bcube:n=4,k=1", "fattree:k=4", "dragonfly:p=1,a=4,h=2,arrangement=circulant",
                 "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=1"):
        f = parse_spec(spec)
        ups = forwarding_updates(compute_forwarding(router_for(f)))
        assert set(ups) == {n.name for n in f.forwarding_nodes()}
        for us in ups.values():
            hosts = [u for u in us if u.entity.table == HOST_TABLE]
            assert len(hosts) == f.num_hosts()
            for u in us:
                u.to_proto(info)  # raises on any name/width error
