"""Host side of in-network aggregation: a word-count-like job over aggregation trees (the
papers' Hadoop word count, Fang et al. §5.1 and Guo et al. §5.1).

Each sender holds counts over a key space (one partition per receiver, 003 Def. 1: a shuffle is n incasts
with the same senders); a partition is cut into chunks of :data:`VALUES` unsigned 32-bit counts, one
packet each (``p4src/aggregation.p4`` has the wire format). The receiver must end with the exact
(saturating) sum over all senders. Commands (``dcnlab.traffic.agent`` dispatches ``aggregation.<verb>`` here;
state in ``agent.ext["aggregation"]``):

* ``aggregation.send {"job", "tree", "contributor", "values": [...], "window", "rate_pps", "iface",
  "frame": hex, "start_at", "rto"}`` — send the partition's chunks from ``start_at`` (epoch seconds),
  paced at ``rate_pps``, at most ``window`` chunks beyond the receiver's cumulative acknowledgement.
* ``aggregation.recv {"job", "tree", "length", "host_inputs", "window", "rto", "senders": [ip, ...],
  "start_at"}`` — expect ``length`` values: final aggregates from the network (``host_inputs`` 0) or
  ``host_inputs`` raw streams that this host merges itself (the no-aggregation baseline; then
  ``senders[i]`` is the address of contributor i).
* ``aggregation.wait {"job", "timeout"}`` — block until every receiver of the job here is complete.
* ``aggregation.stop {"job"}`` — stop the job here; report per tree (receivers: the result, the chunks
  that saturated, completion time, duplicates, requests sent; senders: chunks sent and retransmitted).
* ``aggregation.blast {"iface", "frames": [hex], "seconds" | "count", "rate_pps", "chunk"}`` — the benchmark's
  load: the frames in turn, back to back or paced, the chunk number rising by one per round of frames.
* ``aggregation.raw {"iface", "frames": [hex]}`` — send the frames once each, as they are (tests of
  malformed, truncated and duplicate chunks).

**Loss and retransmission.** The receiver acknowledges cumulatively (``cum``: every chunk below it is
complete) to every sender of the tree on UDP :data:`CTRL_PORT`, each time ``cum`` has advanced by half a
window and when the tree is complete. When nothing has completed for ``rto`` seconds it sends the same
message with the missing chunks of the window listed (and doubles the wait before the next request, up to
8 x ``rto``, until a chunk completes again: a slow fabric is not a lossy one), and *every* sender resends
them: the receiver cannot
know whose contribution was lost, and the switches' bitmaps drop the contributions they already added
(a slot that had completed and was freed aggregates the resent chunk afresh). A host that merges the
streams itself (no aggregation) knows whose chunks are missing and asks only those senders. A sender never runs more
than ``window`` chunks ahead of ``cum``, and the controller makes ``window`` at most the slots a tree has
at each node, so a slot is never needed by two live chunks. Duplicate results (a chunk completed twice
after a retransmission) are counted and ignored.

**Frames** are crafted once with scapy in the experiment's process (:func:`chunk_frame`) and shipped as
hex; the agent patches the 12-byte header and the values into them, so it never imports scapy.
"""

from __future__ import annotations

import math
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

AGG_PORT = 7702
"""UDP port of chunks (``UDP_PORT_AGG``)."""
CTRL_PORT = 7703
"""UDP port of acknowledgements and retransmission requests (receiver -> senders, unicast routing)."""
VALUES = 16
MAX_VALUE = 0xFFFFFFFF
HEADER = struct.Struct("!HHIBBBB")
"""job, tree, chunk, contributor, count, flags (result 0x80, overflow 0x40, retx 0x20), pad."""
VECTOR = struct.Struct(f"!{VALUES}I")
HEADER_OFFSET = 14 + 20 + 8
VALUES_OFFSET = HEADER_OFFSET + HEADER.size
FRAME_SIZE = VALUES_OFFSET + VECTOR.size
"""118 bytes: Ethernet, IPv4, UDP, header, 16 values."""
RESULT, OVERFLOW, RETX = 0x80, 0x40, 0x20
CTRL = struct.Struct("!4sHHIH")
CTRL_MAGIC = b"AGGA"
MAX_MISSING = 256
MAX_BACKOFF = 8


def chunks_for(length: int) -> int:
    return max(1, math.ceil(length / VALUES))


def sat_add(a: int, b: int) -> tuple[int, bool]:
    s = a + b
    return (MAX_VALUE, True) if s > MAX_VALUE else (s, False)


# -- controller side ------------------------------------------------------------------------------------------
def chunk_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int = 40000) -> bytes:
    """Template: Ether / IPv4 / UDP(dport 7702, checksum 0) / 76 zero bytes (header and values).

    Built with scapy (imported here, never in the agent)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    frame = bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=src_ip, dst=dst_ip, ttl=64)
                  / UDP(sport=sport, dport=AGG_PORT, chksum=0) / (b"\0" * (HEADER.size + VECTOR.size)))
    assert len(frame) == FRAME_SIZE
    return frame


def pack_chunk(job: int, tree: int, chunk: int, contributor: int, values: Sequence[int], flags: int = 0) -> bytes:
    """Header and values of one chunk (what goes after UDP)."""
    vec = list(values) + [0] * (VALUES - len(values))
    return HEADER.pack(job, tree, chunk, contributor, len(values), flags, 0) + VECTOR.pack(*vec)


@dataclass(frozen=True)
class Chunk:
    job: int
    tree: int
    chunk: int
    contributor: int
    count: int
    flags: int
    values: tuple[int, ...]


def unpack_chunk(payload: bytes) -> Chunk | None:
    """A UDP payload as a chunk, or None if it is not one (short, or count > VALUES)."""
    if len(payload) < HEADER.size + VECTOR.size:
        return None
    job, tree, chunk, contributor, count, flags, _ = HEADER.unpack_from(payload)
    if count > VALUES:
        return None
    return Chunk(job, tree, chunk, contributor, count, flags, VECTOR.unpack_from(payload, HEADER.size)[:count])


def pack_ctrl(job: int, tree: int, cum: int, missing: Sequence[int] = ()) -> bytes:
    missing = list(missing)[:MAX_MISSING]
    return CTRL.pack(CTRL_MAGIC, job, tree, cum, len(missing)) + struct.pack(f"!{len(missing)}I", *missing)


def unpack_ctrl(data: bytes) -> tuple[int, int, int, list[int]] | None:
    if len(data) < CTRL.size:
        return None
    magic, job, tree, cum, n = CTRL.unpack_from(data)
    if magic != CTRL_MAGIC or len(data) < CTRL.size + 4 * n:
        return None
    return job, tree, cum, list(struct.unpack_from(f"!{n}I", data, CTRL.size))


# -- sender ---------------------------------------------------------------------------------------------------
class TreeSender:
    """Sends one partition as chunks, paced, windowed, resending what the receiver asks for."""

    def __init__(self, job: int, tree: int, contributor: int, values: Sequence[int], window: int, rate_pps: float,
                 template: bytes, send: Callable[[bytes], Any], start_at: float = 0.0) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        if any(not 0 <= v <= MAX_VALUE for v in values):
            raise ValueError("values must be unsigned 32-bit integers")
        self.job, self.tree, self.contributor = job, tree, contributor
        self.values = list(values)
        self.chunks = chunks_for(len(self.values))
        self.window = window
        self.gap = 1.0 / rate_pps if rate_pps > 0 else 0.0
        self.frame = bytearray(template)
        self._send = send
        self.start_at = start_at
        self.acked = 0
        self.next_new = 0
        self.retx: deque[int] = deque()
        self.sent = 0
        self.retransmitted = 0
        self.acks = 0
        self.first_sent = 0.0
        self.last_sent = 0.0
        self._cond = threading.Condition()
        self._stop = False

    def chunk_values(self, c: int) -> list[int]:
        return self.values[c * VALUES:(c + 1) * VALUES]

    def on_ack(self, cum: int, missing: Sequence[int]) -> None:
        with self._cond:
            self.acks += 1
            self.acked = max(self.acked, min(cum, self.chunks))
            for c in missing:
                if self.acked <= c < self.next_new and c not in self.retx:
                    self.retx.append(c)
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify_all()

    @property
    def complete(self) -> bool:
        return self.acked >= self.chunks

    def poll(self) -> tuple[int, bool] | None:
        """The next chunk to send now (number, is a retransmission), or None (window closed, or done)."""
        with self._cond:
            if self.complete:
                return None
            while self.retx:
                c = self.retx.popleft()
                if c >= self.acked:
                    return c, True
            if self.next_new < min(self.chunks, self.acked + self.window):
                self.next_new += 1
                return self.next_new - 1, False
            return None

    def _next(self) -> tuple[int, bool] | None:
        with self._cond:
            while not self._stop:
                item = self.poll()
                if item is not None:
                    return item
                if self.complete:
                    return None
                self._cond.wait(0.05)
            return None

    def send_chunk(self, c: int, retx: bool) -> None:
        vals = self.chunk_values(c)
        self.frame[HEADER_OFFSET:FRAME_SIZE] = pack_chunk(self.job, self.tree, c, self.contributor, vals,
                                                          RETX if retx else 0)
        self._send(bytes(self.frame))
        now = time.time()
        if not self.sent:
            self.first_sent = now
        self.last_sent = now
        self.sent += 1
        self.retransmitted += retx

    def run(self) -> None:
        delay = self.start_at - time.time()
        if delay > 0:
            time.sleep(delay)
        due = time.perf_counter()
        while True:
            item = self._next()
            if item is None:
                return
            now = time.perf_counter()
            due = max(due, now)
            if due > now:
                time.sleep(due - now)
            self.send_chunk(*item)
            due += self.gap

    def stats(self) -> dict[str, Any]:
        return {"role": "sender", "job": self.job, "tree": self.tree, "chunks": self.chunks, "sent": self.sent,
                "retransmitted": self.retransmitted, "acks": self.acks, "acked": self.acked,
                "first_sent": self.first_sent, "last_sent": self.last_sent}


# -- receiver -------------------------------------------------------------------------------------------------
@dataclass
class _Partial:
    """A chunk that this host merges itself (no-aggregation baseline)."""

    seen: int = 0
    sums: list[int] = field(default_factory=lambda: [0] * VALUES)
    overflow: bool = False


class TreeReceiver:
    """Collects one tree's chunks; acknowledges, and asks for what is missing."""

    def __init__(self, job: int, tree: int, length: int, host_inputs: int, window: int, rto: float,
                 senders: Sequence[str], send_ctrl: Callable[[str, bytes], Any], start_at: float = 0.0) -> None:
        if host_inputs < 0 or host_inputs > 256:
            raise ValueError(f"host_inputs must be 0..256, got {host_inputs}")
        self.job, self.tree = job, tree
        self.length = length
        self.chunks = chunks_for(length)
        self.host_inputs = host_inputs
        self.window = max(1, window)
        self.rto = rto
        self.senders = list(senders)
        self._send_ctrl = send_ctrl
        self.start_at = start_at
        self.result: list[int | None] = [None] * length
        self.done = [False] * self.chunks
        self.overflow: set[int] = set()
        self.partial: dict[int, _Partial] = {}
        self.cum = 0
        self.completed = 0
        self.last_acked = 0
        self.last_progress = start_at
        self.done_at = 0.0
        self.first_at = 0.0
        self.packets = 0
        self.duplicates = 0
        self.stray = 0
        self.requests = 0
        self.acks = 0
        self.backoff = 1
        self.lock = threading.Lock()
        self.finished = threading.Event()

    @property
    def complete(self) -> bool:
        return self.cum >= self.chunks

    def _count(self, c: int) -> int:
        return min(VALUES, self.length - c * VALUES)

    def _broadcast(self, missing: Sequence[int] = ()) -> None:
        msg = pack_ctrl(self.job, self.tree, self.cum, missing)
        for ip in self.senders:
            self._send_ctrl(ip, msg)

    def _finish_chunk(self, c: int, values: Sequence[int], overflow: bool, now: float) -> None:
        n = self._count(c)
        self.result[c * VALUES:c * VALUES + n] = list(values[:n])
        if overflow:
            self.overflow.add(c)
        self.done[c] = True
        self.completed += 1
        self.last_progress = now
        self.backoff = 1
        while self.cum < self.chunks and self.done[self.cum]:
            self.cum += 1
        if self.complete:
            self.done_at = now
            self.acks += 1
            self._broadcast()
            self.finished.set()
        elif self.cum - self.last_acked >= max(1, self.window // 2):
            self.last_acked = self.cum
            self.acks += 1
            self._broadcast()

    def on_chunk(self, ch: Chunk, now: float) -> None:
        with self.lock:
            self.packets += 1
            if not self.first_at:
                self.first_at = now
            c = ch.chunk
            if c >= self.chunks or ch.count != self._count(c):
                self.stray += 1
                return
            final = bool(ch.flags & RESULT)
            if final != (self.host_inputs == 0):
                self.stray += 1
                return
            if self.done[c]:
                self.duplicates += 1
                return
            if final:
                self._finish_chunk(c, ch.values, bool(ch.flags & OVERFLOW), now)
                return
            if ch.contributor >= self.host_inputs:
                self.stray += 1
                return
            p = self.partial.setdefault(c, _Partial())
            bit = 1 << ch.contributor
            if p.seen & bit:
                self.duplicates += 1
                return
            p.seen |= bit
            p.overflow |= bool(ch.flags & OVERFLOW)
            for i, v in enumerate(ch.values):
                p.sums[i], o = sat_add(p.sums[i], v)
                p.overflow |= o
            if p.seen == (1 << self.host_inputs) - 1:
                del self.partial[c]
                self._finish_chunk(c, p.sums, p.overflow or MAX_VALUE in p.sums[:ch.count], now)

    def tick(self, now: float) -> None:
        with self.lock:
            if self.complete or now - self.last_progress < self.rto * self.backoff:
                return
            missing = [c for c in range(self.cum, min(self.chunks, self.cum + self.window)) if not self.done[c]]
            self.requests += 1
            self.last_progress = now
            self.backoff = min(2 * self.backoff, MAX_BACKOFF)
            if not self.host_inputs:
                self._broadcast(missing)
                return
            # merging here, this host knows whose chunk is missing: ask only them
            for cid, ip in enumerate(self.senders[:self.host_inputs]):
                mine = [c for c in missing if not (c in self.partial and self.partial[c].seen >> cid & 1)]
                self._send_ctrl(ip, pack_ctrl(self.job, self.tree, self.cum, mine))

    def stats(self, with_result: bool = True) -> dict[str, Any]:
        with self.lock:
            out: dict[str, Any] = {
                "role": "receiver", "job": self.job, "tree": self.tree, "chunks": self.chunks,
                "complete": self.complete, "completed": self.completed, "start_at": self.start_at,
                "first_at": self.first_at, "done_at": self.done_at, "packets": self.packets,
                "duplicates": self.duplicates, "stray": self.stray, "requests": self.requests, "acks": self.acks,
                "overflow_chunks": sorted(self.overflow)}
            if with_result:
                out["result"] = list(self.result)
            return out


# -- the agent's state and commands ---------------------------------------------------------------------------
class _State:
    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.senders: dict[tuple[int, int], TreeSender] = {}
        self.receivers: dict[tuple[int, int], TreeReceiver] = {}
        self.threads: list[threading.Thread] = []
        self.data = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.data.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.data.bind(("0.0.0.0", AGG_PORT))
        self.data.settimeout(0.01)
        self.ctrl = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.ctrl.bind(("0.0.0.0", CTRL_PORT))
        self.ctrl.settimeout(0.05)
        self._lock = threading.Lock()
        for target in (self._data_loop, self._ctrl_loop):
            t = threading.Thread(target=target, daemon=True)
            t.start()

    def _data_loop(self) -> None:
        while True:
            try:
                payload = self.data.recv(2048)
            except TimeoutError:
                payload = b""
            except OSError:
                return
            now = time.time()
            if payload:
                ch = unpack_chunk(payload)
                r = self.receivers.get((ch.job, ch.tree)) if ch else None
                if r is not None and ch is not None:
                    r.on_chunk(ch, now)
            for r in list(self.receivers.values()):
                r.tick(now)

    def _ctrl_loop(self) -> None:
        while True:
            try:
                data = self.ctrl.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            msg = unpack_ctrl(data)
            if msg is None:
                continue
            job, tree, cum, missing = msg
            s = self.senders.get((job, tree))
            if s is not None:
                s.on_ack(cum, missing)

    def send_ctrl(self, ip: str, msg: bytes) -> None:
        with self._lock:
            self.ctrl.sendto(msg, (ip, CTRL_PORT))


def _state(agent: Any) -> _State:
    st = agent.ext.get("aggregation")
    if st is None:
        st = agent.ext["aggregation"] = _State(agent)
    return st


def _start(st: _State, target: Callable[[], None]) -> None:
    t = threading.Thread(target=target, daemon=True)
    t.start()
    st.threads.append(t)


def handle(agent: Any, verb: str, req: dict) -> dict:
    st = _state(agent)
    if verb == "send":
        key = (int(req["job"]), int(req["tree"]))
        if key in st.senders:
            return {"error": f"already sending job {key[0]} tree {key[1]}"}
        sock = agent.raw_socket(req["iface"])
        s = TreeSender(key[0], key[1], int(req["contributor"]), [int(v) for v in req["values"]],
                       int(req.get("window", 64)), float(req.get("rate_pps", 0)), bytes.fromhex(req["frame"]),
                       sock.send, float(req.get("start_at", 0.0)))
        st.senders[key] = s
        _start(st, s.run)
        return {"ok": True, "chunks": s.chunks}
    if verb == "recv":
        key = (int(req["job"]), int(req["tree"]))
        if key in st.receivers:
            return {"error": f"already receiving job {key[0]} tree {key[1]}"}
        st.receivers[key] = TreeReceiver(key[0], key[1], int(req["length"]), int(req.get("host_inputs", 0)),
                                         int(req.get("window", 64)), float(req.get("rto", 0.5)),
                                         [str(ip) for ip in req.get("senders", [])], st.send_ctrl,
                                         float(req.get("start_at", time.time())))
        return {"ok": True, "chunks": st.receivers[key].chunks}
    if verb == "wait":
        job = int(req["job"])
        deadline = time.monotonic() + float(req.get("timeout", 30))
        for key, r in list(st.receivers.items()):
            if key[0] == job:
                r.finished.wait(max(0.0, deadline - time.monotonic()))
        mine = [r for key, r in st.receivers.items() if key[0] == job]
        return {"complete": all(r.complete for r in mine), "trees": len(mine)}
    if verb == "stop":
        job = int(req["job"])
        reports = []
        for key in [k for k in st.senders if k[0] == job]:
            s = st.senders.pop(key)
            s.stop()
            reports.append(s.stats())
        for key in [k for k in st.receivers if k[0] == job]:
            reports.append(st.receivers.pop(key).stats(bool(req.get("result", True))))
        return {"reports": reports}
    if verb == "raw":
        sock = agent.raw_socket(req["iface"])
        for f in req["frames"]:
            sock.send(bytes.fromhex(f))
        return {"sent": len(req["frames"])}
    if verb == "blast":
        return _blast(agent.raw_socket(req["iface"]), [bytearray.fromhex(f) for f in req["frames"]],
                      float(req.get("seconds", 1.0)), int(req.get("chunk", 1)), int(req.get("count", 0)),
                      float(req.get("rate_pps", 0.0)))
    return {"error": f"unknown command aggregation.{verb}"}


def _blast(sock: socket.socket, frames: list[bytearray], seconds: float, chunk: int, count: int = 0,
           rate_pps: float = 0.0) -> dict:
    """Send ``frames`` in turn for ``seconds`` (or ``count`` frames), back to back or paced at ``rate_pps``;
    the chunk number rises by one per round of frames."""
    off = HEADER_OFFSET + 4
    gap = 1.0 / rate_pps if rate_pps > 0 else 0.0
    sent = 0
    t0 = time.perf_counter()
    end = t0 + seconds
    while (sent < count) if count else (time.perf_counter() < end):
        word = struct.pack("!I", chunk & 0xFFFFFFFF)
        for f in frames:
            if gap:
                delay = t0 + sent * gap - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            f[off:off + 4] = word
            try:
                sock.send(f)
            except BlockingIOError:
                time.sleep(0.0005)
                continue
            sent += 1
        chunk += 1
    return {"sent": sent, "seconds": time.perf_counter() - t0, "rounds_end": chunk}
