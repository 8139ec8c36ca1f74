/*
 * test_udp_answer_loss - a lost answer costs a tail-loss probe, not the
 * retransmission timeout (GAS_TRANSPORT=udp, 4 ranks or more; both progress
 * modes).
 *
 * Rank 0 drops 5% of the datagrams it sends (GAS_TEST_UDP_DROP, set here
 * for rank 0 alone: its answers and acknowledgements are lost, no one
 * else's), and the last rank makes OPS blocking fetch-adds, then OPS 8-byte
 * gets, on rank 0's memory; the others wait in a barrier.  Rank 0 never
 * sends the last rank a request, so its channel there carries answers
 * alone.  Before the fix that channel had no RTT sample (answers gave none),
 * so no tail-loss probe, and a back-off that only a sample ended: a lost
 * answer waited for the timeout, soon at GAS_UDP_RTO_MAX (1 s, as the
 * manifest sets it), tens of times a run.  Now the answers time round trips
 * and a lost one is probed again within a few round trips (about a
 * millisecond here).
 *
 * Checks: every fetched value is right; at most SLOW_MAX operations took
 * SLOW_NS or more (a loaded 2-vCPU machine can deschedule a rank that
 * long, rarely); none took GAS_UDP_RTO_MAX.  The loop stops at the
 * (SLOW_MAX+1)th slow operation, so the failing case ends in seconds too.
 */
#include "udp_test.h"

#include <time.h>

enum { OPS = 1000, SLOW_MAX = 3 };
#define SLOW_NS 200000000ull
#define RTO_MAX_NS 1000000000ull

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* OPS blocking operations on word (fetch-add when fadd, else get, of the
 * value fetch-adds left there); the number of slow ones, the slowest in
 * *max_p. */
static int timed_ops(gas_ptr_t word, int fadd, uint64_t *max_p, int *slow_p)
{
    for (uint64_t k = 0; k < OPS && *slow_p <= SLOW_MAX; k++) {
        uint64_t v = 0, t = now_ns();
        if (fadd) {
            if (!CHECK_OK(gas_atomic_fetch_add_u64(word, 1, &v)) ||
                !CHECK(v == k, "fetch-add %llu fetched %llu", (unsigned long long)k,
                       (unsigned long long)v))
                return -1;
        } else if (!CHECK_OK(gas_get(&v, word, 8)) ||
                   !CHECK(v == OPS, "get %llu read %llu, not %d", (unsigned long long)k,
                          (unsigned long long)v, OPS)) {
            return -1;
        }
        uint64_t d = now_ns() - t;
        *max_p = d > *max_p ? d : *max_p;
        *slow_p += d >= SLOW_NS;
    }
    return 0;
}

int main(void)
{
    const char *rank_env = getenv("GASRUN_RANK");
    if (rank_env != NULL && strcmp(rank_env, "0") == 0)
        setenv("GAS_TEST_UDP_DROP", "5%", 1);
    test_begin("udp_answer_loss");
    int last = t_nranks - 1;
    if (udp_test_skip(4, 0, t_rank == 0 ? last : 0, NULL))
        return 77;
    gas_ptr_t arr;
    MUST(gas_malloc(64 * (size_t)t_nranks, &arr));
    gas_ptr_t word = test_at(arr, 0);   /* rank 0's first word */
    if (t_rank == 0)
        memset(gas_ptr_local(word), 0, 8);
    MUST(gas_barrier());
    if (t_rank == last) {
        static const char *const name[2] = {"8-byte get", "fetch-add"};
        for (int fadd = 1; fadd >= 0; fadd--) {
            uint64_t max = 0;
            int slow = 0;
            if (timed_ops(word, fadd, &max, &slow) != 0)
                break;
            test_note("%d blocking %ss on rank 0 (5%% of its datagrams dropped): slowest %.1f ms, "
                      "%d of %.0f ms or more", OPS, name[fadd], (double)max / 1e6, slow,
                      (double)SLOW_NS / 1e6);
            if (!CHECK(slow <= SLOW_MAX && max < RTO_MAX_NS,
                       "%ss: %d took %.0f ms or more (at most %d may), the slowest %.1f ms: lost "
                       "answers waited for the retransmission timeout", name[fadd], slow,
                       (double)SLOW_NS / 1e6, SLOW_MAX, (double)max / 1e6))
                break; /* the gets would read fewer fetch-adds than OPS */
        }
    }
    CHECK_OK(gas_barrier());
    return test_end();
}
