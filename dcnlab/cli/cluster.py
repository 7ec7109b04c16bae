"""``dcnlab run SPEC --servers ...`` (one fabric over several machines) and ``dcnlab plan cluster``.

The engine is :mod:`dcnlab.emu.cluster`; this module adds its command-line options, prints the
placement before anything is built, the tunnel traffic of the all-pairs check, and the capacity plan.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dcnlab.cli.argtypes import fabric_spec, ranged
from dcnlab.cli.errors import UserError
from dcnlab.topos.limits import SizeLimit


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("several machines")
    g.add_argument("--servers", metavar="HOST,HOST,...",
                   help="spread the fabric over these machines, this one first (localhost), the others SSH "
                        "destinations reachable as root with a key; switches are placed to keep cut links few "
                        "(tunnels) and switches balanced; each machine needs dcnlab, Mininet and BMv2")
    g.add_argument("--ssh-config", metavar="FILE", help="ssh_config(5) file for reaching the servers "
                   "(default: root's own)")


def cluster_network(args: argparse.Namespace, fabric, opts, say, program: Path | None):
    """The :class:`~dcnlab.emu.cluster.network.ClusterNetwork` of ``--servers`` (nothing created yet),
    after printing its placement."""
    from dcnlab.emu.cluster.network import ClusterNetwork
    from dcnlab.emu.cluster.remote import parse_servers

    if program is not None:
        raise UserError("argument --servers: not with --program (dcnlab's own program only)")
    servers = parse_servers(args.servers)
    cfg = Path(args.ssh_config).absolute() if args.ssh_config else None
    net = ClusterNetwork(fabric, servers, opts, progress=say, ssh_config=cfg)
    print(net.placement.table(), flush=True)
    return net


def print_tunnel_traffic(net, delta) -> None:
    """What the cut links (VXLAN tunnels) carried during the all-pairs check, from the switches' counters."""
    from dcnlab.emu.cluster.tunnels import OVERHEAD
    from dcnlab.traffic import measure

    frames = nbytes = 0
    for ll in measure.link_loads(net.fabric, delta):
        if net.placement.is_cut(ll.link):
            frames += ll.a_to_b.packets + ll.b_to_a.packets
            nbytes += ll.a_to_b.bytes + ll.b_to_a.bytes
    print(f"tunnels ({len(net.placement.cut)} cut links, VXLAN) during the check: {frames} frames, "
          f"{nbytes + frames * OVERHEAD:,} bytes on the wire")


def cmd_plan_cluster(args: argparse.Namespace) -> int:
    from dcnlab.emu.cluster.capacity import plan
    from dcnlab.topos.spec import parse_spec

    fabric = parse_spec(args.spec)
    for n in args.machines:
        print(plan(fabric, n).table())
    return 0


PLAN_MAX_SWITCHES = 704
"""``plan cluster`` places at most this many forwarding nodes: BCube(8,2) (704), fat-tree up to k=22 (605).
The Kernighan-Lin placement grows fast with the fabric at many machines (over 64 machines: BCube(8,2) 6 s,
fat-tree k=22 14 s, k=24 19 s, k=28 33 s, k=32 49 s on this 2-core VM; k=22 over 32 machines, the
most ``--machines`` takes, 7 s), and a plan must answer well within the CLI's hang guard on a loaded
machine."""


def plan_limit() -> SizeLimit:
    return SizeLimit("dcnlab plan cluster places", switches=PLAN_MAX_SWITCHES)


def _machines(text: str) -> list[int]:
    one = ranged(int, 1, 32, "machines")
    return [int(one(x)) for x in text.split(",")]


def add_plan_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="capacity plan of a fabric over N machines: placement, memory, bring-up, "
                                       "cut links and their tunnel traffic during the all-pairs check")
    p.add_argument("spec", metavar="SPEC", type=fabric_spec(plan_limit),
                   help="a fabric spec, e.g. fattree:k=16 or bcube:n=8,k=2 (at most "
                        f"{PLAN_MAX_SWITCHES:,} switches)")
    p.add_argument("--machines", type=_machines, default=[2], metavar="N[,N...]",
                   help="machines of 2 cores and 24 GiB (default 2; several: one plan each)")
    p.set_defaults(func=cmd_plan_cluster)
