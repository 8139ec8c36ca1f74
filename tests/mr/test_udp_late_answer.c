/*
 * test_udp_late_answer - a blocking call that gives up (GAS_ERR_TIMEOUT)
 * writes nothing of the caller's after it returns, though the peer answers
 * later (GAS_TRANSPORT=udp, exactly 2 ranks, GAS_TIMEOUT=1s, GAS_ERRORS=return).
 *
 * Rank 0 stops rank 1 (SIGSTOP), then makes, each against rank 1's memory:
 *   a 4 KiB gas_get and a 300 KiB one (several request pieces) into heap
 *   buffers, gas_amo fetch-add into a heap word, gas_iget of 64 strided
 *   elements, and gas_atomic_fetch_add_u64 (its result is a stack temporary
 *   of the inline wrapper).  Each must return GAS_ERR_TIMEOUT.  Rank 0 then
 *   fills the buffers with a canary, and, inside a frame with 16 KiB of
 *   canary on the stack (where the dead temporary was), resumes rank 1, sets
 *   the flag it waits on, and waits until its answers have arrived: rank 1's barrier messages follow
 *   them on its ordered stream, and the two fetch-adds are then seen applied
 *   at rank 1.  Every canary must be whole: before the fix the late answers
 *   were copied into the buffers, and into the dead stack slot.
 */
#include "udp_test.h"

#include <signal.h>
#include <unistd.h>

enum { SMALL = 4096, LARGE = 300 * 1024, STRIDED = 64, CANARY = 0xa5, STACK = 16384 };

static int canary_whole(const unsigned char *p, size_t n, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != CANARY;
    CHECK(bad == 0, "%s: %zu of %zu bytes written after the call returned GAS_ERR_TIMEOUT", what,
          bad, n);
    return bad == 0;
}

/* Resume rank 1 and wait for its late answers with canary on the stack below the caller's frame. */
static __attribute__((noinline)) void resume_and_drain(pid_t pid, gas_ptr_t word)
{
    volatile unsigned char stack[STACK];
    memset((void *)stack, CANARY, sizeof stack);
    kill(pid, SIGCONT);
    gas_ptr_t go;   /* rank 1's flag, the word after the fetch-add target */
    MUST(gas_ptr_add(word, 8, &go));
    uint64_t one = 1;
    CHECK_OK(gas_put(go, &one, 8));
    CHECK_OK(gas_barrier());
    uint64_t v = 0;
    double until = test_elapsed() + 10;
    do {   /* both fetch-adds applied: rank 1 has served every request */
        CHECK_OK(gas_get(&v, word, 8));
    } while (v != 2 && test_elapsed() < until && usleep(10000) == 0);
    CHECK(v == 2, "rank 1 applied %llu of the 2 timed-out fetch-adds within 10 s", (unsigned long long)v);
    CHECK_OK(gas_barrier());
    canary_whole((const unsigned char *)stack, sizeof stack, "the stack below the caller");
}

int main(void)
{
    test_begin("udp_late_answer");
    if (udp_test_skip(2, 1, 1 - t_rank, NULL))
        return 77;
    int me = t_rank;
    uint64_t pid = (uint64_t)getpid(), pids[2];
    MUST(gas_allgather(GAS_TEAM_WORLD, pids, &pid, 1, GAS_UINT64));
    gas_ptr_t data, word;   /* rank 1 holds what rank 0 reads */
    MUST(gas_malloc(2 * (size_t)LARGE, &data));
    MUST(gas_malloc(2 * 64, &word));
    gas_ptr_t remote = test_at(data, LARGE), rword = test_at(word, 64);
    memset(gas_ptr_local(me == 1 ? remote : data), 0x3c, LARGE);
    if (me == 1)
        memset(gas_ptr_local(rword), 0, 16);   /* the fetch-add target, then rank 1's flag */
    MUST(gas_barrier());
    if (me == 0) {
        unsigned char *small = test_xmalloc(SMALL), *large = test_xmalloc(LARGE);
        unsigned char *strided = test_xmalloc(STRIDED * 8);
        uint64_t *res = test_xmalloc(8);
        kill((pid_t)pids[1], SIGSTOP);
        usleep(100000);
        CHECK_STATUS(gas_get(small, remote, SMALL), GAS_ERR_TIMEOUT);
        CHECK_STATUS(gas_get(large, remote, LARGE), GAS_ERR_TIMEOUT);
        CHECK_STATUS(gas_amo(GAS_AMO_FETCH_ADD, 8, rword, 1, 0, res), GAS_ERR_TIMEOUT);
        CHECK_STATUS(gas_iget(strided, remote, 16, 1, 8, STRIDED), GAS_ERR_TIMEOUT);
        uint64_t got = 0;
        CHECK_STATUS(gas_atomic_fetch_add_u64(rword, 1, &got), GAS_ERR_TIMEOUT);
        memset(small, CANARY, SMALL);
        memset(large, CANARY, LARGE);
        memset(strided, CANARY, STRIDED * 8);
        memset(res, CANARY, 8);
        resume_and_drain((pid_t)pids[1], rword);
        canary_whole(small, SMALL, "gas_get of 4 KiB");
        canary_whole(large, LARGE, "gas_get of 300 KiB");
        canary_whole((const unsigned char *)res, 8, "gas_amo's result");
        canary_whole(strided, STRIDED * 8, "gas_iget");
        /* The path works on: a get now returns the data. */
        CHECK_OK(gas_get(small, remote, SMALL));
        CHECK(small[0] == 0x3c && small[SMALL - 1] == 0x3c, "the get after the resume: %#x %#x",
              small[0], small[SMALL - 1]);
        free(small);
        free(large);
        free(strided);
        free(res);
    } else {
        /* stopped in this wait and resumed by rank 0, which then sets the flag
         * (each GAS_TIMEOUT of the wait is retried: it spans the stop) */
        const uint64_t *go = (const uint64_t *)gas_ptr_local(rword) + 1;
        double until = test_elapsed() + 60;
        gas_status_t st;
        while ((st = gas_wait_until_u64(go, GAS_CMP_EQ, 1)) == GAS_ERR_TIMEOUT &&
               test_elapsed() < until)
            ;
        CHECK_OK(st);
        CHECK_OK(gas_barrier());
        CHECK_OK(gas_barrier());
    }
    return test_end();
}
