"""The address plan: host ``i`` gets IPv4 10.0.0.0 + i + 1 and MAC 02:00:00 + i + 1.

One flat 10.0.0.0/8 keeps the plan independent of the fabric; forwarding is by
exact destination address, so no prefix structure is needed.  10.255.255.255
stays unused, which caps a fabric at :data:`MAX_HOSTS` hosts.
"""

from __future__ import annotations

MAX_HOSTS = (1 << 24) - 2
_BASE = 10 << 24


def host_ip_int(index: int) -> int:
    if not 0 <= index < MAX_HOSTS:
        raise ValueError(f"host index {index} outside the address plan (0..{MAX_HOSTS - 1})")
    return _BASE + index + 1


def host_ip(index: int) -> str:
    v = host_ip_int(index)
    return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}"


def host_mac(index: int) -> str:
    v = index + 1
    if not 0 < v <= MAX_HOSTS:
        raise ValueError(f"host index {index} outside the address plan (0..{MAX_HOSTS - 1})")
    return f"02:00:00:{(v >> 16) & 255:02x}:{(v >> 8) & 255:02x}:{v & 255:02x}"


def host_index_of_ip(ip: str) -> int:
    a, b, c, d = (int(x) for x in ip.split("."))
    v = (a << 24) | (b << 16) | (c << 8) | d
    index = v - _BASE - 1
    if not 0 <= index < MAX_HOSTS:
        raise ValueError(f"{ip} is not a dcnlab host address")
    return index
