"""P4Info indexing, canonical encoding and the entity model (no switch needed)."""

from __future__ import annotations

import pytest
from dcnlab.controller.runtime.proto import p4runtime_pb2

from dcnlab.controller.runtime import (CloneSession, Counter, MeterConfig, MulticastGroup, P4InfoError, SwitchState,
                                TableEntry, UpdateType)
from dcnlab.controller.runtime.p4info import decode, encode
from p4fixtures import p4info


def test_names_resolve_by_full_and_short_name():
    info = p4info()
    full = info.table("DcnIngress.fwd.ipv4_host")
    assert info.table("ipv4_host") is full
    assert "hdr.ipv4.dstAddr" in full.fields
    assert info.action("set_port").params["port"].bitwidth == 9
    assert info.counter("port_in").size == 64          # p4src/sizes.p4 defaults (dcnlab compile, no defines)
    assert info.register("agg_value").size == 1024       # AGG_SLOTS slots, one bit<512> cell (16 sums) each


def test_unknown_and_ambiguous_names():
    info = p4info()
    with pytest.raises(P4InfoError, match="unknown table 'nope'"):
        info.table("nope")
    from dcnlab.controller.runtime.proto import p4info_pb2

    from dcnlab.controller.runtime.p4info import P4Info
    msg = p4info_pb2.P4Info()
    for i, name in enumerate(("A.t", "B.t")):
        t = msg.tables.add()
        t.preamble.id, t.preamble.name = 100 + i, name
    twin = P4Info(msg)
    with pytest.raises(P4InfoError, match="ambiguous"):
        twin.table("t")
    assert twin.table("B.t").id == 101


@pytest.mark.parametrize("value,width,expected", [(0, 9, b"\x00"), (5, 9, b"\x05"), (256, 9, b"\x01\x00"),
                                                  ("10.0.0.1", 32, b"\x0a\x00\x00\x01"),
                                                  ("02:00:00:00:00:01", 48, b"\x02\x00\x00\x00\x00\x01")])
def test_canonical_encoding(value, width, expected):
    assert encode(value, width) == expected
    assert decode(expected) == (value if isinstance(value, int) else decode(expected))


def test_too_wide_value_is_rejected_with_the_field_name():
    e = TableEntry("ipv4_host", {"hdr.ipv4.dstAddr": "10.0.0.1"}, "set_port", {"port": 512})
    with pytest.raises(P4InfoError, match=r"set_port.port=512 does not fit in 9 bits"):
        e.to_proto(p4info())


def test_table_entry_round_trip():
    info = p4info()
    e = TableEntry("DcnIngress.fwd.ipv4_host", {"hdr.ipv4.dstAddr": "10.0.0.7"}, "DcnIngress.fwd.set_ecmp",
                   {"base": 4, "count": 2})
    proto = e.to_proto(info)
    assert proto.table_entry.match[0].exact.value == b"\x0a\x00\x00\x07"
    back = TableEntry.from_proto(info, proto.table_entry)
    assert back.match == (("hdr.ipv4.dstAddr", 0x0a000007),)
    assert back.action == "DcnIngress.fwd.set_ecmp" and dict(back.params) == {"base": 4, "count": 2}


def test_missing_or_unknown_params_and_fields():
    info = p4info()
    with pytest.raises(P4InfoError, match="needs parameter 'port'"):
        TableEntry("ipv4_host", {"hdr.ipv4.dstAddr": 1}, "set_port", {}).to_proto(info)
    with pytest.raises(P4InfoError, match="no match field 'dst'"):
        TableEntry("ipv4_host", {"dst": 1}, "set_port", {"port": 1}).to_proto(info)
    with pytest.raises(P4InfoError, match="not an action of table"):
        TableEntry("ipv4_host", {"hdr.ipv4.dstAddr": 1}, "DcnIngress.mcast.replicate", {}).to_proto(info)


def test_pre_meter_counter_protos():
    info = p4info()
    g = MulticastGroup(5, [(1, 0), (2, 0)]).to_proto(info)
    assert g.packet_replication_engine_entry.multicast_group_entry.multicast_group_id == 5
    assert [r.egress_port for r in g.packet_replication_engine_entry.multicast_group_entry.replicas] == [1, 2]
    c = CloneSession(3, [(4, 1)]).to_proto(info)
    assert c.packet_replication_engine_entry.clone_session_entry.session_id == 3
    m = MeterConfig("tenant_meter", 7, 1000, 100, 2000, 200).to_proto(info)
    assert m.meter_entry.index.index == 7 and m.meter_entry.config.pir == 2000
    k = Counter("port_in").to_proto(info)
    assert k.counter_entry.counter_id == info.counter("port_in").id and not k.counter_entry.HasField("index")
    with pytest.raises(P4InfoError, match="valid: 1..32767"):
        MulticastGroup(40000)


def test_update_operators_and_desired_state():
    a = TableEntry("ipv4_host", {"hdr.ipv4.dstAddr": 1}, "set_port", {"port": 1})
    a2 = TableEntry("ipv4_host", {"hdr.ipv4.dstAddr": 1}, "set_port", {"port": 2})
    assert (+a).type is UpdateType.INSERT and (~a).type is UpdateType.MODIFY and (-a).type is UpdateType.DELETE
    assert (+a).to_proto(p4info()).type == p4runtime_pb2.Update.INSERT
    s = SwitchState()
    s.apply(+a)
    s.apply(~a2)
    assert s.replay() == [+a2]
    s.apply(-a)
    assert s.replay() == []
