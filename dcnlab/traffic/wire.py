"""Probe/flow payload: magic, flow id, sequence number, send timestamp (ns since the epoch).

All host namespaces share the machine's clock, so one-way latency is arrival − send time.
The frame size given to a sender is the Ethernet frame without FCS, which is what BMv2
counts in its byte counters.
"""

from __future__ import annotations

import struct

MAGIC = b"DCNL"
HEADER = struct.Struct("!4sIQQ")
ETH_IP_UDP = 14 + 20 + 8
MIN_FRAME = ETH_IP_UDP + HEADER.size
MAX_FRAME = 1514


def check_frame_size(size: int) -> None:
    if not MIN_FRAME <= size <= MAX_FRAME:
        raise ValueError(f"frame size {size} out of range; valid: {MIN_FRAME}..{MAX_FRAME} bytes")


def pack(flow: int, seq: int, ts_ns: int) -> bytes:
    return HEADER.pack(MAGIC, flow, seq, ts_ns)


def unpack(payload: bytes) -> tuple[int, int, int] | None:
    if len(payload) < HEADER.size or payload[:4] != MAGIC:
        return None
    _, flow, seq, ts = HEADER.unpack_from(payload)
    return flow, seq, ts
