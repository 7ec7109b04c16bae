/* An L2 switch for dcnlab's examples and tests: an exact table on the destination MAC picks the
 * output port; a destination it does not know (broadcast included) takes the table's default action,
 * which floods through a PRE multicast group; a multicast MAC can name a smaller group of its own.
 * Copies made by the PRE never go back out of the port the frame came in on. No learning: the
 * table is filled from the exercise's runtime JSON (examples/l2-lab). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }

struct headers_t { ethernet_t eth; }
struct meta_t { }

parser L2Parser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); transition accept; }
}

control L2Verify(inout headers_t hdr, inout meta_t meta) { apply { } }

control L2Ingress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action forward(bit<9> port) { sm.egress_spec = port; }
    action flood(bit<16> group) { sm.mcast_grp = group; }

    table dmac {
        key = { hdr.eth.dst: exact; }
        actions = { forward; flood; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        if (hdr.eth.isValid()) { dmac.apply(); } else { drop(); }
    }
}

control L2Egress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // instance type 5: a copy made by the PRE (simple_switch's PKT_INSTANCE_TYPE_REPLICATION)
        if (sm.instance_type == 5 && sm.egress_port == sm.ingress_port) { mark_to_drop(sm); }
    }
}

control L2Compute(inout headers_t hdr, inout meta_t meta) { apply { } }

control L2Deparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); }
}

V1Switch(L2Parser(), L2Verify(), L2Ingress(), L2Egress(), L2Compute(), L2Deparser()) main;
