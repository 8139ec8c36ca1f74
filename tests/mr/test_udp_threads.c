/*
 * test_udp_threads - several threads per rank use udp at once.
 *
 * Every rank runs NTHREADS threads; thread k of rank w owns slice (w, k) of
 * every rank's part, so each thread keeps an exact shadow of what it wrote.
 * The threads issue random puts (blocking, _nbi, _nb + wait, with signal),
 * gets checked at once against the shadow, fetching atomics on their own
 * words (every old value checked) and adds to counters shared by all
 * threads of all ranks, and call gas_quiet now and then, all concurrently
 * through the same channels.  At the end every slice is read back and every
 * shared counter must equal the sum of all additions.  Run with
 * GAS_TRANSPORT=udp (thread or poll progress); also under ThreadSanitizer.
 */
#include "udp_test.h"

#include <pthread.h>

#define NTHREADS 4
#define SLICE (64u << 10)
#define NWORDS 16
#define NCOUNT 16

static int me, P;
static long ops_per_thread;
static gas_ptr_t data, counters, sums;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static long thread_failures;

struct worker {
    int k;
    uint8_t *shadow;    /* [t * SLICE]: this thread's slice on rank t */
    uint64_t *added;    /* [t * NCOUNT + c] */
    long bad;
    pthread_t th;
};

static gas_ptr_t slice_at(int t, int k, uint64_t off)
{
    uint64_t slice = ((uint64_t)t * (uint64_t)P + (uint64_t)me) * NTHREADS + (uint64_t)k;
    gas_ptr_t p = GAS_NULL;
    gas_ptr_add(data, slice * SLICE + off, &p);
    return p;
}

static void note_bad(struct worker *w, const char *what, gas_status_t st)
{
    if (w->bad++ < 3) {
        pthread_mutex_lock(&fail_lock);
        fprintf(stderr, "[udp_threads rank %d thread %d] FAIL: %s (%d: %s)\n", me, w->k, what, (int)st,
                gas_last_error());
        pthread_mutex_unlock(&fail_lock);
    }
}

static void *work(void *arg)
{
    struct worker *w = arg;
    test_rng_t r = rng_make(me * NTHREADS + w->k, 7);
    uint8_t buf[8192];
    for (long i = 0; i < ops_per_thread; i++) {
        int t = (int)rng_below(&r, (uint64_t)P);
        uint8_t *sh = w->shadow + (size_t)t * SLICE;
        uint64_t k = rng_below(&r, 100);
        gas_status_t st = GAS_OK;
        if (k < 40) {
            size_t len = (size_t)rng_range(&r, 1, rng_below(&r, 8) ? 256 : sizeof buf);
            uint64_t off = NWORDS * 8 + rng_below(&r, SLICE - NWORDS * 8 - len + 1);
            for (size_t b = 0; b < len; b++)
                buf[b] = (uint8_t)rng_next(&r);
            memcpy(sh + off, buf, len);
            switch (rng_below(&r, 4)) {
            case 0: st = gas_put(slice_at(t, w->k, off), buf, len); break;
            case 1: st = gas_put_nbi(slice_at(t, w->k, off), buf, len); break;
            case 2: {
                gas_handle_t h;
                st = gas_put_nb(slice_at(t, w->k, off), buf, len, &h);
                if (st == GAS_OK)
                    st = gas_wait(h);
                break;
            }
            default:
                *(uint64_t *)(void *)sh += 1;
                st = gas_put_signal(slice_at(t, w->k, off), buf, len, slice_at(t, w->k, 0), 1,
                                    GAS_SIGNAL_ADD);
                break;
            }
        } else if (k < 65) {
            size_t len = (size_t)rng_range(&r, 1, rng_below(&r, 8) ? 256 : sizeof buf);
            uint64_t off = NWORDS * 8 + rng_below(&r, SLICE - NWORDS * 8 - len + 1);
            st = gas_get(buf, slice_at(t, w->k, off), len);
            if (st == GAS_OK && memcmp(buf, sh + off, len) != 0)
                note_bad(w, "get differs from the shadow", GAS_OK);
        } else if (k < 85) {
            unsigned word = 1 + (unsigned)rng_below(&r, NWORDS - 1);
            uint64_t *cur = (uint64_t *)(void *)(sh + 8 * word), v = rng_next(&r), old = 0;
            st = gas_atomic_fetch_add_u64(slice_at(t, w->k, 8 * word), v, &old);
            if (st == GAS_OK && old != *cur)
                note_bad(w, "fetch-add returned a wrong old value", GAS_OK);
            *cur += v;
        } else if (k < 98) {
            unsigned c = (unsigned)rng_below(&r, NCOUNT);
            uint64_t v = rng_range(&r, 1, 100);
            gas_ptr_t p = GAS_NULL;
            gas_ptr_add(counters, ((uint64_t)t * NCOUNT + c) * 8, &p);
            st = rng_below(&r, 2) ? gas_atomic_add_u64(p, v) : gas_amo_nbi(GAS_AMO_ADD, 8, p, v, 0, NULL);
            if (st == GAS_OK)
                w->added[(size_t)t * NCOUNT + c] += v;
        } else {
            st = gas_quiet();
        }
        if (st != GAS_OK)
            note_bad(w, "call failed", st);
    }
    gas_status_t st = gas_quiet();
    if (st != GAS_OK)
        note_bad(w, "final quiet", st);
    return NULL;
}

int main(void)
{
    test_begin("udp_threads");
    me = t_rank;
    P = t_nranks;
    if (udp_test_skip(2, 0, (me + 1) % P, NULL))
        return 77;
    ops_per_thread = udp_test_ops(40000) / (P * NTHREADS);
    MUST(gas_malloc((size_t)P * (size_t)P * NTHREADS * SLICE, &data));
    MUST(gas_malloc((size_t)P * NCOUNT * 8, &counters));
    MUST(gas_malloc((size_t)P * NTHREADS * (size_t)P * NCOUNT * 8, &sums));
    MUST(gas_barrier());
    struct worker w[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
        w[k] = (struct worker){.k = k, .shadow = calloc((size_t)P, SLICE),
                               .added = calloc((size_t)P * NCOUNT, 8)};
        if (!w[k].shadow || !w[k].added)
            test_die("out of memory");
        pthread_create(&w[k].th, NULL, work, &w[k]);
    }
    for (int k = 0; k < NTHREADS; k++) {
        pthread_join(w[k].th, NULL);
        thread_failures += w[k].bad;
    }
    CHECK(thread_failures == 0, "%ld failures in the threads", thread_failures);
    MUST(gas_barrier());
    uint8_t *buf = test_xmalloc(SLICE);
    uint64_t *added[NTHREADS];
    for (int k = 0; k < NTHREADS; k++) {
        for (int t = 0; t < P; t++) {
            CHECK_OK(gas_get(buf, slice_at(t, k, 0), SLICE));
            check_bytes("final slice", buf, w[k].shadow + (size_t)t * SLICE, SLICE, 0);
        }
        added[k] = w[k].added;
    }
    udp_test_check_counters(counters, sums, (size_t)P * NCOUNT, NTHREADS, added);
    if (me == 0)
        test_note("%d threads x %ld operations per rank, all checked", NTHREADS, ops_per_thread);
    free(buf);
    for (int k = 0; k < NTHREADS; k++) {
        free(w[k].shadow);
        free(w[k].added);
    }
    return test_end();
}
