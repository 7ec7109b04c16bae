"""What the tree-traffic agents share (multicast groups, CIST broadcasts): a UDP receiver thread,
one-way latency per stream, and paced sending of raw frames.

The receivers of :mod:`dcnlab.traffic.multicast_agent` and :mod:`dcnlab.traffic.cist_agent` differ only in what
they do with one datagram (:meth:`UdpReceiver.handle`) and how they report; their senders differ only
in how they fill a frame between two paced sends.
"""

from __future__ import annotations

import math
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Latency:
    """One-way latency of the delivered messages of one stream (sender's timestamp to arrival), in ns."""

    lo: float = math.inf
    hi: float = 0.0
    total: float = 0.0
    count: int = 0

    def add(self, ns: float) -> None:
        self.lo, self.hi, self.total, self.count = min(self.lo, ns), max(self.hi, ns), self.total + ns, self.count + 1

    def summary_us(self) -> list[float] | None:
        """[min, mean, max] in µs, one decimal; None before the first message."""
        if not self.count:
            return None
        return [round(self.lo / 1e3, 1), round(self.total / self.count / 1e3, 1), round(self.hi / 1e3, 1)]


class UdpReceiver:
    """A UDP socket on ``port`` (all addresses) read by a daemon thread, which hands every datagram to
    :meth:`handle` with its source address and arrival time. ``bind=False``: no socket and no thread,
    for calling :meth:`handle` directly in tests."""

    RCVBUF = 8 << 20

    def __init__(self, port: int, bind: bool = True) -> None:
        self.port = port
        self._stop = threading.Event()
        self.sock: socket.socket | None = None
        self.thread: threading.Thread | None = None
        if bind:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.RCVBUF)
            self.sock.bind(("0.0.0.0", port))
            self.sock.settimeout(0.05)
            self.thread = threading.Thread(target=self._loop, daemon=True)
            self.thread.start()

    def handle(self, data: bytes, src_ip: str, now_ns: int) -> object:
        raise NotImplementedError

    def _loop(self) -> None:
        assert self.sock is not None
        while not self._stop.is_set():
            try:
                data, (src, _) = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            self.handle(data, src, time.time_ns())

    def close(self) -> None:
        """Stop the thread and close the socket (the records stay readable)."""
        self._stop.set()
        if self.thread is not None:
            self.thread.join()
        if self.sock is not None:
            self.sock.close()


def paced(count: int, rate_pps: float = 0.0, offset_s: float = 0.0) -> Iterator[int]:
    """Yield 0 .. count-1, the i-th no earlier than ``offset_s + i / rate_pps`` after the call
    (as fast as possible when ``rate_pps`` is 0)."""
    gap = 1.0 / rate_pps if rate_pps > 0 else 0.0
    if offset_s > 0:
        time.sleep(offset_s)
    t0 = time.perf_counter()
    for i in range(count):
        if gap:
            delay = t0 + i * gap - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        yield i


def send_frame(sock: socket.socket, frame: bytearray) -> None:
    """Send one raw frame; when the socket's buffer is full, wait a millisecond and send it once more."""
    try:
        sock.send(frame)
    except BlockingIOError:
        time.sleep(0.001)
        sock.send(frame)
