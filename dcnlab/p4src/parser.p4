/* dcnlab: parser, deparser and checksums. */
#ifndef DCNLAB_PARSER_P4
#define DCNLAB_PARSER_P4

parser DcnParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t std) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IPPROTO_UDP: parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dstPort) {
            UDP_PORT_TREE: parse_tree;
            UDP_PORT_AGG: parse_agg;     /* aggregation chunk (p4src/aggregation.p4) */
            default: accept;
        }
    }
    state parse_tree {
        pkt.extract(hdr.tree);
        transition accept;
    }
    state parse_agg {
        /* a truncated chunk leaves hdr.agg invalid (PacketTooShort); aggregation.p4 drops it */
        pkt.extract(hdr.agg);
        transition accept;
    }
}

control DcnVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control DcnComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control DcnDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.tree);
        pkt.emit(hdr.agg);
    }
}

#endif
