/*
 * test_rank_gone.c - a node-mate that leaves without gas_finalize (exit 0,
 * which gasrun lets the job go on after) must not hang the others: the last
 * rank exits right after gas_init; every other rank then calls MODE
 * (barrier, allreduce or teambarrier: a world barrier, a team collective, a
 * team barrier; or wait: gas_wait_until on a word of its own that nobody
 * writes, after a gas_malloc and a barrier that the last rank takes part
 * in), which must fail with GAS_ERR_PEER within GAS_TIMEOUT (set it: the
 * test fails on GAS_ERR_TIMEOUT) naming a rank as gone (the last one, or a
 * survivor that already failed and left), also where it passes on a member's
 * failure note.  The error names the call. Then gas_finalize, which fails
 * the same way, and exit 0.
 *
 * Over udp (GAS_TRANSPORT=udp, or ranks on other "hosts": ANY_ROUTE set), a
 * rank reached by udp whose process ended is known by its port's refusal
 * (ICMP port unreachable), long before GAS_UDP_PEER_TIMEOUT (keep that above
 * GAS_TIMEOUT, so a silence-based death would fail the test as a timeout):
 * the error then says its address refuses datagrams, or that another rank's
 * udp gave up on it.  In wait mode the rank waits on its own word (the
 * barrier before had every rank talk to the last one, or hear from it), and
 * nothing it waits for is owed by the gone rank: its udp must look by itself.
 */
#include <gas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "barrier";
    if (gas_init() != GAS_OK)
        return 2;
    int me = gas_rank(), n = gas_nranks(), gone = n - 1;
    if (n < 2) {
        printf("rank_gone: needs 2 ranks or more\n");
        return 2;
    }
    gas_ptr_t words = GAS_NULL;
    if (strcmp(mode, "wait") == 0 &&
        (gas_malloc(8 * (size_t)n, &words) != GAS_OK || gas_barrier() != GAS_OK))
        return 2;
    if (me == gone)
        exit(0);
    gas_status_t st;
    if (strcmp(mode, "wait") == 0) {   /* any rank could write it: the others are looked at */
        gas_ptr_t mine;
        if (gas_ptr_index(words, 8, (uint64_t)me, &mine) != GAS_OK || gas_ptr_rank(mine) != me)
            return 2;
        st = gas_wait_until_u64((uint64_t *)gas_ptr_local(mine), GAS_CMP_EQ, 1);
    } else if (strcmp(mode, "allreduce") == 0) {
        int64_t x = 1, y = 0;
        st = gas_allreduce(GAS_TEAM_WORLD, &y, &x, 1, GAS_INT64, GAS_OP_SUM);
    } else if (strcmp(mode, "teambarrier") == 0) {
        st = gas_team_barrier(GAS_TEAM_WORLD);
    } else {
        st = gas_barrier();
    }
    const char *msg = st != GAS_OK ? gas_last_error() : "";
    /* the gone rank, or a survivor that failed, finalized and left before
     * this rank's wait for it ended (the failure spreads so too) */
    int named = strstr(msg, " is gone: its process on this node has ended") != NULL;
    if (getenv("ANY_ROUTE") || (getenv("GAS_TRANSPORT") && !strcmp(getenv("GAS_TRANSPORT"), "udp")))
        named |= strstr(msg, " is dead or unreachable (its udp address refuses datagrams") ||
                 strstr(msg, " is dead or unreachable (another rank's udp gave up on it and "
                             "said so");
    const char *call = !strcmp(mode, "wait")        ? "gas_wait_until_u64: "
                     : !strcmp(mode, "allreduce")   ? "gas_allreduce: "
                     : !strcmp(mode, "teambarrier") ? "gas_team_barrier: "
                                                    : "gas_barrier: ";
    named &= strstr(msg, call) != NULL;
    /* A peer's failure note that names the lost rank is checked here too: this
     * rank looks at its process itself (before, it said "another rank's udp
     * gave up on it" in a job without udp). */
    int ok = st == GAS_ERR_PEER && named;
    printf("rank_gone rank %d: %s returned %d (%s): %s\n", me, mode, (int)st,
           ok ? "as expected" : "WRONG", msg);
    gas_finalize(); /* fails too (the gone rank is not in its barrier); the rank leaves */
    return ok ? 0 : 1;
}
