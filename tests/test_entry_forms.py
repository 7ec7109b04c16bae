"""Every form of match value and action parameter that the p4lang tutorials' loader takes
(``utils/p4runtime_lib/helper.py`` and ``convert.encode``) loads unchanged.

``basic_tunnel``'s own solution writes ``"hdr.myTunnel.dst_id": [1]``: ``convert.encode`` unwraps a
one-element list for any value, so an exact field may be ``v`` or ``[v]``, and every value inside an
LPM, ternary or range pair may be wrapped too. Values are ints (negative ones in two's complement),
MAC, IPv4 and IPv6 strings and raw strings of the field's width in bytes; dcnlab also reads number
strings (``"0x0a"``, ``"10"``) as numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcnlab.controller.runtime.entities import TableEntry
from dcnlab.controller.runtime.entry_files import EntryFileError, runtime_json
from dcnlab.controller.runtime.p4info import P4Info

FIXTURES = Path(__file__).parent / "fixtures"
TUNNEL = P4Info.from_file(FIXTURES / "basic_tunnel.p4info.txtpb")

# the shape of basic_tunnel's s1-runtime.json (the solution's): a default action, LPM routes, and
# tunnel entries whose exact key is written as a one-element list
BASIC_TUNNEL_S1 = {
    "target": "bmv2", "p4info": "build/basic_tunnel.p4.p4info.txtpb", "bmv2_json": "build/basic_tunnel.json",
    "table_entries": [
        {"table": "MyIngress.ipv4_lpm", "default_action": True, "action_name": "MyIngress.drop", "action_params": {}},
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.1.1", 32]},
         "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": "08:00:00:00:01:11", "port": 1}},
        {"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.2.2", 32]},
         "action_name": "MyIngress.ipv4_forward", "action_params": {"dstAddr": "08:00:00:00:02:22", "port": 2}},
        {"table": "MyIngress.myTunnel_exact", "match": {"hdr.myTunnel.dst_id": [1]},
         "action_name": "MyIngress.myTunnel_forward", "action_params": {"port": 1}},
        {"table": "MyIngress.myTunnel_exact", "match": {"hdr.myTunnel.dst_id": [2]},
         "action_name": "MyIngress.myTunnel_forward", "action_params": {"port": 2}},
    ],
}

# a program with every match kind, a 128-bit field, @tableonly/@defaultonly actions, a const default
# action and const entries (hand-written; ids arbitrary)
FORMS = P4Info.from_text("""
tables { preamble { id: 1001 name: "F.kinds" }
  match_fields { id: 1 name: "e" bitwidth: 16 match_type: EXACT }
  match_fields { id: 2 name: "t" bitwidth: 8 match_type: TERNARY }
  match_fields { id: 3 name: "r" bitwidth: 16 match_type: RANGE }
  match_fields { id: 4 name: "o" bitwidth: 8 match_type: OPTIONAL }
  action_refs { id: 2001 } action_refs { id: 2002 scope: DEFAULT_ONLY } size: 16 }
tables { preamble { id: 1002 name: "F.v6" }
  match_fields { id: 1 name: "dst" bitwidth: 128 match_type: LPM }
  action_refs { id: 2001 } action_refs { id: 2002 scope: TABLE_ONLY } size: 16 }
tables { preamble { id: 1003 name: "F.fixed" }
  match_fields { id: 1 name: "k" bitwidth: 8 match_type: EXACT }
  action_refs { id: 2001 } const_default_action_id: 2001 is_const_table: true size: 4 }
actions { preamble { id: 2001 name: "F.set" } params { id: 1 name: "v" bitwidth: 32 }
  params { id: 2 name: "mac" bitwidth: 48 } }
actions { preamble { id: 2002 name: "F.nop" } }
""")


def load(tmp_path: Path, data: dict, info: P4Info) -> list:
    p = tmp_path / "s1-runtime.json"
    p.write_text(json.dumps(data))
    return [u.entity for u in runtime_json(p, info).updates]


def test_basic_tunnel_solution_loads_unchanged(tmp_path):
    """Before: ``table_entries[3] (MyIngress.myTunnel_exact): match field 'hdr.myTunnel.dst_id': is a
    exact field and takes one value, got a list``."""
    ents = load(tmp_path, BASIC_TUNNEL_S1, TUNNEL)
    assert ents[0] == TableEntry("MyIngress.ipv4_lpm", (), "MyIngress.drop", (), 0, True)
    assert ents[1].match == (("hdr.ipv4.dstAddr", (0x0A000101, 32)),)
    assert ents[1].params == (("dstAddr", 0x080000000111), ("port", 1))
    assert [e.match for e in ents[3:]] == [(("hdr.myTunnel.dst_id", 1),), (("hdr.myTunnel.dst_id", 2),)]
    assert ents[3].params == (("port", 1),)


def kinds(match: dict | list, params: dict | None = None, **extra) -> dict:
    return {"table_entries": [{"table": "F.kinds", "match": match, "action_name": "F.set",
                               "action_params": params or {"v": 1, "mac": 0}, "priority": 1, **extra}]}


@pytest.mark.parametrize(("match", "want"), [
    ({"e": 7}, {"e": 7}),
    ({"e": [7]}, {"e": 7}),
    ({"e": ["0x0007"]}, {"e": 7}),
    ({"e": "10"}, {"e": 10}),
    ({"e": -1}, {"e": 0xFFFF}),                                   # two's complement, as convert.encodeNum
    ({"e": "\x00\x07"}, {"e": 7}),                                # raw bytes of the field's width
    ({"e": 1, "t": [[0x0A], [0xFE]]}, {"e": 1, "t": (0x0A, 0xFE)}),
    ({"e": 1, "t": ["0x0a", "0xfe"]}, {"e": 1, "t": (0x0A, 0xFE)}),
    ({"e": 1, "r": [[100], [200]]}, {"e": 1, "r": (100, 200)}),
    ({"e": 1, "o": [5]}, {"e": 1, "o": 5}),
    ({"e": 1, "o": 5}, {"e": 1, "o": 5}),
])
def test_match_value_forms(tmp_path, match, want):
    (ent,) = load(tmp_path, kinds(match), FORMS)
    assert dict(ent.match) == want


@pytest.mark.parametrize(("params", "want"), [
    ({"v": [3], "mac": ["aa:bb:cc:dd:ee:ff"]}, {"v": 3, "mac": 0xAABBCCDDEEFF}),
    ({"v": "10.0.0.1", "mac": "0x0a"}, {"v": 0x0A000001, "mac": 10}),
    ({"v": -2, "mac": "\x00\x00\x00\x00\x00\x01"}, {"v": 0xFFFFFFFE, "mac": 1}),
])
def test_action_parameter_forms(tmp_path, params, want):
    (ent,) = load(tmp_path, kinds({"e": 1}, params), FORMS)
    assert dict(ent.params) == want


@pytest.mark.parametrize(("lpm", "want"), [
    (["2001:db8::", 32], (0x20010DB8 << 96, 32)),
    ([["2001:db8::1"], 128], ((0x20010DB8 << 96) + 1, 128)),
    (["::", 0], None),                                           # "don't care": left out
])
def test_ipv6_lpm(tmp_path, lpm, want):
    data = {"table_entries": [{"table": "F.v6", "match": {"dst": lpm}, "action_name": "F.set",
                               "action_params": {"v": 1, "mac": 2}}]}
    (ent,) = load(tmp_path, data, FORMS)
    assert ent.match == ((("dst", want),) if want else ())


@pytest.mark.parametrize(("data", "words"), [
    (kinds({"e": [1, 2]}), ["match field 'e': is an exact field and takes a value or [value], got a list of 2"]),
    (kinds({"e": [[1]]}), ["match field 'e': value is a list of 1 item"]),
    (kinds({"e": "\x00\x07\x00"}), ["'\\x00\\x07\\x00' is not an integer, 0x hex, IPv4, IPv6 or MAC address"]),
    (kinds({"e": -40000}), ["value=-40000 does not fit in 16 bits"]),
    (kinds({"t": [1, 1]}), ["exact match field 'e' is missing"]),
    (kinds({"e": "::1"}), ["value '::1' is an IPv6 address, for a 128-bit field; this one has 16 bits"]),
    (kinds([]), ["match: expected an object of field -> value, got a list of 0 item(s)"]),
    (kinds({"e": 1}, priority=None), ["needs a priority"]),
    (kinds({"e": 1}, action_name="F.nop", action_params={}), ["action F.nop is @defaultonly in table F.kinds"]),
    ({"table_entries": [{"table": "F.v6", "default_action": True, "action_name": "F.nop"}]},
     ["action F.nop is @tableonly in table F.v6: not a default action"]),
    ({"table_entries": [{"table": "F.v6", "match": {"dst": ["2001:db8::1", 32]}, "action_name": "F.nop"}]},
     ["bits set past the prefix length 32", "valid: 2001:db8::/32"]),
    ({"table_entries": [{"table": "F.fixed", "default_action": True, "action_name": "F.set",
                         "action_params": {"v": 1, "mac": 2}}]}, ["table F.fixed has a const default action"]),
    ({"table_entries": [{"table": "F.fixed", "match": {"k": 1}, "action_name": "F.set",
                         "action_params": {"v": 1, "mac": 2}}]}, ["table F.fixed has const entries"]),
])
def test_forms_the_program_refuses(tmp_path, data, words):
    p = tmp_path / "s1-runtime.json"
    p.write_text(json.dumps(data))
    with pytest.raises(EntryFileError) as e:
        runtime_json(p, FORMS)
    msg = str(e.value)
    assert msg.startswith(f"{p}: table_entries[0] (F.") and "\n" not in msg and all(w in msg for w in words), msg
