"""One entity representation for everything the controller writes or reads.

Table entries, multicast groups and clone sessions (the PRE), meter configs and
counter cells are plain frozen dataclasses with names, not ids. They become
P4Runtime protobufs only against a :class:`~dcnlab.controller.runtime.p4info.P4Info`.
As in finsy, a unary operator turns an entity into an update:
``+e`` inserts, ``~e`` modifies, ``-e`` deletes.

Match values: an exact field takes an int, an IPv4/MAC string or bytes; an LPM field
takes ``(value, prefix_len)``; a ternary field takes ``(value, mask)``; a range field
takes ``(low, high)``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

from dcnlab.controller.runtime.proto import p4info_pb2, p4runtime_pb2

from dcnlab.controller.runtime.errors import P4InfoError
from dcnlab.controller.runtime.p4info import P4Info, decode, encode

MatchValue = Any
Items = Mapping[str, Any] | tuple[tuple[str, Any], ...]
"""A mapping or (name, value) pairs; stored as sorted pairs so entities are hashable."""


class UpdateType(enum.Enum):
    INSERT = p4runtime_pb2.Update.INSERT
    MODIFY = p4runtime_pb2.Update.MODIFY
    DELETE = p4runtime_pb2.Update.DELETE


@dataclass(frozen=True)
class Update:
    type: UpdateType
    entity: Entity

    def to_proto(self, info: P4Info) -> p4runtime_pb2.Update:
        u = p4runtime_pb2.Update()
        self.fill(info, u)
        return u

    def fill(self, info: P4Info, u: p4runtime_pb2.Update) -> None:
        """Write this update into ``u`` in place (no copies: protobuf is pure Python here)."""
        u.type = self.type.value
        self.entity.fill(info, u.entity)

    def __str__(self) -> str:
        return f"{self.type.name} {self.entity}"


class Entity:
    """Base of writable entities."""

    writable: ClassVar[bool] = True

    def __pos__(self) -> Update:
        return Update(UpdateType.INSERT, self)

    def __invert__(self) -> Update:
        return Update(UpdateType.MODIFY, self)

    def __neg__(self) -> Update:
        return Update(UpdateType.DELETE, self)

    def key(self) -> tuple:
        """Identity of the entity on a switch (what INSERT/DELETE refer to)."""
        raise NotImplementedError

    def always_there(self) -> bool:
        """Whether every pipeline already has this entity, so that P4Runtime only lets a controller MODIFY it
        (a table's default entry, a meter's or counter's cell)."""
        return False

    def rewrite(self) -> Update:
        """The update that writes this entity again on a switch whose pipeline was just set (a reconnect's
        replay): INSERT, or MODIFY for what is :meth:`always_there` (an INSERT of a default entry is refused
        with 'Cannot use INSERT for default entry')."""
        return ~self if self.always_there() else +self

    def to_proto(self, info: P4Info) -> p4runtime_pb2.Entity:
        e = p4runtime_pb2.Entity()
        self.fill(info, e)
        return e

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        """Write this entity into ``e`` in place."""
        raise NotImplementedError


Pairs = tuple[tuple[str, Any], ...]


def _pairs(v: Items) -> Pairs:
    """The stored form of a match/params field (``__post_init__`` has normalised it)."""
    return cast(Pairs, v)


def _frozen_items(m: Mapping[str, Any] | tuple | None) -> tuple[tuple[str, Any], ...]:
    if m is None:
        return ()
    items = m.items() if isinstance(m, Mapping) else m
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in items))


@dataclass(frozen=True)
class TableEntry(Entity):
    table: str
    match: Items = ()
    action: str | None = None
    params: Items = ()
    priority: int = 0
    is_default: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "match", _frozen_items(self.match))
        object.__setattr__(self, "params", _frozen_items(self.params))

    def key(self) -> tuple:
        return ("table", self.table, self.match, self.priority, self.is_default)

    def always_there(self) -> bool:
        return self.is_default

    def __str__(self) -> str:
        m = ", ".join(f"{k}={v}" for k, v in _pairs(self.match))
        p = ", ".join(f"{k}={v}" for k, v in _pairs(self.params))
        return f"{self.table}[{m}] -> {self.action}({p})"

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        t = info.table(self.table)
        te = e.table_entry
        te.table_id = t.id
        te.priority = self.priority
        te.is_default_action = self.is_default
        for name, value in _pairs(self.match):
            f = t.fields.get(name)
            if f is None:
                raise P4InfoError(f"table {t.name} has no match field {name!r}; fields: {', '.join(t.fields)}")
            fm = te.match.add(field_id=f.id)
            what = f"{t.name}.{name}"
            mt = f.match_type
            if mt == p4info_pb2.MatchField.EXACT:
                fm.exact.value = encode(value, f.bitwidth, what)
            elif mt == p4info_pb2.MatchField.LPM:
                fm.lpm.value, fm.lpm.prefix_len = encode(value[0], f.bitwidth, what), int(value[1])
            elif mt == p4info_pb2.MatchField.TERNARY:
                fm.ternary.value, fm.ternary.mask = encode(value[0], f.bitwidth, what), encode(value[1], f.bitwidth, what)
            elif mt == p4info_pb2.MatchField.RANGE:
                fm.range.low, fm.range.high = encode(value[0], f.bitwidth, what), encode(value[1], f.bitwidth, what)
            elif mt == p4info_pb2.MatchField.OPTIONAL:
                fm.optional.value = encode(value, f.bitwidth, what)
            else:
                raise P4InfoError(f"unsupported match type {mt} for {what}")
        if self.action is not None:
            a = info.action(self.action)
            if t.action_ids and a.id not in t.action_ids:
                raise P4InfoError(f"action {a.name} is not an action of table {t.name}")
            te.action.action.action_id = a.id
            given = dict(_pairs(self.params))
            unknown = set(given) - set(a.params)
            if unknown:
                raise P4InfoError(f"action {a.name} has no parameter(s) {', '.join(sorted(unknown))}")
            for pname, p in a.params.items():
                if pname not in given:
                    raise P4InfoError(f"action {a.name} needs parameter {pname!r}")
                te.action.action.params.add(param_id=p.id, value=encode(given[pname], p.bitwidth,
                                                                        f"{a.name}.{pname}"))

    @classmethod
    def from_proto(cls, info: P4Info, te: p4runtime_pb2.TableEntry) -> TableEntry:
        t = info.by_id(te.table_id)
        by_id = {f.id: f for f in t.fields.values()}
        match: list[tuple[str, Any]] = []
        for fm in te.match:
            name = by_id[fm.field_id].name
            kind = fm.WhichOneof("field_match_type")
            if kind == "exact":
                match.append((name, decode(fm.exact.value)))
            elif kind == "lpm":
                match.append((name, (decode(fm.lpm.value), fm.lpm.prefix_len)))
            elif kind == "ternary":
                match.append((name, (decode(fm.ternary.value), decode(fm.ternary.mask))))
            elif kind == "range":
                match.append((name, (decode(fm.range.low), decode(fm.range.high))))
            else:
                match.append((name, decode(fm.optional.value)))
        action: str | None = None
        params: list[tuple[str, int]] = []
        if te.action.HasField("action"):
            a = info.by_id(te.action.action.action_id)
            action = a.name
            pid = {p.id: p.name for p in a.params.values()}
            params = [(pid[p.param_id], decode(p.value)) for p in te.action.action.params]
        return cls(t.name, tuple(match), action, tuple(params), te.priority, te.is_default_action)


def _replicas(pairs) -> tuple[tuple[int, int], ...]:
    return tuple((int(p), int(i)) for p, i in pairs)


def _add_replicas(msg, replicas: tuple[tuple[int, int], ...]) -> None:
    for port, inst in replicas:
        msg.replicas.add(egress_port=port, instance=inst)


@dataclass(frozen=True)
class MulticastGroup(Entity):
    """A PRE multicast group: ``replicas`` are (egress port, instance) pairs."""

    mgid: int
    replicas: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.mgid < 1 << 15:
            raise P4InfoError(f"multicast group id {self.mgid} out of range; valid: 1..32767 "
                              f"(PI keeps ids >= 32768 for clone sessions)")
        object.__setattr__(self, "replicas", _replicas(self.replicas))

    def key(self) -> tuple:
        return ("mcast", self.mgid)

    def __str__(self) -> str:
        return f"mcast group {self.mgid} -> {list(self.replicas)}"

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        g = e.packet_replication_engine_entry.multicast_group_entry
        g.multicast_group_id = self.mgid
        _add_replicas(g, self.replicas)


@dataclass(frozen=True)
class CloneSession(Entity):
    session_id: int
    replicas: tuple[tuple[int, int], ...] = ()
    class_of_service: int = 0
    packet_length_bytes: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "replicas", _replicas(self.replicas))

    def key(self) -> tuple:
        return ("clone", self.session_id)

    def __str__(self) -> str:
        return f"clone session {self.session_id} -> {list(self.replicas)}"

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        c = e.packet_replication_engine_entry.clone_session_entry
        c.session_id = self.session_id
        c.class_of_service = self.class_of_service
        c.packet_length_bytes = self.packet_length_bytes
        _add_replicas(c, self.replicas)


@dataclass(frozen=True)
class MeterConfig(Entity):
    """Indirect meter cell config: rates in units/s and bursts in units (bytes or packets)."""

    meter: str
    index: int
    cir: int
    cburst: int
    pir: int
    pburst: int

    def key(self) -> tuple:
        return ("meter", self.meter, self.index)

    def always_there(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"meter {self.meter}[{self.index}] cir={self.cir} pir={self.pir}"

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        m = e.meter_entry
        m.meter_id = info.meter(self.meter).id
        m.index.index = self.index
        m.config.cir, m.config.cburst, m.config.pir, m.config.pburst = self.cir, self.cburst, self.pir, self.pburst


@dataclass(frozen=True)
class Counter(Entity):
    """A counter cell: ``index=None`` reads every cell. Writing sets the cell's values."""

    counter: str
    index: int | None = None
    packets: int = 0
    bytes: int = 0

    def key(self) -> tuple:
        return ("counter", self.counter, self.index)

    def always_there(self) -> bool:
        return True

    def __str__(self) -> str:
        return f"counter {self.counter}[{'*' if self.index is None else self.index}]"

    def fill(self, info: P4Info, e: p4runtime_pb2.Entity) -> None:
        c = e.counter_entry
        c.counter_id = info.counter(self.counter).id
        if self.index is not None:
            c.index.index = self.index
            c.data.packet_count, c.data.byte_count = self.packets, self.bytes

    @classmethod
    def from_proto(cls, info: P4Info, ce: p4runtime_pb2.CounterEntry) -> Counter:
        return cls(info.by_id(ce.counter_id).name, ce.index.index, ce.data.packet_count, ce.data.byte_count)


@dataclass
class SwitchState:
    """The desired state of one switch, in write order: what a reconnect re-pushes."""

    entities: dict[tuple, Entity] = field(default_factory=dict)

    def apply(self, update: Update) -> None:
        if update.type is UpdateType.DELETE:
            self.entities.pop(update.entity.key(), None)
        else:
            self.entities[update.entity.key()] = update.entity

    def replay(self) -> list[Update]:
        """Updates that write this state again after the pipeline was set (INSERT, or MODIFY for a default
        entry or a meter's or counter's cell: :meth:`Entity.rewrite`)."""
        return [e.rewrite() for e in self.entities.values()]
