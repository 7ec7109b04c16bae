/* An IPv4 router for dcnlab's examples and tests: LPM routing that rewrites the MACs and
 * decrements the TTL, a ternary ACL with priorities, a range table on the UDP destination port
 * that counts matching packets in a register, and multicast through the PRE for 224.0.0.0/4. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }

struct headers_t { ethernet_t eth; ipv4_t ipv4; udp_t udp; }
struct meta_t { }

parser RParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.proto) { 17: udp; default: accept; }
    }
    state udp { pkt.extract(hdr.udp); transition accept; }
}

control RVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control RIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) port_hits;

    action drop() { mark_to_drop(sm); }
    action forward(bit<48> dst_mac, bit<48> src_mac, bit<9> port) {
        hdr.eth.dst = dst_mac;
        hdr.eth.src = src_mac;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action flood(bit<16> group) { sm.mcast_grp = group; }
    action permit() { }
    action count_port(bit<32> slot) {
        bit<32> n;
        port_hits.read(n, slot);
        port_hits.write(slot, n + 1);
    }

    table routes {
        key = { hdr.ipv4.dst: lpm; }
        actions = { forward; flood; drop; }
        default_action = drop();
        size = 1024;
    }
    table acl {
        key = { hdr.ipv4.src: ternary; hdr.ipv4.proto: ternary; }
        actions = { permit; drop; }
        default_action = permit();
        size = 256;
    }
    table udp_ports {
        key = { hdr.udp.dport: range; }
        actions = { count_port; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        if (!hdr.ipv4.isValid()) { drop(); return; }
        acl.apply();
        if (sm.egress_spec == 511) { return; }
        if (hdr.udp.isValid()) { udp_ports.apply(); }
        routes.apply();
    }
}

control REgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.mcast_grp != 0 && sm.egress_port == sm.ingress_port) { mark_to_drop(sm); }
    }
}

control RCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control RDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); pkt.emit(hdr.udp); }
}

V1Switch(RParser(), RVerify(), RIngress(), REgress(), RCompute(), RDeparser()) main;
