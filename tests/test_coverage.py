"""The ATPG-style probe plan (dcnlab.controller.coverage): BMv2's hash, exact paths, greedy set cover."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dcnlab.controller.coverage import (
    PROBE_PORT,
    CoverCheck,
    RuleModel,
    _ports_hash,
    _prefix,
    bmv2_crc16,
    ecmp_hash,
    greedy_cover,
    routed_rules,
)
from dcnlab.controller.rules import ECMP_FIELD, ECMP_TABLE, SET_PORT, NodeRules
from dcnlab.controller.runtime.entities import TableEntry
from dcnlab.topos import parse_spec


# -- BMv2's crc16 ------------------------------------------------------------------------------------
def _bmv2_reference(buf: bytes) -> int:
    """bm_sim/calculations.cpp's crc16, transcribed: table of the MSB-first polynomial 0x8005, input
    bytes and the remainder reflected (an implementation independent of the module's)."""
    def reflect(v: int, bits: int) -> int:
        return int(f"{v:0{bits}b}"[::-1], 2)

    table = []
    for dividend in range(256):
        rem = dividend << 8
        for _ in range(8):
            rem = ((rem << 1) ^ 0x8005) & 0xFFFF if rem & 0x8000 else (rem << 1) & 0xFFFF
        table.append(rem)
    rem = 0
    for b in buf:
        data = reflect(b, 8) ^ (rem >> 8)
        rem = table[data] ^ ((rem << 8) & 0xFFFF)
    return reflect(rem, 16)


def test_crc16_is_bmv2s_crc16():
    assert bmv2_crc16(b"123456789") == 0xBB3D          # CRC-16/ARC check value (BMv2's crc16)
    assert bmv2_crc16(b"") == 0
    rng = random.Random(1)
    for n in (1, 2, 13, 64):
        for _ in range(50):
            buf = bytes(rng.randrange(256) for _ in range(n))
            assert bmv2_crc16(buf) == _bmv2_reference(buf)


def test_ecmp_hash_packs_the_five_tuple_as_forwarding_p4():
    # srcAddr, dstAddr (32 bits each), protocol (8), srcPort, dstPort (16 each): 13 bytes, no padding
    buf = bytes([10, 0, 0, 1, 10, 0, 0, 7, 17]) + (20001).to_bytes(2, "big") + (9999).to_bytes(2, "big")
    assert ecmp_hash("10.0.0.1", "10.0.0.7", 20001, 9999) == _bmv2_reference(buf)


def test_every_hash_value_has_exactly_one_source_port():
    pre = _prefix(0x0A000001, 0x0A000002)
    assert len({_ports_hash(pre, sp, PROBE_PORT) for sp in range(1 << 16)}) == 1 << 16


# -- the greedy set cover ---------------------------------------------------------------------------
def test_greedy_cover_takes_the_biggest_set_first_and_names_the_uncoverable():
    chosen, unc = greedy_cover(7, [(0, 1), (1, 2, 3, 4), (4, 5), (0,), (5,)])
    assert chosen[0] == 1 and set(chosen) == {1, 0, 2} and unc == [6]


@given(st.lists(st.lists(st.integers(0, 30), max_size=6), max_size=25))
def test_greedy_cover_covers_whatever_some_set_covers(sets):
    chosen, unc = greedy_cover(31, sets)
    got = {e for i in chosen for e in sets[i]}
    assert got == {e for s in sets for e in s} and set(unc) == set(range(31)) - got
    assert len(chosen) == len(set(chosen))


# -- plans on dcnlab's fabrics ---------------------------------------------------------------------------
SMALL = ["fattree:k=4", "fattree:k=6", "bcube:n=2,k=1", "bcube:n=3,k=1", "bcube:n=4,k=1", "bcube:n=2,k=2",
         "dragonfly:p=1,a=4,h=2", "dragonfly:p=2,a=4,h=2", "midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=1"]


def _brute_force(model: RuleModel, sports: int) -> set[int]:
    """Entries some probe exercises, over every host pair and ``sports`` source ports (walks only)."""
    out: set[int] = set()
    for s in model.hosts:
        for d in model.hosts:
            if s.name != d.name:
                for sp in range(20000, 20000 + sports):
                    w = model.walk(s.name, d.name, sp)
                    if w.delivered:
                        out.update(w.entries)
    return out


def _check(model: RuleModel, brute_sports: int = 0) -> None:
    plan = model.plan()
    chk = CoverCheck.of(model, plan)
    assert not chk.undelivered, chk.undelivered[:3]           # every probe arrives on its predicted path
    unc = set(plan.uncoverable)
    assert chk.exercised == set(range(len(model.rules))) - unc  # every coverable entry is exercised
    if brute_sports:
        assert _brute_force(model, brute_sports) == chk.exercised
    # ECMP members may need a pair probed with several source ports, so probes can exceed the pairs
    # (58 on 56 pairs: midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=1, ECMP, two host entries dropped);
    # the pairs probed never do
    assert len({(p.src, p.dst) for p in plan.probes}) <= plan.all_pairs


@pytest.mark.parametrize("spec", SMALL)
def test_plan_exercises_every_entry_some_probe_can(spec):
    _check(RuleModel.from_routes(parse_spec(spec)), brute_sports=24 if "k=6" not in spec else 0)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=st.sampled_from(SMALL + ["fattree:k=8", "bcube:n=4,k=2"]), ecmp=st.booleans(), seed=st.integers(0, 999),
       orphans=st.integers(0, 3), drops=st.integers(0, 3))
def test_generated_rule_sets_are_covered_and_the_rest_named(spec, ecmp, seed, orphans, drops):
    """Any rule set (routes with or without ECMP, ECMP members no group uses, host entries removed):
    every entry some delivered path crosses is exercised; the others are reported uncoverable."""
    f = parse_spec(spec)
    rules = routed_rules(f, ecmp)
    rng = random.Random(seed)
    names = sorted(rules)
    for _ in range(orphans):        # a member no host entry points at
        sw = rng.choice(names)
        r = rules[sw]
        rules[sw] = NodeRules(r.hosts, r.ecmp + [TableEntry(ECMP_TABLE, {ECMP_FIELD: 900 + len(r.ecmp)}, SET_PORT,
                                                             {"port": 0})])
    for _ in range(drops):          # a host entry gone: the paths through it end there
        sw = rng.choice(names)
        r = rules[sw]
        if r.hosts:
            rules[sw] = NodeRules([e for i, e in enumerate(r.hosts) if i != rng.randrange(len(r.hosts))], r.ecmp)
    model = RuleModel(f, rules)
    _check(model, brute_sports=16 if f.num_hosts() <= 16 else 0)
    plan = model.plan()
    orphan_ids = {i for i, r in enumerate(model.rules) if r.entry.table == ECMP_TABLE
                  and dict(r.entry.match)[ECMP_FIELD] >= 900}
    assert orphan_ids <= set(plan.uncoverable)


@pytest.mark.parametrize("k", [4, 6, 8])
def test_fattree_plan_meets_the_lower_bound(k):
    """An edge switch's entry for d is crossed only by probes from behind it: at least k²/2 − 1 probes
    per destination. The greedy cover needs no more (112, 918, 3,968 against all-pairs' 240, 2,862,
    16,256)."""
    f = parse_spec(f"fattree:k={k}")
    plan = RuleModel.from_routes(f).plan()
    assert plan.uncoverable == []
    assert len(plan.probes) == (k * k // 2 - 1) * f.num_hosts()
    assert plan.all_pairs == f.num_hosts() * (f.num_hosts() - 1)


def test_correlated_hashes_leave_entries_no_probe_reaches():
    """Every hop hashes the same five-tuple: on the midplane tree all levels pick the same member index
    of identically rotated groups, so some top-level entries are on no path (ECMP polarisation);
    without ECMP a fat-tree's cores see only the primaries' destinations."""
    m = RuleModel.from_routes(parse_spec("midplane:q=2,m=2,p=2,k=2,w=2,cns=4,terminals=1"))
    unc = [m.rules[i] for i in m.plan().uncoverable]
    assert any(r.switch.startswith("l3") for r in unc)
    nm = RuleModel.from_routes(parse_spec("fattree:k=4"), ecmp=False)
    unc = [nm.rules[i] for i in nm.plan().uncoverable]
    assert unc and all(r.switch.startswith("c") for r in unc)
    assert "c" in str(unc[0]) and "ipv4_host" in str(unc[0])


def test_walk_follows_the_hash_and_reports_a_hole():
    f = parse_spec("fattree:k=4")
    m = RuleModel.from_routes(f)
    w = m.walk("h0_0_0", "h3_1_1", 20000)
    assert w.delivered and len(w.nodes) == 5 and w.nodes[0] == "e0_0" and w.nodes[-1] == "e3_1"
    # the edge and the aggregation switch pick member h mod 2 of their group: the same index
    h = ecmp_hash("10.0.0.1", m._ip["h3_1_1"], 20000)
    members = [m.rules[e].entry for e in w.entries if m.rules[e].entry.table == ECMP_TABLE]
    assert len(members) == 2 and all(dict(e.match)[ECMP_FIELD] % 2 == h % 2 for e in members)
    core = w.nodes[2]
    rules = routed_rules(f)
    hole = rules[core]
    rules[core] = NodeRules([e for e in hole.hosts if dict(e.match)["hdr.ipv4.dstAddr"] != "10.0.0.16"], hole.ecmp)
    m2 = RuleModel(f, rules)
    w2 = m2.walk("h0_0_0", "h3_1_1", 20000)
    assert not w2.delivered and w2.reason == f"{core} has no entry for h3_1_1" and w2.nodes == w.nodes[:3]


def test_probes_reuse_source_ports():
    """Each source needs a socket per source port: the plan reuses them (k=8: one or two per host)."""
    plan = RuleModel.from_routes(parse_spec("fattree:k=8")).plan()
    ports: dict[str, set[int]] = {}
    for p in plan.probes:
        ports.setdefault(p.src, set()).add(p.sport)
    assert sum(map(len, ports.values())) <= 2 * len(ports)


def test_alternatives_localise_around_suspects():
    m = RuleModel.from_routes(parse_spec("fattree:k=4"))
    plan = m.plan()
    lost = plan.probes[0]
    alts = m.alternatives(lost.entries, exclude={lost.path})
    assert alts and all(p.path != lost.path for p in alts)
    for p in alts:                    # each alternative crosses as few of the suspects as it can
        assert len(set(p.entries) & set(lost.entries)) < len(lost.entries)
        assert m.walk(p.src, p.dst, p.sport).entries == p.entries
