"""What the three topology formats share (:mod:`dcnlab.topos.files` reads a file, :mod:`dcnlab.topos.file_formats` turns
each format into a fabric): the limits, the records a file configures (links, hosts, switches), the
fabric read from a file, and the checks every element passes. The formats are described in :mod:`dcnlab.topos.files`."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dcnlab.topos import fieldchecks as fc
from dcnlab.topos.errors import UserError
from dcnlab.topos.inputs import (MAX_INPUT_BYTES, MAX_QUOTE, escape, locate, quote, show_path)
from dcnlab.topos.model import Link, MaterializedFabric, Node, Role


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


# -- pieces the format readers share (dcnlab.topos.file_formats) ----------------------

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
