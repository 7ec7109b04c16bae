"""Traffic agents over a veth pair between two network namespaces (root only)."""

from __future__ import annotations

import pytest
from agent_pair import agent_pair

from dcnlab.traffic import measure, wire
from dcnlab.traffic.hostctl import call_all
from waiting import received, wait_received

pytestmark = pytest.mark.netns


@pytest.fixture
def pair():
    with agent_pair("dl") as ab:
        yield ab


def test_flow_arrives_complete(pair):
    a, b = pair
    b.call({"cmd": "recv_start", "port": 5001, "bin": 0.05})
    sent = a.call(a.send_request(b.host, count=500, size=300, flow=3))
    assert sent == {"sent": 500, "bytes": 150000, "seconds": sent["seconds"]}
    wait_received(b, 5001, 3, 500)
    rep = b.call({"cmd": "recv_stop", "port": 5001})
    f = rep["flows"]["3"]
    assert (f["packets"], f["unique"], f["bytes"], f["dups"], f["lost"]) == (500, 500, 150000, 0, 0)
    assert f["lat_us"][0] > 0 and f["lat_us"][0] <= f["lat_us"][1] <= f["lat_us"][2]
    series = measure.flow_series(rep, 3)
    assert sum(mbps * rep["bin"] * 1e6 / 8 for _, mbps in series) == pytest.approx(150000)


def test_duplicates_and_losses_are_counted(pair):
    a, b = pair
    b.call({"cmd": "recv_start", "port": 6000})
    req = a.send_request(b.host, count=10, size=100, dport=6000, flow=9)
    a.call(req)
    a.call(dict(req, count=5))                 # seq 0..4 again: 5 duplicates
    a.call(dict(req, count=5, seq=20))          # seq 20..24: 10..19 never sent -> lost
    f = received(b, 6000, 9, 20)
    assert (f["packets"], f["dups"], f["unique"], f["max_seq"], f["lost"]) == (20, 5, 15, 24, 10)


def test_pacing_spaces_packets(pair):
    a, b = pair
    rep = a.call(a.send_request(b.host, count=21, size=100, rate_pps=200))
    assert rep["seconds"] >= 20 / 200 * 0.99


def test_concurrent_calls(pair):
    a, b = pair
    call_all([a, b], [{"cmd": "recv_start", "port": 9999}] * 2)
    call_all([a, b], [a.send_request(b.host, 1, wire.MIN_FRAME, dport=9999, flow=1),
                      b.send_request(a.host, 1, wire.MIN_FRAME, dport=9999, flow=2)])
    wait_received(b, 9999, 1, 1)
    wait_received(a, 9999, 2, 1)
    ra, rb = call_all([a, b], [{"cmd": "recv_stop", "port": 9999}] * 2)
    assert set(ra["flows"]) == {"2"} and set(rb["flows"]) == {"1"}
    assert rb["flows"]["1"]["bytes"] == wire.MIN_FRAME


def test_bad_requests_get_errors_not_crashes(pair):
    a, _ = pair
    from dcnlab.traffic.hostctl import AgentError
    with pytest.raises(AgentError, match="unknown command"):
        a.call({"cmd": "dance"})
    with pytest.raises(ValueError, match="frame size 20 out of range"):
        a.send_request(a.host, count=1, size=20)
    req = {"cmd": "send", "iface": a.host.iface, "src_mac": a.host.mac, "dst_mac": a.host.mac,
           "src_ip": a.host.ip, "dst_ip": a.host.ip, "dport": 1, "count": 1, "size": 20}
    with pytest.raises(AgentError, match="frame size 20 out of range"):
        a.call(req)                              # the agent crafts (and checks) the frame itself
    assert a.call(dict(req, size=80))["bytes"] == 80
    assert a.call({"cmd": "ping"}) == {"pong": True}
