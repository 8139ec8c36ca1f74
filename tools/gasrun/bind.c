/*
 * bind.c - where each rank on this host may run: --bind-to core|numa|none
 * (also accepted as --bind core|numa|none; any other --bind value is the
 * rendezvous address, see options.c).
 *
 *   core   one CPU per rank, in the order node, then physical core (the
 *          second hardware thread of a core only once every core has one
 *          rank), wrapping around when there are more ranks than CPUs
 *   numa   all CPUs of one NUMA node per rank; ranks are dealt to nodes in
 *          blocks (ranks 0..k-1 on the first node, ...), so neighbours share
 *          a node
 *   none   gasrun's own CPU set, unchanged
 *
 * Only the CPUs gasrun itself may use are handed out, to the ranks gasrun
 * forks on its own host (by their local rank); ranks started on other hosts
 * through the launcher keep the CPU set it gives them.  The default is numa
 * when those CPUs span several NUMA nodes, else none: on one node, pinning
 * buys nothing and hurts when other jobs share the machine.  A rank's memory
 * follows its CPUs: libgas binds each segment to the node of its rank's CPUs
 * (GAS_NUMA=local).  The topology comes from libnuma.
 */
#include "gasrun.h"
#include "log.h"

#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[] = {"default", "none", "core", "numa"};

int gr_bind_parse(const char *arg, int *bind_p)
{
    for (int i = GR_BIND_NONE; i <= GR_BIND_NUMA; i++) {
        if (strcmp(arg, names[i]) == 0) {
            *bind_p = i;
            return 0;
        }
    }
    return -1;
}

static int node_of(int cpu)
{
    int nd = numa_available() >= 0 ? numa_node_of_cpu(cpu) : 0;
    return nd < 0 ? 0 : nd;
}

/* Position of cpu among the hardware threads of its core (0 for the first). */
static int thread_index(int cpu)
{
    char path[96], buf[256];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
    FILE *f = fopen(path, "r");
    int idx = 0;
    if (f && fgets(buf, sizeof buf, f)) {
        /* "3,35" or "2-3": count the siblings listed before cpu. */
        for (char *p = buf; *p && *p != '\n';) {
            char *end;
            long a = strtol(p, &end, 10), b = a;
            if (end == p)
                break;
            if (*end == '-')
                b = strtol(end + 1, &end, 10);
            for (long c = a; c <= b; c++)
                idx += c < cpu;
            p = *end == ',' ? end + 1 : end;
        }
    }
    if (f)
        fclose(f);
    return idx;
}

struct cpu_key {
    int cpu, node, thread;
};

static int cmp_cpu(const void *a, const void *b)
{
    const struct cpu_key *x = a, *y = b;
    if (x->node != y->node)
        return x->node - y->node;
    if (x->thread != y->thread)
        return x->thread - y->thread;
    return x->cpu - y->cpu;
}

int gr_bind_plan(struct gr_job *job)
{
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
        job->cpu_bind = GR_BIND_NONE;
        return 0;
    }
    int ncpu = CPU_COUNT(&mine);
    struct cpu_key *cpus = calloc((size_t)ncpu + 1, sizeof *cpus);
    if (cpus == NULL)
        return -1;
    int k = 0, nodes[CPU_SETSIZE], nnodes = 0;
    for (int c = 0; c < CPU_SETSIZE && k < ncpu; c++) {
        if (!CPU_ISSET(c, &mine))
            continue;
        cpus[k] = (struct cpu_key){c, node_of(c), thread_index(c)};
        int seen = 0;
        for (int i = 0; i < nnodes; i++)
            seen |= nodes[i] == cpus[k].node;
        if (!seen)
            nodes[nnodes++] = cpus[k].node;
        k++;
    }
    ncpu = k;
    qsort(cpus, (size_t)ncpu, sizeof *cpus, cmp_cpu);
    for (int i = 1; i < nnodes; i++)   /* ascending node order */
        for (int j = i; j > 0 && nodes[j - 1] > nodes[j]; j--) {
            int t = nodes[j];
            nodes[j] = nodes[j - 1];
            nodes[j - 1] = t;
        }
    job->cpu_bind = job->opts.cpu_bind ? job->opts.cpu_bind
                  : nnodes > 1 ? GR_BIND_NUMA : GR_BIND_NONE;
    gr_info("binding: %s (%d CPUs on %d NUMA node%s)%s", names[job->cpu_bind], ncpu, nnodes,
            nnodes == 1 ? "" : "s", job->opts.cpu_bind ? "" : ", the default here");
    /* The ranks gasrun forks here: those of the local host. */
    int nlocal = 0;
    for (int h = 0; h < job->nhosts; h++)
        if (job->hosts[h].local)
            nlocal = job->hosts[h].nranks;
    if (job->cpu_bind == GR_BIND_NONE || ncpu == 0 || nlocal == 0) {
        free(cpus);
        return 0;
    }
    job->cpusets = calloc((size_t)nlocal, sizeof *job->cpusets);
    if (job->cpusets == NULL) {
        free(cpus);
        return -1;
    }
    if (job->cpu_bind == GR_BIND_CORE && nlocal > ncpu)
        gr_msg("--bind core: %d ranks on %d CPUs, so some CPUs run several ranks", nlocal,
               ncpu);
    for (int r = 0; r < nlocal; r++) {
        cpu_set_t *set = &job->cpusets[r];
        CPU_ZERO(set);
        if (job->cpu_bind == GR_BIND_CORE) {
            CPU_SET(cpus[r % ncpu].cpu, set);
        } else {
            int nd = nodes[(int)((int64_t)r * nnodes / nlocal)];
            for (int i = 0; i < ncpu; i++)
                if (cpus[i].node == nd)
                    CPU_SET(cpus[i].cpu, set);
        }
    }
    free(cpus);
    return 0;
}

void gr_bind_child(const struct gr_job *job, int r)
{
    setenv("GASRUN_BIND", names[job->cpu_bind], 1);
    if (job->cpusets)
        sched_setaffinity(0, sizeof *job->cpusets, &job->cpusets[job->ranks[r].local_rank]);
}
