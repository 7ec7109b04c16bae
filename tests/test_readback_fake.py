"""Reading every switch's tables back and comparing them with the routes (fake P4Runtime servers)."""

from __future__ import annotations

import pytest
from p4fixtures import p4info, pipeline

from dcnlab.controller.coverage import routed_rules
from dcnlab.controller.rules import ECMP_TABLE, HOST_TABLE, SET_PORT
from dcnlab.controller.runtime import Controller, SwitchTarget, TableEntry
from dcnlab.controller.runtime.readback import Canonical, read_back
from dcnlab.topos import parse_spec

SWITCHES = ["e0_0", "a0_0", "c0", "e3_1"]


@pytest.fixture
def routed(p4runtime_servers):
    """Four switches of fattree:k=4 on fake servers, with the routes dcnlab writes."""
    servers = p4runtime_servers(len(SWITCHES))
    rules = {n: r for n, r in routed_rules(parse_spec("fattree:k=4")).items() if n in SWITCHES}
    ctl = Controller(pipeline(), [SwitchTarget(n, i, s.addr) for i, (n, s) in enumerate(zip(SWITCHES, servers))])
    ctl.start()
    ctl.write({n: r.inserts() for n, r in rules.items()})
    yield ctl, {n: r.hosts + r.ecmp for n, r in rules.items()}
    ctl.close()


def test_a_faithful_fabric_reads_back_without_mismatches(routed):
    ctl, expected = routed
    rb = read_back(ctl, expected)
    assert rb.ok and rb.mismatches == []
    assert set(rb.read) == set(SWITCHES)
    assert rb.entries_read == rb.expected == sum(len(v) for v in expected.values())
    assert {e.table for es in rb.read.values() for e in es} == {HOST_TABLE, ECMP_TABLE}
    assert "0 missing, 0 extra, 0 different" in rb.summary()


def test_missing_extra_and_different_entries_are_named(routed):
    ctl, expected = routed
    gone = next(e for e in expected["a0_0"] if e.table == HOST_TABLE)
    member = next(e for e in expected["e0_0"] if e.table == ECMP_TABLE)
    changed = TableEntry(member.table, member.match, SET_PORT, {"port": 0})
    stray = TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": "10.9.9.9"}, SET_PORT, {"port": 1})
    ctl.write({"a0_0": [-gone], "e0_0": [~changed], "c0": [+stray]})
    rb = read_back(ctl, expected)
    got = sorted((m.switch, m.kind) for m in rb.mismatches)
    assert got == [("a0_0", "missing"), ("c0", "extra"), ("e0_0", "different")]
    text = {m.kind: str(m) for m in rb.mismatches}
    assert text["missing"] == f"a0_0: missing {Canonical(p4info())(gone)}"
    assert "10.9.9.9" not in text["extra"] and str(0x0A090909) in text["extra"]     # canonical: an integer
    assert "expected" in text["different"] and "port=0" in text["different"]
    assert not rb.ok and "1 missing, 1 extra, 1 different" in rb.summary()


def test_entries_outside_the_tables_read_are_not_extra(routed):
    ctl, expected = routed
    rb = read_back(ctl, {n: [e for e in es if e.table == HOST_TABLE] for n, es in expected.items()},
                   tables=[HOST_TABLE])
    assert rb.ok and all(e.table == HOST_TABLE for es in rb.read.values() for e in es)


def test_canonical_form_equates_address_notations():
    c = Canonical(p4info())
    a = TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": "10.0.0.1"}, SET_PORT, {"port": 3})
    b = TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": 0x0A000001}, SET_PORT, {"port": 3})
    assert c(a) == c(b) and c(a).key() == c(b).key()
