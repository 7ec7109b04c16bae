"""Host side of the congestion mechanism over loopback: TOS/CE reading, BECN reflection, paced CC senders,
runtime pushes, and the JSON command plumbing of a real agent process."""

from __future__ import annotations

import random
import socket
import time

import pytest

from dcnlab.controller.congestion.cct import TimeScale
from dcnlab.controller.congestion.params import CongestionParamError, HcaParams
from dcnlab.traffic import congestion_agent as ca
from dcnlab.traffic import wire
from dcnlab.traffic.agent import Agent
from dcnlab.traffic.cc import CE, ECT0, CnPacket
from dcnlab.traffic.hostctl import AgentError, AgentHandle, HostAddr

LO = "127.0.0.1"


def free_port() -> int:
    """A UDP port that is free right now on loopback (tests may run next to other dcnlab work)."""
    for _ in range(50):
        port = random.randint(20000, 60000)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.bind((LO, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free UDP port")


def sender_socket(tos: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    return s


def datagram(flow: int, seq: int, size: int = 100) -> bytes:
    return wire.pack(flow, seq, time.time_ns()) + bytes(size - wire.ETH_IP_UDP - wire.HEADER.size)


def wait_for(cond, timeout: float = 30.0) -> bool:
    """Whether ``cond()`` came true; ``timeout`` is a hang guard (what is waited for takes milliseconds)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_bin_index():
    assert [ca.bin_index(t, 10.0, 0.1) for t in (10.0, 10.05, 10.15, 10.99, 9.95)] == [0, 0, 1, 9, -1]


def test_receiver_reads_tos_counts_marks_and_reflects_one_cn_per_c_marks():
    port, cn_port = free_port(), free_port()
    cn_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    cn_sock.bind((LO, cn_port))
    cn_sock.settimeout(30)        # a hang guard: the CNs follow the marked datagrams at once
    rx = ca.CcReceiver(port, becn_every=3, cn_port=cn_port, epoch=time.time())
    try:
        plain, marked = sender_socket(ECT0), sender_socket(CE)
        for i in range(10):
            plain.sendto(datagram(5, i), (LO, port))
        for i in range(7):
            marked.sendto(datagram(5, 10 + i), (LO, port))
        marked.sendto(b"not a dcnlab datagram", (LO, port))
        assert wait_for(lambda: rx.report()["flows"].get("5", {}).get("packets") == 17 and rx.other == 1)
        cns = [CnPacket.unpack(cn_sock.recv(100)) for _ in range(2)]      # 7 marks, C = 3: two CNs
        assert [(c.flow, c.becns, c.marked) for c in cns] == [(5, 1, 3), (5, 1, 6)]
        cn_sock.settimeout(0.3)
        with pytest.raises(TimeoutError):
            cn_sock.recv(100)
    finally:
        rep = rx.stop()
        cn_sock.close()
    f = rep["flows"]["5"]
    assert (f["packets"], f["marked"], f["becns"], f["lost"], f["src"]) == (17, 7, 2, 0, LO)
    assert f["bytes"] == 17 * 100 and sum(b[1] for b in f["bins"]) == 17 and sum(b[3] for b in f["bins"]) == 7


def _start(host: ca.CongestionHost, flow: int, port: int, cn_port: int, **kw) -> dict:
    req = ca.flow_start_request(flow, LO, port, sport=0, size=120, nic_pps=kw.pop("nic_pps", 500),
                                params=kw.pop("params", HcaParams(ccti_increase=4, ccti_timer=40)),
                                scale=TimeScale.for_link(1000), cn_port=cn_port, **kw)
    return host.start_flow({k: v for k, v in req.items() if k != "cmd"})


def sent_in_a_window(flows: list, packets: int) -> tuple[list[int], float]:
    """Packets each of ``flows`` sent from now until together at least ``packets`` more, and the window's
    length as this thread measured it (which contains the senders' window: a bound on the rate over it is
    independent of the machine's load, which can only make a sender slower)."""
    t0 = time.monotonic()
    before = [f.stats()["packets"] for f in flows]
    assert wait_for(lambda: sum(f.stats()["packets"] for f in flows) - sum(before) >= packets, timeout=60)
    after = [f.stats()["packets"] for f in flows]
    return [a - b for a, b in zip(after, before)], time.monotonic() - t0


def test_cc_sender_paces_at_the_nic_rate_and_backs_off_on_becns():
    """Rates as upper bounds over measured windows (a pacer never sends faster; a busy machine only makes it
    slower), the CC state exactly. How fast the agent really sends is the BMv2 experiments' figure."""
    port, cn_port = free_port(), free_port()
    host = ca.CongestionHost()
    rx = ca.CcReceiver(port, cn_port=cn_port)
    host.receivers[port] = rx
    try:
        # CCTI_Timer 60 s: it must not fire during the test, however slow the machine
        assert _start(host, 9, port, cn_port, params=HcaParams(ccti_increase=30, ccti_timer=60000))["ccti"] == 0
        (sent,), window = sent_in_a_window([host.flows[9]], 100)
        s = host.flows[9].stats()
        assert sent <= 500 * window + 3 and s["ccti"] == 0 and s["send_errors"] == 0   # 500 packets/s, no CC
        # the switch's job, by hand: CE-marked packets of flow 9 -> 5 CNs -> CCTI = 5 x 30
        marked = sender_socket(CE)
        for i in range(5):
            marked.sendto(datagram(9, 10**6 + i), (LO, port))
        assert wait_for(lambda: host.flows[9].stats()["becns"] == 5)
        s = host.flows[9].stats()
        assert s["ccti"] == 150 and sum(b[2] for b in s["bins"]) == 5      # the timer (60 s here) did not fire
        # CCT[150] x 976.6 = 27.4 ms per aggregate of 4 packets: at most 146 packets/s instead of the NIC's 500
        (sent,), window = sent_in_a_window([host.flows[9]], 40)
        assert sent <= 146 * window + 8, (sent, window)
        up = host.flows[9].update(ccti_increase=7, ccti_timer=2000)
        assert up["ccti_increase"] == 7 and up["ccti_timer"] == 2000
        assert host.flows[9].cc.ccti.params.ccti_increase == 7
        assert _start(host, 9, port, cn_port) == {"error": "congestion: flow 9 is already running"}
    finally:
        out = host.reset()
    assert out["flows"]["9"]["becns"] == 5 and out["receivers"][str(port)]["flows"]["9"]["marked"] == 5
    assert host.flows == {} and host.listeners == {}


def test_cc_off_sender_ignores_becns_and_bad_parameters_name_the_field():
    port, cn_port = free_port(), free_port()
    host = ca.CongestionHost()
    try:
        _start(host, 3, port, cn_port, cc=False, nic_pps=200)
        host.flows[3].on_cn(CnPacket(3, 2))
        assert host.flows[3].stats()["becns"] == 2 and host.flows[3].stats()["ccti"] == 0
    finally:
        host.reset()
    with pytest.raises(CongestionParamError, match=r"CCTI_Increase=0 is out of range; valid: 1\.\.255"):
        host.start_flow({"flow": 1, "dst_ip": LO, "dport": port, "nic_pps": 100, "cn_port": cn_port,
                         "params": {"ccti_increase": 0}})
    with pytest.raises(ValueError, match="frame size 20 out of range"):
        host.start_flow({"flow": 2, "dst_ip": LO, "dport": port, "nic_pps": 100, "size": 20, "cn_port": cn_port})
    host.reset()


def test_flows_of_one_host_share_its_nic():
    port, cn_port = free_port(), free_port()
    host = ca.CongestionHost()
    rx = ca.CcReceiver(port, cn_port=cn_port)
    host.receivers[port] = rx
    try:
        _start(host, 1, port, cn_port, cc=False, nic_pps=400)
        _start(host, 2, port, cn_port, cc=False, nic_pps=400)
        assert len(host.nics) == 1
        sent, window = sent_in_a_window([host.flows[1], host.flows[2]], 400)
    finally:
        host.reset()
    # one 400 packets/s link for both, not 400 each (the parking lot's shared input port), taken in turn: each
    # flow gets a share (about half; a busy machine may delay one thread for a while, so a quarter at least)
    assert sum(sent) <= 400 * window + 4 and min(sent) >= 0.25 * sum(sent), (sent, window)


def test_dispatch_through_the_agent():
    agent = Agent()
    port = free_port()
    assert agent.handle({"cmd": "congestion.recv_start", "port": port}) == {"ok": True}
    assert "already receiving" in agent.handle({"cmd": "congestion.recv_start", "port": port})["error"]
    assert "no flow 4" in agent.handle({"cmd": "congestion.flow_update", "flow": 4, "ccti_increase": 2})["error"]
    assert "unknown verb 'dance'" in agent.handle({"cmd": "congestion.dance"})["error"]
    assert agent.handle({"cmd": "congestion.recv_stop", "port": port})["flows"] == {}
    assert "not receiving" in agent.handle({"cmd": "congestion.recv_stats", "port": port})["error"]


def test_agent_process_runs_flows_and_receivers_over_json():
    port, cn_port = free_port(), free_port()
    a = AgentHandle(HostAddr("lo", "lo", LO, "02:00:00:00:00:01"))
    try:
        epoch = time.time()
        assert a.call({"cmd": "congestion.recv_start", "port": port, "epoch": epoch, "cn_port": cn_port}) == {"ok": True}
        req = ca.flow_start_request(11, LO, port, sport=0, size=200, nic_pps=300,
                                    params=HcaParams(), scale=TimeScale.for_link(1000), epoch=epoch, cn_port=cn_port)
        assert a.call(req)["ok"] is True
        assert wait_for(lambda: a.call({"cmd": "congestion.flow_stats", "flow": 11})["packets"] > 100)
        assert a.call({"cmd": "congestion.flow_update", "flow": 11, "ccti_increase": 3})["ccti_increase"] == 3
        stats = a.call({"cmd": "congestion.flow_stats", "flow": 11})
        assert stats["ccti_increase"] == 3 and stats["packets"] > 100
        done = a.call({"cmd": "congestion.flow_stop", "flow": 11})
        assert wait_for(lambda: a.call({"cmd": "congestion.recv_stats", "port": port})["flows"]["11"]["packets"]
                        == done["packets"])
        got = a.call({"cmd": "congestion.recv_stop", "port": port})["flows"]["11"]
        assert got["marked"] == 0 and got["lost"] == 0
        assert min(b[0] for b in got["bins"]) >= 0 and sum(b[1] for b in got["bins"]) == done["packets"]
        with pytest.raises(AgentError, match="CCTI_Timer=0 is out of range"):
            a.call({**req, "params": {"ccti_timer": 0}})
    finally:
        a.close()


def test_a_late_sender_makes_up_missed_nic_slots_up_to_its_catch_up(monkeypatch):
    """The NIC is a token bucket of ``catch_up`` slots: a sender woken 50 ms late sends the slots it missed, at
    most ``catch_up`` of them at once (the former NIC made up one: every late wake-up was lost for good); a
    packet is never due before it was ready, so an idle NIC saves nothing."""
    now = [100.0]
    monkeypatch.setattr(ca.time, "monotonic", lambda: now[0])
    nic = ca.Nic(1000, catch_up=8)
    assert nic.reserve(100.0) == (100.0, 100.0)           # on time: its slot
    now[0] = 100.050                                       # woken 50 ms late, ready since 100.001
    slots = [nic.reserve(100.001) for _ in range(10)]
    assert slots[0] == (pytest.approx(100.042), pytest.approx(100.001))   # 8 slots back, no further
    assert [round(s - 100.042, 6) for s, _ in slots] == [round(0.001 * k, 6) for k in range(10)]
    assert all(s <= now[0] + 1e-9 for s, _ in slots[:9]) and slots[9][0] > now[0] + 1e-6   # 8 missed + this one
    now[0] = 200.0                                         # idle for 100 s, ready now: no burst saved up
    assert nic.reserve(200.0) == (200.0, 200.0)
    one = ca.Nic(1000)                                     # the default makes up one slot
    now[0] = 201.0
    assert one.reserve(200.5)[0] == pytest.approx(201.0 - 0.001)
    with pytest.raises(ValueError, match=r"nic_catch_up=0 is out of range; valid: 1\.\.64 packets"):
        ca.Nic(1000, catch_up=0)


def test_sender_timing_bins_and_jitter_keep_the_nic_rate():
    """Every sender bin says how late its packets left and its longest gap; with departure jitter (each packet
    up to its whole interval late, at random) the flow still never sends faster than its NIC (a bound that a
    busy machine cannot break: it only makes a sender slower); a jitter outside 0..1 names the field."""
    port, cn_port = free_port(), free_port()
    host = ca.CongestionHost()
    rx = ca.CcReceiver(port, cn_port=cn_port)
    host.receivers[port] = rx
    try:
        _start(host, 4, port, cn_port, cc=False, nic_pps=400, jitter=1.0, nic_catch_up=8)
        assert host.flows[4].jitter == 1.0 and host.flows[4].nic.catch_up == 8
        (sent,), window = sent_in_a_window([host.flows[4]], 200)
        rows = host.flows[4].stats()["bins"]
    finally:
        host.reset()
    assert sent <= 400 * window + 8 + 2, (sent, window)
    assert all(len(r) == 6 and r[4] >= 0 and r[5] > 0 for r in rows), rows
    with pytest.raises(ValueError, match=r"jitter=1\.5 is out of range; valid: 0\.\.1"):
        host.start_flow({"flow": 5, "dst_ip": LO, "dport": port, "nic_pps": 100, "cn_port": cn_port, "jitter": 1.5})
    host.reset()
