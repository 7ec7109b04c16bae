"""The three topology formats' readers (:func:`dcnlab.topos.files.load_topology` calls them): dcnlab's
JSON export, the p4lang tutorials' ``topology.json`` and p4-utils' ``p4app.json``. The formats and
every check are described in :mod:`dcnlab.topos.files`; the checks they share live there too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dcnlab.topos import fieldchecks as fc
from dcnlab.topos.addressing import host_ip, host_mac
from dcnlab.topos.errors import UserError
from dcnlab.topos.file_parts import (MAX_ELEMENTS, MAX_PORTS, STRATEGIES, _NUMBERED, _SWITCH_END, HostConf, LinkShape,
                                     SwitchConf, UserFabric, _Builder, _Ctx, _ip, _mac, _shape, _switch_conf, _unknown,
                                     mac_from_ip)
from dcnlab.topos.inputs import escape, quote
from dcnlab.topos.model import HostInfo, Link, Node, Role

_DCNLAB_NODE_KEYS = {"name", "role", "label", "ports", "layer", "program", "runtime_json", "cli_input"}
_DCNLAB_LINK_KEYS = {"a", "a_port", "b", "b_port", "bw", "delay", "loss", "max_queue"}
_DCNLAB_HOST_KEYS = {"name", "index", "ip", "mac", "node", "node_port", "prefix_len", "gateway", "gateway_mac",
                     "commands"}


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
def _switch_confs(ctx: _Ctx, switches_in: dict[str, Any], allowed: set[str],
                  normalise: Callable[[dict[str, Any], str], dict[str, Any]]) -> dict[str, SwitchConf]:
    """Each switch's entries and program (those that have any), the same for every format: its object, its
    keys among ``allowed``, then ``normalise`` (the format's own rule) before :func:`_switch_conf`."""
    out = {}
    for name, raw in switches_in.items():
        el = f"switch {name}"
        s = ctx.obj(raw if raw is not None else {}, el)
        _unknown(ctx, s, allowed, el)
        conf = _switch_conf(ctx, normalise(s, el), el)
        if conf != SwitchConf():
            out[name] = conf
    return out


def _from_tutorials(ctx: _Ctx, data: dict[str, Any]) -> UserFabric:
    _unknown(ctx, data, {"hosts", "switches", "links"}, "top level")
    hosts_in = data.get("hosts", {})
    if isinstance(hosts_in, list):     # the oldest exercises list host names only
        hosts_in = {h: {} for h in hosts_in}
    hosts_in = ctx.obj(hosts_in, "hosts")
    switches_in = ctx.obj(data.get("switches", {}), "switches")
    b = _Builder.named(ctx, switches_in, hosts_in)
    def no_cpu_port(s: dict[str, Any], el: str) -> dict[str, Any]:
        if s.get("cpu_port"):
            raise ctx.fail(el, "cpu_port is not supported by dcnlab (no CPU port on its switches)")
        return s

    switch_conf = _switch_confs(ctx, switches_in, {"runtime_json", "cli_input", "program", "cpu_port"}, no_cpu_port)

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
    def p4_src_is_program(s: dict[str, Any], el: str) -> dict[str, Any]:
        if "p4_src" in s:
            return {**{k: v for k, v in s.items() if k != "p4_src"}, "program": s["p4_src"]}
        return s

    switch_conf = _switch_confs(ctx, switches_in, {"cli_input", "program", "p4_src"}, p4_src_is_program)
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
