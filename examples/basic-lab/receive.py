#!/usr/bin/env python3
"""receive.py -- answer the basic-lab's send.py: print (and log) each message with the hops it took.

Run it on a host of the lab, e.g. in the background before the sender:

    dcnlab lab examples/basic-lab --exec 'h4 python3 receive.py --count 1 --log received.txt &' \\
                                  --exec 'h1 python3 send.py 10.0.4.4 hello'

Each datagram is answered with ``ack <message>`` and reported with the TTL it arrived with: every
switch of basic.p4 decrements it, so 64 minus the TTL is the number of switches on the path.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time

INITIAL_TTL = 64          # what Linux sends with (net.ipv4.ip_default_ttl)
IP_RECVTTL = getattr(socket, "IP_RECVTTL", 12)     # Linux's value; Python 3.11 does not name it


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=4321, help="UDP port to listen on (default 4321)")
    ap.add_argument("--count", type=int, default=0, help="exit after this many messages (default: never)")
    ap.add_argument("--timeout", type=float, default=0, help="give up (exit 1) after this many seconds")
    ap.add_argument("--log", help="also append one line per message to this file")
    args = ap.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IP, IP_RECVTTL, 1)
    sock.bind(("0.0.0.0", args.port))
    print(f"listening on UDP port {args.port}", flush=True)
    deadline = time.monotonic() + args.timeout if args.timeout else None
    got = 0
    while not args.count or got < args.count:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                print(f"timed out after {args.timeout:g} s with {got} message(s)", flush=True)
                return 1
            sock.settimeout(left)
        try:
            data, anc, _flags, peer = sock.recvmsg(2048, socket.CMSG_SPACE(4))
        except socket.timeout:
            continue
        ttl = next((int.from_bytes(d[:4], sys.byteorder) for level, kind, d in anc
                    if level == socket.IPPROTO_IP and kind == socket.IP_TTL), None)
        text = data.decode("utf-8", "replace")
        hops = f", {INITIAL_TTL - ttl} switch hop(s)" if ttl is not None else ""
        line = f"got {text!r} from {peer[0]} (ttl {ttl}{hops})"
        print(line, flush=True)
        if args.log:
            with open(args.log, "a") as fh:
                fh.write(line + "\n")
        sock.sendto(b"ack " + data, peer)
        got += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
