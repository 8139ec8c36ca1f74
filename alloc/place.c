/* place.c - NUMA policy and huge pages of segments (see place.h). */
#include "place.h"
#include "runtime/config.h"
#include "runtime/error.h"

#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

static void mask_set(unsigned long *mask, int node)
{
    size_t w = 8 * sizeof(unsigned long);
    if (node >= 0 && node < GAS_AL_NODEMASK_BITS)
        mask[(size_t)node / w] |= 1ul << ((size_t)node % w);
}

/* The [selected] word of a sysfs choice file, or "" when unreadable. */
static void bracketed(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char line[256];
    if (fgets(line, sizeof line, f)) {
        char *o = strchr(line, '['), *c = o ? strchr(o, ']') : NULL;
        if (o && c)
            snprintf(buf, cap, "%.*s", (int)(c - o - 1), o + 1);
    }
    fclose(f);
}

void gas_al_thp_shmem_setting(char *buf, size_t cap)
{
    bracketed(THP_DIR "/shmem_enabled", buf, cap);
    if (strcmp(buf, "deny") == 0 || strcmp(buf, "force") == 0)
        return;
    /* Kernels with per-size THP: the PMD size's own setting wins unless it inherits. */
    unsigned long long pmd = 0;
    FILE *f = fopen(THP_DIR "/hpage_pmd_size", "r");
    if (f) {
        if (fscanf(f, "%llu", &pmd) != 1)
            pmd = 0;
        fclose(f);
    }
    if (pmd) {
        char path[128], own[32];
        snprintf(path, sizeof path, THP_DIR "/hugepages-%llukB/shmem_enabled", pmd / 1024);
        bracketed(path, own, sizeof own);
        if (own[0] && strcmp(own, "inherit") != 0)
            snprintf(buf, cap, "%s", own);
    }
}

static int word_in(const char *w, const char *list)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (n && len == n && strncmp(p, w, n) == 0)
            return 1;
        if (!bar)
            break;
        p = bar + 1;
    }
    return 0;
}

static gas_status_t plan_huge(int huge, const struct gas_al_limits *l, struct gas_al_place *p)
{
    char thp[32], setting[32], where[300];
    p->huge = (enum gas_al_huge)huge;
    p->page = 4096;
    gas_al_thp_shmem_setting(thp, sizeof thp);
    if (l->dir_kind == GAS_AL_DIR_HUGETLBFS) {
        if (huge == GAS_AL_HUGE_OFF)
            return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                                "GAS_HUGEPAGES=off, but GAS_SEGMENT_DIR=%s is a hugetlbfs mount, "
                                "which only has huge pages; use a tmpfs directory or leave "
                                "GAS_SEGMENT_DIR empty",
                                l->dir);
        p->hugetlb = 1;
        p->page = l->huge_page ? l->huge_page : 2u << 20;
        snprintf(p->huge_desc, sizeof p->huge_desc, "hugetlbfs at %.200s (%llu KiB pages)", l->dir,
                 (unsigned long long)(p->page >> 10));
        return GAS_OK;
    }
    /* Transparent huge pages for this backing: the global deny/force, else the mount or shmem setting. */
    if (l->dir_kind == GAS_AL_DIR_TMPFS && !word_in(thp, "deny|force")) {
        snprintf(setting, sizeof setting, "%s", l->fs_huge[0] ? l->fs_huge : "never");
        snprintf(where, sizeof where, "the tmpfs at %.200s is mounted with huge=%s", l->dir, setting);
    } else {
        snprintf(setting, sizeof setting, "%s", thp[0] ? thp : "never");
        snprintf(where, sizeof where, THP_DIR "/shmem_enabled is %s", setting);
    }
    int thp_possible = word_in(setting, "always|within_size|advise|force");
    int thp_default = word_in(setting, "always|within_size|force");
    switch (huge) {
    case GAS_AL_HUGE_OFF:
        p->advice = MADV_NOHUGEPAGE;
        snprintf(p->huge_desc, sizeof p->huge_desc, "off (madvise NOHUGEPAGE; %s)", where);
        return GAS_OK;
    case GAS_AL_HUGE_ON:
        if (thp_possible) {
            p->advice = MADV_HUGEPAGE;
            snprintf(p->huge_desc, sizeof p->huge_desc,
                     "on: transparent huge pages (madvise HUGEPAGE; %s)", where);
            return GAS_OK;
        }
        if (l->dir_kind == GAS_AL_DIR_NONE && l->huge_total + l->huge_overcommit > 0) {
            p->hugetlb = 1;
            p->page = l->huge_page ? l->huge_page : 2u << 20;
            snprintf(p->huge_desc, sizeof p->huge_desc,
                     "on: hugetlb pages of %llu KiB from the pool (vm.nr_hugepages=%llu), "
                     "since %s",
                     (unsigned long long)(p->page >> 10), (unsigned long long)l->huge_total, where);
            return GAS_OK;
        }
        if (l->dir_kind == GAS_AL_DIR_TMPFS)
            return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                                "GAS_HUGEPAGES=on cannot be honoured: %s, which allows no "
                                "transparent huge pages; remount it with huge=advise (or "
                                "within_size), point GAS_SEGMENT_DIR at a hugetlbfs mount, or "
                                "set GAS_HUGEPAGES=auto",
                                where);
        return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                            "GAS_HUGEPAGES=on cannot be honoured: the kernel allows no "
                            "transparent huge pages for shared memory (%s) and the hugetlb pool "
                            "is empty (vm.nr_hugepages=%llu, vm.nr_overcommit_hugepages=%llu); "
                            "have either enabled (echo advise > " THP_DIR "/shmem_enabled, or "
                            "sysctl vm.nr_hugepages=N), or set GAS_HUGEPAGES=auto",
                            where, (unsigned long long)l->huge_total,
                            (unsigned long long)l->huge_overcommit);
    default:
        snprintf(p->huge_desc, sizeof p->huge_desc, "auto: %s (%s)",
                 thp_default ? "transparent huge pages by the kernel's default"
                             : "base pages, the kernel's default",
                 where);
        return GAS_OK;
    }
}

/* The nodes with memory that this process may allocate on, as a mask; count returned. */
static int allowed_mems(unsigned long *mask, char *list, size_t cap)
{
    const struct gas_rt_topo *t = gas_rt_topo();
    struct bitmask *allowed = numa_get_mems_allowed();
    int n = 0;
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < t->nnodes; i++) {
        int id = t->nodes[i].id;
        if (t->nodes[i].mem_total == 0 || (allowed && !numa_bitmask_isbitset(allowed, (unsigned)id)))
            continue;
        mask_set(mask, id);
        n++;
        int w = snprintf(list + len, cap - len, "%s%d", len ? "," : "", id);
        if (w > 0 && (size_t)w < cap - len)
            len += (size_t)w;
    }
    if (allowed)
        numa_bitmask_free(allowed);
    return n;
}

static gas_status_t plan_numa(const char *text, struct gas_al_place *p)
{
    const struct gas_rt_topo *t = gas_rt_topo();
    char nodes[160];
    const char *one = t->nnodes == 1 ? "; this machine has one NUMA node" : "";
    p->node = -1;
    p->ngroups = 1;
    p->group_node[0] = t->nodes[0].id;
    p->mpol = MPOL_DEFAULT;
    long id = -1;
    int kind = gas_rt_config_numa(text, &id);   /* refused when the configuration was read */
    if (kind < 0)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_NUMA='%s' is not one of local, interleave, node:N, none", text);
    p->numa = (enum gas_al_numa)kind;
    if (p->numa == GAS_AL_NUMA_NONE) {
        snprintf(p->numa_desc, sizeof p->numa_desc,
                 "none: a page goes to the node of the CPU that first touches it%s", one);
        return GAS_OK;
    }
    if (!t->numa) {
        if (p->numa == GAS_AL_NUMA_NODE)
            return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                                "GAS_NUMA=%s: this kernel has no NUMA support; use GAS_NUMA=local "
                                "or none",
                                text);
        snprintf(p->numa_desc, sizeof p->numa_desc,
                 "%s requested, but the kernel has no NUMA support: no policy set", text);
        return GAS_OK;
    }
    int nallowed = allowed_mems(p->nodemask, nodes, sizeof nodes);
    if (p->numa == GAS_AL_NUMA_INTERLEAVE) {
        if (nallowed == 0)
            return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                                "GAS_NUMA=interleave: no NUMA node with memory is allowed here");
        p->mpol = MPOL_INTERLEAVE;
        snprintf(p->numa_desc, sizeof p->numa_desc, "interleave over node%s %s%s",
                 nallowed > 1 ? "s" : "", nodes, one);
        return GAS_OK;
    }
    memset(p->nodemask, 0, sizeof p->nodemask);
    if (p->numa == GAS_AL_NUMA_NODE) {
        int idx = id < GAS_AL_NODEMASK_BITS ? gas_rt_topo_index_of_node((int)id) : -1;
        unsigned long allowed[sizeof p->nodemask / sizeof p->nodemask[0]] = {0};
        allowed_mems(allowed, nodes, sizeof nodes);
        size_t w = 8 * sizeof(unsigned long);
        if (idx < 0 || t->nodes[idx].mem_total == 0 ||
            !(allowed[(size_t)id / w] & (1ul << ((size_t)id % w))))
            return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                                "GAS_NUMA=%s: no such NUMA node with memory that this process "
                                "may use (it may use node%s %s)%s",
                                text, nallowed == 1 ? "" : "s", nodes, one);
        p->mpol = MPOL_BIND;
        p->node = (int)id;
        p->group_node[0] = (int)id;
        mask_set(p->nodemask, (int)id);
        snprintf(p->numa_desc, sizeof p->numa_desc, "bound to node %ld (GAS_NUMA=%s)%s", id, text,
                 one);
        return GAS_OK;
    }
    /* local: the nodes (with memory) of the CPUs this rank may run on. */
    cpu_set_t cpus;
    int idx[GAS_RT_TOPO_MAX_NODES], n = 0;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) {
        int all[GAS_RT_TOPO_MAX_NODES];
        int m = gas_rt_topo_nodes_of(&cpus, all, GAS_RT_TOPO_MAX_NODES);
        for (int i = 0; i < m; i++)
            if (t->nodes[all[i]].mem_total > 0)
                idx[n++] = all[i];
    }
    char cpulist[128];
    gas_rt_cpulist_format(&cpus, cpulist, sizeof cpulist);
    if (n == 0) {
        snprintf(p->numa_desc, sizeof p->numa_desc,
                 "local requested, but the CPUs of this rank (%s) are on no node with memory: "
                 "no policy set", cpulist);
        return GAS_OK;
    }
    p->ngroups = n;
    for (int i = 0; i < n; i++)
        p->group_node[i] = t->nodes[idx[i]].id;
    if (n == 1) {
        p->mpol = MPOL_BIND;
        p->node = p->group_node[0];
        mask_set(p->nodemask, p->node);
        snprintf(p->numa_desc, sizeof p->numa_desc, "bound to node %d, the node of CPUs %s%s",
                 p->node, cpulist, one);
        return GAS_OK;
    }
    int here = t->nodes[gas_rt_topo_index_of_cpu(sched_getcpu())].id;
    p->node = p->group_node[0];
    for (int i = 0; i < n; i++)
        if (p->group_node[i] == here)
            p->node = here;
    p->mpol = MPOL_PREFERRED;
    p->bind_extents = 1;
    mask_set(p->nodemask, p->node);
    snprintf(p->numa_desc, sizeof p->numa_desc,
             "prefers node %d: CPUs %s span %d nodes (gasrun --bind numa pins a rank to one); "
             "gas_alloc has one arena per node",
             p->node, cpulist, n);
    return GAS_OK;
}

gas_status_t gas_al_place_plan(const char *numa, int huge, const struct gas_al_limits *l,
                               struct gas_al_place *p_out)
{
    struct gas_al_place p;
    memset(&p, 0, sizeof p);
    gas_status_t st = plan_numa(numa, &p);
    if (st == GAS_OK)
        st = plan_huge(huge, l, &p);
    if (st == GAS_OK)
        *p_out = p;
    return st;
}

gas_status_t gas_al_place_apply(const struct gas_al_place *p, void *base, uint64_t len)
{
    if (p->mpol != MPOL_DEFAULT &&
        mbind(base, len, p->mpol, p->nodemask, GAS_AL_NODEMASK_BITS + 1, 0) != 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init",
                            "cannot set the segment's NUMA policy (%s): mbind: %s; set GAS_NUMA=none "
                            "to go without",
                            p->numa_desc, strerror(errno));
    if (p->advice && madvise(base, len, p->advice) != 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init",
                            "cannot apply GAS_HUGEPAGES to the segment: madvise: %s",
                            strerror(errno));
    /* Segments can be terabytes of address space: keep them out of core dumps. */
    madvise(base, len, MADV_DONTDUMP);
    return GAS_OK;
}

int gas_al_place_bind_node(void *addr, uint64_t len, int node)
{
    unsigned long mask[GAS_AL_NODEMASK_BITS / (8 * sizeof(unsigned long))] = {0};
    mask_set(mask, node);
    return mbind(addr, len, MPOL_BIND, mask, GAS_AL_NODEMASK_BITS + 1, 0) == 0 ? 0 : -errno;
}
