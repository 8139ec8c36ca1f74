/*
 * test_rdma_threads - several threads drive the same peer while its path
 * changes under them (GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim).
 *
 * TEST_THREADS threads per rank (default 4) all work on the rank's right
 * neighbour; thread k of rank w owns slice (w, k) there and keeps an exact
 * shadow of it.  Each thread issues, at random, puts (blocking, _nbi,
 * _nb + wait, with a signal), gets checked at once against its shadow (so
 * its own earlier puts must be visible, whatever path they took), fetch-adds
 * on its own words (every old value checked) and gas_quiet.  Puts are not
 * ordered without a fence (the QPs of a peer are not), so a put that
 * overlaps bytes written since the thread's last fence or quiet is preceded
 * by gas_fence.  Meanwhile the
 * pair is upgraded from udp to RC after GAS_RDMA_UPGRADE_AFTER operations,
 * atomics switch the path back to udp and forth when GAS_RDMA_ATOMICS=cpu,
 * and GAS_TEST_RDMA_QP_ERROR makes a queue pair fail: every switch happens
 * while the other threads are issuing.  No call may fail; at the end each
 * thread reads its slice back from the target and compares it with its
 * shadow, and its signal word with the number of signals it sent.
 * TEST_EXPECT_ROUTE (rc or fallback) says where the pair must end.
 */
#include "check.h"

#include <pthread.h>

#define MAXTHREADS 8
#define SLICE (32u << 10)
#define NWORDS 8   /* word 0: signal count; 1..: fetch-add words */
#define GRAIN 64   /* bytes per bit of the written-since-fence map */

static int me, P, right, nthreads;
static long ops;
static gas_ptr_t data;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
    int k;
    _Alignas(8) uint8_t shadow[SLICE];   /* its words are read as uint64_t */
    uint8_t dirty[SLICE / GRAIN];   /* written since the last fence or quiet */
    uint64_t signals;
    long bad;
    pthread_t th;
};

/* Byte off of slice (writer w, thread k) on rank t. */
static gas_ptr_t slice_at(int t, int w, int k, uint64_t off)
{
    uint64_t idx = ((uint64_t)t * (uint64_t)P + (uint64_t)w) * MAXTHREADS + (uint64_t)k;
    return test_at(data, idx * SLICE + off);
}

static void bad(struct worker *w, const char *what, gas_status_t st)
{
    if (w->bad++ < 3) {
        pthread_mutex_lock(&report_lock);
        fprintf(stderr, "[rdma_threads rank %d thread %d] FAIL: %s (%s: %s)\n", me, w->k, what,
                gas_strerror(st), gas_last_error());
        pthread_mutex_unlock(&report_lock);
    }
}

static void one_put(struct worker *w, test_rng_t *r, uint8_t *buf)
{
    size_t len = (size_t)rng_range(r, 1, rng_below(r, 4) ? 200 : 8192);
    uint64_t off = NWORDS * 8 + rng_below(r, SLICE - NWORDS * 8 - len + 1);
    for (size_t b = 0; b < len; b++)
        buf[b] = (uint8_t)rng_next(r);
    memcpy(w->shadow + off, buf, len);
    gas_ptr_t dst = slice_at(right, me, w->k, off);
    gas_status_t st;
    gas_handle_t h;
    int overlap = 0;
    for (uint64_t g = off / GRAIN; g <= (off + len - 1) / GRAIN; g++)
        overlap |= w->dirty[g];
    if (overlap) {
        if ((st = gas_fence()) != GAS_OK)
            bad(w, "fence", st);
        memset(w->dirty, 0, sizeof w->dirty);
    }
    for (uint64_t g = off / GRAIN; g <= (off + len - 1) / GRAIN; g++)
        w->dirty[g] = 1;
    switch (rng_below(r, 4)) {
    case 0: st = gas_put(dst, buf, len); break;
    case 1: st = gas_put_nbi(dst, buf, len); break;
    case 2:
        st = gas_put_nb(dst, buf, len, &h);
        if (st == GAS_OK)
            st = gas_wait(h);
        break;
    default:
        st = gas_put_signal(dst, buf, len, slice_at(right, me, w->k, 0), 1, GAS_SIGNAL_ADD);
        w->signals++;
        break;
    }
    if (st != GAS_OK)
        bad(w, "put", st);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    test_rng_t r = rng_make(me * MAXTHREADS + w->k, 11);
    uint8_t buf[8192];
    for (long i = 0; i < ops; i++) {
        uint64_t k = rng_below(&r, 100);
        gas_status_t st = GAS_OK;
        if (k < 55) {
            one_put(w, &r, buf);
        } else if (k < 75) {
            size_t len = (size_t)rng_range(&r, 1, sizeof buf);
            uint64_t off = NWORDS * 8 + rng_below(&r, SLICE - NWORDS * 8 - len + 1);
            st = gas_get(buf, slice_at(right, me, w->k, off), len);
            if (st == GAS_OK && memcmp(buf, w->shadow + off, len) != 0)
                bad(w, "get differs from the shadow (an earlier put was lost or overtaken)", st);
        } else if (k < 95) {
            unsigned word = 1 + (unsigned)rng_below(&r, NWORDS - 1);
            uint64_t *cur = (uint64_t *)(void *)(w->shadow + 8 * word), v = rng_below(&r, 1000), old;
            st = gas_atomic_fetch_add_u64(slice_at(right, me, w->k, 8 * word), v, &old);
            if (st == GAS_OK && old != *cur)
                bad(w, "fetch-add returned a wrong old value", st);
            *cur += v;
        } else {
            st = gas_quiet();
            memset(w->dirty, 0, sizeof w->dirty);
        }
        if (st != GAS_OK)
            bad(w, "call", st);
    }
    gas_status_t st = gas_quiet();
    if (st != GAS_OK)
        bad(w, "final quiet", st);
    return NULL;
}

int main(void)
{
    test_begin("rdma_threads");
    me = t_rank;
    P = t_nranks;
    right = (me + 1) % P;
    const char *e = getenv("TEST_THREADS"), *expect = getenv("TEST_EXPECT_ROUTE");
    nthreads = e && atoi(e) > 0 && atoi(e) <= MAXTHREADS ? atoi(e) : 4;
    e = getenv("GAS_TEST_OPS");
    ops = (e && *e ? atol(e) : 12000) / nthreads;
    MUST(gas_malloc((size_t)P * (size_t)P * MAXTHREADS * SLICE, &data));
    MUST(gas_barrier());
    struct worker *w = test_xmalloc(sizeof *w * (size_t)nthreads);
    for (int k = 0; k < nthreads && P > 1; k++) {
        memset(&w[k], 0, sizeof w[k]);
        w[k].k = k;
        pthread_create(&w[k].th, NULL, work, &w[k]);
    }
    long failures = 0;
    for (int k = 0; k < nthreads && P > 1; k++) {
        pthread_join(w[k].th, NULL);
        failures += w[k].bad;
    }
    CHECK(failures == 0, "%ld failures in the threads", failures);
    MUST(gas_barrier());
    uint8_t *back = test_xmalloc(SLICE);
    for (int k = 0; k < nthreads && P > 1; k++) {
        CHECK_OK(gas_get(back, slice_at(right, me, k, 0), SLICE));
        uint64_t sigs;
        memcpy(&sigs, back, 8);
        CHECK(sigs == w[k].signals, "thread %d: signal word %" PRIu64 ", %" PRIu64 " sent", k, sigs,
              w[k].signals);
        check_bytes("slice read back from the target", back + 8, w[k].shadow + 8, SLICE - 8, 8);
    }
    gas_peer_stats_t st, tot;
    if (P > 1) {
        CHECK_OK(gas_peer_stats(right, &st));
        CHECK_OK(gas_peer_stats(me, &tot));
        test_note("%d threads x %ld operations to rank %d, route %s, %" PRIu64
                  " work requests, %" PRIu64 " errors, %" PRIu64 " redone",
                  nthreads, ops, right, st.route, tot.rdma_work_requests, tot.rdma_errors,
                  tot.rdma_redone);
        uint64_t mine[2] = {strcmp(st.route, "rc") == 0, strcmp(st.route, "fallback") == 0};
        uint64_t all[2] = {0, 0};
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, all, mine, 2, GAS_UINT64, GAS_OP_SUM));
        if (expect && strcmp(expect, "rc") == 0)
            CHECK(all[0] == (uint64_t)P, "%" PRIu64 " of %d pairs ended on RC", all[0], P);
        if (expect && strcmp(expect, "fallback") == 0)
            CHECK(all[1] > 0, "no pair fell back to udp");
    }
    free(back);
    free(w);
    return test_end();
}
