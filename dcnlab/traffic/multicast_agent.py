"""Host side of C-MR4LMS multicast (C-MR4LMS (Chen et al.), Definition 4: terminals pick the receive queues by
MGID; fault-tolerant trees: receivers drop the duplicate).

Commands (``dcnlab.traffic.agent`` dispatches ``multicast.<verb>`` here; state in ``agent.ext["multicast"]``):

* ``multicast.join {"mgid"}`` / ``multicast.leave {"mgid"}`` — the host's group memberships (what its
  application accepts); ``multicast.groups`` lists them.  Membership is independent of receiving.
* ``multicast.recv_start {"port": 7701}`` — start a receiver.
* ``multicast.recv_peek`` / ``multicast.recv_stop {"expect": [[mgid, src_ip, flow, count], ...], "seqs": false,
  "runs": false}`` — report, per group, source IP and flow: ``copies`` received, ``delivered`` (distinct
  sequence numbers handed to the application, each once), ``dups`` (further copies of a delivered one),
  ``missing`` (of ``0..count-1`` for an ``expect`` entry, which is reported even if nothing arrived, else of
  ``0..max_seq``), ``by_copies`` (how many
  sequence numbers arrived in 1, 2, ... copies), first-copy latency; with ``seqs`` the copies of every
  sequence number, with ``runs`` the delivered ones as ``[lo, hi]`` runs.  ``filtered`` counts, per group,
  source and flow, the copies of groups the host is not a member of: they are dropped *before* the
  application and never counted as delivered.  ``other`` counts datagrams on the port that are not multicast
  (another shim kind, a foreign payload).
* ``multicast.send {"iface", "frame": hex, "streams": [{"mgid", "color", "flow"}, ...], "count", "rate_pps",
  "seq", "offset_s"}`` — ``count`` messages per stream, paced at ``rate_pps`` (0 = back to back), the first
  after ``offset_s`` s; message ``seq0 + i`` of every stream is sent back to back.

**Wire format.**  The frame template (crafted once with scapy by :func:`multicast_frame`, in the
controller's process) is Ether / IPv4 / UDP to port 7701 (checksum 0) / tree shim / dcnlab header
(:mod:`dcnlab.traffic.wire`) / zero padding:

====== ============================================================================
offset field
====== ============================================================================
42     tree shim ``kind`` = 1 (multicast), ``tree`` = the group's color, ``group`` = MGID
       (``p4src/headers.p4`` ``tree_t``)
46     dcnlab header: magic, flow, seq, send timestamp (ns)
70     zeros up to the frame size
====== ============================================================================

The agent patches color, MGID and the dcnlab header per message, so it never imports scapy.  The template is
addressed to 239.255.0.1 (MAC 01:00:5e:7f:00:01); switches replicate by (ingress port, color) only, and the
last switch rewrites the destination MAC and IP of the copy it sends to a host (``tree_host_port``), so
the host's stack delivers an ordinary UDP datagram to port 7701 and the source IP names the sender.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from dcnlab.traffic import wire
from dcnlab.traffic.sequences import seq_runs
from dcnlab.traffic.tree_streams import Latency, UdpReceiver, paced, send_frame

KIND_MULTICAST = 1
UDP_PORT_TREE = 7701
SHIM = struct.Struct("!BBH")
SHIM_OFFSET = wire.ETH_IP_UDP                  # 42
HEADER_OFFSET = SHIM_OFFSET + SHIM.size        # 46
MIN_FRAME = HEADER_OFFSET + wire.HEADER.size   # 70
GROUP_MAC = "01:00:5e:7f:00:01"
GROUP_IP = "239.255.0.1"
MAX_COLOR = 255
MAX_MGID = 0xFFFF


# -- frames and requests (controller side) ----------------------------------------------------------------
def multicast_frame(src_mac: str, src_ip: str, size: int = 128, sport: int = 40000) -> bytes:
    """The frame template: Ether / IPv4 / UDP(dport 7701, checksum 0) / shim(kind 1) / dcnlab header / zeros.

    Built with scapy (imported here, never in the agent)."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    if not MIN_FRAME <= size <= wire.MAX_FRAME:
        raise ValueError(f"multicast frame size {size} out of range; valid: {MIN_FRAME}..{wire.MAX_FRAME} bytes")
    body = SHIM.pack(KIND_MULTICAST, 0, 0) + wire.pack(0, 0, 0) + b"\0" * (size - MIN_FRAME)
    frame = bytes(Ether(src=src_mac, dst=GROUP_MAC) / IP(src=src_ip, dst=GROUP_IP, ttl=64)
                  / UDP(sport=sport, dport=UDP_PORT_TREE, chksum=0) / body)
    assert len(frame) == size
    return frame


def send_request(iface: str, frame: bytes, streams: Iterable[tuple[int, int, int]], count: int,
                 rate_pps: float = 0.0, seq: int = 0, offset_s: float = 0.0) -> dict:
    """A ``multicast.send`` request; ``streams`` are (mgid, color, flow) triples."""
    return {"cmd": "multicast.send", "iface": iface, "frame": frame.hex(), "count": count, "rate_pps": rate_pps,
            "seq": seq, "offset_s": offset_s,
            "streams": [{"mgid": m, "color": c, "flow": f} for m, c, f in streams]}


# -- receiver -----------------------------------------------------------------------------------------------
@dataclass
class StreamRecord:
    """What one host's application got from one (group, source, flow)."""

    copies: int = 0
    seqs: dict[int, int] = field(default_factory=dict)
    """sequence number -> copies received; the first copy of each is delivered."""
    latency: Latency = field(default_factory=Latency)

    def add(self, seq: int, lat_ns: float) -> bool:
        """Count one copy; True if it is the first of ``seq`` (delivered to the application)."""
        self.copies += 1
        n = self.seqs.get(seq, 0)
        self.seqs[seq] = n + 1
        if n:
            return False
        self.latency.add(lat_ns)
        return True

    def summary(self, count: int | None = None, seqs: bool = False, runs: bool = False) -> dict:
        n = len(self.seqs)
        top = max(self.seqs, default=-1)
        expected = count if count is not None else top + 1
        got = n if count is None else sum(1 for s in self.seqs if s < count)
        hist: dict[str, int] = {}
        for c in self.seqs.values():
            hist[str(c)] = hist.get(str(c), 0) + 1
        out: dict = {"copies": self.copies, "delivered": n, "dups": self.copies - n, "missing": max(0, expected - got),
                     "max_seq": top, "by_copies": dict(sorted(hist.items(), key=lambda kv: int(kv[0]))),
                     "lat_us": self.latency.summary_us()}
        if seqs:
            out["seqs"] = [self.seqs.get(s, 0) for s in range(max(expected, top + 1))]
        if runs:
            out["runs"] = seq_runs(self.seqs)
        return out


class GroupReceiver(UdpReceiver):
    """Receives multicast copies on a UDP port in a thread; accepts by MGID, deduplicates by (MGID, source,
    flow, sequence)."""

    def __init__(self, joined: set[int], lock: threading.Lock, port: int = UDP_PORT_TREE,
                 bind: bool = True) -> None:
        """``joined`` is the host's membership set, shared with the join/leave commands (under ``lock``).
        ``bind=False`` makes a receiver without a socket, for :meth:`handle` in tests."""
        self.joined = joined
        self._lock = lock
        self.streams: dict[tuple[int, str, int], StreamRecord] = {}
        self.filtered: dict[tuple[int, str, int], int] = {}
        self.other = 0
        super().__init__(port, bind)

    def handle(self, data: bytes, src_ip: str, now_ns: int) -> bool:
        """One datagram (the UDP payload: shim, dcnlab header, padding); True if delivered to the application."""
        hdr = wire.unpack(data[SHIM.size:]) if len(data) >= SHIM.size else None
        if hdr is None or data[0] != KIND_MULTICAST:
            self.other += 1
            return False
        _, _, mgid = SHIM.unpack_from(data)
        flow, seq, ts = hdr
        key = (mgid, src_ip, flow)
        with self._lock:
            if mgid not in self.joined:     # not a member: dropped before the application
                self.filtered[key] = self.filtered.get(key, 0) + 1
                return False
            rec = self.streams.get(key)
            if rec is None:
                rec = self.streams[key] = StreamRecord()
            return rec.add(seq, now_ns - ts)

    def report(self, expect: Iterable[Iterable] = (), seqs: bool = False, runs: bool = False) -> dict:
        counts = {(int(m), str(s), int(f)): int(c) for m, s, f, c in expect}
        with self._lock:
            groups: dict[str, dict[str, dict[str, dict]]] = {}
            for mgid, src, flow in sorted(set(self.streams) | set(counts)):
                rec = self.streams.get((mgid, src, flow), StreamRecord())
                groups.setdefault(str(mgid), {}).setdefault(src, {})[str(flow)] = \
                    rec.summary(counts.get((mgid, src, flow)), seqs, runs)
            filtered: dict[str, dict[str, dict[str, int]]] = {}
            for (mgid, src, flow), n in sorted(self.filtered.items()):
                filtered.setdefault(str(mgid), {}).setdefault(src, {})[str(flow)] = n
            return {"port": self.port, "joined": sorted(self.joined), "groups": groups, "filtered": filtered,
                    "other": self.other}

    def stop(self, expect: Iterable[Iterable] = (), seqs: bool = False, runs: bool = False) -> dict:
        self.close()
        return self.report(expect, seqs, runs)


# -- sender -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Stream:
    mgid: int
    color: int
    flow: int

    @classmethod
    def parse(cls, req: dict) -> Stream:
        mgid, color, flow = int(req["mgid"]), int(req["color"]), int(req.get("flow", 0))
        if not 0 <= mgid <= MAX_MGID:
            raise ValueError(f"mgid {mgid} is out of range; valid: 0..{MAX_MGID}")
        if not 0 <= color <= MAX_COLOR:
            raise ValueError(f"color {color} is out of range; valid: 0..{MAX_COLOR}")
        if not 0 <= flow < 1 << 32:
            raise ValueError(f"flow {flow} is out of range; valid: 0..{(1 << 32) - 1}")
        return cls(mgid, color, flow)


def send(sock: socket.socket, template: bytes, streams: list[Stream], count: int, rate_pps: float = 0.0,
         seq0: int = 0, offset_s: float = 0.0) -> dict:
    """Send ``count`` messages of every stream (see the module docstring); returns what was sent."""
    frame = bytearray(template)
    if len(frame) < MIN_FRAME or frame[SHIM_OFFSET] != KIND_MULTICAST:
        raise ValueError(f"not a multicast frame template (need >= {MIN_FRAME} bytes with shim kind 1)")
    t0 = time.perf_counter() + max(offset_s, 0.0)
    start = time.time() + max(offset_s, 0.0)
    frames = 0
    for i in paced(count, rate_pps, offset_s):
        for s in streams:
            frame[SHIM_OFFSET:HEADER_OFFSET] = SHIM.pack(KIND_MULTICAST, s.color, s.mgid)
            frame[HEADER_OFFSET:MIN_FRAME] = wire.pack(s.flow, seq0 + i, time.time_ns())
            send_frame(sock, frame)
            frames += 1
    return {"sent": count, "frames": frames, "bytes": frames * len(frame), "start": start,
            "seconds": time.perf_counter() - t0}


# -- dispatch -----------------------------------------------------------------------------------------------
@dataclass
class HostState:
    joined: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    receivers: dict[int, GroupReceiver] = field(default_factory=dict)


VERBS = ("join", "leave", "groups", "recv_start", "recv_peek", "recv_stop", "send")


def handle(agent, verb: str, req: dict) -> dict:
    """Entry point for ``dcnlab.traffic.agent`` (``multicast.<verb>``)."""
    st = agent.ext.get("multicast")
    if st is None:
        st = agent.ext["multicast"] = HostState()
    assert isinstance(st, HostState)
    if verb in ("join", "leave"):
        mgid = int(req["mgid"])
        if not 0 <= mgid <= MAX_MGID:
            return {"error": f"multicast: mgid {mgid} is out of range; valid: 0..{MAX_MGID}"}
        with st.lock:
            if verb == "join":
                st.joined.add(mgid)
            else:
                st.joined.discard(mgid)
            return {"joined": sorted(st.joined)}
    if verb == "groups":
        with st.lock:
            return {"joined": sorted(st.joined)}
    port = int(req.get("port", UDP_PORT_TREE))
    if verb == "recv_start":
        if port in st.receivers:
            return {"error": f"multicast: already receiving on port {port}"}
        st.receivers[port] = GroupReceiver(st.joined, st.lock, port)
        return {"ok": True}
    if verb in ("recv_stop", "recv_peek"):
        rx = st.receivers.pop(port, None) if verb == "recv_stop" else st.receivers.get(port)
        if rx is None:
            return {"error": f"multicast: not receiving on port {port}"}
        args = (req.get("expect", ()), bool(req.get("seqs", False)), bool(req.get("runs", False)))
        return rx.stop(*args) if verb == "recv_stop" else rx.report(*args)
    if verb == "send":
        streams = [Stream.parse(s) for s in req["streams"]]
        return send(agent.raw_socket(req["iface"]), bytes.fromhex(req["frame"]), streams, int(req["count"]),
                    float(req.get("rate_pps", 0)), int(req.get("seq", 0)), float(req.get("offset_s", 0)))
    return {"error": f"multicast: unknown verb {verb!r}; valid: {', '.join(VERBS)}"}
