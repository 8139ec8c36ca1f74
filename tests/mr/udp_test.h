/* udp_test.h - shared by the udp multi-rank tests (tests/mr/test_udp_*.c). */
#ifndef GAS_TESTS_MR_UDP_TEST_H
#define GAS_TESTS_MR_UDP_TEST_H

#include "check.h"

/*
 * Unless the job has `want` ranks (exactly when exact, else at least) and
 * reaches rank `peer` over udp (its counters in *st_p when not NULL): say
 * so, finalize and return 1; the test then exits 77 (skipped).
 */
static inline int udp_test_skip(int want, int exact, int peer, gas_peer_stats_t *st_p)
{
    gas_peer_stats_t st;
    int ok = (exact ? t_nranks == want : t_nranks >= want) && gas_peer_stats(peer, &st) == GAS_OK &&
             strcmp(st.transport, "udp") == 0;
    if (ok) {
        if (st_p)
            *st_p = st;
        return 0;
    }
    if (t_rank == 0)
        printf("skipped: needs %s%d ranks joined by udp (GAS_TRANSPORT=udp)\n", exact ? "exactly " : "",
               want);
    gas_finalize();
    return 1;
}

/* GAS_TEST_OPS if set, else dflt: how many operations a test runs in all. */
static inline long udp_test_ops(long dflt)
{
    const char *e = getenv("GAS_TEST_OPS");
    return e && *e ? atol(e) : dflt;
}

/*
 * Shared counters checked exactly: each of this rank's `parts` contributors
 * (threads) added added[k][i] to counter i (n counters at `counters`); all
 * contributions go through `sums` (nranks * parts * n words), and every rank
 * checks that every counter equals the sum of all of them.  Collective.
 */
static inline void udp_test_check_counters(gas_ptr_t counters, gas_ptr_t sums, size_t n, int parts,
                                           uint64_t *const *added)
{
    for (int k = 0; k < parts; k++)
        MUST(gas_put(test_at(sums, ((uint64_t)t_rank * (uint64_t)parts + (uint64_t)k) * n * 8),
                     added[k], n * 8));
    MUST(gas_barrier());
    size_t all_n = (size_t)t_nranks * (size_t)parts * n;
    uint64_t *all = test_xmalloc(all_n * 8), *got = test_xmalloc(n * 8);
    MUST(gas_get(all, sums, all_n * 8));
    MUST(gas_get(got, counters, n * 8));
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t want = 0;
        for (size_t s = 0; s < (size_t)t_nranks * (size_t)parts; s++)
            want += all[s * n + i];
        if (got[i] != want && bad++ < 4)
            FAIL("shared counter %zu is %" PRIu64 ", the ranks added %" PRIu64, i, got[i], want);
    }
    CHECK(bad == 0, "%ld shared counters wrong", bad);
    free(all);
    free(got);
}

#endif
