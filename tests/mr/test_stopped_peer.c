/*
 * test_stopped_peer - what the ranks around a stopped one are told, and
 * what the stopped one finds when it resumes (exactly 3 ranks,
 * GAS_TIMEOUT=1s, GAS_ERRORS=return; any transport).
 *
 * A child process of rank 1 stops it (SIGSTOP) 0.3 s into a world
 * allreduce that ranks 0 and 2 enter 0.6 s in, and resumes it 4 s later.
 *  - Ranks 0 and 2: the allreduce fails with GAS_ERR_TIMEOUT (rank 1's
 *    part never came).  Rank 2 then puts (nbi) to rank 0, which acknowledges
 *    at once, and to rank 1, and calls gas_quiet: GAS_ERR_TIMEOUT whose
 *    message names rank 1 as the one that has not acknowledged (it named
 *    rank 0, the first channel the quiet looked at, before), not rank 0;
 *    then a fetch-add on rank 1: GAS_ERR_TIMEOUT naming rank 1 (before:
 *    "completion of the operation", no rank).
 *  - Rank 1, resumed: its allreduce either completed with the right sum
 *    (it had every message it needed) or failed; the time it was stopped
 *    is not counted against GAS_TIMEOUT, so it did not fail at its first
 *    look after the resume.  When it completed, its gas_finalize returns
 *    GAS_OK: the others' notes say only that they gave up waiting (before,
 *    GAS_ERR_INVALID "results of it may be wrong").
 * Afterwards every rank meets in a barrier (retried over GAS_TIMEOUTs) and
 * an allreduce, whose sums must be right.
 */
#include "check.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int has(const char *s, const char *part)
{
    return s != NULL && strstr(s, part) != NULL;
}

/* Retry a barrier over GAS_TIMEOUTs for up to 30 s (rank 1 is stopped for a while). */
static void barrier_patiently(void)
{
    double until = test_elapsed() + 30;
    gas_status_t st;
    while ((st = gas_barrier()) == GAS_ERR_TIMEOUT && test_elapsed() < until)
        ;
    CHECK_OK(st);
}

int main(void)
{
    test_begin("stopped_peer");
    if (t_nranks != 3) {
        if (t_rank == 0)
            printf("skipped: needs exactly 3 ranks\n");
        gas_finalize();
        return 77;
    }
    int me = t_rank;
    uint64_t pid = (uint64_t)getpid(), pids[3];
    MUST(gas_allgather(GAS_TEAM_WORLD, pids, &pid, 1, GAS_UINT64));
    gas_ptr_t a;
    MUST(gas_malloc(64 * 3, &a));
    gas_ptr_t at0 = test_at(a, 0), at1 = test_at(a, 64);
    MUST(gas_barrier());
    pid_t waker = -1;
    if (me == 1) {   /* a child stops this rank 0.3 s into its allreduce, resumes it 4 s later */
        pid_t parent = getpid();
        waker = fork();
        if (waker == 0) {
            usleep(300000);
            kill(parent, SIGSTOP);
            usleep(4000000);
            kill(parent, SIGCONT);
            _exit(0);
        }
    }
    uint64_t mine = (uint64_t)me + 1, sum = 0;
    gas_status_t st;
    if (me == 1) {
        st = gas_allreduce(GAS_TEAM_WORLD, &sum, &mine, 1, GAS_UINT64, GAS_OP_SUM);
        CHECK(st == GAS_OK || st == GAS_ERR_TIMEOUT, "rank 1's allreduce after the resume "
              "returned %d (%s)", (int)st, gas_last_error());
        int completed = st == GAS_OK;
        if (completed)
            CHECK(sum == 6, "rank 1's allreduce completed with %llu, want 6",
                  (unsigned long long)sum);
        barrier_patiently();
        barrier_patiently();
        uint64_t s2 = 0;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &s2, &mine, 1, GAS_UINT64, GAS_OP_SUM));
        CHECK(s2 == 6, "the allreduce after the resume: %llu, want 6", (unsigned long long)s2);
        waitpid(waker, NULL, 0);
        test_note("rank 1: its stopped allreduce %s", completed ? "completed" : "failed");
        if (completed) {   /* finalize here: test_end's would not say why */
            st = gas_finalize();
            CHECK(st == GAS_OK, "rank 1's gas_finalize after its allreduce completed, the "
                  "others' timed out: %d (%s)", (int)st, gas_last_error());
            return t_failures ? 1 : 0;
        }
        return test_end();
    }
    usleep(600000);   /* rank 1 is stopped by then */
    st = gas_allreduce(GAS_TEAM_WORLD, &sum, &mine, 1, GAS_UINT64, GAS_OP_SUM);
    CHECK(st == GAS_ERR_TIMEOUT, "rank %d's allreduce with rank 1 stopped returned %d (%s)", me,
          (int)st, gas_last_error());
    if (me == 2) {
        uint64_t v = 42, old = 0;
        CHECK_OK(gas_put_nbi(at0, &v, 8));
        CHECK_OK(gas_put_nbi(at1, &v, 8));
        st = gas_quiet();
        const char *e = gas_last_error();
        if (st == GAS_ERR_TIMEOUT)   /* shm puts complete in the call: nothing to wait for */
            CHECK(has(e, "rank 1 has not acknowledged") && !has(e, "rank 0 has"),
                  "gas_quiet's timeout does not name rank 1 alone: %s", e);
        else
            CHECK_OK(st);
        st = gas_atomic_fetch_add_u64(at1, 1, &old);
        e = gas_last_error();
        if (st == GAS_ERR_TIMEOUT)
            CHECK(has(e, "on rank 1"), "a fetch-add's timeout does not name rank 1: %s", e);
        else
            CHECK_OK(st);   /* shm: applied in the call */
    }
    barrier_patiently();
    barrier_patiently();
    uint64_t s2 = 0;
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &s2, &mine, 1, GAS_UINT64, GAS_OP_SUM));
    CHECK(s2 == 6, "the allreduce after the resume: %llu, want 6", (unsigned long long)s2);
    return test_end();
}
