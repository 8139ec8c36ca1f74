/*
 * test_udp_silent - waits on a rank that went silent fail, they do not hang
 * (GAS_TRANSPORT=udp, GAS_UDP_PEER_TIMEOUT=1s, GAS_ERRORS=return, >= 3 ranks).
 *
 * The last rank stops itself (SIGSTOP: on the wire a stopped process and a
 * dead one look the same, and gasrun does not end the job).  Every other
 * rank then makes one call that cannot complete without it, chosen by argv[1]:
 *   barrier    gas_barrier
 *   allreduce  gas_allreduce on the world team
 *   team       gas_broadcast on a team of every rank in reverse order
 *   destroy    gas_team_destroy of that team
 *   relay      gas_allreduce, rank 0 with GAS_UDP_PEER_TIMEOUT=8s: it must
 *              learn of the loss from the others (their failure notes or their
 *              udp's report, whichever comes first) and still name the rank
 * Most ranks have nothing outstanding to the silent one (a dissemination
 * round waits for a signal from a rank it sends nothing to), so only the
 * liveness probe of a long wait gets it declared dead.  Each survivor must
 * get GAS_ERR_PEER naming the silent rank, no sooner than the peer timeout
 * and within 10 s, saying how it was lost: a rank on the silent one's node
 * (two network namespaces: tests/manifest runs that too) reaches it over shm
 * and never probes it, so it fails on another rank's report and must say so.
 * Then rank 0 continues the silent rank, which leaves at
 * once, and all leave without gas_finalize (its barrier cannot complete).
 */
#include "udp_test.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "barrier";
    const char *rank_env = getenv("GASRUN_RANK");
    int relay = strcmp(mode, "relay") == 0;
    if (relay && rank_env != NULL && strcmp(rank_env, "0") == 0)
        setenv("GAS_UDP_PEER_TIMEOUT", "8s", 1);
    test_begin("udp_silent");
    /* The peer half the job away is off this rank's node also when two namespaces split it. */
    if (udp_test_skip(3, 0, (t_rank + t_nranks / 2) % t_nranks, NULL))
        return 77;
    int n = t_nranks, me = t_rank, victim = n - 1;
    gas_peer_stats_t vs;
    MUST(gas_peer_stats(victim, &vs));
    int node_mate = strcmp(vs.transport, "shm") == 0;   /* reaches the victim over shm: never probes it */
    uint64_t pid = (uint64_t)getpid(), *pids = test_xmalloc((size_t)n * 8);
    MUST(gas_allgather(GAS_TEAM_WORLD, pids, &pid, 1, GAS_UINT64));
    gas_team_t rev;
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, -me, &rev));
    int64_t v = me, sum = 0;
    MUST(gas_allreduce(rev, &sum, &v, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(sum == (int64_t)n * (n - 1) / 2, "allreduce before the silence: %lld", (long long)sum);
    MUST(gas_barrier());
    if (me == victim) {
        raise(SIGSTOP);
        _exit(0);
    }
    /* From before the victim can have stopped: the peer timeout may count
     * from its last answer, before this rank's own wait began. */
    double t0 = test_elapsed();
    usleep(100000);   /* the victim is stopped by now */
    gas_status_t st;
    int64_t buf[4] = {1, 2, 3, 4};
    if (strcmp(mode, "barrier") == 0)
        st = gas_barrier();
    else if (strcmp(mode, "allreduce") == 0 || relay)
        st = gas_allreduce(GAS_TEAM_WORLD, buf, buf, 4, GAS_INT64, GAS_OP_SUM);
    else if (strcmp(mode, "team") == 0)
        st = gas_broadcast(rev, buf, 4, GAS_INT64, 0);
    else if (strcmp(mode, "destroy") == 0)
        st = gas_team_destroy(rev);
    else
        test_die("unknown mode");
    double took = test_elapsed() - t0;
    char want[32];
    snprintf(want, sizeof want, "rank %d ", victim);
    CHECK(st == GAS_ERR_PEER, "%s: status %s (%s), expected GAS_ERR_PEER", mode, gas_strerror(st),
          gas_last_error());
    CHECK(strstr(gas_last_error(), want) != NULL, "%s: the error does not name rank %d: %s", mode,
          victim, gas_last_error());
    /* A node mate can only have learnt of the loss from another rank's report, and must say so. */
    CHECK(strstr(gas_last_error(), node_mate || (relay && me == 0) ? "another rank's udp gave up on it"
                                                                   : "gave up on it") !=
              NULL,
          "%s: the error does not say how rank %d was lost%s: %s", mode, victim,
          node_mate ? " (by another rank's report)" : "", gas_last_error());
    CHECK(took >= 0.9 && took < 10, "%s: failed after %.2f s (the peer timeout is 1 s)", mode, took);
    test_note("%s failed after %.2f s: %s", mode, took, gas_last_error());
    /* Out of band (the job cannot synchronise any more): leave only when
     * every survivor's wait has ended, or a rank that left would be the one
     * a slower survivor gives up on.  Then rank 0 continues the victim. */
    char dir[96], path[128];
    snprintf(dir, sizeof dir, "/tmp/gas-udp-silent-%llu", (unsigned long long)pids[victim]);
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/%d", dir, me);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    for (int tries = 0; tries < 2000; tries++) {   /* 20 s at most */
        int all = 1;
        for (int r = 0; r < victim && all; r++) {
            snprintf(path, sizeof path, "%s/%d", dir, r);
            all = access(path, F_OK) == 0;
        }
        if (all)
            break;
        usleep(10000);
    }
    if (me == 0) {
        usleep(200000);   /* the others have seen every file */
        for (int r = 0; r < victim; r++) {
            snprintf(path, sizeof path, "%s/%d", dir, r);
            unlink(path);
        }
        rmdir(dir);
        kill((pid_t)pids[victim], SIGCONT);
    }
    fprintf(stderr, "[udp_silent rank %d] %s\n", me, t_failures ? "FAILED" : "passed");
    fflush(stdout);
    _exit(t_failures ? 1 : 0);
}
