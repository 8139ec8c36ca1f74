/*
 * test_arena_auto - how many gas_alloc arenas a rank makes, and that blocks
 * from all of them are ordinary remotely accessible memory.
 *
 * The main thread allocates a block, then one thread per CPU the rank may
 * run on (at most 16), each pinned to its CPU, allocates BLOCKS blocks of
 * 1..4096 bytes (some of 64 KiB..1 MiB), fills them with a pattern and
 * publishes them in a gas_malloc'ed mailbox; no thread exits before all have
 * allocated.  The next rank reads every block with gas_get, checks it, and
 * overwrites it with its own pattern; the owner then checks what arrived
 * and frees the blocks.  gas_memory_stats must then report the arena count
 * of the documented rule (docs/memory.md): min(P, threads that allocated),
 * where P is GAS_ARENAS, or for GAS_ARENAS unset/0 the CPUs the rank may
 * use (at most 8).  So a rank pinned to one core (gasrun --bind core) has
 * one arena.  Exact on a one-node machine; on several nodes only bounded
 * (the groups depend on GAS_NUMA and the CPUs' nodes).
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

enum { MAXT = 16, BLOCKS = 64 };

struct slot {
    uint64_t ptr, size;
};

struct worker {
    int t, cpu;
    gas_ptr_t mine[BLOCKS];
    uint64_t size[BLOCKS];
    long failures;
};

static gas_ptr_t mailbox;   /* [rank][thread][block] of struct slot */
static pthread_barrier_t all_allocated;
static struct worker workers[MAXT];
static int nthreads;

static uint64_t block_size(int t, int k)
{
    uint64_t h = mix64((uint64_t)(t_rank * 1000 + t * BLOCKS + k));
    return k % 16 == 15 ? (64u << 10) + h % (960u << 10) : 1 + h % 4096;
}

static void *alloc_thread(void *arg)
{
    struct worker *w = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(w->cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
        w->failures++;
    for (int k = 0; k < BLOCKS; k++) {
        w->size[k] = block_size(w->t, k);
        if (gas_alloc(w->size[k], &w->mine[k]) != GAS_OK) {
            w->failures++;
            w->mine[k] = GAS_NULL;
            continue;
        }
        pattern_fill(gas_ptr_local(w->mine[k]), w->size[k], t_rank, t_rank,
                     (uint64_t)w->t << 32 | (uint64_t)k << 24);
        struct slot s = {w->mine[k], w->size[k]};
        uint64_t idx = ((uint64_t)t_rank * MAXT + (uint64_t)w->t) * BLOCKS + (uint64_t)k;
        if (gas_put(test_at(mailbox, idx * sizeof s), &s, sizeof s) != GAS_OK)
            w->failures++;
    }
    pthread_barrier_wait(&all_allocated);
    return NULL;
}

/* Read, check and overwrite every block of rank `owner`. */
static void visit(int owner)
{
    int other_threads = nthreads;   /* every rank runs on the same CPUs here */
    for (int t = 0; t < other_threads; t++) {
        for (int k = 0; k < BLOCKS; k++) {
            struct slot s;
            uint64_t idx = ((uint64_t)owner * MAXT + (uint64_t)t) * BLOCKS + (uint64_t)k;
            if (!CHECK_OK(gas_get(&s, test_at(mailbox, idx * sizeof s), sizeof s)) || s.ptr == 0)
                continue;
            CHECK(gas_ptr_rank(s.ptr) == owner, "block %d/%d names rank %d, not %d", t, k,
                  gas_ptr_rank(s.ptr), owner);
            unsigned char *buf = test_xmalloc(s.size);
            if (CHECK_OK(gas_get(buf, s.ptr, s.size)))
                check_pattern("block as its owner wrote it", buf, s.size, owner, owner,
                              (uint64_t)t << 32 | (uint64_t)k << 24, 0);
            pattern_fill(buf, s.size, t_rank, owner, (uint64_t)t << 32 | (uint64_t)k << 24);
            CHECK_OK(gas_put(s.ptr, buf, s.size));
            free(buf);
        }
    }
    CHECK_OK(gas_quiet());
}

static int one_numa_node(void)
{
    return access("/sys/devices/system/node/node1", F_OK) != 0;
}

int main(void)
{
    test_begin("arena_auto");
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        test_die("sched_getaffinity failed");
    for (int cpu = 0; cpu < CPU_SETSIZE && nthreads < MAXT; cpu++)
        if (CPU_ISSET(cpu, &set))
        {
            workers[nthreads] = (struct worker){.t = nthreads, .cpu = cpu};
            nthreads++;
        }
    MUST(gas_malloc((size_t)t_nranks * MAXT * BLOCKS * sizeof(struct slot), &mailbox));
    {
        /* Every rank must agree on nthreads for the mailbox walk: check it. */
        gas_ptr_t tab;
        MUST(gas_malloc((size_t)t_nranks * sizeof(int64_t), &tab));
        int64_t mine = nthreads;
        MUST(gas_put(test_at(tab, (uint64_t)t_rank * 8), &mine, 8));
        MUST(gas_barrier());
        for (int r = 0; r < t_nranks; r++) {
            int64_t v = 0;
            MUST(gas_get(&v, test_at(tab, (uint64_t)r * 8), 8));
            if (v != nthreads)
                test_die("ranks run on different numbers of CPUs: run without per-rank binding "
                         "differences");
        }
        MUST(gas_barrier());
        MUST(gas_free(tab));
    }
    gas_mem_stats_t st0;
    MUST(gas_memory_stats(&st0));
    CHECK(st0.arenas >= 1, "after gas_init: %d arenas", st0.arenas);

    gas_ptr_t main_block;
    MUST(gas_alloc(100, &main_block));
    pthread_barrier_init(&all_allocated, NULL, (unsigned)nthreads);
    pthread_t th[MAXT];
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, alloc_thread, &workers[t]);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < nthreads; t++)
        CHECK(workers[t].failures == 0, "thread %d (CPU %d): %ld failed calls", t, workers[t].cpu,
              workers[t].failures);
    MUST(gas_barrier());
    visit((t_rank + 1) % t_nranks);
    MUST(gas_barrier());

    /* The next-lower rank wrote its pattern over each of ours. */
    int writer = (t_rank + t_nranks - 1) % t_nranks;
    for (int t = 0; t < nthreads; t++) {
        for (int k = 0; k < BLOCKS; k++) {
            if (workers[t].mine[k] == GAS_NULL)
                continue;
            check_pattern("block after the remote overwrite", gas_ptr_local(workers[t].mine[k]),
                          workers[t].size[k], writer, t_rank, (uint64_t)t << 32 | (uint64_t)k << 24,
                          0);
        }
    }

    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    const char *env = getenv("GAS_ARENAS");
    int per = env && atoi(env) > 0 ? atoi(env) : 0;
    int limit = per > 0 ? per : nthreads < 8 ? nthreads : 8;
    int expect = limit < nthreads + 1 ? limit : nthreads + 1;
    if (one_numa_node())
        CHECK(st.arenas == expect, "%d+1 threads on %d CPUs (GAS_ARENAS=%s): %d arenas, want %d",
              nthreads, nthreads, env ? env : "unset", st.arenas, expect);
    else
        CHECK(st.arenas >= 1 && st.arenas <= 64, "%d arenas", st.arenas);
    if (t_rank == 0)
        test_note("%d CPUs, GAS_ARENAS=%s: %d arenas after init, %d after main + one thread per CPU",
                  nthreads, env ? env : "unset", st0.arenas, st.arenas);

    for (int t = 0; t < nthreads; t++)
        for (int k = 0; k < BLOCKS; k++)
            CHECK_OK(gas_dealloc(workers[t].mine[k]));
    CHECK_OK(gas_dealloc(main_block));
    pthread_barrier_destroy(&all_allocated);
    MUST(gas_barrier());
    MUST(gas_free(mailbox));
    return test_end();
}
