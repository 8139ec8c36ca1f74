/*
 * test_progress_call - gas_progress() keeps a rank that calls nothing else
 * serving its peers.  With GAS_PROGRESS=poll over udp (no progress thread)
 * and a short GAS_UDP_PEER_TIMEOUT, rank 0 spins for twice that timeout on
 * plain loads of its own segment, calling only gas_progress(), until the
 * other ranks' puts and fetch-adds have all arrived; without the call its
 * peers would declare it dead.  Every word is then checked on rank 0 and a
 * barrier and an allreduce work.
 *   progress  as above (the manifest's mode)
 *   none      the same spin without gas_progress(): expected to fail (the
 *             peers declare rank 0 dead, their errors name GAS_PROGRESS=poll);
 *             not in the manifest, run by hand to see the test can fail
 */
#include "check.h"

#include <time.h>

enum { ADDS = 200 };

int main(int argc, char **argv)
{
    int call = argc < 2 || strcmp(argv[1], "none") != 0;
    test_begin("progress_call");
    int me = t_rank, n = t_nranks;
    gas_ptr_t words, count;
    /* BLOCK layout: rank 0 holds the first 8n bytes of each */
    MUST(gas_malloc(8 * (size_t)n * (size_t)n, &words));   /* word r written by rank r */
    MUST(gas_malloc(8 * (size_t)n * (size_t)n, &count));   /* ADDS fetch-adds per other rank */
    gas_ptr_t count0;
    MUST(gas_ptr_index(count, 8, 0, &count0));
    MUST(gas_barrier());
    if (me == 0) {
        volatile uint64_t *c = gas_ptr_local(count0);
        volatile uint64_t *w = gas_ptr_local(words);
        double until = test_elapsed() + 20;
        while (test_elapsed() < until) {
            int all = *c == (uint64_t)ADDS * (uint64_t)(n - 1);
            for (int r = 1; r < n; r++)
                all &= w[r] == 1000u + (uint64_t)r;
            if (all)
                break;
            if (call)
                CHECK_OK(gas_progress());
        }
        CHECK(*c == (uint64_t)ADDS * (uint64_t)(n - 1), "count %" PRIu64 ", want %d", *c,
              ADDS * (n - 1));
        for (int r = 1; r < n; r++)
            CHECK(w[r] == 1000u + (uint64_t)r, "word %d: %" PRIu64, r, w[r]);
    } else {
        /* spread over ~2.5 peer timeouts, so rank 0 must answer while it spins */
        struct timespec gap = {0, 25 * 1000 * 1000};
        for (int i = 0; i < ADDS; i++) {
            uint64_t old;
            CHECK_OK(gas_atomic_fetch_add_u64(count0, 1, &old));
            if (i % 2 == 0)
                nanosleep(&gap, NULL);
        }
        gas_ptr_t mine;
        MUST(gas_ptr_index(words, 8, (uint64_t)me, &mine));
        uint64_t v = 1000u + (uint64_t)me;
        CHECK(gas_ptr_rank(mine) == 0, "word %d lies on rank %d", me, gas_ptr_rank(mine));
        CHECK_OK(gas_put(mine, &v, 8));
        CHECK_OK(gas_quiet());
    }
    CHECK_OK(gas_barrier());
    int64_t one = 1, sum = 0;
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &sum, &one, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(sum == n, "allreduce gave %lld", (long long)sum);
    return test_end();
}
