"""Index a P4Info by name and encode/decode values in P4Runtime's canonical byte form.

Names may be given in full (``DcnIngress.fwd.ipv4_host``) or by their last
component (``ipv4_host``) when that is unambiguous.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import text_format

from dcnlab.controller.runtime.errors import P4InfoError
from dcnlab.controller.runtime.proto import p4info_pb2


@dataclass(frozen=True)
class Field:
    id: int
    name: str
    bitwidth: int
    match_type: int = 0


@dataclass(frozen=True)
class Table:
    id: int
    name: str
    fields: dict[str, Field]
    action_ids: frozenset[int]
    size: int


@dataclass(frozen=True)
class Action:
    id: int
    name: str
    params: dict[str, Field]


@dataclass(frozen=True)
class Extern:
    """A counter, meter or register."""

    id: int
    name: str
    size: int


def encode(value: int | str | bytes, bitwidth: int, what: str = "value") -> bytes:
    """Canonical P4Runtime bytes (big-endian, no leading zero bytes) of ``value``."""
    if isinstance(value, bytes):
        value = int.from_bytes(value, "big")
    if isinstance(value, str):
        if value.count(".") == 3:
            value = int(ipaddress.IPv4Address(value))
        elif value.count(":") == 5:
            value = int(value.replace(":", ""), 16)
        else:
            value = int(value, 0)
    if value < 0 or value >= 1 << bitwidth:
        raise P4InfoError(f"{what}={value} does not fit in {bitwidth} bits")
    return value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    return int.from_bytes(data, "big")


class P4Info:
    def __init__(self, msg: p4info_pb2.P4Info) -> None:
        self.msg = msg
        self.tables: dict[str, Table] = {}
        self.actions: dict[str, Action] = {}
        self.externs: dict[str, dict[str, Extern]] = {"counter": {}, "meter": {}, "register": {}}
        self._by_id: dict[int, object] = {}
        self._aliases: dict[str, dict[str, str | None]] = {}
        for t in msg.tables:
            fields = {f.name: Field(f.id, f.name, f.bitwidth, f.match_type) for f in t.match_fields}
            self._add("table", self.tables, Table(t.preamble.id, t.preamble.name, fields,
                                                  frozenset(a.id for a in t.action_refs), t.size))
        for a in msg.actions:
            params = {p.name: Field(p.id, p.name, p.bitwidth) for p in a.params}
            self._add("action", self.actions, Action(a.preamble.id, a.preamble.name, params))
        for kind, items in (("counter", msg.counters), ("meter", msg.meters), ("register", msg.registers)):
            for c in items:
                self._add(kind, self.externs[kind], Extern(c.preamble.id, c.preamble.name, c.size))

    @classmethod
    def from_text(cls, text: str) -> P4Info:
        msg = p4info_pb2.P4Info()
        text_format.Merge(text, msg, allow_unknown_field=True)
        return cls(msg)

    @classmethod
    def from_file(cls, path: str | Path) -> P4Info:
        return cls.from_text(Path(path).read_text())

    def _add(self, kind: str, store: dict, item) -> None:
        store[item.name] = item
        self._by_id[item.id] = item
        aliases = self._aliases.setdefault(kind, {})
        short = item.name.rsplit(".", 1)[-1]
        aliases[short] = None if short in aliases and aliases[short] != item.name else item.name

    def _resolve(self, kind: str, store: dict, name: str):
        if name in store:
            return store[name]
        full = self._aliases.get(kind, {}).get(name, "")
        if full is None:
            raise P4InfoError(f"{kind} name {name!r} is ambiguous; use the full name")
        if not full:
            raise P4InfoError(f"unknown {kind} {name!r}; known: {', '.join(sorted(store)) or 'none'}")
        return store[full]

    def table(self, name: str) -> Table:
        return self._resolve("table", self.tables, name)

    def action(self, name: str) -> Action:
        return self._resolve("action", self.actions, name)

    def counter(self, name: str) -> Extern:
        return self._resolve("counter", self.externs["counter"], name)

    def meter(self, name: str) -> Extern:
        return self._resolve("meter", self.externs["meter"], name)

    def register(self, name: str) -> Extern:
        return self._resolve("register", self.externs["register"], name)

    def by_id(self, id_: int):
        try:
            return self._by_id[id_]
        except KeyError:
            raise P4InfoError(f"no P4Info object with id {id_}") from None
