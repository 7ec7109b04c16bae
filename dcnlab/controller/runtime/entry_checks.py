"""The checks of a user's entries against a P4Info, done before anything is written: what PI (BMv2's
P4Runtime server) would refuse is refused here, with a message that names the field and what is valid.

- **Values** (:func:`json_value`, :func:`text_value`): every form of the p4lang tutorials' loader
  (``utils/p4runtime_lib/convert.py``: an int, negative ones in two's complement; a one-element list
  ``[v]``; a MAC ``aa:bb:..``; IPv4; IPv6; a raw string of exactly the field's bytes) and of BMv2's CLI
  (decimal, ``0x``/``0b``/``0o``); a number string is read as a number. Each value is checked against
  its bit width and becomes an int, without ever converting an unbounded number of digits.
- **Match fields** (:func:`lpm`, :func:`ternary`, :func:`value_range`): as PI's ``validate_match_key``:
  no bits past an LPM prefix, no value bits outside a ternary mask, ``low <= high``; a "don't care"
  (prefix length 0, mask 0, the full range) leaves the field out, which is how P4Runtime says it.
- **Tables** (:class:`TableRules`): which actions a table allows and where (``@tableonly``,
  ``@defaultonly``), const tables and default actions, whether entries need a priority, the size.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dcnlab.controller.runtime.entities import TableEntry
from dcnlab.controller.runtime.p4info import Action, P4Info, Table
from dcnlab.controller.runtime.proto import p4info_pb2
from dcnlab.topos.inputs import quote

KIND: dict[int, str] = {p4info_pb2.MatchField.EXACT: "exact", p4info_pb2.MatchField.LPM: "lpm",
                        p4info_pb2.MatchField.TERNARY: "ternary", p4info_pb2.MatchField.RANGE: "range",
                        p4info_pb2.MatchField.OPTIONAL: "optional"}
PRIORITY_KINDS = ("ternary", "range", "optional")
MAX_PRIORITY = (1 << 31) - 1
MAX_LITERAL_DIGITS = 1000
"""A JSON number literal longer than this is refused as it is read (no field is 3,000 bits wide)."""

_MAC = re.compile(r"[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}")
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}")
_NUMBER = re.compile(r"0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|0[oO]([0-7]+)|([0-9]+)")
_BASES = (16, 2, 8, 10)
VALUE_FORMS = "an integer, 0x hex, IPv4, IPv6 or MAC address"


class Literal(str):
    """A JSON number that is not an int dcnlab takes (``Infinity``, ``NaN``, ``1.5``, 5,000 digits),
    kept as its text so that the entry and field holding it can be named."""

    def describe(self) -> str:
        if len(self) > 40:
            return f"a {len(self)}-digit number"
        return self if self in ("Infinity", "-Infinity", "NaN") else f"the number {self}"


def show(v: object) -> str:
    """A user's JSON value for a message: scalars quoted (escaped, cut short), containers by their size
    only (never walked: they may nest deeply)."""
    if isinstance(v, Literal):
        return v.describe()
    if isinstance(v, list):
        return f"a list of {len(v)} item(s)"
    if isinstance(v, dict):
        return f"an object of {len(v)} key(s)"
    return quote(v)


def _fits(value: int, bitwidth: int, what: str, given: object) -> int:
    if value < 0 or value >> bitwidth:
        raise ValueError(f"{what}={show(given)} does not fit in {bitwidth} bits; valid: 0..{(1 << bitwidth) - 1}")
    return value


def _ipv4(text: str) -> int | None:
    parts = [int(p) for p in text.split(".")]
    if max(parts) > 255 or any(len(p) > 1 and p[0] == "0" for p in text.split(".")):
        return None
    return (parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]


@functools.lru_cache(maxsize=1 << 16)
def _text_int(text: str) -> int | None:
    """The int ``text`` writes (a number, MAC, IPv4 or IPv6 address), None if none; at most
    :data:`MAX_LITERAL_DIGITS` digits are converted."""
    m = _NUMBER.fullmatch(text)
    if m is not None:
        i = m.lastindex or 4
        digits = m.group(i).lstrip("0") or "0"
        return int(digits, _BASES[i - 1]) if len(digits) <= MAX_LITERAL_DIGITS else -1
    if _MAC.fullmatch(text):
        return int(text.replace(":", ""), 16)
    if _IPV4.fullmatch(text):
        return _ipv4(text)
    if ":" in text and len(text) <= 45:
        try:
            return int(ipaddress.IPv6Address(text))
        except ValueError:
            return None
    return None


def text_value(text: str, bitwidth: int, what: str = "value") -> int:
    """A value written as text: a number (decimal, 0x, 0b, 0o), a MAC, IPv4 or IPv6 address."""
    value = _text_int(text)
    if value is None:
        if _IPV4.fullmatch(text):
            raise ValueError(f"{what} {quote(text)} is not an IPv4 address (four parts 0..255, no leading zeros)")
        raise ValueError(f"{what} {quote(text)} is not {VALUE_FORMS}")
    if value < 0:
        raise ValueError(f"{what} {quote(text)} does not fit in {bitwidth} bits")
    if bitwidth != 128 and ":" in text and not _MAC.fullmatch(text):
        raise ValueError(f"{what} {quote(text)} is an IPv6 address, for a 128-bit field; this one has {bitwidth} bits")
    return _fits(value, bitwidth, what, text)


def json_value(v: object, bitwidth: int, what: str = "value") -> int:
    """A value of a runtime JSON file, in every form the tutorials' loader encodes (see the module)."""
    if isinstance(v, list) and len(v) == 1:     # convert.encode unwraps a one-element list
        v = v[0]
    if type(v) is int:
        if v < 0 and v >= -(1 << max(bitwidth - 1, 0)):
            return v + (1 << bitwidth)          # two's complement, as convert.encodeNum
        return _fits(v, bitwidth, what, v)
    if type(v) is not str:      # bool, float/NaN/huge (Literal), list, object, null
        raise ValueError(f"{what} is {show(v)}; valid: {VALUE_FORMS} (as a JSON integer or string)")
    try:
        return text_value(v, bitwidth, what)
    except ValueError:
        nbytes = (bitwidth + 7) // 8
        if len(v) == nbytes and all(ord(c) < 256 for c in v):   # "already encoded" bytes
            return _fits(int.from_bytes(v.encode("latin-1"), "big"), bitwidth, what, v)
        raise


def _like(text: object, value: int, bitwidth: int) -> str:
    """``value`` written the way the user wrote ``text`` (IPv4, MAC, IPv6 or hex)."""
    if isinstance(text, str) and bitwidth == 32 and _IPV4.fullmatch(text):
        return str(ipaddress.IPv4Address(value))
    if isinstance(text, str) and bitwidth == 48 and _MAC.fullmatch(text):
        h = f"{value:012x}"
        return ":".join(h[i:i + 2] for i in range(0, 12, 2))
    if isinstance(text, str) and bitwidth == 128 and ":" in text:
        return str(ipaddress.IPv6Address(value))
    return hex(value)


def lpm(value: int, plen: int, bitwidth: int, shown: object = None) -> tuple[int, int] | None:
    """An LPM match ``(value, prefix_len)``, or None for prefix length 0 ("don't care": left out).
    PI refuses bits set past the prefix ("incorrect number of trailing zeros")."""
    if not 0 <= plen <= bitwidth:
        raise ValueError(f"prefix length {plen} out of range 0..{bitwidth}")
    host = (1 << (bitwidth - plen)) - 1
    if value & host:
        raise ValueError(f"value {show(shown) if shown is not None else hex(value)} has bits set past the "
                         f"prefix length {plen} (PI refuses it: incorrect number of trailing zeros); valid: "
                         f"{_like(shown, value & ~host, bitwidth)}/{plen}")
    return None if plen == 0 else (value, plen)


def ternary(value: int, mask: int, bitwidth: int) -> tuple[int, int] | None:
    """A ternary match ``(value, mask)``, or None for mask 0 ("don't care"); PI refuses value bits
    outside the mask."""
    if value & ~mask:
        raise ValueError(f"value {hex(value)} has bits outside the mask {hex(mask)} (PI refuses it: value & "
                         f"mask must equal value); valid: value {hex(value & mask)}")
    return None if mask == 0 else (value, mask)


def value_range(low: int, high: int, bitwidth: int) -> tuple[int, int] | None:
    """A range match ``(low, high)``, or None for the full range ("don't care"); low > high is refused."""
    if low > high:
        raise ValueError(f"range low {low} is greater than high {high}; valid: low <= high")
    return None if (low, high) == (0, (1 << bitwidth) - 1) else (low, high)


def priority_value(v: object, needed: bool, table: str, given: bool) -> int:
    """An entry's priority as PI takes it: > 0 for a table with ternary, range or optional fields,
    none for any other table."""
    if not given:
        if needed:
            raise ValueError(f"table {table} has ternary, range or optional fields, so each entry needs a "
                             f"priority; valid: 1..{MAX_PRIORITY} (higher wins)")
        return 0
    if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, Literal) or not 0 <= v <= MAX_PRIORITY:
        raise ValueError(f"priority {show(v)} is not an integer 0..{MAX_PRIORITY}")
    if needed and v == 0:
        raise ValueError(f"priority 0 for table {table}: its entries need a priority; valid: 1..{MAX_PRIORITY}")
    if not needed and v != 0:
        raise ValueError(f"priority {v} for table {table}, which has only exact and LPM fields (PI refuses a "
                         f"non-zero priority there); valid: no priority")
    return v


@dataclass(frozen=True)
class TableRules:
    """What PI checks of a table beyond its match fields, from the P4Info."""

    name: str
    needs_priority: bool
    size: int
    is_const: bool
    const_default: bool
    indirect: bool
    scope: dict[int, int]
    """action id -> ActionRef scope (TABLE_AND_DEFAULT, TABLE_ONLY, DEFAULT_ONLY)."""
    exact: frozenset[str]
    """The exact fields, which no entry leaves out."""

    def check_action(self, action_id: int, action: str, default: bool) -> None:
        if self.indirect:
            raise ValueError(f"table {self.name} takes action profile members or groups, which entry "
                             f"files cannot give")
        if action_id not in self.scope:
            raise ValueError(f"action {action} is not an action of table {self.name}")
        scope = self.scope[action_id]
        if default and scope == p4info_pb2.ActionRef.TABLE_ONLY:
            raise ValueError(f"action {action} is @tableonly in table {self.name}: not a default action")
        if not default and scope == p4info_pb2.ActionRef.DEFAULT_ONLY:
            raise ValueError(f"action {action} is @defaultonly in table {self.name}: only a default action")
        if default and self.const_default:
            raise ValueError(f"table {self.name} has a const default action, which no entry can change")
        if not default and self.is_const:
            raise ValueError(f"table {self.name} has const entries (its program fixes them); valid: none")


def table_rules(info: P4Info, table: str) -> TableRules:
    """The :class:`TableRules` of ``table`` (a full name), cached on the P4Info."""
    rules: dict[str, TableRules] | None = getattr(info, "_entry_rules", None)
    if rules is None:
        rules = {}
        for t in info.msg.tables:
            kinds = {f.name: KIND.get(f.match_type, "?") for f in t.match_fields}
            rules[t.preamble.name] = TableRules(
                t.preamble.name, bool(set(kinds.values()) & set(PRIORITY_KINDS)), t.size, t.is_const_table,
                t.const_default_action_id != 0, t.implementation_id != 0,
                {a.id: a.scope for a in t.action_refs}, frozenset(n for n, k in kinds.items() if k == "exact"))
        setattr(info, "_entry_rules", rules)   # noqa: B010  (P4Info is not ours to change here)
    return rules[table]


def register_bitwidth(info: P4Info, register: str) -> int:
    """The bit width of a register's cells (0 if the P4Info does not say)."""
    for r in info.msg.registers:
        if r.preamble.name == register:
            return r.type_spec.bitstring.bit.bitwidth or r.type_spec.bitstring.int.bitwidth
    return 0


# -- names and entries -------------------------------------------------------------------------------
def resolve(info: P4Info, kind: str, name: object) -> Any:
    """The P4Info table, action or register named ``name`` (full, or its last component when that is
    unambiguous); an unknown one is a message that quotes the name escaped and cut short."""
    store: dict[str, Any] = info.tables if kind == "table" else info.actions if kind == "action" else info.externs[kind]
    if type(name) is str and name in store:
        return store[name]
    if isinstance(name, str) and len(name) <= 256:
        try:
            return getattr(info, kind)(name)
        except KeyError as e:
            if "ambiguous" in str(e):
                raise ValueError(f"{kind} name {quote(name)} is ambiguous; use the full name") from None
    known = sorted(store)
    listed = ", ".join(known[:12]) + (f" and {len(known) - 12} more" if len(known) > 12 else "")
    raise ValueError(f"unknown {kind} {show(name)}; known: {listed or 'none'}")


def action_params(a: Action, given: dict[str, Any],
                  value: Callable[[Any, int, str], int]) -> tuple[tuple[str, int], ...]:
    """The parameters of action ``a`` from ``given`` (name -> value as the file wrote it): each one of
    the action's, none other (PI refuses a missing or an unknown parameter)."""
    if given.keys() != a.params.keys():
        extra = [k for k in given if k not in a.params]
        if extra:
            raise ValueError(f"action {a.name} has no parameter {show(extra[0])}; valid: "
                             f"{', '.join(a.params) or 'none'}")
        missing = [p for p in a.params if p not in given]
        raise ValueError(f"action {a.name} needs parameter {missing[0]!r} ({len(a.params)} in all: "
                         f"{', '.join(a.params)})")
    return tuple([(p, value(given[p], f.bitwidth, f"{a.name}.{p}")) for p, f in a.params.items()])


def table_entry(info: P4Info, table: Table, match: list[tuple[str, Any]], a: Action,
                params: tuple[tuple[str, int], ...], priority: int, default: bool) -> TableEntry:
    """The entry, after the check PI makes of its key (an exact field is never left out); the action
    was checked (:meth:`TableRules.check_action`) before its parameters were read."""
    rules = table_rules(info, table.name)
    if not default and rules.exact:
        missing = rules.exact - {m for m, _ in match}
        if missing:
            raise ValueError(f"exact match field {min(missing)!r} is missing (PI refuses an entry without it)")
    return TableEntry(table.name, tuple(match), a.name, params, priority, default)
