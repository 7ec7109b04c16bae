"""One P4Runtime connection to one switch, built on p4runtime-shell's ``P4RuntimeClient``.

We reuse its stream handling, Write/Read calls and P4Runtime error unpacking. We replace the
parts that ``sys.exit`` or ``print``: connection set-up, arbitration, and error reporting.
Every failed RPC raises :class:`SwitchError` or :class:`WriteError` with the switch name,
the entity and the gRPC status.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
from google.rpc import code_pb2
from p4.v1 import p4runtime_pb2, p4runtime_pb2_grpc
from google.rpc import status_pb2
from p4runtime_sh.p4runtime import P4RuntimeClient

from controller.runtime.entities import Counter, Entity, TableEntry, Update
from controller.runtime.errors import SwitchError, WriteError
from controller.runtime.grpc_log import GrpcRequestLogger
from controller.runtime.p4info import P4Info

log = logging.getLogger(__name__)

DEFAULT_BATCH = 2000


def p4_errors(e: grpc.RpcError) -> list[tuple[int, p4runtime_pb2.Error]] | None:
    """The failed updates (index, p4.v1.Error) in a Write error's status details; None if absent.

    We do not use p4runtime-shell's ``P4RuntimeErrorIterator``: it loops forever on an OK entry,
    and BMv2 reports OK for every update of a batch that did not fail."""
    for key, value in e.trailing_metadata() or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            out = []
            for idx, detail in enumerate(status.details):
                err = p4runtime_pb2.Error()
                if detail.Unpack(err) and err.canonical_code != code_pb2.OK:
                    out.append((idx, err))
            return out
    return None


class SwitchClient(P4RuntimeClient):
    """p4runtime-shell's client for switch ``name``; primary with ``election_id``."""

    def __init__(self, name: str, device_id: int, grpc_addr: str, election_id: tuple[int, int] = (0, 1),
                 log_file: Path | None = None, connect_timeout: float = 5.0) -> None:
        # Not calling P4RuntimeClient.__init__: it exits the process on failure.
        self.name = name
        self.device_id = device_id
        self.election_id = election_id
        self.role_name = None
        self.grpc_addr = grpc_addr
        self.connect_timeout = connect_timeout
        self.stream_out_q: Any = None        # set by P4RuntimeClient.set_up_stream
        self.stream_in_q: Any = None
        self.stream_recv_thread: Any = None
        channel = grpc.insecure_channel(grpc_addr)
        try:
            grpc.channel_ready_future(channel).result(timeout=connect_timeout)
        except grpc.FutureTimeoutError:
            channel.close()
            raise SwitchError(name, f"connect to {grpc_addr}", "UNAVAILABLE",
                              f"not reachable within {connect_timeout:.1f} s") from None
        if log_file is not None:
            channel = grpc.intercept_channel(channel, GrpcRequestLogger(log_file, name))
        self.channel = channel
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self.set_up_stream()

    # -- session ----------------------------------------------------------------
    def handshake(self) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = self.election_id
        self.stream_out_q.put(req)
        try:
            rep = self.stream_in_q["arbitration"].get(timeout=self.connect_timeout)
        except queue.Empty:
            rep = None
        if rep is None:
            self.tear_down()
            raise SwitchError(self.name, "arbitration", "UNAVAILABLE", "no arbitration response")
        if rep.arbitration.status.code != code_pb2.OK:
            self.tear_down()
            raise SwitchError(self.name, "arbitration", code_pb2.Code.Name(rep.arbitration.status.code),
                              "another controller is primary for this device")

    @property
    def alive(self) -> bool:
        return self.stream_recv_thread is not None and self.stream_recv_thread.is_alive()

    def close(self) -> None:
        if getattr(self, "channel", None) is not None:
            self.tear_down()
            self.channel = None

    # -- RPCs -------------------------------------------------------------------
    def _rpc_error(self, what: str, e: grpc.RpcError) -> SwitchError:
        return SwitchError(self.name, what, e.code().name, e.details() or "")

    def set_pipeline(self, p4info: P4Info, device_config: bytes) -> None:
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        req.election_id.high, req.election_id.low = self.election_id
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        req.config.p4info.CopyFrom(p4info.msg)
        req.config.p4_device_config = device_config
        try:
            self.stub.SetForwardingPipelineConfig(req)
        except grpc.RpcError as e:
            raise self._rpc_error("SetForwardingPipelineConfig", e) from None

    def write(self, p4info: P4Info, updates: Sequence[Update], batch: int = DEFAULT_BATCH) -> None:  # type: ignore[override]
        """Write ``updates`` in batches of ``batch`` per WriteRequest."""
        for start in range(0, len(updates), batch):
            chunk = updates[start:start + batch]
            req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
            req.election_id.high, req.election_id.low = self.election_id
            for u in chunk:
                u.fill(p4info, req.updates.add())
            try:
                self.stub.Write(req)
            except grpc.RpcError as e:
                raise self._write_error(e, chunk) from None

    def _write_error(self, e: grpc.RpcError, chunk: Sequence[Update]) -> SwitchError:
        if e.code() != grpc.StatusCode.UNKNOWN:
            return self._rpc_error(f"Write of {len(chunk)} update(s) starting with {chunk[0]}", e)
        errors = p4_errors(e)
        if errors is None:
            return self._rpc_error(f"Write of {len(chunk)} update(s)", e)
        failures = [(chunk[idx], code_pb2.Code.Name(err.canonical_code), err.message)
                    for idx, err in errors if idx < len(chunk)]
        return WriteError(self.name, failures or [(chunk[0], "UNKNOWN", e.details() or "")])

    def read(self, p4info: P4Info, entities: Iterable[Entity]) -> Iterator[p4runtime_pb2.Entity]:
        req = p4runtime_pb2.ReadRequest(device_id=self.device_id)
        for e in entities:
            e.fill(p4info, req.entities.add())
        try:
            for rep in self.stub.Read(req):
                yield from rep.entities
        except grpc.RpcError as e:
            raise self._rpc_error("Read", e) from None

    def read_counter(self, p4info: P4Info, name: str, index: int | None = None) -> list[Counter]:
        return [Counter.from_proto(p4info, e.counter_entry) for e in self.read(p4info, [Counter(name, index)])]

    def read_table(self, p4info: P4Info, name: str) -> list[TableEntry]:
        return [TableEntry.from_proto(p4info, e.table_entry) for e in self.read(p4info, [TableEntry(name)])]
