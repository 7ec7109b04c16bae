"""Loopback TCP ports for switches whose P4Runtime server is a Unix socket (``--grpc-tcp``).

dcnlab's BMv2 switches serve P4Runtime on Unix sockets in the root-only run directory, inside the
run's network namespace. Some controllers cannot use a ``unix:`` target (the p4lang tutorials'
``p4runtime_lib`` builds ``host:port``). For them each switch gets a port on ``127.0.0.1`` of the
machine's own namespace, relayed byte for byte to its socket (gRPC's HTTP/2 passes through
unchanged). The relay binds the loopback address only, never a routable one, so other machines
cannot reach it; any *local* user can, which :func:`warning` says.
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

from dcnlab.topos.errors import UserError

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
TUTORIAL_BASE_PORT = 50051
"""The p4lang tutorials' first switch listens here, the next on 50052, …"""


def warning(count: int) -> str:
    return (f"--grpc-tcp: {count} switch(es) on {LOOPBACK} TCP ports; any local user can connect to them and "
            f"become a switch's primary controller (the default Unix sockets are root's only)")


@dataclass
class _Relay:
    port: int
    target: Path
    listener: socket.socket
    conns: list[socket.socket] = field(default_factory=list)


class LoopbackRelays:
    """Listen on ``127.0.0.1:port`` for each ``port -> socket path`` and relay to the Unix socket.

    One thread with a selector serves every relay and connection, so 80 switches cost one thread.
    Ports are bound up front: a port in use is a :class:`UserError` naming it, before any switch
    is reachable."""

    def __init__(self, targets: dict[int, Path]) -> None:
        self._sel = selectors.DefaultSelector()
        self._relays: list[_Relay] = []
        self._peer: dict[socket.socket, socket.socket] = {}
        self._stop = threading.Event()
        self._wake_r, self._wake_w = socket.socketpair()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            for port, path in sorted(targets.items()):
                ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    ls.bind((LOOPBACK, port))
                except OSError as e:
                    ls.close()
                    raise UserError(f"--grpc-tcp: cannot listen on {LOOPBACK}:{port} ({e.strerror}); "
                                    f"valid: a free port") from None
                ls.listen(16)
                ls.setblocking(False)
                relay = _Relay(port, path, ls)
                self._relays.append(relay)
                self._sel.register(ls, selectors.EVENT_READ, relay)
        except BaseException:
            self.close()
            raise
        self._thread = threading.Thread(target=self._loop, name="grpc-tcp-relay", daemon=True)
        self._thread.start()

    @property
    def addresses(self) -> dict[Path, str]:
        return {r.target: f"{LOOPBACK}:{r.port}" for r in self._relays}

    def _accept(self, relay: _Relay) -> None:
        try:
            client, _ = relay.listener.accept()
        except BlockingIOError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(str(relay.target))
        except OSError as e:
            log.warning("--grpc-tcp: %s:%d -> %s: %s", LOOPBACK, relay.port, relay.target, e)
            client.close()
            upstream.close()
            return
        for s in (client, upstream):
            s.setblocking(False)
            self._sel.register(s, selectors.EVENT_READ, "conn")
        self._peer[client], self._peer[upstream] = upstream, client

    def _drop(self, s: socket.socket) -> None:
        for x in (s, self._peer.pop(s, None)):
            if x is None:
                continue
            self._peer.pop(x, None)
            try:
                self._sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()

    def _forward(self, s: socket.socket) -> None:
        try:
            data = s.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        peer = self._peer.get(s)
        if not data or peer is None:
            self._drop(s)
            return
        try:
            peer.setblocking(True)      # control traffic: a short blocking send keeps the order simple
            peer.sendall(data)
            peer.setblocking(False)
        except OSError:
            self._drop(s)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=1.0):
                if key.data is None:
                    return
                if isinstance(key.data, _Relay):
                    self._accept(key.data)
                elif key.fileobj in self._peer:
                    self._forward(key.fileobj)  # type: ignore[arg-type]

    def close(self) -> None:
        self._stop.set()
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        t = getattr(self, "_thread", None)
        if t is not None:
            t.join(timeout=5)
        for s in list(self._peer):
            self._drop(s)
        for r in self._relays:
            r.listener.close()
        self._relays.clear()
        self._sel.close()
        self._wake_r.close()
        self._wake_w.close()
