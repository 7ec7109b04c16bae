"""Two traffic agents in two fresh network namespaces joined by a veth pair (10.0.0.1 <-> 10.0.0.2)."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from dcnlab.emu.netns import command, exec_prefix
from dcnlab.traffic.hostctl import AgentHandle, HostAddr


def sh(cmd: str) -> str:
    return subprocess.run(cmd, shell=True, check=True, capture_output=True, text=True).stdout


def in_ns(ns: str, tool: str, *args: str) -> str:
    """``tool args`` inside namespace ``ns``, entered as dcnlab enters it (:func:`dcnlab.emu.netns.command`:
    no ``ip -n``, whose mount namespace fails where ``/`` is not a mount point)."""
    return subprocess.run(command(ns, tool, *args), check=True, capture_output=True, text=True).stdout


@contextmanager
def agent_pair(prefix: str) -> Iterator[tuple[AgentHandle, AgentHandle]]:
    """Agents ``a`` and ``b``; the namespaces (and with them the veths) are deleted afterwards."""
    tag = uuid.uuid4().hex[:6]
    a_ns, b_ns, a_if, b_if = f"{prefix}a{tag}", f"{prefix}b{tag}", f"{prefix}a{tag}0", f"{prefix}b{tag}0"
    sh(f"ip netns add {a_ns} && ip netns add {b_ns}")
    try:
        sh(f"ip link add {a_if} netns {a_ns} type veth peer name {b_if} netns {b_ns}")
        for ns, dev, ip in ((a_ns, a_if, "10.0.0.1"), (b_ns, b_if, "10.0.0.2")):
            in_ns(ns, "ip", "addr", "add", f"{ip}/8", "dev", dev)
            in_ns(ns, "ip", "link", "set", dev, "up")
            in_ns(ns, "ip", "link", "set", "lo", "up")

        def mac(ns: str, dev: str) -> str:
            return in_ns(ns, "ip", "-br", "link", "show", dev).split()[2]

        a = AgentHandle(HostAddr("a", a_if, "10.0.0.1", mac(a_ns, a_if)), exec_prefix(a_ns))
        b = AgentHandle(HostAddr("b", b_if, "10.0.0.2", mac(b_ns, b_if)), exec_prefix(b_ns))
        a.netns, b.netns = a_ns, b_ns       # type: ignore[attr-defined]  (for udp_no_ports)
        yield a, b
        a.close()
        b.close()
    finally:
        sh(f"ip netns del {a_ns}; ip netns del {b_ns}")


def udp_no_ports(netns: str) -> int:
    """UDP datagrams that arrived in ``netns`` for a port nothing listened on (``/proc/net/snmp``, Udp NoPorts):
    how a test knows that datagrams were there before their receiver, without waiting a fixed time."""
    head, values = [ln.split() for ln in in_ns(netns, "cat", "/proc/net/snmp").splitlines()
                    if ln.startswith("Udp:")][:2]
    return int(values[head.index("NoPorts")])
