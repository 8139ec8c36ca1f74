/*
 * test_udp_pollspin - in poll mode (no progress thread), a rank that spins
 * through library calls on its own memory still serves its peers: the
 * OpenSHMEM-style lock where the last rank spins with gas_atomic_cswap (or
 * gas_atomic_fetch) on a word of its own segment while rank 0, which took
 * the lock remotely, releases it.  Those calls finish locally without
 * waiting; they must still drive progress now and then (runtime/wait.h,
 * gas_rt_tick), or rank 0's release is never answered and rank 0 declares
 * the spinning rank dead after GAS_UDP_PEER_TIMEOUT.
 * Run over udp with GAS_PROGRESS=poll and a short GAS_UDP_PEER_TIMEOUT.
 */
#include "check.h"

#include <time.h>

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    test_begin("udp_pollspin");
    int me = t_rank, last = t_nranks - 1;
    gas_ptr_t locks, flags, lock, flag;
    MUST(gas_malloc(8 * (size_t)t_nranks, &locks));
    MUST(gas_malloc(8 * (size_t)t_nranks, &flags));
    MUST(gas_ptr_index(locks, 8, (uint64_t)last, &lock));
    MUST(gas_ptr_index(flags, 8, (uint64_t)last, &flag));
    for (int round = 0; round < 2; round++) {     /* 0: spin with cswap, 1: with fetch */
        MUST(gas_barrier());
        if (me == 0 && last > 0) {
            uint64_t old = 99;
            CHECK_OK(gas_atomic_cswap_u64(lock, 0, 1, &old));
            CHECK(old == 0, "round %d: the lock was taken already (%" PRIu64 ")", round, old);
            CHECK_OK(gas_atomic_set_u64(flag, (uint64_t)round + 1));
            pause_ms(100);
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            CHECK_OK(gas_atomic_swap_u64(lock, 0, &old));   /* the release */
            clock_gettime(CLOCK_MONOTONIC, &b);
            CHECK(old == 1, "round %d: the lock word held %" PRIu64 " at the release", round, old);
            test_note("round %d: the release took %.3f s", round,
                      (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9);
        } else if (me == last && last > 0) {
            MUST(gas_wait_until_u64(gas_ptr_local(flag), GAS_CMP_EQ, (uint64_t)round + 1));
            uint64_t old = 1;
            long spins = 0;
            do {
                gas_status_t st = round == 0 ? gas_atomic_cswap_u64(lock, 0, 7, &old)
                                             : gas_atomic_fetch_u64(lock, &old);
                if (!CHECK_OK(st))
                    break;
                spins++;
            } while (old != 0);
            if (round == 0)
                CHECK_OK(gas_atomic_set_u64(lock, 0));       /* give it back */
            test_note("round %d: got the lock after %ld spins", round, spins);
        }
        MUST(gas_barrier());
    }
    MUST(gas_free(flags));
    MUST(gas_free(locks));
    return test_end();
}
