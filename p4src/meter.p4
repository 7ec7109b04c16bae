/* dcnlab hook: per-tenant metering.  Source host -> meter index; red packets are dropped. */
#ifndef DCNLAB_METER_P4
#define DCNLAB_METER_P4

control TenantMeter(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    meter(TENANTS, MeterType.bytes) tenant_meter;
    action meter_tenant(bit<32> index) {
        tenant_meter.execute_meter(index, meta.meter_color);
    }
    table tenant_class {
        key = { hdr.ipv4.srcAddr: exact; }
        actions = { meter_tenant; NoAction; }
        default_action = NoAction();
        size = TENANT_TABLE_SIZE;
    }
    apply {
        tenant_class.apply();
        if (meta.meter_color == 2) {
            mark_to_drop(std);
        }
    }
}

#endif
