"""Broadcast over completely independent spanning trees (CISTs) on Dragonfly(1,4,2), before and after a cut.

``dcnlab.cist.plan_cists`` builds the k = 2 CISTs of the switch graph (Dragonfly CISTs, Bian et al.); the broadcast data
plane installs each as a broadcast tree (the tree id travels in the frame's shim). One host sends its
broadcast once on every tree (scapy frames, ``Host.send``) and every host captures (``Host.pcap``):
each host gets one copy per tree. Then a link of tree 0 is cut (``net.link(a, b).cut()``, every frame
on it dropped) and the broadcast is sent again: tree 0 no longer reaches everyone, but the trees share
no link and no inner switch, so tree 1 still brings every host its copy.

Run as root: ``.venv/bin/python examples/cist.py``
"""

import time

import dcnlab
from dcnlab.controller.cist.dataplane import BroadcastDataplane
from dcnlab.traffic.cist_agent import TREE_OFFSET, broadcast_frame

SPEC, SENDER = "dragonfly:p=1,a=4,h=2", "h0_0_0"


def broadcast(net: dcnlab.Network, trees: list[int]) -> dict[str, set[int]]:
    """SENDER broadcasts once on each tree; returns, per other host, the trees its copies came over."""
    src = net.hosts[SENDER]
    frames = []
    for t in trees:
        frame = bytearray(broadcast_frame(src.mac, src.ip))
        frame[TREE_OFFSET] = t
        frames.append(bytes(frame))
    captures = {name: host.pcap(bpf=f"udp port 7701 and src host {src.ip}")
                for name, host in net.hosts.items() if name != SENDER}
    src.send(frames)
    time.sleep(2.0)                      # a diameter-11 tree of BMv2 switches: let the last copies arrive
    return {name: {bytes(p)[TREE_OFFSET] for p in cap.packets()} for name, cap in captures.items()}


def report(what: str, got: dict[str, set[int]], trees: list[int]) -> None:
    reached = ", ".join(f"tree {t} reached {sum(t in s for s in got.values())}" for t in trees)
    missed = [name for name, s in got.items() if not s]
    print(f"{what}: {reached} of {len(got)} hosts")
    print("  every host got the broadcast" if not missed else f"  {len(missed)} host(s) did NOT get it: {missed}")


def main() -> None:
    fabric = dcnlab.parse_spec(SPEC)
    plan = dcnlab.cist.plan_cists(fabric)
    trees = [t.tree_id for t in plan.trees]
    print(f"{SPEC}: {len(plan.graph)} switches, {fabric.num_hosts()} hosts, k = {plan.k} CISTs "
          f"(diameters {', '.join(map(str, plan.diameters))})")
    with dcnlab.Network(fabric) as net:
        stats = BroadcastDataplane(net.controller, fabric, plan.graph).install({t.tree_id: t for t in plan.trees})
        print(f"installed: {stats.groups} PRE groups, {stats.entries} table entries")
        report("no failure", broadcast(net, trees), trees)

        a, b = plan.trees[0].edges[0]
        net.link(a, b).cut()
        in_trees = [t.tree_id for t in plan.trees if (a, b) in t.edges or (b, a) in t.edges]
        print(f"cut link {a}--{b} (in tree(s) {in_trees})")
        report(f"link {a}--{b} cut", broadcast(net, trees), trees)


if __name__ == "__main__":
    main()
