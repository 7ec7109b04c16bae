"""Fit the program's sizes (``p4src/sizes.p4``) to a fabric.

BMv2 allocates every table entry slot and register cell when it loads a program, so a program
declared for the largest fabric costs every switch tens of MiB it never uses. The controller
compiles the program with ``-DNAME=value`` for each size below; the content-keyed p4c cache keeps
one build per distinct sizing. The tables p4c adds on its own (keyless, hidden) are shrunk after the
compile (:func:`dcnlab.p4src.compiler.shrink_keyless_tables`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from dcnlab.topos.model import Fabric


def _pow2(n: int, lo: int) -> int:
    """The smallest power of two that is >= max(n, lo)."""
    v = lo
    while v < n:
        v *= 2
    return v


@dataclass(frozen=True)
class Sizing:
    NUM_PORTS: int = 64
    HOST_TABLE_SIZE: int = 4096
    ECMP_TABLE_SIZE: int = 1024
    TREE_TABLE_SIZE: int = 1024
    AGG_SLOTS: int = 1024
    AGG_TABLE_SIZE: int = 1024
    TENANTS: int = 64
    TENANT_TABLE_SIZE: int = 1024

    def defines(self) -> dict[str, int]:
        return asdict(self)


def sizing_for(fabric: Fabric) -> Sizing:
    """Sizes that fit every switch of ``fabric``:

    * ports: the most ports of any forwarding node (counters and per-port tables);
    * hosts: one ``ipv4_host`` entry per host, and one ``tenant_class`` entry per host;
    * ECMP members: at most ports² (distinct rotations of distinct uplink sets);
    * trees: ports × 64 (ingress port × up to 64 trees: colors or CISTs).
    """
    ports = max((n.ports for n in fabric.forwarding_nodes()), default=1)
    hosts = fabric.num_hosts()
    p = _pow2(ports, 8)
    return Sizing(NUM_PORTS=p, HOST_TABLE_SIZE=_pow2(hosts, 64), ECMP_TABLE_SIZE=_pow2(ports * ports, 64),
                  TREE_TABLE_SIZE=_pow2(p * 64, 256), AGG_SLOTS=256, AGG_TABLE_SIZE=256, TENANTS=_pow2(hosts, 16),
                  TENANT_TABLE_SIZE=_pow2(hosts, 64))
