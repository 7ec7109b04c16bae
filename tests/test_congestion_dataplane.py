"""Switch state of the congestion mechanism: marking entries, tenant classification, meters, counter reads."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from p4fixtures import p4info

from dcnlab.controller.congestion.dataplane import (
    ECN_TABLE,
    ELIGIBLE_COUNTER,
    MARKED_COUNTER,
    METER,
    NTH_REGISTER,
    PACKETS_COUNTER,
    TENANT_DROPPED,
    TENANT_PACKETS,
    TENANT_TABLE,
    CongestionDataplane,
    PortMarks,
    TenantKey,
    marking_entry,
    meter_config,
    tenant_entry,
)
from dcnlab.controller.congestion.params import CongestionParamError, SwitchParams
from dcnlab.controller.congestion.policy import MeterRate
from dcnlab.controller.runtime.entities import Counter, MeterConfig, TableEntry, UpdateType


def test_marking_entry_maps_level_rate_mode_and_size():
    e = marking_entry(3, SwitchParams(threshold=12, marking_rate=7, packet_size=2))
    assert e is not None and e.table == ECN_TABLE and dict(e.match) == {"std.egress_port": 3}
    assert dict(e.params) == {"threshold": 32, "every": 8, "random_mode": 0, "min_len": 128}
    e = marking_entry(0, SwitchParams(threshold=15, marking_rate=0, marking_mode="random"))
    assert dict(e.params) == {"threshold": 8, "every": 1, "random_mode": 1, "min_len": 0}
    e = marking_entry(1, SwitchParams(threshold=1, threshold_step=100))
    assert dict(e.params)["threshold"] == 1500
    assert marking_entry(1, SwitchParams(threshold=0)) is None          # level 0: no marking at all
    with pytest.raises(CongestionParamError, match="egress port=512 is out of range; valid: 0..511"):
        marking_entry(512, SwitchParams())
    deepest = marking_entry(1, SwitchParams(threshold=1, threshold_step=1 << 14))
    assert dict(deepest.params)["threshold"] == 15 << 14 < 1 << 19      # fits enq_qdepth's 19 bits


def test_tenant_entry_per_host_and_per_flow():
    host = tenant_entry(TenantKey("10.0.0.2"), 3)
    assert host.table == TENANT_TABLE and dict(host.match) == {"hdr.ipv4.srcAddr": ("10.0.0.2", 0xFFFFFFFF)}
    assert dict(host.params) == {"index": 3} and host.priority == 1
    flow = tenant_entry(TenantKey("10.0.0.2", 40001), 4)
    assert dict(flow.match)["hdr.udp.srcPort"] == (40001, 0xFFFF) and flow.priority == 2
    with pytest.raises(CongestionParamError, match="UDP source port=70000"):
        tenant_entry(TenantKey("10.0.0.2", 70000), 1)


def test_meter_config_is_a_hard_cap_in_bytes():
    m = meter_config(MeterRate("b", "t1", 2, 800_000.0, 100), packet_bytes=200)
    assert m == MeterConfig(METER, 2, 100_000, 800, 100_000, 800)    # bytes/s; burst >= 4 packets
    m = meter_config(MeterRate("b", "t1", 0, 8e9, 1_000_000), packet_bytes=1024)
    assert (m.cir, m.pir, m.cburst) == (10**9, 10**9, 1_000_000)
    with pytest.raises(CongestionParamError, match="meter rate of tenant t1"):
        meter_config(MeterRate("b", "t1", 0, 1.0, 1), 100)


def test_entities_encode_against_the_programs_p4info():
    info = p4info()
    for e in (marking_entry(5, SwitchParams(marking_mode="random", packet_size=1)),
              tenant_entry(TenantKey("10.0.0.9"), 7), tenant_entry(TenantKey("10.0.0.9", 40007), 7),
              meter_config(MeterRate("b", "t", 7, 1e6, 1000), 200)):
        assert e is not None
        e.to_proto(info)
    for name in (PACKETS_COUNTER, ELIGIBLE_COUNTER, MARKED_COUNTER, TENANT_PACKETS, TENANT_DROPPED):
        Counter(name).to_proto(info)
    assert info.register(NTH_REGISTER).name == NTH_REGISTER


@dataclass
class FakeThrift:
    calls: list = field(default_factory=list)

    def set_queues(self, depth, rate, ports):
        self.calls.append(("queues", depth, rate, tuple(ports)))

    def register_reset(self, name):
        self.calls.append(("reset", name))


@dataclass
class FakeRuntime:
    writes: list = field(default_factory=list)
    counters: dict = field(default_factory=dict)
    channel: FakeThrift = field(default_factory=FakeThrift)

    def write(self, updates):
        self.writes.append({sw: [(u.type, u.entity) for u in us] for sw, us in updates.items()})

    def read_counters(self, counter, names=None):
        return {n: [Counter(counter, i, p, 0) for i, p in self.counters.get(counter, {}).items()] for n in names}

    def thrift(self, name):
        return self.channel


def test_marking_insert_modify_and_off():
    rt = FakeRuntime()
    dp = CongestionDataplane(rt, packet_bytes=200)
    dp.set_marking("v0", [1, 2], SwitchParams(threshold=12))
    dp.set_marking("v0", [1], SwitchParams(threshold=14))
    dp.set_marking("v0", [1, 2], SwitchParams(threshold=0))
    dp.set_marking("v0", [1], SwitchParams(threshold=0))     # already off: nothing to write
    kinds = [[t for t, _ in w["v0"]] for w in rt.writes]
    assert kinds == [[UpdateType.INSERT] * 2, [UpdateType.MODIFY], [UpdateType.DELETE] * 2]
    assert dict(rt.writes[1]["v0"][0][1].params)["threshold"] == 16
    assert dp.marking == {}
    dp.set_marking("w0", [0], SwitchParams())
    dp.clear_marking()
    assert [t for t, _ in rt.writes[-1]["w0"]] == [UpdateType.DELETE] and dp.marking == {}


def test_classification_is_diffed_and_meters_are_modified():
    rt = FakeRuntime()
    dp = CongestionDataplane(rt, packet_bytes=200)
    a, b, c = TenantKey("10.0.0.2", 40001), TenantKey("10.0.0.3", 40002), TenantKey("10.0.0.4")
    dp.classify("v0", {a: 0, b: 1})
    dp.classify("v0", {a: 0, b: 0, c: 1})
    dp.classify("v0", {c: 1})
    dp.classify("v0", {c: 1})
    ops = [sorted((t.name, dict(e.params)["index"]) for t, e in w["v0"]) for w in rt.writes]
    assert ops == [[("INSERT", 0), ("INSERT", 1)], [("INSERT", 1), ("MODIFY", 0)], [("DELETE", 0), ("DELETE", 0)]]
    dp.set_meters("v0", [MeterRate("b", "t1", 0, 800_000.0, 800), MeterRate("b", "t2", 1, 400_000.0, 800)])
    assert [(t, e.index, e.cir) for t, e in rt.writes[-1]["v0"]] == [(UpdateType.MODIFY, 0, 100_000),
                                                                      (UpdateType.MODIFY, 1, 50_000)]
    dp.clear_tenants()
    assert [t for t, _ in rt.writes[-1]["v0"]] == [UpdateType.DELETE] and dp.tenants == {}


def test_counter_reads_and_thrift_side():
    rt = FakeRuntime(counters={PACKETS_COUNTER: {0: 5, 1: 100}, ELIGIBLE_COUNTER: {1: 40},
                               MARKED_COUNTER: {1: 20}, TENANT_PACKETS: {0: 10, 1: 7}, TENANT_DROPPED: {1: 3}})
    dp = CongestionDataplane(rt)
    marks = dp.marks("v0")
    assert marks == {0: PortMarks(5, 0, 0), 1: PortMarks(100, 40, 20)}
    assert (marks[1] - PortMarks(50, 10, 5)) == PortMarks(50, 30, 15) and marks[1].marked_fraction == 0.2
    counts = dp.tenant_counts("v0")
    assert (counts[0].packets, counts[0].dropped, counts[1].packets, counts[1].dropped) == (10, 0, 7, 3)
    dp.set_bottleneck("v0", [1], 1000, 128)
    dp.reset_marking_phase("v0")
    assert rt.channel.calls == [("queues", 128, 1000, (1,)), ("reset", NTH_REGISTER)]
    with pytest.raises(CongestionParamError, match="queue rate=0 is out of range"):
        dp.set_bottleneck("v0", [1], 0)


def test_table_entries_are_hashable_and_equal_by_value():
    a = marking_entry(1, SwitchParams())
    b = marking_entry(1, SwitchParams())
    assert isinstance(a, TableEntry) and a == b and hash(a) == hash(b)


def test_thrift_calls_are_retried_then_reported():
    from dcnlab.controller.runtime.errors import ThriftError

    class Flaky(FakeThrift):
        def __init__(self, failures: int) -> None:
            super().__init__()
            self.failures = failures

        def set_queues(self, depth, rate, ports):
            if self.failures:
                self.failures -= 1
                raise ThriftError("v0", "set_queue_rate", "epoll_wait error")
            super().set_queues(depth, rate, ports)

    rt = FakeRuntime(channel=Flaky(2))
    CongestionDataplane(rt).set_bottleneck("v0", [1], 1000)
    assert rt.channel.calls == [("queues", None, 1000, (1,))]
    rt = FakeRuntime(channel=Flaky(3))
    with pytest.raises(ThriftError, match="epoll_wait"):
        CongestionDataplane(rt).set_bottleneck("v0", [1], 1000)
