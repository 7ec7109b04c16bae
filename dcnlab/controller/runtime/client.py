"""One P4Runtime connection to one switch: stream, arbitration, pipeline, Write and Read.

The target is a gRPC address: ``unix:/path/to/socket`` (how dcnlab's emulator runs BMv2: the
socket sits in a root-only run directory) or ``host:port``. The bidirectional stream runs on
a background thread; arbitration replies go to a queue, and the thread's end marks the
connection dead (:attr:`SwitchClient.alive`), which the controller's watcher uses. Every
failed RPC raises :class:`SwitchError` or :class:`WriteError` with the switch name, the
entity and the gRPC status.

The primary role. After the handshake the stream thread keeps reading arbitration updates:
when another client arbitrates with a higher election id, the switch (PI, in BMv2) tells this
client it is now a backup (``status`` ALREADY_EXISTS, ``election_id`` the new primary's). The
client then logs one warning naming the switch and the new primary's election id,
:attr:`SwitchClient.primary` turns False, and every later Write or SetForwardingPipelineConfig
raises :class:`SwitchError` before anything is sent. If the other controller leaves, the switch
makes this client primary again (status OK) and writes go through again (logged). A client
that :meth:`SwitchClient.step_down` closed its session on purpose (to hand the switch over)
refuses writes for good; Reads still work on its channel.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc

from dcnlab.controller.runtime.entities import Counter, Entity, TableEntry, Update
from dcnlab.controller.runtime.errors import SwitchError, WriteError
from dcnlab.controller.runtime.grpc_log import GrpcRequestLogger
from dcnlab.controller.runtime.p4info import P4Info
from dcnlab.controller.runtime.proto import code_pb2, p4runtime_pb2, p4runtime_pb2_grpc, status_pb2

log = logging.getLogger(__name__)

DEFAULT_BATCH = 2000
_END = object()


def election_str(eid: tuple[int, int] | None) -> str:
    """An election id as one integer (high << 64 | low), how controllers are usually given it."""
    return "unknown" if eid is None else str((eid[0] << 64) | eid[1])


def p4_errors(e: grpc.RpcError) -> list[tuple[int, p4runtime_pb2.Error]] | None:
    """The failed updates (index, p4.v1.Error) in a Write error's status details; None if absent.

    BMv2 reports one detail per update of the batch, OK for those that did not fail."""
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


class SwitchClient:
    """A primary P4Runtime client for switch ``name`` (device ``device_id``) with ``election_id``."""

    def __init__(self, name: str, device_id: int, grpc_addr: str, election_id: tuple[int, int] = (0, 1),
                 log_file: Path | None = None, connect_timeout: float = 5.0) -> None:
        self.name = name
        self.device_id = device_id
        self.election_id = election_id
        self.grpc_addr = grpc_addr
        self.connect_timeout = connect_timeout
        channel = grpc.insecure_channel(grpc_addr, options=[("grpc.max_receive_message_length", 64 << 20),
                                                            ("grpc.max_send_message_length", 64 << 20)])
        try:
            grpc.channel_ready_future(channel).result(timeout=connect_timeout)
        except grpc.FutureTimeoutError:
            channel.close()
            raise SwitchError(name, f"connect to {grpc_addr}", "UNAVAILABLE",
                              f"not reachable within {connect_timeout:.1f} s") from None
        self._raw_channel = channel
        self.channel: grpc.Channel | None = channel
        if log_file is not None:
            self.channel = grpc.intercept_channel(channel, GrpcRequestLogger(log_file, name))
        self.stub = p4runtime_pb2_grpc.P4RuntimeStub(self.channel)
        self._out: queue.Queue = queue.Queue()
        self._arbitration: queue.Queue = queue.Queue()
        self._role_lock = threading.Lock()
        self._established = False        # handshake done: later arbitration updates are role changes
        self._primary = False
        self._handed_over = False
        self._primary_election: tuple[int, int] | None = None   # the primary's, as the switch last said
        self._stream_error: tuple[str, str] | None = None         # how the stream ended, if with an error
        self._stream = self.stub.StreamChannel(iter(self._out.get, _END))
        self._reader = threading.Thread(target=self._read_stream, name=f"p4rt-stream-{name}", daemon=True)
        self._reader.start()
        self.handshake()

    # -- session ----------------------------------------------------------------
    def _read_stream(self) -> None:
        try:
            for msg in self._stream:
                kind = msg.WhichOneof("update")
                if kind == "arbitration":
                    with self._role_lock:
                        if not self._established:
                            self._arbitration.put(msg)
                            continue
                        # logged under the lock: whoever sees the new role (properties below) sees its log line
                        self._log_role(self._apply_role(msg))
                elif kind == "error":
                    log.warning("%s: stream error: %s", self.name, msg.error)
                else:
                    log.debug("%s: stream message %s ignored", self.name, kind)
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.CANCELLED:
                self._stream_error = (e.code().name, e.details() or "")
                log.info("%s: P4Runtime stream ended: %s %s", self.name, e.code().name, e.details() or "")
        finally:
            self._arbitration.put(None)

    def _apply_role(self, msg: p4runtime_pb2.StreamMessageResponse) -> str | None:
        """Record an arbitration update (holding ``_role_lock``); return "lost", "regained" or None."""
        a = msg.arbitration
        self._primary_election = (a.election_id.high, a.election_id.low) if a.HasField("election_id") else None
        if self._handed_over:
            return None
        was, self._primary = self._primary, a.status.code == code_pb2.OK
        if was and not self._primary:
            return "lost"
        if self._primary and not was:
            return "regained"
        return None

    def _log_role(self, change: str | None) -> None:
        if change == "lost":
            log.warning("%s: another controller became primary (election id %s, above dcnlab's %s); "
                        "dcnlab stops writing to %s", self.name, election_str(self._primary_election),
                        election_str(self.election_id), self.name)
        elif change == "regained":
            log.info("%s: the other controller left; dcnlab is primary again and may write to %s "
                     "(whatever that controller wrote stays)", self.name, self.name)

    def handshake(self) -> None:
        req = p4runtime_pb2.StreamMessageRequest()
        req.arbitration.device_id = self.device_id
        req.arbitration.election_id.high, req.arbitration.election_id.low = self.election_id
        self._out.put(req)
        try:
            rep = self._arbitration.get(timeout=self.connect_timeout)
        except queue.Empty:
            rep = None
        if rep is None:
            self.close()
            code, details = self._stream_error or ("UNAVAILABLE", "no arbitration response")
            raise SwitchError(self.name, "arbitration", code, details)
        if rep.arbitration.status.code != code_pb2.OK:
            self.close()
            a = rep.arbitration
            primary = election_str((a.election_id.high, a.election_id.low)) if a.HasField("election_id") else "unknown"
            raise SwitchError(self.name, "arbitration", code_pb2.Code.Name(a.status.code),
                              f"another controller is primary for this device (election id {primary})")
        changes = []
        with self._role_lock:
            self._primary, self._established = True, True
            self._primary_election = self.election_id
            while True:   # updates that came after the reply, before the handshake finished
                try:
                    later = self._arbitration.get_nowait()
                except queue.Empty:
                    break
                if later is not None:
                    changes.append(self._apply_role(later))
            for change in changes:
                self._log_role(change)

    @property
    def alive(self) -> bool:
        return self.channel is not None and self._reader.is_alive()

    @property
    def primary(self) -> bool:
        """Whether this client is the switch's primary controller (as the switch last told it)."""
        with self._role_lock:
            return self._primary

    @property
    def lost_primary(self) -> bool:
        """Another controller took the primary role (not handed over by :meth:`step_down`)."""
        with self._role_lock:
            return self._established and not self._primary and not self._handed_over

    @property
    def handed_over(self) -> bool:
        return self._handed_over

    @property
    def primary_election_id(self) -> tuple[int, int] | None:
        """The current primary's election id as the switch last reported it (None if unknown)."""
        return self._primary_election

    def step_down(self) -> None:
        """Close the P4Runtime session (the stream) on purpose, so that another controller can become
        primary with any election id; keep the channel for Reads. Writes raise from now on."""
        with self._role_lock:
            self._handed_over, self._primary = True, False
        if self.channel is None:
            return
        self._out.put(_END)
        self._stream.cancel()
        self._reader.join(timeout=2)

    def _check_primary(self, what: str) -> None:
        """Raise, without sending anything, if this client may not write."""
        if self._handed_over:
            raise SwitchError(self.name, what, "FAILED_PRECONDITION",
                              f"{self.name} was handed over to another controller (dcnlab stepped down); "
                              "nothing was written")
        if not self._primary:
            raise SwitchError(self.name, what, "PERMISSION_DENIED",
                              f"dcnlab lost the primary role on {self.name} to another controller "
                              f"(election id {election_str(self._primary_election)}); nothing was written")

    def close(self) -> None:
        if self.channel is None:
            return
        self._out.put(_END)
        self._stream.cancel()
        self._raw_channel.close()
        self._reader.join(timeout=2)
        self.channel = None

    # -- RPCs -------------------------------------------------------------------
    def _rpc_error(self, what: str, e: grpc.RpcError) -> SwitchError:
        return SwitchError(self.name, what, e.code().name, e.details() or "")

    def set_pipeline(self, p4info: P4Info, device_config: bytes) -> None:
        self._check_primary("SetForwardingPipelineConfig")
        req = p4runtime_pb2.SetForwardingPipelineConfigRequest(device_id=self.device_id)
        req.election_id.high, req.election_id.low = self.election_id
        req.action = p4runtime_pb2.SetForwardingPipelineConfigRequest.VERIFY_AND_COMMIT
        req.config.p4info.CopyFrom(p4info.msg)
        req.config.p4_device_config = device_config
        try:
            self.stub.SetForwardingPipelineConfig(req)
        except grpc.RpcError as e:
            raise self._rpc_error("SetForwardingPipelineConfig", e) from None

    def _request(self, p4info: P4Info, chunk: Sequence[Update]) -> p4runtime_pb2.WriteRequest:
        req = p4runtime_pb2.WriteRequest(device_id=self.device_id)
        req.election_id.high, req.election_id.low = self.election_id
        add = req.updates.add
        for u in chunk:
            u.fill(p4info, add())
        return req

    def write(self, p4info: P4Info, updates: Sequence[Update], batch: int = DEFAULT_BATCH) -> None:
        """Write ``updates`` in batches of ``batch`` per WriteRequest, in order.

        With several batches, the next request is encoded on a helper thread while the switch
        applies the current one (the RPC wait releases the GIL), so encoding and the switch's
        work overlap; requests are still sent one at a time, in order."""
        self._check_primary(f"Write of {len(updates)} update(s)")
        chunks = [updates[i:i + batch] for i in range(0, len(updates), batch)]
        if len(chunks) <= 1:
            for chunk in chunks:
                self._send(self._request(p4info, chunk), chunk)
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"p4rt-encode-{self.name}") as pool:
            pending = pool.submit(self._request, p4info, chunks[0])
            for i, chunk in enumerate(chunks):
                req = pending.result()
                if i + 1 < len(chunks):
                    pending = pool.submit(self._request, p4info, chunks[i + 1])
                self._send(req, chunk)

    def _send(self, req: p4runtime_pb2.WriteRequest, chunk: Sequence[Update]) -> None:
        if self._handed_over or not self._primary:   # lost between two batches
            self._check_primary(f"Write of {len(chunk)} update(s) starting with {chunk[0]}")
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
