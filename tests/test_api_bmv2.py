"""The scripting API on BMv2: dcnlab.Network's hosts, switches and links; --grpc-tcp
on loopback only; endpoints recorded; stepping down for a user's controller."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
from pathlib import Path

import pytest

import ports

import dcnlab
from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.emu.cleanup import leftovers
from waiting import wait_until

LAB = Path(__file__).resolve().parent.parent / "examples" / "router-lab"


def _captured(cap) -> int:
    """Frames in a running capture's file so far (tcpdump -U writes each at once; a half-written one is not
    counted)."""
    from scapy.utils import rdpcap
    try:
        return len(rdpcap(str(cap.path))) if cap.path.stat().st_size > 24 else 0
    except Exception:  # noqa: BLE001 (a record still being written)
        return 0


@pytest.mark.bmv2
def test_network_hosts_switches_links_on_a_fattree():
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    with dcnlab.Network("fattree:k=4") as net:
        assert set(net.hosts) >= {"h0_0_0", "h3_1_1"} and len(net.switches) == 20
        h1, h2 = net.hosts["h0_0_0"], net.hosts["h3_1_1"]
        assert " 0% packet loss" in h1.cmd("ping -c 2 -W 5 -i 0.2", h2.ip)     # -W: a slow reply is not a lost one
        # scapy frames out of h1, captured in h2; the per-link byte counters show their path
        before = net.link_bytes()
        frames = [Ether(src=h1.mac, dst="02:00:00:00:00:ff") / IP(src=h1.ip, dst=h2.ip) / UDP(sport=4000, dport=5000)
                  / (bytes([i]) * 58) for i in range(5)]     # one flow: one ECMP path
        with h2.pcap(bpf="udp") as cap:
            assert h1.send(frames) == 5
            wait_until(lambda: _captured(cap) >= 5, "the five frames in h2's capture")
            got = cap.packets()
        assert sorted(bytes(p[UDP].payload)[0] for p in got) == [0, 1, 2, 3, 4]
        moved = {k: v - before[k] for k, v in net.link_bytes().items() if v - before[k]}
        assert moved[("h0_0_0", "e0_0")] == 5 * 100 and moved[("e3_1", "h3_1_1")] == 5 * 100
        assert net.link_packets()[("e3_1", "h3_1_1")] >= 5
        assert sum(1 for (a, b) in moved if a.startswith("c") or b.startswith("c")) == 2   # one core crossed
        # the entity API: delete h2's host route on its edge switch, then put it back
        e = net.switches["e3_1"]
        route = next(t for t in e.read_table("ipv4_host") if dict(t.match)["hdr.ipv4.dstAddr"] == int(ipaddress.IPv4Address(h2.ip)))
        e.write(-route)
        assert "100% packet loss" in h1.cmd("ping -c 1 -W 1", h2.ip)
        e.write(+route)
        assert " 0% packet loss" in h1.cmd("ping -c 1 -W 5", h2.ip)
        with pytest.raises(dcnlab.UserError, match="not an update"):
            e.write(route)
        assert e.read_counter("port_out")
        # a link cut on both ends of every path from e0_0 upwards isolates h0_0_0 from the rest
        for agg in ("a0_0", "a0_1"):
            net.link("e0_0", agg).cut()
        assert "100% packet loss" in h1.cmd("ping -c 1 -W 1", h2.ip)
        for agg in ("a0_0", "a0_1"):
            net.link("e0_0", agg).restore()
        assert " 0% packet loss" in h1.cmd("ping -c 2 -W 5", h2.ip)
        e.set_queue(depth=64, rate_pps=5000)
        # endpoints are recorded in the run directory
        rec = json.loads((net.run_dir / "endpoints.json").read_text())
        assert len(rec) == 20 and rec[0]["grpc"].startswith("unix:") and rec[0]["grpc_tcp"] is None
    assert not leftovers()


@pytest.mark.bmv2
def test_user_program_topology_and_registers():
    with dcnlab.Network(LAB / "topology.json") as net:
        h1, h3 = net.hosts["h1"], net.hosts["h3"]
        assert h1.iface == "eth0"
        h1.cmd("ping -c 1 -W 1", h3.ip)
        assert net.switches["s1"].register_read("RIngress.port_hits", 1) == 0
        net.switches["s1"].register_write("RIngress.port_hits", 1, 7)
        assert net.switches["s1"].register_read("RIngress.port_hits", 1) == 7


def _listeners(pid: int) -> list[str]:
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    return [line.split()[3] for line in out.splitlines() if f"pid={pid}," in line]


@pytest.mark.bmv2
def test_grpc_tcp_listens_on_loopback_only_and_hands_over():
    """--grpc-tcp serves each switch on 127.0.0.1:PORT+i and nothing else; with controller=False a
    client on that port becomes primary and carries traffic."""
    port = ports.free_block(4, 50151)
    with dcnlab.Network(LAB / "topology.json", grpc_tcp=port, controller=False, routes=False) as net:
        listening = _listeners(os.getpid())
        assert sorted(listening) == [f"127.0.0.1:{port}", f"127.0.0.1:{port + 1}"], listening
        eps = net.endpoints()
        assert [(e.switch, e.device_id, e.grpc_tcp) for e in eps] == [
            ("s1", 0, f"127.0.0.1:{port}"), ("s2", 1, f"127.0.0.1:{port + 1}")]
        assert all(e.election_id is None for e in eps)          # dcnlab stepped down
        rec = json.loads((net.run_dir / "endpoints.json").read_text())
        assert rec[1]["grpc_tcp"] == f"127.0.0.1:{port + 1}"
        # another controller becomes primary over TCP with election id 1 and reads the file's entries
        other = SwitchClient("s2", 1, f"127.0.0.1:{port + 1}", election_id=(0, 1))
        try:
            info = net.controller.pipeline.p4info
            assert len(other.read_table(info, "RIngress.routes")) == 3
        finally:
            other.close()
        assert " 0% packet loss" in net.hosts["h2"].cmd("ping -c 2 -W 5 -i 0.2", net.hosts["h3"].ip)
    assert _listeners(os.getpid()) == []
    assert not leftovers()


def test_network_rejects_unknown_options_by_name():
    with pytest.raises(dcnlab.UserError, match="unknown option.*colour.*valid:.*bw_mbps"):
        dcnlab.Network("fattree:k=4", colour="blue")
    with pytest.raises(dcnlab.UserError, match="program='nope.txt' is not a P4 source"):
        dcnlab.Network("fattree:k=4", program="nope.txt")
    with pytest.raises(dcnlab.UserError, match="grpc-tcp.*out of range"):
        dcnlab.Network("fattree:k=4", grpc_tcp=80)
    with pytest.raises(dcnlab.UserError, match="entries: no switch named 'zz'"):
        dcnlab.Network("fattree:k=4", entries={"zz": "x.json"})
    net = dcnlab.Network("fattree:k=4")
    with pytest.raises(dcnlab.UserError, match="not up"):
        _ = net.hosts
    assert repr(net) == "<dcnlab.Network fattree:k=4 down>"


@pytest.mark.bmv2
def test_the_docs_python_examples_run(tmp_path):
    """Every ``python`` block of README.md and the docs site's pages (tests/docs_pages.py) runs as written."""
    import sys

    import docs_pages
    blocks = docs_pages.blocks("python")   # whole scripts; ```py blocks are fragments
    assert blocks
    for i, code in enumerate(blocks):
        script = tmp_path / f"readme_{i}.py"
        script.write_text(code)
        r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "Traceback" not in r.stderr
    assert not leftovers()
