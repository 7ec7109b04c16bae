"""A user's table entries from files: the p4lang tutorials' runtime JSON and ``simple_switch_CLI``
command files (p4-utils' ``cli_input``, Kathará's command files).

Both become :mod:`dcnlab.controller.runtime.entities` updates, checked against the program's P4Info
(:mod:`~dcnlab.controller.runtime.entry_checks`: what PI would refuse) before anything is written, so
that every entry goes through one channel (P4Runtime) and a bad one is one line that names the file,
the entry and the field (:class:`EntryFileError`), not a gRPC status from a switch. A message quotes at
most the offending token, escaped and cut short: never a line of the file.

**Runtime JSON** (``sN-runtime.json``): ``table_entries`` (``table``, ``match``, ``action_name``,
``action_params``, ``priority``, ``default_action``), ``multicast_group_entries``
(``multicast_group_id``, ``replicas`` of ``egress_port``/``instance``) and ``clone_session_entries``
(``clone_session_id``, ``replicas``, ``packet_length_bytes``). Match values take every form the
tutorials' loader takes: exact ``v`` or ``[v]``, LPM ``[value, prefix_len]``, ternary ``[value, mask]``,
range ``[low, high]``, optional ``v``; values (and action parameters) are integers, MAC, IPv4 or IPv6
strings, number strings (``"0x0a"``, ``"10"``) or raw byte strings of the field's width, each possibly
wrapped in a one-element list. The keys ``target``, ``p4info`` and ``bmv2_json`` are accepted and not
used (dcnlab compiles the program itself).

**CLI commands**, one per line (``#`` starts a comment), words split on blanks as BMv2's CLI does:

- ``table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]``, ``table_set_default TABLE ACTION PARAM...``.
  Match values as BMv2's CLI writes them: exact ``10`` / ``10.0.1.1`` / ``00:aa:..``, LPM
  ``10.0.1.0/24``, ternary ``VALUE&&&MASK``, range ``LOW->HIGH``; the priority is required for a table
  with ternary or range fields (as BMv2's CLI requires it) and refused for any other. It means what it
  means to BMv2's CLI, where the lower wins: it becomes the P4Runtime priority ``2**31 - 1 - PRIORITY``,
  which PI hands to BMv2 as ``PRIORITY`` again. (In runtime JSON, as in P4Runtime, the higher wins.)
- ``mc_mgrp_create MGID``, ``mc_node_create RID PORT...``, ``mc_node_associate MGID HANDLE``: the
  node handles are 0, 1, ... in the order of ``mc_node_create``, as BMv2 gives them; they become one
  P4Runtime multicast group per MGID with (port, rid) replicas.
- ``mirroring_add SESSION PORT``: a clone session to one port.
- ``register_write REGISTER INDEX VALUE``, ``register_reset REGISTER``, ``set_queue_depth DEPTH [PORT]``,
  ``set_queue_rate RATE [PORT]``: checked, then passed to the switch's Thrift server (BMv2's P4Runtime
  server handles neither registers nor queues); they are returned separately as :attr:`Entries.thrift`.

Any other command is an error that names the line and lists these. A line longer than
:data:`MAX_LINE_CHARS` is refused by its number.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dcnlab.controller.runtime import entry_checks as chk
from dcnlab.controller.runtime.entry_cli import CLI_COMMANDS, MAX_CLONE_SESSION, MAX_PORT, parse
from dcnlab.controller.runtime.entities import CloneSession, Entity, MulticastGroup, TableEntry
from dcnlab.controller.runtime.entry_ledger import Entries, EntryFileError
from dcnlab.controller.runtime.p4info import P4Info, Table
from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import quote, read_bytes, show_path

__all__ = ["CLI_COMMANDS", "Entries", "EntryFileError", "cli_commands", "load_entries", "runtime_json"]

MAX_FILE_BYTES = 64 << 20
_JSON_KEYS = ("target", "p4info", "bmv2_json", "table_entries", "multicast_group_entries", "clone_session_entries")
_ENTRY_KEYS = ("table", "match", "action_name", "action_params", "priority", "default_action")
_FORMS = {"lpm": "[value, prefix_len]", "ternary": "[value, mask]", "range": "[low, high]"}


def _read(path: Path) -> str:
    try:
        raw = read_bytes(path, "entries file", MAX_FILE_BYTES)
    except UserError as e:
        raise EntryFileError(str(e)) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise EntryFileError(f"{show_path(path)}: not UTF-8 text ({e.reason} at byte {e.start})") from None


# -- runtime JSON ---------------------------------------------------------------------
class _DuplicateKey(Exception):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return d


def _int_literal(text: str) -> int | chk.Literal:
    return int(text) if len(text) <= chk.MAX_LITERAL_DIGITS else chk.Literal(text)


def _decode(path: Path, text: str) -> Any:
    where = show_path(path)
    try:
        return json.loads(text, parse_int=_int_literal, parse_float=chk.Literal, parse_constant=chk.Literal,
                          object_pairs_hook=_object)
    except json.JSONDecodeError as e:
        raise EntryFileError(f"{where}: line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise EntryFileError(f"{where}: JSON nested too deeply; valid: the few levels of a runtime JSON "
                             f"(entries, match, value)") from None
    except _DuplicateKey as e:
        raise EntryFileError(f"{where}: key {quote(e.args[0])} given twice in one object; valid: each key "
                             f"once") from None


def runtime_json(path: str | Path, info: P4Info) -> Entries:
    """The updates of a tutorials runtime JSON file, each checked against ``info``."""
    path = Path(path)
    where = show_path(path)
    data = _decode(path, _read(path))
    if not isinstance(data, dict):
        raise EntryFileError(f"{where}: expected an object with {', '.join(_JSON_KEYS[3:])}; got {chk.show(data)}")
    extra = [k for k in data if k not in _JSON_KEYS]
    if extra:
        raise EntryFileError(f"{where}: unknown key {quote(extra[0])}; valid: {', '.join(sorted(_JSON_KEYS))}")
    out = Entries()
    sections = (("table_entries", None), ("multicast_group_entries", _json_group),
                ("clone_session_entries", _json_clone))
    for key, make in sections:
        items = data.get(key, [])
        if not isinstance(items, list):
            raise EntryFileError(f"{where}: {key}: expected a list, got {chk.show(items)}")
        for i, item in enumerate(items):
            el = f"{key}[{i}]"
            try:
                if not isinstance(item, dict):
                    raise ValueError(f"expected an object, got {chk.show(item)}")
                size = 0
                if make is None:
                    _keys(item, _ENTRY_KEYS)
                    table = chk.resolve(info, "table", item["table"])
                    el = f"{el} ({table.name})"
                    entity: Entity = _json_table_entry(info, table, item)
                    size = chk.table_rules(info, table.name).size
                else:
                    entity = make(item)
                out.add(entity, f"{where}: {el}", size)
            except (ValueError, KeyError) as e:
                raise EntryFileError(f"{where}: {el}: {_why(e)}") from None
    return out


def _why(e: Exception) -> str:
    return f"missing key {e.args[0]!r}" if type(e) is KeyError else str(e)


def _keys(d: dict[str, Any], valid: tuple[str, ...]) -> None:
    extra = [k for k in d if k not in valid]
    if extra:
        raise ValueError(f"unknown key {quote(extra[0])}; valid: {', '.join(valid)}")


def _json_table_entry(info: P4Info, table: Table, e: dict[str, Any]) -> TableEntry:
    default = e.get("default_action", False)
    if not isinstance(default, bool):
        raise ValueError(f"default_action {chk.show(default)}: valid: true or false")
    raw_match = e.get("match")
    raw_match = {} if raw_match is None else raw_match
    if not isinstance(raw_match, dict):
        raise ValueError(f"match: expected an object of field -> value, got {chk.show(raw_match)}")
    if default and raw_match:
        raise ValueError("a default action takes no match (PI refuses a non-empty key for a default entry)")
    match: list[tuple[str, Any]] = []
    for fname, raw in raw_match.items():
        f = table.fields.get(fname)
        if f is None:
            raise ValueError(f"match field {quote(fname)} is not a key of {table.name}; "
                             f"valid: {', '.join(table.fields) or 'none (keyless table)'}")
        try:
            m = _json_match(chk.KIND.get(f.match_type, "?"), raw, f.bitwidth)
        except ValueError as ex:
            raise ValueError(f"match field {fname!r}: {ex}") from None
        if m is not None:
            match.append((fname, m))
    params = e.get("action_params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"action_params: expected an object of name -> value, got {chk.show(params)}")
    action = chk.resolve(info, "action", e["action_name"])
    chk.table_rules(info, table.name).check_action(action.id, action.name, default)
    values = chk.action_params(action, params, chk.json_value)
    given = e.get("priority") is not None
    if default:
        if given and e["priority"] != 0:
            raise ValueError("a default action takes no priority (PI refuses one)")
        priority = 0
    else:
        priority = chk.priority_value(e.get("priority"), chk.table_rules(info, table.name).needs_priority,
                                      table.name, given)
    return chk.table_entry(info, table, match, action, values, priority, default)


def _json_match(kind: str, raw: object, bitwidth: int) -> Any:
    if kind in ("exact", "optional"):
        if isinstance(raw, list) and len(raw) != 1:
            raise ValueError(f"is an {kind} field and takes a value or [value], got {chk.show(raw)}")
        return chk.json_value(raw, bitwidth)
    if not (isinstance(raw, list) and len(raw) == 2):
        raise ValueError(f"is a {kind} field and takes {_FORMS.get(kind, '?')}, got {chk.show(raw)}")
    if kind == "lpm":
        plen = raw[1][0] if isinstance(raw[1], list) and len(raw[1]) == 1 else raw[1]
        if isinstance(plen, bool) or not isinstance(plen, int) or isinstance(plen, chk.Literal):
            raise ValueError(f"prefix length {chk.show(plen)} is not an integer 0..{bitwidth}")
        return chk.lpm(chk.json_value(raw[0], bitwidth), plen, bitwidth, raw[0])
    first, second = chk.json_value(raw[0], bitwidth), chk.json_value(raw[1], bitwidth)
    if kind == "ternary":
        return chk.ternary(first, second, bitwidth)
    if kind == "range":
        return chk.value_range(first, second, bitwidth)
    raise ValueError(f"unsupported match kind {kind}")


def _port(v: object, what: str, top: int = MAX_PORT, low: int = 0, why: str = "") -> int:
    """An integer field of a runtime JSON entry (a port, an id, a length) in ``low..top``."""
    if type(v) is not int or not low <= v <= top:
        raise ValueError(f"{what} {chk.show(v)} is not an integer {low}..{top}{why}")
    return v


def _json_replicas(g: dict[str, Any]) -> tuple[tuple[int, int], ...]:
    reps = g["replicas"]
    if not isinstance(reps, list):
        raise ValueError(f"replicas: expected a list of {{egress_port, instance}}, got {chk.show(reps)}")
    out = []
    for j, r in enumerate(reps):
        if not isinstance(r, dict):
            raise ValueError(f"replicas[{j}]: expected an object with egress_port, instance; got {chk.show(r)}")
        _keys(r, ("egress_port", "instance"))
        out.append((_port(r["egress_port"], f"replicas[{j}]: egress_port"),
                    _port(r.get("instance", 0), f"replicas[{j}]: instance", 0xFFFF)))
    return _no_duplicate_replicas(out)


def _no_duplicate_replicas(replicas: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    if len(set(replicas)) != len(replicas):
        seen: set[tuple[int, int]] = set()
        port, inst = next(r for r in replicas if r in seen or seen.add(r))  # type: ignore[func-returns-value]
        raise ValueError(f"replica (egress_port {port}, instance {inst}) is listed twice (PI refuses a "
                         f"duplicate replica)")
    return tuple(replicas)


def _json_group(g: dict[str, Any]) -> MulticastGroup:
    _keys(g, ("multicast_group_id", "replicas"))
    mgid = g["multicast_group_id"]
    if type(mgid) is not int:
        raise ValueError(f"multicast_group_id {chk.show(mgid)} is not an integer; valid: 1..32767")
    if not 1 <= mgid < 1 << 15:
        raise ValueError(f"multicast group id {chk.show(mgid)} out of range; valid: 1..32767 (PI keeps the ids "
                         f"from 32768 on for clone sessions)")
    return MulticastGroup(mgid, _json_replicas(g))


def _json_clone(c: dict[str, Any]) -> CloneSession:
    _keys(c, ("clone_session_id", "replicas", "packet_length_bytes"))
    sid = _port(c["clone_session_id"], "clone_session_id", MAX_CLONE_SESSION, 1, " (PI's range)")
    length = _port(c.get("packet_length_bytes", 0), "packet_length_bytes", 0xFFFF)
    return CloneSession(sid, _json_replicas(c), packet_length_bytes=length)


# -- CLI commands ---------------------------------------------------------------------
def cli_commands(path: str | Path, info: P4Info) -> Entries:
    """The updates (and Thrift commands) of a ``simple_switch_CLI`` command file."""
    path = Path(path)
    return parse(show_path(path), _read(path), info)


def load_entries(path: str | Path, info: P4Info) -> Entries:
    """Runtime JSON (``.json``) or CLI commands (anything else), by the file's suffix."""
    path = Path(path)
    return runtime_json(path, info) if path.suffix == ".json" else cli_commands(path, info)

