/*
 * test_finalize_calls - RMA, atomics, signals, quiet/fence, handles, waits,
 * pointers and stats in other threads while the main thread runs
 * gas_finalize (gas.h: such a call completes as usual or fails with
 * GAS_ERR_NOT_INIT; gas_finalize wakes threads blocked in libgas waits and
 * waits for every call under way before it releases anything).
 *
 * RMA threads loop on put, get, fetch_add, put_signal, a get_nb + gas_wait,
 * iget, quiet and fence into the next rank's block, and gas_ptr_local and
 * gas_peer_stats; two waiters block in gas_wait_until_u64 on words nobody
 * writes (one in process memory, one in this rank's segment).  Once every
 * RMA thread has made MIN_OPS calls the main thread calls gas_finalize,
 * which must return GAS_OK.  Every call must return GAS_OK or
 * GAS_ERR_NOT_INIT, after a thread's first GAS_ERR_NOT_INIT its later calls
 * must fail the same way, and both waiters must return GAS_ERR_NOT_INIT.
 * Before the fix the waiters crashed in the unmapped doorbell and the RMA
 * threads in the released peer mappings (a SIGSEGV in nearly every run).
 * A thread started after gas_finalize gets GAS_ERR_NOT_INIT too.
 *
 * One process per run (gas_finalize ends the library for good): the manifest
 * runs it several times, over shm and udp, with both progress modes.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

enum { RMA_THREADS = 3, MIN_OPS = 300, SLOT = 4096 };

static gas_ptr_t arr;          /* SLOT * RMA_THREADS + 64 bytes per rank, block layout */
static size_t per_rank;
static atomic_long ops[RMA_THREADS];
static atomic_long fails;
static atomic_int waiter_st[2] = {1, 1};
static uint64_t never_local;   /* process memory nobody writes */
static atomic_int waiting;     /* waiters about to call gas_wait_until_u64 */

static void bad(const char *what, gas_status_t st)
{
    atomic_fetch_add(&fails, 1);
    fprintf(stderr, "[finalize_calls rank %d] FAIL %s returned %d (%s): %s\n", t_rank, what,
            (int)st, gas_strerror(st), gas_last_error());
}

/* One call's status: 1 to go on (GAS_OK), 0 once stopped (GAS_ERR_NOT_INIT). */
static int go_on(const char *what, gas_status_t st)
{
    if (st == GAS_ERR_NOT_INIT)
        return 0;
    if (st != GAS_OK)
        bad(what, st);
    return 1;
}

/* The calls of one round into `p` (this thread's slot at the next rank); 0 once stopped. */
static int rma_round(gas_ptr_t p, gas_ptr_t sig, char *buf)
{
    uint64_t old;
    gas_handle_t h;
    gas_peer_stats_t ps;
    int peer = (t_rank + 1) % t_nranks;
    if (!go_on("gas_put", gas_put(p, buf, SLOT)) || !go_on("gas_get", gas_get(buf, p, SLOT)) ||
        !go_on("gas_atomic_fetch_add_u64", gas_atomic_fetch_add_u64(p, 1, &old)) ||
        !go_on("gas_put_signal", gas_put_signal(p, buf, 64, sig, 1, GAS_SIGNAL_ADD)) ||
        !go_on("gas_get_nb", gas_get_nb(buf, p, 256, &h)) || !go_on("gas_wait", gas_wait(h)) ||
        !go_on("gas_iget", gas_iget(buf, p, 1, 8, 8, 16)) ||
        !go_on("gas_put_nbi", gas_put_nbi(p, buf, 512)) || !go_on("gas_fence", gas_fence()) ||
        !go_on("gas_quiet", gas_quiet()) || !go_on("gas_progress", gas_progress()) ||
        !go_on("gas_peer_stats", gas_peer_stats(peer, &ps)))
        return 0;
    (void)gas_ptr_local(p);
    return 1;
}

static void *rma(void *arg)
{
    long id = (long)arg;
    char buf[SLOT];
    memset(buf, (int)id, sizeof buf);
    int next = (t_rank + 1) % t_nranks;
    gas_ptr_t p, sig;
    MUST(gas_ptr_index(arr, 1, (uint64_t)next * per_rank + (uint64_t)id * SLOT, &p));
    MUST(gas_ptr_index(arr, 1, (uint64_t)next * per_rank + RMA_THREADS * SLOT, &sig));
    while (rma_round(p, sig, buf))
        atomic_fetch_add_explicit(&ops[id], 1, memory_order_relaxed);
    /* Stopped: every later call fails the same way. */
    uint64_t v;
    gas_status_t st;
    if ((st = gas_put(p, buf, 8)) != GAS_ERR_NOT_INIT)
        bad("gas_put after GAS_ERR_NOT_INIT", st);
    if ((st = gas_atomic_fetch_u64(p, &v)) != GAS_ERR_NOT_INIT)
        bad("gas_atomic_fetch_u64 after GAS_ERR_NOT_INIT", st);
    if ((st = gas_quiet()) != GAS_ERR_NOT_INIT)
        bad("gas_quiet after GAS_ERR_NOT_INIT", st);
    return NULL;
}

/* Blocks on a word nobody writes (arg): only gas_finalize ends the wait. */
static void *waiter(void *arg)
{
    const uint64_t *word = arg;
    int which = word != &never_local;
    atomic_fetch_add(&waiting, 1);
    atomic_store(&waiter_st[which], gas_wait_until_u64(word, GAS_CMP_EQ, 1));
    return NULL;
}

static void *late(void *arg)
{
    (void)arg;
    uint64_t v = 0;
    gas_status_t st;
    if ((st = gas_put(arr, &v, 8)) != GAS_ERR_NOT_INIT)
        bad("gas_put in a thread started after gas_finalize", st);
    if ((st = gas_wait_until_u64(&v, GAS_CMP_EQ, 1)) != GAS_ERR_NOT_INIT)
        bad("gas_wait_until_u64 in a thread started after gas_finalize", st);
    if (gas_ptr_local(arr) != NULL)
        bad("gas_ptr_local in a thread started after gas_finalize (not NULL)", GAS_OK);
    return NULL;
}

int main(void)
{
    test_begin("finalize_calls");
    per_rank = RMA_THREADS * SLOT + 64;
    MUST(gas_malloc(per_rank * (size_t)t_nranks, &arr));
    gas_layout_t l = test_layout_of(arr);
    if (l.block != per_rank)
        test_die("unexpected layout");
    MUST(gas_barrier());
    pthread_t th[RMA_THREADS], w[2], lt;
    for (long i = 0; i < RMA_THREADS; i++)
        if (pthread_create(&th[i], NULL, rma, (void *)i) != 0)
            test_die("pthread_create");
    /* The second waiter's word: after the signal word, in this rank's own block. */
    gas_ptr_t own;
    MUST(gas_ptr_index(arr, 1, (uint64_t)t_rank * per_rank + RMA_THREADS * SLOT + 8, &own));
    uint64_t *words[2] = {&never_local, gas_ptr_local(own)};
    for (int i = 0; i < 2; i++)
        if (pthread_create(&w[i], NULL, waiter, words[i]) != 0)
            test_die("pthread_create");
    for (int i = 0; i < RMA_THREADS; i++)
        while (atomic_load(&ops[i]) < MIN_OPS && atomic_load(&fails) == 0)
            sched_yield();
    while (atomic_load(&waiting) < 2)
        sched_yield();
    usleep(20 * 1000);   /* let the waiters go to sleep in their waits */
    CHECK_OK(gas_finalize());
    CHECK(!gas_initialized(), "gas_initialized() after gas_finalize");
    for (int i = 0; i < RMA_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        pthread_join(w[i], NULL);
        CHECK(atomic_load(&waiter_st[i]) == GAS_ERR_NOT_INIT,
              "waiter %d returned %d, not GAS_ERR_NOT_INIT", i, atomic_load(&waiter_st[i]));
    }
    if (pthread_create(&lt, NULL, late, NULL) != 0)
        test_die("pthread_create");
    pthread_join(lt, NULL);
    CHECK(atomic_load(&fails) == 0, "%ld calls returned something else than GAS_OK or "
          "GAS_ERR_NOT_INIT, or GAS_OK after GAS_ERR_NOT_INIT", atomic_load(&fails));
    long total = 0;
    for (int i = 0; i < RMA_THREADS; i++)
        total += atomic_load(&ops[i]);
    test_note("%ld rounds in %d threads, both waiters woken", total, RMA_THREADS);
    return test_result(test_elapsed());
}
