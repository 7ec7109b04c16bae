"""Host side of CIST broadcast: frames, sender, deduplicating receiver, striping with parity."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from dcnlab.traffic import cist_agent as ca
from dcnlab.traffic import wire
from dcnlab.traffic.hostctl import AgentError, AgentHandle, HostAddr, call_all
from waiting import wait_until

from agent_pair import in_ns
from dcnlab.emu.netns import exec_prefix

SRC_MAC, SRC_IP = "02:00:00:00:00:01", "10.0.0.1"


class FakeSocket:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def send(self, frame) -> int:
        self.frames.append(bytes(frame))
        return len(frame)


@pytest.fixture
def rx():
    r = ca.BroadcastReceiver(port=0)   # an ephemeral port; datagrams are fed by hand
    yield r
    r.stop()


def sent_frames(streams, count, size=128, seq0=0) -> list[bytes]:
    sock = FakeSocket()
    rep = ca.send(sock, ca.broadcast_frame(SRC_MAC, SRC_IP, size), [ca.Stream.parse(s) for s in streams], count,
                  seq0=seq0)
    assert rep["sent"] == count and rep["frames"] == len(sock.frames)
    return sock.frames


def feed(rx, frames, src=SRC_IP, drop=lambda f: False) -> None:
    for f in frames:
        if not drop(f):
            rx.handle(f[wire.ETH_IP_UDP:], src, time.time_ns())


def test_template_layout():
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    frame = ca.broadcast_frame(SRC_MAC, SRC_IP, 100)
    pkt = Ether(frame)
    assert len(frame) == 100 and pkt[UDP].dport == 7701 and pkt[UDP].chksum == 0 and pkt[IP].ttl == 64
    assert pkt[Ether].dst == "ff:ff:ff:ff:ff:ff" and pkt[IP].src == SRC_IP
    assert frame[ca.SHIM_OFFSET:ca.HEADER_OFFSET] == bytes([2, 0, 0, 0])     # kind 2, tree 0, group 0
    assert wire.unpack(frame[ca.HEADER_OFFSET:]) == (0, 0, 0)
    with pytest.raises(ValueError, match="valid: 74..1514"):
        ca.broadcast_frame(SRC_MAC, SRC_IP, 60)


def test_copies_on_every_tree_are_deduplicated(rx):
    frames = sent_frames([{"flow": 1, "trees": [0, 1, 2]}, {"flow": 2, "trees": [255]}], count=10)
    assert len(frames) == 10 * 4
    assert [f[ca.TREE_OFFSET] for f in frames[:4]] == [0, 1, 2, 255]
    feed(rx, frames)
    feed(rx, frames[:3])                                         # a late duplicate of seq 0 on every tree
    rep = rx.report(runs=True)["sources"][SRC_IP]
    assert rep["1"]["delivered"] == 10 and rep["1"]["dups"] == 2 * 10 + 3 and rep["1"]["missing"] == 0
    assert rep["1"]["per_tree"] == {"0": 11, "1": 11, "2": 11} and rep["1"]["runs"] == [[0, 9]]
    assert (rep["2"]["delivered"], rep["2"]["dups"], rep["2"]["copies"]) == (10, 0, 10)


def test_missing_and_expected_sources(rx):
    frames = sent_frames([{"flow": 1, "trees": [0, 1]}], count=8)
    lost_seq = {3, 4, 6}
    feed(rx, frames, drop=lambda f: wire.unpack(f[ca.HEADER_OFFSET:])[1] in lost_seq)
    rep = rx.report(runs=True, expect=[[SRC_IP, 1, 10], ["10.0.0.9", 1, 10]])["sources"]
    s = rep[SRC_IP]["1"]
    assert (s["delivered"], s["missing"], s["max_seq"], s["runs"]) == (5, 5, 7, [[0, 2], [5, 5], [7, 7]])
    assert rep["10.0.0.9"]["1"]["delivered"] == 0 and rep["10.0.0.9"]["1"]["missing"] == 10
    assert rx.report()["sources"][SRC_IP]["1"]["missing"] == 3           # without expect: gaps below max_seq


def test_one_tree_per_source_per_flow(rx):
    frames = sent_frames([{"flow": 4, "trees": [0, 1]}], count=3)
    feed(rx, frames, src="10.0.0.2")
    feed(rx, frames, src="10.0.0.3")
    rx.handle(b"\x01\x00\x00\x00" + frames[0][ca.HEADER_OFFSET:], "10.0.0.2", 0)   # multicast kind: not ours
    rx.handle(b"garbage", "10.0.0.2", 0)
    rep = rx.report()
    assert rep["other"] == 2 and set(rep["sources"]) == {"10.0.0.2", "10.0.0.3"}
    assert all(v["4"]["delivered"] == 3 and v["4"]["dups"] == 3 for v in rep["sources"].values())


@pytest.mark.parametrize("k", [2, 3, 4])
def test_stripe_survives_any_one_tree_lost(rx, k):
    trees = list(range(10, 10 + k))
    frames = sent_frames([{"flow": 7, "trees": trees, "mode": "stripe"}], count=4 * k, size=300)
    assert len(frames) == 4 * k * k
    for lost_tree in trees:
        rx.streams.clear()
        feed(rx, frames, drop=lambda f, t=lost_tree: f[ca.TREE_OFFSET] == t)
        s = rx.report()["sources"][SRC_IP]["7"]
        assert (s["delivered"], s["missing"], s["corrupt"], s["dups"]) == (4 * k, 0, 0, 0)
        # the parity rotates: a lost tree costs a data chunk in (k-1)/k of the broadcasts, rebuilt from parity
        assert s["recovered"] == 4 * (k - 1)
    rx.streams.clear()
    feed(rx, frames)
    s = rx.report()["sources"][SRC_IP]["7"]
    assert (s["delivered"], s["recovered"], s["dups"]) == (4 * k, 0, 4 * k)
    # chunks carry distinct data, stripes are not copies (but for k = 2 the parity of one chunk is that chunk)
    assert len({f[ca.CHUNK_OFFSET:] for f in frames[:k]}) == (k if k > 2 else 1)


def test_stripe_two_trees_lost_is_missing_and_tampering_is_caught(rx):
    frames = sent_frames([{"flow": 7, "trees": [0, 1, 2], "mode": "stripe"}], count=6, size=200)
    feed(rx, frames, drop=lambda f: f[ca.TREE_OFFSET] in (0, 1))
    s = rx.report(expect=[[SRC_IP, 7, 6]])["sources"][SRC_IP]["7"]
    assert (s["delivered"], s["missing"], s["incomplete"]) == (0, 6, 6)
    rx.streams.clear()
    bad = bytearray(frames[0])
    bad[-1] ^= 0xFF
    feed(rx, [bytes(bad), frames[1]])
    assert rx.report()["sources"][SRC_IP]["7"]["corrupt"] == 1


def test_bad_requests():
    with pytest.raises(ValueError, match="valid: copies, stripe"):
        ca.Stream.parse({"flow": 1, "trees": [0], "mode": "raid"})
    with pytest.raises(ValueError, match="at least 2 trees"):
        ca.Stream.parse({"flow": 1, "trees": [0], "mode": "stripe"})
    with pytest.raises(ValueError, match="0..255"):
        ca.Stream.parse({"flow": 1, "trees": [300]})
    with pytest.raises(ValueError, match="not a broadcast frame"):
        ca.send(FakeSocket(), b"\0" * 100, [ca.Stream(1, (0,), "copies")], 1)

    class Agent:
        ext: dict = {}
    assert "unknown verb" in ca.handle(Agent(), "nope", {})["error"]
    assert "not receiving" in ca.handle(Agent(), "recv_stop", {"port": 1})["error"]


def sh(cmd: str) -> str:
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout


@pytest.mark.netns
def test_agents_over_a_veth_pair():
    """Two agents in two namespaces: the sender's frames arrive as UDP broadcasts on port 7701."""
    tag = uuid.uuid4().hex[:6]
    a_ns, b_ns, a_if, b_if = f"dca{tag}", f"dcb{tag}", f"dca{tag}0", f"dcb{tag}0"
    sh(f"ip netns add {a_ns} && ip netns add {b_ns}")
    agents = []
    try:
        sh(f"ip link add {a_if} netns {a_ns} type veth peer name {b_if} netns {b_ns}")
        for ns, dev, ip in ((a_ns, a_if, "10.0.0.1"), (b_ns, b_if, "10.0.0.2")):
            in_ns(ns, "ip", "addr", "add", f"{ip}/8", "dev", dev)
            in_ns(ns, "ip", "link", "set", dev, "up")
        a = AgentHandle(HostAddr("a", a_if, "10.0.0.1", SRC_MAC), exec_prefix(a_ns))
        b = AgentHandle(HostAddr("b", b_if, "10.0.0.2", "02:00:00:00:00:02"), exec_prefix(b_ns))
        agents = [a, b]
        call_all(agents, [{"cmd": "cist.recv_start"}] * 2)
        frame = ca.broadcast_frame(SRC_MAC, "10.0.0.1", 256)
        req = ca.send_request(a_if, frame, [(1, [0, 1]), (2, [255])], count=50, rate_pps=500)
        rep = a.call(req)
        assert rep["frames"] == 150 and rep["seconds"] >= 49 / 500 * 0.99
        a.call(ca.send_request(a_if, frame, [(3, [0, 1, 2])], count=20, mode="stripe"))
        wait_until(lambda: b.call({"cmd": "cist.count"})["copies"] >= 150 + 60, "every copy arrives at b")
        assert b.call({"cmd": "cist.count"}) == {"copies": 150 + 60}
        got = b.call({"cmd": "cist.recv_stop", "expect": [["10.0.0.1", 1, 50]], "runs": True})
        s = got["sources"]["10.0.0.1"]
        assert (s["1"]["delivered"], s["1"]["dups"], s["1"]["missing"], s["1"]["runs"]) == (50, 50, 0, [[0, 49]])
        assert (s["2"]["delivered"], s["2"]["dups"]) == (50, 0)
        assert (s["3"]["delivered"], s["3"]["recovered"], s["3"]["corrupt"]) == (20, 0, 0)
        with pytest.raises(AgentError, match="not receiving on port 7701"):
            b.call({"cmd": "cist.recv_peek"})
    finally:
        for ag in agents:
            ag.close()
        sh(f"ip netns del {a_ns}; ip netns del {b_ns}")
