"""The multi-switch controller against in-process fake P4Runtime servers."""

from __future__ import annotations

import time

import pytest

from dcnlab.controller.routing import compute_forwarding, router_for
from dcnlab.controller.rules import ECMP_TABLE, HOST_TABLE, forwarding_updates
from dcnlab.controller.runtime import (Controller, Counter, MultiSwitchError, SwitchError, SwitchTarget, TableEntry,
                                WriteError)
from dcnlab.controller.runtime.client import SwitchClient
from dcnlab.controller.runtime.fake_server import FakeP4RuntimeServer
from p4fixtures import pipeline
from dcnlab.topos import parse_spec


@pytest.fixture
def servers():
    ss = [FakeP4RuntimeServer().start() for _ in range(3)]
    yield ss
    for s in ss:
        s.stop()


@pytest.fixture
def ctl(servers, tmp_path):
    targets = [SwitchTarget(f"s{i}", i, s.addr) for i, s in enumerate(servers)]
    c = Controller(pipeline(), targets, election_id=(0, 7), log_dir=tmp_path)
    c.start()
    yield c
    c.close()


def entry(ip: str, port: int) -> TableEntry:
    return TableEntry(HOST_TABLE, {"hdr.ipv4.dstAddr": ip}, "DcnIngress.fwd.set_port", {"port": port})


def test_start_arbitrates_and_pushes_pipeline(servers, ctl):
    for s in servers:
        assert s.arbitrations == [(0, 7)]
        assert s.pipeline_pushes == 1
        assert s.state.device_config == b'{"fake": "bmv2 json"}'
        assert s.state.p4info.tables[0].preamble.name


def test_routing_rules_are_written_in_batches(servers, ctl):
    fabric = parse_spec("fattree:k=4")
    ups = forwarding_updates(compute_forwarding(router_for(fabric)))
    names = ["e0_0", "a0_0", "c0"]
    ctl.write({f"s{i}": ups[n] for i, n in enumerate(names)}, batch=5)
    for i, n in enumerate(names):
        s = servers[i]
        assert len(s.updates) == len(ups[n])
        assert len(s.write_requests) == -(-len(ups[n]) // 5)
        tables = [e.table_entry.table_id for e in s.entities("table_entry")]
        assert len(tables) == len(ups[n])
    # edge e0_0: 2 local hosts direct, 14 remote over 2 uplinks in two rotations (spreading):
    # 2 shared groups of 2 members
    read = ctl.read_table("s0", HOST_TABLE)
    assert len(read) == 16
    ecmp = [dict(e.params) for e in read if e.action.endswith("set_ecmp")]
    assert len(ecmp) == 14 and {(p["base"], p["count"]) for p in ecmp} == {(0, 2), (2, 2)}
    members = ctl.read_table("s0", ECMP_TABLE)
    assert sorted((dict(m.match)["meta.ecmp_index"], dict(m.params)["port"]) for m in members) == \
        [(0, 2), (1, 3), (2, 3), (3, 2)]
    assert len(ctl.state["s0"].entities) == 20


def test_duplicate_insert_raises_with_switch_entity_and_status(ctl):
    ctl.write({"s1": [+entry("10.0.0.1", 1)]})
    with pytest.raises(WriteError) as e:
        ctl.write({"s1": [+entry("10.0.0.2", 1), +entry("10.0.0.1", 2)]})
    msg = str(e.value)
    assert "s1" in msg and "ALREADY_EXISTS" in msg and "hdr.ipv4.dstAddr=10.0.0.1" in msg
    assert e.value.failures[0][0] == +entry("10.0.0.1", 2)


def test_delete_missing_is_not_found(ctl):
    with pytest.raises(WriteError, match="NOT_FOUND"):
        ctl.write({"s2": [-entry("10.0.0.9", 1)]})


def test_failures_on_several_switches_are_all_reported(ctl):
    ctl.write({"s0": [+entry("10.0.0.1", 1)], "s1": [+entry("10.0.0.1", 1)]})
    with pytest.raises(MultiSwitchError) as e:
        ctl.write({"s0": [+entry("10.0.0.1", 1)], "s1": [+entry("10.0.0.1", 1)]})
    assert set(e.value.errors) == {"s0", "s1"}


def test_counters_are_read(servers, ctl):
    cid = ctl.pipeline.p4info.counter("DcnIngress.port_in").id
    servers[2].set_counter(cid, 0, 3, 300)
    servers[2].set_counter(cid, 5, 1, 64)
    got = ctl.read_counters("DcnIngress.port_in", ["s2"])["s2"]
    assert got == [Counter("DcnIngress.port_in", 0, 3, 300), Counter("DcnIngress.port_in", 5, 1, 64)]


def test_unreachable_switch_error_names_it():
    c = Controller(pipeline(), [SwitchTarget("ghost", 0, "127.0.0.1:1")],
                   client_factory=lambda *a: __import__("dcnlab.controller.runtime.client", fromlist=["x"]).SwitchClient(
                       *a, connect_timeout=0.5))
    with pytest.raises(SwitchError, match="ghost: connect to 127.0.0.1:1 failed: UNAVAILABLE"):
        c.start()
    c.close()


def test_second_controller_is_not_primary(servers, ctl):
    other = Controller(pipeline(), [SwitchTarget("s0", 0, servers[0].addr)], election_id=(0, 1))
    with pytest.raises(SwitchError, match="s0: arbitration failed: ALREADY_EXISTS"):
        other.connect()
    other.close()


def test_reconnect_repushes_pipeline_and_state(servers, ctl):
    ctl.write({"s0": [+entry("10.0.0.1", 1), +entry("10.0.0.2", 2)]})
    ctl.write({"s0": [-entry("10.0.0.2", 2)]})
    servers[0].restart()
    assert servers[0].entities() == []
    ctl.reconnect("s0")
    assert servers[0].pipeline_pushes == 2
    assert [e.table_entry.match[0].exact.value for e in servers[0].entities("table_entry")] == [b"\x0a\x00\x00\x01"]


def test_watcher_reconnects_automatically(servers, ctl):
    ctl.write({"s1": [+entry("10.0.0.3", 3)]})
    ctl.watch(interval=0.05)
    servers[1].restart()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not servers[1].entities():
        time.sleep(0.05)
    assert len(servers[1].entities("table_entry")) == 1


def test_request_log_is_written(ctl, tmp_path):
    ctl.write({"s0": [+entry("10.0.0.1", 1)]})
    text = (tmp_path / "p4rt-s0.log").read_text()
    assert "/p4.v1.P4Runtime/Write request" in text and "SetForwardingPipelineConfig" in text


def test_pipeline_config_is_returned_by_response_type_with_its_cookie():
    import grpc
    from dcnlab.controller.runtime.proto import p4runtime_pb2, p4runtime_pb2_grpc
    R = p4runtime_pb2.GetForwardingPipelineConfigRequest
    with FakeP4RuntimeServer() as s, grpc.insecure_channel(s.addr) as ch:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
        with pytest.raises(grpc.RpcError) as e:    # as PI words it (finsy recognises "no pipeline")
            stub.GetForwardingPipelineConfig(R(device_id=0, response_type=R.COOKIE_ONLY))
        assert e.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert e.value.details() == "No forwarding pipeline config set for this device"
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=0)   # no stream: no election id
        req.config.p4info.CopyFrom(pipeline().p4info.msg)
        req.config.p4_device_config = b"{}"
        req.config.cookie.cookie = 42
        req.action = req.VERIFY
        stub.SetForwardingPipelineConfig(req)      # verified, not applied
        assert s.pipeline_pushes == 0 and s.state.p4info is None and len(s.pipeline_requests) == 1
        req.action = req.VERIFY_AND_COMMIT
        stub.SetForwardingPipelineConfig(req)
        cookie = stub.GetForwardingPipelineConfig(R(device_id=0, response_type=R.COOKIE_ONLY)).config
        assert cookie.cookie.cookie == 42 and not cookie.HasField("p4info") and cookie.p4_device_config == b""
        full = stub.GetForwardingPipelineConfig(R(device_id=0, response_type=R.ALL)).config
        assert full.p4info == pipeline().p4info.msg and full.p4_device_config == b"{}"
        req.election_id.low = 1                    # no stream open: an election id is refused (PI)
        with pytest.raises(grpc.RpcError) as e:
            stub.SetForwardingPipelineConfig(req)
        assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_table_entries_by_table_name(servers, ctl):
    ctl.write({"s0": [+entry("10.0.0.1", 1), +entry("10.0.0.2", 2)]})
    assert len(servers[0].table_entries(HOST_TABLE)) == 2
    assert servers[0].table_entries(ECMP_TABLE) == [] and len(servers[0].table_entries()) == 2
    with pytest.raises(KeyError, match="no table 'Nope'"):
        servers[0].table_entries("Nope")
    assert servers[0].primary_election_id == (0, 7) and len(servers[0].streams) == 1


def test_arbitration_refusals_carry_the_servers_reason():
    with FakeP4RuntimeServer(device_id=3) as s:
        with pytest.raises(SwitchError, match="s9: arbitration failed: NOT_FOUND: Unknown device id 0: this switch is "
                                              "device 3"):
            SwitchClient("s9", 0, s.addr)
        c = SwitchClient("s3", 3, s.addr, (0, 4))
        try:   # an election id in use: PI's INVALID_ARGUMENT, named
            with pytest.raises(SwitchError, match="s3: arbitration failed: INVALID_ARGUMENT: Election id already exists"):
                SwitchClient("s3", 3, s.addr, (0, 4))
        finally:
            c.close()
