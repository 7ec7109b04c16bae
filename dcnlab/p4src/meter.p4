/* dcnlab: per-tenant metering, the in-network way to partition a bottleneck (the "meter
   mode" beside IB CC partitioning, Zhang et al., §5; BMv2's two-rate three-colour meters).

   tenant_class maps a packet's (IPv4 source, UDP source port) onto a tenant's meter index; the
   controller installs it at the bottleneck's switch (controller/congestion/dataplane.py), one
   entry per sending host (port mask 0) or per flow (port mask 0xffff, higher priority).  Packets
   that miss are never metered.  tenant_meter is a two-rate three-colour meter in bytes, set over
   P4Runtime (MeterConfig, bytes/s and bytes); the controller gives it CIR = PIR = the tenant's
   share, so a packet is either green or red, and red packets are dropped here, in ingress.

   Counters per tenant index (P4Runtime): tenant_packets, every classified packet; tenant_dropped,
   the red ones. */
#ifndef DCNLAB_METER_P4
#define DCNLAB_METER_P4

control TenantMeter(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    meter(TENANTS, MeterType.bytes) tenant_meter;
    counter(TENANTS, CounterType.packets_and_bytes) tenant_packets;
    counter(TENANTS, CounterType.packets_and_bytes) tenant_dropped;
    bit<32> tenant_index = 0;

    action meter_tenant(bit<32> index) {
        tenant_index = index;
        tenant_meter.execute_meter(index, meta.meter_color);
        tenant_packets.count(index);
    }
    table tenant_class {
        key = { hdr.ipv4.srcAddr: ternary; hdr.udp.srcPort: ternary; }
        actions = { meter_tenant; NoAction; }
        default_action = NoAction();
        size = TENANT_TABLE_SIZE;
    }
    apply {
        if (tenant_class.apply().hit && meta.meter_color == 2) {
            tenant_dropped.count(tenant_index);
            mark_to_drop(std);
        }
    }
}

#endif
