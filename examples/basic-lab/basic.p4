/*
 * basic.p4 -- IPv4 forwarding by longest-prefix match (dcnlab's basic-lab example).
 *
 * Every switch looks the destination address up in one LPM table. A hit rewrites the Ethernet
 * addresses (the old destination becomes the source, the table gives the next hop's MAC),
 * decrements the TTL and picks the egress port; a miss, a non-IPv4 frame or an expiring TTL is
 * dropped. Hosts resolve their gateway statically (the topology's host commands), so the
 * switches never see ARP.
 */
#include <core.p4>
#include <v1model.p4>

typedef bit<48> mac_t;
typedef bit<32> ip4_t;
typedef bit<9>  port_t;

const bit<16> TYPE_IPV4 = 0x0800;

header eth_h {
    mac_t    dst;
    mac_t    src;
    bit<16>  type;
}

header ip4_h {
    bit<4>   version;
    bit<4>   ihl;
    bit<8>   tos;
    bit<16>  len;
    bit<16>  id;
    bit<3>   flags;
    bit<13>  frag;
    bit<8>   ttl;
    bit<8>   proto;
    bit<16>  csum;
    ip4_t    src;
    ip4_t    dst;
}

struct hdrs_t {
    eth_h  eth;
    ip4_h  ip;
}

struct meta_t { }

parser LabParser(packet_in pkt, out hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(h.eth);
        transition select(h.eth.type) {
            TYPE_IPV4: parse_ip;
            default:   accept;
        }
    }
    state parse_ip {
        pkt.extract(h.ip);
        transition accept;
    }
}

control LabVerify(inout hdrs_t h, inout meta_t m) {
    apply { }
}

control LabIngress(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    action drop() {
        mark_to_drop(sm);
    }

    action forward(mac_t next_mac, port_t port) {
        h.eth.src = h.eth.dst;
        h.eth.dst = next_mac;
        h.ip.ttl = h.ip.ttl - 1;
        sm.egress_spec = port;
    }

    table ipv4_lpm {
        key = { h.ip.dst: lpm; }
        actions = { forward; drop; }
        size = 256;
        default_action = drop();
    }

    apply {
        if (h.ip.isValid() && h.ip.ttl > 1) {
            ipv4_lpm.apply();
        } else {
            drop();
        }
    }
}

control LabEgress(inout hdrs_t h, inout meta_t m, inout standard_metadata_t sm) {
    apply { }
}

control LabChecksum(inout hdrs_t h, inout meta_t m) {
    apply {
        update_checksum(h.ip.isValid(),
            { h.ip.version, h.ip.ihl, h.ip.tos, h.ip.len, h.ip.id, h.ip.flags, h.ip.frag,
              h.ip.ttl, h.ip.proto, h.ip.src, h.ip.dst },
            h.ip.csum, HashAlgorithm.csum16);
    }
}

control LabDeparser(packet_out pkt, in hdrs_t h) {
    apply {
        pkt.emit(h.eth);
        pkt.emit(h.ip);
    }
}

V1Switch(LabParser(), LabVerify(), LabIngress(), LabEgress(), LabChecksum(), LabDeparser()) main;
