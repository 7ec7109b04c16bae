"""An in-process fake P4Runtime server for unit tests (after finsy's test server).

It speaks real gRPC on 127.0.0.1. It arbitrates (the highest election id is primary),
stores the pipeline, and records every Write. It keeps table entries, PRE entries and meter
configs with P4Runtime's semantics: INSERT of an existing key gives ALREADY_EXISTS, MODIFY or
DELETE of a missing key gives NOT_FOUND, and errors carry per-update ``p4.v1.Error`` details
as BMv2 sends them. It answers Reads of those entities and of counter cells that a test sets.
"""

from __future__ import annotations

import threading
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from dcnlab.controller.runtime.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2


def _key(entity: p4runtime_pb2.Entity) -> tuple:
    kind = entity.WhichOneof("entity")
    if kind == "table_entry":
        te = entity.table_entry
        match = tuple(sorted(m.SerializeToString(deterministic=True) for m in te.match))
        return ("table", te.table_id, match, te.priority, te.is_default_action)
    if kind == "packet_replication_engine_entry":
        pre = entity.packet_replication_engine_entry
        if pre.HasField("multicast_group_entry"):
            return ("mcast", pre.multicast_group_entry.multicast_group_id)
        return ("clone", pre.clone_session_entry.session_id)
    if kind == "meter_entry":
        return ("meter", entity.meter_entry.meter_id, entity.meter_entry.index.index)
    if kind == "counter_entry":
        return ("counter", entity.counter_entry.counter_id, entity.counter_entry.index.index)
    return (kind, entity.SerializeToString(deterministic=True))


@dataclass
class DeviceState:
    p4info: object | None = None
    device_config: bytes = b""
    entities: dict[tuple, p4runtime_pb2.Entity] = field(default_factory=dict)
    counters: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    primary_election: tuple[int, int] = (0, 0)


class _Servicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, server: FakeP4RuntimeServer) -> None:
        self.s = server

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.4.1")

    def StreamChannel(self, request_iterator, context):
        for req in request_iterator:
            if req.HasField("arbitration"):
                a = req.arbitration
                eid = (a.election_id.high, a.election_id.low)
                with self.s.lock:
                    self.s.arbitrations.append(eid)
                    st = self.s.state
                    if eid >= st.primary_election:
                        st.primary_election = eid
                        code = code_pb2.OK
                    else:
                        code = code_pb2.ALREADY_EXISTS
                rep = p4runtime_pb2.StreamMessageResponse()
                rep.arbitration.CopyFrom(a)
                rep.arbitration.status.code = code
                yield rep

    def SetForwardingPipelineConfig(self, request, context):
        with self.s.lock:
            self.s.pipeline_pushes += 1
            self.s.state = DeviceState(request.config.p4info, request.config.p4_device_config,
                                       primary_election=self.s.state.primary_election)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        rep = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        if self.s.state.p4info is not None:
            rep.config.p4info.CopyFrom(self.s.state.p4info)
        return rep

    def Write(self, request, context):
        with self.s.lock:
            if self.s.state.p4info is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, "No forwarding pipeline config set")
            if (request.election_id.high, request.election_id.low) != self.s.state.primary_election:
                context.abort(grpc.StatusCode.PERMISSION_DENIED, "Not primary")
            self.s.write_requests.append(request)
            errors = []
            store = self.s.state.entities
            for u in request.updates:
                key = _key(u.entity)
                code, msg = code_pb2.OK, ""
                if u.type == p4runtime_pb2.Update.INSERT:
                    if key in store:
                        code, msg = code_pb2.ALREADY_EXISTS, "Match entry exists, use MODIFY if you wish to change action"
                    else:
                        store[key] = u.entity
                elif u.type == p4runtime_pb2.Update.MODIFY:
                    if key not in store and key[0] not in ("meter", "counter"):
                        code, msg = code_pb2.NOT_FOUND, "Cannot find match entry"
                    else:
                        store[key] = u.entity
                elif u.type == p4runtime_pb2.Update.DELETE:
                    if store.pop(key, None) is None:
                        code, msg = code_pb2.NOT_FOUND, "Cannot find match entry"
                errors.append(p4runtime_pb2.Error(canonical_code=code, message=msg))
            if any(e.canonical_code != code_pb2.OK for e in errors):
                status = status_pb2.Status(code=code_pb2.UNKNOWN, message="Write failure.")
                for e in errors:
                    status.details.add().Pack(e)
                context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
                context.abort(grpc.StatusCode.UNKNOWN, "Write failure.")
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        rep = p4runtime_pb2.ReadResponse()
        with self.s.lock:
            st = self.s.state
            for want in request.entities:
                kind = want.WhichOneof("entity")
                if kind == "counter_entry":
                    ce = want.counter_entry
                    for (cid, idx), (pkts, byts) in sorted(st.counters.items()):
                        if cid == ce.counter_id and (not ce.HasField("index") or ce.index.index == idx):
                            e = rep.entities.add()
                            e.counter_entry.counter_id = cid
                            e.counter_entry.index.index = idx
                            e.counter_entry.data.packet_count, e.counter_entry.data.byte_count = pkts, byts
                    continue
                for ent in st.entities.values():
                    if ent.WhichOneof("entity") != kind:
                        continue
                    if kind == "table_entry" and want.table_entry.table_id not in (0, ent.table_entry.table_id):
                        continue
                    rep.entities.add().CopyFrom(ent)
        yield rep


class FakeP4RuntimeServer:
    """``with FakeP4RuntimeServer() as s: ... s.addr ...``; one device per server, like BMv2."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.state = DeviceState()
        self.write_requests: list[p4runtime_pb2.WriteRequest] = []
        self.arbitrations: list[tuple[int, int]] = []
        self.pipeline_pushes = 0
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(_Servicer(self), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.addr = f"127.0.0.1:{self.port}"

    def start(self) -> FakeP4RuntimeServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None)

    def restart(self) -> None:
        """Simulate a switch restart: drop all state and streams, serve again on the same port."""
        self._server.stop(grace=None).wait()
        self.state = DeviceState()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(_Servicer(self), self._server)
        self._server.add_insecure_port(self.addr)
        self._server.start()

    def __enter__(self) -> FakeP4RuntimeServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- test helpers ---------------------------------------------------------------
    @property
    def updates(self) -> list[p4runtime_pb2.Update]:
        return [u for r in self.write_requests for u in r.updates]

    def entities(self, kind: str | None = None) -> list[p4runtime_pb2.Entity]:
        return [e for e in self.state.entities.values() if kind is None or e.WhichOneof("entity") == kind]

    def set_counter(self, counter_id: int, index: int, packets: int, byte_count: int) -> None:
        with self.lock:
            self.state.counters[(counter_id, index)] = (packets, byte_count)
