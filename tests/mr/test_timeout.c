/*
 * No wait hangs: with GAS_TIMEOUT set, a gas_wait_until that nobody satisfies
 * and a barrier that one rank is late for both fail with GAS_ERR_TIMEOUT and a
 * message naming the call (and, for the barrier, the awaited rank).  Retrying
 * the barrier resumes it, so once the late rank arrives everyone gets through
 * and later barriers line up.  The same for gas_finalize: a rank whose
 * finalize times out stays initialised, and retrying finishes it.
 * GAS_TIMEOUT=1s is set here before gas_init.
 */
#include <unistd.h>

#include "check.h"

/*
 * The last rank calls fn 3 s late; the others call it again while it times
 * out (at most 20 times), calling after(timeouts so far) after each timeout.
 * Rank 0 must have timed out at least once.  Returns fn's last status.
 */
static gas_status_t last_rank_late(const char *name, gas_status_t (*fn)(void),
                                   void (*after)(int timeouts))
{
    int late = t_nranks - 1, timeouts = 0;
    if (t_rank == late) {
        if (t_nranks >= 2)
            sleep(3);
        return fn();
    }
    gas_status_t st = GAS_OK;
    for (int tries = 0; tries < 20; tries++) {
        st = fn();
        if (st != GAS_ERR_TIMEOUT)
            break;
        after(++timeouts);
    }
    if (t_rank == 0)
        CHECK(timeouts > 0, "%s never timed out waiting for late rank %d", name, late);
    return st;
}

/* The first timeout of the barrier names the call and the rank awaited. */
static void barrier_timed_out(int timeouts)
{
    if (timeouts == 1 && t_rank == 0) {
        CHECK(strstr(gas_last_error(), "gas_barrier") != NULL &&
                  strstr(gas_last_error(), "from rank") != NULL,
              "timeout message names neither call nor rank: %s", gas_last_error());
        test_note("as expected: %s", gas_last_error());
    }
}

static void finalize_timed_out(int timeouts)
{
    (void)timeouts;
    CHECK(gas_initialized(), "gas_finalize timed out but left the rank finalised");
}

int main(void)
{
    setenv("GAS_TIMEOUT", "1s", 1);
    test_begin("timeout");
    gas_ptr_t flags;
    MUST(gas_malloc((size_t)t_nranks * 8, &flags));
    uint64_t *mine = gas_ptr_local(test_at(flags, (uint64_t)t_rank * 8));
    CHECK(mine != NULL, "own flag word is not directly addressable");

    /* Nobody writes the flag: the wait gives up after about a second. */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gas_status_t st = gas_wait_until_u64(mine, GAS_CMP_EQ, 42);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double waited = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    CHECK(st == GAS_ERR_TIMEOUT, "gas_wait_until returned %d, want GAS_ERR_TIMEOUT", (int)st);
    CHECK(strstr(gas_last_error(), "gas_wait_until_u64") != NULL,
          "timeout message does not name the call: %s", gas_last_error());
    CHECK(waited > 0.5 && waited < 30, "gave up after %.2f s", waited);
    CHECK_OK(gas_barrier());

    /* The last rank is 3 s late; the others time out, then retry until it arrives. */
    if (t_nranks >= 2)
        CHECK_OK(last_rank_late("gas_barrier", gas_barrier, barrier_timed_out));
    /* Later barriers and data still line up on every rank. */
    uint64_t v = (uint64_t)t_rank + 1, got = 0;
    CHECK_OK(gas_put(test_at(flags, (uint64_t)t_rank * 8), &v, 8));
    for (int i = 0; i < 5; i++)
        CHECK_OK(gas_barrier());
    int peer = (t_rank + 1) % t_nranks;
    CHECK_OK(gas_get(&got, test_at(flags, (uint64_t)peer * 8), 8));
    CHECK(got == (uint64_t)peer + 1, "after the retried barrier rank %d holds %llu", peer,
          (unsigned long long)got);
    /* The last rank is 3 s late for gas_finalize: the others' finalize times
     * out, leaves them initialised, and a retry resumes it. */
    double secs = test_elapsed();
    st = last_rank_late("gas_finalize", gas_finalize, finalize_timed_out);
    CHECK(st == GAS_OK, "gas_finalize returned %d (%s): %s", (int)st, gas_strerror(st),
          gas_last_error());
    CHECK(!gas_initialized(), "still initialised after gas_finalize");
    return test_result(secs);
}
