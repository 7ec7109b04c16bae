"""A user's table entries from files: the p4lang tutorials' runtime JSON and ``simple_switch_CLI``
command files (p4-utils' ``cli_input``, Kathará's command files).

Both become :mod:`dcnlab.controller.runtime.entities` updates, checked against the program's P4Info before
anything is written, so that every entry goes through one channel (P4Runtime) and a bad one is an
error that names the file, the entry and the field (:class:`EntryFileError`), not a gRPC status
from a switch.

**Runtime JSON** (``sN-runtime.json``): ``table_entries`` (``table``, ``match``, ``action_name``,
``action_params``, ``priority``, ``default_action``), ``multicast_group_entries``
(``multicast_group_id``, ``replicas`` of ``egress_port``/``instance``) and ``clone_session_entries``
(``clone_session_id``, ``replicas``, ``packet_length_bytes``). Match values follow the tutorials:
an exact field takes a value, LPM ``[value, prefix_len]``, ternary ``[value, mask]``, range
``[low, high]``; values are numbers, IPv4 or MAC strings, or ``0x`` hex. The keys ``target``,
``p4info`` and ``bmv2_json`` are accepted and not used (dcnlab compiles the program itself).

**CLI commands**, one per line (``#`` starts a comment):

- ``table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]``, ``table_set_default TABLE ACTION PARAM...``.
  Match values as BMv2's CLI writes them: exact ``10`` / ``10.0.1.1`` / ``00:aa:..``, LPM
  ``10.0.1.0/24``, ternary ``VALUE&&&MASK``, range ``LOW->HIGH``.
- ``mc_mgrp_create MGID``, ``mc_node_create RID PORT...``, ``mc_node_associate MGID HANDLE``: the
  node handles are 0, 1, ... in the order of ``mc_node_create``, as BMv2 gives them; they become one
  P4Runtime multicast group per MGID with (port, rid) replicas.
- ``mirroring_add SESSION PORT``: a clone session to one port.
- ``register_write``, ``register_reset``, ``set_queue_depth``, ``set_queue_rate``: passed to the
  switch's Thrift server as written (BMv2's P4Runtime server handles neither registers nor queues);
  they are returned separately as :attr:`Entries.thrift`.

Any other command is an error that names the line and lists these.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.controller.runtime.entities import CloneSession, Entity, MulticastGroup, TableEntry, Update
from dcnlab.controller.runtime.errors import P4InfoError, RuntimeErrorBase
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.proto import p4info_pb2, p4runtime_pb2
from dcnlab.topos.inputs import read_bytes

MAX_FILE_BYTES = 64 << 20
THRIFT_COMMANDS = ("register_write", "register_reset", "set_queue_depth", "set_queue_rate")
CLI_COMMANDS = ("table_add", "table_set_default", "mc_mgrp_create", "mc_node_create", "mc_node_associate",
                "mirroring_add", *THRIFT_COMMANDS)
_KIND: dict[int, str] = {p4info_pb2.MatchField.EXACT: "exact", p4info_pb2.MatchField.LPM: "lpm",
         p4info_pb2.MatchField.TERNARY: "ternary", p4info_pb2.MatchField.RANGE: "range",
         p4info_pb2.MatchField.OPTIONAL: "optional"}


class EntryFileError(RuntimeErrorBase):
    """An entry does not fit the program: ``FILE: ENTRY: what is wrong`` (one line)."""


@dataclass
class Entries:
    """What one file asks of one switch: P4Runtime updates, then Thrift commands, in file order."""

    updates: list[Update] = field(default_factory=list)
    thrift: list[str] = field(default_factory=list)

    def extend(self, other: Entries) -> None:
        self.updates += other.updates
        self.thrift += other.thrift


def _read(path: Path) -> str:
    raw = read_bytes(path, "entries file", MAX_FILE_BYTES)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise EntryFileError(f"{path}: not UTF-8 text ({e.reason})") from None


def _check(entity: Entity, info: P4Info, path: Path, element: str) -> Update:
    """``+entity`` (``~entity`` for a table's default action, which P4Runtime only lets one MODIFY),
    after encoding it against the P4Info (which raises on any misfit)."""
    try:
        entity.fill(info, p4runtime_pb2.Entity())
    except (P4InfoError, ValueError, TypeError, IndexError) as e:
        raise EntryFileError(f"{path}: {element}: {e}") from None
    return ~entity if isinstance(entity, TableEntry) and entity.is_default else +entity


def _value(text: str) -> int | str:
    """A CLI or JSON value: decimal, ``0x`` hex, IPv4 or MAC (the encoder takes the strings)."""
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", text):
        return int(text, 16)
    if text.count(".") == 3:
        ipaddress.IPv4Address(text)
        return text
    if re.fullmatch(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}", text):
        return text
    raise ValueError(f"{text!r} is not a number, 0x hex, IPv4 or MAC address")


def _json_value(v: Any) -> int | str:
    if isinstance(v, bool):
        raise ValueError(f"{v!r} is not a value")
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        return _value(v)
    raise ValueError(f"{v!r} is not a number or string")


# -- runtime JSON ---------------------------------------------------------------------
def runtime_json(path: str | Path, info: P4Info) -> Entries:
    """The updates of a tutorials runtime JSON file, each checked against ``info``."""
    import json
    path = Path(path)
    try:
        data = json.loads(_read(path))
    except json.JSONDecodeError as e:
        raise EntryFileError(f"{path}: line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise EntryFileError(f"{path}: expected an object with table_entries, multicast_group_entries, "
                             f"clone_session_entries")
    known = {"target", "p4info", "bmv2_json", "table_entries", "multicast_group_entries", "clone_session_entries"}
    extra = sorted(set(data) - known)
    if extra:
        raise EntryFileError(f"{path}: unknown key(s) {', '.join(extra)}; valid: {', '.join(sorted(known))}")
    out = Entries()
    for i, entry in enumerate(_list(path, data, "table_entries")):
        el = f"table_entries[{i}]"
        if not isinstance(entry, dict):
            raise EntryFileError(f"{path}: {el}: expected an object")
        el = f"table_entries[{i}] ({entry.get('table', '?')})"
        out.updates.append(_check(_json_table_entry(path, el, entry, info), info, path, el))
    for i, g in enumerate(_list(path, data, "multicast_group_entries")):
        el = f"multicast_group_entries[{i}]"
        try:
            out.updates.append(_check(MulticastGroup(int(g["multicast_group_id"]), _json_replicas(g)), info,
                                      path, el))
        except (KeyError, TypeError, ValueError, P4InfoError) as ex:
            raise EntryFileError(f"{path}: {el}: {_why(ex)}") from None
    for i, c in enumerate(_list(path, data, "clone_session_entries")):
        el = f"clone_session_entries[{i}]"
        try:
            out.updates.append(_check(CloneSession(int(c["clone_session_id"]), _json_replicas(c),
                                                   packet_length_bytes=int(c.get("packet_length_bytes", 0))),
                                      info, path, el))
        except (KeyError, TypeError, ValueError, P4InfoError) as ex:
            raise EntryFileError(f"{path}: {el}: {_why(ex)}") from None
    return out


def _why(e: Exception) -> str:
    return f"missing key {e.args[0]!r}" if isinstance(e, KeyError) and not isinstance(e, P4InfoError) else str(e)


def _list(path: Path, data: dict[str, Any], key: str) -> list[Any]:
    v = data.get(key, [])
    if not isinstance(v, list):
        raise EntryFileError(f"{path}: {key}: expected a list")
    return v


def _json_replicas(g: dict[str, Any]) -> tuple[tuple[int, int], ...]:
    return tuple((int(r["egress_port"]), int(r.get("instance", 0))) for r in g["replicas"])


def _json_table_entry(path: Path, el: str, e: dict[str, Any], info: P4Info) -> TableEntry:
    known = {"table", "match", "action_name", "action_params", "priority", "default_action"}
    extra = sorted(set(e) - known)
    if extra:
        raise EntryFileError(f"{path}: {el}: unknown key(s) {', '.join(extra)}; valid: {', '.join(sorted(known))}")
    try:
        table = info.table(str(e["table"]))
    except KeyError as ex:
        raise EntryFileError(f"{path}: {el}: {_why(ex)}") from None
    match: list[tuple[str, Any]] = []
    raw_match = e.get("match", {})
    if not isinstance(raw_match, dict):
        raise EntryFileError(f"{path}: {el}: match: expected an object of field -> value")
    for fname, raw in raw_match.items():
        f = table.fields.get(fname)
        if f is None:
            raise EntryFileError(f"{path}: {el}: match field {fname!r} is not a key of {table.name}; "
                                 f"valid: {', '.join(table.fields) or 'none (keyless table)'}")
        kind = _KIND.get(f.match_type, "?")
        try:
            if kind in ("exact", "optional"):
                if isinstance(raw, list):
                    raise ValueError(f"is a {kind} field and takes one value, got a list")
                match.append((fname, _json_value(raw)))
            else:
                if not (isinstance(raw, list) and len(raw) == 2):
                    form = {"lpm": "[value, prefix_len]", "ternary": "[value, mask]", "range": "[low, high]"}[kind]
                    raise ValueError(f"is a {kind} field and takes {form}, got {raw!r}")
                second: int | str
                if kind == "lpm":
                    second = int(raw[1])
                    if not 0 <= second <= f.bitwidth:
                        raise ValueError(f"prefix length {second} out of range 0..{f.bitwidth}")
                else:
                    second = _json_value(raw[1])
                    if kind == "ternary" and second == 0:
                        continue        # "don't care": P4Runtime wants the field left out
                match.append((fname, (_json_value(raw[0]), second)))
        except (ValueError, TypeError) as ex:
            raise EntryFileError(f"{path}: {el}: match field {fname!r}: {ex}") from None
    params = e.get("action_params", {})
    if not isinstance(params, dict):
        raise EntryFileError(f"{path}: {el}: action_params: expected an object of name -> value")
    try:
        values = {k: _json_value(v) for k, v in params.items()}
    except ValueError as ex:
        raise EntryFileError(f"{path}: {el}: action parameter: {ex}") from None
    if "action_name" not in e:
        raise EntryFileError(f"{path}: {el}: missing key 'action_name'")
    is_default = bool(e.get("default_action", False))
    priority = e.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or priority < 0:
        raise EntryFileError(f"{path}: {el}: priority {priority!r} is not a non-negative integer")
    if not is_default and not priority and any(_KIND.get(f.match_type) in ("ternary", "range", "optional")
                                               for f in table.fields.values()):
        priority = 1   # P4Runtime needs one for ternary/range tables; the tutorials' files often omit it
    return TableEntry(table.name, tuple(match), str(e["action_name"]), tuple(values.items()), priority, is_default)


# -- CLI commands ---------------------------------------------------------------------
def cli_commands(path: str | Path, info: P4Info) -> Entries:
    """The updates (and Thrift commands) of a ``simple_switch_CLI`` command file."""
    path = Path(path)
    out = Entries()
    groups: dict[int, list[tuple[int, int]]] = {}
    nodes: list[tuple[int, list[int]]] = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        el = f"line {lineno}"
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise EntryFileError(f"{path}: {el}: {e}") from None
        cmd, args = words[0], words[1:]
        el = f"line {lineno} ({cmd})"
        try:
            if cmd == "table_add":
                out.updates.append(_check(_cli_table_add(args, info), info, path, el))
            elif cmd == "table_set_default":
                if len(args) < 2:
                    raise ValueError("usage: table_set_default TABLE ACTION PARAM...")
                t, a = info.table(args[0]), info.action(args[1])
                vals = [_value(x) for x in args[2:]]
                if len(vals) != len(a.params):
                    raise ValueError(f"action {a.name} takes {len(a.params)} parameter(s) "
                                     f"({', '.join(a.params) or 'none'}), got {len(vals)}")
                entry = TableEntry(t.name, (), a.name, tuple(zip(a.params, vals)), 0, True)
                out.updates.append(_check(entry, info, path, el))
            elif cmd == "mc_mgrp_create":
                groups.setdefault(_int(args, 0, "MGID"), [])
            elif cmd == "mc_node_create":
                if len(args) < 2:
                    raise ValueError("usage: mc_node_create RID PORT...")
                nodes.append((_int(args, 0, "RID"), [_int(args, i, "PORT") for i in range(1, len(args))]))
            elif cmd == "mc_node_associate":
                mgid, handle = _int(args, 0, "MGID"), _int(args, 1, "HANDLE")
                if mgid not in groups:
                    raise ValueError(f"group {mgid} was not created (mc_mgrp_create {mgid} first)")
                if not 0 <= handle < len(nodes):
                    raise ValueError(f"node handle {handle} does not exist; valid: 0..{len(nodes) - 1} "
                                     f"(one per mc_node_create, in order)")
                rid, ports = nodes[handle]
                groups[mgid] += [(p, rid) for p in ports]
            elif cmd == "mirroring_add":
                out.updates.append(_check(CloneSession(_int(args, 0, "SESSION"), ((_int(args, 1, "PORT"), 0),)),
                                          info, path, el))
            elif cmd in THRIFT_COMMANDS:
                if cmd.startswith("register_"):     # the register and index must exist, as for any entry
                    if not args:
                        raise ValueError("missing REGISTER")
                    reg = info.register(args[0])
                    if cmd == "register_write" and not _int(args, 1, "INDEX") < reg.size:
                        raise ValueError(f"index {args[1]} out of range for {reg.name}; valid: 0..{reg.size - 1}")
                out.thrift.append(line)
            else:
                raise ValueError(f"unknown command; valid: {', '.join(CLI_COMMANDS)}")
        except EntryFileError:
            raise
        except (ValueError, P4InfoError) as e:
            raise EntryFileError(f"{path}: {el}: {e}") from None
    for mgid, replicas in groups.items():
        try:
            out.updates.append(_check(MulticastGroup(mgid, tuple(replicas)), info, path, f"multicast group {mgid}"))
        except P4InfoError as e:
            raise EntryFileError(f"{path}: multicast group {mgid}: {e}") from None
    return out


def _int(args: list[str], i: int, what: str) -> int:
    if i >= len(args):
        raise ValueError(f"missing {what}")
    if not re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]+", args[i]):
        raise ValueError(f"{what} {args[i]!r} is not a non-negative integer")
    return int(args[i], 0)


def _cli_table_add(args: list[str], info: P4Info) -> TableEntry:
    if len(args) < 2:
        raise ValueError("usage: table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]")
    table, action = info.table(args[0]), info.action(args[1])
    rest = args[2:]
    if "=>" not in rest:
        raise ValueError("missing '=>' between the match values and the action parameters")
    cut = rest.index("=>")
    keys, params = rest[:cut], rest[cut + 1:]
    fields = list(table.fields.values())
    if len(keys) != len(fields):
        raise ValueError(f"table {table.name} has {len(fields)} match field(s) "
                         f"({', '.join(f.name for f in fields) or 'none'}), got {len(keys)} value(s)")
    match: list[tuple[str, Any]] = []
    needs_priority = False
    for f, text in zip(fields, keys):
        kind = _KIND.get(f.match_type, "?")
        where = f"match field {f.name!r} ({kind})"
        if kind in ("exact", "optional"):
            match.append((f.name, _value(text)))
        elif kind == "lpm":
            value, slash, plen = text.partition("/")
            if not slash or not plen.isascii() or not plen.isdigit():
                raise ValueError(f"{where}: {text!r} is not VALUE/PREFIX_LEN")
            if int(plen) > f.bitwidth:
                raise ValueError(f"{where}: prefix length {plen} out of range 0..{f.bitwidth}")
            match.append((f.name, (_value(value), int(plen))))
        elif kind == "ternary":
            value, sep, mask = text.partition("&&&")
            if not sep:
                raise ValueError(f"{where}: {text!r} is not VALUE&&&MASK")
            if _value(mask) != 0:     # a zero mask is "don't care": P4Runtime wants the field left out
                match.append((f.name, (_value(value), _value(mask))))
            needs_priority = True
        elif kind == "range":
            lo, sep, hi = text.partition("->")
            if not sep:
                raise ValueError(f"{where}: {text!r} is not LOW->HIGH")
            match.append((f.name, (_value(lo), _value(hi))))
            needs_priority = True
        else:
            raise ValueError(f"{where}: unsupported match kind")
    priority = 0
    if needs_priority and len(params) == len(action.params) + 1:
        priority = _int(params, len(params) - 1, "PRIORITY")
        params = params[:-1]
    elif needs_priority:
        priority = 1
    if len(params) != len(action.params):
        raise ValueError(f"action {action.name} takes {len(action.params)} parameter(s) "
                         f"({', '.join(action.params) or 'none'}), got {len(params)}")
    return TableEntry(table.name, tuple(match), action.name, tuple(zip(action.params, (_value(p) for p in params))),
                      priority)


def load_entries(path: str | Path, info: P4Info) -> Entries:
    """Runtime JSON (``.json``) or CLI commands (anything else), by the file's suffix."""
    path = Path(path)
    return runtime_json(path, info) if path.suffix == ".json" else cli_commands(path, info)
