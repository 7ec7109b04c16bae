#!/usr/bin/env python3
"""controller.py -- the basic-lab's own P4Runtime controller, in the style of an exercise's mycontroller.

It talks plain gRPC to the switches, as the tutorials' p4runtime exercise does, so the lab must put
them on TCP ports and leave them to it:

    sudo dcnlab lab examples/basic-lab --grpc-tcp --no-controller     # terminal 1: the Mininet CLI
    sudo python3 examples/basic-lab/controller.py                      # terminal 2
    mininet> h1 ping -c 2 10.0.4.4                                     # back in terminal 1

For each switch of the topology file, in the file's order (device id 0, 1, ... on 127.0.0.1:50051,
50052, ...), it becomes the primary controller, pushes the pipeline from ``build/basic.json`` and
``build/basic.p4.p4info.txtpb`` (where ``dcnlab lab`` compiled basic.p4 to), and writes one
``LabIngress.ipv4_lpm`` route per host along shortest paths that it computes from the topology
file. Pushing the pipeline clears whatever the switch held, so the routes are this script's alone.

Needs grpcio and the P4Runtime protobuf modules: those of the ``p4runtime`` package (``p4.v1``) if
installed, else finsy's (a dependency of dcnlab), so dcnlab's own Python runs it as is.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import queue
import sys
from collections import deque
from pathlib import Path

import grpc
from google.protobuf import text_format

try:
    from p4.config.v1 import p4info_pb2
    from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
except ImportError:
    from finsy.proto.p4.config.v1 import p4info_pb2
    from finsy.proto.p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc

HERE = Path(__file__).resolve().parent
TABLE, ACTION, FIELD = "LabIngress.ipv4_lpm", "LabIngress.forward", "h.ip.dst"


def routes(topo: dict) -> dict[str, list[tuple[str, str, int]]]:
    """Per switch: (host IP, next hop MAC, egress port) for every host, along a shortest path
    (breadth-first over the switches, ports in increasing order)."""
    hosts = topo["hosts"]
    ports: dict[str, dict[int, str]] = {s: {} for s in topo["switches"]}      # switch -> port -> peer
    attach = {}                                                                # host -> (switch, port)
    for a, b, *_ in topo["links"]:
        ends = []
        for end in (a, b):
            node, _, port = end.rpartition("-p")
            ends.append((node, int(port)) if node in ports else (end, None))
        (na, pa), (nb, pb) = ends
        for n, p, peer in ((na, pa, nb), (nb, pb, na)):
            if p is not None:
                ports[n][p] = peer
            else:
                attach[n] = next((x, q) for x, q in ends if x != n)
    switch_mac = {s: f"02:00:00:00:00:{i + 1:02x}" for i, s in enumerate(topo["switches"])}
    out: dict[str, list[tuple[str, str, int]]] = {}
    for s in topo["switches"]:
        first_hop: dict[str, int] = {s: 0}        # switch -> port of s that leads to it
        todo = deque([s])
        while todo:
            n = todo.popleft()
            for p, peer in sorted(ports[n].items()):
                if peer in ports and peer not in first_hop:
                    first_hop[peer] = p if n == s else first_hop[n]
                    todo.append(peer)
        out[s] = []
        for h, (sw, port) in attach.items():
            ip = hosts[h]["ip"].split("/")[0]
            if sw == s:
                out[s].append((ip, hosts[h]["mac"], port))
            else:
                p = first_hop[sw]
                out[s].append((ip, switch_mac[ports[s][p]], p))
    return out


class Switch:
    """A primary P4Runtime session with one switch (stream open while the object lives)."""

    def __init__(self, name: str, address: str, device_id: int, election_id: int) -> None:
        self.name, self.device_id = name, device_id
        self.election = p4runtime_pb2.Uint128(high=election_id >> 64, low=election_id & (2**64 - 1))
        self.channel = grpc.insecure_channel(address)
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.requests: queue.Queue = queue.Queue()
        self.stream = self.stub.StreamChannel(iter(self.requests.get, None))
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = device_id
        req.arbitration.election_id.CopyFrom(self.election)
        self.requests.put(req)
        reply = next(self.stream)
        if reply.arbitration.status.code != 0:          # google.rpc.Code OK: we are primary
            raise SystemExit(f"{name}: not primary (status {reply.arbitration.status.code}: "
                             f"{reply.arbitration.status.message}); is another controller connected?")

    def push_pipeline(self, p4info: p4info_pb2.P4Info, device_config: bytes) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(
            device_id=self.device_id, election_id=self.election,
            action=p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT)
        req.config.p4info.CopyFrom(p4info)
        req.config.p4_device_config = device_config
        self.stub.SetForwardingPipelineConfig(req, timeout=30)

    def insert(self, entries: list[p4runtime_pb2.TableEntry]) -> None:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id, election_id=self.election)
        for e in entries:
            u = req.updates.add()
            u.type = p4runtime_pb2.Update.INSERT
            u.entity.table_entry.CopyFrom(e)
        self.stub.Write(req, timeout=10)

    def count(self, table_id: int) -> int:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        req.entities.add().table_entry.table_id = table_id
        return sum(len(r.entities) for r in self.stub.Read(req, timeout=10))

    def close(self) -> None:
        self.requests.put(None)
        self.channel.close()


def encode(value: int, bits: int) -> bytes:
    return value.to_bytes((bits + 7) // 8, "big")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topo", type=Path, default=HERE / "pod-topo" / "topology.json")
    ap.add_argument("--p4info", type=Path, default=HERE / "build" / "basic.p4.p4info.txtpb")
    ap.add_argument("--bmv2-json", type=Path, default=HERE / "build" / "basic.json")
    ap.add_argument("--address", default="127.0.0.1", help="where the switches listen (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=50051, help="the first switch's port; the next switch on +1")
    ap.add_argument("--election-id", type=int, default=1)
    args = ap.parse_args()

    topo = json.loads(args.topo.read_text())
    p4info = text_format.Parse(args.p4info.read_text(), p4info_pb2.P4Info())
    device_config = args.bmv2_json.read_bytes()
    table = next(t for t in p4info.tables if t.preamble.name == TABLE)
    field = next(f for f in table.match_fields if f.name == FIELD)
    action = next(a for a in p4info.actions if a.preamble.name == ACTION)
    param = {p.name: p for p in action.params}

    for device_id, (name, todo) in enumerate(routes(topo).items()):
        sw = Switch(name, f"{args.address}:{args.port + device_id}", device_id, args.election_id)
        try:
            sw.push_pipeline(p4info, device_config)
            entries = []
            for ip, mac, port in todo:
                e = p4runtime_pb2.TableEntry(table_id=table.preamble.id)
                m = e.match.add(field_id=field.id)
                m.lpm.value = encode(int(ipaddress.IPv4Address(ip)), field.bitwidth)
                m.lpm.prefix_len = 32
                a = e.action.action
                a.action_id = action.preamble.id
                a.params.add(param_id=param["next_mac"].id,
                             value=encode(int(mac.replace(":", ""), 16), param["next_mac"].bitwidth))
                a.params.add(param_id=param["port"].id, value=encode(port, param["port"].bitwidth))
                entries.append(e)
            sw.insert(entries)
            print(f"{name} (device {device_id}, {args.address}:{args.port + device_id}): pipeline pushed, "
                  f"{sw.count(table.preamble.id)} routes in {TABLE}", flush=True)
        except grpc.RpcError as e:
            print(f"{name}: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
        finally:
            sw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
