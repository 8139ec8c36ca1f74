/*
 * test_udp_peer - a peer that stops answering (2 ranks on one host,
 * GAS_TRANSPORT=udp, a short GAS_UDP_PEER_TIMEOUT).
 *
 * Default mode ("stop"): rank 0 stops rank 1 with SIGSTOP (on the wire a
 * stopped process and a dead one look the same, and gasrun does not tear
 * the job down):
 *  1. a blackout of half the peer timeout is survived: puts issued during
 *     it complete once rank 1 is continued, promptly (retransmission
 *     back-off is capped by GAS_UDP_RTO_MAX), and the data is right;
 *  2. a blackout longer than the timeout fails the waiting get with
 *     GAS_ERR_PEER, no sooner than the timeout and not much later, with
 *     an error naming rank 1; further operations to rank 1 fail at once.
 *  Then rank 1 is continued and both ranks leave without gas_finalize
 *  (its barrier cannot complete with a peer declared dead).
 *
 * Mode "kill" (tests/scripts/udp-peer-death.sh): rank 1 SIGKILLs itself;
 * rank 0 ignores the SIGTERM gasrun then sends and must report
 * "survivor: ... GAS_ERR_PEER" within the timeout, before gasrun's SIGKILL.
 */
#include "udp_test.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static double timeout_s = 1.0;
static pid_t pid1;
static double blackout_s, resumed_at;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* SIGSTOP takes effect asynchronously: wait until every thread of pid is stopped. */
static void stop_rank1(void)
{
    CHECK(kill(pid1, SIGSTOP) == 0, "SIGSTOP rank 1");
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid1);
    for (int tries = 0; tries < 1000; tries++) {
        int running = 0;
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[384], buf[512];
            snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
            FILE *f = fopen(path, "r");
            if (f == NULL)
                continue;
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = '\0';
            const char *paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
            running |= paren == NULL || (paren[2] != 'T' && paren[2] != 't');
        }
        if (d)
            closedir(d);
        if (!running)
            return;
        sleep_s(0.001);
    }
    FAIL("rank 1 did not stop");
}

static void *resume_later(void *arg)
{
    sleep_s(blackout_s);
    kill(pid1, SIGCONT);
    resumed_at = test_elapsed();
    return arg;
}

static void survive_blackout(gas_ptr_t data)
{
    enum { N = 64 << 10 };
    uint8_t *buf = test_xmalloc(N), *back = test_xmalloc(N);
    pattern_fill(buf, N, 0, 1, 0);
    blackout_s = timeout_s / 2;
    pthread_t th;
    stop_rank1();
    pthread_create(&th, NULL, resume_later, NULL);
    for (int i = 0; i < 4; i++)
        CHECK_OK(gas_put_nbi(data, buf, N));
    CHECK_OK(gas_quiet());
    double done = test_elapsed();
    pthread_join(th, NULL);
    test_note("a %.2f s blackout survived: quiet returned %.3f s after rank 1 was continued",
              blackout_s, done - resumed_at);
    CHECK(done - resumed_at < 1.5, "recovery took %.2f s after the blackout", done - resumed_at);
    CHECK_OK(gas_get(back, data, N));
    check_bytes("after the blackout", back, buf, N, 0);
    free(buf);
    free(back);
}

static void declare_dead(gas_ptr_t data)
{
    uint64_t v = 0;
    stop_rank1();
    double t0 = test_elapsed();
    gas_status_t st = gas_get(&v, data, 8);
    double took = test_elapsed() - t0;
    CHECK(st == GAS_ERR_PEER, "get from a stopped peer returned %d (%s)", (int)st, gas_strerror(st));
    CHECK(strstr(gas_last_error(), "rank 1") != NULL, "the error names rank 1: \"%s\"",
          gas_last_error());
    CHECK(took >= timeout_s * 0.9 && took < timeout_s + 3, "declared dead after %.2f s (timeout %.2f s)",
          took, timeout_s);
    test_note("a stopped peer failed the get with GAS_ERR_PEER after %.2f s: %s", took,
              gas_last_error());
    t0 = test_elapsed();
    CHECK_STATUS(gas_put(data, &v, 8), GAS_ERR_PEER);
    uint64_t old;
    CHECK_STATUS(gas_atomic_fetch_add_u64(data, 1, &old), GAS_ERR_PEER);
    CHECK(test_elapsed() - t0 < 0.5, "operations on a dead peer fail at once");
    kill(pid1, SIGCONT);
}

static void survivor(gas_ptr_t data)
{
    uint64_t v = 1;
    double t_fail = 0;
    for (long i = 0;; i++) {
        if (gas_put_nbi(data, &v, 8) != GAS_OK || gas_quiet() != GAS_OK) {
            t_fail = test_elapsed();
            break;
        }
    }
    printf("[udp_peer rank 0] survivor: %s after %.2f s: %s\n",
           strstr(gas_last_error(), "dead or unreachable") ? "GAS_ERR_PEER" : "another error",
           t_fail, gas_last_error());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int kill_mode = argc > 1 && strcmp(argv[1], "kill") == 0;
    if (kill_mode)
        signal(SIGTERM, SIG_IGN); /* gasrun's teardown must not end the survivor early */
    test_begin("udp_peer");
    const char *t = getenv("GAS_UDP_PEER_TIMEOUT");
    if (t && *t)
        timeout_s = strtod(t, NULL) / (strstr(t, "ms") ? 1000.0 : 1.0);
    if (udp_test_skip(2, 1, 1 - t_rank, NULL))
        return 77;
    gas_ptr_t pids, data;
    MUST(gas_malloc(2 * sizeof(uint64_t), &pids));
    MUST(gas_malloc_dist(2, 64 << 10, GAS_DIST_BLOCK, 0, &data));
    uint64_t mine = (uint64_t)getpid(), other = 0;
    MUST(gas_put(test_at(pids, 8 * (uint64_t)t_rank), &mine, 8));
    MUST(gas_barrier());
    MUST(gas_get(&other, test_at(pids, 8 * (uint64_t)(1 - t_rank)), 8));
    gas_ptr_t data1 = test_at(data, 64 << 10);
    if (t_rank == 1) {
        MUST(gas_barrier());
        if (kill_mode)
            kill(getpid(), SIGKILL);
        /* Out of the library until rank 0 is gone (it stops and continues us). */
        while (kill((pid_t)other, 0) == 0 || errno != ESRCH)
            sleep_s(0.02);
        _exit(0);
    }
    pid1 = (pid_t)other;
    MUST(gas_barrier());
    if (kill_mode) {
        survivor(data1);
        _exit(0);
    }
    survive_blackout(data1);
    declare_dead(data1);
    fprintf(stderr, t_failures ? "[udp_peer rank 0] FAILED: %ld failure(s)\n"
                               : "[udp_peer rank 0] passed%.0ld\n", t_failures);
    fflush(stdout);
    _exit(t_failures ? 1 : 0);
}
