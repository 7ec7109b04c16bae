/* A per-port packet counter for dcnlab's examples and tests: every frame that enters the switch adds
 * one to `rx_packets[ingress port]`, a register that the controller reads over Thrift
 * (`register_read CIngress.rx_packets 1` in simple_switch_CLI); IPv4 is then routed on its
 * destination (LPM, destination MAC rewritten, TTL decremented). */
#include <core.p4>
#include <v1model.p4>

const bit<32> PORTS = 64;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}

struct headers_t { ethernet_t eth; ipv4_t ipv4; }
struct meta_t { }

parser CParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control CVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control CIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(PORTS) rx_packets;

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
        bit<32> slot = (bit<32>)sm.ingress_port;
        if (slot < PORTS) {
            bit<32> n;
            rx_packets.read(n, slot);
            rx_packets.write(slot, n + 1);
        }
        if (hdr.ipv4.isValid()) { ipv4_lpm.apply(); } else { drop(); }
    }
}

control CEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control CCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control CDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.ipv4); }
}

V1Switch(CParser(), CVerify(), CIngress(), CEgress(), CCompute(), CDeparser()) main;
