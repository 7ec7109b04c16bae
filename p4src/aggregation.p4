/* dcnlab hook: in-network aggregation.  UDP destination port -> aggregation tree id.
   Per tree, agg_count counts packets and agg_value sums IPv4 bytes; the aggregation
   mechanism replaces these with real partial aggregates (registers: Thrift-only on BMv2). */
#ifndef DCNLAB_AGGREGATION_P4
#define DCNLAB_AGGREGATION_P4

control Aggregation(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    register<bit<32>>(AGG_SLOTS) agg_value;
    register<bit<32>>(AGG_SLOTS) agg_count;
    action set_agg_tree(bit<16> tree) {
        meta.agg_tree = tree;
        bit<32> seen;
        bit<32> sum;
        agg_count.read(seen, (bit<32>)tree);
        agg_count.write((bit<32>)tree, seen + 1);
        agg_value.read(sum, (bit<32>)tree);
        agg_value.write((bit<32>)tree, sum + (bit<32>)hdr.ipv4.totalLen);
    }
    table agg_classify {
        key = { hdr.udp.dstPort: exact; }
        actions = { set_agg_tree; NoAction; }
        default_action = NoAction();
        size = AGG_TABLE_SIZE;
    }
    apply {
        if (hdr.udp.isValid()) {
            agg_classify.apply();
        }
    }
}

#endif
