/*
 * limits.h - what bounds a segment: the address space a process may map, and
 * the memory that can back the pages it touches.
 *
 * A segment is a reservation: mapping it costs address space only, and every
 * page is backed when first touched.  Two different budgets apply:
 *
 *  - Address space.  Every rank maps the whole segment of every rank on its
 *    node (peers are mapped on first contact), so a rank needs
 *    (ranks on the node) x (segment size) of it: within the user address
 *    space (2^47 bytes on x86-64) and RLIMIT_AS (ulimit -v).
 *  - Backing memory.  A memfd page comes from the kernel's internal shmem
 *    mount, not /dev/shm: it is bounded by the machine's memory (shmem pages
 *    cannot be dropped, and swapped only where there is swap), the memory
 *    cgroup's limit, and the overcommit policy (vm.overcommit_memory=2 counts
 *    every page of a memfd).  A segment in GAS_SEGMENT_DIR is bounded by that
 *    file system's size too (tmpfs), or by the hugetlb pool (hugetlbfs).
 *
 * When backing a page fails on first touch, the toucher gets SIGBUS (memory,
 * tmpfs or hugetlb pool exhausted, overcommit refused) or the kernel's OOM
 * killer ends a process (memory cgroup or machine out of memory): see
 * alloc/fault.h.  GAS_PREFAULT=y backs allocations when they are made, after
 * checking these limits, so that they fail with an error instead.
 */
#ifndef GAS_AL_LIMITS_H
#define GAS_AL_LIMITS_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

#define GAS_AL_NO_LIMIT UINT64_MAX

enum gas_al_dir_kind { GAS_AL_DIR_NONE = 0, GAS_AL_DIR_TMPFS = 1, GAS_AL_DIR_HUGETLBFS = 2 };

struct gas_al_limits {
    /* the machine */
    uint64_t ram_total, swap_total;
    int overcommit;                 /* vm.overcommit_memory */
    /* the memory cgroup (cgroup v1 or v2) */
    uint64_t cg_limit;              /* effective limit, GAS_AL_NO_LIMIT when none */
    char cg_limit_file[560];        /* where it is set */
    char cg_usage_file[560];        /* what counts against it */
    /* the process */
    uint64_t as_limit;              /* RLIMIT_AS, GAS_AL_NO_LIMIT when none */
    uint64_t va_top;                /* end of the user address space */
    uint64_t vm_size;               /* address space in use when read */
    long max_map_count;             /* vm.max_map_count */
    /* GAS_SEGMENT_DIR */
    enum gas_al_dir_kind dir_kind;
    char dir[4096];
    uint64_t fs_size;               /* bytes the file system may hold */
    char fs_huge[16];               /* tmpfs huge= mount option ("" when absent) */
    /* the hugetlb pool (default huge page size) */
    uint64_t huge_page;             /* bytes per huge page */
    uint64_t huge_total, huge_overcommit;  /* pages: vm.nr_hugepages, vm.nr_overcommit_hugepages */
};

/*
 * Read the limits; dir is GAS_SEGMENT_DIR ("" for memfd).  GAS_ERR_INVALID
 * with a message naming GAS_SEGMENT_DIR when it is unusable.
 */
gas_status_t gas_al_limits_read(const char *dir, struct gas_al_limits *l);

/*
 * Is there room to back `bytes` more now (hugetlb: in huge pages)?  0, or -1
 * with `why` naming the limit that is short and what to change.
 */
int gas_al_limits_room(const struct gas_al_limits *l, int hugetlb, uint64_t bytes, char *why,
                       size_t cap);

/* One sentence: what bounds the backing of this rank's segment. */
void gas_al_limits_describe(const struct gas_al_limits *l, int hugetlb, char *buf, size_t cap);

/*
 * The segment size: `requested` (GAS_SEGMENT_SIZE, 0 = auto) checked against
 * the address-space budget of local_ranks ranks per node, or chosen from it.
 * page is the backing's page size, window the largest offset a pointer can
 * carry.  Errors name GAS_SEGMENT_SIZE (or GAS_SEGMENT_DIR, vm.max_map_count)
 * and the limit.  warn: log the warnings (one rank per node is enough).
 */
gas_status_t gas_al_segment_size_plan(const struct gas_al_limits *l, uint64_t requested,
                                      int local_ranks, uint64_t window, uint64_t page, int warn,
                                      uint64_t *size_p);

/* The most address space the segments of a node's ranks may take (for messages and gas-info). */
uint64_t gas_al_va_budget(const struct gas_al_limits *l);

#endif
