"""Topologies from files: dcnlab's JSON export, the p4lang tutorials' ``topology.json`` and p4-utils'
``p4app.json``.

:func:`load_topology` reads any of the three and returns a :class:`UserFabric`, an explicit fabric
that also carries what a user's file says beyond the graph: per-link bandwidth, delay, loss and queue
length; per-host prefix length, gateway and start-up commands; per-switch program, runtime JSON and
``simple_switch_CLI`` command file. Relative paths in a file are relative to the file's directory
(:func:`load_topology`'s ``base`` is looked in first: ``dcnlab lab`` gives the exercise directory, from
where the tutorials' ``make run`` resolves a ``pod-topo/topology.json``'s ``pod-topo/s1-runtime.json``).

Every check runs before anything is created, and each error is one line that names the file, the
element and what is wrong (:class:`TopologyError`): an unknown node in a link, a port used twice, a
duplicate name, a host with no link or with two, an address clash, a file named by a switch that does
not exist, a value of the wrong type or out of range.

The formats, and what dcnlab decides where they leave room:

**dcnlab** (written by ``dcnlab topo export --format json``; its format: "JSON export format" in
``docs/reference/file-formats.md``): ``nodes``, ``links``, ``hosts``. Optional per link ``bw`` (Mbit/s),
``delay`` (ms), ``loss`` (%), ``max_queue`` (packets); per host ``prefix_len``, ``gateway``, ``commands``;
per node ``program``, ``runtime_json``, ``cli_input``.
A built-in fabric exported and read back gives an equal fabric.

**tutorials** (``topology.json`` of the p4lang tutorials' exercises): ``hosts`` maps a name to
``ip`` (``10.0.1.1/24``), ``mac`` and ``commands``; ``switches`` maps a name to ``runtime_json``,
``cli_input`` or ``program``; ``links`` are ``[a, b]``, ``[a, b, latency]`` or ``[a, b, latency,
bandwidth]``, where a switch end is ``s1-p2`` (port 2) and a host end is the host's name (its one
interface, ``eth0``). Latency is a number of ms or a string with ``ms``/``us``/``s``; bandwidth is
Mbit/s. Switch ports are numbered as written; port 0 stays unwired unless a link names it.

**p4app** (p4-utils' ``p4app.json``): the program is ``p4_src`` (or the older ``program``); the
``topology`` section has ``hosts``, ``switches`` (``cli_input``, ``program``) and ``links`` ``[a, b]``
or ``[a, b, {options}]`` with ``bw``, ``delay``, ``loss``, ``max_queue_size`` (or
``queue_length``), ``weight`` (kept, unused) and ``port1``/``port2``. Ports without ``port1``/``port2``
are given in link order from 1 on each switch, as Mininet does. Addresses follow
``assignment_strategy`` (host ``h<i>`` on switch ``s<j>``; names must have that form for ``l3`` and
``mixed``):

- ``l2`` (default): one subnet 10.0.0.0/16; ``h<i>`` gets 10.0.i/256.i%256.
- ``mixed``: one /24 per switch; ``h<i>`` on ``s<j>`` gets 10.0.j.i/24 with gateway 10.0.j.254.
- ``l3``: one /24 per host; ``h<i>`` on ``s<j>`` gets 10.j.i.2/24 with gateway 10.j.i.1.
- ``manual``: each host gives ``ip`` (with its prefix) and optionally ``gw``.

A MAC not given is derived from the IPv4 address, ``00:00:`` followed by its four bytes, as p4-utils
does; in the dcnlab and tutorials formats a missing MAC is an error for a host that has an IP. A
tutorials host without ``ip`` gets dcnlab's address plan (host ``i`` of the file: 10.0.0.0 + i + 1, a
/8), and the ``mac`` it gives if it gives one (else the plan's, 02:00:00 + i + 1): a MAC given without
an IP is used, not dropped.

**Every format**: names, ports and addresses are checked as :mod:`dcnlab.topos.fieldchecks` says (node
names of letters, digits and ``_`` that keep every interface name ``NAME-ethN`` within Linux's 15
characters; ports 0..510; unicast, non-zero MACs; host addresses that are not multicast, broadcast,
loopback, 0.0.0.0 or their subnet's network or broadcast address; a gateway in the subnet, other than the
host's own address). Every file a topology file names (``program``, ``runtime_json``, ``cli_input``,
``p4_src``) must be a readable regular file (:func:`dcnlab.topos.inputs.locate`): a directory, a FIFO or
a symlink loop is refused as what it is, and for a relative path the error names every path tried.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from dcnlab.topos.file_formats import _from_dcnlab, _from_p4app, _from_tutorials
from dcnlab.topos.file_parts import (FORMATS, MAX_DEPTH, MAX_ELEMENTS, MAX_FILE_BYTES, MAX_PORTS, STRATEGIES, HostConf,
                                     LinkShape, SwitchConf, TopologyError, UserFabric, _check, _Ctx, _keys, mac_from_ip)
from dcnlab.topos.inputs import json_value_problem, quote, read_bytes, show_path, user_path

#: the records, limits and checks live in :mod:`dcnlab.topos.file_parts` (the format readers share them)
__all__ = ["FORMATS", "MAX_DEPTH", "MAX_ELEMENTS", "MAX_FILE_BYTES", "MAX_PORTS", "STRATEGIES", "HostConf", "LinkShape",
           "SwitchConf", "TopologyError", "UserFabric", "detect_format", "load_topology", "looks_like_file",
           "mac_from_ip", "read_json"]


# -- reading -------------------------------------------------------------------------
def read_json(path: Path, what: str = "file") -> Any:
    """``path`` parsed as JSON: read through :func:`dcnlab.topos.inputs.read_bytes` (at most
    :data:`MAX_FILE_BYTES`, so ``/dev/zero`` is refused too), then refused with a one-line
    :class:`TopologyError` for nesting over :data:`MAX_DEPTH` or a duplicate key."""
    raw = read_bytes(path, what, MAX_FILE_BYTES)
    shown = show_path(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TopologyError(f"{shown}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    depth = _max_depth(text)
    if depth > MAX_DEPTH:
        raise TopologyError(f"{shown}: JSON nested {depth} levels deep; valid: at most {MAX_DEPTH}")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                raise TopologyError(f"{shown}: key {quote(k)} appears twice in one object (duplicate name)")
            out[k] = v
        return out

    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as e:
        raise TopologyError(f"{shown}: line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
    except ValueError as e:         # a number of more than 4,300 digits
        raise TopologyError(f"{shown}: {json_value_problem(e)}") from None


def _max_depth(text: str) -> int:
    """Deepest bracket nesting outside strings (so that ``json.loads`` never recurses too deep)."""
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def detect_format(data: Any) -> str:
    """``dcnlab``, ``tutorials`` or ``p4app`` from the top-level keys; ``""`` if none fits."""
    if not isinstance(data, dict):
        return ""
    if "topology" in data:
        return "p4app"
    if "nodes" in data and "links" in data:
        return "dcnlab"
    if "links" in data and ("switches" in data or "hosts" in data):
        return "tutorials"
    return ""


def looks_like_file(arg: str) -> bool:
    """Whether a ``dcnlab run`` argument names a topology file rather than a fabric spec: a ``.json`` name,
    a path with ``/``, or anything by that name that is not a directory (a FIFO or a symlink loop is then
    refused as what it is, not taken for a spec)."""
    try:
        there = os.path.lexists(arg) and not os.path.isdir(arg)
    except ValueError:              # an embedded NUL
        there = False
    return arg.endswith(".json") or "/" in arg or there


def load_topology(path: str | Path, base: str | Path | None = None) -> UserFabric:
    """Read and check a topology file in any of :data:`FORMATS` (see the module docstring).

    ``base``: a directory where a relative path in the file is looked up first, before the file's own
    directory (an error then names the path under ``base``)."""

    path = user_path(path)
    data = read_json(path, "topology file")
    fmt = detect_format(data)
    ctx = _Ctx(path, user_path(base) if base is not None else None)
    if fmt == "dcnlab":
        fabric = _from_dcnlab(ctx, data)
    elif fmt == "tutorials":
        fabric = _from_tutorials(ctx, data)
    elif fmt == "p4app":
        fabric = _from_p4app(ctx, data)
    else:
        keys = _keys(data) if isinstance(data, dict) else type(data).__name__
        raise TopologyError(f"{show_path(path)}: not a topology file (top level: {keys or 'empty'}); valid: dcnlab's "
                            f"export (nodes, links, hosts), the tutorials' topology.json (hosts, switches, links) or "
                            f"p4-utils' p4app.json (topology)")
    _check(ctx, fabric)
    return fabric


