/* dcnlab: switch congestion marking, the InfiniBand FECN emulated as IPv4 CE (IB CC
   partitioning, Zhang et al., §4.1 "switch side": threshold and marking rate).

   Per egress port the controller installs one ecn_config entry (controller/congestion/dataplane.py):
     threshold  queue depth in packets; an ECN-capable (ECT(0)/ECT(1)) packet whose enq_qdepth is at
                or above it is *eligible*.  The IB Threshold level 0..15 maps onto it in
                controller/congestion/params.py (depth = step * (16 - level); level 0 = no entry = off).
     every      the marking rate: one of every `every` eligible packets gets CE (IB Marking_Rate m
                -> every = m + 1, "mean number of packets between markings").
     random     0: deterministic, a per-port register counts eligible packets since the last mark and
                marks the `every`-th; 1: each eligible packet is marked with probability 1/every.
     min_bytes  IB Packet_Size (64-byte credits) in bytes: shorter packets are never marked.
   Ports without an entry never mark.  Already-CE and Not-ECT packets are never eligible.

   Counters per egress port, read by the controller over P4Runtime:
     ecn_packets   every packet that leaves the port (whatever its ECN bits or the config);
     ecn_eligible  eligible packets (over the threshold, ECT, long enough);
     ecn_marked    packets this switch marked CE.
   BMv2's enq_qdepth counts packets, not bytes (simple_switch's standard_metadata), so thresholds are in packets. */
#ifndef DCNLAB_ECN_P4
#define DCNLAB_ECN_P4

control EcnMark(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    counter(NUM_PORTS, CounterType.packets_and_bytes) ecn_packets;
    counter(NUM_PORTS, CounterType.packets_and_bytes) ecn_eligible;
    counter(NUM_PORTS, CounterType.packets_and_bytes) ecn_marked;
    register<bit<32>>(NUM_PORTS) ecn_since;   /* eligible packets since the port's last mark (every-n mode) */

    bit<32> mark_every = 1;
    bit<1>  mark_random = 0;
    bit<32> min_bytes = 0;

    action set_marking(bit<19> threshold, bit<32> every, bit<1> random_mode, bit<32> min_len) {
        meta.ecn_threshold = threshold;
        meta.ecn_enabled = 1;
        mark_every = every;
        mark_random = random_mode;
        min_bytes = min_len;
    }
    table ecn_config {
        key = { std.egress_port: exact; }
        actions = { set_marking; NoAction; }
        default_action = NoAction();
        size = NUM_PORTS;
    }
    apply {
        bit<32> port = (bit<32>)std.egress_port;
        ecn_packets.count(port);
        if (hdr.ipv4.isValid()) {
            ecn_config.apply();
            if (meta.ecn_enabled == 1 && (hdr.ipv4.ecn == 1 || hdr.ipv4.ecn == 2)
                && std.enq_qdepth >= meta.ecn_threshold && std.packet_length >= min_bytes) {
                ecn_eligible.count(port);
                bit<1> mark = 0;
                if (mark_random == 1) {
                    bit<32> draw;
                    random(draw, 0, mark_every - 1);
                    if (draw == 0) {
                        mark = 1;
                    }
                } else {
                    bit<32> since;
                    ecn_since.read(since, port);
                    since = since + 1;
                    if (since >= mark_every) {
                        mark = 1;
                        since = 0;
                    }
                    ecn_since.write(port, since);
                }
                if (mark == 1) {
                    hdr.ipv4.ecn = 3;
                    ecn_marked.count(port);
                }
            }
        }
    }
}

#endif
