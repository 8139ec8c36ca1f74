/* topo.c - NUMA topology through libnuma (see topo.h). */
#include "topo.h"

#include <numa.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct gas_rt_topo topo;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

/* Without libnuma: one node 0 with every online CPU and all memory. */
static void load_flat(void)
{
    struct gas_rt_topo_node *n = &topo.nodes[0];
    memset(&topo, 0, sizeof topo);
    topo.nnodes = 1;
    n->id = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < ncpu && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, &n->cpus);
    n->ncpus = CPU_COUNT(&n->cpus);
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    long pg = sysconf(_SC_PAGESIZE);
    n->mem_total = pages > 0 ? (uint64_t)pages * (uint64_t)pg : 0;
    n->mem_free = avail > 0 ? (uint64_t)avail * (uint64_t)pg : 0;
}

static void load(void)
{
    if (numa_available() < 0) {
        load_flat();
        return;
    }
    memset(&topo, 0, sizeof topo);
    topo.numa = 1;
    topo.max_node = numa_max_node();
    struct bitmask *mask = numa_allocate_cpumask();
    for (int id = 0; id <= topo.max_node && mask; id++) {
        if (!numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)id))
            continue;
        if (topo.nnodes == GAS_RT_TOPO_MAX_NODES)
            break;
        struct gas_rt_topo_node *n = &topo.nodes[topo.nnodes++];
        n->id = id;
        long long fr = 0, total = numa_node_size64(id, &fr);
        n->mem_total = total > 0 ? (uint64_t)total : 0;
        n->mem_free = fr > 0 ? (uint64_t)fr : 0;
        if (numa_node_to_cpus(id, mask) == 0) {
            for (unsigned c = 0; c < mask->size && c < CPU_SETSIZE; c++)
                if (numa_bitmask_isbitset(mask, c))
                    CPU_SET((int)c, &n->cpus);
        }
        n->ncpus = CPU_COUNT(&n->cpus);
    }
    if (mask)
        numa_bitmask_free(mask);
    if (topo.nnodes == 0)
        load_flat();
}

const struct gas_rt_topo *gas_rt_topo(void)
{
    pthread_once(&topo_once, load);
    return &topo;
}

int gas_rt_topo_index_of_cpu(int cpu)
{
    const struct gas_rt_topo *t = gas_rt_topo();
    for (int i = 0; i < t->nnodes; i++)
        if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &t->nodes[i].cpus))
            return i;
    return 0;
}

int gas_rt_topo_index_of_node(int id)
{
    const struct gas_rt_topo *t = gas_rt_topo();
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i].id == id)
            return i;
    return -1;
}

int gas_rt_topo_nodes_of(const cpu_set_t *set, int *idx, int cap)
{
    const struct gas_rt_topo *t = gas_rt_topo();
    int n = 0;
    for (int i = 0; i < t->nnodes && n < cap; i++) {
        cpu_set_t both;
        CPU_AND(&both, set, &t->nodes[i].cpus);
        if (CPU_COUNT(&both) > 0)
            idx[n++] = i;
    }
    return n;
}

void gas_rt_cpulist_format(const cpu_set_t *set, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e == c ? snprintf(buf + len, cap - len, "%s%d", len ? "," : "", c)
                       : snprintf(buf + len, cap - len, "%s%d-%d", len ? "," : "", c, e);
        if (w < 0 || (size_t)w >= cap - len) {
            buf[cap - 1] = '\0';
            return;
        }
        len += (size_t)w;
        c = e;
    }
}
