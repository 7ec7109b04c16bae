"""The fake switch's state and what a Write or Read does to it, as BMv2's P4Runtime server (PI) does.

PI's frontend (p4lang/PI ``proto/frontend/src/device_mgr.cpp``, ``pre_mc_mgr.cpp``,
``pre_clone_mgr.cpp``) checks every update of a Write on its own, in the order of the batch, and
answers with one ``p4.v1.Error`` per update (OK for those that passed) in a ``google.rpc.Status``
whose code is UNKNOWN and whose message is empty when any update failed. Table entries are
checked against the P4Info by :mod:`dcnlab.controller.runtime.p4info_checks`; here are the
existence rules (ALREADY_EXISTS, NOT_FOUND), the PRE (multicast groups, clone sessions), counters,
meters, and the limits BMv2 (the target below PI) adds, which PI reports as UNKNOWN "Error when
... target": a table holds its P4Info ``size`` entries, a table with ``const entries`` takes none,
the PRE holds 4,096 groups (clone sessions included) and 4,096 replica nodes, clone sessions do
not truncate (``packet_length_bytes`` must be 0), counter and meter
indexes stop at the P4Info size, a meter's CIR may not exceed its PIR.

Not modelled beyond their ids and duplicates: action profiles and digests. Registers, value sets
and externs are refused with UNIMPLEMENTED, as PI does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dcnlab.controller.runtime.p4info_checks import (INVALID, INVALID_ID, P4Ids, P4InfoChecks, Refused,
                                                     check_meter_config)
from dcnlab.controller.runtime.proto import code_pb2, p4info_pb2, p4runtime_pb2, status_pb2

U = p4runtime_pb2.Update
TARGET_GROUPS = 4096        # BMv2's McSimplePre: multicast groups (mgid table), clone sessions' included
TARGET_NODES = 4096         # BMv2's McSimplePre: L1 nodes, one per group and replica instance
RESERVED_GROUP = 1 << 15    # PI: group ids from here on are its clone sessions' (32768 + session id)
ERROR_SPACE = "ALL-sswitch-p4org"
NO_ATOMIC = "Support for atomic write modes has not been implemented yet"


def _update_type(typ: int) -> None:
    if typ == U.UNSPECIFIED:
        raise Refused(INVALID, "Update type is not set")
    if typ not in (U.INSERT, U.MODIFY, U.DELETE):
        raise Refused(INVALID, "Invalid update type")


def _replica_port(r: p4runtime_pb2.Replica) -> tuple[int, int, int]:
    """PI's ``GetReplicaPort``: (kind, port, bytes given); ``port`` bytes must be a positive int32."""
    kind = r.WhichOneof("port_kind")
    if kind == "egress_port":
        return (1, r.egress_port, 0)
    if kind != "port":
        raise Refused(INVALID, "Missing port in multicast group replica")
    if not r.port:
        raise Refused(INVALID, "Port must not be the empty string")
    if len(r.port) > 4:
        raise Refused(code_pb2.UNIMPLEMENTED, "Got port of %d bytes, but only 4 bytes are supported")  # sic
    value = int.from_bytes(r.port, "big")
    if value == 0 or value >= 1 << 31:
        raise Refused(INVALID, "Port must be non-negative.")
    return (3, value, len(r.port))


def _session_set(c: p4runtime_pb2.CloneSessionEntry) -> None:
    """PI's ``PreCloneMgr::session_set`` over BMv2, which does not truncate clones: a packet length
    (as PI's 16 bits) other than 0 is refused by the target."""
    if c.class_of_service != 0:
        raise Refused(code_pb2.UNIMPLEMENTED, "COS for clone sessions not supported yet")
    if c.packet_length_bytes % (1 << 16):
        raise Refused(code_pb2.UNKNOWN, "Error when creating clone session in target")


def _nodes(replicas) -> dict[int, set]:
    """PI's ``make_new_group``: replica instance -> its ports; a (instance, port) pair once."""
    nodes: dict[int, set] = {}
    for r in replicas:
        port = _replica_port(r)
        ports = nodes.setdefault(r.instance, set())
        if port in ports:
            raise Refused(INVALID, "Duplicate replica in multicast group")
        ports.add(port)
    return nodes


@dataclass
class DeviceState:
    p4info: p4info_pb2.P4Info | None = None
    device_config: bytes = b""
    entities: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    """What is installed, as the controller wrote it, by PI's key (table entries, PRE, meters, ...)."""
    counters: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    cookie: int | None = None
    defaults: dict[int, p4runtime_pb2.TableEntry] = field(default_factory=dict)
    """Default entries a controller set (MODIFY with ``is_default_action``), by table id."""
    read_forms: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    groups: dict[int, dict[int, set]] = field(default_factory=dict)
    sessions: dict[int, tuple[int, int]] = field(default_factory=dict)
    table_counts: dict[int, int] = field(default_factory=dict)
    _checks: P4InfoChecks | None = None

    @property
    def checks(self) -> P4InfoChecks:
        if self._checks is None:
            assert self.p4info is not None
            self._checks = P4InfoChecks(self.p4info)
        return self._checks

    # -- Write ----------------------------------------------------------------------------
    def write(self, request: p4runtime_pb2.WriteRequest) -> status_pb2.Status:
        """Apply the updates one by one; PI's status: OK, or UNKNOWN with one detail per update."""
        if request.atomicity != p4runtime_pb2.WriteRequest.CONTINUE_ON_ERROR:
            return status_pb2.Status(code=code_pb2.UNIMPLEMENTED, message=NO_ATOMIC)
        errors = []
        for u in request.updates:
            try:
                self.apply(u)
                errors.append(p4runtime_pb2.Error())
            except Refused as r:
                errors.append(p4runtime_pb2.Error(canonical_code=r.code, message=r.message, space=ERROR_SPACE))
        if all(e.canonical_code == code_pb2.OK for e in errors):
            return status_pb2.Status(code=code_pb2.OK)
        status = status_pb2.Status(code=code_pb2.UNKNOWN)
        for e in errors:
            status.details.add().Pack(e)
        return status

    def apply(self, u: p4runtime_pb2.Update) -> None:
        """One update, or :class:`Refused` with PI's code and message."""
        kind = u.entity.WhichOneof("entity")
        if kind == "table_entry":
            self._table(u.type, u.entity)
        elif kind == "packet_replication_engine_entry":
            pre = u.entity.packet_replication_engine_entry
            which = pre.WhichOneof("type")
            if which == "multicast_group_entry":
                self._mcast(u.type, u.entity, pre.multicast_group_entry)
            elif which == "clone_session_entry":
                self._clone(u.type, u.entity, pre.clone_session_entry)
            else:
                raise Refused(INVALID, "Invalid PRE operation")
        elif kind in ("counter_entry", "meter_entry"):
            self._indexed(u.type, u.entity, kind)
        elif kind in ("direct_counter_entry", "direct_meter_entry"):
            self._direct(u.type, getattr(u.entity, kind), kind)
        elif kind in ("action_profile_member", "action_profile_group"):
            self._profile(u.type, u.entity, kind)
        elif kind == "register_entry":
            raise Refused(code_pb2.UNIMPLEMENTED, "Register writes are not supported yet")
        elif kind == "value_set_entry":
            raise Refused(code_pb2.UNIMPLEMENTED, "ValueSet writes are not supported yet")
        elif kind == "extern_entry":
            raise Refused(code_pb2.UNIMPLEMENTED)
        elif kind == "digest_entry":
            self._store(u.type, ("digest", u.entity.digest_entry.digest_id), u.entity, "Digest")
        else:
            raise Refused(code_pb2.UNKNOWN, "Incorrect entity type")

    def _table(self, typ: int, ent: p4runtime_pb2.Entity) -> None:
        te, ck = ent.table_entry, self.checks
        t = ck.table(te.table_id)
        if te.HasField("time_since_last_hit"):
            raise Refused(INVALID, "has_time_since_last_hit must not be set in WriteRequest")
        _update_type(typ)
        if typ == U.INSERT:
            if te.is_default_action:
                raise Refused(INVALID, "Cannot use INSERT for default entry")
            if not te.HasField("action"):
                raise Refused(INVALID, "'action' field must be set")
        if typ == U.DELETE and te.is_default_action:
            raise Refused(INVALID, "Cannot use DELETE for default entry")
        key = ("table", ck.match_key(t, te))
        if typ != U.DELETE:
            ck.check_action(t, te)
            if te.HasField("action"):
                self._action_entry(t, te)
            elif not te.is_default_action:
                raise Refused(INVALID, "'action' field must be set for non-default entries")
            ck.direct_resources(t, te)
            ck.check_ttl(t, te)
        if te.is_default_action:                      # MODIFY: set, or reset without an action
            if te.HasField("action"):
                self.defaults[t.id] = te
            else:
                self.defaults.pop(t.id, None)
            return
        if typ == U.INSERT:
            if key in self.entities:
                raise Refused(code_pb2.ALREADY_EXISTS, "Match entry exists, use MODIFY if you wish to change action")
            if t.const_table or (t.size and self.table_counts.get(t.id, 0) >= t.size):
                raise Refused(code_pb2.UNKNOWN, "Error when adding match entry to target")
            self.table_counts[t.id] = self.table_counts.get(t.id, 0) + 1
        elif key not in self.entities:
            raise Refused(code_pb2.NOT_FOUND, "Cannot find match entry")
        elif typ == U.DELETE:
            self.table_counts[t.id] -= 1
            del self.entities[key], self.read_forms[key]
            return
        self.entities[key] = ent
        self.read_forms[key] = p4runtime_pb2.Entity(table_entry=ck.read_form(te, key[1]))

    def _action_entry(self, t, te: p4runtime_pb2.TableEntry) -> None:
        kind = te.action.WhichOneof("type")
        if kind == "action":
            self.checks.action_data(te.action.action)
        elif kind == "action_profile_member_id":
            if not any(k[0] == "member" and k[2] == te.action.action_profile_member_id for k in self.entities):
                raise Refused(INVALID, "Invalid member / group id")
        elif kind == "action_profile_group_id":
            if not any(k[0] == "group" and k[2] == te.action.action_profile_group_id for k in self.entities):
                raise Refused(INVALID, "Invalid member / group id")

    # -- PRE --------------------------------------------------------------------------------
    def _mcast(self, typ: int, ent: p4runtime_pb2.Entity, g: p4runtime_pb2.MulticastGroupEntry) -> None:
        gid = g.multicast_group_id
        if gid == 0:
            raise Refused(INVALID, "0 is not a valid group id")
        if gid >= RESERVED_GROUP:
            raise Refused(code_pb2.OUT_OF_RANGE, "Group id value is too high")
        _update_type(typ)
        if typ == U.INSERT:
            self._group_create(gid, g.replicas)
        elif typ == U.MODIFY:
            self._group_modify(gid, g.replicas)
        else:
            self._group_delete(gid)
            del self.entities[("mcast", gid)]
            return
        self.entities[("mcast", gid)] = ent

    def _group_create(self, gid: int, replicas) -> None:
        if gid in self.groups:
            raise Refused(code_pb2.ALREADY_EXISTS, "Multicast group already exists")
        nodes = _nodes(replicas)
        if len(self.groups) >= TARGET_GROUPS:
            raise Refused(code_pb2.UNKNOWN, "Error when creating multicast group in target")
        if self._node_count() + len(nodes) > TARGET_NODES:
            raise Refused(code_pb2.UNKNOWN, "Error when modifying multicast group in target")
        self.groups[gid] = nodes

    def _group_modify(self, gid: int, replicas) -> None:
        if gid not in self.groups:
            raise Refused(code_pb2.NOT_FOUND, "Multicast group does not exist")
        nodes = _nodes(replicas)
        if self._node_count() + len(set(nodes) - set(self.groups[gid])) > TARGET_NODES:
            raise Refused(code_pb2.UNKNOWN, "Error when modifying multicast group in target")
        self.groups[gid] = nodes

    def _group_delete(self, gid: int) -> None:
        if self.groups.pop(gid, None) is None:
            raise Refused(code_pb2.NOT_FOUND, "Multicast group does not exist")

    def _node_count(self) -> int:
        return sum(len(nodes) for nodes in self.groups.values())

    def _clone(self, typ: int, ent: p4runtime_pb2.Entity, c: p4runtime_pb2.CloneSessionEntry) -> None:
        sid = c.session_id
        if sid == 0:
            raise Refused(INVALID, "0 is not a valid session id")
        _update_type(typ)
        if sid >= RESERVED_GROUP:
            raise Refused(INVALID, "Clone session id out-of-range")
        config = (c.class_of_service, c.packet_length_bytes)
        if typ == U.INSERT:
            if sid in self.sessions:
                raise Refused(code_pb2.ALREADY_EXISTS, "Clone session id already exists")
            self._group_create(RESERVED_GROUP + sid, c.replicas)
            try:
                _session_set(c)
            except Refused:
                del self.groups[RESERVED_GROUP + sid]
                raise
        elif typ == U.MODIFY:
            if sid not in self.sessions:
                raise Refused(code_pb2.NOT_FOUND, "Clone session id does not exist")
            self._group_modify(RESERVED_GROUP + sid, c.replicas)   # PI keeps the replicas if the rest fails
            if config != self.sessions[sid]:
                _session_set(c)
        else:
            if sid not in self.sessions:
                raise Refused(code_pb2.NOT_FOUND, "Clone session id does not exist")
            self._group_delete(RESERVED_GROUP + sid)
            del self.sessions[sid], self.entities[("clone", sid)]
            return
        self.sessions[sid] = config
        self.entities[("clone", sid)] = ent

    # -- counters, meters, direct resources, action profiles ------------------------------
    def _indexed(self, typ: int, ent: p4runtime_pb2.Entity, kind: str) -> None:
        """PI's ``counter_write`` / ``meter_write``: MODIFY sets a cell, DELETE of a counter zeroes it."""
        e = getattr(ent, kind)
        counter = kind == "counter_entry"
        rid = e.counter_id if counter else e.meter_id
        what = "counter" if counter else "meter"
        if not self.checks.valid(rid, P4Ids.COUNTER if counter else P4Ids.METER):
            raise Refused(INVALID, INVALID_ID)
        if not e.HasField("index"):
            raise Refused(code_pb2.UNIMPLEMENTED, f"Wildcard write is not supported for indirect {what}s yet")
        if e.index.index < 0:
            raise Refused(INVALID, "A negative number is not a valid index value")
        _update_type(typ)
        if typ == U.INSERT or (typ == U.DELETE and not counter):
            raise Refused(INVALID, f"{'INSERT' if typ == U.INSERT else 'DELETE'} update type not supported "
                                   f"for {what}s")
        size = (self.checks.counters[rid][0] if counter else self.checks.meters[rid])
        if counter:
            if e.index.index >= size:
                raise Refused(code_pb2.UNKNOWN, "Error when writing to counter")
            unit = self.checks.counters[rid][1]
            d = e.data if typ == U.MODIFY else p4runtime_pb2.CounterData()
            CU = p4info_pb2.CounterSpec
            self.counters[(rid, e.index.index)] = (d.packet_count if unit != CU.BYTES else 0,
                                                   d.byte_count if unit != CU.PACKETS else 0)
            return
        if e.HasField("config"):
            check_meter_config(e.config)
        c = e.config
        default = not e.HasField("config") or (c.cir, c.cburst, c.pir, c.pburst) == (-1, -1, -1, -1)
        if e.index.index >= size or (not default and c.cir % (1 << 64) > c.pir % (1 << 64)):
            raise Refused(code_pb2.UNKNOWN, "Error when writing meter spec")
        self.entities[("meter", rid, e.index.index)] = ent

    def _direct(self, typ: int, e, kind: str) -> None:
        what = "Counter" if kind == "direct_counter_entry" else "Meter"
        if not e.HasField("table_entry"):
            raise Refused(INVALID, f"Missing table_entry field in Direct{what}Entry")
        t = self.checks.table(e.table_entry.table_id)
        key = ("table", self.checks.match_key(t, e.table_entry))
        if not e.table_entry.is_default_action and key not in self.entities:
            raise Refused(INVALID, "Cannot map table entry to handle")
        if not (t.direct_counter if what == "Counter" else t.direct_meter):
            raise Refused(INVALID, f"Table has no direct {what.lower()}s")
        _update_type(typ)
        if typ != U.MODIFY and (typ == U.INSERT or what == "Meter"):
            raise Refused(INVALID, f"{'INSERT' if typ == U.INSERT else 'DELETE'} update type not supported "
                                   f"for {what.lower()}s")
        if what == "Meter" and e.HasField("config"):
            check_meter_config(e.config)
        if what == "Meter" and e.table_entry.is_default_action:    # BMv2: no direct meters on default entries
            raise Refused(code_pb2.UNKNOWN, "Error when writing direct meter spec")

    def _profile(self, typ: int, ent: p4runtime_pb2.Entity, kind: str) -> None:
        e = getattr(ent, kind)
        if not self.checks.valid(e.action_profile_id, P4Ids.ACTION_PROFILE):
            raise Refused(INVALID, INVALID_ID)
        _update_type(typ)
        if kind == "action_profile_member":
            self._store(typ, ("member", e.action_profile_id, e.member_id), ent, "Member", e.member_id)
        else:
            self._store(typ, ("group", e.action_profile_id, e.group_id), ent, "Group", e.group_id)

    def _store(self, typ: int, key: tuple, ent: p4runtime_pb2.Entity, what: str, ident: object = "") -> None:
        _update_type(typ)
        if typ == U.INSERT and key in self.entities:
            raise Refused(code_pb2.ALREADY_EXISTS, f"Duplicate {what.lower()} id: {ident}")
        if typ != U.INSERT and key not in self.entities:
            raise Refused(code_pb2.NOT_FOUND, f"{what} id does not exist: {ident}")
        if typ == U.DELETE:
            del self.entities[key]
        else:
            self.entities[key] = ent

    # -- Read -------------------------------------------------------------------------------
    def read(self, want: p4runtime_pb2.Entity) -> list[p4runtime_pb2.Entity]:
        """The entities a Read of ``want`` returns, in PI's form, or :class:`Refused`."""
        kind = want.WhichOneof("entity")
        if kind == "table_entry":
            return self._read_tables(want.table_entry)
        if kind == "counter_entry":
            ce = want.counter_entry
            if ce.counter_id and not self.checks.valid(ce.counter_id, P4Ids.COUNTER):
                raise Refused(INVALID, INVALID_ID)
            out = []
            for (cid, idx), (pkts, byts) in sorted(self.counters.items()):
                if ce.counter_id in (0, cid) and (not ce.HasField("index") or ce.index.index == idx):
                    e = p4runtime_pb2.Entity()
                    e.counter_entry.counter_id, e.counter_entry.index.index = cid, idx
                    e.counter_entry.data.packet_count, e.counter_entry.data.byte_count = pkts, byts
                    out.append(e)
            return out
        if kind == "register_entry":
            raise Refused(code_pb2.UNIMPLEMENTED, "Register reads are not supported yet")
        if kind == "packet_replication_engine_entry":
            pre = want.packet_replication_engine_entry
            if pre.HasField("multicast_group_entry") and pre.multicast_group_entry.multicast_group_id:
                gid = pre.multicast_group_entry.multicast_group_id
                if gid >= RESERVED_GROUP:
                    raise Refused(code_pb2.OUT_OF_RANGE, "Group id value is too high")
                if ("mcast", gid) not in self.entities:
                    raise Refused(code_pb2.NOT_FOUND, "Multicast group does not exist")
                return [self.entities[("mcast", gid)]]
            if pre.HasField("clone_session_entry") and pre.clone_session_entry.session_id:
                sid = pre.clone_session_entry.session_id
                if ("clone", sid) not in self.entities:
                    raise Refused(code_pb2.NOT_FOUND, "Clone session id does not exist")
                return [self.entities[("clone", sid)]]
            sub = pre.WhichOneof("type")
            return [e for e in self.entities.values() if e.WhichOneof("entity") == kind
                    and e.packet_replication_engine_entry.WhichOneof("type") == sub]
        return [e for e in self.entities.values() if e.WhichOneof("entity") == kind]

    def _read_tables(self, want: p4runtime_pb2.TableEntry) -> list[p4runtime_pb2.Entity]:
        ck = self.checks
        if want.table_id:
            ids = [ck.table(want.table_id).id]
        else:
            ids = [t.preamble.id for t in ck.p4info.tables]
        if want.is_default_action:
            return [p4runtime_pb2.Entity(table_entry=ck.default_read_form(tid, self.defaults.get(tid))) for tid in ids]
        wanted = set(ids)
        one = ("table", ck.match_key(ck.tables[want.table_id], want)) if want.table_id and len(want.match) else None
        return [self.read_forms[k] for k, e in self.entities.items()
                if k[0] == "table" and e.table_entry.table_id in wanted and (one is None or k == one)]
