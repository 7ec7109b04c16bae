/* dcnlab: sizes of every table, register, counter and meter.  BMv2 allocates a table's entries
   and a register's cells when it loads the program, so the controller compiles the program with
   sizes fitted to the fabric (p4src/sizing.py passes -DNAME=value to p4c); these defaults fit the
   largest fabric dcnlab emulates. */
#ifndef DCNLAB_SIZES_P4
#define DCNLAB_SIZES_P4

#ifndef NUM_PORTS
#define NUM_PORTS 64            /* port counters: ports 0..NUM_PORTS-1 */
#endif
#ifndef HOST_TABLE_SIZE
#define HOST_TABLE_SIZE 4096    /* ipv4_host: one entry per destination host */
#endif
#ifndef ECMP_TABLE_SIZE
#define ECMP_TABLE_SIZE 1024    /* ecmp_member: members of every distinct uplink group */
#endif
#ifndef TREE_TABLE_SIZE
#define TREE_TABLE_SIZE 1024    /* tree_replicate: (ingress port, kind, tree) */
#endif
#ifndef AGG_SLOTS
#define AGG_SLOTS 1024          /* aggregation register slots */
#endif
#ifndef AGG_TABLE_SIZE
#define AGG_TABLE_SIZE 1024     /* aggregation classification entries */
#endif
#ifndef TENANTS
#define TENANTS 64              /* tenant meters */
#endif
#ifndef TENANT_TABLE_SIZE
#define TENANT_TABLE_SIZE 1024  /* tenant_class: source host -> tenant */
#endif

#endif
