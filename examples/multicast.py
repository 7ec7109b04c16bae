"""C-MR4LMS multicast on a k=4 fat-tree: plan a group, install it, send one message, count the copies.

``dcnlab.multicast`` plans the group's tree (C-MR4LMS (Chen et al.): the group's MGID picks a color, the color a
spanning tree, the switches replicate by ingress port and color). The multicast data plane writes the
per-port replication entries and PRE groups to the switches. One member sends a single frame (scapy,
``Host.send``) and every host captures (``Host.pcap``): each member must get exactly one copy (the
last switch rewrites it to the member's address), and no host outside the group any.

Run as root: ``.venv/bin/python examples/multicast.py``
"""

import time

import dcnlab
from dcnlab.controller.multicast.dataplane import MulticastDataplane
from dcnlab.traffic.multicast_agent import KIND_MULTICAST, SHIM, SHIM_OFFSET, multicast_frame

SPEC, COLORS, MGID = "fattree:k=4", 2, 5
MEMBERS = ["h0_0_0", "h0_1_1", "h1_0_0", "h2_1_0", "h3_0_1"]


def main() -> None:
    fabric = dcnlab.parse_spec(SPEC)
    h = dcnlab.multicast.hierarchy_for(fabric)
    with dcnlab.Network(fabric, routes=False) as net:      # no unicast routes: only tree traffic moves
        dp = MulticastDataplane(net.controller, h, COLORS, dual=False)
        op = dp.add_group(MGID, MEMBERS)
        (tree,) = dp.group_trees(MGID)
        print(f"{SPEC}: group {MGID} = {', '.join(MEMBERS)}; color {dp.color(MGID)}, tree over "
              f"{len(tree.directed_links(h))} directed links; installed with {op.updates} updates on "
              f"{op.switches} switches")

        sender = net.hosts[MEMBERS[0]]
        frame = bytearray(multicast_frame(sender.mac, sender.ip))
        frame[SHIM_OFFSET:SHIM_OFFSET + SHIM.size] = SHIM.pack(KIND_MULTICAST, dp.color(MGID), MGID)
        captures = {name: host.pcap(bpf="udp port 7701") for name, host in net.hosts.items()}
        before = net.link_bytes()
        sender.send(bytes(frame))
        time.sleep(1.0)
        # copies the switches sent per directed link (the members answer with ICMP port unreachable,
        # as nothing listens on UDP 7701 there: host-sent bytes are left out)
        sent = {k: (v - before[k]) // len(frame) for k, v in net.link_bytes().items()
                if k[0] in net.switches and v > before[k]}
        copies = {name: sum(1 for p in cap.packets() if p["IP"].dst == net.hosts[name].ip)
                  for name, cap in captures.items()}

        for name in sorted(copies):
            role = "sender" if name == sender.name else "member" if name in MEMBERS else "outsider"
            print(f"  {name:7} {role:8} {copies[name]} cop{'y' if copies[name] == 1 else 'ies'}")
        members_ok = all(copies[m] == 1 for m in MEMBERS[1:])
        outsiders_ok = all(n == 0 for name, n in copies.items() if name not in MEMBERS)
        print("every member got exactly one copy" if members_ok else "some member did NOT get exactly one copy")
        print("no outsider got a copy" if outsiders_ok else "an outsider GOT a copy")
        model = {k: n for k, n in dp.predicted_copies(sender.name, MGID).items() if k[0] in net.switches}
        print(f"copies sent by switches on {len(sent)} directed links: {sum(sent.values())}; "
              f"{'equal to' if sent == model else 'DIFFERENT from'} the model's tree, link by link")


if __name__ == "__main__":
    main()
