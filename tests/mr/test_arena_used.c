/*
 * test_arena_used - gas_mem_stats.arena_used against a model of the live
 * gas_alloc blocks (gas.h: each block at the size the allocator gave it,
 * jemalloc's size class below 1 MiB, whole 4 KiB pages from 1 MiB; cached
 * free blocks not counted; exact while no other thread allocates).
 *
 *  1. The cases that were wrong: one live 1-byte block (was 800, the
 *     tcache's refill), the same freed (stayed 800), a 100-byte block, 5000
 *     blocks all freed (was 810 KB).
 *  2. A random sequence of gas_alloc/gas_dealloc of 1 byte .. 2 MiB in one
 *     thread, checked every few operations.
 *  3. THREADS threads allocating and freeing at random, a quarter of their
 *     blocks freed by another thread (handed over through a shared slot
 *     table); checked while they are all paused at a barrier, after they
 *     free everything, and after they exit.
 * The model: sum over live blocks of nallocx(n) (under 1 MiB) or n rounded
 * up to 4 KiB.  Deltas from the value at start (no split team then).
 */
#include "check.h"

#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <stdatomic.h>

enum { OPS = 20000, LIVE = 512, THREADS = 4, TOPS = 4000, ROUNDS = 3, SLOTS = 64 };

static uint64_t base_used;

static uint64_t used_now(void)
{
    gas_mem_stats_t s;
    MUST(gas_memory_stats(&s));
    return s.arena_used;
}

/* What a block of n bytes counts in arena_used. */
static uint64_t model_size(uint64_t n)
{
    return n >= (1u << 20) ? (n + 4095) / 4096 * 4096 : nallocx((size_t)n, 0);
}

static int expect_used(const char *when, uint64_t model)
{
    uint64_t got = used_now() - base_used;
    return CHECK(got == model, "%s: arena_used %" PRIu64 " above the start, the model says %" PRIu64,
                 when, got, model);
}

static uint64_t random_size(test_rng_t *r)
{
    uint64_t x = rng_below(r, 100);
    return x < 75 ? rng_range(r, 1, 4096) : x < 97 ? rng_range(r, 4097, 600000)
                                                   : rng_range(r, 1u << 20, 2u << 20);
}

static void cases(void)
{
    gas_ptr_t p;
    MUST(gas_alloc(1, &p));
    expect_used("one live 1-byte block", model_size(1));
    MUST(gas_dealloc(p));
    expect_used("that block freed", 0);
    MUST(gas_alloc(100, &p));
    expect_used("one live 100-byte block", model_size(100));
    MUST(gas_dealloc(p));
    static gas_ptr_t many[5000];
    uint64_t m = 0;
    for (int i = 0; i < 5000; i++) {
        MUST(gas_alloc((size_t)(1 + i % 200), &many[i]));
        m += model_size((uint64_t)(1 + i % 200));
    }
    expect_used("5000 live blocks", m);
    for (int i = 0; i < 5000; i++)
        MUST(gas_dealloc(many[i]));
    expect_used("5000 blocks all freed", 0);
}

static void sequence(void)
{
    static struct { gas_ptr_t p; uint64_t n; } live[LIVE];
    int nlive = 0, reported = 0;
    uint64_t model = 0;
    test_rng_t r = rng_make(t_rank, 3);
    for (int op = 0; op < OPS; op++) {
        if (nlive == LIVE || (nlive > 0 && rng_below(&r, 100) < 45)) {
            int i = (int)rng_below(&r, (uint64_t)nlive);
            MUST(gas_dealloc(live[i].p));
            model -= model_size(live[i].n);
            live[i] = live[--nlive];
        } else {
            uint64_t n = random_size(&r);
            MUST(gas_alloc((size_t)n, &live[nlive].p));
            live[nlive++].n = n;
            model += model_size(n);
        }
        if (op % 37 == 0 && !reported && !expect_used("random sequence", model))
            reported = 1;   /* once is enough to see it */
    }
    while (nlive > 0)
        MUST(gas_dealloc(live[--nlive].p));
    expect_used("random sequence, all freed", 0);
}

/* ---- threads ---------------------------------------------------------------- */

static pthread_barrier_t bar;
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static gas_ptr_t slots[SLOTS];          /* blocks handed to another thread to free */
static uint64_t slot_n[SLOTS];
static _Atomic int64_t model_all;       /* the model over all threads */

/* Hand p (n bytes) over, or free one handed over by another thread instead. */
static void hand_over(gas_ptr_t p, uint64_t n, test_rng_t *r)
{
    int s = (int)rng_below(r, SLOTS);
    pthread_mutex_lock(&slot_lock);
    gas_ptr_t q = slots[s];
    uint64_t qn = slot_n[s];
    slots[s] = p;
    slot_n[s] = n;
    pthread_mutex_unlock(&slot_lock);
    if (q != GAS_NULL) {
        MUST(gas_dealloc(q));
        atomic_fetch_sub(&model_all, (int64_t)model_size(qn));
    }
}

static void *thread_main(void *arg)
{
    int me = (int)(long)arg;
    test_rng_t r = rng_make(t_rank * 100 + me, 9);
    struct { gas_ptr_t p; uint64_t n; } live[LIVE / 4];
    int nlive = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (int op = 0; op < TOPS; op++) {
            if (nlive == LIVE / 4 || (nlive > 0 && rng_below(&r, 100) < 45)) {
                int i = (int)rng_below(&r, (uint64_t)nlive);
                if (rng_below(&r, 4) == 0) {
                    hand_over(live[i].p, live[i].n, &r);
                } else {
                    MUST(gas_dealloc(live[i].p));
                    atomic_fetch_sub(&model_all, (int64_t)model_size(live[i].n));
                }
                live[i] = live[--nlive];
            } else {
                uint64_t n = rng_below(&r, 100) < 90 ? rng_range(&r, 1, 4096) : random_size(&r);
                MUST(gas_alloc((size_t)n, &live[nlive].p));
                live[nlive++].n = n;
                atomic_fetch_add(&model_all, (int64_t)model_size(n));
            }
        }
        pthread_barrier_wait(&bar);   /* main checks while every thread waits */
        pthread_barrier_wait(&bar);
    }
    while (nlive > 0) {
        nlive--;
        MUST(gas_dealloc(live[nlive].p));
        atomic_fetch_sub(&model_all, (int64_t)model_size(live[nlive].n));
    }
    pthread_barrier_wait(&bar);   /* everything of this thread freed */
    pthread_barrier_wait(&bar);
    return NULL;
}

static void threads(void)
{
    pthread_t th[THREADS];
    pthread_barrier_init(&bar, NULL, THREADS + 1);
    for (long i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, thread_main, (void *)i) != 0)
            test_die("pthread_create");
    for (int round = 0; round < ROUNDS; round++) {
        pthread_barrier_wait(&bar);
        expect_used("threads paused", (uint64_t)atomic_load(&model_all));
        pthread_barrier_wait(&bar);
    }
    pthread_barrier_wait(&bar);
    expect_used("threads freed theirs (handed-over blocks still live)", (uint64_t)atomic_load(&model_all));
    pthread_barrier_wait(&bar);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    expect_used("threads exited", (uint64_t)atomic_load(&model_all));
    for (int s = 0; s < SLOTS; s++)
        if (slots[s] != GAS_NULL) {
            MUST(gas_dealloc(slots[s]));
            atomic_fetch_sub(&model_all, (int64_t)model_size(slot_n[s]));
        }
    CHECK(atomic_load(&model_all) == 0, "model %lld after freeing all", (long long)atomic_load(&model_all));
    expect_used("every block freed", 0);
    pthread_barrier_destroy(&bar);
}

int main(void)
{
    test_begin("arena_used");
    base_used = used_now();
    CHECK(base_used == 0, "arena_used %" PRIu64 " at start, with no block and no split team",
          base_used);
    cases();
    sequence();
    threads();
    return test_end();
}
