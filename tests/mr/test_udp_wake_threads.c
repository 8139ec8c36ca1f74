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

/* Phases 1 and 2: NWAIT threads wait for the word at `off` of this rank to
 * reach each round, saying first that they are about to (in `arrived`, or,
 * for a writer on the next rank, in this rank's W_READY word). */
struct waiter {
    uint64_t off;
    int remote;
    pthread_t th;
};

/* Count n more waits about to start (n covers all rounds when one gave up). */
static void say_ready(const struct waiter *w, uint64_t n, int round)
{
    if (!w->remote) {
        atomic_fetch_add(&arrived, (int)n);
        return;
    }
    gas_status_t st = gas_atomic_add_u64(word_at(me, W_READY), n);
    if (st != GAS_OK)
        thread_fail("gas_atomic_add (ready)", round, st, 0);
}

static void *wait_rounds(void *arg)
{
    struct waiter *w = arg;
    uint64_t *word = gas_ptr_local(word_at(me, w->off));
    for (int k = 1; k <= ROUNDS; k++) {
        say_ready(w, 1, k);
        gas_status_t st = gas_wait_until_u64(word, GAS_CMP_GE, (uint64_t)k);
        if (st != GAS_OK) {
            thread_fail("gas_wait_until", k, st, *(volatile uint64_t *)word);
            say_ready(w, (uint64_t)ROUNDS * NWAIT, k); /* the writer need not wait for us again */
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

/*
 * Phase 1 (remote 0): NWAIT threads wait on our W_OWN word and this thread
 * writes it.  Phase 2 (remote 1): they wait on our W_PEER word, and this
 * thread writes the next rank's, once its waiters said they are ready.
 */
static void run_phase(int remote)
{
    struct waiter w[NWAIT];
    uint64_t off = remote ? W_PEER : W_OWN;
    for (int i = 0; i < NWAIT; i++) {
        w[i] = (struct waiter){.off = off, .remote = remote};
        if (pthread_create(&w[i].th, NULL, wait_rounds, &w[i]) != 0)
            test_die("pthread_create");
    }
    int target = remote ? (me + 1) % P : me;
    test_rng_t r = rng_make(me, remote ? 99 : 1);
    gas_ptr_t dst = word_at(target, off), ready = word_at(target, W_READY);
    for (int k = 1; k <= ROUNDS; k++) {
        /* Until every waiter has started round k. */
        for (int spins = 0;; spins++) {
            uint64_t n = (uint64_t)atomic_load(&arrived);
            if (remote)
                CHECK_OK(gas_atomic_fetch_u64(ready, &n));
            if (n >= (uint64_t)k * NWAIT)
                break;
            if (spins > 500000) {
                FAIL("round %d: rank %d's waiters never got there (%" PRIu64 " of %d)", k, target,
                     n, k * NWAIT);
                goto out;
            }
            pause_us(20);
        }
        pause_us((long)rng_below(&r, 600));
        gas_status_t st = write_round(dst, k);
        if (st != GAS_OK) {
            FAIL("round %d: writing rank %d's word: %s", k, target, gas_strerror(st));
            break;
        }
    }
out:
    for (int i = 0; i < NWAIT; i++)
        pthread_join(w[i].th, NULL);
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

    run_phase(0);
    CHECK(thread_failures == 0, "phase 1 (own writes): %ld waits failed", thread_failures);
    thread_failures = 0;
    MUST(gas_barrier());

    run_phase(1);
    CHECK(thread_failures == 0, "phase 2 (peer writes): %ld waits failed", thread_failures);
    thread_failures = 0;
    MUST(gas_barrier());

    phase3();
    CHECK(thread_failures == 0, "phase 3 (completions): %ld quiets failed", thread_failures);
    return test_end();
}
