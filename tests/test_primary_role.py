"""Losing the primary role to another controller, and handing switches over on purpose.

The fake P4Runtime server arbitrates as BMv2's (PI) does, so these run without BMv2; the last test
does the same against a real BMv2 switch of a running network."""

from __future__ import annotations

import ipaddress
import logging
import os
import time

import grpc
import pytest

from dcnlab.controller.rules import HOST_TABLE
from dcnlab.controller.runtime import Controller, MultiSwitchError, SwitchError, SwitchTarget, TableEntry
from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
from dcnlab.controller.runtime.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc
from p4fixtures import pipeline

LOGGER = "dcnlab.controller.runtime.client"


def entry(ip: str, port: int) -> TableEntry:
    return TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": ip}, "DcnIngress.fwd.set_port", {"port": port})


def wait_for(cond, timeout: float = 30.0) -> float:
    """Seconds until ``cond()`` held. ``timeout`` is a hang guard, not a benchmark: what these tests wait for
    takes milliseconds on an idle machine (a stream message, a watcher round), seconds on a busy one."""
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"not within {timeout} s"
        time.sleep(0.01)
    return time.monotonic() - t0


@pytest.fixture
def servers():
    ss = [FakeP4RuntimeServer().start() for _ in range(2)]
    yield ss
    for s in ss:
        s.stop()


@pytest.fixture
def ctl(servers):
    c = Controller(pipeline(), [SwitchTarget(f"s{i}", i, s.addr) for i, s in enumerate(servers)])
    c.start()
    yield c
    c.close()


def intruder(server: FakeP4RuntimeServer, election_id: tuple[int, int] = (0, 2), name: str = "intruder") -> SwitchClient:
    return SwitchClient(name, 0, server.addr, election_id)


# -- the fake server arbitrates as PI does ----------------------------------------------------
class RawStream:
    """A bare StreamChannel, to see exactly what the server sends."""

    def __init__(self, addr: str) -> None:
        import queue
        self.channel = grpc.insecure_channel(addr)
        self.out: queue.Queue = queue.Queue()
        self.responses = p4runtime_pb2_grpc.P4RuntimeStub(self.channel).StreamChannel(iter(self.out.get, None))

    def arbitrate(self, election_id: tuple[int, int], device_id: int = 0) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = election_id
        self.out.put(req)

    def next(self) -> p4runtime_pb2.MasterArbitrationUpdate:
        return next(self.responses).arbitration

    def close(self) -> None:
        self.out.put(None)
        self.responses.cancel()
        self.channel.close()


def test_fake_server_notifies_the_old_primary_like_pi(servers):
    s = servers[0]
    a, b = RawStream(s.addr), RawStream(s.addr)
    try:
        a.arbitrate((0, 1))
        first = a.next()
        assert first.status.code == code_pb2.OK and (first.election_id.high, first.election_id.low) == (0, 1)
        b.arbitrate((0, 2))
        new = b.next()
        assert new.status.code == code_pb2.OK and new.status.message == "Is primary"
        lost = a.next()           # PI's notify_all: the old primary is told it is a backup now
        assert lost.status.code == code_pb2.ALREADY_EXISTS and lost.status.message == "Is backup"
        assert (lost.election_id.high, lost.election_id.low) == (0, 2)
        assert s.primary_election_id == (0, 2)
        c = RawStream(s.addr)     # an election id in use ends the stream, as in PI
        c.arbitrate((0, 2))
        with pytest.raises(grpc.RpcError) as e:
            c.next()
        assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "Election id already exists" in e.value.details()
        c.close()
        b.close()                 # the primary leaves: the backup becomes primary again
        back = a.next()
        assert back.status.code == code_pb2.OK and (back.election_id.high, back.election_id.low) == (0, 1)
    finally:
        a.close()
        b.close()


def test_fake_server_refuses_writes_from_a_backup(servers):
    s = servers[0]
    a, b = RawStream(s.addr), RawStream(s.addr)
    try:
        a.arbitrate((0, 5))
        a.next()
        b.arbitrate((0, 3))
        assert b.next().status.code == code_pb2.ALREADY_EXISTS
        stub = p4runtime_pb2_grpc.P4RuntimeStub(b.channel)
        req = p4runtime_pb2.WriteRequest(device_id=0)
        req.election_id.low = 3
        with pytest.raises(grpc.RpcError) as e:
            stub.Write(req)
        assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED and e.value.details() == "Not primary"
        req.election_id.low = 5      # the primary's id, but no pipeline yet
        with pytest.raises(grpc.RpcError) as e:
            stub.Write(req)
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        with pytest.raises(grpc.RpcError) as e:
            stub.GetForwardingPipelineConfig(p4runtime_pb2.GetForwardingPipelineConfigRequest(device_id=0))
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        a.close()
        b.close()


def test_fake_server_takes_sixteen_streams_as_pi_does(servers):
    streams = [RawStream(servers[0].addr) for _ in range(17)]
    try:
        for i, st in enumerate(streams[:16]):
            st.arbitrate((0, i + 1))
            st.next()
        streams[16].arbitrate((0, 99))
        with pytest.raises(grpc.RpcError) as e:
            streams[16].next()
        assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        for st in streams:
            st.close()


# -- dcnlab notices that it lost the primary role ---------------------------------------------
def test_lost_primary_is_noticed_logged_once_and_writes_are_refused(servers, ctl, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    ctl.write({"s0": [+entry("10.0.0.1", 1)]})
    writes = len(servers[0].write_requests)
    other = intruder(servers[0])
    try:
        wait_for(lambda: ctl.lost_primary() == ["s0"])
        assert len(servers[0].write_requests) == writes        # noticed from the stream, not by a failed write
        c = ctl.client("s0")
        assert not c.primary and c.lost_primary and c.primary_election_id == (0, 2)
        assert ctl.client("s1").primary and ctl.handed_over() == []
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert [r.getMessage() for r in warnings] == [
            "s0: another controller became primary (election id 2, above dcnlab's 1); dcnlab stops writing to s0"]
        with pytest.raises(SwitchError) as e:
            ctl.write({"s0": [+entry("10.0.0.2", 1)]})
        assert e.value.switch == "s0" and "lost the primary role" in str(e.value) and "s0" in str(e.value)
        assert "election id 2" in str(e.value)
        with pytest.raises(SwitchError, match="s0: SetForwardingPipelineConfig failed: .*lost the primary role"):
            ctl.push_pipeline(["s0"])
        assert len(servers[0].write_requests) == writes       # nothing was sent
        # the other switches are written; the lost one is named
        with pytest.raises(SwitchError, match="^s0: "):
            ctl.write({"s0": [+entry("10.0.0.3", 1)], "s1": [+entry("10.0.0.3", 1)]})
        assert len(servers[1].entities("table_entry")) == 1
        other.write(ctl.pipeline.p4info, [+entry("10.0.0.9", 2)])   # the new primary writes
        # a third controller above the second: still one warning
        third = intruder(servers[0], (0, 3))
        wait_for(lambda: c.primary_election_id == (0, 3))
        third.close()
        assert len([r for r in caplog.records if r.levelno == logging.WARNING and r.getMessage().startswith("s0:")]) == 1
    finally:
        other.close()
    # the other controller left: PI makes dcnlab primary again, and it may write again
    wait_for(lambda: ctl.client("s0").primary)
    assert ctl.lost_primary() == []
    ctl.write({"s0": [+entry("10.0.0.4", 1)]})
    assert any("dcnlab is primary again" in r.getMessage() for r in caplog.records if r.levelno == logging.INFO)


def test_a_write_in_several_batches_stops_at_the_loss(servers, ctl):
    c = ctl.client("s0")
    other = intruder(servers[0])
    try:
        wait_for(lambda: not c.primary)
        with pytest.raises(SwitchError, match="lost the primary role"):
            c.write(ctl.pipeline.p4info, [+entry(f"10.0.1.{i}", 1) for i in range(10)], batch=3)
        assert servers[0].write_requests == []
    finally:
        other.close()


def test_watch_does_not_reconnect_a_switch_lost_to_another_controller(servers, ctl):
    ctl.watch(interval=0.05)
    other = intruder(servers[0])
    try:
        wait_for(lambda: ctl.lost_primary() == ["s0"])
        arbitrations, pushes = len(servers[0].arbitrations), servers[0].pipeline_pushes
        servers[0].restart()            # both streams drop; dcnlab must not grab the switch back
        servers[1].restart()            # s1 is dcnlab's: the watcher brings it back
        wait_for(lambda: servers[1].pipeline_pushes == 2)
        time.sleep(0.3)
        assert len(servers[0].arbitrations) == arbitrations and servers[0].pipeline_pushes == pushes
        assert ctl.lost_primary() == ["s0"]
    finally:
        other.close()


def test_reconnect_fails_at_once_when_another_controller_is_primary(servers, ctl):
    other = intruder(servers[0])
    try:
        wait_for(lambda: ctl.lost_primary() == ["s0"])
        tried = len(servers[0].arbitrations)
        with pytest.raises(SwitchError, match="s0: arbitration failed: ALREADY_EXISTS"):
            ctl.reconnect("s0")
        assert len(servers[0].arbitrations) == tried + 1        # at once: one arbitration, no retries
    finally:
        other.close()


# -- stepping down on purpose --------------------------------------------------------------------
def test_step_down_hands_switches_over(servers, ctl, caplog):
    caplog.set_level(logging.INFO, logger="dcnlab.controller.runtime")
    ctl.write({"s0": [+entry("10.0.0.1", 1)]})
    ctl.watch(interval=0.05)
    ctl.step_down(["s0"])
    assert ctl.handed_over() == ["s0"] and ctl.lost_primary() == []
    wait_for(lambda: servers[0].streams == {})
    # another controller becomes primary with any election id, even below dcnlab's
    user = intruder(servers[0], (0, 0), name="user")
    try:
        assert user.primary
        user.write(ctl.pipeline.p4info, [+entry("10.0.0.2", 2)])
        with pytest.raises(SwitchError) as e:
            ctl.write({"s0": [+entry("10.0.0.3", 3)]})
        assert e.value.switch == "s0" and "handed over to another controller" in str(e.value)
        with pytest.raises(SwitchError, match="handed over"):
            ctl.push_pipeline(["s0"])
        with pytest.raises(SwitchError, match="s0: reconnect failed: .*handed over"):
            ctl.reconnect("s0")
        assert len(ctl.read_table("s0", HOST_TABLE)) == 2        # Reads still work
        ctl.write({"s1": [+entry("10.0.0.3", 3)]})               # the other switch is still dcnlab's
        servers[0].restart()                                     # the watcher leaves s0 alone
        time.sleep(0.3)
        assert servers[0].arbitrations[-1] == (0, 0) and servers[0].pipeline_pushes == 1
    finally:
        user.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert any("stepped down on 1 switch(es) (s0)" in r.getMessage() for r in caplog.records)
    ctl.connect(["s0"])                                          # taking it back is explicit
    assert ctl.handed_over() == [] and ctl.client("s0").primary
    ctl.push_pipeline(["s0"])


def test_step_down_all_then_close(servers, ctl):
    ctl.step_down()
    assert ctl.handed_over() == ["s0", "s1"]
    with pytest.raises(MultiSwitchError) as e:
        ctl.write({"s0": [+entry("10.0.0.1", 1)], "s1": [+entry("10.0.0.1", 1)]})
    assert set(e.value.errors) == {"s0", "s1"}
    ctl.step_down()                                              # again: nothing happens
    ctl.close()


# -- the same on BMv2 ------------------------------------------------------------------------------
@pytest.mark.bmv2
def test_bmv2_switch_taken_over_by_another_client_is_noticed(tmp_path, monkeypatch, caplog):
    from dcnlab.emu.cleanup import leftovers
    from dcnlab.emu.network import FabricNetwork, NetOptions
    from dcnlab.topos import parse_spec

    monkeypatch.setenv("DCNLAB_RUN_ROOT", str(tmp_path / "runs"))
    caplog.set_level(logging.INFO, logger=LOGGER)
    with FabricNetwork(parse_spec("bcube:n=2,k=1"), NetOptions(agents=False)) as net:
        name, other_name = sorted(net.switches)[:2]
        cfg = net.switches[name].cfg
        net.controller.write({name: [+entry("10.9.9.1", 1)]})
        t0 = time.monotonic()
        other = SwitchClient("intruder", cfg.device_id, cfg.grpc_addr, (0, 2))
        try:
            took = wait_for(lambda: net.controller.lost_primary() == [name])      # the time: printed, not judged
            print(f"noticed {took * 1000:.0f} ms after the arbitration ({time.monotonic() - t0:.2f} s with connect)")
            msg = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
            assert msg == [f"{name}: another controller became primary (election id 2, above dcnlab's 1); "
                           f"dcnlab stops writing to {name}"]
            with pytest.raises(SwitchError) as e:
                net.controller.write({name: [+entry("10.9.9.2", 1)]})
            assert e.value.switch == name and f"lost the primary role on {name}" in str(e.value)
            net.controller.write({other_name: [+entry("10.9.9.2", 1)]})     # the other switch: still dcnlab's
            other.write(net.pipeline.p4info, [+entry("10.9.9.3", 1)])       # BMv2 takes the new primary's writes
            ours = {int(ipaddress.ip_address(ip)) for ip in ("10.9.9.1", "10.9.9.3")}
            assert len([e for e in net.controller.read_table(name, HOST_TABLE)
                        if dict(e.match)["hdr.ipv4.dstAddr"] in ours]) == 2
        finally:
            other.close()
        wait_for(lambda: net.controller.client(name).primary)   # BMv2 hands it back
    if os.path.isdir(tmp_path / "runs"):
        assert leftovers(tmp_path / "runs") == []
