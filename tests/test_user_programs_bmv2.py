"""Users' own programs on BMv2 (and a lossy link): the small v1model programs of
examples/programs, each run from its exercise-like directory under examples/ (topology file, runtime
JSON and/or simple_switch_CLI commands), carrying packets and checking what the program does:

- l2switch.p4 (examples/l2-lab): exact destination-MAC forwarding, flooding of unknown destinations
  through a PRE group (runtime JSON ``multicast_group_entries``), and a multicast MAC whose group
  reaches exactly its members;
- tunnel.p4 (examples/tunnel-lab): frames with a 0x1212 tunnel header, built with scapy in a host,
  are forwarded on the tunnel's dst_id, not on the IPv4 destination inside;
- ecn.p4 (examples/ecn-lab): with a slow BMv2 queue a burst gets ECN-capable packets marked CE, while
  not-ECN-capable ones and packets that met a short queue keep their ECN bits;
- counter.p4 (examples/counter-lab): a register counts packets per ingress port, read over Thrift;
- examples/p4app-lab: p4-utils' p4app.json (l3 strategy, cli_input per switch) on router.p4, all pairs;
- a lossy link (``loss`` in the topology file) drops about that fraction of the packets crossing it.

Packets are sent and received by a small helper script (``HELPER``) run inside the hosts' namespaces.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import netcheck
import pytest

from dcnlab.emu import links
from dcnlab.emu.cleanup import leftovers
from dcnlab.emu.network import FabricNetwork, NetOptions
from dcnlab.cli import main
from dcnlab.topos.files import load_topology

pytestmark = pytest.mark.bmv2

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PY = sys.executable
ETH_TEST = 0x88B5          # IEEE local experimental etherType: nothing else on the hosts sends it
ETH_TUNNEL = 0x1212

HELPER = r'''
"""Inside a host: sniff frames of one etherType, send raw frames, receive or send UDP with its TOS byte."""
import json, signal, socket, sys, time

def stop(*_):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, stop)
mode, args = sys.argv[1], sys.argv[2:]
if mode == "sniff":             # IFACE ETHERTYPE: incoming frames (hex) until an "end" tag (+0.2 s) or SIGTERM
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(int(args[1], 0)))
    s.bind((args[0], 0))
    s.settimeout(0.05)
    got, until = [], time.monotonic() + 120     # a hang guard, should the "end" tag never come
    print("ready", flush=True)
    try:
        while time.monotonic() < until:
            try:
                data, addr = s.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[2] != socket.PACKET_OUTGOING:
                got.append(data.hex())
                if data.rstrip(b"\0").endswith(b"end"):
                    until = min(until, time.monotonic() + 0.2)
    except KeyboardInterrupt:
        pass
    print(json.dumps(got), flush=True)
elif mode == "frames":          # IFACE HEX...: send each frame once
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((args[0], 0))
    for h in args[1:]:
        s.send(bytes.fromhex(h))
elif mode == "udprecv":         # PORT: [payload, tos] of each datagram until one says "end" or SIGTERM
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, getattr(socket, "IP_RECVTOS", 13), 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind(("0.0.0.0", int(args[0])))
    s.settimeout(120)                            # a hang guard, should the "end" datagram never come
    got = []
    print("ready", flush=True)
    try:
        while True:
            data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(1))
            tos = next((d[0] for lvl, typ, d in anc if lvl == socket.IPPROTO_IP and typ == socket.IP_TOS), -1)
            got.append([data.decode(), tos])
            if data == b"end":
                break
    except (KeyboardInterrupt, socket.timeout):
        pass
    print(json.dumps(got), flush=True)
elif mode == "udpsend":         # DST PORT PHASE...: TAG:COUNT:PPS:TOS,TOS... (PPS 0: back to back) or pause:SECONDS
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dst = (args[0], int(args[1]))
    for phase in args[2:]:
        if phase.startswith("pause:"):
            time.sleep(float(phase[6:]))
            continue
        tag, count, pps, toses = phase.split(":")
        toses = [int(t) for t in toses.split(",")]
        t0 = time.monotonic()
        for i in range(int(count)):
            tos = toses[i % len(toses)]
            s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
            s.sendto(b"end" if tag == "end" else f"{tag} {i} {tos}".encode(), dst)
            if float(pps):
                time.sleep(max(0.0, t0 + (i + 1) / float(pps) - time.monotonic()))
'''


@pytest.fixture(autouse=True)
def isolated_runs(tmp_path, monkeypatch):
    """Each test gets its own run root; afterwards none of its runs may have left anything."""
    root = tmp_path / "runs"
    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(root))
    before = netcheck.root_interfaces()
    yield
    if root.is_dir():
        assert leftovers(root) == []
    netcheck.assert_none_left(before)     # only interfaces dcnlab names: others' (a test machine's dcm*) come and go


@pytest.fixture(scope="module")
def helper(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("helper") / "hosttool.py"
    p.write_text(HELPER)
    return p


class Hosts:
    """Runs the helper in the hosts of a running network."""

    def __init__(self, net: FabricNetwork, helper: Path) -> None:
        self.net, self.helper = net, helper

    def start(self, host: str, *args: str) -> subprocess.Popen:
        p = self.net.hosts[host].popen([PY, str(self.helper), *args], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            raise AssertionError(f"helper in {host} did not start: {line}{p.communicate()[1]}")
        return p

    @staticmethod
    def result(p: subprocess.Popen, stop: bool = False) -> list:
        if stop:
            p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=180)      # beyond the helper's own 120-s guard
        assert p.returncode == 0, err
        return json.loads(out)

    def run(self, host: str, *argv: str) -> str:
        p = self.net.hosts[host].popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, f"{argv} in {host}: {err}"
        return out

    def send(self, host: str, *args: str) -> str:
        return self.run(host, PY, str(self.helper), *args)


def frame(dst: str, src: str, tag: str, etype: int = ETH_TEST, header: bytes = b"") -> str:
    return (bytes.fromhex(dst.replace(":", "") + src.replace(":", "")) + etype.to_bytes(2, "big") + header
            + tag.encode()).hex()


def tags(frames: list[str], skip: int = 14) -> list[str]:
    """The payload tags of sniffed test frames (after ``skip`` header bytes), in arrival order."""
    return [bytes.fromhex(f)[skip:].rstrip(b"\0").decode() for f in frames]


MAC = {f"h{i}": f"08:00:00:00:00:{i}{i}" for i in range(1, 5)}
BROADCAST = "ff:ff:ff:ff:ff:ff"
GROUP_MAC = "01:00:5e:00:01:01"       # s1-runtime.json: PRE group 2 = ports 2 and 3 (h2, h3)


def test_l2_switch_forwards_known_macs_and_floods_unknown_ones(helper):
    """h2's MAC is in the dmac table: only h2 gets the frame. h4's is not: the default action floods
    it through PRE group 1 to every port but the one it came in on, as a broadcast is."""
    with FabricNetwork(load_topology(EXAMPLES / "l2-lab" / "topology.json"), NetOptions(agents=False)) as net:
        assert net.program.name == "l2switch.p4"
        hosts = Hosts(net, helper)
        sniff = {h: hosts.start(h, "sniff", "eth0", hex(ETH_TEST)) for h in MAC}
        hosts.send("h1", "frames", "eth0", frame(MAC["h2"], MAC["h1"], "to-h2"),
                   frame(MAC["h4"], MAC["h1"], "to-h4"), frame(BROADCAST, MAC["h1"], "end"))
        got = {h: sorted(tags(Hosts.result(p, stop=h == "h1"))) for h, p in sniff.items()}
        assert got == {"h1": [], "h2": ["end", "to-h2", "to-h4"], "h3": ["end", "to-h4"], "h4": ["end", "to-h4"]}
        assert " 0% packet loss" in net.hosts["h1"].cmd("ping -c 2 -i 0.2 -W 5 10.0.0.4")   # IPv4 to h4: flooded


def test_multicast_reaches_exactly_the_group_members(helper):
    """A frame to the group's MAC goes through PRE group 2 (h2, h3): from h1 it reaches h2 and h3;
    from h2, a member, it reaches h3 only; h4 never sees one."""
    with FabricNetwork(load_topology(EXAMPLES / "l2-lab" / "topology.json"), NetOptions(agents=False)) as net:
        hosts = Hosts(net, helper)
        sniff = {h: hosts.start(h, "sniff", "eth0", hex(ETH_TEST)) for h in MAC}
        hosts.send("h1", "frames", "eth0", frame(GROUP_MAC, MAC["h1"], "g-from-h1"))
        hosts.send("h2", "frames", "eth0", frame(GROUP_MAC, MAC["h2"], "g-from-h2"))
        hosts.send("h1", "frames", "eth0", frame(BROADCAST, MAC["h1"], "end"))
        got = {h: sorted(tags(Hosts.result(p, stop=h == "h1"))) for h, p in sniff.items()}
        assert got == {"h1": [], "h2": ["end", "g-from-h1"], "h3": ["end", "g-from-h1", "g-from-h2"], "h4": ["end"]}


def test_tunnel_frames_built_with_scapy_follow_their_dst_id(helper):
    """h1 sends tunnel frames with scapy (examples/tunnel-lab/send.py): dst_id 2 with h3's IPv4 address
    inside reaches h2 and not h3, and dst_id 3 with h2's address reaches h3; plain IPv4 is routed."""
    lab = EXAMPLES / "tunnel-lab"
    with FabricNetwork(load_topology(lab / "topology.json"), NetOptions(agents=False)) as net:
        assert net.reachability().unreachable == []
        hosts = Hosts(net, helper)
        sniff = {h: hosts.start(h, "sniff", "eth0", hex(ETH_TUNNEL)) for h in ("h2", "h3")}
        hosts.run("h1", PY, str(lab / "send.py"), "--dst-id", "2", "--count", "3", "10.0.3.3", "to-2")
        hosts.run("h1", PY, str(lab / "send.py"), "--dst-id", "3", "--count", "2", "10.0.2.2", "to-3")
        for dst_id in (2, 3):
            hosts.send("h1", "frames", "eth0", frame(BROADCAST, "08:00:00:00:01:11", "end", ETH_TUNNEL,
                                                     bytes([0xff, 0xff, 0, dst_id])))
        got = {h: [bytes.fromhex(f) for f in Hosts.result(p)] for h, p in sniff.items()}
    for host, dst_id, ip, n in (("h2", 2, "10.0.3.3", 3), ("h3", 3, "10.0.2.2", 2)):
        data = [f for f in got[host] if not f.endswith(b"end")]
        assert len(data) == n, f"{host}: {got[host]}"
        for f in data:
            assert f[12:14] == b"\x12\x12" and f[14:16] == b"\x08\x00" and int.from_bytes(f[16:18], "big") == dst_id
            ipv4 = f[18:]
            assert ".".join(map(str, ipv4[16:20])) == ip and ipv4[28:] == f"to-{dst_id}".encode()


def test_ecn_marks_a_burst_behind_a_slow_queue(helper):
    """With BMv2's egress queues at 500 packets/s and 64 deep, a slow stream keeps its ECN bits (0, 1
    and 2 pass unchanged), and a back-to-back burst gets CE (3) on some ECN-capable packets, never on
    a packet that was not ECN-capable."""
    lab = EXAMPLES / "ecn-lab"
    with FabricNetwork(load_topology(lab / "topology.json"),
                       NetOptions(agents=False, queue_rate_pps=500, queue_depth=64)) as net:
        assert net.controller.thrift("s1").register_read("EEgress.ecn_threshold", 0) == 10   # s1-commands.txt
        hosts = Hosts(net, helper)
        rx = hosts.start("h3", "udprecv", "5001")
        hosts.send("h1", "udpsend", "10.0.0.3", "5001", "slow:30:100:0,1,2", "burst:300:0:0,2", "pause:0.5",
                   "end:3:0:0")
        got = Hosts.result(rx)
    assert got[-1] == ["end", 0]
    sent = {tag: int(tag.split()[2]) for tag, _ in got if tag != "end"}
    seen = {tag: tos for tag, tos in got if tag != "end"}
    slow = {t: v for t, v in seen.items() if t.startswith("slow")}
    burst = {t: v for t, v in seen.items() if t.startswith("burst")}
    assert len(slow) == 30 and all(v == sent[t] for t, v in slow.items()), slow
    marked = [t for t, v in burst.items() if v == 3]
    assert marked and all(sent[t] == 2 for t in marked), burst
    assert all(v == 0 for t, v in burst.items() if sent[t] == 0), burst
    assert any(v == 2 for t, v in burst.items() if sent[t] == 2), burst   # before the queue built up


def test_register_counts_packets_per_ingress_port(helper):
    """counter.p4 counts every packet in rx_packets[ingress port]; Thrift reads match what was sent:
    5 pings h1 -> h2 and 3 pings h3 -> h1 are 8 packets in on port 1, 5 on port 2 and 3 on port 3."""
    with FabricNetwork(load_topology(EXAMPLES / "counter-lab" / "topology.json"), NetOptions(agents=False)) as net:
        thrift = net.controller.thrift("s1")
        before = thrift.register_read("CIngress.rx_packets")
        assert len(before) == 64
        for src, dst, n in (("h1", "10.0.0.2", 5), ("h3", "10.0.0.1", 3)):
            out = net.hosts[src].cmd(f"ping -c {n} -i 0.05 -W 5 -q {dst}")     # -W: slow is not lost
            assert f"{n} packets transmitted, {n} received" in out, out
        after = thrift.register_read("CIngress.rx_packets")
        assert thrift.register_read("CIngress.rx_packets", 2) == after[2]
    delta = [a - b for a, b in zip(after, before)]
    assert delta[1:4] == [8, 5, 3] and sum(delta) == 16, delta


def test_p4app_json_with_cli_input_and_l3_strategy_passes_all_pairs(capsys):
    """examples/p4app-lab: p4-utils' p4app.json (l3 strategy, cli_input per switch) on router.p4."""
    app = EXAMPLES / "p4app-lab" / "p4app.json"
    fabric = load_topology(app)
    assert fabric.format == "p4app" and fabric.program.name == "router.p4"
    assert [(h.name, h.ip, h.mac) for h in fabric.hosts()] == [
        ("h1", "10.1.1.2", "00:00:0a:01:01:02"), ("h2", "10.2.2.2", "00:00:0a:02:02:02"),
        ("h3", "10.2.3.2", "00:00:0a:02:03:02")]
    assert main(["run", str(app), "--check"]) == 0
    out = capsys.readouterr().out
    assert "router.p4" in out and "reachability: 6/6 host pairs" in out and "0 pair(s) unreachable" in out
    assert not leftovers()


def test_lossy_link_drops_about_its_loss_fraction(helper, tmp_path):
    """The p4app lab with ``loss: 30`` on the s1-s2 link: of 400 datagrams h1 -> h2 about 70% arrive
    (within 5 binomial standard deviations, ±46); the filter is on both ends of that link only."""
    lab = EXAMPLES / "p4app-lab"
    data = json.loads((lab / "p4app.json").read_text())
    data["p4_src"] = str((lab / data["p4_src"]).resolve())
    for conf in data["topology"]["switches"].values():
        conf["cli_input"] = str(lab / conf["cli_input"])
    data["topology"]["links"][3] = ["s1", "s2", {"loss": 30}]
    (tmp_path / "p4app.json").write_text(json.dumps(data))
    with FabricNetwork(load_topology(tmp_path / "p4app.json"), NetOptions(agents=False)) as net:
        for dev in ("s1-eth2", "s2-eth3"):
            assert "bpf" in links.show(net.netns, "tc", "filter", "show", "dev", dev, "egress")
        assert "bpf" not in links.show(net.netns, "tc", "filter", "show", "dev", "s1-eth1", "egress")
        hosts = Hosts(net, helper)
        rx = hosts.start("h2", "udprecv", "5001")
        hosts.send("h1", "udpsend", "10.2.2.2", "5001", "d:400:500:0", "pause:0.2", "end:12:50:0")
        got = Hosts.result(rx)
    n, p = 400, 0.7
    arrived = sum(1 for tag, _ in got if tag.startswith("d "))
    assert got[-1][0] == "end" and abs(arrived - n * p) < 5 * (n * p * (1 - p)) ** 0.5, arrived
