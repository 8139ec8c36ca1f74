/*
 * test_coll_lost - a rank that stops (SIGSTOP) in the middle of a series of
 * world collectives, in a job over two nodes with two ranks each
 * (tests/scripts/coll-lost-netns.sh; argv[1] names the collective, argv[2]
 * the victim).  On two nodes the default algorithms are hierarchical: only
 * the victim's node-mate waits for it, over shm.  Every survivor must fail
 * with an error (GAS_ERR_PEER, or the mate's failure relayed) instead of
 * waiting forever; each prints "survivor: <status> after <s> s" and rank 0
 * then ends the job with gas_abort(5) (which also ends the stopped rank).
 */
#include <gas.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "allreduce";
    if (gas_init() != GAS_OK)
        return 2;
    int me = gas_rank(), victim = argc > 2 ? atoi(argv[2]) : gas_nranks() - 1;
    double t0 = 0;
    gas_status_t st = GAS_OK;
    for (int it = 0; it < 1000 && st == GAS_OK; it++) {
        if (it == 20) {
            t0 = now_s();
            if (me == victim)
                raise(SIGSTOP);
        }
        int64_t v = me + it, out = 0;
        if (strcmp(what, "bcast") == 0)
            st = gas_broadcast(GAS_TEAM_WORLD, &v, 1, GAS_INT64, 0);
        else if (strcmp(what, "barrier") == 0)
            st = gas_team_barrier(GAS_TEAM_WORLD);
        else
            st = gas_allreduce(GAS_TEAM_WORLD, &out, &v, 1, GAS_INT64, GAS_OP_SUM);
    }
    printf("survivor: rank %d: %s after %.1f s: %s\n", me, gas_strerror(st), now_s() - t0,
           st == GAS_OK ? "" : gas_last_error());
    fflush(stdout);
    if (me == 0) {
        sleep(2);   /* the others report too */
        gas_abort(5, "test_coll_lost done");
    }
    pause();
    return 0;
}
