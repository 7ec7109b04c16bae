"""Send raw Ethernet frames from inside a host: ``python -S -m dcnlab.traffic.rawsend IFACE`` reads one
hex-encoded frame per line on stdin and writes each to ``IFACE`` through an ``AF_PACKET`` socket.

The scripting API (:meth:`dcnlab.api.Host.send`) builds frames with scapy in the caller's process and
runs this in the host's namespace: it imports nothing but the standard library, so it starts in
tens of milliseconds where importing scapy in the host would take about a second.
"""

from __future__ import annotations

import socket
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m dcnlab.traffic.rawsend IFACE < hex-frames", file=sys.stderr)
        return 2
    sent = 0
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((argv[0], 0))
        for line in sys.stdin:
            line = line.strip()
            if line:
                s.send(bytes.fromhex(line))
                sent += 1
    print(sent)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
