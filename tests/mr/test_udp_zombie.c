/*
 * test_udp_zombie - a rank declared dead that comes back (a stopped process
 * resumed), and what the survivors' calls report after such a loss.
 * Run over two network namespaces with -n 3 --ppn 2 (ranks 0 and 1 on one
 * node, 2 on the other), GAS_UDP_PEER_TIMEOUT=2s, GAS_ERRORS=return:
 * tests/manifest (udp_zombie_netns, udp_quiet_lost_netns).  With
 * TEST_REMOTE=rdma and GAS_RDMA_DEVICE=sim the pairs across the nodes go
 * over the rdma simulation instead (rdma_zombie_netns, rdma_quiet_lost_netns):
 * liveness there is udp's, and the same outcomes must hold.
 *
 * Rank 1, the victim, stops itself (SIGSTOP) after a barrier; ranks 0 (its
 * node-mate over shm) and 2 (over udp) fail their next barrier with
 * GAS_ERR_PEER.  Then, by argv[1]:
 *   quiet   each survivor puts to the other and calls gas_quiet, which must
 *           succeed: the caller issued nothing to the victim (only the
 *           barrier's own traffic and udp's probes went to it, and the
 *           barrier reported the loss); a put to the victim fails at once
 *           with GAS_ERR_PEER, over shm too.  The victim is then continued
 *           and leaves at once.
 *   zombie  rank 0 continues the victim, which calls gas_barrier: it must
 *           fail with GAS_ERR_PEER saying that this rank was declared dead
 *           (a survivor's DEAD notice), not blame a healthy rank.  The
 *           survivors wait three peer timeouts (time enough for the victim
 *           to have declared them dead, had it not learnt) and must still
 *           work together (an allreduce on their own team, a put and a get)
 *           and must not count each other as lost.
 * Every rank leaves without gas_finalize (its barrier cannot complete).
 */
#include "check.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#define VICTIM 1
#define TIMEOUT_S 2.0   /* GAS_UDP_PEER_TIMEOUT in the manifest */

static char dir[96];

/* Out-of-band marks between ranks that can no longer synchronise. */
static void mark(const char *what)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, what);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

/* Wait (at most 30 s) until mark `what` exists. */
static int await_mark(const char *what)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, what);
    for (int tries = 0; tries < 3000; tries++) {
        if (access(path, F_OK) == 0)
            return 1;
        usleep(10000);
    }
    return 0;
}

static void remove_marks(void)
{
    static const char *const all[] = {"failed2", "cont", "victim", "done0", "done2", "gone1"};
    char path[160];
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, all[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* The victim's part after it is continued. */
static void victim_resumed(const char *mode, gas_ptr_t A)
{
    if (strcmp(mode, "zombie") != 0)
        return;
    gas_status_t st = gas_barrier();
    CHECK(st == GAS_ERR_PEER, "resumed: barrier: %s (%s), expected GAS_ERR_PEER", gas_strerror(st),
          gas_last_error());
    CHECK(strstr(gas_last_error(), "this rank (1) was declared dead by rank") != NULL,
          "resumed: the barrier's error does not say that this rank was declared dead: %s",
          gas_last_error());
    test_note("resumed: %s", gas_last_error());
    uint64_t v = 5;
    st = gas_put(gas_ptr_make(0, gas_ptr_offset(A)), &v, 8);
    CHECK(st == GAS_ERR_PEER && strstr(gas_last_error(), "this rank (1) was declared dead"),
          "resumed: put to rank 0: %s (%s)", gas_strerror(st), gas_last_error());
    mark("victim");
    /* Stay until the survivors are done: they check what this rank did meanwhile. */
    await_mark("done0");
    await_mark("done2");
    mark("gone1");
}

/* A survivor's part: checks after the victim's loss. */
static void survivor(const char *mode, gas_team_t pair, gas_ptr_t A)
{
    int me = t_rank, other = 2 - me;
    if (strcmp(mode, "quiet") == 0) {
        uint64_t v = 42 + (uint64_t)me;
        CHECK_OK(gas_put(test_at(A, 8 * (uint64_t)me), &v, 8));
        gas_status_t st = gas_quiet();
        CHECK(st == GAS_OK, "quiet after a put to live rank %d: %s (%s)", other, gas_strerror(st),
              gas_last_error());
        double t0 = test_elapsed();
        st = gas_put(gas_ptr_make(VICTIM, gas_ptr_offset(A)), &v, 8);
        double took = test_elapsed() - t0;
        CHECK(st == GAS_ERR_PEER && took < 0.5,
              "put to the lost rank %d (over %s): %s after %.2f s, expected GAS_ERR_PEER at once",
              VICTIM, me == 0 ? "shm" : "udp", gas_strerror(st), took);
        return;
    }
    /* zombie: give the resumed victim time to misbehave, then work together */
    CHECK(await_mark("cont"), "the victim was not continued");
    usleep((useconds_t)(3 * TIMEOUT_S * 1e6));
    int64_t one = 1, sum = 0;
    gas_status_t st = gas_allreduce(pair, &sum, &one, 1, GAS_INT64, GAS_OP_SUM);
    CHECK(st == GAS_OK && sum == 2, "allreduce of the survivors after the victim resumed: %s (%s)",
          gas_strerror(st), st ? gas_last_error() : "");
    uint64_t v = 99 + (uint64_t)me, got = 0;
    gas_ptr_t there = gas_ptr_make(other, gas_ptr_offset(A) + 8 * (uint64_t)me);
    st = gas_put(there, &v, 8);
    if (st == GAS_OK)
        st = gas_quiet();
    if (st == GAS_OK)
        st = gas_get(&got, there, 8);
    CHECK(st == GAS_OK && got == v, "put/get to live rank %d after the victim resumed: %s (%s)",
          other, gas_strerror(st), st ? gas_last_error() : "");
    CHECK(await_mark("victim"), "the victim did not report");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "quiet";
    test_begin("udp_zombie");
    /* Ranks 0 and 1 share a node (shm), rank 2 is on another (udp): all agree. */
    int64_t ok = t_nranks == 3, all_ok = 0;
    /* (TEST_REMOTE=rdma: the remote pair goes over the rdma sim) */
    const char *remote = getenv("TEST_REMOTE") ? getenv("TEST_REMOTE") : "udp";
    const char *want[3][3] = {{"", "shm", remote}, {"shm", "", remote}, {remote, remote, ""}};
    for (int r = 0; r < 3 && ok; r++) {
        gas_peer_stats_t ps;
        ok = r == t_rank || (gas_peer_stats(r, &ps) == GAS_OK &&
                             strcmp(ps.transport, want[t_rank][r]) == 0);
        if (!ok && gas_peer_stats(r, &ps) == GAS_OK)
            printf("rank %d reaches rank %d over %s\n", t_rank, r, ps.transport);
    }
    MUST(gas_allreduce(GAS_TEAM_WORLD, &all_ok, &ok, 1, GAS_INT64, GAS_OP_MIN));
    if (!all_ok && getenv("TEST_REMOTE"))  /* asked for that route: a test, not a skip */
        test_die("the pairs across the nodes do not go over TEST_REMOTE");
    if (!all_ok) {
        if (t_rank == 0)
            printf("skipped: needs 3 ranks, 0 and 1 on one node and 2 on another (netns)\n");
        gas_finalize();
        return 77;
    }
    if (strcmp(mode, "quiet") != 0 && strcmp(mode, "zombie") != 0)
        test_die("unknown mode");
    int me = t_rank;
    uint64_t pid = (uint64_t)getpid(), pids[3];
    MUST(gas_allgather(GAS_TEAM_WORLD, pids, &pid, 1, GAS_UINT64));
    snprintf(dir, sizeof dir, "/tmp/gas-udp-zombie-%llu", (unsigned long long)pids[VICTIM]);
    gas_team_t pair;   /* the survivors: ranks 0 and 2 */
    MUST(gas_team_split_color(GAS_TEAM_WORLD, me == VICTIM ? GAS_COLOR_UNDEFINED : 0, me, &pair));
    gas_ptr_t A;
    MUST(gas_malloc(64, &A));
    if (me == 0)
        mkdir(dir, 0700);
    MUST(gas_barrier());
    if (me == VICTIM) {
        raise(SIGSTOP);
        victim_resumed(mode, A);
        if (t_failures)
        remove_marks();   /* gasrun ends the others: nobody else may */
    fprintf(stderr, "[udp_zombie rank %d] %s\n", me, t_failures ? "FAILED" : "passed");
        fflush(stdout);
        _exit(t_failures ? 1 : 0);
    }
    usleep(100000);   /* the victim is stopped by now */
    gas_status_t st = gas_barrier();
    CHECK(st == GAS_ERR_PEER && strstr(gas_last_error(), "rank 1 "),
          "barrier without the stopped rank: %s (%s), expected GAS_ERR_PEER naming rank 1",
          gas_strerror(st), gas_last_error());
    if (me == 2)
        mark("failed2");
    if (strcmp(mode, "zombie") == 0 && me == 0) {
        CHECK(await_mark("failed2"), "rank 2 did not fail its barrier");
        mark("cont");
        kill((pid_t)pids[VICTIM], SIGCONT);
    }
    survivor(mode, pair, A);
    /* Leave once both survivors are done (a rank that left would be lost too). */
    mark(me == 0 ? "done0" : "done2");
    {
        char path[160];
        snprintf(path, sizeof path, "%s/%s", dir, me == 0 ? "done2" : "done0");
        for (int tries = 0; tries < 3000 && access(path, F_OK) != 0; tries++)
            usleep(10000);
    }
    if (me == 0) {
        if (strcmp(mode, "quiet") == 0)
            kill((pid_t)pids[VICTIM], SIGCONT);   /* it leaves at once */
        else
            await_mark("gone1");
        usleep(200000);
        remove_marks();
    }
    if (t_failures)
        remove_marks();   /* gasrun ends the others: nobody else may */
    fprintf(stderr, "[udp_zombie rank %d] %s\n", me, t_failures ? "FAILED" : "passed");
    fflush(stdout);
    _exit(t_failures ? 1 : 0);
}
