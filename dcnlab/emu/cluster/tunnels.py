"""Cut links as tunnels: one point-to-point VXLAN interface at each end, inside each machine's run namespace.

A link whose two switches run on different machines becomes, at each end, a VXLAN interface with
the switch port's usual name (``e0_1-eth2``), a VNI of its own, and the peer machine's address
as its only remote (``nolearning``: no flooding, no learnt addresses). It is created with
``ip link add NAME netns RUN-NS type vxlan ...`` from the machine's own namespace: the interface
appears directly in the run's namespace, while its UDP socket (port 4789) stays in the machine's
namespace, where the route to the other machine is. Nothing is ever named in the machine's own
namespace, so two runs never clash there, and deleting the run's namespace deletes every tunnel
(and closes the socket once the last one is gone). All of a machine's tunnels are made with
one ``ip -batch``.

**Why VXLAN, not Mininet's GRE or SSH links.** Mininet's cluster edition offers two:

* ``RemoteSSHLink``: a tap device at each end joined by ``ssh -w`` (``Tunnel=ethernet``). It is
  encrypted and listens on nothing new, but it needs ``PermitTunnel`` in the remote sshd, costs
  one ssh client and one sshd process per link, copies every frame through both in user space,
  and Mininet's version hard-wires ``tap9`` (two links made at once collide). Fat-tree k=16
  over two machines cuts 512 links: 1,024 processes on 2-core machines. Measured on one link
  between two namespaces of this machine (iperf3, TCP): see ``README``, "One fabric over several machines".
* ``RemoteGRELink``: kernel ``gretap``, no process per link. Mininet creates it under the port's
  final name in the machine's own namespace after deleting any interface of that name there,
  numbers keys from 0 in each process (two runs between the same machines collide), and
  runs six commands per link over SSH. More to the point, ``ip_gre`` is a module many kernels do
  not build in: the development VM's kernel (6.18, Firecracker) has no ``gretap`` at all, but
  has ``vxlan``.

VXLAN (RFC 7348) is the same kernel data path as gretap (no process, no copy to user space) with
an overhead of 50 bytes per frame, the encapsulation data centres themselves use between
machines. The tunnel's MTU is set to 1500, like the veths: a frame that does not fit the path
is carried in IP fragments (VXLAN's default ``df unset``), so hosts keep their 1500-byte MTU.

**What it exposes.** VXLAN, like GRE, is neither encrypted nor authenticated: a machine that can
send UDP to port 4789 of a fabric machine and guesses a VNI (24 bits, random per run) can inject
frames into the emulated data plane. Run clusters on a private network. No control channel is
exposed this way: P4Runtime stays on Unix sockets reached through SSH, Thrift inside each
machine's run namespace.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from dcnlab.emu.links import LinkSetupError, check_names
from dcnlab.emu.netns import command, system_tool

__all__ = ["OVERHEAD", "VXLAN_PORT", "TunnelEnd", "create", "vni_base"]

VXLAN_PORT = 4789
"""IANA's VXLAN port (RFC 7348); the only UDP port a cluster run opens, in each machine's own namespace."""
OVERHEAD = 50
"""Bytes VXLAN adds to each frame on the wire: outer IPv4 (20), UDP (8), VXLAN (8), inner Ethernet (14)."""
VNI_SPACE = 1 << 24


@dataclass(frozen=True)
class TunnelEnd:
    """One machine's end of a cut link."""

    name: str
    """Interface name in the run's namespace (the switch port's name)."""
    vni: int
    remote: str
    """The other machine's address (IPv4 or IPv6)."""
    port: int = VXLAN_PORT

    def add_line(self, netns: str) -> str:
        """``ip -batch`` line, run in the machine's own namespace, that creates this end in ``netns``.
        No ``local``: the kernel picks the source address by route."""
        return (f"link add name {self.name} netns {netns} type vxlan id {self.vni} remote {self.remote} "
                f"dstport {self.port} nolearning")


def vni_base(run_id: str) -> int:
    """Where a run's VNIs start: from a hash of its id, so two runs between the same machines (each with
    its own VNIs on the machines' one VXLAN socket) almost never collide; a collision is an error,
    not a silent cross-connection."""
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:3], "big") or 1


def vni(run_id: str, index: int) -> int:
    """The VNI of the run's cut link number ``index`` (1 .. 2^24 - 1)."""
    return (vni_base(run_id) + index - 1) % (VNI_SPACE - 1) + 1


def create(netns: str, ends: Sequence[TunnelEnd]) -> None:
    """Create ``ends`` in ``netns`` (their sockets in the caller's namespace), MTU 1500, up."""
    if not ends:
        return
    check_names(e.name for e in ends)
    ip = system_tool("ip")
    r = subprocess.run([ip, "-batch", "-"], input="".join(e.add_line(netns) + "\n" for e in ends),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise LinkSetupError(f"creating {len(ends)} VXLAN tunnel end(s) in {netns} failed: {r.stderr.strip()[-600:]}"
                             + ("; this kernel lacks VXLAN (CONFIG_VXLAN)" if "Unknown device type" in r.stderr
                                else ""))
    r = subprocess.run(command(netns, "ip", "-batch", "-"), input="".join(f"link set dev {e.name} mtu 1500 up\n"
                                                                       for e in ends),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise LinkSetupError(f"bringing up VXLAN tunnel ends in {netns} failed: {r.stderr.strip()[-600:]}")
