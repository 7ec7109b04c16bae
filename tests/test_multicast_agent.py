"""Host side of C-MR4LMS multicast: frames, sender, receiver (MGID filter, exactly-once accounting), dispatch."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from dcnlab.traffic import multicast_agent as ma
from dcnlab.traffic import wire
from dcnlab.traffic.agent import Agent
from waiting import wait_until


def _payload(mgid: int, color: int, flow: int, seq: int, kind: int = ma.KIND_MULTICAST) -> bytes:
    return ma.SHIM.pack(kind, color, mgid) + wire.pack(flow, seq, time.time_ns()) + b"\0" * 10


def test_frame_template_layout():
    f = ma.multicast_frame("02:00:00:00:00:01", "10.0.0.1", 128)
    assert len(f) == 128
    assert f[:6] == bytes.fromhex("01005e7f0001") and f[12:14] == b"\x08\x00"
    assert socket.inet_ntoa(f[30:34]) == "239.255.0.1" and f[23] == 17
    assert int.from_bytes(f[36:38], "big") == ma.UDP_PORT_TREE
    assert f[ma.SHIM_OFFSET] == ma.KIND_MULTICAST
    with pytest.raises(ValueError, match=r"out of range; valid: 70\.\.1514"):
        ma.multicast_frame("02:00:00:00:00:01", "10.0.0.1", 60)


def test_sender_patches_color_group_and_sequence_per_stream():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    template = ma.multicast_frame("02:00:00:00:00:01", "10.0.0.1", 100)
    streams = [ma.Stream(7, 1, 3), ma.Stream(300, 2, 4)]
    rep = ma.send(a, template, streams, 3, rate_pps=0, seq0=10)
    assert rep["sent"] == 3 and rep["frames"] == 6 and rep["bytes"] == 600
    got = [b.recv(2000) for _ in range(6)]
    seen = []
    for fr in got:
        kind, color, mgid = ma.SHIM.unpack_from(fr, ma.SHIM_OFFSET)
        flow, seq, _ = wire.unpack(fr[ma.HEADER_OFFSET:])
        assert kind == ma.KIND_MULTICAST and len(fr) == 100
        seen.append((mgid, color, flow, seq))
    assert seen == [(7, 1, 3, 10), (300, 2, 4, 10), (7, 1, 3, 11), (300, 2, 4, 11), (7, 1, 3, 12), (300, 2, 4, 12)]
    with pytest.raises(ValueError, match="not a multicast frame template"):
        ma.send(a, b"\0" * 80, streams, 1)
    a.close()
    b.close()


def test_receiver_accepts_by_mgid_and_counts_exactly_once():
    joined = {5}
    rx = ma.GroupReceiver(joined, threading.Lock(), bind=False)
    for seq in (0, 1, 1, 2, 2, 2):                     # seq 1 twice, seq 2 three times; seq 3 never
        rx.handle(_payload(5, 1, 9, seq), "10.0.0.1", time.time_ns())
    for seq in (0, 1):
        assert not rx.handle(_payload(6, 1, 9, seq), "10.0.0.1", time.time_ns())   # not a member: filtered
    rx.handle(_payload(5, 1, 9, 0, kind=2), "10.0.0.1", time.time_ns())          # a broadcast copy
    rx.handle(b"junk", "10.0.0.1", time.time_ns())
    rep = rx.report(expect=[[5, "10.0.0.1", 9, 4], [5, "10.0.0.2", 9, 2]], seqs=True, runs=True)
    s = rep["groups"]["5"]["10.0.0.1"]["9"]
    assert (s["copies"], s["delivered"], s["dups"], s["missing"]) == (6, 3, 3, 1)
    assert s["by_copies"] == {"1": 1, "2": 1, "3": 1} and s["seqs"] == [1, 2, 3, 0] and s["runs"] == [[0, 2]]
    silent = rep["groups"]["5"]["10.0.0.2"]["9"]
    assert (silent["delivered"], silent["missing"], silent["lat_us"]) == (0, 2, None)
    assert rep["filtered"] == {"6": {"10.0.0.1": {"9": 2}}} and "6" not in rep["groups"]
    assert rep["other"] == 2 and rep["joined"] == [5]
    joined.add(6)                                        # joining later: later copies are delivered
    assert rx.handle(_payload(6, 1, 9, 7), "10.0.0.1", time.time_ns())
    assert rx.report()["groups"]["6"]["10.0.0.1"]["9"]["delivered"] == 1


def _free_udp_port() -> int:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_agent_dispatch_over_a_real_socket():
    agent = Agent()
    port = _free_udp_port()
    assert agent.handle({"cmd": "multicast.join", "mgid": 3}) == {"joined": [3]}
    assert agent.handle({"cmd": "multicast.join", "mgid": 4}) == {"joined": [3, 4]}
    assert agent.handle({"cmd": "multicast.leave", "mgid": 4}) == {"joined": [3]}
    assert agent.handle({"cmd": "multicast.groups"}) == {"joined": [3]}
    assert agent.handle({"cmd": "multicast.recv_start", "port": port}) == {"ok": True}
    assert "already receiving" in agent.handle({"cmd": "multicast.recv_start", "port": port})["error"]
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for seq in range(4):
        tx.sendto(_payload(3, 0, 1, seq), ("127.0.0.1", port))
        tx.sendto(_payload(3, 0, 1, seq), ("127.0.0.1", port))
        tx.sendto(_payload(4, 0, 1, seq), ("127.0.0.1", port))
    tx.close()
    def arrived() -> bool:
        peek = agent.handle({"cmd": "multicast.recv_peek", "port": port})
        return peek["groups"].get("3", {}).get("127.0.0.1", {}).get("1", {}).get("copies") == 8 and \
            peek["filtered"].get("4", {}).get("127.0.0.1", {}).get("1") == 4

    wait_until(arrived, "8 copies of group 3 and 4 filtered datagrams of group 4")
    rep = agent.handle({"cmd": "multicast.recv_stop", "port": port, "expect": [[3, "127.0.0.1", 1, 4]]})
    s = rep["groups"]["3"]["127.0.0.1"]["1"]
    assert (s["copies"], s["delivered"], s["dups"], s["missing"]) == (8, 4, 4, 0)
    assert rep["filtered"]["4"]["127.0.0.1"]["1"] == 4
    assert "not receiving" in agent.handle({"cmd": "multicast.recv_stop", "port": port})["error"]


def test_agent_errors_name_the_problem():
    agent = Agent()
    assert "valid: join, leave" in agent.handle({"cmd": "multicast.nope"})["error"]
    assert "mgid 70000 is out of range; valid: 0..65535" in agent.handle({"cmd": "multicast.join", "mgid": 70000})["error"]
    with pytest.raises(ValueError, match=r"color 300 is out of range; valid: 0\.\.255"):
        ma.Stream.parse({"mgid": 1, "color": 300})
    with pytest.raises(ValueError, match=r"mgid -1 is out of range"):
        ma.Stream.parse({"mgid": -1, "color": 0})


def test_send_request_shape():
    req = ma.send_request("h0-eth0", b"\x01\x02", [(5, 1, 2)], 10, 20.0, 3, 0.5)
    assert req == {"cmd": "multicast.send", "iface": "h0-eth0", "frame": "0102", "count": 10, "rate_pps": 20.0,
                   "seq": 3, "offset_s": 0.5, "streams": [{"mgid": 5, "color": 1, "flow": 2}]}
