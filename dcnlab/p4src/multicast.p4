/* dcnlab: replication on trees, shared by C-MR4LMS multicast and CIST broadcast.

   A packet with the tree shim (UDP port UDP_PORT_TREE) is replicated by (ingress port, kind,
   tree) to the out-ports of that tree at this switch, through a PRE group; this is the paper's
   per-port multicast table of C entries (one per color) for kind = multicast, and the CIST's
   broadcast tree for kind = broadcast.  A miss drops the packet: tree traffic is never routed as
   unicast.  In egress, a copy leaving on a host port gets that host's addresses, so the host
   receives an ordinary unicast UDP datagram and filters by group itself. */
#ifndef DCNLAB_MULTICAST_P4
#define DCNLAB_MULTICAST_P4

control Multicast(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action replicate(bit<16> mcast_grp) { std.mcast_grp = mcast_grp; }
    action drop() { mark_to_drop(std); }
    table tree_replicate {
        key = { std.ingress_port: exact; hdr.tree.kind: exact; hdr.tree.tree: exact; }
        actions = { replicate; drop; }
        default_action = drop();
        size = TREE_TABLE_SIZE;
    }
    apply {
        if (hdr.tree.isValid()) {
            tree_replicate.apply();
        }
    }
}

control TreeEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action to_host(bit<48> mac, bit<32> ip) {
        hdr.ethernet.dstAddr = mac;
        hdr.ipv4.dstAddr = ip;
    }
    table tree_host_port {
        key = { std.egress_port: exact; }
        actions = { to_host; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }
    apply {
        if (hdr.tree.isValid()) {
            tree_host_port.apply();
        }
    }
}

#endif
