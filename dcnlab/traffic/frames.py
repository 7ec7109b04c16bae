"""Frame templates: Ether / IPv4 / UDP (checksum 0) / dcnlab header / padding.

Templates are built once in the experiment's process and shipped to host agents as bytes. The
agents patch sequence numbers and timestamps into the payload. A UDP checksum of 0 means "none" in
IPv4, which keeps the per-packet patch valid.

The headers are packed with :mod:`struct`: a template costs about a microsecond and needs no scapy
import (half a second), which matters on the all-pairs check of every bring-up. scapy stays the
reference: ``tests/test_frames.py`` checks the bytes against scapy's for random inputs, and the
agents' receive side parses nothing else.
"""

from __future__ import annotations

import socket
import struct
from functools import lru_cache

from dcnlab.traffic import wire

ETH_P_IP = 0x0800
IPPROTO_UDP = 17


def _mac(text: str) -> bytes:
    return bytes.fromhex(text.replace(":", ""))


def ipv4_checksum(header: bytes) -> int:
    """RFC 791 header checksum (one's complement of the one's complement sum of 16-bit words)."""
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


@lru_cache(maxsize=4096)
def udp_frame(src_mac: str, dst_mac: str, src_ip: str, dst_ip: str, sport: int, dport: int, size: int,
              ecn: int = 0, flow: int = 0) -> bytes:
    wire.check_frame_size(size)
    if not 0 <= ecn <= 3:
        raise ValueError(f"ecn must be 0..3, got {ecn}")
    payload = wire.pack(flow, 0, 0) + b"\0" * (size - wire.MIN_FRAME)
    udp_len = 8 + len(payload)
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, ecn, 20 + udp_len, 1, 0, 64, IPPROTO_UDP, 0,
                               socket.inet_aton(src_ip), socket.inet_aton(dst_ip)))
    struct.pack_into("!H", ip, 10, ipv4_checksum(bytes(ip)))
    frame = (_mac(dst_mac) + _mac(src_mac) + struct.pack("!H", ETH_P_IP) + bytes(ip)
             + struct.pack("!HHHH", sport, dport, udp_len, 0) + payload)
    assert len(frame) == size
    return frame
