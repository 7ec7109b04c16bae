/* ECN marking for dcnlab's examples and tests: IPv4 is routed on its destination (LPM), and in the
 * egress an ECN-capable packet (ECT(0) or ECT(1)) that found at least `ecn_threshold[0]` packets in
 * its egress queue is marked CE (ECN 3). Packets that are not ECN-capable, or already CE, pass as
 * they are. The threshold is a register (written by examples/ecn-lab/s1-commands.txt over Thrift);
 * while it is 0, DEFAULT_THRESHOLD applies. BMv2's queues only fill when their rate is limited:
 * `dcnlab run ... --queue-rate PPS --queue-depth N`, or set_queue_rate in the command file. */
#include <core.p4>
#include <v1model.p4>

const bit<19> DEFAULT_THRESHOLD = 10;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<6> dscp; bit<2> ecn; bit<16> len; bit<16> id; bit<3> flags;
    bit<13> frag; bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}

struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { }

parser EParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control EVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control EIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action route(bit<48> dst_mac, bit<9> port) {
        hdr.eth.dst = dst_mac;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst: lpm; }
        actions = { route; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        if (hdr.ipv4.isValid()) { ipv4_lpm.apply(); } else { drop(); }
    }
}

control EEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<19>>(1) ecn_threshold;

    apply {
        bit<19> threshold;
        ecn_threshold.read(threshold, 0);
        if (threshold == 0) { threshold = DEFAULT_THRESHOLD; }
        if (hdr.ipv4.isValid() && (hdr.ipv4.ecn == 1 || hdr.ipv4.ecn == 2) && sm.enq_qdepth >= threshold) {
            hdr.ipv4.ecn = 3;
        }
    }
}

control ECompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.dscp, hdr.ipv4.ecn, hdr.ipv4.len, hdr.ipv4.id,
              hdr.ipv4.flags, hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control EDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); }
}

V1Switch(EParser(), EVerify(), EIngress(), EEgress(), ECompute(), EDeparser()) main;
