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

#endif
