/*
 * topo.h - this node's NUMA topology (through libnuma) and where the calling
 * process may run.
 *
 * Loaded once per process; on a kernel without NUMA support, or where libnuma
 * cannot read the topology, the node is described as one node 0 holding every
 * CPU and `numa` is 0, so callers never need a second code path.
 */
#ifndef GAS_RT_TOPO_H
#define GAS_RT_TOPO_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#define GAS_RT_TOPO_MAX_NODES 64   /* nodes beyond this are not described */

struct gas_rt_topo_node {
    int id;                 /* kernel node number */
    int ncpus;              /* online CPUs on it */
    uint64_t mem_total;     /* bytes of memory on it (0: a memory-less node) */
    uint64_t mem_free;
    cpu_set_t cpus;
};

struct gas_rt_topo {
    int numa;               /* 1 when the kernel has NUMA support and libnuma works */
    int nnodes;             /* nodes listed in `nodes` (>= 1) */
    int max_node;           /* the highest node number the kernel knows */
    struct gas_rt_topo_node nodes[GAS_RT_TOPO_MAX_NODES];
};

/* The topology, read on first use (thread-safe). */
const struct gas_rt_topo *gas_rt_topo(void);

/* Index into gas_rt_topo()->nodes of the node that holds `cpu` (0 if unknown). */
int gas_rt_topo_index_of_cpu(int cpu);

/* Index of kernel node `id` in gas_rt_topo()->nodes, or -1. */
int gas_rt_topo_index_of_node(int id);

/*
 * Which nodes the CPUs in `set` lie on: fills idx[] (indices into nodes, in
 * order, at most cap) and returns how many.
 */
int gas_rt_topo_nodes_of(const cpu_set_t *set, int *idx, int cap);

/* "0-3,8,10-11" for the CPUs in set (empty string when none). */
void gas_rt_cpulist_format(const cpu_set_t *set, char *buf, size_t cap);

#endif
