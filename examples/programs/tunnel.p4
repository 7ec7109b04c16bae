/* A tunnel for dcnlab's examples and tests: frames of etherType 0x1212 carry a small tunnel header
 * (the protocol inside and a destination id) and are forwarded on that id alone, whatever the IPv4
 * destination inside says; plain IPv4 is routed on its destination (LPM, destination MAC rewritten,
 * TTL decremented). Hosts build the tunnel frames themselves (examples/tunnel-lab/send.py). */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_TUNNEL = 0x1212;
const bit<16> TYPE_IPV4 = 0x0800;

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header tunnel_t { bit<16> proto; bit<16> dst_id; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> tos; bit<16> len; bit<16> id; bit<3> flags; bit<13> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}

struct headers_t { ethernet_t eth; tunnel_t tunnel; ipv4_t ipv4; }
struct meta_t { }

parser TParser(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { TYPE_TUNNEL: tunnel; TYPE_IPV4: ipv4; default: accept; }
    }
    state tunnel {
        pkt.extract(hdr.tunnel);
        transition select(hdr.tunnel.proto) { TYPE_IPV4: ipv4; default: accept; }
    }
    state ipv4 { pkt.extract(hdr.ipv4); transition accept; }
}

control TVerify(inout headers_t hdr, inout meta_t meta) { apply { } }

control TIngress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action drop() { mark_to_drop(sm); }
    action route(bit<48> dst_mac, bit<9> port) {
        hdr.eth.dst = dst_mac;
        sm.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action tunnel_forward(bit<9> port) { sm.egress_spec = port; }

    table ipv4_lpm {
        key = { hdr.ipv4.dst: lpm; }
        actions = { route; drop; }
        default_action = drop();
        size = 1024;
    }
    table tunnel_exact {
        key = { hdr.tunnel.dst_id: exact; }
        actions = { tunnel_forward; drop; }
        default_action = drop();
        size = 1024;
    }

    apply {
        if (hdr.tunnel.isValid()) {
            tunnel_exact.apply();
        } else if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
}

control TEgress(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control TCompute(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.tos, hdr.ipv4.len, hdr.ipv4.id, hdr.ipv4.flags,
              hdr.ipv4.frag, hdr.ipv4.ttl, hdr.ipv4.proto, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.csum, HashAlgorithm.csum16);
    }
}

control TDeparser(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.tunnel); pkt.emit(hdr.ipv4); }
}

V1Switch(TParser(), TVerify(), TIngress(), TEgress(), TCompute(), TDeparser()) main;
