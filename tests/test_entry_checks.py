"""A hostile user's entry files: every one is refused with ONE line
that names the file, the entry and the field and says what is valid, before anything is written;
never a traceback, never a line of a file that is not the user's, never a long line quoted back.

The program is ``examples/programs/router.p4`` (P4Info committed in tests/fixtures): ``routes`` is LPM
(size 1024), ``acl`` ternary (256), ``udp_ports`` range (64), ``port_hits`` a bit<32> register of 16.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcnlab.controller.runtime.entry_files import Entries, EntryFileError, cli_commands, load_entries, runtime_json
from dcnlab.controller.runtime.p4info import P4Info

INFO = P4Info.from_file(Path(__file__).parent / "fixtures" / "router.p4info.txtpb")
FWD = {"dst_mac": "08:00:00:00:01:11", "src_mac": "00:00:00:00:01:00", "port": 1}
MAX_MESSAGE = 400


def route(dst="10.0.1.1", plen=32, **change) -> dict:
    return {"table": "RIngress.routes", "match": {"hdr.ipv4.dst": [dst, plen]}, "action_name": "RIngress.forward",
            "action_params": dict(FWD), **change}


def udp(low=5000, high=5099, **change) -> dict:
    return {"table": "RIngress.udp_ports", "match": {"hdr.udp.dport": [low, high]},
            "action_name": "RIngress.count_port", "action_params": {"slot": 3}, "priority": 1, **change}


def refused(path: Path, *words: str) -> str:
    with pytest.raises(EntryFileError) as e:
        load_entries(path, INFO)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg and len(msg) < MAX_MESSAGE, msg
    assert msg.isprintable(), repr(msg)
    assert all(w in msg for w in words), msg
    return msg


def json_file(tmp_path: Path, text: str | dict, name: str = "s1-runtime.json") -> Path:
    p = tmp_path / name
    p.write_text(text if isinstance(text, str) else json.dumps(text))
    return p


def cli_file(tmp_path: Path, text: str, name: str = "s1-commands.txt") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# -- item 11: numbers Python will not take, deep nesting -------------------------------------------
BIG = "9" * 5000
ROUTE_TEXT = ('{"table_entries": [{"table": "RIngress.routes", "match": {"hdr.ipv4.dst": [%s, %s]}, '
              '"action_name": "RIngress.forward", "action_params": {"dst_mac": %s, "src_mac": 0, "port": %s}}]}')


@pytest.mark.parametrize(("text", "words"), [
    (ROUTE_TEXT % ("Infinity", 32, 1, 1), ["table_entries[0] (RIngress.routes): match field 'hdr.ipv4.dst'",
                                          "value is Infinity; valid: an integer"]),
    (ROUTE_TEXT % ("NaN", 32, 1, 1), ["match field 'hdr.ipv4.dst'", "value is NaN"]),
    (ROUTE_TEXT % ("-Infinity", 32, 1, 1), ["value is -Infinity"]),
    (ROUTE_TEXT % ("167772161.0", 32, 1, 1), ["value is the number 167772161.0"]),
    (ROUTE_TEXT % ("true", 32, 1, 1), ["value is true"]),
    (ROUTE_TEXT % (BIG, 32, 1, 1), ["match field 'hdr.ipv4.dst'", "a 5000-digit number"]),
    (ROUTE_TEXT % ("1" + "0" * 900, 32, 1, 1), ["match field 'hdr.ipv4.dst'", "does not fit in 32 bits"]),
    (ROUTE_TEXT % ('"10.0.1.1"', "Infinity", 1, 1), ["prefix length Infinity is not an integer 0..32"]),
    (ROUTE_TEXT % ('"10.0.1.1"', "1e400", 1, 1), ["prefix length the number 1e400 is not an integer 0..32"]),
    (ROUTE_TEXT % ('"10.0.1.1"', 32, "1e400", 1), ["RIngress.forward.dst_mac is the number 1e400"]),
    (ROUTE_TEXT % ('"10.0.1.1"', 32, 1, BIG), ["RIngress.forward.port is a 5000-digit number"]),
    ('{"multicast_group_entries": [{"multicast_group_id": Infinity, "replicas": []}]}',
     ["multicast_group_entries[0]: multicast_group_id Infinity is not an integer; valid: 1..32767"]),
    ('{"multicast_group_entries": [{"multicast_group_id": 1.5, "replicas": []}]}', ["multicast_group_id the number 1.5"]),
    ('{"multicast_group_entries": [{"multicast_group_id": true, "replicas": []}]}', ["multicast_group_id true"]),
    ('{"multicast_group_entries": [{"multicast_group_id": %s, "replicas": []}]}' % BIG, ["a 5000-digit number"]),
    ('{"multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"egress_port": NaN}]}]}',
     ["replicas[0]: egress_port NaN is not an integer 0..511"]),
    ('{"clone_session_entries": [{"clone_session_id": 5, "replicas": [], "packet_length_bytes": -Infinity}]}',
     ["clone_session_entries[0]: packet_length_bytes -Infinity"]),
    ('{"table_entries": [%s]}' % json.dumps(udp(priority=7)).replace('"priority": 7', '"priority": NaN'),
     ["priority NaN is not an integer"]),
])
def test_numbers_python_will_not_take_are_one_line_naming_entry_and_field(tmp_path, text, words):
    """Before: OverflowError (cannot convert float infinity to integer), ValueError (4300 digits) or an
    int() of a float that silently truncated."""
    refused(json_file(tmp_path, text), *words)


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"table_entries": [{"table": "RIngress.routes", "match": {"hdr.ipv4.dst": ' + "[" * 50_000 + "]" * 50_000 + "}}]}",
])
def test_deep_nesting_is_one_line(tmp_path, text):
    refused(json_file(tmp_path, text), "nested too deeply")


def test_nesting_that_json_takes_is_described_not_quoted(tmp_path):
    """A value nested 900 deep parses; the message describes it instead of walking it (quoting it
    would recurse again)."""
    deep = "[" * 900 + "1" + "]" * 900
    refused(json_file(tmp_path, ROUTE_TEXT % (deep, 32, 1, 1)), "match field 'hdr.ipv4.dst'", "a list of 1 item")


def test_a_key_given_twice_is_refused(tmp_path):
    text = '{"table_entries": [{"table": "RIngress.routes", "table": "RIngress.acl"}]}'
    refused(json_file(tmp_path, text), "key 'table' given twice in one object")


# -- item 12: quote at most the offending token, escaped and cut short ------------------------------
SHADOW = ("root:$6$Qd8HcVb2$y8Pq1W0sECRETHASHm0reHASHtextHASHtextHASHtextHASHtextHASHtextHASHtextHASHtex:19700:0:99999:7:::\n"
          "daemon:*:19700:0:99999:7:::\n")
ENVIRON = "PATH=/usr/bin\0AWS_SECRET_ACCESS_KEY=hunter2hunter2\0TERM=\x1b[2J\0HOME=/root\0"


@pytest.mark.parametrize(("text", "secret"), [
    (SHADOW, "SECRETHASH"), (ENVIRON, "hunter2"), ("x" * 3000 + " hunter2\n", "hunter2"),
    ("\x1b[2J\x1b[H hunter2\n", "hunter2"),
])
def test_a_file_that_is_not_a_command_file_is_not_echoed(tmp_path, text, secret):
    """Before: ``line 1: unknown command; ...`` after the whole line, i.e. root's password hash or the
    whole environment, control characters and all."""
    msg = refused(cli_file(tmp_path, text), "line 1: not a command; valid: table_add")
    assert secret not in msg and "$6$" not in msg


@pytest.mark.parametrize(("line", "words"), [
    ("table_add RIngress.routes\x1b[2J RIngress.drop 10.0.0.0/8 =>", ["unknown table 'RIngress.routes\\x1b[2J'"]),
    ("table_add " + "t" * 5000 + " RIngress.drop 10.0.0.0/8 =>", ["unknown table 'tttt", "...", "(5000 characters)"]),
    ("table_add RIngress.routes RIngress.drop " + "1" * 5000 + "/8 =>", ["match field 'hdr.ipv4.dst' (lpm)", "(5000 characters)"]),
    ("register_write RIngress.port_hits 1 \x07" + "9" * 900, ["VALUE for RIngress.port_hits (bit<32>) '\\x07999"]),
    ("mc_mgrp_create \x00" + "1" * 900, ["MGID '\\x00111"]),
])
def test_quoted_tokens_are_escaped_and_cut_short(tmp_path, line, words):
    refused(cli_file(tmp_path, line + "\n"), *words)


def test_json_names_are_escaped_and_cut_short(tmp_path):
    data = {"table_entries": [route(match={"\x1b]0;pwned\x07" + "f" * 4000: 1})]}
    msg = refused(json_file(tmp_path, data), "match field '\\x1b]0;pwned\\x07fff", "(4010 characters)")
    assert "\x1b" not in msg


# -- item 14: what PI (or BMv2) refuses is refused before anything is written -----------------------
@pytest.mark.parametrize(("data", "words"), [
    ({"table_entries": [route("10.0.1.1", 24)]},
     ["table_entries[0] (RIngress.routes): match field 'hdr.ipv4.dst'", "bits set past the prefix length 24",
      "valid: 10.0.1.0/24"]),
    ({"table_entries": [route(0x0A000101, 8)]}, ["bits set past the prefix length 8", "valid: 0xa000000/8"]),
    ({"table_entries": [route(), route("10.0.2.0", 24), route()]},
     ["table_entries[2] (RIngress.routes): the same entry as ", "s1-runtime.json: table_entries[0] (RIngress.routes)",
      "ALREADY_EXISTS"]),
    ({"table_entries": [udp(5099, 5000)]}, ["table_entries[0] (RIngress.udp_ports)", "range low 5099 is greater than high 5000"]),
    ({"table_entries": [udp(p, p) for p in range(65)]},
     ["table_entries[64] (RIngress.udp_ports): entry 65 of table RIngress.udp_ports, which holds at most 64"]),
    ({"table_entries": [{"table": "RIngress.acl", "match": {"hdr.ipv4.src": ["10.0.9.1", "255.255.255.0"]},
                         "action_name": "RIngress.drop", "priority": 3}]},
     ["match field 'hdr.ipv4.src'", "has bits outside the mask 0xffffff00", "valid: value 0xa000900"]),
    ({"table_entries": [udp(priority=None)]}, ["RIngress.udp_ports has ternary, range or optional fields",
                                               "needs a priority; valid: 1..2147483647"]),
    ({"table_entries": [udp(priority=0)]}, ["priority 0 for table RIngress.udp_ports"]),
    ({"table_entries": [route(priority=5)]}, ["priority 5 for table RIngress.routes, which has only exact and LPM fields"]),
    ({"table_entries": [{"table": "RIngress.acl", "default_action": True, "action_name": "RIngress.drop",
                         "priority": 2}]}, ["a default action takes no priority"]),
    ({"table_entries": [{"table": "RIngress.routes", "default_action": True, "action_name": "RIngress.drop",
                         "match": {"hdr.ipv4.dst": ["10.0.0.0", 8]}}]}, ["a default action takes no match"]),
    ({"multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"egress_port": 1}, {"egress_port": 1}]}]},
     ["replica (egress_port 1, instance 0) is listed twice"]),
    ({"multicast_group_entries": [{"multicast_group_id": 1, "replicas": [{"egress_port": 512}]}]},
     ["egress_port 512 is not an integer 0..511"]),
    ({"multicast_group_entries": [{"multicast_group_id": 2, "replicas": []}, {"multicast_group_id": 2, "replicas": []}]},
     ["multicast_group_entries[1]: the same entry as", "multicast_group_entries[0] (same multicast group 2"]),
    ({"clone_session_entries": [{"clone_session_id": 512, "replicas": []}]}, ["clone_session_id 512 is not an integer 1..511"]),
])
def test_runtime_json_refuses_what_pi_refuses(tmp_path, data, words):
    refused(json_file(tmp_path, data), *words)


@pytest.mark.parametrize(("text", "words"), [
    ("table_add RIngress.routes RIngress.drop 10.0.1.1/24 =>", ["line 1 (table_add): match field 'hdr.ipv4.dst' (lpm)",
                                                                 "bits set past the prefix length 24", "valid: 10.0.1.0/24"]),
    ("table_add RIngress.routes RIngress.drop 10.0.1.0/24 =>\n#\ntable_add RIngress.routes RIngress.drop 10.0.1.0/24 =>",
     ["line 3 (table_add): the same entry as ", "s1-commands.txt: line 1 (table_add)", "ALREADY_EXISTS"]),
    ("table_add RIngress.udp_ports NoAction 5099->5000 => 1", ["range low 5099 is greater than high 5000"]),
    ("".join(f"table_add RIngress.udp_ports NoAction {p}->{p} => 1\n" for p in range(65)),
     ["line 65 (table_add): entry 65 of table RIngress.udp_ports, which holds at most 64"]),
    ("table_add RIngress.acl RIngress.drop 10.0.9.1&&&255.255.255.0 17&&&0xff => 1", ["has bits outside the mask"]),
    ("table_add RIngress.acl RIngress.drop 10.0.9.0&&&255.255.255.0 17&&&0xff =>",
     ["takes 0 parameter(s) (none) and a priority, got 0"]),
    ("table_add RIngress.routes RIngress.drop 10.0.9.0/24 => 5", ["table RIngress.routes has only exact and LPM fields: no priority"]),
    ("table_add RIngress.acl RIngress.drop 10.0.9.0&&&255.255.255.0 17&&&0xff => -1",
     ["PRIORITY (BMv2's: the lower wins) '-1' is not an integer 0..2147483646"]),
    ("register_write RIngress.port_hits 0 banana", ["line 1 (register_write): VALUE for RIngress.port_hits (bit<32>) 'banana'",
                                                    "is not an integer"]),
    ("register_write RIngress.port_hits 16 1", ["index 16 out of range for RIngress.port_hits; valid: 0..15"]),
    ("register_write RIngress.port_hits 0 4294967296", ["does not fit in 32 bits"]),
    ("register_write RIngress.port_hits 0", ["takes 3 argument(s), got 2; usage: register_write REGISTER INDEX VALUE"]),
    ("register_write RIngress.nope 0 1", ["unknown register 'RIngress.nope'; known: RIngress.port_hits"]),
    ("register_reset RIngress.port_hits extra", ["takes 1 argument(s), got 2"]),
    ("set_queue_depth banana", ["DEPTH 'banana' is not an integer"]),
    ("set_queue_rate 1e9", ["RATE_PPS '1e9' is not a non-negative number"]),
    ("set_queue_rate 100 512", ["PORT '512' is not an integer 0..511"]),
    ("mc_mgrp_create 1\nmc_mgrp_create 1", ["line 2 (mc_mgrp_create): group 1 was created on line 1 already"]),
    ("mc_mgrp_create 0", ["MGID '0' is not an integer 1..32767"]),
    ("mc_mgrp_create 1\nmc_node_create 0 1 2\nmc_node_create 0 2\nmc_node_associate 1 0\nmc_node_associate 1 1",
     ["line 5 (mc_node_associate): group 1 already replicates to port 2 with rid 0"]),
    ("mc_node_create 0 1 512", ["PORT '512' is not an integer 0..511"]),
    ("mirroring_add 512 1", ["SESSION '512' is not an integer 1..511"]),
    ("mirroring_add 5 1\nmirroring_add 5 2", ["line 2 (mirroring_add): the same entry as", "line 1 (mirroring_add)"]),
])
def test_cli_commands_refuse_what_pi_or_bmv2_refuses(tmp_path, text, words):
    refused(cli_file(tmp_path, text + "\n"), *words)


def test_a_duplicate_across_a_switchs_two_files_names_both(tmp_path):
    """runtime_json and cli_input of one switch are written to one switch: the second insert of an entry
    would be ALREADY_EXISTS there, so their union is checked (network.py extends one Entries per switch)."""
    first = runtime_json(json_file(tmp_path, {"table_entries": [route("10.0.2.0", 24)]}), INFO)
    second = cli_commands(cli_file(tmp_path, "table_add RIngress.routes RIngress.drop 10.0.2.0/24 =>\n"), INFO)
    both = Entries()
    both.extend(first)
    with pytest.raises(EntryFileError) as e:
        both.extend(second)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 's1-commands.txt'}: line 1 (table_add): the same entry as "
                          f"{tmp_path / 's1-runtime.json'}: table_entries[0] (RIngress.routes)"), msg


def test_table_size_counts_a_switchs_two_files(tmp_path):
    first = runtime_json(json_file(tmp_path, {"table_entries": [udp(p, p) for p in range(40)]}), INFO)
    second = cli_commands(cli_file(tmp_path, "".join(f"table_add RIngress.udp_ports NoAction {p}->{p} => 1\n"
                                                    for p in range(100, 130))), INFO)
    both = Entries()
    both.extend(first)
    with pytest.raises(EntryFileError, match=r"s1-commands.txt: line 25 \(table_add\): entry 65 of table "
                                             r"RIngress.udp_ports, which holds at most 64"):
        both.extend(second)


def test_dont_care_forms_leave_the_field_out(tmp_path):
    """PI refuses a prefix length 0, a zero mask and a full range: P4Runtime says "don't care" by
    leaving the field out, so the files' spellings of it become that."""
    data = {"table_entries": [
        route("0.0.0.0", 0),
        {"table": "RIngress.acl", "match": {"hdr.ipv4.src": ["10.0.9.0", "255.255.255.0"], "hdr.ipv4.proto": [0, 0]},
         "action_name": "RIngress.drop", "priority": 2},
        udp(0, 65535)]}
    ents = [u.entity for u in runtime_json(json_file(tmp_path, data), INFO).updates]
    assert ents[0].match == () and ents[1].match == (("hdr.ipv4.src", (0x0A000900, 0xFFFFFF00)),)
    assert ents[2].match == ()


def test_cli_priorities_keep_bmv2s_order(tmp_path):
    """simple_switch_CLI's priority: the lower wins (BMv2 matches the smallest); P4Runtime's: the higher
    wins, and PI writes BMv2's priority as 2**31 - 1 - p. Before, ``=> 1`` and ``=> 2`` went to P4Runtime
    as 1 and 2, so BMv2 matched the two overlapping entries in the opposite order."""
    got = cli_commands(cli_file(tmp_path, "table_add RIngress.acl RIngress.drop 10.0.0.0&&&255.0.0.0 0&&&0 => 1\n"
                                          "table_add RIngress.acl RIngress.permit 10.0.9.0&&&255.255.255.0 0&&&0 => 0\n"),
                       INFO)
    first, second = (u.entity for u in got.updates)
    assert second.priority > first.priority              # 0 wins over 1 in BMv2's CLI
    assert (2**31 - 1 - first.priority, 2**31 - 1 - second.priority) == (1, 0)   # what PI hands BMv2


def test_thrift_commands_are_passed_in_the_form_bmv2_reads(tmp_path):
    got = cli_commands(cli_file(tmp_path, "register_write port_hits 0x0f 0x10\nregister_reset RIngress.port_hits\n"
                                          "set_queue_depth 64 3\nset_queue_rate 500\n"), INFO)
    assert got.thrift == ["register_write RIngress.port_hits 15 16", "register_reset RIngress.port_hits",
                          "set_queue_depth 64 3", "set_queue_rate 500"]


# -- item 15: long lines, many entries ---------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "table_add RIngress.routes RIngress.forward " + "1" * (1 << 20) + "/32 => 1 2 3",
    "table_add RIngress.routes RIngress.forward 10.0.0.1/32 => 1 2 \"" + "x" * (1 << 20),
    "table_add " + "a " * (1 << 19),
])
def test_a_very_long_line_is_refused_by_its_number_not_quoted(tmp_path, line):
    """Before: 26-44 s of shlex and int() on a loaded machine, then a message quoting up to 1 MB."""
    msg = refused(cli_file(tmp_path, "# s1\n" + line + "\n"), "line 2: ", "characters long; valid: a command of at most")
    assert "111" not in msg and "xxx" not in msg


def test_many_entries_load(tmp_path):
    """20,000 routes (times are for ``dcnlab bench``; this checks what does not depend on load)."""
    n = 20_000
    data = {"table_entries": [route(f"10.{i >> 8 & 255}.{i & 255}.0", 24) for i in range(n)]}
    text = "".join(f"table_add RIngress.routes RIngress.drop 11.{i >> 8 & 255}.{i & 255}.0/24 =>\n" for i in range(n))
    big = P4Info.from_text((Path(__file__).parent / "fixtures" / "router.p4info.txtpb").read_text()
                           .replace("size: 1024", f"size: {2 * n}"))
    both = Entries()
    both.extend(runtime_json(json_file(tmp_path, data), big))
    both.extend(cli_commands(cli_file(tmp_path, text), big))
    assert len(both.updates) == 2 * n and len({u.entity.key() for u in both.updates}) == 2 * n
