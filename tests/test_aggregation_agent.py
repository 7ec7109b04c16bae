"""Host side of the aggregation job: sender window and retransmission, receiver acknowledgements, requests
for missing chunks, host-side merging; and the agent's commands over a veth pair (marker ``netns``)."""

from __future__ import annotations

import pytest

from agent_pair import agent_pair, udp_no_ports
from dcnlab.traffic.aggregation_agent import (FRAME_SIZE, HEADER_OFFSET, MAX_VALUE, OVERFLOW, RESULT, RETX, VALUES,
                                       TreeReceiver, TreeSender, chunk_frame, pack_chunk, pack_ctrl, unpack_chunk,
                                       unpack_ctrl)
from waiting import wait_until

TEMPLATE = bytes(FRAME_SIZE)


def sender(values, window=4, sent=None):
    out = sent if sent is not None else []
    return TreeSender(1, 2, 3, values, window, 0, TEMPLATE, out.append), out


def drain(s):
    while (item := s.poll()) is not None:
        s.send_chunk(*item)


def test_sender_keeps_to_its_window_and_resends_what_is_asked():
    s, out = sender(list(range(10 * VALUES)), window=4)
    drain(s)
    chunks = [unpack_chunk(f[HEADER_OFFSET:]) for f in out]
    assert [c.chunk for c in chunks] == [0, 1, 2, 3]
    assert chunks[2].values == tuple(range(32, 48)) and chunks[2].contributor == 3 and chunks[2].count == 16
    s.on_ack(2, [2, 3, 7])                       # 7 was never sent: not resent, sent in turn later
    drain(s)
    assert [unpack_chunk(f[HEADER_OFFSET:]).chunk for f in out[4:]] == [2, 3, 4, 5]
    assert [bool(unpack_chunk(f[HEADER_OFFSET:]).flags & RETX) for f in out[4:]] == [True, True, False, False]
    s.on_ack(10, [])
    assert s.complete and s.poll() is None
    assert (s.sent, s.retransmitted, s.acks) == (8, 2, 2)


def test_last_chunk_carries_only_the_values_left():
    s, out = sender(list(range(VALUES + 3)), window=8)
    drain(s)
    last = unpack_chunk(out[-1][HEADER_OFFSET:])
    assert last.count == 3 and last.values == (16, 17, 18)
    with pytest.raises(ValueError, match="unsigned 32-bit"):
        sender([MAX_VALUE + 1])


class Ctrl:
    def __init__(self):
        self.sent = []

    def __call__(self, ip, msg):
        self.sent.append((ip, unpack_ctrl(msg)))


def result(chunk, values, flags=RESULT):
    return unpack_chunk(pack_chunk(1, 2, chunk, 0, values, flags))


def test_receiver_acknowledges_every_half_window_and_at_the_end():
    ctrl = Ctrl()
    r = TreeReceiver(1, 2, 8 * VALUES, 0, 4, 0.5, ["a", "b"], ctrl, start_at=0.0)
    r.on_chunk(result(1, [1] * 16), 0.1)
    assert r.cum == 0 and ctrl.sent == []
    r.on_chunk(result(0, [2] * 16), 0.2)
    assert r.cum == 2 and ctrl.sent == [("a", (1, 2, 2, [])), ("b", (1, 2, 2, []))]
    r.on_chunk(result(0, [9] * 16), 0.3)
    assert r.duplicates == 1 and r.result[:16] == [2] * 16
    r.on_chunk(unpack_chunk(pack_chunk(1, 2, 3, 0, [1] * 16)), 0.3)     # not a result: not for this receiver
    assert r.stray == 1
    for c in range(2, 8):
        r.on_chunk(result(c, [c] * 16, RESULT | OVERFLOW if c == 5 else RESULT), 1.0)
    assert r.complete and r.done_at == 1.0 and r.finished.is_set()
    assert ctrl.sent[-1] == ("b", (1, 2, 8, [])) and sorted(r.overflow) == [5]


def test_receiver_asks_for_missing_chunks_after_rto():
    ctrl = Ctrl()
    r = TreeReceiver(1, 2, 8 * VALUES, 0, 4, 0.5, ["a"], ctrl, start_at=0.0)
    r.on_chunk(result(1, [1] * 16), 0.1)
    r.tick(0.55)
    assert ctrl.sent == []                       # progress 0.45 s ago
    r.tick(0.7)
    assert ctrl.sent == [("a", (1, 2, 0, [0, 2, 3]))] and r.requests == 1
    r.tick(0.8)
    assert len(ctrl.sent) == 1                   # once per rto ...
    r.tick(1.6)
    assert len(ctrl.sent) == 1                   # ... doubled while nothing completes
    r.tick(1.75)
    assert len(ctrl.sent) == 2 and r.backoff == 4
    r.on_chunk(result(0, [1] * 16), 1.8)
    assert r.backoff == 1


def test_host_merges_streams_saturating_and_asks_only_the_missing_sender():
    ctrl = Ctrl()
    r = TreeReceiver(1, 2, 2 * VALUES, 3, 8, 0.5, ["s0", "s1", "s2"], ctrl, start_at=0.0)
    raw = lambda chunk, cid, values: unpack_chunk(pack_chunk(1, 2, chunk, cid, values))
    r.on_chunk(raw(0, 0, [MAX_VALUE - 1] + [1] * 15), 0.1)
    r.on_chunk(raw(0, 1, [5] + [2] * 15), 0.1)
    r.on_chunk(raw(0, 1, [5] + [2] * 15), 0.1)  # a duplicate is not added twice
    r.on_chunk(raw(0, 2, [0] * 16), 0.1)
    assert r.done[0] and r.result[:16] == [MAX_VALUE] + [3] * 15 and r.overflow == {0} and r.duplicates == 1
    r.on_chunk(raw(1, 0, [1] * 16), 0.2)
    r.on_chunk(raw(1, 2, [1] * 16), 0.2)
    r.on_chunk(result(1, [1] * 16), 0.2)        # a result in a host-merged tree: stray
    assert r.stray == 1
    r.tick(1.0)
    assert ctrl.sent == [("s0", (1, 2, 1, [])), ("s1", (1, 2, 1, [1])), ("s2", (1, 2, 1, []))]


def test_control_message_round_trip():
    assert unpack_ctrl(pack_ctrl(7, 8, 9, [1, 5])) == (7, 8, 9, [1, 5])
    assert unpack_ctrl(b"junk") is None
    assert unpack_ctrl(pack_ctrl(7, 8, 9, [1, 5])[:-2]) is None


# -- the agent's commands over a veth pair ----------------------------------------------------------------------
@pytest.fixture
def pair():
    with agent_pair("dg") as ab:
        yield ab


@pytest.mark.netns
def test_a_receiver_that_starts_late_gets_everything_resent(pair):
    """The sender's first transmissions find no receiver; the receiver's request brings them again."""
    a, b = pair
    values = [i * 7 % 1000 for i in range(5 * VALUES)]
    frame = chunk_frame(a.host.mac, b.host.mac, a.host.ip, b.host.ip)
    missed = udp_no_ports(b.netns)
    a.call({"cmd": "aggregation.send", "job": 3, "tree": 1, "contributor": 0, "values": values, "window": 8,
            "rate_pps": 0, "iface": a.host.iface, "frame": frame.hex()})
    # all five chunks reached b before its receiver (b's kernel counted them for a closed port)
    wait_until(lambda: udp_no_ports(b.netns) - missed >= 5, "the five chunks arrive at b before its receiver")
    b.call({"cmd": "aggregation.recv", "job": 3, "tree": 1, "length": len(values), "host_inputs": 1, "window": 8,
            "rto": 0.2, "senders": [a.host.ip]})
    # the timeout is a hang guard: the resent chunks come in a fraction of a second
    assert b.call({"cmd": "aggregation.wait", "job": 3, "timeout": 60}) == {"complete": True, "trees": 1}
    (recv,) = b.call({"cmd": "aggregation.stop", "job": 3})["reports"]
    (send,) = a.call({"cmd": "aggregation.stop", "job": 3})["reports"]
    assert recv["result"] == values and recv["requests"] >= 1 and recv["complete"]
    assert send["retransmitted"] >= 5 and send["acked"] == 5
    with pytest.raises(Exception, match="unknown command aggregation.nope"):
        a.call({"cmd": "aggregation.nope"})
