"""An in-process fake P4Runtime server for unit tests (after finsy's test server).

It speaks real gRPC on 127.0.0.1 (``server.addr``, ``127.0.0.1:PORT``). It arbitrates as
BMv2's P4Runtime server (PI) does: it keeps the set of open streams that arbitrated; the one
with the highest election id is primary; a stream arbitrating with an election id already in
use ends with INVALID_ARGUMENT "Election id already exists"; whenever the primary changes (a
higher election id arrives, or the primary's stream ends) every stream gets an arbitration
update carrying the primary's election id, with status OK ("Is primary") for the primary and
ALREADY_EXISTS ("Is backup") for the others. Write and SetForwardingPipelineConfig are refused
with PERMISSION_DENIED "Not primary" unless they carry the primary's election id (or, with no
stream open, no election id at all), and FAILED_PRECONDITION "No forwarding pipeline config set
for this device" before a pipeline is set (GetForwardingPipelineConfig too).

It stores the pipeline (P4Info, device config, cookie) and records every Write. It checks every
update as PI does, against the pushed P4Info (:mod:`~dcnlab.controller.runtime.p4info_checks`:
ids, parameters, value widths, LPM prefixes, ternary masks, ranges, priorities, the actions a
table allows, default entries) and against what is installed
(:mod:`~dcnlab.controller.runtime.fake_device`: INSERT of an existing key gives ALREADY_EXISTS,
MODIFY or DELETE of a missing one NOT_FOUND, a full table UNKNOWN, multicast groups and clone
sessions with PI's rules), with PI's code and message for each: a Write with a refused update ends
with UNKNOWN and a ``google.rpc.Status`` holding one ``p4.v1.Error`` per update, as BMv2 sends it.
It answers Reads as PI does (values without leading zero bytes, "don't care" fields left out),
and of counter cells that a test sets or a Write wrote. It has no gNMI service (clients such as
finsy then go on without port information, as they do with BMv2 builds without gNMI).

:mod:`dcnlab.testing` exposes it to a user's tests as pytest fixtures.
"""

from __future__ import annotations

import itertools
import queue
import threading
from concurrent import futures
from dataclasses import dataclass, field

import grpc
from dcnlab.controller.runtime.fake_device import DeviceState
from dcnlab.controller.runtime.p4info_checks import Refused
from dcnlab.controller.runtime.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc

_CODES = {c.value[0]: c for c in grpc.StatusCode}

NOT_PRIMARY = "Not primary"
NO_PIPELINE = "No forwarding pipeline config set for this device"


@dataclass(eq=False)
class _Stream:
    """One open StreamChannel: its responses go through ``out`` (so that an arbitration on another
    stream can notify it); ``election_id`` is None until it arbitrates."""
    id: int
    out: queue.Queue = field(default_factory=queue.Queue)
    election_id: tuple[int, int] | None = None
    device_id: int = 0


@dataclass(frozen=True)
class _Abort:
    code: grpc.StatusCode
    details: str


_CLOSE = object()
_ids = itertools.count(1)


def _eid(msg) -> tuple[int, int]:
    return (msg.election_id.high, msg.election_id.low)


class _Servicer(p4runtime_pb2_grpc.P4RuntimeServicer):
    def __init__(self, server: FakeP4RuntimeServer) -> None:
        self.s = server

    def Capabilities(self, request, context):
        return p4runtime_pb2.CapabilitiesResponse(p4runtime_api_version="1.4.1")

    def StreamChannel(self, request_iterator, context):
        conn = _Stream(next(_ids))
        context.add_callback(lambda: conn.out.put(_CLOSE))

        def read() -> None:
            try:
                for req in request_iterator:
                    if req.HasField("arbitration"):
                        self.s._arbitrate(conn, req.arbitration)
            except Exception:   # noqa: BLE001 - the RPC ended (cancelled, server stopped)
                pass
            finally:
                conn.out.put(_CLOSE)

        threading.Thread(target=read, name=f"fake-p4rt-stream-{conn.id}", daemon=True).start()
        try:
            while True:
                item = conn.out.get()
                if item is _CLOSE:
                    return
                if isinstance(item, _Abort):
                    context.abort(item.code, item.details)
                yield item
        finally:
            self.s._drop(conn)

    def _check_device(self, request, context) -> None:
        want = self.s.device_id
        if want is not None and request.device_id != want:
            context.abort(grpc.StatusCode.NOT_FOUND, f"Unknown device id {request.device_id}: this switch is "
                                                     f"device {want}")

    def _check_primary(self, request, context) -> None:
        """PI's rule (caller holds the lock): with streams open only the primary's election id may
        write; with none, only a request without an election id."""
        primary = self.s._primary()
        if primary is None:
            if request.HasField("election_id"):
                context.abort(grpc.StatusCode.PERMISSION_DENIED, NOT_PRIMARY)
        elif _eid(request) != primary.election_id:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, NOT_PRIMARY)

    def SetForwardingPipelineConfig(self, request, context):
        A = p4runtime_pb2.SetForwardingPipelineConfigRequest
        with self.s.lock:
            self._check_device(request, context)
            self._check_primary(request, context)
            if request.action == A.UNSPECIFIED:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, "Invalid SetForwardingPipelineConfig action")
            self.s.pipeline_requests.append(request)
            if request.action == A.VERIFY:
                return p4runtime_pb2.SetForwardingPipelineConfigResponse()
            self.s.pipeline_pushes += 1
            cfg = request.config
            self.s.state = DeviceState(cfg.p4info, cfg.p4_device_config,
                                       cookie=cfg.cookie.cookie if cfg.HasField("cookie") else None)
        return p4runtime_pb2.SetForwardingPipelineConfigResponse()

    def GetForwardingPipelineConfig(self, request, context):
        R = p4runtime_pb2.GetForwardingPipelineConfigRequest
        rep = p4runtime_pb2.GetForwardingPipelineConfigResponse()
        with self.s.lock:
            self._check_device(request, context)
            st = self.s.state
            if st.p4info is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
            if st.cookie is not None:
                rep.config.cookie.cookie = st.cookie
            if request.response_type in (R.ALL, R.P4INFO_AND_COOKIE):
                rep.config.p4info.CopyFrom(st.p4info)
            if request.response_type in (R.ALL, R.DEVICE_CONFIG_AND_COOKIE):
                rep.config.p4_device_config = st.device_config
        return rep

    def Write(self, request, context):
        with self.s.lock:
            self._check_device(request, context)
            self._check_primary(request, context)
            if self.s.state.p4info is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
            self.s.write_requests.append(request)
            status = self.s.state.write(request)
        if status.code != code_pb2.OK:     # as PI: the google.rpc.Status in the details, its message as is
            context.set_trailing_metadata((("grpc-status-details-bin", status.SerializeToString()),))
            context.abort(_CODES[status.code], status.message)
        return p4runtime_pb2.WriteResponse()

    def Read(self, request, context):
        rep = p4runtime_pb2.ReadResponse()
        with self.s.lock:
            self._check_device(request, context)
            if self.s.state.p4info is None:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, NO_PIPELINE)
            try:
                for want in request.entities:
                    rep.entities.extend(self.s.state.read(want))
            except Refused as r:
                context.abort(_CODES[r.code], r.message)
        yield rep


class FakeP4RuntimeServer:
    """``with FakeP4RuntimeServer() as s: ... s.addr ...``; one device per server, like BMv2.

    What it received: :attr:`arbitrations` (election ids, in order), :attr:`pipeline_requests`,
    :attr:`write_requests` (and :attr:`updates`), and its current state: :attr:`state`,
    :meth:`entities`, :meth:`table_entries`, :attr:`primary_election_id`."""

    WORKERS = 40            # each open stream holds a worker thread (threads start on demand)
    MAX_STREAMS = 16        # as PI: more arbitrated streams get RESOURCE_EXHAUSTED

    def __init__(self, device_id: int | None = None) -> None:
        """``device_id``: refuse requests for another device id with NOT_FOUND (None: take any), so a
        test catches a controller that addresses the wrong device."""
        self.device_id = device_id
        self.lock = threading.RLock()
        self.state = DeviceState()
        self.write_requests: list[p4runtime_pb2.WriteRequest] = []
        self.pipeline_requests: list[p4runtime_pb2.SetForwardingPipelineConfigRequest] = []
        self.arbitrations: list[tuple[int, int]] = []
        self.pipeline_pushes = 0
        self.streams: dict[int, _Stream] = {}
        """Open streams that arbitrated, by stream number (PI's "connections")."""
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.WORKERS))
        p4runtime_pb2_grpc.add_P4RuntimeServicer_to_server(_Servicer(self), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self.addr = f"127.0.0.1:{self.port}"

    # -- arbitration (PI's DeviceState::add_connection / update_connection / cleanup_connection) --
    def _primary(self) -> _Stream | None:
        return max(self.streams.values(), key=lambda c: c.election_id or (0, 0), default=None)

    def _notify(self, conn: _Stream) -> None:
        primary = self._primary()
        assert primary is not None and primary.election_id is not None
        rep = p4runtime_pb2.StreamMessageResponse()
        a = rep.arbitration
        a.device_id = conn.device_id
        a.election_id.high, a.election_id.low = primary.election_id
        if conn is primary:
            a.status.code, a.status.message = code_pb2.OK, "Is primary"
        else:
            a.status.code, a.status.message = code_pb2.ALREADY_EXISTS, "Is backup"
        conn.out.put(rep)

    def _notify_all(self) -> None:
        for conn in self.streams.values():
            self._notify(conn)

    def _arbitrate(self, conn: _Stream, a: p4runtime_pb2.MasterArbitrationUpdate) -> None:
        eid = _eid(a)
        with self.lock:
            self.arbitrations.append(eid)
            if self.device_id is not None and a.device_id != self.device_id:
                conn.out.put(_Abort(grpc.StatusCode.NOT_FOUND,
                                    f"Unknown device id {a.device_id}: this switch is device {self.device_id}"))
                return
            if conn.election_id is None and len(self.streams) >= self.MAX_STREAMS:
                conn.out.put(_Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "Too many connections"))
                return
            if conn.election_id is not None and a.device_id != conn.device_id:
                conn.out.put(_Abort(grpc.StatusCode.FAILED_PRECONDITION, "Invalid device id"))
                return
            if conn.election_id == eid:
                return
            if any(c.election_id == eid for c in self.streams.values()):
                what = "Election id" if conn.election_id is None else "New election id"
                self._drop(conn)   # the stream ends with the error
                conn.out.put(_Abort(grpc.StatusCode.INVALID_ARGUMENT, f"{what} already exists"))
                return
            was_primary = conn.election_id is not None and self._primary() is conn
            conn.election_id, conn.device_id = eid, a.device_id
            self.streams[conn.id] = conn
            if (self._primary() is conn) != was_primary:
                self._notify_all()
            else:
                self._notify(conn)

    def _drop(self, conn: _Stream) -> None:
        with self.lock:
            if self.streams.get(conn.id) is not conn:
                return
            was_primary = self._primary() is conn
            del self.streams[conn.id]
            if was_primary and self.streams:
                self._notify_all()

    @property
    def primary_election_id(self) -> tuple[int, int] | None:
        """The primary stream's election id (None when no stream has arbitrated)."""
        with self.lock:
            p = self._primary()
            return None if p is None else p.election_id

    def start(self) -> FakeP4RuntimeServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None)

    def restart(self) -> None:
        """Simulate a switch restart: drop all state and streams, serve again on the same port."""
        self._server.stop(grace=None).wait()
        with self.lock:
            self.state = DeviceState()
            self.streams = {}
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.WORKERS))
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

    def table_entries(self, table: str | None = None) -> list[p4runtime_pb2.TableEntry]:
        """The table entries installed now (``p4.v1.TableEntry``), all or of one table named as in the
        pushed P4Info (full name or alias)."""
        entries = [e.table_entry for e in self.entities("table_entry")]
        if table is None:
            return entries
        info = self.state.p4info
        ids = {t.preamble.id for t in (info.tables if info is not None else ())
               if table in (t.preamble.name, t.preamble.alias)}
        if not ids:
            raise KeyError(f"no table {table!r} in the pushed P4Info")
        return [e for e in entries if e.table_id in ids]

    def set_counter(self, counter_id: int, index: int, packets: int, byte_count: int) -> None:
        with self.lock:
            self.state.counters[(counter_id, index)] = (packets, byte_count)
