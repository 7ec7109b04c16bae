"""A user's entries: the tutorials' runtime JSON and simple_switch_CLI command files.

The program is ``examples/programs/router.p4``; its P4Info is committed (tests/fixtures) so that these
tests run without p4c (``test_p4c.py`` checks it against p4c's output).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcnlab.controller.runtime.entities import CloneSession, MulticastGroup, TableEntry
from dcnlab.controller.runtime.entry_files import EntryFileError, cli_commands, load_entries, runtime_json
from dcnlab.controller.runtime.p4info import P4Info

INFO = P4Info.from_file(Path(__file__).parent / "fixtures" / "router.p4info.txtpb")

RUNTIME = {
    "target": "bmv2", "p4info": "build/router.p4.p4info.txtpb", "bmv2_json": "build/router.json",
    "table_entries": [
        {"table": "RIngress.routes", "default_action": True, "action_name": "RIngress.drop", "action_params": {}},
        {"table": "RIngress.routes", "match": {"hdr.ipv4.dst": ["10.0.1.1", 32]}, "action_name": "RIngress.forward",
         "action_params": {"dst_mac": "08:00:00:00:01:11", "src_mac": "00:00:00:00:01:00", "port": 1}},
        {"table": "RIngress.acl", "match": {"hdr.ipv4.src": ["10.0.9.0", "0xffffff00"], "hdr.ipv4.proto": [17, 255]},
         "action_name": "RIngress.drop", "action_params": {}, "priority": 10},
        {"table": "RIngress.udp_ports", "match": {"hdr.udp.dport": [5000, 5099]}, "action_name": "RIngress.count_port",
         "action_params": {"slot": 3}, "priority": 1},
    ],
    "multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"egress_port": 1, "instance": 1},
                                                                      {"egress_port": 2, "instance": 1}]}],
    "clone_session_entries": [{"clone_session_id": 5, "replicas": [{"egress_port": 3, "instance": 0}]}],
}


def write(tmp_path: Path, name: str, data) -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def test_runtime_json(tmp_path):
    got = runtime_json(write(tmp_path, "s1-runtime.json", RUNTIME), INFO)
    ents = [u.entity for u in got.updates]
    assert ents[0] == TableEntry("RIngress.routes", (), "RIngress.drop", (), 0, True)
    assert ents[1].match == (("hdr.ipv4.dst", (0x0A000101, 32)),) and ents[1].action == "RIngress.forward"
    assert ents[1].params == (("dst_mac", 0x080000000111), ("port", 1), ("src_mac", 0x000000000100))
    assert ents[2].match == (("hdr.ipv4.proto", (17, 255)), ("hdr.ipv4.src", (0x0A000900, 0xFFFFFF00)))
    assert ents[2].priority == 10 and ents[3].priority == 1
    assert ents[4] == MulticastGroup(1, ((1, 1), (2, 1))) and ents[5] == CloneSession(5, ((3, 0),))
    assert got.thrift == []


def test_cli_commands(tmp_path):
    text = """# s1
table_set_default RIngress.routes RIngress.drop
table_add RIngress.routes RIngress.forward 10.0.1.1/32 => 08:00:00:00:01:11 00:00:00:00:01:00 1
table_add RIngress.acl RIngress.drop 10.0.9.0&&&0xffffff00 17&&&0xff => 7
table_add RIngress.udp_ports RIngress.count_port 5000->5099 => 0x3 1
mc_mgrp_create 1
mc_node_create 0 1 2
mc_node_create 1 3
mc_node_associate 1 0
mc_node_associate 1 1
mirroring_add 5 3
register_write RIngress.port_hits 0 0
"""
    got = cli_commands(write(tmp_path, "s1-commands.txt", text), INFO)
    ents = [u.entity for u in got.updates]
    assert ents[0].is_default and ents[1].match == (("hdr.ipv4.dst", (0x0A000101, 32)),)
    assert ents[2].priority == 2**31 - 1 - 7 and ents[3].params == (("slot", 3),)   # BMv2's CLI: the lower wins
    assert CloneSession(5, ((3, 0),)) in ents
    assert ents[-1] == MulticastGroup(1, ((1, 0), (2, 0), (3, 1)))
    assert got.thrift == ["register_write RIngress.port_hits 0 0"]
    assert load_entries(tmp_path / "s1-commands.txt", INFO).updates == got.updates


def bad_json(i: int, **change):
    entry = {**RUNTIME["table_entries"][i], **change}
    return {"table_entries": [entry]}


@pytest.mark.parametrize(("data", "words"), [
    (bad_json(1, table="RIngress.nope"), ["table_entries[0]: unknown table 'RIngress.nope'; known: RIngress.acl"]),
    (bad_json(1, action_name="RIngress.count_port"), ["action RIngress.count_port is not an action of table RIngress.routes"]),
    (bad_json(1, match={"hdr.ipv4.src": ["10.0.1.1", 32]}), ["match field 'hdr.ipv4.src' is not a key of RIngress.routes"]),
    (bad_json(1, match={"hdr.ipv4.dst": "10.0.1.1"}), ["match field 'hdr.ipv4.dst'", "lpm field and takes [value, prefix_len]"]),
    (bad_json(1, match={"hdr.ipv4.dst": ["10.0.1.1", 33]}), ["prefix length 33 out of range 0..32"]),
    (bad_json(1, action_params={"dst_mac": "08:00:00:00:01:11", "src_mac": "00:00:00:00:01:00", "port": 512}),
     ["RIngress.forward.port=512 does not fit in 9 bits; valid: 0..511"]),
    (bad_json(1, action_params={"dst_mac": "08:00:00:00:01:11", "port": 1}), ["needs parameter 'src_mac'"]),
    (bad_json(1, action_params={"dst_mac": "x", "src_mac": "00:00:00:00:01:00", "port": 1}), ["'x' is not an integer, 0x hex, IPv4, IPv6 or MAC address"]),
    ({"multicast_group_entries": [{"multicast_group_id": 40000, "replicas": []}]},
     ["multicast_group_entries[0]: multicast group id 40000 out of range; valid: 1..32767"]),
    ({"tables": []}, ["unknown key 'tables'; valid: "]),
])
def test_bad_runtime_json_names_file_entry_and_field(tmp_path, data, words):
    path = write(tmp_path, "s1-runtime.json", data)
    with pytest.raises(EntryFileError) as e:
        runtime_json(path, INFO)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg and all(w in msg for w in words), msg


@pytest.mark.parametrize(("line", "words"), [
    ("table_add RIngress.routes RIngress.forward 10.0.1.1/32 => 1 2", ["line 1 (table_add)", "takes 3 parameter(s)"]),
    ("table_add RIngress.routes RIngress.forward 10.0.1.1 => 1 2 3", ["not VALUE/PREFIX_LEN"]),
    ("table_add RIngress.acl RIngress.drop 1 2 => ", ["'hdr.ipv4.src' (ternary)", "not VALUE&&&MASK"]),
    ("table_add RIngress.routes RIngress.forward 10.0.1.1/32 1 2 3", ["missing '=>'"]),
    ("table_add RIngress.nope RIngress.drop 1 =>", ["unknown table 'RIngress.nope'"]),
    ("table_dump RIngress.routes", ["line 1: unknown command 'table_dump'; valid: table_add"]),
    ("mc_node_associate 1 0", ["group 1 was not created"]),
])
def test_bad_cli_commands_name_file_line_and_field(tmp_path, line, words):
    path = write(tmp_path, "s1-commands.txt", line + "\n")
    with pytest.raises(EntryFileError) as e:
        cli_commands(path, INFO)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg and all(w in msg for w in words), msg
