"""Host agent: runs inside a host (Mininet host or network namespace); JSON lines on stdin/stdout.

Commands (one JSON object per line; one JSON reply per line):

* ``{"cmd": "recv_start", "port": P, "bin": 0.1}``: record UDP arrivals on port P.
* ``{"cmd": "recv_stop", "port": P}``: stop and reply with per-flow statistics: packets, bytes
  (frame bytes), duplicates, lost (the sequence gaps up to the highest seq seen), latency
  min/avg/max (µs), first/last arrival, and bytes per time bin.
* ``{"cmd": "send", "iface", "frame": hex, "flow", "count", "rate_pps", "seq"}``: send ``count``
  copies of the frame template (see :mod:`dcnlab.traffic.frames`) with rising sequence numbers and
  send timestamps patched in, paced at ``rate_pps`` (0 = as fast as possible). Instead of
  ``frame``, the fields ``src_mac dst_mac src_ip dst_ip sport dport size ecn`` make the agent
  build it. Replies with what was sent.
* ``{"cmd": "recv_peek", "port": P}``: the same statistics, without stopping.
* ``{"cmd": "quit"}``.
* ``{"cmd": "<mechanism>.<verb>", ...}``: handled by ``traffic/<mechanism>_agent.py``, whose
  ``handle(agent, verb, req) -> dict`` keeps its state in ``agent.ext[<mechanism>]`` (aggregation
  jobs, multicast receivers, congestion-controlled flows, broadcast deduplication). Each paper
  mechanism keeps its host side in its own module; this one only dispatches.

A bad command gets ``{"error": "..."}``. The agent keeps running.
"""

from __future__ import annotations

import importlib
import json
import socket
import sys
import threading
import time

from dcnlab.traffic import wire


class FlowRecord:
    """What a receiver saw of one flow (a plain class: dataclasses' import costs agents' start-up)."""

    __slots__ = ("packets", "bytes", "dups", "max_seq", "seen", "lat_min", "lat_max", "lat_sum", "first", "last",
                 "bins")

    def __init__(self) -> None:
        self.packets = self.bytes = self.dups = 0
        self.max_seq = -1
        self.seen: set[int] = set()
        self.lat_min, self.lat_max, self.lat_sum = float("inf"), 0.0, 0.0
        self.first = self.last = 0.0
        self.bins: dict[int, int] = {}

    def summary(self) -> dict:
        n = self.packets - self.dups
        return {"packets": self.packets, "unique": n, "bytes": self.bytes, "dups": self.dups,
                "lost": max(0, self.max_seq + 1 - n), "max_seq": self.max_seq,
                "lat_us": [round(self.lat_min / 1e3, 1) if self.packets else None,
                           round(self.lat_sum / max(self.packets, 1) / 1e3, 1),
                           round(self.lat_max / 1e3, 1)],
                "first": self.first, "last": self.last,
                "bins": sorted(self.bins.items())}


class Receiver:
    def __init__(self, port: int, bin_s: float) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.bind(("0.0.0.0", port))
        self.sock.settimeout(0.05)
        self.bin_s = bin_s
        self.flows: dict[int, FlowRecord] = {}
        self.start = time.time()
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(65535)
            except socket.timeout:
                continue
            now_ns = time.time_ns()
            hdr = wire.unpack(data)
            if hdr is None:
                continue
            flow, seq, ts = hdr
            r = self.flows.setdefault(flow, FlowRecord())
            size = len(data) + wire.ETH_IP_UDP
            r.packets += 1
            r.bytes += size
            if seq in r.seen:
                r.dups += 1
            else:
                r.seen.add(seq)
            r.max_seq = max(r.max_seq, seq)
            lat = now_ns - ts
            r.lat_min, r.lat_max, r.lat_sum = min(r.lat_min, lat), max(r.lat_max, lat), r.lat_sum + lat
            now = now_ns / 1e9
            if not r.first:
                r.first = now
            r.last = now
            b = int((now - self.start) / self.bin_s)
            r.bins[b] = r.bins.get(b, 0) + size

    def report(self) -> dict:
        flows = dict(self.flows)  # the receiving thread may add a flow meanwhile
        return {"start": self.start, "bin": self.bin_s,
                "flows": {str(f): r.summary() for f, r in sorted(flows.items())}}

    def stop(self) -> dict:
        self._stop.set()
        self.thread.join()
        self.sock.close()
        return self.report()


def _template(req: dict) -> bytearray:
    """The frame to send: shipped as hex by the controller, or crafted here (imports scapy)."""
    if "frame" in req:
        return bytearray.fromhex(req["frame"])
    from dcnlab.traffic.frames import udp_frame
    return bytearray(udp_frame(req["src_mac"], req["dst_mac"], req["src_ip"], req["dst_ip"],
                               int(req.get("sport", 40000)), int(req["dport"]), int(req.get("size", 100)),
                               int(req.get("ecn", 0))))


class Agent:
    def __init__(self) -> None:
        self.receivers: dict[int, Receiver] = {}
        self.sockets: dict[str, socket.socket] = {}
        self.ext: dict[str, object] = {}
        """Per-mechanism state, keyed by mechanism name."""

    def raw_socket(self, iface: str) -> socket.socket:
        """The agent's raw (AF_PACKET) socket on ``iface``, for mechanism modules."""
        return self._sock(iface)

    def _sock(self, iface: str) -> socket.socket:
        s = self.sockets.get(iface)
        if s is None:
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
            s.bind((iface, 0))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
            self.sockets[iface] = s
        return s

    def handle(self, req: dict) -> dict:
        cmd = req.get("cmd")
        if isinstance(cmd, str) and "." in cmd:
            mechanism, _, verb = cmd.partition(".")
            if not mechanism.isidentifier():
                return {"error": f"unknown command {cmd!r}"}
            try:
                module = importlib.import_module(f"dcnlab.traffic.{mechanism}_agent")
            except ModuleNotFoundError:
                return {"error": f"unknown mechanism {mechanism!r} in command {cmd!r}"}
            return module.handle(self, verb, req)
        if cmd == "recv_start":
            port = int(req["port"])
            if port in self.receivers:
                return {"error": f"already receiving on port {port}"}
            self.receivers[port] = Receiver(port, float(req.get("bin", 0.1)))
            return {"ok": True}
        if cmd == "recv_stop":
            r = self.receivers.pop(int(req["port"]), None)
            return r.stop() if r else {"error": f"not receiving on port {req['port']}"}
        if cmd == "recv_peek":
            r = self.receivers.get(int(req["port"]))
            return r.report() if r else {"error": f"not receiving on port {req['port']}"}
        if cmd == "send":
            return self.send(req)
        if cmd == "ping":
            return {"pong": True}
        return {"error": f"unknown command {cmd!r}"}

    def send(self, req: dict) -> dict:
        count, rate = int(req["count"]), float(req.get("rate_pps", 0))
        frame = _template(req)
        size = len(frame)
        sock = self._sock(req["iface"])
        flow = int(req.get("flow", 0))
        seq0 = int(req.get("seq", 0))
        off = wire.ETH_IP_UDP
        gap = 1.0 / rate if rate > 0 else 0.0
        t0 = time.perf_counter()
        sent = 0
        for i in range(count):
            if gap:
                target = t0 + i * gap
                delay = target - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            frame[off:off + wire.HEADER.size] = wire.pack(flow, seq0 + i, time.time_ns())
            try:
                sock.send(frame)
            except BlockingIOError:
                time.sleep(0.001)
                sock.send(frame)
            sent += 1
        return {"sent": sent, "bytes": sent * size, "seconds": time.perf_counter() - t0}


def main() -> int:
    agent = Agent()
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            reply = {"error": f"bad JSON: {e}"}
        else:
            if req.get("cmd") == "quit":
                break
            try:
                reply = agent.handle(req)
            except (KeyError, ValueError, OSError) as e:
                reply = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
