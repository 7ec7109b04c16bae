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

**dcnlab** (written by ``dcnlab topo export --format json``; see the README): ``nodes``, ``links``,
``hosts``. Optional per link ``bw`` (Mbit/s), ``delay`` (ms), ``loss`` (%), ``max_queue`` (packets);
per host ``prefix_len``, ``gateway``, ``commands``; per node ``program``, ``runtime_json``, ``cli_input``.
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

import ipaddress
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.topos.addressing import host_ip, host_mac
from dcnlab.topos import fieldchecks as fc
from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import MAX_INPUT_BYTES, MAX_QUOTE, escape, json_value_problem, locate, quote, read_bytes, show_path
from dcnlab.topos.model import HostInfo, Link, MaterializedFabric, Node, Role

MAX_FILE_BYTES = 16 << 20
"""A topology file larger than this is refused before it is read (the largest fabric dcnlab emulates
exports to about 1 MiB)."""
MAX_DEPTH = 32
"""Deeper JSON nesting than this is refused (no topology format nests deeper than 5)."""
MAX_PORTS = fc.MAX_PORT + 1
"""Ports of one node: 0..:data:`dcnlab.topos.fieldchecks.MAX_PORT` (510)."""
MAX_ELEMENTS = 100_000
"""Nodes plus links in one file."""

FORMATS = ("dcnlab", "tutorials", "p4app")
STRATEGIES = ("l2", "mixed", "l3", "manual")
_MAC = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")
_SWITCH_END = re.compile(r"(?P<node>.+)-p(?P<port>[0-9]{1,5})")
_NUMBERED = re.compile(r"[a-z]+([0-9]{1,6})")


class TopologyError(UserError):
    """A topology file is invalid. The message is one line: ``FILE: ELEMENT: what is wrong``."""


@dataclass(frozen=True)
class LinkShape:
    """What ``tc`` applies to one link, in both directions; None leaves a property unshaped."""

    bw_mbps: float | None = None
    delay_ms: float | None = None
    loss_pct: float | None = None
    max_queue: int | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.bw_mbps, self.delay_ms, self.loss_pct, self.max_queue))

    def to_dict(self) -> dict[str, float | int]:
        items = (("bw", self.bw_mbps), ("delay", self.delay_ms), ("loss", self.loss_pct), ("max_queue", self.max_queue))
        return {k: v for k, v in items if v is not None}


@dataclass(frozen=True)
class HostConf:
    """A host's addressing beyond its IP and MAC, and the commands it runs once it is up."""

    prefix_len: int = 8
    gateway: str | None = None
    commands: tuple[str, ...] = ()
    gateway_mac: str | None = None
    """A static neighbour entry for the gateway (p4-utils' ``auto_gw_arp``): BMv2 programs rarely
    answer ARP, so a host whose gateway is a switch would otherwise never resolve it."""


@dataclass(frozen=True)
class SwitchConf:
    """What a switch runs and is loaded with (paths are absolute)."""

    program: Path | None = None
    """A P4 source (``.p4``, compiled by dcnlab) or a compiled BMv2 JSON (``.json``)."""
    runtime_json: Path | None = None
    """Entries in the tutorials' runtime JSON format."""
    cli_input: Path | None = None
    """``simple_switch_CLI`` commands, one per line."""


@dataclass
class UserFabric(MaterializedFabric):
    """A fabric read from a file, with the file's per-link, per-host and per-switch settings."""

    source: Path | None = None
    format: str = "dcnlab"
    program: Path | None = None
    """The program for every switch that names none of its own."""
    switch_conf: dict[str, SwitchConf] = field(default_factory=dict)
    host_conf: dict[str, HostConf] = field(default_factory=dict)
    link_shape: dict[tuple[str, int], LinkShape] = field(default_factory=dict)
    """Keyed by both ends of each shaped link: ``(node, port)``."""
    declared: str | None = None
    """The built-in fabric a dcnlab-format file names (``fattree:k=4``) when its graph is not that
    fabric's: its :attr:`kind` is then ``custom`` (dcnlab's routes would not fit it)."""

    @property
    def spec(self) -> str:
        return str(self.source) if self.source is not None else super().spec

    def shape_of(self, node: str, port: int) -> LinkShape | None:
        return self.link_shape.get((node, port))

    def program_of(self, switch: str) -> Path | None:
        conf = self.switch_conf.get(switch)
        return conf.program if conf is not None and conf.program is not None else self.program


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
    path = Path(path).expanduser().absolute()
    data = read_json(path, "topology file")
    fmt = detect_format(data)
    ctx = _Ctx(path, Path(base).expanduser().absolute() if base is not None else None)
    if fmt == "dcnlab":
        fabric = _from_dcnlab(ctx, data)
    elif fmt == "tutorials":
        fabric = _from_tutorials(ctx, data)
    elif fmt == "p4app":
        fabric = _from_p4app(ctx, data)
    else:
        keys = _keys(data) if isinstance(data, dict) else type(data).__name__
        raise TopologyError(f"{show_path(path)}: not a topology file (top level: {keys or 'empty'}); valid: dcnlab's export "
                            f"(nodes, links, hosts), the tutorials' topology.json (hosts, switches, links) or "
                            f"p4-utils' p4app.json (topology)")
    _check(ctx, fabric)
    return fabric


# -- shared checks -------------------------------------------------------------------
@dataclass
class _Ctx:
    path: Path
    first: Path | None = None
    """Where a relative path is looked up before :attr:`base` (``load_topology``'s ``base``)."""

    @property
    def base(self) -> Path:
        return self.path.parent

    def fail(self, element: str, what: str) -> TopologyError:
        """The error ``FILE: ELEMENT: WHAT``; user text in ``element`` (a name) is escaped and cut, and
        ``what`` quotes user text through :func:`~dcnlab.topos.inputs.quote` (escaped again, as a net)."""
        return TopologyError(f"{show_path(self.path)}: {escape(element, 120)}: {escape(what, 600)}")

    def obj(self, value: Any, element: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(element, f"expected an object, got {_kind(value)}")
        return value

    def lst(self, value: Any, element: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(element, f"expected a list, got {_kind(value)}")
        return value

    def text(self, value: Any, element: str) -> str:
        if not isinstance(value, str) or not value:
            got = "an empty string" if value == "" else _kind(value)
            raise self.fail(element, f"expected a non-empty string, got {got}")
        return value

    def name(self, value: Any, element: str) -> str:
        """A node name (:func:`dcnlab.topos.fieldchecks.name_problem`); its ports are checked later
        (:func:`_check_ifnames`)."""
        name = self.text(value, element)
        why = fc.name_problem(name)
        if why is not None:
            count = f" ({len(name)} characters)" if len(name) <= MAX_QUOTE else ""     # quote() says it beyond
            raise self.fail(element, f"node name {quote(name)} {why}{count}; valid: {fc.NAME_RULE}")
        return name

    def port(self, value: Any, element: str) -> int:
        """A port number: an integer in 0..510 (:func:`dcnlab.topos.fieldchecks.port_problem`)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(element, f"{quote(value)} is not a port; valid: an integer in {fc.PORT_RULE}")
        why = fc.port_problem(value)
        if why is not None:
            raise self.fail(element, why)
        return value

    def number(self, value: Any, element: str, lo: float, hi: float, unit: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            raise self.fail(element, f"{quote(value)} is not a number in {lo:g}..{hi:g} {unit}")
        return float(value)

    def integer(self, value: Any, element: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(element, f"{quote(value)} is not an integer in {lo}..{hi}")
        return value

    def commands(self, host: dict[str, Any], element: str) -> tuple[str, ...]:
        """A host's ``commands``: a list of non-empty strings."""
        return tuple(self.text(c, f"{element} commands")
                     for c in self.lst(host.get("commands", []), f"{element} commands"))

    def file(self, value: Any, element: str) -> Path:
        """A file the topology file names: absolute, or relative to :attr:`first` (if given), then to the
        file's directory; it must be a readable regular file (a directory, a FIFO, a symlink loop is
        named as such, and every path tried is named). Returned with symbolic links resolved."""
        text = self.text(value, element)
        try:
            return locate(text, [b for b in (self.first, self.base) if b is not None], MAX_INPUT_BYTES)
        except UserError as e:
            raise self.fail(element, str(e)) from None

    def delay(self, value: Any, element: str) -> float:
        """A delay in ms: a number (ms) or a string with a unit (``2ms``, ``500us``, ``0.1s``)."""
        if isinstance(value, str):
            m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|us|s)?\s*", value)
            if m is None:
                raise self.fail(element, f"delay {quote(value)} is invalid; valid: e.g. 2ms, 500us, 0.1s or a number "
                                         f"of ms")
            scale = {"ms": 1.0, "us": 1e-3, "s": 1e3, None: 1.0}[m.group(2)]
            value = float(m.group(1)) * scale
        return self.number(value, element, 0, 10_000, "ms")


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _keys(obj: dict[str, Any], most: int = 8) -> str:
    """An object's keys for a message: quoted, at most ``most`` of them."""
    keys = sorted(obj)
    return ", ".join(quote(k, 40) for k in keys[:most]) + (f" and {len(keys) - most} more" if len(keys) > most
                                                           else "")


def _ip(ctx: _Ctx, value: Any, element: str) -> tuple[str, int]:
    """``10.0.1.1/24`` or ``10.0.1.1`` -> (address, prefix length; 32 when none is given)."""
    text = ctx.text(value, element)
    try:
        iface = ipaddress.IPv4Interface(text)
    except ValueError:
        raise ctx.fail(element, f"{quote(text)} is not an IPv4 address (e.g. 10.0.1.1/24)") from None
    return str(iface.ip), iface.network.prefixlen


def _mac(ctx: _Ctx, value: Any, element: str) -> str:
    """A host's (or a gateway's) MAC: unicast and not all-zero."""
    text = ctx.text(value, element)
    if not _MAC.fullmatch(text):
        raise ctx.fail(element, f"{quote(text)} is not a MAC address (e.g. 08:00:00:00:01:11)")
    why = fc.mac_problem(text.lower())
    if why is not None:
        raise ctx.fail(element, why)
    return text.lower()


def mac_from_ip(ip: str) -> str:
    """p4-utils' MAC for an IPv4 address: ``00:00:`` and the address's four bytes."""
    return "00:00:" + ":".join(f"{int(b):02x}" for b in ip.split("."))


class _Builder:
    """Collects nodes, links and hosts while checking names and ports."""

    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.roles: dict[str, Role] = {}
        self.used: dict[tuple[str, int], str] = {}
        self.links: list[Link] = []
        self.host_port: dict[str, tuple[str, int]] = {}
        self.shapes: dict[tuple[str, int], LinkShape] = {}

    @classmethod
    def named(cls, ctx: _Ctx, switches: Iterable[str], hosts: Iterable[str]) -> _Builder:
        """A builder with these switches, then these hosts (names checked)."""
        b = cls(ctx)
        for names, role in ((switches, Role.SWITCH), (hosts, Role.HOST)):
            for name in names:
                el = f"{role.value} {escape(name, 40)}"
                b.add(ctx.name(name, el), role, el)
        return b

    def add(self, name: str, role: Role, element: str) -> None:
        if name in self.roles:
            raise self.ctx.fail(element, f"duplicate name {quote(name)} (already a {self.roles[name].value})")
        self.roles[name] = role
        if len(self.roles) > MAX_ELEMENTS:
            raise self.ctx.fail(element, f"more than {MAX_ELEMENTS:,} nodes")

    def link(self, a: str, ap: int, b: str, bp: int, element: str, shape: LinkShape | None = None) -> None:
        for n in (a, b):
            if n not in self.roles:
                raise self.ctx.fail(element, f"unknown node {quote(n)} (not among the hosts and switches)")
        if a == b:
            raise self.ctx.fail(element, f"links {a} to itself")
        ra, rb = self.roles[a], self.roles[b]
        if ra is Role.HOST and rb is Role.HOST:
            raise self.ctx.fail(element, f"links two hosts ({a}, {b}); valid: a host links to a switch")
        for n, p in ((a, ap), (b, bp)):
            why = fc.port_problem(p, n)
            if why is not None:
                raise self.ctx.fail(element, why)
            if self.roles[n] is Role.HOST and n in self.host_port:
                raise self.ctx.fail(element, f"host {n} has a second link; valid: one link per host")
            if (n, p) in self.used:
                raise self.ctx.fail(element, f"port {p} of {n} is used twice (also by {self.used[(n, p)]})")
            self.used[(n, p)] = element
            if self.roles[n] is Role.HOST:
                peer = (b, bp) if n == a else (a, ap)
                self.host_port[n] = peer
        self.links.append(Link(a, ap, b, bp))
        if len(self.links) > MAX_ELEMENTS:
            raise self.ctx.fail(element, f"more than {MAX_ELEMENTS:,} links")
        if shape is not None and shape.active:
            self.shapes[(a, ap)] = self.shapes[(b, bp)] = shape

    def next_port(self, node: str) -> int:
        """The lowest free port of a switch from 1 (a host's is 0)."""
        if self.roles.get(node) is Role.HOST:
            return 0
        p = 1
        while (node, p) in self.used:
            p += 1
        return p

    def nodes(self) -> list[Node]:
        ports: dict[str, int] = {}
        for (n, p) in self.used:
            ports[n] = max(ports.get(n, 0), p + 1)
        fwd = [Node(n, r, (), ports.get(n, 1), "switch") for n, r in self.roles.items() if r is not Role.HOST]
        hosts = [Node(n, r, (), 1, "host") for n, r in self.roles.items() if r is Role.HOST]
        return fwd + hosts

    def check_hosts_linked(self) -> None:
        missing = next((n for n, r in self.roles.items() if r is Role.HOST and n not in self.host_port), None)
        if missing is not None:
            raise self.ctx.fail(f"host {missing}", "has no link")


def _check_ifnames(ctx: _Ctx, fabric: UserFabric) -> None:
    """Every interface named after a node fits Linux's 15 characters: ``NAME-ethN`` of a forwarding
    node's highest wired port (a host's interface is ``eth0``; its name is held to ``NAME-eth0``)."""
    highest: dict[str, int] = {}
    for l in fabric.links():
        for n, p in ((l.a, l.a_port), (l.b, l.b_port)):
            highest[n] = max(highest.get(n, 0), p)
    for node in fabric.nodes():
        top = highest.get(node.name, 0) if node.forwards else 0
        why = fc.ifname_problem(node.name, top)
        if why is not None:
            raise ctx.fail(f"{node.role.value} {node.name}", f"node name {quote(node.name)}: {why}")


def _check(ctx: _Ctx, fabric: UserFabric) -> None:
    """Whole-fabric checks: interface names, unique IPs and MACs, prefix and gateway sanity."""
    _check_ifnames(ctx, fabric)
    seen_ip: dict[str, str] = {}
    seen_mac: dict[str, str] = {}
    for h in fabric.host_list:
        if h.ip in seen_ip:
            raise ctx.fail(f"host {h.name}", f"address clash: IP {h.ip} is also {seen_ip[h.ip]}'s")
        if h.mac in seen_mac:
            raise ctx.fail(f"host {h.name}", f"address clash: MAC {h.mac} is also {seen_mac[h.mac]}'s")
        seen_ip[h.ip], seen_mac[h.mac] = h.name, h.name
        conf = fabric.host_conf.get(h.name) or HostConf()
        why = fc.host_ip_problem(h.ip, conf.prefix_len)
        if why is not None:
            raise ctx.fail(f"host {h.name} ip", why)
        if conf.gateway:
            why = fc.gateway_problem(conf.gateway, h.ip, conf.prefix_len)
            if why is not None:
                raise ctx.fail(f"host {h.name} gateway", why)


# -- dcnlab ---------------------------------------------------------------------------
_DCNLAB_NODE_KEYS = {"name", "role", "label", "ports", "layer", "program", "runtime_json", "cli_input"}
_DCNLAB_LINK_KEYS = {"a", "a_port", "b", "b_port", "bw", "delay", "loss", "max_queue"}
_DCNLAB_HOST_KEYS = {"name", "index", "ip", "mac", "node", "node_port", "prefix_len", "gateway", "gateway_mac",
                     "commands"}


def _unknown(ctx: _Ctx, obj: dict[str, Any], valid: Iterable[str], element: str) -> None:
    extra = set(obj) - set(valid)
    if extra:
        raise ctx.fail(element, f"unknown key(s) {_keys(dict.fromkeys(extra), 5)}; valid: {', '.join(sorted(valid))}")


def _shape(ctx: _Ctx, opts: dict[str, Any], element: str, keys: dict[str, str]) -> LinkShape:
    """LinkShape from ``opts``; ``keys`` maps bw/delay/loss/max_queue to the format's own key."""
    def get(k: str) -> Any:
        return opts.get(keys[k]) if keys.get(k) in opts else None
    bw, delay, loss, queue = get("bw"), get("delay"), get("loss"), get("max_queue")
    return LinkShape(
        None if bw is None else ctx.number(bw, f"{element} bandwidth", 0.001, 100_000, "Mbit/s"),
        None if delay is None else ctx.delay(delay, f"{element} delay"),
        None if loss is None else ctx.number(loss, f"{element} loss", 0, 99.99, "%"),
        None if queue is None else ctx.integer(queue, f"{element} queue length", 1, 1_000_000))


def _switch_conf(ctx: _Ctx, obj: dict[str, Any], element: str) -> SwitchConf:
    def path(key: str) -> Path | None:
        return ctx.file(obj[key], f"{element} {key}") if obj.get(key) is not None else None
    program = path("program")
    if program is not None and program.suffix not in (".p4", ".json"):
        raise ctx.fail(f"{element} program", f"{quote(program.name)} is neither a P4 source (.p4) nor a BMv2 JSON "
                                             f"(.json)")
    return SwitchConf(program, path("runtime_json"), path("cli_input"))


def _from_dcnlab(ctx: _Ctx, data: dict[str, Any]) -> UserFabric:
    b = _Builder(ctx)
    switch_conf: dict[str, SwitchConf] = {}
    nodes_in = ctx.lst(data["nodes"], "nodes")
    declared: dict[str, Node] = {}
    for i, raw in enumerate(nodes_in):
        el = f"nodes[{i}]"
        n = ctx.obj(raw, el)
        _unknown(ctx, n, _DCNLAB_NODE_KEYS, el)
        name = ctx.name(n.get("name"), f"{el} name")
        el = f"node {name}"
        try:
            role = Role(n.get("role"))
        except ValueError:
            raise ctx.fail(el, f"role {quote(n.get('role'))} is invalid; valid: host, switch, server") from None
        b.add(name, role, el)
        label = tuple(ctx.integer(x, f"{el} label", 0, 1 << 30) for x in ctx.lst(n.get("label", []), f"{el} label"))
        ports = n.get("ports")
        if isinstance(ports, int) and not isinstance(ports, bool) and ports > MAX_PORTS:
            raise ctx.fail(f"{el} ports", f"{ports} ports reach port {ports - 1}; valid: at most {MAX_PORTS} ports, "
                                          f"numbered {fc.PORT_RULE}")
        declared[name] = Node(name, role, label, ctx.integer(ports, f"{el} ports", 0, MAX_PORTS),
                              str(n.get("layer", "")))
        conf = _switch_conf(ctx, n, el)
        if conf != SwitchConf():
            switch_conf[name] = conf
    for i, raw in enumerate(ctx.lst(data["links"], "links")):
        el = f"links[{i}]"
        link = ctx.obj(raw, el)
        _unknown(ctx, link, _DCNLAB_LINK_KEYS, el)
        a, bn = ctx.text(link.get("a"), f"{el} a"), ctx.text(link.get("b"), f"{el} b")
        for end, key in ((a, "a"), (bn, "b")):
            if end not in declared:
                raise ctx.fail(f"{el} {key}", f"unknown node {quote(end)} (not among the nodes)")
        ap = ctx.port(link.get("a_port"), f"{el} a_port")
        bp = ctx.port(link.get("b_port"), f"{el} b_port")
        el = f"link {a}:{ap}-{bn}:{bp}"
        for end, pt in ((a, ap), (bn, bp)):
            if end in declared and pt >= declared[end].ports:
                raise ctx.fail(el, f"port {pt} of {end} is out of range; valid: 0..{declared[end].ports - 1}")
        b.link(a, ap, bn, bp, el, _shape(ctx, link, el, {k: k for k in ("bw", "delay", "loss", "max_queue")}))
    hosts: list[HostInfo] = []
    host_conf: dict[str, HostConf] = {}
    for i, raw in enumerate(ctx.lst(data.get("hosts", []), "hosts")):
        el = f"hosts[{i}]"
        h = ctx.obj(raw, el)
        _unknown(ctx, h, _DCNLAB_HOST_KEYS, el)
        name = ctx.text(h.get("name"), f"{el} name")
        if name not in b.roles:
            raise ctx.fail(f"{el} name", f"unknown node {quote(name)} (not among the nodes)")
        el = f"host {name}"
        if b.roles.get(name) is not Role.HOST:
            raise ctx.fail(el, "is not a node of role host")
        if name not in b.host_port:
            raise ctx.fail(el, "has no link")
        ip, plen = _ip(ctx, h.get("ip"), f"{el} ip")
        plen = ctx.integer(h.get("prefix_len", 8 if plen == 32 else plen), f"{el} prefix_len", 0, 32)
        mac = _mac(ctx, h.get("mac"), f"{el} mac")
        node, port = b.host_port[name]
        if (h.get("node"), h.get("node_port")) not in ((None, None), (node, port)):
            raise ctx.fail(el, f"node/node_port say {quote(h.get('node'), 20)}:{quote(h.get('node_port'), 10)}, "
                               f"but its link goes to {node}:{port}")
        hosts.append(HostInfo(name, len(hosts), ip, mac, node, port))
        gw = _ip(ctx, h["gateway"], f"{el} gateway")[0] if h.get("gateway") else None
        cmds = ctx.commands(h, el)
        gw_mac = _mac(ctx, h["gateway_mac"], f"{el} gateway_mac") if h.get("gateway_mac") else None
        hconf = HostConf(plen, gw, cmds, gw_mac)
        if hconf != HostConf():
            host_conf[name] = hconf
    listed = {h.name for h in hosts}
    missing = next((n for n, r in b.roles.items() if r is Role.HOST and n not in listed), None)
    if missing is not None:
        raise ctx.fail(f"host {missing}", "is a node of role host but has no entry in hosts (ip, mac)")
    nodes = [declared[n.name] for n in b.nodes()]
    params = data.get("params") if isinstance(data.get("params"), dict) else {}
    kind = str(data.get("kind") or str(data.get("spec", "custom")).partition(":")[0])
    kind, said = _trusted_kind(kind, params, nodes, b.links, hosts)
    diameter = None if data.get("diameter") is None else ctx.integer(data["diameter"], "diameter", 0, MAX_ELEMENTS)
    fabric = UserFabric(kind, dict(params), nodes, b.links, hosts, diameter, source=ctx.path,
                        format="dcnlab", switch_conf=switch_conf, host_conf=host_conf, link_shape=b.shapes,
                        declared=said)
    return fabric


def _trusted_kind(kind: str, params: dict[str, Any], nodes: list[Node], links: list[Link],
                  hosts: list[HostInfo]) -> tuple[str, str | None]:
    """(kind, None) when ``kind`` is no built-in family, or the file's graph is exactly the built-in
    fabric its kind and params name (dcnlab's routes fit it); else ``("custom", that spec)``."""
    from dcnlab.topos.limits import SizeLimit
    from dcnlab.topos.spec import KINDS, parse_spec

    if kind not in KINDS:
        return kind, None
    spec = f"{kind}:" + ",".join(f"{k}={v}" for k, v in params.items())
    try:
        built = parse_spec(spec, SizeLimit("a topology file names", elements=len(nodes) + len(links)))
        same = (built.num_hosts() == len(hosts) and set(built.nodes()) == set(nodes)
                and set(built.links()) == set(links) and set(built.hosts()) == set(hosts))
    except (UserError, ValueError, TypeError, KeyError):
        same = False
    return (kind, None) if same else ("custom", escape(spec, 80))


# -- tutorials ------------------------------------------------------------------------
def _from_tutorials(ctx: _Ctx, data: dict[str, Any]) -> UserFabric:
    _unknown(ctx, data, {"hosts", "switches", "links"}, "top level")
    hosts_in = data.get("hosts", {})
    if isinstance(hosts_in, list):     # the oldest exercises list host names only
        hosts_in = {h: {} for h in hosts_in}
    hosts_in = ctx.obj(hosts_in, "hosts")
    switches_in = ctx.obj(data.get("switches", {}), "switches")
    b = _Builder.named(ctx, switches_in, hosts_in)
    switch_conf = {}
    for name, raw in switches_in.items():
        el = f"switch {name}"
        s = ctx.obj(raw if raw is not None else {}, el)
        _unknown(ctx, s, {"runtime_json", "cli_input", "program", "cpu_port"}, el)
        if s.get("cpu_port"):
            raise ctx.fail(el, "cpu_port is not supported by dcnlab (no CPU port on its switches)")
        conf = _switch_conf(ctx, s, el)
        if conf != SwitchConf():
            switch_conf[name] = conf

    def end(value: Any, element: str) -> tuple[str, int]:
        text = ctx.text(value, element)
        if text in hosts_in:
            return text, 0
        m = _SWITCH_END.fullmatch(text)
        if m is None:
            if text in switches_in:
                raise ctx.fail(element, f"switch end {quote(text)} names no port; valid: {text}-p<port>, e.g. "
                                        f"{text}-p1")
            raise ctx.fail(element, f"unknown node {quote(text)} (not among the hosts and switches)")
        if m["node"] not in switches_in:
            raise ctx.fail(element, f"unknown node {quote(m['node'])} in {quote(text)} (not among the switches)")
        return m["node"], int(m["port"])

    for i, raw in enumerate(ctx.lst(data.get("links", []), "links")):
        el = f"links[{i}]"
        link = ctx.lst(raw, el)
        if not 2 <= len(link) <= 4:
            raise ctx.fail(el, f"has {len(link)} items; valid: [a, b], [a, b, latency] or [a, b, latency, bandwidth]")
        (a, ap), (bn, bp) = end(link[0], f"{el}[0]"), end(link[1], f"{el}[1]")
        el = f"link {link[0]}-{link[1]}"
        shape = LinkShape(None if len(link) < 4 or link[3] in (None, 0) else
                          ctx.number(link[3], f"{el} bandwidth", 0.001, 100_000, "Mbit/s"),
                          None if len(link) < 3 else ctx.delay(link[2], f"{el} latency") or None)
        b.link(a, ap, bn, bp, el, shape)
    b.check_hosts_linked()
    hosts, host_conf = [], {}
    for i, (name, raw) in enumerate(hosts_in.items()):
        el = f"host {name}"
        h = ctx.obj(raw if raw is not None else {}, el)
        _unknown(ctx, h, {"ip", "mac", "commands"}, el)
        if "ip" in h:
            ip, plen = _ip(ctx, h["ip"], f"{el} ip")
            if "mac" not in h:
                raise ctx.fail(el, "has an ip but no mac")
            mac = _mac(ctx, h["mac"], f"{el} mac")
        else:       # dcnlab's address plan; a MAC the file gives is kept (see the module docstring)
            ip, plen = host_ip(i), 8
            mac = _mac(ctx, h["mac"], f"{el} mac") if "mac" in h else host_mac(i)
        cmds = ctx.commands(h, el)
        node, port = b.host_port[name]
        hosts.append(HostInfo(name, i, ip, mac, node, port))
        host_conf[name] = HostConf(plen, None, cmds)
    return UserFabric("tutorials", {}, b.nodes(), b.links, hosts, None, source=ctx.path, format="tutorials",
                      switch_conf=switch_conf, host_conf=host_conf, link_shape=b.shapes)


# -- p4app ----------------------------------------------------------------------------
_P4APP_LINK_KEYS = {"bw", "delay", "loss", "max_queue_size", "queue_length", "weight", "port1", "port2"}


def _from_p4app(ctx: _Ctx, data: dict[str, Any]) -> UserFabric:
    topo = ctx.obj(data["topology"], "topology")
    _unknown(ctx, topo, {"assignment_strategy", "auto_arp_tables", "auto_gw_arp", "links", "hosts", "switches",
                         "default"}, "topology")
    strategy = topo.get("assignment_strategy", "l2")
    auto_gw_arp = topo.get("auto_gw_arp", True)
    if not isinstance(auto_gw_arp, bool):
        raise ctx.fail("topology auto_gw_arp", f"{quote(auto_gw_arp)} is not a boolean; valid: true or false")
    if strategy not in STRATEGIES:
        raise ctx.fail("topology assignment_strategy", f"{quote(strategy)} is invalid; valid: "
                                                       f"{', '.join(STRATEGIES)}")
    program = None
    for key in ("p4_src", "program"):
        if data.get(key) is not None:
            program = ctx.file(data[key], key)
    hosts_in = ctx.obj(topo.get("hosts", {}), "topology hosts")
    switches_in = ctx.obj(topo.get("switches", {}), "topology switches")
    b = _Builder.named(ctx, switches_in, hosts_in)
    switch_conf = {}
    for name, raw in switches_in.items():
        el = f"switch {name}"
        s = ctx.obj(raw if raw is not None else {}, el)
        _unknown(ctx, s, {"cli_input", "program", "p4_src"}, el)
        if "p4_src" in s:
            s = {**{k: v for k, v in s.items() if k != "p4_src"}, "program": s["p4_src"]}
        conf = _switch_conf(ctx, s, el)
        if conf != SwitchConf():
            switch_conf[name] = conf
    links_in = ctx.lst(topo.get("links", []), "topology links")
    # explicit ports first, so that automatic ones never take them
    parsed = []
    for i, raw in enumerate(links_in):
        el = f"links[{i}]"
        link = ctx.lst(raw, el)
        if len(link) not in (2, 3):
            raise ctx.fail(el, f"has {len(link)} items; valid: [a, b] or [a, b, {{options}}]")
        a, bn = ctx.text(link[0], f"{el}[0]"), ctx.text(link[1], f"{el}[1]")
        opts = ctx.obj(link[2], f"{el}[2]") if len(link) == 3 else {}
        el = f"link {escape(a, 40)}-{escape(bn, 40)}"
        _unknown(ctx, opts, _P4APP_LINK_KEYS, el)
        parsed.append((el, a, bn, opts))
    reserved = {(n, ctx.port(o[k], f"{el} {k}")) for el, a, bn, o in parsed
                for n, k in ((a, "port1"), (bn, "port2")) if k in o}
    for el, a, bn, opts in parsed:
        for n in (a, bn):
            if n not in b.roles:
                raise ctx.fail(el, f"unknown node {quote(n)} (not among the hosts and switches)")

        def pick_port(n: str, key: str, opts: dict[str, Any] = opts) -> int:
            if key in opts:
                return int(opts[key])
            p = b.next_port(n)
            while p and (n, p) in reserved:
                p += 1
                while (n, p) in b.used:
                    p += 1
            return p
        ap, bp = pick_port(a, "port1"), pick_port(bn, "port2")
        keys = {"bw": "bw", "delay": "delay", "loss": "loss",
                "max_queue": "max_queue_size" if "max_queue_size" in opts else "queue_length"}
        b.link(a, ap, bn, bp, el, _shape(ctx, opts, el, keys))
    b.check_hosts_linked()
    hosts, host_conf = [], {}
    for i, (name, raw) in enumerate(hosts_in.items()):
        el = f"host {name}"
        h = ctx.obj(raw if raw is not None else {}, el)
        _unknown(ctx, h, {"ip", "mac", "gw", "commands"}, el)
        node, port = b.host_port[name]
        if strategy == "manual" or "ip" in h:
            if "ip" not in h:
                raise ctx.fail(el, "has no ip; the manual assignment strategy needs one per host")
            ip, plen = _ip(ctx, h["ip"], f"{el} ip")
            gw = _ip(ctx, h["gw"], f"{el} gw")[0] if h.get("gw") else None
        else:
            ip, plen, gw = _assign(ctx, strategy, name, node, el)
        mac = _mac(ctx, h["mac"], f"{el} mac") if "mac" in h else mac_from_ip(ip)
        cmds = ctx.commands(h, el)
        hosts.append(HostInfo(name, i, ip, mac, node, port))
        # p4-utils' auto_gw_arp (default on): the gateway resolves statically, to a MAC made from its IP
        host_conf[name] = HostConf(plen, gw, cmds, mac_from_ip(gw) if gw and auto_gw_arp else None)
    return UserFabric("p4app", {"assignment_strategy": strategy}, b.nodes(), b.links, hosts, None,
                      source=ctx.path, format="p4app", program=program, switch_conf=switch_conf,
                      host_conf=host_conf, link_shape=b.shapes)


def _assign(ctx: _Ctx, strategy: str, host: str, switch: str, element: str) -> tuple[str, int, str | None]:
    """(IP, prefix length, gateway) of ``host`` on ``switch`` under an automatic strategy."""
    hm, sm = _NUMBERED.fullmatch(host), _NUMBERED.fullmatch(switch)
    if hm is None or (strategy != "l2" and sm is None):
        raise ctx.fail(element, f"the {strategy} assignment strategy needs names h<number> and s<number> "
                                f"(got {host} on {switch}); use manual and give ip")
    i = int(hm.group(1))
    if strategy == "l2":
        if not 1 <= i <= 65_534:
            raise ctx.fail(element, f"host number {i} is out of range for l2; valid: 1..65534")
        return f"10.0.{i // 256}.{i % 256}", 16, None
    j = int(sm.group(1)) if sm else 0
    if strategy == "mixed":
        if not (1 <= i <= 253 and 0 <= j <= 255):
            raise ctx.fail(element, f"mixed needs host numbers 1..253 and switch numbers 0..255 (got h{i} on s{j})")
        return f"10.0.{j}.{i}", 24, f"10.0.{j}.254"
    if not (0 <= i <= 255 and 0 <= j <= 255):
        raise ctx.fail(element, f"l3 needs host and switch numbers 0..255 (got h{i} on s{j})")
    return f"10.{j}.{i}.2", 24, f"10.{j}.{i}.1"
