"""``simple_switch_CLI`` command files (see :mod:`dcnlab.controller.runtime.entry_files` for the
commands). One pass over the lines, each split on blanks as BMv2's CLI splits it: time linear in the
file, a line longer than :data:`MAX_LINE_CHARS` refused by its number, and a message quoting at most the
offending word, escaped and cut short."""

from __future__ import annotations

import re
from typing import Any

from dcnlab.controller.runtime import entry_checks as chk
from dcnlab.controller.runtime.entities import CloneSession, MulticastGroup, TableEntry
from dcnlab.controller.runtime.entry_ledger import Entries, EntryFileError
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.topos.inputs import quote

MAX_LINE_CHARS = 16384
"""A command line is at most this long (a table_add of a 100-field key fits)."""
MAX_PORT = 511
"""v1model's ports are 9 bits (511 is BMv2's drop port)."""
MAX_CLONE_SESSION = 511
"""PI takes clone session ids 1..511."""
THRIFT_COMMANDS = ("register_write", "register_reset", "set_queue_depth", "set_queue_rate")
CLI_COMMANDS = ("table_add", "table_set_default", "mc_mgrp_create", "mc_node_create", "mc_node_associate",
                "mirroring_add", *THRIFT_COMMANDS)
_INT = re.compile(r"[0-9]{1,20}|0[xX][0-9a-fA-F]{1,16}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_RATE = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?")


def _int(args: list[str], i: int, what: str, top: int, low: int = 0) -> int:
    if i >= len(args):
        raise ValueError(f"missing {what}")
    t = args[i]
    v = -1 if _INT.fullmatch(t) is None else int(t, 16 if t[:2] in ("0x", "0X") else 10)
    if not low <= v <= top:
        raise ValueError(f"{what} {quote(t)} is not an integer {low}..{top}")
    return v


def _nargs(args: list[str], low: int, high: int, usage: str) -> None:
    if not low <= len(args) <= high:
        raise ValueError(f"takes {low if low == high else f'{low} to {high}'} argument(s), got {len(args)}; "
                         f"usage: {usage}")


def _match(kind: str, text: str, bitwidth: int) -> Any:
    if kind in ("exact", "optional"):
        return chk.text_value(text, bitwidth)
    if kind == "lpm":
        value, slash, plen = text.partition("/")
        if not slash or not re.fullmatch(r"[0-9]{1,4}", plen):
            raise ValueError(f"{quote(text)} is not VALUE/PREFIX_LEN")
        return chk.lpm(chk.text_value(value, bitwidth), int(plen), bitwidth, value)
    if kind == "ternary":
        value, sep, mask = text.partition("&&&")
        if not sep:
            raise ValueError(f"{quote(text)} is not VALUE&&&MASK")
        return chk.ternary(chk.text_value(value, bitwidth), chk.text_value(mask, bitwidth), bitwidth)
    if kind == "range":
        low, sep, high = text.partition("->")
        if not sep:
            raise ValueError(f"{quote(text)} is not LOW->HIGH")
        return chk.value_range(chk.text_value(low, bitwidth), chk.text_value(high, bitwidth), bitwidth)
    raise ValueError(f"unsupported match kind {kind}")


def _text(v: Any, bitwidth: int, what: str) -> int:
    return chk.text_value(v, bitwidth, what)


def _table_add(args: list[str], info: P4Info) -> tuple[TableEntry, int]:
    if len(args) < 2:
        raise ValueError("usage: table_add TABLE ACTION MATCH... => PARAM... [PRIORITY]")
    table, action = chk.resolve(info, "table", args[0]), chk.resolve(info, "action", args[1])
    rules = chk.table_rules(info, table.name)
    rules.check_action(action.id, action.name, False)
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
    for f, text in zip(fields, keys):
        kind = chk.KIND.get(f.match_type, "?")
        try:
            m = _match(kind, text, f.bitwidth)
        except ValueError as e:
            raise ValueError(f"match field {f.name!r} ({kind}): {e}") from None
        if m is not None:
            match.append((f.name, m))
    n = len(action.params)
    if len(params) not in (n, n + 1) or (len(params) == n + 1) != rules.needs_priority:
        pri = " and a priority" if rules.needs_priority else ""
        raise ValueError(f"action {action.name} takes {n} parameter(s) ({', '.join(action.params) or 'none'}){pri}, "
                         f"got {len(params)} value(s) after '=>'"
                         + ("" if rules.needs_priority or len(params) != n + 1 else
                            f"; table {table.name} has only exact and LPM fields: no priority"))
    priority = 0
    if rules.needs_priority:
        # BMv2's CLI: the lower priority wins; P4Runtime: the higher. PI maps a P4Runtime priority p to
        # BMv2's MAX - p, so MAX - p here writes the entry BMv2's CLI would have written.
        priority = chk.MAX_PRIORITY - _int(params, n, "PRIORITY (BMv2's: the lower wins)", chk.MAX_PRIORITY - 1)
    values = chk.action_params(action, dict(zip(action.params, params[:n])), _text)
    return chk.table_entry(info, table, match, action, values, priority, False), rules.size


def parse(where: str, text: str, info: P4Info) -> Entries:
    """The updates and Thrift commands of a command file's ``text``; ``where`` names the file."""
    out = Entries()
    groups: dict[int, list[tuple[int, int]]] = {}
    made: dict[int, int] = {}           # MGID -> line of its mc_mgrp_create
    nodes: list[tuple[int, list[int]]] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if len(line) > MAX_LINE_CHARS:
            raise EntryFileError(f"{where}: line {lineno}: {len(line):,} characters long; valid: a command "
                                 f"of at most {MAX_LINE_CHARS:,} characters a line")
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd not in CLI_COMMANDS:
            # a word that is not even a name is not quoted: the file may not be the user's to read
            # (a cli_input of /etc/shadow must not print root's password hash)
            what = f"unknown command {quote(cmd)}" if _NAME.fullmatch(cmd) else "not a command"
            raise EntryFileError(f"{where}: line {lineno}: {what}; valid: {', '.join(CLI_COMMANDS)}")
        el = f"{where}: line {lineno} ({cmd})"
        try:
            if cmd == "table_add":
                entry, size = _table_add(args, info)
                out.add(entry, el, size)
            elif cmd == "table_set_default":
                if len(args) < 2:
                    raise ValueError("usage: table_set_default TABLE ACTION PARAM...")
                t, a = chk.resolve(info, "table", args[0]), chk.resolve(info, "action", args[1])
                chk.table_rules(info, t.name).check_action(a.id, a.name, True)
                if len(args) - 2 != len(a.params):
                    raise ValueError(f"action {a.name} takes {len(a.params)} parameter(s) "
                                     f"({', '.join(a.params) or 'none'}), got {len(args) - 2}")
                values = chk.action_params(a, dict(zip(a.params, args[2:])), _text)
                out.add(chk.table_entry(info, t, [], a, values, 0, True), el)
            elif cmd == "mc_mgrp_create":
                _nargs(args, 1, 1, "mc_mgrp_create MGID")
                mgid = _int(args, 0, "MGID", (1 << 15) - 1, 1)
                if mgid in made:
                    raise ValueError(f"group {mgid} was created on line {made[mgid]} already")
                made[mgid] = lineno
                groups[mgid] = []
            elif cmd == "mc_node_create":
                if len(args) < 2:
                    raise ValueError("usage: mc_node_create RID PORT...")
                ports = [_int(args, i, "PORT", MAX_PORT) for i in range(1, len(args))]
                if len(set(ports)) != len(ports):
                    raise ValueError("a port is listed twice")
                nodes.append((_int(args, 0, "RID", 0xFFFF), ports))
            elif cmd == "mc_node_associate":
                _nargs(args, 2, 2, "mc_node_associate MGID HANDLE")
                mgid, handle = _int(args, 0, "MGID", (1 << 15) - 1, 1), _int(args, 1, "HANDLE", 1 << 32)
                if mgid not in groups:
                    raise ValueError(f"group {mgid} was not created (mc_mgrp_create {mgid} first)")
                if not 0 <= handle < len(nodes):
                    raise ValueError(f"node handle {handle} does not exist; valid: "
                                     f"{f'0..{len(nodes) - 1}' if nodes else 'none yet'} (one per mc_node_create, in order)")
                rid, ports = nodes[handle]
                twice = [p for p in ports if (p, rid) in groups[mgid]]
                if twice:
                    raise ValueError(f"group {mgid} already replicates to port {twice[0]} with rid {rid} (PI "
                                     f"refuses a duplicate replica)")
                groups[mgid] += [(p, rid) for p in ports]
            elif cmd == "mirroring_add":
                _nargs(args, 2, 2, "mirroring_add SESSION PORT")
                session = _int(args, 0, "SESSION", MAX_CLONE_SESSION, 1)
                out.add(CloneSession(session, ((_int(args, 1, "PORT", MAX_PORT), 0),)), el)
            else:
                out.thrift.append(_thrift(cmd, args, info))
        except (ValueError, KeyError) as e:
            raise EntryFileError(f"{el}: {e}") from None
    for mgid, replicas in groups.items():
        out.add(MulticastGroup(mgid, tuple(replicas)), f"{where}: line {made[mgid]} (mc_mgrp_create {mgid})")
    return out


def _thrift(cmd: str, args: list[str], info: P4Info) -> str:
    """A Thrift command, checked and written in the form BMv2's CLI reads (decimal numbers)."""
    if cmd == "register_write":
        _nargs(args, 3, 3, "register_write REGISTER INDEX VALUE")
        reg = chk.resolve(info, "register", args[0])
        index = _int(args, 1, "INDEX", 1 << 32)
        if index >= reg.size:
            raise ValueError(f"index {index} out of range for {reg.name}; valid: 0..{reg.size - 1}")
        width = chk.register_bitwidth(info, reg.name) or 64
        value = chk.text_value(args[2], width, f"VALUE for {reg.name} (bit<{width}>)")
        return f"register_write {reg.name} {index} {value}"
    if cmd == "register_reset":
        _nargs(args, 1, 1, "register_reset REGISTER")
        return f"register_reset {chk.resolve(info, 'register', args[0]).name}"
    if cmd == "set_queue_depth":
        _nargs(args, 1, 2, "set_queue_depth DEPTH [PORT]")
        port = f" {_int(args, 1, 'PORT', MAX_PORT)}" if len(args) == 2 else ""
        return f"{cmd} {_int(args, 0, 'DEPTH', 1 << 30)}{port}"
    _nargs(args, 1, 2, "set_queue_rate RATE_PPS [PORT]")
    if not _RATE.fullmatch(args[0]):
        raise ValueError(f"RATE_PPS {quote(args[0])} is not a non-negative number (packets per second)")
    port = f" {_int(args, 1, 'PORT', MAX_PORT)}" if len(args) == 2 else ""
    return f"{cmd} {args[0]}{port}"
