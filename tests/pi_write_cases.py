"""Writes that BMv2's P4Runtime server (PI) refuses or accepts, by name, for tests/test_fake_vs_bmv2.py.

Each case pushes a pipeline (examples/programs/router.p4, or tests/fixtures/pi_checks/pi_checks.p4
for what the router does not have), writes its setup updates (which must all succeed), then
one probe Write whose outcome is recorded: "OK", the per-update codes of PI's status details
("OK,ALREADY_EXISTS,..."), or "!CODE" for a request refused as a whole. Names of tables,
actions and fields are resolved in the pushed P4Info, so the same case runs against p4c's P4Info
on BMv2 and against the committed copy on the fake. :func:`run` speaks plain gRPC (no stream, no
election id, as PI allows with no controller connected), so nothing of dcnlab's client is in
between.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.protobuf import text_format

from dcnlab.controller.runtime.proto import code_pb2, p4info_pb2, p4runtime_pb2, status_pb2

HERE = Path(__file__).resolve().parent
PROGRAMS = {"router": (HERE.parent / "examples" / "programs", HERE / "fixtures" / "router.p4info.txtpb"),
            "pi_checks": (HERE / "fixtures" / "pi_checks", HERE / "fixtures" / "pi_checks" / "pi_checks.p4info.txtpb")}
RECORDED = HERE / "fixtures" / "pi_write_statuses.txt"

P = p4runtime_pb2
FM = P.FieldMatch
U = P.Update


def load_p4info(path: Path) -> p4info_pb2.P4Info:
    info = p4info_pb2.P4Info()
    text_format.Merge(path.read_text(), info, allow_unknown_field=True)
    return info


class Names:
    """Ids by name in one P4Info: ``n.t("RIngress.routes")``, ``n.a(...)``, ``n.f(table, field)``."""

    def __init__(self, info: p4info_pb2.P4Info) -> None:
        self.info = info
        self.ids = {o.preamble.name: o.preamble.id for kind in ("tables", "actions", "counters", "meters",
                                                                  "registers", "direct_counters")
                    for o in getattr(info, kind)}
        self.fields = {(t.preamble.name, f.name): f.id for t in info.tables for f in t.match_fields}

    def t(self, name: str) -> int:
        return self.ids[name]

    a = c = t

    def f(self, table: str, name: str) -> int:
        return self.fields[(table, name)]

    def label(self, message: str) -> str:
        """``message`` with each P4 id of this P4Info as ``<name>`` (p4c's ids differ from the committed copies')."""
        names = {str(i): n for n, i in self.ids.items()}
        return re.sub(r"\b\d{6,}\b", lambda m: f"<{names[m[0]]}>" if m[0] in names else m[0], message)


def exact(fid: int, v: bytes) -> FM:
    return FM(field_id=fid, exact=FM.Exact(value=v))


def lpm(fid: int, v: bytes, plen: int) -> FM:
    return FM(field_id=fid, lpm=FM.LPM(value=v, prefix_len=plen))


def ternary(fid: int, v: bytes, m: bytes) -> FM:
    return FM(field_id=fid, ternary=FM.Ternary(value=v, mask=m))


def rng(fid: int, lo: bytes, hi: bytes) -> FM:
    return FM(field_id=fid, range=FM.Range(low=lo, high=hi))


def optional(fid: int, v: bytes) -> FM:
    return FM(field_id=fid, optional=FM.Optional(value=v))


def act(action_id: int, *params: tuple[int, bytes]) -> P.TableAction:
    return P.TableAction(action=P.Action(action_id=action_id,
                                         params=[P.Action.Param(param_id=i, value=v) for i, v in params]))


def entry(table_id: int, match=(), action: P.TableAction | None = None, priority: int = 0,
          default: bool = False, **extra) -> P.Entity:
    te = P.TableEntry(table_id=table_id, match=list(match), priority=priority, is_default_action=default, **extra)
    if action is not None:
        te.action.CopyFrom(action)
    return P.Entity(table_entry=te)


def up(typ: int, ent: P.Entity) -> U:
    return U(type=typ, entity=ent)


def ins(ent: P.Entity) -> U:
    return up(U.INSERT, ent)


def mod(ent: P.Entity) -> U:
    return up(U.MODIFY, ent)


def dele(ent: P.Entity) -> U:
    return up(U.DELETE, ent)


def mcast(gid: int, *replicas: P.Replica) -> P.Entity:
    return P.Entity(packet_replication_engine_entry=P.PacketReplicationEngineEntry(
        multicast_group_entry=P.MulticastGroupEntry(multicast_group_id=gid, replicas=list(replicas))))


def clone(sid: int, *replicas: P.Replica, cos: int = 0, length: int = 0) -> P.Entity:
    return P.Entity(packet_replication_engine_entry=P.PacketReplicationEngineEntry(
        clone_session_entry=P.CloneSessionEntry(session_id=sid, replicas=list(replicas), class_of_service=cos,
                                                packet_length_bytes=length)))


def rep(port: int | bytes | None, instance: int = 0) -> P.Replica:
    if port is None:
        return P.Replica(instance=instance)
    if isinstance(port, bytes):
        return P.Replica(port=port, instance=instance)
    return P.Replica(egress_port=port, instance=instance)


def counter(cid: int, index: int | None, packets: int = 0, byte_count: int = 0) -> P.Entity:
    ce = P.CounterEntry(counter_id=cid, data=P.CounterData(packet_count=packets, byte_count=byte_count))
    if index is not None:
        ce.index.index = index
    return P.Entity(counter_entry=ce)


def meter(mid: int, index: int, cir: int, cburst: int, pir: int, pburst: int) -> P.Entity:
    return P.Entity(meter_entry=P.MeterEntry(meter_id=mid, index=P.Index(index=index), config=P.MeterConfig(
        cir=cir, cburst=cburst, pir=pir, pburst=pburst)))


# -- router.p4 ---------------------------------------------------------------------------------
ROUTES, ACL, UDP = "RIngress.routes", "RIngress.acl", "RIngress.udp_ports"
MAC1, MAC2 = bytes.fromhex("080000000222"), bytes.fromhex("000000000100")


def route(n: Names, value: bytes = bytes([10, 0, 2, 0]), plen: int = 24, action=None, **kw) -> P.Entity:
    match = [] if plen is None else [lpm(n.f(ROUTES, "hdr.ipv4.dst"), value, plen)]
    return entry(n.t(ROUTES), match, action or forward(n), **kw)


def forward(n: Names, *params: tuple[int, bytes]) -> P.TableAction:
    return act(n.a("RIngress.forward"), *(params or ((1, MAC1), (2, MAC2), (3, b"\x02"))))


def acl(n: Names, value: bytes = bytes([10, 0, 0, 0]), mask: bytes = bytes([255, 0, 0, 0]), priority: int = 10,
        action=None) -> P.Entity:
    return entry(n.t(ACL), [ternary(n.f(ACL, "hdr.ipv4.src"), value, mask)], action or act(n.a("RIngress.permit")),
                 priority)


def udp(n: Names, lo: int | bytes = 1000, hi: int | bytes = 2000, priority: int = 1) -> P.Entity:
    b = (lambda v: v if isinstance(v, bytes) else v.to_bytes(2, "big"))
    return entry(n.t(UDP), [rng(n.f(UDP, "hdr.udp.dport"), b(lo), b(hi))],
                 act(n.a("RIngress.count_port"), (1, b"\x01")), priority)


# -- pi_checks.p4 ------------------------------------------------------------------------------
EX, CD, OPT, L9, R9, CNT, CONST = ("PIngress." + t for t in ("exact_t", "const_default_t", "optional_t",
                                                            "port9_lpm_t", "port9_range_t", "counted_t",
                                                            "const_entries_t"))


def ex(n: Names, dst: int = 1, typ: int = 0x800, action=None, **kw) -> P.Entity:
    return entry(n.t(EX), [exact(n.f(EX, "hdr.eth.dst"), dst.to_bytes(6, "big")),
                           exact(n.f(EX, "hdr.eth.type"), typ.to_bytes(2, "big"))],
                 action or act(n.a("PIngress.set_port"), (1, b"\x01")), **kw)


def port9(n: Names, table: str, m: FM | None, priority: int = 0) -> P.Entity:
    return entry(n.t(table), [] if m is None else [m], act(n.a("PIngress.drop")), priority)


@dataclass(frozen=True)
class Case:
    name: str
    program: str
    probe: Callable[[Names], list[U]]
    setup: Callable[[Names], list[U]] = field(default=lambda n: [])
    atomicity: int = P.WriteRequest.CONTINUE_ON_ERROR
    read: str | None = None
    """A table whose entries are read back after the probe (compared between the fake and BMv2)."""
    target: bool = False
    """BMv2 below PI refuses it (a full table, an index past the end, ...): PI's frontend alone passes it."""


R, X = "router", "pi_checks"
_unknown_table = 0x02000000 | 0xABCDE
CASES = [
    # valid writes
    Case("routes_forward_all_params", R, lambda n: [ins(route(n))], read=ROUTES),
    Case("routes_default_route_field_omitted", R, lambda n: [ins(route(n, plen=None))], read=ROUTES),
    Case("routes_short_and_padded_bytes", R, lambda n: [ins(route(n, b"\x0a\x00\x01", 32, forward(
        n, (1, b"\x00" + MAC1), (2, b"\x01\x00"), (3, b"\x00\x00\x02"))))], read=ROUTES),
    Case("acl_ternary", R, lambda n: [ins(acl(n))], read=ACL),
    Case("udp_range", R, lambda n: [ins(udp(n))], read=UDP),
    Case("udp_full_range_short_low", R, lambda n: [ins(udp(n, b"\x00", b"\xff\xff"))], read=UDP),
    Case("routes_modify", R, lambda n: [mod(route(n, action=act(n.a("RIngress.flood"), (1, b"\x07"))))],
         lambda n: [ins(route(n))], read=ROUTES),
    Case("routes_delete", R, lambda n: [dele(route(n))], lambda n: [ins(route(n))]),
    Case("routes_delete_ignores_action", R, lambda n: [dele(route(n, action=act(n.a("RIngress.permit"))))],
         lambda n: [ins(route(n))]),
    Case("routes_default_set", R, lambda n: [mod(entry(n.t(ROUTES), (), forward(n), default=True))]),
    Case("routes_default_reset", R, lambda n: [mod(entry(n.t(ROUTES), default=True))]),
    Case("acl_same_key_other_priority", R, lambda n: [ins(acl(n, priority=20))], lambda n: [ins(acl(n))]),
    Case("forward_param_given_twice", R, lambda n: [ins(route(n, action=forward(n, (1, MAC1), (1, MAC1),
                                                                                 (2, MAC2))))]),
    # the write: one parameter of three
    Case("forward_one_param", R, lambda n: [ins(route(n, action=forward(n, (3, b"\x02"))))]),
    Case("forward_four_params", R, lambda n: [ins(route(n, action=forward(n, (1, MAC1), (2, MAC2), (3, b"\x02"),
                                                                          (4, b"\x01"))))]),
    Case("forward_unknown_param_id", R, lambda n: [ins(route(n, action=forward(n, (1, MAC1), (2, MAC2),
                                                                               (4, b"\x02"))))]),
    Case("param_too_wide", R, lambda n: [ins(route(n, action=forward(n, (1, MAC1), (2, MAC2), (3, b"\x02\x00"))))]),
    Case("param_seven_bytes", R, lambda n: [ins(route(n, action=forward(n, (1, b"\x01" + MAC1), (2, MAC2),
                                                                        (3, b"\x02"))))]),
    Case("unknown_table_id", R, lambda n: [ins(entry(_unknown_table, (), forward(n)))]),
    Case("action_id_as_table_id", R, lambda n: [ins(entry(n.a("RIngress.forward"), (), forward(n)))]),
    Case("unknown_action_id", R, lambda n: [ins(route(n, action=act(0x01000000 | 0x12345)))]),
    Case("action_not_in_table", R, lambda n: [ins(route(n, action=act(n.a("RIngress.permit"))))]),
    Case("unknown_field_id", R, lambda n: [ins(entry(n.t(ROUTES), [lpm(2, bytes([10, 0, 2, 0]), 24)], forward(n)))]),
    Case("field_twice_one_field_table", R, lambda n: [ins(entry(n.t(ROUTES), [
        lpm(1, bytes([10, 0, 2, 0]), 24), lpm(1, bytes([10, 0, 2, 0]), 24)], forward(n)))]),
    Case("field_twice_two_field_table", R, lambda n: [ins(entry(n.t(ACL), [
        ternary(1, bytes([10, 0, 0, 0]), bytes([255, 0, 0, 0])),
        ternary(1, bytes([10, 0, 0, 0]), bytes([255, 0, 0, 0]))], act(n.a("RIngress.permit")), 10))]),
    Case("exact_kind_for_lpm_field", R, lambda n: [ins(entry(n.t(ROUTES), [exact(1, bytes([10, 0, 2, 0]))],
                                                             forward(n)))]),
    Case("lpm_prefix_33", R, lambda n: [ins(route(n, plen=33))]),
    Case("lpm_prefix_negative", R, lambda n: [ins(route(n, plen=-1))]),
    Case("lpm_prefix_0", R, lambda n: [ins(route(n, bytes(4), 0))]),
    Case("lpm_bits_past_prefix", R, lambda n: [ins(route(n, bytes([10, 0, 2, 1]), 24))]),
    Case("lpm_value_five_bytes", R, lambda n: [ins(route(n, bytes([1, 10, 0, 2, 0]), 24))]),
    Case("lpm_value_leading_zero_byte", R, lambda n: [ins(route(n, bytes([0, 10, 0, 2, 0]), 24))], read=ROUTES),
    Case("ternary_zero_mask", R, lambda n: [ins(acl(n, bytes(4), bytes(4)))]),
    Case("ternary_empty_mask", R, lambda n: [ins(acl(n, b"", b""))]),
    Case("ternary_value_outside_mask", R, lambda n: [ins(acl(n, bytes([10, 0, 0, 1])))]),
    Case("ternary_without_priority", R, lambda n: [ins(acl(n, priority=0))]),
    Case("lpm_with_priority", R, lambda n: [ins(route(n, priority=5))]),
    Case("range_reversed", R, lambda n: [ins(udp(n, 2000, 1000))]),
    Case("range_full_is_dont_care", R, lambda n: [ins(udp(n, 0, 0xFFFF))]),
    Case("range_without_priority", R, lambda n: [ins(udp(n, priority=0))]),
    Case("insert_existing", R, lambda n: [ins(route(n))], lambda n: [ins(route(n))]),
    Case("insert_existing_other_bytes", R, lambda n: [ins(route(n, bytes([0, 10, 0, 2, 0])))],
         lambda n: [ins(route(n))]),
    Case("insert_existing_other_action", R, lambda n: [ins(route(n, action=act(n.a("RIngress.drop"))))],
         lambda n: [ins(route(n))]),
    Case("modify_missing", R, lambda n: [mod(route(n))]),
    Case("modify_missing_with_bad_params", R, lambda n: [mod(route(n, action=forward(n, (3, b"\x02"))))]),
    Case("modify_without_action", R, lambda n: [mod(entry(n.t(ROUTES), route(n).table_entry.match))],
         lambda n: [ins(route(n))]),
    Case("delete_missing", R, lambda n: [dele(route(n))]),
    Case("insert_without_action", R, lambda n: [ins(entry(n.t(ROUTES), route(n).table_entry.match))]),
    Case("insert_default_entry", R, lambda n: [ins(entry(n.t(ROUTES), (), forward(n), default=True))]),
    Case("delete_default_entry", R, lambda n: [dele(entry(n.t(ROUTES), (), forward(n), default=True))]),
    Case("default_with_match", R, lambda n: [mod(route(n, default=True))]),
    Case("default_with_priority", R, lambda n: [mod(entry(n.t(ACL), (), act(n.a("RIngress.drop")), 1, True))]),
    Case("default_action_not_in_table", R, lambda n: [mod(entry(n.t(ROUTES), (), act(n.a("RIngress.permit")),
                                                               default=True))]),
    Case("update_type_unspecified", R, lambda n: [up(U.UNSPECIFIED, route(n))]),
    Case("time_since_last_hit_set", R, lambda n: [ins(route(n, time_since_last_hit=P.TableEntry.IdleTimeout()))]),
    Case("idle_timeout_on_plain_table", R, lambda n: [ins(route(n, idle_timeout_ns=10**9))]),
    Case("counter_data_without_direct_counter", R, lambda n: [ins(route(n, counter_data=P.CounterData()))]),
    Case("meter_config_without_direct_meter", R, lambda n: [ins(route(n, meter_config=P.MeterConfig()))]),
    Case("udp_ports_full", R, lambda n: [ins(udp(n, 5000, 5000))],
         lambda n: [ins(udp(n, i, i)) for i in range(64)], target=True),
    Case("batch_mixed", R, lambda n: [ins(route(n)), ins(route(n)), ins(route(n, bytes([10, 0, 3, 0]), action=forward(
        n, (3, b"\x02")))), ins(route(n, bytes([10, 0, 4, 0])))]),
    Case("atomicity_rollback", R, lambda n: [ins(route(n))], atomicity=P.WriteRequest.ROLLBACK_ON_ERROR),
    Case("empty_entity", R, lambda n: [ins(P.Entity())]),
    Case("register_write", R, lambda n: [mod(P.Entity(register_entry=P.RegisterEntry(
        register_id=n.t("RIngress.port_hits"), index=P.Index(index=0))))]),
    # the packet replication engine
    Case("mcast_group", R, lambda n: [ins(mcast(1, rep(1), rep(2)))]),
    Case("mcast_same_port_two_instances", R, lambda n: [ins(mcast(1, rep(1, 0), rep(1, 1)))]),
    Case("mcast_port_as_number_and_bytes", R, lambda n: [ins(mcast(1, rep(1), rep(b"\x01")))]),
    Case("mcast_group_0", R, lambda n: [ins(mcast(0, rep(1)))]),
    Case("mcast_group_32768", R, lambda n: [ins(mcast(32768, rep(1)))]),
    Case("mcast_insert_existing", R, lambda n: [ins(mcast(1, rep(3)))], lambda n: [ins(mcast(1, rep(1)))]),
    Case("mcast_replica_twice", R, lambda n: [ins(mcast(1, rep(1), rep(1)))]),
    Case("mcast_modify_missing", R, lambda n: [mod(mcast(1, rep(1)))]),
    Case("mcast_delete_missing", R, lambda n: [dele(mcast(1))]),
    Case("mcast_replica_without_port", R, lambda n: [ins(mcast(1, rep(None)))]),
    Case("mcast_port_bytes_empty", R, lambda n: [ins(mcast(1, rep(b"")))]),
    Case("mcast_port_bytes_zero", R, lambda n: [ins(mcast(1, rep(b"\x00")))]),
    Case("mcast_port_five_bytes", R, lambda n: [ins(mcast(1, rep(b"\x00\x00\x00\x00\x01")))]),
    Case("mcast_groups_full", R, lambda n: [ins(mcast(4097))], lambda n: [ins(mcast(g)) for g in range(1, 4097)],
         target=True),
    Case("clone_session", R, lambda n: [ins(clone(5, rep(1)))]),
    Case("clone_session_0", R, lambda n: [ins(clone(0, rep(1)))]),
    Case("clone_session_32768", R, lambda n: [ins(clone(32768, rep(1)))]),
    Case("clone_insert_existing", R, lambda n: [ins(clone(5, rep(2)))], lambda n: [ins(clone(5, rep(1)))]),
    Case("clone_class_of_service", R, lambda n: [ins(clone(5, rep(1), cos=1))]),
    Case("clone_delete_missing", R, lambda n: [dele(clone(5))]),
    Case("clone_packet_length", R, lambda n: [ins(clone(5, rep(1), length=128))], target=True),
    Case("clone_then_group_at_reserved_id", R, lambda n: [ins(mcast(32768 + 5, rep(2)))],
         lambda n: [ins(clone(5, rep(1)))]),
    # pi_checks.p4: scopes, const default, optional, 9-bit keys, full table, const entries
    Case("defaultonly_action_in_entry", X, lambda n: [ins(ex(n, action=act(n.a("PIngress.miss"), (1, b"\x01"))))]),
    Case("defaultonly_action_as_default", X, lambda n: [mod(entry(n.t(EX), (), act(n.a("PIngress.miss"), (1, b"\x05")),
                                                                  default=True))]),
    Case("tableonly_action_in_entry", X, lambda n: [ins(ex(n, action=act(n.a("PIngress.hit"))))]),
    Case("tableonly_action_as_default", X, lambda n: [mod(entry(n.t(EX), (), act(n.a("PIngress.hit")),
                                                                default=True))]),
    Case("const_default_set", X, lambda n: [mod(entry(n.t(CD), (), act(n.a("PIngress.drop")), default=True))]),
    Case("const_default_reset", X, lambda n: [mod(entry(n.t(CD), default=True))]),
    Case("exact_field_missing", X, lambda n: [ins(entry(n.t(EX), [exact(n.f(EX, "hdr.eth.dst"), b"\x01")],
                                                        act(n.a("PIngress.drop"))))]),
    Case("exact_with_priority", X, lambda n: [ins(ex(n, priority=1))]),
    Case("exact_value_empty_bytes", X, lambda n: [ins(entry(n.t(EX), [exact(n.f(EX, "hdr.eth.dst"), b""),
                                                                      exact(n.f(EX, "hdr.eth.type"), b"")],
                                                            act(n.a("PIngress.drop"))))], read=EX),
    Case("exact_t_full", X, lambda n: [ins(ex(n, 5))], lambda n: [ins(ex(n, i)) for i in range(1, 5)],
         target=True),
    Case("optional_field", X, lambda n: [ins(entry(n.t(OPT), [optional(n.f(OPT, "hdr.eth.src"), b"\x01"),
                                                              exact(n.f(OPT, "hdr.eth.type"), b"\x08\x00")],
                                                   act(n.a("PIngress.drop")), 1))], read=OPT),
    Case("optional_field_omitted", X, lambda n: [ins(entry(n.t(OPT), [exact(n.f(OPT, "hdr.eth.type"), b"\x08\x00")],
                                                           act(n.a("PIngress.drop")), 1))], read=OPT),
    Case("optional_without_priority", X, lambda n: [ins(entry(n.t(OPT), [exact(n.f(OPT, "hdr.eth.type"), b"\x08")],
                                                              act(n.a("PIngress.drop"))))]),
    Case("lpm9_all_ones_prefix_9", X, lambda n: [ins(port9(n, L9, lpm(1, b"\x01\xff", 9)))]),
    Case("lpm9_0x180_prefix_9", X, lambda n: [ins(port9(n, L9, lpm(1, b"\x01\x80", 9)))], read=L9),
    Case("lpm9_0x100_prefix_1", X, lambda n: [ins(port9(n, L9, lpm(1, b"\x01\x00", 1)))]),
    Case("lpm9_value_512", X, lambda n: [ins(port9(n, L9, lpm(1, b"\x02\x00", 9)))]),
    Case("range9_omitted_reads_back", X, lambda n: [ins(port9(n, R9, None, 1))], read=R9),
    Case("range9_full_range", X, lambda n: [ins(port9(n, R9, rng(1, b"\x00\x00", b"\x01\xff"), 1))], read=R9),
    Case("const_entries_insert", X, lambda n: [ins(entry(n.t(CONST), [exact(1, b"\x08\x06")],
                                                         act(n.a("PIngress.drop"))))], target=True),
    Case("const_entries_delete", X, lambda n: [dele(entry(n.t(CONST), [exact(1, b"\x08\x00")]))]),
    # counters, meters, direct counters
    Case("counter_modify", X, lambda n: [mod(counter(n.c("PIngress.hits"), 3, 5, 500))]),
    Case("counter_delete_resets", X, lambda n: [dele(counter(n.c("PIngress.hits"), 3))]),
    Case("counter_index_8_of_8", X, lambda n: [mod(counter(n.c("PIngress.hits"), 8, 5, 500))], target=True),
    Case("counter_insert", X, lambda n: [ins(counter(n.c("PIngress.hits"), 0, 1, 1))]),
    Case("counter_without_index", X, lambda n: [mod(counter(n.c("PIngress.hits"), None, 1, 1))]),
    Case("counter_negative_index", X, lambda n: [mod(counter(n.c("PIngress.hits"), -1, 1, 1))]),
    Case("counter_id_of_meter", X, lambda n: [mod(counter(n.c("PIngress.rate"), 0, 1, 1))]),
    Case("meter_modify", X, lambda n: [mod(meter(n.c("PIngress.rate"), 0, 1000, 100, 2000, 200))]),
    Case("meter_cir_above_pir", X, lambda n: [mod(meter(n.c("PIngress.rate"), 0, 3000, 100, 2000, 200))],
         target=True),
    Case("meter_negative_cir", X, lambda n: [mod(meter(n.c("PIngress.rate"), 0, -2, 100, 2000, 200))]),
    Case("meter_index_4_of_4", X, lambda n: [mod(meter(n.c("PIngress.rate"), 4, 1000, 100, 2000, 200))],
         target=True),
    Case("meter_delete", X, lambda n: [dele(meter(n.c("PIngress.rate"), 0, 1000, 100, 2000, 200))]),
    Case("direct_counter_modify", X, lambda n: [mod(P.Entity(direct_counter_entry=P.DirectCounterEntry(
        table_entry=entry(n.t(CNT), [exact(1, b"\x08\x00")]).table_entry, data=P.CounterData(packet_count=3))))],
         lambda n: [ins(entry(n.t(CNT), [exact(1, b"\x08\x00")], act(n.a("PIngress.count_type"))))]),
    Case("direct_counter_missing_entry", X, lambda n: [mod(P.Entity(direct_counter_entry=P.DirectCounterEntry(
        table_entry=entry(n.t(CNT), [exact(1, b"\x08\x00")]).table_entry, data=P.CounterData(packet_count=3))))]),
    Case("direct_counter_on_plain_table", X, lambda n: [mod(P.Entity(direct_counter_entry=P.DirectCounterEntry(
        table_entry=ex(n).table_entry, data=P.CounterData(packet_count=3))))], lambda n: [ins(ex(n))]),
]


@dataclass
class Outcome:
    codes: str                      # "OK", "CODE[,CODE...]" per update, or "!CODE" for the whole request
    messages: str = ""              # PI's messages, " | " between updates
    read: list[str] = field(default_factory=list)   # the read-back table entries, as text

    def line(self, name: str) -> str:
        return f"{name:<40} {self.codes:<24} {self.messages}".rstrip()


def code_name(code: int) -> str:
    return code_pb2.Code.Name(code)


def outcome(e: grpc.RpcError | None) -> Outcome:
    if e is None:
        return Outcome("OK")
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            if status.details:
                errors = []
                for d in status.details:
                    err = P.Error()
                    d.Unpack(err)
                    errors.append(err)
                assert status.code == code_pb2.UNKNOWN and status.message == "", status
                return Outcome(",".join(code_name(x.canonical_code) for x in errors),
                               " | ".join(x.message for x in errors))
    return Outcome("!" + e.code().name, e.details() or "")


def push(stub, device_id: int, info: p4info_pb2.P4Info, device_config: bytes) -> None:
    req = P.SetForwardingPipelineConfigRequest(device_id=device_id, action=P.SetForwardingPipelineConfigRequest.
                                               VERIFY_AND_COMMIT)
    req.config.p4info.CopyFrom(info)
    req.config.p4_device_config = device_config
    stub.SetForwardingPipelineConfig(req)


def _clear_pre(stub, device_id: int) -> None:
    """Delete every multicast group and clone session (PI forgets them on a new pipeline; BMv2 may not)."""
    pre = P.PacketReplicationEngineEntry
    wants = [P.Entity(packet_replication_engine_entry=pre(multicast_group_entry=P.MulticastGroupEntry())),
             P.Entity(packet_replication_engine_entry=pre(clone_session_entry=P.CloneSessionEntry()))]
    found = [e for w in wants for r in stub.Read(P.ReadRequest(device_id=device_id, entities=[w])) for e in r.entities]
    if found:
        stub.Write(P.WriteRequest(device_id=device_id, updates=[dele(e) for e in found]))


def run(stub, device_id: int, info: p4info_pb2.P4Info, device_config: bytes, case: Case) -> Outcome:
    """Push the pipeline, write the setup (all must succeed), write the probe; its outcome."""
    n = Names(info)
    push(stub, device_id, info, device_config)
    try:
        setup = case.setup(n)
        if setup:
            stub.Write(P.WriteRequest(device_id=device_id, updates=setup))
        try:
            stub.Write(P.WriteRequest(device_id=device_id, updates=case.probe(n), atomicity=case.atomicity))
            out = outcome(None)
        except grpc.RpcError as e:
            out = outcome(e)
        out.messages = n.label(out.messages)
        if case.read:
            want = P.Entity(table_entry=P.TableEntry(table_id=n.t(case.read)))
            for r in stub.Read(P.ReadRequest(device_id=device_id, entities=[want])):
                out.read += [text_format.MessageToString(e, as_one_line=True) for e in r.entities]
        return out
    finally:
        _clear_pre(stub, device_id)


def recorded() -> tuple[dict[str, Outcome], str]:
    """The recorded table (name -> Outcome) and its ``source:`` line."""
    table, source = {}, ""
    for line in RECORDED.read_text().splitlines():
        if line.startswith("# source:"):
            source = line.split(":", 1)[1].strip()
        if not line.strip() or line.startswith("#"):
            continue
        name, codes, *rest = line.split(None, 2)
        table[name] = Outcome(codes, rest[0] if rest else "")
    return table, source


HEADER = """\
# What BMv2's P4Runtime server (PI) answers to each write of tests/pi_write_cases.py, one case a line:
#   name  codes  messages
# codes: OK; or the canonical code of each update of the probe Write, from the google.rpc.Status
# details PI sends (the call itself then ends with UNKNOWN and an empty message); or !CODE when the
# whole request is refused. messages: PI's message for each update, " | " between them.
# The fake switch (dcnlab/controller/runtime/fake_server.py) must give the same codes and messages
# (tests/test_fake_vs_bmv2.py::test_fake_answers_as_recorded), and so must BMv2
# (test_bmv2_answers_as_recorded, marker bmv2: root, simple_switch_grpc and p4c). P4 ids in
# messages are written <name>, since p4c's ids differ from those of the committed P4Info copies.
# Re-record against a real BMv2 (as root, with simple_switch_grpc and p4c installed):
#   DCNLAB_RECORD_PI_STATUSES=1 .venv/bin/python -m pytest tests/test_fake_vs_bmv2.py -m bmv2
"""


def write_recorded(results: dict[str, Outcome], source: str) -> None:
    lines = [HEADER + f"# source: {source}", ""]
    lines += [results[c.name].line(c.name) for c in CASES if c.name in results]
    RECORDED.write_text("\n".join(lines) + "\n")
