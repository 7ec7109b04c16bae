"""Host side of broadcast over completely independent spanning trees (the trees of
Dragonfly CISTs, Bian et al.; sending on them is ours: the paper has no data plane).

Commands (``dcnlab.traffic.agent`` dispatches ``cist.<verb>`` here; state in ``agent.ext["cist"]``):

* ``cist.recv_start {"port": 7701}`` — start a receiver that deduplicates by (source, sequence).
* ``cist.recv_peek`` / ``cist.recv_stop {"runs": false, "expect": [[src_ip, flow, count], ...]}`` — report,
  per source IP and flow: ``copies`` received, ``delivered`` (distinct sequence numbers handed to the
  application, each once), ``dups`` (copies of an already delivered sequence number), ``missing`` (of
  ``0..max_seq``, or of ``0..count-1`` for an ``expect`` entry, which is reported even if nothing arrived),
  ``per_tree`` copies, first-copy latency, and with ``runs`` the delivered sequence numbers as ``[lo, hi]`` runs.
* ``cist.count`` — ``{"copies": n}``, every copy received so far (to wait until nothing is in flight).
* ``cist.send {"iface", "frame": hex, "streams": [{"flow", "trees": [..], "mode": "copies"|"stripe"}],
  "count", "rate_pps", "seq", "offset_s"}`` — ``count`` broadcasts paced at ``rate_pps`` (0 = back to back),
  the first after ``offset_s`` seconds; for every sequence number every stream is sent on all of its trees.

**Wire format.** The frame (crafted once with scapy by :func:`broadcast_frame`, in the controller's process)
is Ether / IPv4 / UDP to port 7701 / tree shim / dcnlab header (:mod:`dcnlab.traffic.wire`) / body:

====== ===================================================================================
offset field
====== ===================================================================================
42     tree shim ``kind`` (2 = broadcast), ``tree``, ``group`` (0) — ``p4src/headers.p4`` tree_t
46     dcnlab header: magic, flow, seq, send timestamp (ns)
70     stripe header (``stripe`` mode): chunk index, k, chunk length; all zero in ``copies`` mode
74     chunk bytes (``stripe`` mode) or zero padding
====== ===================================================================================

The agent patches the tree byte, the dcnlab header and (striping) the chunk into the template, so it never
imports scapy. The switches rewrite the destination MAC and IP of the copy that leaves to a host, so the host
receives an ordinary UDP datagram on port 7701 and the source is the datagram's source IP.

**Modes.** ``copies``: one copy of every broadcast on every tree; the receiver delivers the
first and counts the rest as duplicates. ``stripe`` (the parity option): with k trees, broadcast s is
k-1 data chunks plus their XOR parity, chunk i on tree ``trees[(i + s) mod k]`` (the parity rotates, so every
tree carries the same share); the receiver delivers s as soon as any k-1 chunks are in, rebuilding a missing
data chunk from the parity, and checks the rebuilt data against the sender's (data chunks are
SHAKE-128(flow, seq, index), so the receiver knows what they must be; a mismatch is counted as ``corrupt``).
One tree lost costs nothing; the bandwidth per broadcast is k/(k-1) data sizes instead of k.
"""

from __future__ import annotations

import hashlib
import socket
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from dcnlab.traffic import wire
from dcnlab.traffic.sequences import seq_runs
from dcnlab.traffic.tree_streams import Latency, UdpReceiver, paced, send_frame

KIND_BROADCAST = 2
UDP_PORT_TREE = 7701
SHIM = struct.Struct("!BBH")
STRIPE = struct.Struct("!BBH")
SHIM_OFFSET = wire.ETH_IP_UDP                  # 42
TREE_OFFSET = SHIM_OFFSET + 1                  # 43
HEADER_OFFSET = SHIM_OFFSET + SHIM.size        # 46
STRIPE_OFFSET = HEADER_OFFSET + wire.HEADER.size  # 70
CHUNK_OFFSET = STRIPE_OFFSET + STRIPE.size     # 74
MIN_FRAME = CHUNK_OFFSET
MODES = ("copies", "stripe")
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"
BROADCAST_IP = "255.255.255.255"


# -- frames and requests (controller side) ----------------------------------------------------------------
def broadcast_frame(src_mac: str, src_ip: str, size: int = 128, sport: int = 40000) -> bytes:
    """The frame template: Ether / IPv4 / UDP(dport 7701, checksum 0) / shim(kind 2) / dcnlab header / zeros.

    Addressed to the broadcast MAC and IP; the last switch rewrites both for each host (``tree_host_port``).
    Built with scapy (imported here, never in the agent)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    if not MIN_FRAME <= size <= wire.MAX_FRAME:
        raise ValueError(f"broadcast frame size {size} out of range; valid: {MIN_FRAME}..{wire.MAX_FRAME} bytes")
    body = SHIM.pack(KIND_BROADCAST, 0, 0) + wire.pack(0, 0, 0) + b"\0" * (size - HEADER_OFFSET - wire.HEADER.size)
    frame = bytes(Ether(src=src_mac, dst=BROADCAST_MAC) / IP(src=src_ip, dst=BROADCAST_IP, ttl=64)
                  / UDP(sport=sport, dport=UDP_PORT_TREE, chksum=0) / body)
    assert len(frame) == size
    return frame


def send_request(iface: str, frame: bytes, streams: Iterable[tuple[int, Iterable[int]]], count: int,
                 rate_pps: float = 0.0, seq: int = 0, offset_s: float = 0.0, mode: str = "copies") -> dict:
    """A ``cist.send`` request: ``streams`` are (flow, tree ids) pairs, all sent for every sequence number."""
    return {"cmd": "cist.send", "iface": iface, "frame": frame.hex(), "count": count, "rate_pps": rate_pps,
            "seq": seq, "offset_s": offset_s,
            "streams": [{"flow": f, "trees": list(trees), "mode": mode} for f, trees in streams]}


# -- striping -----------------------------------------------------------------------------------------------
def chunk_data(flow: int, seq: int, index: int, length: int) -> bytes:
    """Data chunk ``index`` of broadcast (flow, seq): deterministic, so a receiver can check a rebuilt chunk."""
    return hashlib.shake_128(struct.pack("!IQB", flow, seq, index)).digest(length)


def xor(chunks: Iterable[bytes], length: int) -> bytes:
    acc = 0
    for c in chunks:
        acc ^= int.from_bytes(c, "big")
    return acc.to_bytes(length, "big")


def stripe_chunks(flow: int, seq: int, k: int, length: int) -> list[bytes]:
    """The k chunks of one broadcast: k-1 data chunks and their XOR parity (index k-1)."""
    data = [chunk_data(flow, seq, i, length) for i in range(k - 1)]
    return data + [xor(data, length)]


# -- receiver -----------------------------------------------------------------------------------------------
@dataclass
class StreamRecord:
    """What one receiver got from one (source, flow)."""

    copies: int = 0
    dups: int = 0
    delivered: set[int] = field(default_factory=set)
    per_tree: dict[int, int] = field(default_factory=dict)
    pending: dict[int, dict[int, bytes]] = field(default_factory=dict)
    """stripe mode: seq -> {chunk index: bytes} until k-1 chunks are in."""
    recovered: int = 0
    corrupt: int = 0
    latency: Latency = field(default_factory=Latency)

    def _deliver(self, seq: int, lat_ns: float) -> None:
        self.delivered.add(seq)
        self.latency.add(lat_ns)

    def add(self, tree: int, seq: int, lat_ns: float, flow: int, body: bytes) -> None:
        self.copies += 1
        self.per_tree[tree] = self.per_tree.get(tree, 0) + 1
        if seq in self.delivered:
            self.dups += 1
            return
        index, k, length = STRIPE.unpack_from(body) if len(body) >= STRIPE.size else (0, 0, 0)
        if k < 2:                           # copies mode: the first copy is delivered
            self._deliver(seq, lat_ns)
            return
        chunks = self.pending.setdefault(seq, {})
        chunks[index] = bytes(body[STRIPE.size:STRIPE.size + length])
        if len(chunks) < k - 1:
            return
        del self.pending[seq]
        data = [chunks.get(i) for i in range(k - 1)]
        if None in data:                    # one data chunk missing: rebuild it from the parity
            gap = data.index(None)
            data[gap] = xor((c for i, c in chunks.items() if i != gap), length)
            self.recovered += 1
        if any(d != chunk_data(flow, seq, i, length) for i, d in enumerate(data)):
            self.corrupt += 1
        else:
            self._deliver(seq, lat_ns)

    def summary(self, count: int | None = None, runs: bool = False) -> dict:
        n = len(self.delivered)
        top = max(self.delivered, default=-1)
        expected = count if count is not None else top + 1
        got = n if count is None else sum(1 for s in self.delivered if s < count)
        out = {"copies": self.copies, "delivered": n, "dups": self.dups, "missing": max(0, expected - got),
               "max_seq": top, "per_tree": {str(t): c for t, c in sorted(self.per_tree.items())},
               "recovered": self.recovered, "corrupt": self.corrupt, "incomplete": len(self.pending),
               "lat_us": self.latency.summary_us()}
        if runs:
            out["runs"] = seq_runs(self.delivered)
        return out


class BroadcastReceiver(UdpReceiver):
    """Receives broadcast copies on a UDP port in a thread; deduplicates by (source IP, flow, sequence)."""

    def __init__(self, port: int = UDP_PORT_TREE, bind: bool = True) -> None:
        self.streams: dict[tuple[str, int], StreamRecord] = {}
        self.other = 0
        """Datagrams on the port that are not broadcast copies (other kinds, foreign payloads)."""
        self._lock = threading.Lock()
        super().__init__(port, bind)

    def handle(self, data: bytes, src_ip: str, now_ns: int) -> None:
        """One datagram (the UDP payload: shim, dcnlab header, body)."""
        hdr = wire.unpack(data[SHIM.size:]) if len(data) >= SHIM.size else None
        if hdr is None or data[0] != KIND_BROADCAST:
            self.other += 1
            return
        flow, seq, ts = hdr
        with self._lock:
            rec = self.streams.setdefault((src_ip, flow), StreamRecord())
            rec.add(data[1], seq, now_ns - ts, flow, data[SHIM.size + wire.HEADER.size:])

    def copies(self) -> int:
        """Copies received so far, all sources and flows (cheap: for waiting until the fabric is quiet)."""
        with self._lock:
            return sum(r.copies for r in self.streams.values())

    def report(self, runs: bool = False, expect: Iterable[Iterable] = ()) -> dict:
        counts = {(str(s), int(f)): int(c) for s, f, c in expect}
        with self._lock:
            keys = set(self.streams) | set(counts)
            sources: dict[str, dict[str, dict]] = {}
            for src, flow in sorted(keys):
                rec = self.streams.get((src, flow), StreamRecord())
                sources.setdefault(src, {})[str(flow)] = rec.summary(counts.get((src, flow)), runs)
        return {"port": self.port, "other": self.other, "sources": sources}

    def stop(self, runs: bool = False, expect: Iterable[Iterable] = ()) -> dict:
        self.close()
        return self.report(runs, expect)


# -- sender -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stream:
    flow: int
    trees: tuple[int, ...]
    mode: str

    @classmethod
    def parse(cls, req: dict) -> Stream:
        trees = tuple(int(t) for t in req["trees"])
        mode = str(req.get("mode", "copies"))
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is invalid; valid: {', '.join(MODES)}")
        if not trees or any(not 0 <= t <= 255 for t in trees):
            raise ValueError(f"trees {list(trees)}: need at least one tree id in 0..255")
        if mode == "stripe" and len(trees) < 2:
            raise ValueError("stripe mode needs at least 2 trees (k-1 data chunks + 1 parity)")
        return cls(int(req["flow"]), trees, mode)


def send(sock: socket.socket, template: bytes, streams: list[Stream], count: int, rate_pps: float = 0.0,
         seq0: int = 0, offset_s: float = 0.0) -> dict:
    """Send ``count`` broadcasts of every stream (see the module docstring); returns what was sent."""
    frame = bytearray(template)
    if len(frame) < MIN_FRAME or frame[SHIM_OFFSET] != KIND_BROADCAST:
        raise ValueError(f"not a broadcast frame template (need >= {MIN_FRAME} bytes with shim kind 2)")
    length = len(frame) - CHUNK_OFFSET
    if any(s.mode == "stripe" for s in streams) and length < 1:
        raise ValueError(f"stripe mode needs a frame of more than {CHUNK_OFFSET} bytes")
    t0 = time.perf_counter() + max(offset_s, 0.0)
    frames = 0
    for i in paced(count, rate_pps, offset_s):
        seq = seq0 + i
        for s in streams:
            frame[HEADER_OFFSET:STRIPE_OFFSET] = wire.pack(s.flow, seq, time.time_ns())
            if s.mode == "copies":
                frame[STRIPE_OFFSET:CHUNK_OFFSET] = b"\0" * STRIPE.size
                for t in s.trees:
                    frame[TREE_OFFSET] = t
                    send_frame(sock, frame)
                    frames += 1
            else:
                k = len(s.trees)
                for index, chunk in enumerate(stripe_chunks(s.flow, seq, k, length)):
                    frame[TREE_OFFSET] = s.trees[(index + seq) % k]
                    frame[STRIPE_OFFSET:] = STRIPE.pack(index, k, length) + chunk
                    send_frame(sock, frame)
                    frames += 1
    return {"sent": count, "frames": frames, "bytes": frames * len(frame), "seconds": time.perf_counter() - t0}


# -- dispatch -----------------------------------------------------------------------------------------------
def handle(agent, verb: str, req: dict) -> dict:
    """Entry point for ``dcnlab.traffic.agent`` (``cist.<verb>``)."""
    receivers: dict[int, BroadcastReceiver] = agent.ext.setdefault("cist", {})
    port = int(req.get("port", UDP_PORT_TREE))
    if verb == "recv_start":
        if port in receivers:
            return {"error": f"cist: already receiving on port {port}"}
        receivers[port] = BroadcastReceiver(port)
        return {"ok": True}
    if verb == "count":
        rx = receivers.get(port)
        if rx is None:
            return {"error": f"cist: not receiving on port {port}"}
        return {"copies": rx.copies()}
    if verb in ("recv_stop", "recv_peek"):
        rx = receivers.pop(port, None) if verb == "recv_stop" else receivers.get(port)
        if rx is None:
            return {"error": f"cist: not receiving on port {port}"}
        runs, expect = bool(req.get("runs", False)), req.get("expect", ())
        return rx.stop(runs, expect) if verb == "recv_stop" else rx.report(runs, expect)
    if verb == "send":
        streams = [Stream.parse(s) for s in req["streams"]]
        return send(agent.raw_socket(req["iface"]), bytes.fromhex(req["frame"]), streams, int(req["count"]),
                    float(req.get("rate_pps", 0)), int(req.get("seq", 0)), float(req.get("offset_s", 0)))
    return {"error": f"cist: unknown verb {verb!r}; valid: recv_start, recv_peek, recv_stop, count, send"}
