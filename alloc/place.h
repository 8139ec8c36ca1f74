/*
 * place.h - where a segment's pages go: the NUMA policy (GAS_NUMA) and huge
 * pages (GAS_HUGEPAGES).
 *
 * The NUMA policy is set with mbind() on the owner's mapping before any page
 * is touched.  On a memfd or tmpfs segment it is a shared policy, kept with
 * the object rather than the mapping: a page that a node peer touches first
 * through its own mapping still lands where the owner's policy says.
 *
 *   local       bind to the node of the rank's CPUs (gasrun --bind pins them);
 *               a rank whose CPUs span several nodes prefers the node it
 *               starts on, and gets one gas_alloc arena per node
 *   interleave  spread pages round-robin over every node this process may use
 *   node:N      bind to node N
 *   none        no policy: a page goes to the node of whoever touches it first
 *
 * Huge pages: `auto` leaves the kernel's default for the backing (transparent
 * huge pages for shmem only when /sys/kernel/mm/transparent_hugepage/
 * shmem_enabled, or the tmpfs mount's huge= option, says always); `on` asks
 * for them (madvise(MADV_HUGEPAGE), or the hugetlb pool when transparent
 * huge pages are not allowed for shared memory and the pool has pages), and
 * fails at gas_init naming the setting when neither is possible; `off`
 * refuses them (MADV_NOHUGEPAGE).  With huge pages every first touch backs a
 * whole huge page, which is why auto does not ask for them: sparse use of a
 * large reservation would cost 512 times the memory.
 */
#ifndef GAS_AL_PLACE_H
#define GAS_AL_PLACE_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

#include "limits.h"
#include "runtime/topo.h"

/* In gas_rt_config_numa's order (runtime/config.h): GAS_NUMA is read by it. */
enum gas_al_numa { GAS_AL_NUMA_LOCAL, GAS_AL_NUMA_INTERLEAVE, GAS_AL_NUMA_NODE, GAS_AL_NUMA_NONE };
enum gas_al_huge { GAS_AL_HUGE_AUTO = 0, GAS_AL_HUGE_ON = 1, GAS_AL_HUGE_OFF = 2 }; /* GAS_HUGEPAGES order */

#define GAS_AL_NODEMASK_BITS 1024

struct gas_al_place {
    enum gas_al_numa numa;
    int mpol;                              /* MPOL_* for the segment; MPOL_DEFAULT: none set */
    unsigned long nodemask[GAS_AL_NODEMASK_BITS / (8 * sizeof(unsigned long))];
    int node;                              /* the node bound to or preferred, else -1 */
    int ngroups;                           /* arena groups: one per node of the rank's CPUs */
    int group_node[GAS_RT_TOPO_MAX_NODES]; /* their kernel node numbers */
    int bind_extents;                      /* bind each group's extents to its node */
    char numa_desc[384];

    enum gas_al_huge huge;
    int advice;                            /* 0, MADV_HUGEPAGE or MADV_NOHUGEPAGE */
    int hugetlb;                           /* backed by hugetlb pages */
    uint64_t page;                         /* the backing's page size */
    char huge_desc[512];
};

/*
 * Decide both from GAS_NUMA's text and GAS_HUGEPAGES (enum gas_al_huge) for
 * a segment backed as l describes.  Errors name the variable and the reason.
 */
gas_status_t gas_al_place_plan(const char *numa, int huge, const struct gas_al_limits *l,
                               struct gas_al_place *p_out);

/* Apply both to a fresh mapping of len bytes (before any page is touched). */
gas_status_t gas_al_place_apply(const struct gas_al_place *p, void *base, uint64_t len);

/* Bind [addr, addr + len) to one node (a per-node arena's extent); 0 or -errno. */
int gas_al_place_bind_node(void *addr, uint64_t len, int node);

/* The effective transparent-huge-page setting for shmem ("never", "advise", ...). */
void gas_al_thp_shmem_setting(char *buf, size_t cap);

#endif
