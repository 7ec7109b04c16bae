/* dcnlab hook: multicast group selection.  (ingress port, group address) -> PRE group id.
   C-MR4LMS routes by (input link, MGID), hence the ingress port in the key. */
#ifndef DCNLAB_MULTICAST_P4
#define DCNLAB_MULTICAST_P4

control Multicast(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action set_mgid(bit<16> mgid) { std.mcast_grp = mgid; }
    table mcast_group {
        key = { std.ingress_port: exact; hdr.ipv4.dstAddr: exact; }
        actions = { set_mgid; NoAction; }
        default_action = NoAction();
        size = 16384;
    }
    apply { mcast_group.apply(); }
}

#endif
