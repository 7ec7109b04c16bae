"""Topology files: dcnlab's export, the tutorials' topology.json, p4-utils' p4app.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcnlab.topos.export import to_dict, to_json
from dcnlab.topos.errors import UserError
from dcnlab.topos.files import LinkShape, TopologyError, load_topology, mac_from_ip
from dcnlab.topos.spec import parse_spec

TUTORIAL = {
    "hosts": {
        "h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11", "commands": ["route add default gw 10.0.1.10 dev eth0"]},
        "h2": {"ip": "10.0.2.2/24", "mac": "08:00:00:00:02:22", "commands": []},
        "h3": {"ip": "10.0.3.3/24", "mac": "08:00:00:00:03:33"},
    },
    "switches": {"s1": {"runtime_json": "s1-runtime.json"}, "s2": {}, "s3": {"cli_input": "s3-commands.txt"}},
    "links": [["h1", "s1-p1"], ["h2", "s2-p1"], ["h3", "s3-p1"], ["s1-p2", "s2-p2", "5ms", 10],
              ["s2-p3", "s3-p2", 0.5], ["s1-p3", "s3-p3"]],
}


def write(tmp_path: Path, name: str, data: object) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return p


@pytest.fixture
def tutorial_dir(tmp_path):
    (tmp_path / "s1-runtime.json").write_text("{}")
    (tmp_path / "s3-commands.txt").write_text("table_set_default x drop\n")
    return tmp_path


def test_tutorials_topology(tutorial_dir):
    f = load_topology(write(tutorial_dir, "topology.json", TUTORIAL))
    assert f.format == "tutorials" and f.spec.endswith("topology.json")
    assert [h.name for h in f.hosts()] == ["h1", "h2", "h3"]
    h1 = f.host(0)
    assert (h1.ip, h1.mac, h1.node, h1.node_port) == ("10.0.1.1", "08:00:00:00:01:11", "s1", 1)
    assert f.host_conf["h1"].prefix_len == 24 and f.host_conf["h1"].commands[0].startswith("route add")
    assert f.peer("s1", 2) == ("s2", 2) and f.peer("s1", 0) is None and f.node("s1").ports == 4
    assert f.shape_of("s1", 2) == f.shape_of("s2", 2) == LinkShape(10.0, 5.0)
    assert f.shape_of("s3", 2) == LinkShape(None, 0.5) and f.shape_of("s1", 3) is None
    assert f.switch_conf["s1"].runtime_json == tutorial_dir / "s1-runtime.json"
    assert f.switch_conf["s3"].cli_input == tutorial_dir / "s3-commands.txt"


def test_p4app_strategies_and_ports(tmp_path):
    (tmp_path / "prog.p4").write_text("// program\n")
    app = {"p4_src": "prog.p4", "topology": {
        "assignment_strategy": "l3",
        "links": [["h1", "s1"], ["h2", "s1", {"port2": 7}], ["s1", "s2", {"bw": 10, "delay": "1ms", "loss": 1,
                                                                          "max_queue_size": 50}], ["h3", "s2"]],
        "hosts": {"h1": {}, "h2": {}, "h3": {}}, "switches": {"s1": {}, "s2": {}}}}
    f = load_topology(write(tmp_path, "p4app.json", app))
    assert f.program == tmp_path / "prog.p4" and f.program_of("s2") == tmp_path / "prog.p4"
    hosts = {h.name: h for h in f.hosts()}
    assert (hosts["h1"].ip, f.host_conf["h1"].gateway, f.host_conf["h1"].prefix_len) == ("10.1.1.2", "10.1.1.1", 24)
    assert hosts["h3"].ip == "10.2.3.2" and hosts["h3"].mac == mac_from_ip("10.2.3.2") == "00:00:0a:02:03:02"
    assert (hosts["h1"].node_port, hosts["h2"].node_port) == (1, 7)
    assert f.peer("s1", 2) == ("s2", 1)          # Mininet's order: the next free port from 1
    assert f.shape_of("s1", 2) == LinkShape(10.0, 1.0, 1.0, 50)
    for strategy, ip, gw in (("l2", "10.0.0.1", None), ("mixed", "10.0.1.1", "10.0.1.254")):
        app["topology"]["assignment_strategy"] = strategy
        f = load_topology(write(tmp_path, "p4app.json", app))
        assert (f.host(0).ip, f.host_conf["h1"].gateway) == (ip, gw)
        assert f.host_conf["h1"].gateway_mac == (mac_from_ip(gw) if gw else None)     # auto_gw_arp, on by default
    app["topology"]["auto_gw_arp"] = False
    assert load_topology(write(tmp_path, "p4app.json", app)).host_conf["h1"].gateway_mac is None
    app["topology"]["auto_gw_arp"] = "yes"
    with pytest.raises(TopologyError, match="auto_gw_arp.*not a boolean"):
        load_topology(write(tmp_path, "p4app.json", app))
    app["topology"]["auto_gw_arp"] = True
    f = load_topology(write(tmp_path, "p4app.json", app))
    again = load_topology(write(tmp_path, "export.json", to_dict(f)))
    assert again.host_conf == f.host_conf and again.host_conf["h1"].gateway_mac == "00:00:0a:00:01:fe"


@pytest.mark.parametrize("spec", ["bcube:n=2,k=1", "fattree:k=4", "dragonfly:p=1,a=4,h=2",
                                  "midplane:q=2,m=2,p=2,k=2,w=2,cns=2,terminals=2"])
def test_builtin_fabrics_round_trip(spec, tmp_path):
    fabric = parse_spec(spec)
    back = load_topology(write(tmp_path, "f.json", to_json(fabric)))
    assert list(back.nodes()) == list(fabric.nodes())
    assert list(back.links()) == list(fabric.links())
    assert list(back.hosts()) == list(fabric.hosts())
    assert back.kind == fabric.kind and back.params == fabric.params


def test_user_topology_round_trips_with_its_settings(tutorial_dir):
    f = load_topology(write(tutorial_dir, "topology.json", TUTORIAL))
    again = load_topology(write(tutorial_dir, "export.json", to_dict(f)))
    assert list(again.nodes()) == list(f.nodes()) and list(again.links()) == list(f.links())
    assert list(again.hosts()) == list(f.hosts())
    assert again.host_conf == f.host_conf and again.link_shape == f.link_shape and again.switch_conf == f.switch_conf


def broken(**change):
    data = json.loads(json.dumps(TUTORIAL))
    for key, value in change.items():
        data[key] = value
    return data


@pytest.mark.parametrize(("data", "words"), [
    (broken(links=[["h1", "s9-p1"], ["h2", "s2-p1"], ["h3", "s3-p1"]]), ["links[0][1]", "unknown node 's9'"]),
    (broken(links=[["h1", "s1-p1"], ["h2", "s1-p1"], ["h3", "s3-p1"]]), ["link h2-s1-p1", "port 1 of s1 is used twice"]),
    (broken(links=[["h1", "s1-p1"], ["h2", "s2-p1"]]), ["host h3", "has no link"]),
    (broken(links=[["h1", "s1-p1"], ["h1", "s2-p1"], ["h2", "s2-p2"], ["h3", "s3-p1"]]), ["host h1 has a second link"]),
    (broken(hosts={"h1": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:01:11"}, "h2": {"ip": "10.0.1.1/24", "mac": "08:00:00:00:02:22"},
                   "h3": {"ip": "10.0.3.3/24", "mac": "08:00:00:00:03:33"}}), ["host h2", "address clash: IP 10.0.1.1"]),
    (broken(hosts={"s1": {}, "h2": {}, "h3": {}}), ["host s1", "duplicate name 's1'"]),
    (broken(switches={"s1": {"runtime_json": "nope.json"}, "s2": {}, "s3": {}}), ["switch s1 runtime_json", "nope.json does not exist"]),
    (broken(links=[["h1", "s1-p1", "fast"], ["h2", "s2-p1"], ["h3", "s3-p1"]]), ["link h1-s1-p1 latency", "'fast' is invalid"]),
    (broken(hosts={"h1": {"ip": "10.0.1.300/24", "mac": "08:00:00:00:01:11"}, "h2": {}, "h3": {}}), ["host h1 ip", "not an IPv4 address"]),
    ({"switches": {}, "links": [], "extra": 1}, ["top level", "unknown key(s) 'extra'"]),
    ([1, 2], ["not a topology file"]),
])
def test_bad_files_name_the_file_element_and_problem(tutorial_dir, data, words):
    path = write(tutorial_dir, "topology.json", data)
    with pytest.raises(TopologyError) as e:
        load_topology(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg
    assert all(w in msg for w in words), msg


def test_duplicate_keys_deep_nesting_size_and_syntax(tmp_path):
    dup = write(tmp_path, "dup.json", '{"hosts": {"h1": {}, "h1": {}}, "switches": {}, "links": []}')
    with pytest.raises(TopologyError, match="key 'h1' appears twice"):
        load_topology(dup)
    deep = write(tmp_path, "deep.json", "[" * 100_000 + "]" * 100_000)
    with pytest.raises(TopologyError, match="nested 100000 levels deep; valid: at most 32"):
        load_topology(deep)
    big = tmp_path / "big.json"
    with big.open("w") as fh:
        fh.truncate(17 << 20)
    with pytest.raises(UserError, match="larger than 16 MiB; valid: at most 16 MiB"):
        load_topology(big)
    bad = write(tmp_path, "bad.json", '{"hosts": {,}}')
    with pytest.raises(TopologyError, match=r"line 1 column 12: invalid JSON"):
        load_topology(bad)
    with pytest.raises(UserError, match="missing.json.: does not exist"):
        load_topology(tmp_path / "missing.json")


def test_p4app_errors(tmp_path):
    app = {"topology": {"assignment_strategy": "l4", "links": [], "hosts": {}, "switches": {}}}
    with pytest.raises(TopologyError, match="assignment_strategy: 'l4' is invalid; valid: l2, mixed, l3, manual"):
        load_topology(write(tmp_path, "p4app.json", app))
    app = {"topology": {"assignment_strategy": "l3", "links": [["hostA", "s1"]], "hosts": {"hostA": {}},
                        "switches": {"s1": {}}}}
    with pytest.raises(TopologyError, match="needs names h<number> and s<number>"):
        load_topology(write(tmp_path, "p4app.json", app))
    app["topology"]["assignment_strategy"] = "manual"
    with pytest.raises(TopologyError, match="host hostA: has no ip"):
        load_topology(write(tmp_path, "p4app.json", app))


def test_tutorials_host_with_a_mac_but_no_ip_keeps_its_mac(tmp_path):
    """A MAC given without an IP was once dropped (the host got the plan's MAC and the file's
    entries for its MAC matched nothing). It is used, with the plan's address."""
    data = broken(hosts={"h1": {"mac": "08:00:00:00:01:11"}, "h2": {}, "h3": {"ip": "10.0.3.3/24",
                                                                            "mac": "08:00:00:00:03:33"}},
                  switches={"s1": {}, "s2": {}, "s3": {}})
    f = load_topology(write(tmp_path, "topology.json", data))
    h1, h2 = f.host(0), f.host(1)
    assert (h1.ip, h1.mac) == ("10.0.0.1", "08:00:00:00:01:11") and f.host_conf["h1"].prefix_len == 8
    assert (h2.ip, h2.mac) == ("10.0.0.2", "02:00:00:00:00:02")
    data["hosts"]["h1"]["mac"] = "ff:ff:ff:ff:ff:ff"
    with pytest.raises(TopologyError, match="host h1 mac: ff:ff:ff:ff:ff:ff is the broadcast address"):
        load_topology(write(tmp_path, "topology.json", data))


def test_a_builtin_kind_is_kept_only_for_its_own_graph(tmp_path):
    """An export of fattree:k=4 stays routable by dcnlab; one whose graph was edited (a link removed)
    becomes a custom fabric that names what it claimed (``dcnlab run`` then asks for a program)."""
    data = to_dict(parse_spec("fattree:k=4"))
    assert load_topology(write(tmp_path, "f.json", data)).kind == "fattree"
    cut = next(i for i, l in enumerate(data["links"]) if not l["a"].startswith("h") and not l["b"].startswith("h"))
    del data["links"][cut]
    f = load_topology(write(tmp_path, "f.json", data))
    assert (f.kind, f.declared) == ("custom", "fattree:k=4")
    data = to_dict(parse_spec("fattree:k=4"))
    data["params"] = {"k": 10 ** 6}             # a huge fabric is never built to compare
    assert load_topology(write(tmp_path, "f.json", data)).kind == "custom"


@pytest.mark.parametrize(("name", "port", "ok"), [("s1", 510, True), ("abcdefghij", 9, True),
                                                  ("abcdefghij", 10, False), ("abcdefghi", 99, True),
                                                  ("abcdefghi", 100, False), ("abcdefgh", 510, True)])
def test_interface_names_fit_ifnamsiz_for_the_highest_port(name, port, ok):
    from dcnlab.topos.fieldchecks import IFNAMSIZ, ifname, ifname_problem, name_problem
    assert name_problem(name) is None
    assert (ifname_problem(name, port) is None) == ok == (len(ifname(name, port)) <= IFNAMSIZ)
