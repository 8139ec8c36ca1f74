/*
 * test_finalize_race - gas_alloc, gas_dealloc and gas_memory_stats in other
 * threads while the main thread runs gas_finalize (gas.h: such a call either
 * completes or fails with GAS_ERR_NOT_INIT; threads may exit at any time).
 *
 * WORKERS threads loop on random gas_alloc (1 byte .. 6000 bytes, now and
 * then 1 MiB), gas_dealloc and gas_memory_stats, holding up to 16 blocks.
 * Once every worker has made MIN_OPS calls, the main thread calls
 * gas_finalize.  Every call must return GAS_OK or GAS_ERR_NOT_INIT; after a
 * worker's first GAS_ERR_NOT_INIT its later calls (a block it still holds,
 * stats) must fail the same way.  The workers then wait for gas_finalize to
 * return and exit: half at once, half after a pause (their exit flushes what
 * they cached: before the fix, into arenas gas_finalize had destroyed, a
 * crash in most runs).  A thread started after gas_finalize gets
 * GAS_ERR_NOT_INIT from each call and exits; gas_init again is refused with
 * GAS_ERR_INVALID (gas.h: no second initialisation in a process).
 *
 * One process per run (gas_finalize ends the library for good): the manifest
 * runs it several times.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

enum { WORKERS = 3, HELD = 16, MIN_OPS = 20000 };

static atomic_int finalized;
static atomic_long ops[WORKERS];
static atomic_long fails;

static void bad(const char *what, gas_status_t st)
{
    atomic_fetch_add(&fails, 1);
    fprintf(stderr, "[finalize_race] FAIL %s returned %d (%s): %s\n", what, (int)st,
            gas_strerror(st), gas_last_error());
}

/* A call's status before or after gas_finalize: OK (only while not stopped) or NOT_INIT. */
static int ok_or_stopped(const char *what, gas_status_t st, int *stopped)
{
    if (st == GAS_ERR_NOT_INIT) {
        *stopped = 1;
        return 0;
    }
    if (st != GAS_OK)
        bad(what, st);
    return st == GAS_OK;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    test_rng_t r = rng_make((int)id, 7);
    gas_ptr_t held[HELD] = {0};
    int stopped = 0;
    while (!stopped) {
        int i = (int)rng_below(&r, HELD);
        uint64_t what = rng_below(&r, 100);
        if (what < 2) {
            gas_mem_stats_t s;
            ok_or_stopped("gas_memory_stats", gas_memory_stats(&s), &stopped);
        } else if (held[i] != GAS_NULL) {
            if (ok_or_stopped("gas_dealloc", gas_dealloc(held[i]), &stopped))
                held[i] = GAS_NULL;
        } else {
            size_t n = what < 3 ? (size_t)1 << 20 : (size_t)rng_range(&r, 1, 6000);
            gas_ptr_t p = GAS_NULL;
            if (ok_or_stopped("gas_alloc", gas_alloc(n, &p), &stopped))
                held[i] = p;
        }
        atomic_fetch_add_explicit(&ops[id], 1, memory_order_relaxed);
    }
    /* Stopped: everything else fails the same way, a held block included. */
    gas_mem_stats_t s;
    gas_ptr_t p;
    gas_status_t st;
    for (int i = 0; i < HELD; i++)
        if (held[i] != GAS_NULL && (st = gas_dealloc(held[i])) != GAS_ERR_NOT_INIT)
            bad("gas_dealloc after GAS_ERR_NOT_INIT", st);
    st = gas_alloc(64, &p);
    if (st != GAS_ERR_NOT_INIT)
        bad("gas_alloc after GAS_ERR_NOT_INIT", st);
    if ((st = gas_memory_stats(&s)) != GAS_ERR_NOT_INIT)
        bad("gas_memory_stats after GAS_ERR_NOT_INIT", st);
    while (!atomic_load(&finalized))
        sched_yield();
    if (id % 2)
        usleep(100 * 1000);   /* exit well after gas_finalize returned */
    return NULL;
}

/* A thread that first calls after gas_finalize. */
static void *late(void *arg)
{
    (void)arg;
    gas_ptr_t p = GAS_NULL;
    gas_mem_stats_t s;
    gas_status_t st;
    if ((st = gas_alloc(100, &p)) != GAS_ERR_NOT_INIT)
        bad("gas_alloc in a thread started after gas_finalize", st);
    if ((st = gas_dealloc(gas_ptr_make(0, 1 << 20))) != GAS_ERR_NOT_INIT)
        bad("gas_dealloc in a thread started after gas_finalize", st);
    if ((st = gas_memory_stats(&s)) != GAS_ERR_NOT_INIT)
        bad("gas_memory_stats in a thread started after gas_finalize", st);
    return NULL;
}

int main(void)
{
    test_begin("finalize_race");
    pthread_t th[WORKERS], lt;
    for (long i = 0; i < WORKERS; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
            test_die("pthread_create");
    /* Finalize while every worker is busy calling (no clock involved). */
    for (int i = 0; i < WORKERS; i++)
        while (atomic_load(&ops[i]) < MIN_OPS)
            sched_yield();
    CHECK_OK(gas_finalize());
    atomic_store(&finalized, 1);
    CHECK(!gas_initialized(), "gas_initialized() after gas_finalize");
    for (int i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    if (pthread_create(&lt, NULL, late, NULL) != 0)
        test_die("pthread_create");
    pthread_join(lt, NULL);
    CHECK_STATUS(gas_init(), GAS_ERR_INVALID);
    CHECK(atomic_load(&fails) == 0, "%ld calls returned something else than GAS_OK or "
          "GAS_ERR_NOT_INIT, or GAS_OK after GAS_ERR_NOT_INIT", atomic_load(&fails));
    long total = 0;
    for (int i = 0; i < WORKERS; i++)
        total += atomic_load(&ops[i]);
    test_note("%ld calls in %d threads, all threads exited", total, WORKERS);
    return test_result(test_elapsed());
}
