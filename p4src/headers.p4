/* dcnlab: headers and metadata shared by every mechanism. */
#ifndef DCNLAB_HEADERS_P4
#define DCNLAB_HEADERS_P4

#include "sizes.p4"

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_UDP    = 17;
const bit<16> UDP_PORT_TREE  = 7701;   /* tree shim: multicast (C-MR4LMS) and broadcast (CISTs) */

const bit<8>  TREE_KIND_MULTICAST = 1; /* tree = the group's color; group = MGID */
const bit<8>  TREE_KIND_BROADCAST = 2; /* tree = CIST id; group = 0 */

typedef bit<9>  port_t;
typedef bit<32> ip4_t;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<6>  dscp;
    bit<2>  ecn;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    ip4_t   srcAddr;
    ip4_t   dstAddr;
}

header udp_t {
    bit<16> srcPort;
    bit<16> dstPort;
    bit<16> length;
    bit<16> checksum;
}

/* After UDP to port UDP_PORT_TREE: which tree a packet travels on.  Switches replicate by
   (ingress port, kind, tree); hosts accept multicast by group (MGID). */
header tree_t {
    bit<8>  kind;
    bit<8>  tree;
    bit<16> group;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    tree_t     tree;
}

struct metadata_t {
    bit<16> ecmp_base;      /* first ecmp_member index of the chosen group */
    bit<16> ecmp_count;     /* members in the group; 0 = no ECMP */
    bit<16> ecmp_index;     /* base + hash(5-tuple) mod count */
    bit<2>  meter_color;    /* hook: tenant meter colour (0 green, 1 yellow, 2 red) */
    bit<16> agg_tree;       /* hook: aggregation tree id, 0 = none */
    bit<19> ecn_threshold;  /* hook: egress queue depth (packets) above which ECT packets get CE */
    bit<1>  ecn_enabled;
}

#endif
