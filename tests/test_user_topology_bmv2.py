"""A user's topology file, program and entries on BMv2: examples/router-lab is a
tutorials-style exercise (topology.json, one runtime JSON, one simple_switch_CLI command file) on
examples/programs/router.p4."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.cli import main
from dcnlab.controller.runtime.entry_files import EntryFileError
from dcnlab.topos.files import load_topology

LAB = Path(__file__).resolve().parent.parent / "examples" / "router-lab"


@pytest.mark.bmv2
def test_router_lab_runs_unchanged_and_carries_packets(capsys):
    assert main(["run", str(LAB / "topology.json"), "--check"]) == 0
    out = capsys.readouterr().out
    assert "program " in out and "router.p4" in out
    assert "reachability: 6/6 host pairs" in out and "0 pair(s) unreachable" in out
    assert not leftovers()


@pytest.mark.bmv2
def test_entries_program_state_and_host_setup():
    """Entries from both files are on the switches, the register write went through Thrift, hosts have
    eth0 with the file's address, prefix and commands, and the shaped link has its htb class."""
    fabric = load_topology(LAB / "topology.json")
    with FabricNetwork(fabric, NetOptions(routes=False)) as net:
        assert net.program is not None and net.program.name == "router.p4"
        routes = net.controller.read_table("s2", "RIngress.routes")
        assert len(routes) == 3 and len(net.controller.read_table("s2", "RIngress.acl")) == 1
        assert len(net.controller.read_table("s1", "RIngress.routes")) == 3
        h1 = net.hosts["h1"]
        assert "10.0.1.1/16" in h1.cmd("ip -4 addr show dev eth0")
        assert "10.9.0.0/16 dev eth0" in h1.cmd("ip route")
        h1.cmd("ping -c 2 -W 1 -i 0.2 10.0.3.3")
        hits = net.controller.thrift("s1").register_read("RIngress.port_hits", 1)
        assert hits == 0                       # ICMP, not UDP: the range table counts nothing
        from dcnlab.emu import links
        assert "htb" in links.show(net.netns, "tc", "qdisc", "show", "dev", "s1-eth2")
        assert " 0% packet loss" in net.hosts["h2"].cmd("ping -c 2 -W 5 -i 0.2 10.0.1.1")


@pytest.mark.p4c
def test_a_program_that_does_not_compile_shows_p4c_message(tmp_path, capsys):
    shutil.copytree(LAB.parent, tmp_path / "examples")
    lab = tmp_path / "examples" / LAB.name
    bad = tmp_path / "bad.p4"
    bad.write_text("#include <v1model.p4>\ncontrol X(inout bit<8> y) { apply { y = z; } }\n")
    rc = main(["run", str(lab / "topology.json"), "--program", str(bad)]) if _root() else None
    if rc is None:
        pytest.skip("dcnlab run needs root")
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and "bad.p4(2)" in err and "error" in err


@pytest.mark.bmv2
def test_bad_entry_is_refused_before_a_write(tmp_path):
    shutil.copytree(LAB.parent, tmp_path / "examples")
    lab = tmp_path / "examples" / LAB.name
    data = json.loads((lab / "s1-runtime.json").read_text())
    data["table_entries"][0]["action_params"]["port"] = 600
    (lab / "s1-runtime.json").write_text(json.dumps(data))
    net = FabricNetwork(load_topology(lab / "topology.json"), NetOptions(routes=False))
    with pytest.raises(EntryFileError) as e:
        net.start()
    assert net.run is None                 # refused after compiling, before anything was created
    assert "s1-runtime.json: table_entries[0] (RIngress.routes): RIngress.forward.port=600 does not fit in 9 bits" \
        in str(e.value)
    assert not leftovers()


def _root() -> bool:
    import os
    return os.geteuid() == 0


@pytest.mark.bmv2
def test_switches_with_different_programs(capsys):
    """examples/mixed-lab: s1 runs router.p4, s2 counter.p4; each switch's entries are checked against
    its own P4Info, and packets cross both."""
    mixed = LAB.parent / "mixed-lab" / "topology.json"
    with FabricNetwork(load_topology(mixed), NetOptions(agents=False)) as net:
        assert {n: p.name for n, p in net.programs.items()} == {"s1": "router.p4", "s2": "counter.p4"}
        assert net.program is None
        assert len(net.controller.read_table("s1", "RIngress.routes")) == 3
        assert len(net.controller.read_table("s2", "CIngress.ipv4_lpm")) == 3
        reach = net.reachability()
        assert reach.unreachable == [] and len(reach.hosts) == 3
        assert sum(net.controller.thrift("s2").register_read("CIngress.rx_packets")) >= 4
    assert main(["run", str(mixed), "--check"]) == 0
    assert "2 programs: counter.p4, router.p4" in capsys.readouterr().out


def test_a_file_that_gives_only_some_switches_a_program_is_refused(tmp_path):
    from dcnlab.emu.network import user_programs
    from dcnlab.topos.errors import UserError
    data = json.loads((LAB.parent / "mixed-lab" / "topology.json").read_text())
    del data["switches"]["s2"]["program"]
    data["switches"]["s1"]["program"] = str(LAB.parent / "programs" / "router.p4")
    data["switches"]["s1"]["runtime_json"] = str(LAB / "s1-runtime.json")
    data["switches"]["s2"]["runtime_json"] = str(LAB.parent / "mixed-lab" / "s2-runtime.json")
    (tmp_path / "t.json").write_text(json.dumps(data))
    with pytest.raises(UserError, match="switch s2 has no program while others have one"):
        user_programs(load_topology(tmp_path / "t.json"))
