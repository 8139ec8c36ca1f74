/*
 * test_alloc_threads - gas_alloc/gas_dealloc from several threads per rank,
 * with remote ranks reading and writing the returned memory.
 *
 * Each round, THREADS threads per rank each allocate BLOCKS blocks of random
 * sizes (8 B .. 64 KiB, some up to 3 MiB), fill them with a pattern, churn the
 * allocator with short-lived blocks meanwhile, and publish (pointer, size)
 * in a gas_malloc'ed mailbox.  After a barrier the threads of rank r read the
 * blocks of rank r+1 with gas_get and check them, overwrite them with their
 * own pattern (gas_put) and add to the first word with a remote atomic.
 * After another barrier the owners check what arrived, and each thread
 * frees the blocks of the next thread (frees from a thread other than the
 * allocating one).  Every pointer must be on the owner, above its symmetric
 * heap, 8/16-byte aligned, and no two live blocks may overlap.
 */
#include "check.h"

#include <pthread.h>

enum { THREADS = 4, BLOCKS = 48, ROUNDS = 3, CHURN = 200, MAX_SIZE = 3 << 20 };

struct slot {
    uint64_t ptr, size;
};

struct worker {
    int t, round;
    gas_ptr_t mine[BLOCKS];
    uint64_t size[BLOCKS];
    long failures;
    char first[300];
};

static gas_ptr_t mailbox;    /* [rank][thread][block] of struct slot */
static struct worker workers[THREADS];
static int me, n;

/* Count a failure in a thread; the first message is kept (fmt takes two %llu). */
static void wfail(struct worker *w, const char *fmt, uint64_t a, uint64_t b)
{
    if (w->failures++ == 0)
        snprintf(w->first, sizeof w->first, fmt, (unsigned long long)a, (unsigned long long)b);
}

static gas_ptr_t slot_ptr(int rank, int t, int k)
{
    uint64_t i = ((uint64_t)rank * THREADS + (uint64_t)t) * BLOCKS + (uint64_t)k;
    return test_at(mailbox, i * sizeof(struct slot));
}

static uint64_t pick_size(test_rng_t *r)
{
    uint64_t x = rng_below(r, 100);
    if (x < 60)
        return rng_range(r, 8, 512);
    if (x < 95)
        return rng_range(r, 513, 64 * 1024);
    if (x < 98)
        return rng_range(r, 64 * 1024, 1024 * 1024);
    return rng_range(r, 1024 * 1024, MAX_SIZE);   /* big blocks (alloc/big.h) */
}

/* The tag of a block's pattern: writer rank, thread, round and block. */
static int tag(int rank, int t, int round, int k)
{
    return ((rank * THREADS + t) * ROUNDS + round) * BLOCKS + k;
}

static void *phase_alloc(void *arg)
{
    struct worker *w = arg;
    test_rng_t r = rng_make(me, (uint64_t)(w->t * 1000 + w->round));
    gas_mem_stats_t st;
    gas_memory_stats(&st);
    for (int k = 0; k < BLOCKS; k++) {
        uint64_t sz = pick_size(&r);
        gas_ptr_t p = GAS_NULL;
        if (gas_alloc(sz, &p) != GAS_OK) {
            wfail(w, "gas_alloc(%llu) failed (block %llu)", sz, (uint64_t)k);
            w->mine[k] = GAS_NULL;
            continue;
        }
        uint64_t off = gas_ptr_offset(p);
        if (gas_ptr_rank(p) != me || off < st.heap_end || off + sz > st.reserved)
            wfail(w, "block at offset %llu (+%llu) is not in this rank's arena space", off, sz);
        if (off % (sz >= 16 ? 16 : 8) != 0)
            wfail(w, "block at offset %llu of %llu bytes is misaligned", off, sz);
        uint8_t *local = gas_ptr_local(p);
        pattern_fill(local, sz, tag(me, w->t, w->round, k), 0, 0);
        w->mine[k] = p;
        w->size[k] = sz;
        /* Churn: short-lived blocks between the long-lived ones. */
        for (int c = 0; c < CHURN / BLOCKS + 1; c++) {
            gas_ptr_t q;
            uint64_t qs = rng_range(&r, 1, 4096);
            if (gas_alloc(qs, &q) == GAS_OK) {
                memset(gas_ptr_local(q), 0x5a, qs);
                gas_dealloc(q);
            } else {
                wfail(w, "churn gas_alloc(%llu) failed (round %llu)", qs, (uint64_t)w->round);
            }
        }
        struct slot s = {p, sz};
        if (gas_put(slot_ptr(me, w->t, k), &s, sizeof s) != GAS_OK)
            wfail(w, "publishing block %llu failed (round %llu)", (uint64_t)k, (uint64_t)w->round);
    }
    return NULL;
}

/* Read, check and overwrite the blocks of the same thread on the next rank. */
static void *phase_remote(void *arg)
{
    struct worker *w = arg;
    int owner = (me + 1) % n;
    uint8_t *buf = malloc(MAX_SIZE + 64);
    for (int k = 0; k < BLOCKS; k++) {
        struct slot s;
        if (gas_get(&s, slot_ptr(owner, w->t, k), sizeof s) != GAS_OK || s.ptr == GAS_NULL)
            continue;
        if (gas_get(buf, s.ptr, s.size) != GAS_OK) {
            wfail(w, "gas_get of a remote block of %llu bytes failed (%llu)", s.size, s.ptr);
            continue;
        }
        size_t bad = pattern_find_mismatch(buf, s.size, tag(owner, w->t, w->round, k), 0, 0);
        if (bad != s.size)
            wfail(w, "remote block %llu differs from its owner's pattern at byte %llu",
                  (uint64_t)k, (uint64_t)bad);
        pattern_fill(buf, s.size, tag(me, w->t, w->round, k) + 7, 1, 0);
        if (gas_put(s.ptr, buf, s.size) != GAS_OK)
            wfail(w, "gas_put into a remote block failed (%llu bytes at %llu)", s.size, s.ptr);
        if (s.size >= 8 && gas_atomic_add_u64(s.ptr, 1000 + (uint64_t)k) != GAS_OK)
            wfail(w, "remote atomic on block %llu failed (round %llu)", (uint64_t)k, (uint64_t)w->round);
    }
    free(buf);
    return NULL;
}

/* Check what the previous rank wrote, then free the next thread's blocks. */
static void *phase_check(void *arg)
{
    struct worker *w = arg;
    int writer = (me - 1 + n) % n;
    for (int k = 0; k < BLOCKS; k++) {
        if (w->mine[k] == GAS_NULL)
            continue;
        uint8_t *local = gas_ptr_local(w->mine[k]);
        uint64_t sz = w->size[k];
        uint8_t *want = malloc(sz);
        pattern_fill(want, sz, tag(writer, w->t, w->round, k) + 7, 1, 0);
        if (sz >= 8) {
            uint64_t word;
            memcpy(&word, want, 8);
            word += 1000 + (uint64_t)k;
            memcpy(want, &word, 8);
        }
        if (memcmp(local, want, sz) != 0)
            wfail(w, "block %llu (%llu bytes) does not hold what the previous rank wrote",
                  (uint64_t)k, sz);
        free(want);
    }
    return NULL;
}

static void *phase_free(void *arg)
{
    struct worker *w = &workers[(((struct worker *)arg)->t + 1) % THREADS];
    for (int k = 0; k < BLOCKS; k++)
        if (w->mine[k] != GAS_NULL && gas_dealloc(w->mine[k]) != GAS_OK)
            ((struct worker *)arg)->failures++;
    return NULL;
}

static void run_phase(void *(*fn)(void *))
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, fn, &workers[t]);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
}

static int cmp_off(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* No two live blocks of this rank overlap. */
static void check_disjoint(void)
{
    uint64_t (*iv)[2] = test_xmalloc(sizeof *iv * THREADS * BLOCKS);
    int m = 0;
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < BLOCKS; k++)
            if (workers[t].mine[k] != GAS_NULL) {
                iv[m][0] = gas_ptr_offset(workers[t].mine[k]);
                iv[m++][1] = workers[t].size[k];
            }
    qsort(iv, (size_t)m, sizeof *iv, cmp_off);
    for (int i = 0; i + 1 < m; i++)
        CHECK(iv[i][0] + iv[i][1] <= iv[i + 1][0], "blocks at %" PRIu64 " and %" PRIu64 " overlap",
              iv[i][0], iv[i + 1][0]);
    free(iv);
}

int main(void)
{
    test_begin("alloc_threads");
    me = t_rank;
    n = t_nranks;
    MUST(gas_malloc((size_t)n * THREADS * BLOCKS * sizeof(struct slot), &mailbox));
    for (int round = 0; round < ROUNDS; round++) {
        for (int t = 0; t < THREADS; t++)
            workers[t] = (struct worker){.t = t, .round = round};
        run_phase(phase_alloc);
        check_disjoint();
        MUST(gas_barrier());
        run_phase(phase_remote);
        MUST(gas_barrier());
        run_phase(phase_check);
        MUST(gas_barrier());
        run_phase(phase_free);
        for (int t = 0; t < THREADS; t++) {
            if (workers[t].failures) {
                t_failures += workers[t].failures;
                FAIL("round %d thread %d: %ld failure(s), first: %s", round, t, workers[t].failures,
                     workers[t].first);
            }
        }
        MUST(gas_barrier());
    }
    gas_mem_stats_t st;
    if (CHECK_OK(gas_memory_stats(&st))) {
        CHECK(st.arena_reserved > 0 && st.arena_used < st.arena_reserved,
              "arena numbers: %" PRIu64 " used of %" PRIu64, st.arena_used, st.arena_reserved);
        if (t_rank == 0)
            test_note("arenas %d, %" PRIu64 " bytes held at the top, %" PRIu64 " in use at the end",
                      st.arenas, st.arena_reserved, st.arena_used);
    }
    MUST(gas_free(mailbox));
    return test_end();
}
