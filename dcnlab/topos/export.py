"""Fabric ⇄ JSON and fabric → Graphviz DOT (strings only; callers do the I/O).

JSON format (documented in "JSON export format", docs/reference/file-formats.md)::

    {"spec": "bcube:n=4,k=1", "kind": "bcube", "params": {...}, "diameter": 4,
     "nodes": [{"name", "role", "label", "ports", "layer"}...],
     "links": [{"a", "a_port", "b", "b_port"}...],
     "hosts": [{"name", "index", "ip", "mac", "node", "node_port"}...]}
"""

from __future__ import annotations

import json
from typing import Any

from dcnlab.topos.model import Fabric, HostInfo, Link, MaterializedFabric, Node, Role


def to_dict(fabric: Fabric) -> dict[str, Any]:
    """The JSON export. A fabric read from a file (:class:`dcnlab.topos.files.UserFabric`) also writes its
    per-link shaping, per-host prefix, gateway and commands, and per-switch files, so that
    :func:`dcnlab.topos.files.load_topology` reads back an equal fabric."""
    from dcnlab.topos.files import UserFabric

    user = fabric if isinstance(fabric, UserFabric) else None
    nodes, links, hosts = [], [], []
    for n in fabric.nodes():
        d: dict[str, Any] = {"name": n.name, "role": n.role.value, "label": list(n.label), "ports": n.ports,
                             "layer": n.layer}
        conf = user.switch_conf.get(n.name) if user else None
        if user is not None and n.forwards and user.program_of(n.name) is not None:
            d["program"] = str(user.program_of(n.name))
        if conf is not None:
            d.update({k: str(v) for k, v in (("runtime_json", conf.runtime_json), ("cli_input", conf.cli_input))
                      if v is not None})
        nodes.append(d)
    for l in fabric.links():
        d = {"a": l.a, "a_port": l.a_port, "b": l.b, "b_port": l.b_port}
        shape = user.shape_of(l.a, l.a_port) if user else None
        if shape is not None:
            d.update(shape.to_dict())
        links.append(d)
    for h in fabric.hosts():
        d = {"name": h.name, "index": h.index, "ip": h.ip, "mac": h.mac, "node": h.node, "node_port": h.node_port}
        hc = user.host_conf.get(h.name) if user else None
        if hc is not None:
            d["prefix_len"] = hc.prefix_len
            if hc.gateway:
                d["gateway"] = hc.gateway
            if hc.gateway_mac:
                d["gateway_mac"] = hc.gateway_mac
            if hc.commands:
                d["commands"] = list(hc.commands)
        hosts.append(d)
    return {"spec": fabric.spec, "kind": fabric.kind, "params": dict(fabric.params), "diameter": fabric.diameter(),
            "nodes": nodes, "links": links, "hosts": hosts}


def to_json(fabric: Fabric) -> str:
    return json.dumps(to_dict(fabric), separators=(",", ":"))


def from_dict(data: dict[str, Any]) -> MaterializedFabric:
    nodes = [Node(n["name"], Role(n["role"]), tuple(n["label"]), n["ports"], n.get("layer", ""))
             for n in data["nodes"]]
    links = [Link(l["a"], l["a_port"], l["b"], l["b_port"]) for l in data["links"]]
    hosts = [HostInfo(h["name"], h["index"], h["ip"], h["mac"], h["node"], h["node_port"])
             for h in data.get("hosts", [])]
    kind = data.get("kind") or data["spec"].partition(":")[0]
    return MaterializedFabric(kind, dict(data["params"]), nodes, links, hosts, data.get("diameter"))


def from_json(text: str) -> MaterializedFabric:
    return from_dict(json.loads(text))


_SHAPES = {Role.HOST: "ellipse", Role.SWITCH: "box", Role.SERVER: "doublecircle"}


def to_dot(fabric: Fabric) -> str:
    lines = [f'graph "{fabric.spec}" {{', "  node [fontsize=10];"]
    for n in fabric.nodes():
        lines.append(f'  "{n.name}" [shape={_SHAPES[n.role]}, tooltip="{n.layer} {list(n.label)}"];')
    for l in fabric.links():
        lines.append(f'  "{l.a}" -- "{l.b}" [taillabel="{l.a_port}", headlabel="{l.b_port}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"
