/*
 * test_udp_oneside - one-sided operations complete while the target never
 * calls the library (GAS_PROGRESS=thread, the default).
 *
 * Twice, rank 1 leaves the library after a barrier, first sleeping in
 * nanosleep, then spinning on the clock (computing), until a word of its
 * segment says rank 0 is done (or IDLE_MAX_S passed).  Meanwhile rank 0
 * puts 1 MiB into it and reads it back, does 1000 fetch-adds and a
 * compare-and-swap on its words, a put-with-signal and a strided get,
 * checking every result, and then sets that word: it must arrive while rank
 * 1 is still outside the library (so rank 1's progress thread served all of
 * it).  Then rank 1 checks by plain loads that the data and the signal
 * arrived.
 * Then the initiator leaves: rank 0 starts a put-with-signal of 1 MiB
 * (gas_put_signal_nbi) and computes outside the library until rank 1, which
 * waits for the signal and checks the data, says so in a word of rank 0's
 * segment (rank 0's progress thread took over its sends and
 * acknowledgements once the socket lease of its last wait lapsed, and
 * applies that word).  No time limit but IDLE_MAX_S: a machine loaded by
 * other work makes this slow, not wrong.
 * Other ranks (if any) only take part in the barriers.  With
 * GAS_PROGRESS=poll the test is skipped: there a target that never calls
 * the library serves nothing, by design (docs/udp.md).
 */
#include "udp_test.h"

#include <time.h>

#define IDLE_MAX_S 20.0
#define DATA (1u << 20)

static gas_ptr_t base1, ctr, cas, sig, done1, done0;

enum idle { SLEEPING, SPINNING };

/* Outside the library, sleeping 10 ms at a time or spinning, until *word ==
 * want or IDLE_MAX_S passed; whether it came. */
static int idle_until(enum idle how, const uint64_t *word, uint64_t want)
{
    double end = test_elapsed() + IDLE_MAX_S;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != want && test_elapsed() < end) {
        struct timespec ts = {0, 10000000};
        if (how == SLEEPING)
            nanosleep(&ts, NULL);
    }
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) == want;
}

/* Rank 1 idles outside the library while rank 0 works on it. */
static void phase(const char *how, enum idle idle, int round)
{
    MUST(gas_barrier());
    if (t_rank == 1) {
        double t0 = test_elapsed();
        int came = idle_until(idle, gas_ptr_local(done1), (uint64_t)round);
        CHECK(came, "%s: rank 0 was not done after %.0f s outside the library (its operations "
              "waited for this rank to come back)", how, test_elapsed() - t0);
        /* The signal was stored after everything else rank 0 sent: acquire it
         * first, then plain loads see the rest. */
        const uint64_t *w = gas_ptr_local(ctr);
        uint64_t signal = __atomic_load_n(&w[2], __ATOMIC_ACQUIRE);
        CHECK(signal == (uint64_t)round, "%s: signal after idling: %" PRIu64, how, signal);
        const uint8_t *mine = gas_ptr_local(base1);
        check_pattern("data seen by the idle rank", mine, DATA, 0, round, 0, 0);
        CHECK(w[0] == 1000 * (uint64_t)round && w[1] == 77, "%s: words after idling: %" PRIu64 " %" PRIu64,
              how, w[0], w[1]);
    } else if (t_rank == 0) {
        double t0 = test_elapsed();
        uint8_t *buf = test_xmalloc(DATA), *back = test_xmalloc(DATA);
        pattern_fill(buf, DATA, 0, round, 0);
        CHECK_OK(gas_put(base1, buf, DATA));
        CHECK_OK(gas_quiet());
        memset(back, 0, DATA);
        CHECK_OK(gas_get(back, base1, DATA));
        check_bytes("read back from the idle rank", back, buf, DATA, 0);
        uint64_t old = 0, bad = 0, base = 1000 * (uint64_t)(round - 1);
        for (uint64_t i = 0; i < 1000; i++) {
            CHECK_OK(gas_atomic_fetch_add_u64(ctr, 1, &old));
            bad += old != base + i;
        }
        CHECK(bad == 0, "%" PRIu64 " fetch-adds returned a wrong old value", bad);
        CHECK_OK(gas_atomic_cswap_u64(cas, round == 1 ? 0 : 77, 77, &old));
        CHECK(old == (round == 1 ? 0 : 77), "cswap returned %" PRIu64, old);
        CHECK_OK(gas_atomic_cswap_u64(cas, 0, 99, &old));
        CHECK(old == 77, "failed cswap returned %" PRIu64, old);
        CHECK_OK(gas_put_signal(base1, buf, 4096, sig, (uint64_t)round, GAS_SIGNAL_SET));
        uint8_t sparse[64];
        CHECK_OK(gas_iget(sparse, base1, 1, 1000, 1, sizeof sparse));
        for (size_t k = 0; k < sizeof sparse; k++)
            CHECK(sparse[k] == buf[k * 1000], "strided byte %zu", k);
        CHECK_OK(gas_quiet());
        CHECK_OK(gas_atomic_set_u64(done1, (uint64_t)round));
        test_note("everything completed in %.3f s while rank 1 was %s outside the library",
                  test_elapsed() - t0, how);
        free(buf);
        free(back);
    }
    MUST(gas_barrier());
}

/* Rank 0 issues a put-with-signal and leaves the library; rank 1 waits for it. */
static void initiator_leaves(int round)
{
    uint8_t *buf = test_xmalloc(DATA);
    pattern_fill(buf, DATA, 0, round, 0);
    MUST(gas_barrier());
    double t0 = test_elapsed();
    if (t_rank == 0) {
        gas_status_t s;
        while ((s = gas_put_signal_nbi(base1, buf, DATA, sig, (uint64_t)round, GAS_SIGNAL_SET)) ==
               GAS_ERR_AGAIN)
            CHECK_OK(gas_quiet()); /* back-pressure: nothing of it was taken */
        CHECK_OK(s);
        int came = idle_until(SPINNING, gas_ptr_local(done0), (uint64_t)round);
        CHECK(came, "rank 1 did not see the signal while this rank computed for %.0f s outside "
              "the library (the sends waited for it to come back)", test_elapsed() - t0);
        CHECK_OK(gas_quiet());
    } else if (t_rank == 1) {
        const uint64_t *w = gas_ptr_local(ctr);
        CHECK_OK(gas_wait_until_u64(&w[2], GAS_CMP_EQ, (uint64_t)round));
        check_pattern("data put before the initiator left", gas_ptr_local(base1), DATA, 0, round, 0, 0);
        CHECK_OK(gas_atomic_set_u64(done0, (uint64_t)round));
        test_note("the signal came %.3f s after the barrier while rank 0 computed",
                  test_elapsed() - t0);
    }
    free(buf);
    MUST(gas_barrier());
}

int main(void)
{
    test_begin("udp_oneside");
    const char *prog = getenv("GAS_PROGRESS");
    if (prog && strcmp(prog, "poll") == 0) {
        if (t_rank == 0)
            printf("skipped: with GAS_PROGRESS=poll a target outside the library serves nothing\n");
        gas_finalize();
        return 77;
    }
    if (udp_test_skip(2, 0, t_rank == 1 ? 0 : 1, NULL))
        return 77;
    gas_ptr_t arr;
    /* Per rank: DATA bytes of data, then 16 words (counter, cas word, signal). */
    MUST(gas_malloc_dist((uint64_t)t_nranks, DATA + 128, GAS_DIST_BLOCK, 0, &arr));
    base1 = test_at(arr, DATA + 128); /* rank 1's part */
    ctr = test_at(arr, 2 * (uint64_t)DATA + 128 + 0);
    cas = test_at(arr, 2 * (uint64_t)DATA + 128 + 8);
    sig = test_at(arr, 2 * (uint64_t)DATA + 128 + 16);
    done1 = test_at(arr, 2 * (uint64_t)DATA + 128 + 24);
    done0 = test_at(arr, (uint64_t)DATA + 24); /* in rank 0's part */
    phase("sleeping", SLEEPING, 1);
    phase("spinning", SPINNING, 2);
    initiator_leaves(3);
    return test_end();
}
