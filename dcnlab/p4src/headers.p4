/* dcnlab: headers and metadata shared by every mechanism. */
#ifndef DCNLAB_HEADERS_P4
#define DCNLAB_HEADERS_P4

#include "sizes.p4"

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<8>  IPPROTO_UDP    = 17;
const bit<16> UDP_PORT_TREE  = 7701;   /* tree shim: multicast (C-MR4LMS) and broadcast (CISTs) */
const bit<16> UDP_PORT_AGG   = 7702;   /* aggregation protocol (p4src/aggregation.p4) */

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

/* After UDP to port UDP_PORT_AGG: one chunk of an aggregation job, a fixed vector of AGG_VALUES
   unsigned 32-bit values (p4src/aggregation.p4 documents the protocol). */
#define AGG_VALUES 16
header agg_t {
    bit<16> job;
    bit<16> tree;
    bit<32> chunk;
    bit<8>  contributor;  /* the sender's bit in the next aggregating node's bitmap */
    bit<8>  count;        /* values in use, 0..AGG_VALUES; the rest count as 0 */
    bit<1>  result;       /* a final aggregate (set by the tree's last aggregating node) */
    bit<1>  overflow;     /* some sum saturated at 2^32-1 */
    bit<1>  retx;         /* a retransmission (informational) */
    bit<5>  rsvd;
    bit<8>  pad;
    bit<32> v0;  bit<32> v1;  bit<32> v2;  bit<32> v3;
    bit<32> v4;  bit<32> v5;  bit<32> v6;  bit<32> v7;
    bit<32> v8;  bit<32> v9;  bit<32> v10; bit<32> v11;
    bit<32> v12; bit<32> v13; bit<32> v14; bit<32> v15;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    tree_t     tree;
    agg_t      agg;
}

struct metadata_t {
    bit<16> ecmp_base;      /* first ecmp_member index of the chosen group */
    bit<16> ecmp_count;     /* members in the group; 0 = no ECMP */
    bit<16> ecmp_index;     /* base + hash(5-tuple) mod count */
    bit<2>  meter_color;    /* hook: tenant meter colour (0 green, 1 yellow, 2 red) */
    bit<16> agg_tree;       /* hook: aggregation tree id, 0 = none */
    bit<1>  agg_done;       /* aggregation decided this packet's fate: skip unicast forwarding */
    bit<19> ecn_threshold;  /* hook: egress queue depth (packets) above which ECT packets get CE */
    bit<1>  ecn_enabled;
}

#endif
