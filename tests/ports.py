"""Ports for tests that serve on 127.0.0.1: free ones, never a fixed number another run on the machine may hold
(a second test suite running at the same time took 50051 and failed the lab's --grpc-tcp test)."""

from __future__ import annotations

import socket


def free_block(n: int, first: int = 50051) -> int:
    """The first port of ``n`` consecutive ones on 127.0.0.1 that nothing holds, from ``first`` up."""
    for base in range(first, 65536 - n, n):
        socks: list[socket.socket] = []
        try:
            for port in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {n} consecutive free ports on 127.0.0.1")
