/*
 * test_placement - the NUMA policy and huge-page advice actually set on the
 * segments, read back from the kernel rather than trusted.
 *
 * For the policy that GAS_NUMA asks (default local) the test works out on its
 * own what the kernel should report: local -> MPOL_BIND to the node of this
 * rank's CPUs (MPOL_PREFERRED to one of them if they span several),
 * interleave -> MPOL_INTERLEAVE over the nodes with memory this process may
 * use, node:N -> MPOL_BIND to N, none -> MPOL_DEFAULT.  It then reads the
 * policy back with get_mempolicy(MPOL_F_ADDR) at the header, inside a
 * gas_malloc'ed array, inside a gas_alloc block and deep in unallocated
 * space of its own segment, and through its mapping of every node peer's
 * segment (the policy is a shared one, so a peer sees the owner's).  A page
 * that a peer touches first must land on the owner's node (MPOL_F_NODE).
 * Huge pages: /proc/self/smaps must show VmFlags "nh" with GAS_HUGEPAGES=off,
 * "hg" with on, neither with auto, on this rank's mapping and on its
 * mappings of its peers'.  gas_memory_stats must agree.
 */
#include "check.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>

#define MASK_LONGS 16

struct policy {
    int mode;
    unsigned long mask[MASK_LONGS];
};

static int me, n;

static const char *mode_name(int m)
{
    switch (m) {
    case MPOL_DEFAULT: return "default";
    case MPOL_BIND: return "bind";
    case MPOL_PREFERRED: return "preferred";
    case MPOL_INTERLEAVE: return "interleave";
    default: return "other";
    }
}

static struct policy read_policy(const void *addr)
{
    struct policy p;
    memset(&p, 0, sizeof p);
    if (get_mempolicy(&p.mode, p.mask, MASK_LONGS * 8 * sizeof(unsigned long), (void *)addr,
                      MPOL_F_ADDR) != 0)
        FAIL("get_mempolicy(%p): %s", addr, strerror(errno));
    return p;
}

static void set_bit(unsigned long *m, int node)
{
    m[node / (8 * sizeof *m)] |= 1ul << (node % (8 * sizeof *m));
}

/* What GAS_NUMA should have produced for this process; *any_of for PREFERRED. */
static struct policy expected(unsigned long *any_of)
{
    struct policy p;
    memset(&p, 0, sizeof p);
    const char *v = getenv("GAS_NUMA");
    if (v == NULL || *v == '\0')
        v = "local";
    if (numa_available() < 0 || strcmp(v, "none") == 0) {
        p.mode = MPOL_DEFAULT;
        return p;
    }
    struct bitmask *mems = numa_get_mems_allowed();
    if (strcmp(v, "interleave") == 0) {
        p.mode = MPOL_INTERLEAVE;
        for (int nd = 0; nd <= numa_max_node(); nd++)
            if (numa_bitmask_isbitset(mems, (unsigned)nd) && numa_node_size64(nd, NULL) > 0)
                set_bit(p.mask, nd);
    } else if (strncmp(v, "node:", 5) == 0) {
        p.mode = MPOL_BIND;
        set_bit(p.mask, atoi(v + 5));
    } else {
        cpu_set_t cpus;
        sched_getaffinity(0, sizeof cpus, &cpus);
        int nodes = 0, last = -1;
        for (int nd = 0; nd <= numa_max_node(); nd++) {
            int has = 0;
            for (int c = 0; c < CPU_SETSIZE && !has; c++)
                has = CPU_ISSET(c, &cpus) && numa_node_of_cpu(c) == nd;
            if (has && numa_node_size64(nd, NULL) > 0) {
                nodes++;
                last = nd;
                set_bit(any_of, nd);
            }
        }
        p.mode = nodes == 1 ? MPOL_BIND : MPOL_PREFERRED;
        if (nodes == 1)
            set_bit(p.mask, last);
    }
    numa_bitmask_free(mems);
    return p;
}

static void compare(const char *where, struct policy got, struct policy want, const unsigned long *any_of)
{
    if (want.mode == MPOL_PREFERRED) {
        int ok = got.mode == MPOL_PREFERRED;
        for (int i = 0; i < MASK_LONGS && ok; i++)
            ok = (got.mask[i] & ~any_of[i]) == 0;
        CHECK(ok, "%s: policy %s/%lx, want preferred within %lx", where, mode_name(got.mode),
              got.mask[0], any_of[0]);
        return;
    }
    CHECK(got.mode == want.mode && memcmp(got.mask, want.mask, sizeof got.mask) == 0,
          "%s: policy %s mask %lx, want %s mask %lx", where, mode_name(got.mode), got.mask[0],
          mode_name(want.mode), want.mask[0]);
}

/* The VmFlags of the mapping that starts at base, in /proc/self/smaps. */
static void vmflags(const void *base, char *out, size_t cap)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    out[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' '))
            in = a == (unsigned long)(uintptr_t)base;
        else if (in && strncmp(line, "VmFlags:", 8) == 0)
            snprintf(out, cap, "%s", line + 8);
    }
    if (f)
        fclose(f);
}

static int has_flag(const char *flags, const char *f)
{
    char pad[600];
    snprintf(pad, sizeof pad, " %s ", flags);
    char *nl = strchr(pad, '\n');
    if (nl)
        *nl = ' ';
    char want[8];
    snprintf(want, sizeof want, " %s ", f);
    return strstr(pad, want) != NULL;
}

static void check_huge(const char *who, const void *base)
{
    const char *v = getenv("GAS_HUGEPAGES");
    char flags[512];
    vmflags(base, flags, sizeof flags);
    CHECK(flags[0] != '\0', "%s: no smaps entry for the segment at %p", who, base);
    if (v && strcmp(v, "off") == 0)
        CHECK(has_flag(flags, "nh") && !has_flag(flags, "hg"), "%s: VmFlags%s lack nh", who, flags);
    else if (v && strcmp(v, "on") == 0)
        CHECK(has_flag(flags, "hg"), "%s: VmFlags%s lack hg", who, flags);
    else
        CHECK(!has_flag(flags, "hg") && !has_flag(flags, "nh"), "%s: auto, but VmFlags%s", who, flags);
    CHECK(has_flag(flags, "dd"), "%s: the segment is not excluded from core dumps (VmFlags%s)", who,
          flags);
}

static char *seg_base(int rank)
{
    char *p = gas_ptr_local(gas_ptr_make(rank, 64));
    return p ? p - 64 : NULL;
}

int main(void)
{
    test_begin("placement");
    me = t_rank;
    n = t_nranks;
    unsigned long any_of[MASK_LONGS] = {0};
    struct policy want = expected(any_of);
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    if (me == 0)
        test_note("GAS_NUMA=%s: %s; huge pages: %s", getenv("GAS_NUMA") ? getenv("GAS_NUMA") : "(local)",
                  st.numa_policy, st.hugepages);
    if (want.mode == MPOL_BIND) {
        int node = -1;
        for (int nd = 0; nd < MASK_LONGS * 64 && node < 0; nd++)
            if (want.mask[nd / 64] & (1ul << (nd % 64)))
                node = nd;
        CHECK(st.numa_node == node, "stats say node %d, want %d", st.numa_node, node);
    }
    if (numa_available() >= 0 && numa_num_configured_nodes() == 1 && want.mode != MPOL_DEFAULT)
        CHECK(strstr(st.numa_policy, "one NUMA node") != NULL,
              "one-node machine, but the description does not say so: %s", st.numa_policy);

    /* This rank's segment: header, array, gas_alloc block, unallocated depths. */
    gas_ptr_t arr, blk;
    MUST(gas_malloc((size_t)n * 65536, &arr));
    MUST(gas_alloc(65536, &blk));
    gas_layout_t l = test_layout_of(arr);
    char *base = seg_base(me);
    compare("header", read_policy(base), want, any_of);
    compare("gas_malloc'ed array", read_policy(base + l.local_offset + 4096), want, any_of);
    compare("gas_alloc block", read_policy(gas_ptr_local(blk)), want, any_of);
    compare("unallocated middle", read_policy(base + st.reserved / 2), want, any_of);
    compare("last page", read_policy(base + st.reserved - 4096), want, any_of);
    check_huge("own segment", base);

    /* Publish what the kernel says for this segment and a block for a peer to touch first. */
    struct pub {
        int32_t mode, node;
        uint64_t mask0;
        gas_ptr_t blk;
    } mine = {read_policy(base).mode, st.numa_node, read_policy(base).mask[0], blk}, theirs;
    gas_ptr_t pubs;
    MUST(gas_malloc((size_t)n * sizeof mine, &pubs));
    MUST(gas_put(test_at(pubs, (uint64_t)me * sizeof mine), &mine, sizeof mine));
    MUST(gas_barrier());
    for (int r = 0; r < n; r++) {
        if (r == me)
            continue;
        MUST(gas_get(&theirs, test_at(pubs, (uint64_t)r * sizeof theirs), sizeof theirs));
        char *pb = seg_base(r);
        if (!CHECK(pb != NULL, "rank %d's segment is not mapped here", r))
            continue;
        struct policy seen = read_policy(pb + st.reserved / 3);
        CHECK(seen.mode == theirs.mode && seen.mask[0] == theirs.mask0,
              "rank %d's segment seen from here: %s/%lx, its owner sees %s/%" PRIx64, r,
              mode_name(seen.mode), seen.mask[0], mode_name(theirs.mode), theirs.mask0);
        check_huge("a peer's segment", pb);
    }
    /* First touch by a peer: the previous rank writes this rank's block. */
    int prev = (me - 1 + n) % n, next = (me + 1) % n;
    MUST(gas_get(&theirs, test_at(pubs, (uint64_t)next * sizeof theirs), sizeof theirs));
    char page[4096];
    memset(page, 0x77, sizeof page);
    for (int k = 0; k < 16; k++)
        MUST(gas_put(theirs.blk + (uint64_t)k * 4096, page, sizeof page));
    MUST(gas_barrier());
    if (want.mode == MPOL_BIND && prev != me) {
        for (int k = 0; k < 16; k++) {
            int node = -1;
            char *addr = (char *)gas_ptr_local(blk) + k * 4096;
            get_mempolicy(&node, NULL, 0, addr, MPOL_F_NODE | MPOL_F_ADDR);
            CHECK(node == st.numa_node, "a page rank %d touched first is on node %d, not %d", prev,
                  node, st.numa_node);
        }
    }
    MUST(gas_barrier());
    CHECK_OK(gas_dealloc(blk));
    MUST(gas_free(pubs));
    MUST(gas_free(arr));
    return test_end();
}
