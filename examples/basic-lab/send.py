#!/usr/bin/env python3
"""send.py -- send one message over UDP to receive.py on another host and wait for its answer.

    python3 send.py 10.0.4.4 hello

The message is sent again until the receiver answers (it may still be starting), at most --tries
times. Exit status 0 once the answer came back, 1 if it never did.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dst", help="the receiving host's IPv4 address")
    ap.add_argument("message", help="the text to send")
    ap.add_argument("--port", type=int, default=4321, help="the receiver's UDP port (default 4321)")
    ap.add_argument("--tries", type=int, default=20, help="send at most this many times (default 20)")
    ap.add_argument("--wait", type=float, default=0.25, help="seconds to wait for an answer per try")
    args = ap.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((args.dst, args.port))     # connected: an ICMP "port unreachable" shows as a refusal
    sock.settimeout(args.wait)
    payload = args.message.encode()
    for n in range(1, args.tries + 1):
        t = time.perf_counter()
        try:
            sock.send(payload)
            answer = sock.recv(2048)
        except (socket.timeout, ConnectionRefusedError):
            time.sleep(args.wait if n > 1 else 0.05)
            continue
        rtt = (time.perf_counter() - t) * 1e3
        print(f"sent {args.message!r} to {args.dst}:{args.port}: {answer.decode('utf-8', 'replace')!r} "
              f"after {n} try(s), rtt {rtt:.1f} ms", flush=True)
        return 0
    print(f"no answer from {args.dst}:{args.port} after {args.tries} tries", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
