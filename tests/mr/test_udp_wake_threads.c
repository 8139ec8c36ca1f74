/*
 * test_udp_wake_threads - over udp, with several threads of one rank waiting
 * at once, every sleeping wait is woken by the write (or completion) that
 * satisfies it, even when another thread of the rank is the one that reads
 * the wake-up off the socket.
 *
 * Run with GAS_TRANSPORT=udp, GAS_WAIT_SPIN=0 (every wait sleeps at once)
 * and a sleep slice of many minutes (GAS_WAIT_SLICE), in both progress
 * modes: a wake-up that never arrives is then a GAS_TIMEOUT error (a FAIL
 * naming the round), not a 1 ms delay.
 *
 * 1. Own writes.  On every rank NWAIT threads gas_wait_until a word of the
 *    rank's own segment reaches k while another thread of the same rank
 *    writes k there (gas_put, gas_atomic_set or gas_atomic_add in turn),
 *    ROUNDS times.  The writer writes only once every waiter has said it is
 *    about to wait, so most rounds find them asleep.  (The write nudges the
 *    rank's socket sleepers with an empty datagram; a waiter that spins may
 *    read that datagram first, and must pass the wake-up on.)
 * 2. Peer writes.  The same, but the writer is a thread of the next rank:
 *    its udp put is received by whichever thread of the waiting rank polls
 *    the socket.  It learns that the waiters are ready from a counter they
 *    bump in their segment, read with gas_atomic_fetch.
 * 3. Completions.  NWAIT threads each put a block to the next rank and call
 *    gas_quiet, ROUNDS times: a quiet asleep in the socket is woken when
 *    another thread receives its acknowledgement.  Every block is then read
 *    back and checked.
 */
#include "udp_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#define NWAIT 3
#define ROUNDS 300
#define BLOCK 256

enum { W_OWN = 0, W_PEER = 8, W_READY = 16, PART = 64 };

static gas_ptr_t words, blocks;
static int me, P;
static _Atomic int arrived;          /* phase 1: waiters about to wait, all rounds */
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static long thread_failures;

static gas_ptr_t word_at(int rank, uint64_t off)
{
    gas_ptr_t p = GAS_NULL;
    MUST(gas_ptr_add(words, (uint64_t)rank * PART + off, &p));
    return p;
}

static void thread_fail(const char *what, int round, gas_status_t st, uint64_t seen)
{
    pthread_mutex_lock(&fail_lock);
    if (thread_failures++ < 5)
        fprintf(stderr, "[udp_wake_threads rank %d] FAIL: %s in round %d (the word is %" PRIu64
                        " now): %s (%s)\n", me, what, round, seen, gas_strerror(st), gas_last_error());
    pthread_mutex_unlock(&fail_lock);
}

static void pause_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

/* Phases 1 and 2: wait for the word at `off` of this rank to reach each
 * round, saying first that we are about to (locally or in the segment). */
struct waiter {
    uint64_t off;
    int remote_ready;
    pthread_t th;
};

static void *wait_rounds(void *arg)
{
    struct waiter *w = arg;
    uint64_t *word = gas_ptr_local(word_at(me, w->off));
    for (int k = 1; k <= ROUNDS; k++) {
        if (w->remote_ready) {
            gas_status_t st = gas_atomic_add_u64(word_at(me, W_READY), 1);
            if (st != GAS_OK)
                thread_fail("gas_atomic_add (ready)", k, st, *word);
        } else {
            atomic_fetch_add(&arrived, 1);
        }
        gas_status_t st = gas_wait_until_u64(word, GAS_CMP_GE, (uint64_t)k);
        if (st != GAS_OK) {
            thread_fail("gas_wait_until", k, st, *(volatile uint64_t *)word);
            /* The writer need not wait for us again. */
            if (w->remote_ready)
                (void)gas_atomic_add_u64(word_at(me, W_READY), (uint64_t)ROUNDS * NWAIT);
            else
                atomic_fetch_add(&arrived, ROUNDS * NWAIT);
            return NULL;
        }
    }
    return NULL;
}

/* Write round k into `dst` (op rotates: put, atomic set, atomic add of 1). */
static gas_status_t write_round(gas_ptr_t dst, int k)
{
    uint64_t v = (uint64_t)k;
    switch (k % 3) {
    case 0:
        return gas_put(dst, &v, 8);
    case 1:
        return gas_atomic_set_u64(dst, v);
    default:
        return gas_atomic_add_u64(dst, 1);
    }
}

/* Phase 1: NWAIT threads wait on our word, this thread writes it. */
static void phase1(void)
{
    struct waiter w[NWAIT];
    for (int i = 0; i < NWAIT; i++) {
        w[i] = (struct waiter){.off = W_OWN, .remote_ready = 0};
        if (pthread_create(&w[i].th, NULL, wait_rounds, &w[i]) != 0)
            test_die("pthread_create");
    }
    test_rng_t r = rng_make(me, 1);
    gas_ptr_t dst = word_at(me, W_OWN);
    for (int k = 1; k <= ROUNDS; k++) {
        /* Until every waiter has started round k. */
        while (atomic_load(&arrived) < k * NWAIT)
            pause_us(20);
        pause_us((long)rng_below(&r, 600));
        gas_status_t st = write_round(dst, k);
        if (st != GAS_OK) {
            FAIL("round %d: writing the word: %s", k, gas_strerror(st));
            break;
        }
    }
    for (int i = 0; i < NWAIT; i++)
        pthread_join(w[i].th, NULL);
}

/* Phase 2: NWAIT threads wait on our word; this thread writes the next
 * rank's. */
static void *phase2_waiters(void *arg)
{
    (void)arg;
    struct waiter w[NWAIT];
    for (int i = 0; i < NWAIT; i++) {
        w[i] = (struct waiter){.off = W_PEER, .remote_ready = 1};
        if (pthread_create(&w[i].th, NULL, wait_rounds, &w[i]) != 0)
            test_die("pthread_create");
    }
    for (int i = 0; i < NWAIT; i++)
        pthread_join(w[i].th, NULL);
    return NULL;
}

static void phase2(void)
{
    pthread_t th;
    if (pthread_create(&th, NULL, phase2_waiters, NULL) != 0)
        test_die("pthread_create");
    int next = (me + 1) % P;
    test_rng_t r = rng_make(me, 99);
    gas_ptr_t dst = word_at(next, W_PEER), ready = word_at(next, W_READY);
    for (int k = 1; k <= ROUNDS; k++) {
        for (int spins = 0;; spins++) {
            uint64_t n = 0;
            CHECK_OK(gas_atomic_fetch_u64(ready, &n));
            if (n >= (uint64_t)k * NWAIT)
                break;
            if (spins > 500000) {
                FAIL("round %d: rank %d's waiters never got there (%" PRIu64 " of %d)", k, next, n,
                     k * NWAIT);
                goto out;
            }
            pause_us(20);
        }
        pause_us((long)rng_below(&r, 600));
        gas_status_t st = write_round(dst, k);
        if (st != GAS_OK) {
            FAIL("round %d: writing rank %d's word: %s", k, next, gas_strerror(st));
            break;
        }
    }
out:
    pthread_join(th, NULL);
}

/* Phase 3: thread t puts block (t, k) to the next rank, then quiets. */
static void *put_quiet(void *arg)
{
    int t = (int)(intptr_t)arg;
    int next = (me + 1) % P;
    uint8_t buf[BLOCK];
    for (int k = 0; k < ROUNDS; k++) {
        uint64_t idx = (uint64_t)t * ROUNDS + (uint64_t)k;
        gas_ptr_t dst = GAS_NULL;
        gas_status_t st = gas_ptr_add(blocks, ((uint64_t)next * NWAIT * ROUNDS + idx) * BLOCK, &dst);
        if (st == GAS_OK) {
            pattern_fill(buf, BLOCK, me, next, idx * BLOCK);
            st = gas_put_nbi(dst, buf, BLOCK);
        }
        if (st == GAS_OK)
            st = gas_quiet();
        if (st != GAS_OK) {
            thread_fail("put + gas_quiet", k, st, 0);
            return NULL;
        }
    }
    return NULL;
}

static void phase3(void)
{
    pthread_t th[NWAIT];
    for (int t = 0; t < NWAIT; t++)
        if (pthread_create(&th[t], NULL, put_quiet, (void *)(intptr_t)t) != 0)
            test_die("pthread_create");
    for (int t = 0; t < NWAIT; t++)
        pthread_join(th[t], NULL);
    MUST(gas_barrier());
    int prev = (me + P - 1) % P;
    size_t n = (size_t)NWAIT * ROUNDS * BLOCK;
    gas_ptr_t mine = GAS_NULL;
    MUST(gas_ptr_add(blocks, (uint64_t)me * n, &mine));
    const uint8_t *got = gas_ptr_local(mine);
    size_t bad = pattern_find_mismatch(got, n, prev, me, 0);
    CHECK(bad == n, "phase 3: byte %zu of what rank %d put is wrong", bad, prev);
}

int main(void)
{
    test_begin("udp_wake_threads");
    me = t_rank;
    P = t_nranks;
    if (udp_test_skip(2, 0, (me + 1) % P, NULL))
        return 77;
    MUST(gas_malloc((size_t)P * PART, &words));
    MUST(gas_malloc((size_t)P * NWAIT * ROUNDS * BLOCK, &blocks));
    memset(gas_ptr_local(word_at(me, 0)), 0, PART);
    MUST(gas_barrier());

    phase1();
    CHECK(thread_failures == 0, "phase 1 (own writes): %ld waits failed", thread_failures);
    thread_failures = 0;
    MUST(gas_barrier());

    phase2();
    CHECK(thread_failures == 0, "phase 2 (peer writes): %ld waits failed", thread_failures);
    thread_failures = 0;
    MUST(gas_barrier());

    phase3();
    CHECK(thread_failures == 0, "phase 3 (completions): %ld quiets failed", thread_failures);
    return test_end();
}
