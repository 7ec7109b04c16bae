/* dcnlab base program (P4_16, v1model).  One program for every forwarding node:
   fabric switches and BCube servers alike.  A file per mechanism. */
#include <core.p4>
#include <v1model.p4>

#include "headers.p4"
#include "parser.p4"
#include "forwarding.p4"
#include "multicast.p4"
#include "aggregation.p4"
#include "meter.p4"
#include "ecn.p4"

control DcnIngress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_in;
    Forwarding() fwd;
    Multicast() mcast;
    Aggregation() agg;
    TenantMeter() tenant;

    apply {
        port_in.count((bit<32>)std.ingress_port);
        if (!hdr.ipv4.isValid() || hdr.ipv4.ttl <= 1) {
            mark_to_drop(std);
            return;
        }
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        agg.apply(hdr, meta, std);
        if (meta.agg_done == 1) {
            /* an aggregation chunk: aggregated, sent on its tree or dropped by agg */
        } else if (hdr.tree.isValid()) {
            mcast.apply(hdr, meta, std);
        } else {
            fwd.apply(hdr, meta, std);
        }
        tenant.apply(hdr, meta, std);
    }
}

control DcnEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) port_out;
    TreeEgress() trees;
    EcnMark() ecn;

    apply {
        port_out.count((bit<32>)std.egress_port);
        trees.apply(hdr, meta, std);
        ecn.apply(hdr, meta, std);
    }
}

V1Switch(DcnParser(), DcnVerifyChecksum(), DcnIngress(), DcnEgress(), DcnComputeChecksum(),
         DcnDeparser()) main;
