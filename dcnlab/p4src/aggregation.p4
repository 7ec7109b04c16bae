/* dcnlab: in-network aggregation of incast and shuffle trees (IRS/SRS (Guo et al.) §4.1 and M2
   (Fang et al.) §4.2; SwitchML's slot/bitmap scheme, Sapio et al., NSDI 2021).  The controller side is
   controller/aggregation/dataplane.py,
   the host side traffic/aggregation_agent.py.

   Wire format: Ether / IPv4 (no options) / UDP to UDP_PORT_AGG (7702), checksum 0 / agg_t (headers.p4):
     job, tree       which tree of which job (16 bits each)
     chunk           chunk number; chunk c of a tree aggregates in slot base + (c & mask)
     contributor     0..31: the sender's bit in the bitmap of the next aggregating node
     count           values in use (0..AGG_VALUES); values past count are taken as 0
     result          1 = a final aggregate, only forwarded
     overflow        some sum is at the ceiling 2^32-1 (saturated)
     v0..v15         AGG_VALUES = 16 unsigned 32-bit values (a 118-byte frame in all)

   agg_route, installed by the controller per node of a tree, maps (job, tree, result, ingress port) to
     agg_aggregate(base, mask, expected, out_contributor, final, port): add the chunk into the slot, and
         when the bitmap of contributors equals `expected`, send the sum on `port` (towards the parent)
         as contributor `out_contributor`, with result = `final`, and free the slot;
     agg_forward(port): a node of the tree that does not aggregate (a BCube switch, a relay, a server
         whose only input is its own host) sends the chunk on unchanged;
     agg_drop.
   A miss sends an ordinary chunk (result 0) to unicast forwarding and drops a result: results only
   travel where the controller put them.  (The no-aggregation baseline installs agg_forward entries
   along its paths, so that its chunks, too, take the model's paths and are counted.)

   Slot state, one cell per slot (registers; BMv2 serves them over Thrift only):
     agg_tag     job ++ 16w0 ++ chunk of the slot's current (or last) chunk
     agg_bitmap  contributors added so far; 0 = free
     agg_flags   bit 0: overflow (a sum at the ceiling, or a contributor said so)
     agg_value   the slot's AGG_VALUES = 16 partial sums in one bit<512> cell, lane i in bits 32i+31..32i
                 (one register access per chunk, not 16: BMv2 pays per primitive; BMv2's Thrift
                 register API is 64-bit, so these cells are read through the aggregates, not over Thrift)
   Rules for a chunk c of job j arriving at slot s (all in one action, `aggregate_chunk`, because BMv2
   locks every register an action touches for the whole action: the read-add-write of the sums and the
   bitmap update are atomic together):
     * same job and c older than the slot's chunk: stale (a straggler of a finished chunk), dropped and
       nothing changes;
     * another job, a newer chunk, or a free slot: the slot starts over for c (a newer chunk evicts a
       stale partial: hosts never send chunk c + slots before chunk c is complete at the receiver);
     * the contributor's bit already set: a duplicate or a retransmission, dropped, never added twice;
     * otherwise the values are added with saturation: a + b > 2^32-1 gives 2^32-1, never a wrapped
       value.  A slot with a lane at 2^32-1 raises the overflow flag, which travels with the
       aggregate to the receiver (a sum of exactly 2^32-1 cannot be told from a saturated one, so it
       is flagged too).  For non-negative values saturating addition is associative, so the receiver
       gets min(sum, 2^32-1) in every lane whatever the tree, and the flag iff some lane is 2^32-1.
   A completed slot is freed (bitmap 0; the sums and flags stay but count for nothing, since the next
   chunk in the slot starts over) and keeps its tag, so a late copy of the chunk is told from an older one.

   Robustness: a chunk whose frame is short (hdr.agg not extracted), whose UDP length is not exactly
   8 + 76 bytes, whose IPv4 header has options or whose count exceeds AGG_VALUES, and, at an
   aggregating node, a chunk whose contributor is not below 32 or not in the slot's expected set, or
   whose slot would fall outside the registers, is counted as malformed and dropped before any
   register is touched: a bad packet can change no slot (and a well-formed one only its own).

   Retransmissions are marked: hosts set `retx` on chunks they resend, forwarding keeps it, and an
   aggregate carries retx = 1 when its slot had already completed that chunk once and aggregated it
   again (agg_flags bit 1; the first aggregate of a chunk is retx = 0 even if a resent chunk completed
   it).  So the chunks with retx = 0 are the traffic of the trees, one stream per hop as the model has
   it, and those with retx = 1 the traffic of loss recovery.

   Counters (P4Runtime): agg_packets per outcome (AGG_* below); agg_port_in per ingress port and
   agg_port_out per port the aggregation logic sends on (emitted and forwarded chunks, counted in
   ingress), both at index 2 * port + retx: aggregation traffic only, so link measurements leave the
   hosts' control traffic out, and recovery traffic apart. */
#ifndef DCNLAB_AGGREGATION_P4
#define DCNLAB_AGGREGATION_P4

#define AGG_MAX_INPUTS 32
#define AGG_UDP_LENGTH 84       /* 8 (UDP) + 12 (agg_t fields) + 4 * AGG_VALUES */

const bit<32> AGG_ADDED = 0;      /* added; the slot waits for more contributors */
const bit<32> AGG_EMITTED = 1;    /* completed: the aggregate left towards the parent */
const bit<32> AGG_DUPLICATE = 2;  /* contributor already in the slot: dropped */
const bit<32> AGG_STALE = 3;      /* older than the slot's chunk: dropped */
const bit<32> AGG_MALFORMED = 4;  /* truncated, bad length or fields, contributor not expected: dropped */
const bit<32> AGG_FORWARDED = 5;  /* agg_forward on a tree */
const bit<32> AGG_UNMATCHED = 6;  /* no agg_route entry: unicast forwarding (results: dropped) */
const bit<32> AGG_SATURATED = 7;  /* emitted with the overflow flag (also counted as emitted) */
const bit<32> AGG_DROPPED = 8;    /* agg_drop */
#define AGG_OUTCOMES 16

/* One lane of aggregate_chunk, branch-free (p4c turns every ?: into jumps), two primitives: the old sum
   (lane i of the slot's row; the row is 0 when the slot starts over) plus the value (0 past `count`,
   and when the chunk is not added), in 33 bits; a carry saturates the lane at 2^32-1. */
#define AGG_LANE(i, hi, lo) \
        wide = (bit<33>)row[hi:lo] + (bit<33>)(hdr.agg.v##i & (32w0 - (bit<32>)lanes[i:i])); \
        hdr.agg.v##i = wide[31:0] | (32w0 - (bit<32>)wide[32:32]);

control Aggregation(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    register<bit<512>>(AGG_SLOTS) agg_value;     /* a slot's 16 sums; lane i = bits 32i+31..32i */
    register<bit<32>>(AGG_SLOTS) agg_bitmap;
    register<bit<64>>(AGG_SLOTS) agg_tag;
    register<bit<8>>(AGG_SLOTS) agg_flags;
    counter(AGG_OUTCOMES, CounterType.packets_and_bytes) agg_packets;
    counter(2 * NUM_PORTS, CounterType.packets_and_bytes) agg_port_in;    /* 2 * port + retx */
    counter(2 * NUM_PORTS, CounterType.packets_and_bytes) agg_port_out;   /* 2 * port + retx */

    bit<32> base = 0;
    bit<32> mask = 0;
    bit<32> slot = 0;
    bit<32> expected = 0;
    bit<32> contributor_bit = 0;
    bit<8>  out_contributor = 0;
    bit<1>  final_hop = 0;
    port_t  out_port = 0;
    bit<32> outcome = AGG_MALFORMED;

    action agg_aggregate(bit<32> slot_base, bit<32> slot_mask, bit<32> expected_bitmap, bit<8> out_id,
                         bit<1> is_final, port_t port) {
        base = slot_base;
        mask = slot_mask;
        slot = slot_base + (hdr.agg.chunk & slot_mask);
        expected = expected_bitmap;
        out_contributor = out_id;
        final_hop = is_final;
        out_port = port;
    }
    action agg_forward(port_t port) {
        std.egress_spec = port;
        out_port = port;
        outcome = AGG_FORWARDED;
    }
    action agg_drop() {
        mark_to_drop(std);
        outcome = AGG_DROPPED;
    }
    table agg_route {
        key = {
            hdr.agg.job: exact;
            hdr.agg.tree: exact;
            hdr.agg.result: exact;
            std.ingress_port: exact;
        }
        actions = { agg_aggregate; agg_forward; agg_drop; NoAction; }
        default_action = NoAction();
        size = AGG_TABLE_SIZE;
    }

    /* The whole slot update: one action, so BMv2 holds every register's lock throughout. */
    action aggregate_chunk() {
        bit<64> tag;
        bit<32> bitmap;
        bit<8>  flags;
        agg_tag.read(tag, slot);
        agg_bitmap.read(bitmap, slot);
        agg_flags.read(flags, slot);
        bool same_job = tag[63:48] == hdr.agg.job;
        bool stale = same_job && hdr.agg.chunk < tag[31:0];
        bool fresh = !stale && (!same_job || hdr.agg.chunk > tag[31:0] || bitmap == 0);
        bit<32> current = fresh ? 32w0 : bitmap;
        bool add = !stale && (current & contributor_bit) == 0;
        bit<32> merged = add ? (current | contributor_bit) : current;
        bool done = add && merged == expected;
        bit<16> lanes = add ? (16w1 << hdr.agg.count) - 1 : 16w0;  /* lanes to add (count 16: all) */
        bit<512> row;
        bit<33> wide;
        agg_value.read(row, slot);
        row = fresh ? 512w0 : row;                              /* the slot starts over */
        AGG_LANE(0, 31, 0)
        AGG_LANE(1, 63, 32)
        AGG_LANE(2, 95, 64)
        AGG_LANE(3, 127, 96)
        AGG_LANE(4, 159, 128)
        AGG_LANE(5, 191, 160)
        AGG_LANE(6, 223, 192)
        AGG_LANE(7, 255, 224)
        AGG_LANE(8, 287, 256)
        AGG_LANE(9, 319, 288)
        AGG_LANE(10, 351, 320)
        AGG_LANE(11, 383, 352)
        AGG_LANE(12, 415, 384)
        AGG_LANE(13, 447, 416)
        AGG_LANE(14, 479, 448)
        AGG_LANE(15, 511, 480)
        agg_value.write(slot, hdr.agg.v15 ++ hdr.agg.v14 ++ hdr.agg.v13 ++ hdr.agg.v12 ++ hdr.agg.v11
                              ++ hdr.agg.v10 ++ hdr.agg.v9 ++ hdr.agg.v8 ++ hdr.agg.v7 ++ hdr.agg.v6
                              ++ hdr.agg.v5 ++ hdr.agg.v4 ++ hdr.agg.v3 ++ hdr.agg.v2 ++ hdr.agg.v1 ++ hdr.agg.v0);
        /* a lane at the ceiling: saturated (an exact 2^32-1 looks the same and is flagged too) */
        bit<1> ovf = (hdr.agg.v0 == 32w0xFFFFFFFF || hdr.agg.v1 == 32w0xFFFFFFFF || hdr.agg.v2 == 32w0xFFFFFFFF
               || hdr.agg.v3 == 32w0xFFFFFFFF || hdr.agg.v4 == 32w0xFFFFFFFF || hdr.agg.v5 == 32w0xFFFFFFFF
               || hdr.agg.v6 == 32w0xFFFFFFFF || hdr.agg.v7 == 32w0xFFFFFFFF || hdr.agg.v8 == 32w0xFFFFFFFF
               || hdr.agg.v9 == 32w0xFFFFFFFF || hdr.agg.v10 == 32w0xFFFFFFFF || hdr.agg.v11 == 32w0xFFFFFFFF
               || hdr.agg.v12 == 32w0xFFFFFFFF || hdr.agg.v13 == 32w0xFFFFFFFF || hdr.agg.v14 == 32w0xFFFFFFFF
               || hdr.agg.v15 == 32w0xFFFFFFFF) ? 1w1 : hdr.agg.overflow;
        /* bit 1: the slot aggregates again a chunk it has completed (its aggregate is a retransmission) */
        bit<8> restart = (same_job && hdr.agg.chunk == tag[31:0] && bitmap == 0) ? 8w2 : 8w0;
        bit<8> new_flags = add ? ((fresh ? restart : flags) | (7w0 ++ ovf)) : flags;
        agg_bitmap.write(slot, done ? 32w0 : merged);
        agg_tag.write(slot, stale ? tag : (hdr.agg.job ++ 16w0 ++ hdr.agg.chunk));
        agg_flags.write(slot, new_flags);
        hdr.agg.overflow = new_flags[0:0];
        hdr.agg.retx = new_flags[1:1];
        outcome = stale ? AGG_STALE : (add ? (done ? AGG_EMITTED : AGG_ADDED) : AGG_DUPLICATE);
    }

    action malformed() {
        mark_to_drop(std);
        outcome = AGG_MALFORMED;
    }

    apply {
        if (hdr.udp.isValid() && hdr.udp.dstPort == UDP_PORT_AGG) {
            meta.agg_done = 1;
            if (!hdr.agg.isValid() || hdr.ipv4.ihl != 5 || hdr.udp.length != AGG_UDP_LENGTH
                || hdr.agg.count > AGG_VALUES) {
                malformed();
            } else {
                agg_port_in.count((bit<31>)std.ingress_port ++ hdr.agg.retx);
                meta.agg_tree = hdr.agg.tree;
                contributor_bit = 32w1 << hdr.agg.contributor;
                switch (agg_route.apply().action_run) {
                    agg_aggregate: {
                        if (hdr.agg.contributor >= AGG_MAX_INPUTS || (expected & contributor_bit) == 0
                            || base >= AGG_SLOTS || mask >= AGG_SLOTS || slot >= AGG_SLOTS) {
                            malformed();
                        } else {
                            aggregate_chunk();
                            if (outcome == AGG_EMITTED) {
                                hdr.agg.contributor = out_contributor;
                                hdr.agg.result = final_hop;
                                hdr.udp.checksum = 0;
                                std.egress_spec = out_port;
                                if (hdr.agg.overflow == 1) {
                                    agg_packets.count(AGG_SATURATED);
                                }
                            } else {
                                mark_to_drop(std);
                            }
                        }
                    }
                    agg_forward: { }
                    agg_drop: { }
                    default: {
                        outcome = AGG_UNMATCHED;
                        if (hdr.agg.result == 1) {
                            mark_to_drop(std);
                        } else {
                            meta.agg_done = 0;
                        }
                    }
                }
            }
            agg_packets.count(outcome);
            if (outcome == AGG_EMITTED || outcome == AGG_FORWARDED) {
                agg_port_out.count((bit<31>)out_port ++ hdr.agg.retx);
            }
        }
    }
}

#endif
