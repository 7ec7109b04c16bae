/* dcnlab: unicast forwarding by destination host, with hash-based ECMP.

   ipv4_host maps a destination address either to one port (set_port) or to an
   ECMP group (set_ecmp: members base..base+count-1 of ecmp_member); the member is
   picked by a CRC16 of the 5-tuple, so one flow keeps one path. */
#ifndef DCNLAB_FORWARDING_P4
#define DCNLAB_FORWARDING_P4

control Forwarding(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action drop() { mark_to_drop(std); }
    action set_port(port_t port) { std.egress_spec = port; }
    action set_ecmp(bit<16> base, bit<16> count) {
        meta.ecmp_base = base;
        meta.ecmp_count = count;
    }
    table ipv4_host {
        key = { hdr.ipv4.dstAddr: exact; }
        actions = { set_port; set_ecmp; drop; }
        default_action = drop();
        size = HOST_TABLE_SIZE;
    }
    table ecmp_member {
        key = { meta.ecmp_index: exact; }
        actions = { set_port; drop; }
        default_action = drop();
        size = ECMP_TABLE_SIZE;
    }
    apply {
        if (ipv4_host.apply().hit && meta.ecmp_count != 0) {
            hash(meta.ecmp_index, HashAlgorithm.crc16, meta.ecmp_base,
                 { hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4.protocol,
                   hdr.udp.srcPort, hdr.udp.dstPort }, (bit<32>)meta.ecmp_count);
            ecmp_member.apply();
        }
    }
}

#endif
