"""Segmentation offloads off on every switch-side interface, before BMv2 opens its ports.

BMv2 reads each port with libpcap. When TCP or generic segmentation offload is on (the veth
default), libpcap sizes every slot of its PACKET_MMAP ring for a 64 KiB packet, so a port's 2 MiB
ring holds about 32 frames; a switch that the scheduler leaves off the CPU for a few tens of
milliseconds on a busy 2-core machine then drops every frame beyond those 32 (counted as sent by
one switch, never seen by the next). With the offloads off, libpcap sizes slots by the MTU and the
ring holds about a thousand frames. Nothing else changes: the emulated links carry MTU-sized frames.

:func:`disable` runs this file as a script inside the run's namespace: one short process that
clears the flags with ``SIOCETHTOOL`` ioctls, rather than one ``ethtool -K`` process per interface
(640 of them on fat-tree k=8).
"""

from __future__ import annotations

import ctypes
import fcntl
import socket
import struct
import subprocess
import sys
from collections.abc import Sequence

SIOCETHTOOL = 0x8946
ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_SFEATURES = 0x37, 0x1B, 0x3B
ETH_SS_FEATURES = 4
ETH_GSTRING_LEN = 32


class OffloadError(RuntimeError):
    pass


def _ioctl(s: socket.socket, dev: str, payload: bytearray) -> None:
    """``SIOCETHTOOL`` on ``dev`` with ``payload`` (a struct ethtool_* the kernel reads and fills)."""
    buf = (ctypes.c_char * len(payload)).from_buffer(payload)
    ifreq = struct.pack("16sP16x", dev.encode(), ctypes.addressof(buf))  # struct ifreq (40 bytes)
    fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifreq)


def _feature_names(s: socket.socket, dev: str) -> list[str]:
    """The kernel's netdev feature names, by bit (the strings ``ethtool -k`` prints)."""
    info = bytearray(struct.pack("IIQI", ETHTOOL_GSSET_INFO, 0, 1 << ETH_SS_FEATURES, 0))
    _ioctl(s, dev, info)
    count = struct.unpack_from("I", info, 16)[0]
    strings = bytearray(struct.pack("III", ETHTOOL_GSTRINGS, ETH_SS_FEATURES, count)) + bytearray(count * ETH_GSTRING_LEN)
    _ioctl(s, dev, strings)
    raw = strings[12:]
    return [raw[i * ETH_GSTRING_LEN:(i + 1) * ETH_GSTRING_LEN].split(b"\0", 1)[0].decode() for i in range(count)]


def offload_bits(names: Sequence[str]) -> list[int]:
    """Bits of every transmit segmentation offload (TSO of every flavour, GSO, UDP ...) and of GRO/LRO:
    every feature libpcap looks at before it sizes its ring for 64 KiB packets."""
    return [i for i, n in enumerate(names)
            if (n.startswith("tx-") and n.endswith("-segmentation")) or n in ("rx-gro", "rx-lro")]


def _clear(devs: Sequence[str]) -> None:
    """Clear the offload features on ``devs`` in the current network namespace (``ETHTOOL_SFEATURES``, as
    ``ethtool -K dev tso off gso off gro off`` does; the older per-feature ioctls miss TSO flavours that
    newer kernels add, such as ``tx-tcp-accecn-segmentation``). Features a device cannot change are left
    as they are."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        bits = offload_bits(_feature_names(s, devs[0]))
        blocks = max(bits) // 32 + 1
        valid = [0] * blocks
        for b in bits:
            valid[b // 32] |= 1 << (b % 32)
        for dev in devs:
            req = bytearray(struct.pack("II", ETHTOOL_SFEATURES, blocks))
            for v in valid:
                req += struct.pack("II", v, 0)  # struct ethtool_set_features_block {valid, requested}
            _ioctl(s, dev, req)


def disable(netns: str, devs: Sequence[str]) -> None:
    """Turn segmentation and receive offloads off on ``devs`` of namespace ``netns``."""
    from dcnlab.controller.runtime.netns import exec_prefix

    if not devs:
        return
    r = subprocess.run([*exec_prefix(netns), sys.executable, "-S", "-I", __file__, *devs],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise OffloadError(f"turning offloads off in {netns} failed: {r.stderr.strip()[-400:]}")


if __name__ == "__main__":
    _clear(sys.argv[1:])
