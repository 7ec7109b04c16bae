/* dcnlab hook: switch marking (FECN).  Per egress port, ECT packets that find the
   queue at or above the threshold (packets) leave with CE. */
#ifndef DCNLAB_ECN_P4
#define DCNLAB_ECN_P4

control EcnMark(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action set_ecn_threshold(bit<19> threshold) {
        meta.ecn_threshold = threshold;
        meta.ecn_enabled = 1;
    }
    table ecn_config {
        key = { std.egress_port: exact; }
        actions = { set_ecn_threshold; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }
    apply {
        if (hdr.ipv4.isValid()) {
            ecn_config.apply();
            if (meta.ecn_enabled == 1 && (hdr.ipv4.ecn == 1 || hdr.ipv4.ecn == 2)
                && std.enq_qdepth >= meta.ecn_threshold) {
                hdr.ipv4.ecn = 3;
            }
        }
    }
}

#endif
