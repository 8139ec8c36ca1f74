/* node.h - which ranks share a node (and so can share memory). */
#ifndef GAS_RT_NODE_H
#define GAS_RT_NODE_H
#include <stdint.h>

/*
 * A 64-bit identity of "this node" for the purpose of sharing memory: equal
 * for two processes exactly when they run under the same kernel boot, in the
 * same network namespace, with the same host name.  (Processes in different
 * network namespaces count as different hosts, which is how multi-host tests
 * run on one machine.)
 */
uint64_t gas_rt_node_id(void);

/* Online CPUs of this machine (at least 1). */
int gas_rt_node_cpus(void);

/* The CPUs this process may run on (its affinity mask; at least 1). */
int gas_rt_usable_cpus(void);

/*
 * A 64-bit identity of "the CPUs this process competes for": equal for two
 * processes under the same kernel boot with the same affinity mask, whatever
 * their network namespace or host name (network namespaces and containers on
 * one machine share its CPUs; gas_rt_node_id keeps them apart).  Processes
 * with different masks are taken to run on different CPUs.
 */
uint64_t gas_rt_cpu_key(void);
#endif
