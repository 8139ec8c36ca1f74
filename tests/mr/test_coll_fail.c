/*
 * test_coll_fail - a collective that fails on one rank fails, and never
 * returns GAS_OK with a wrong result, on the others: non-blocking forms
 * completed by gas_wait or gas_test, and blocking ones after a GAS_TIMEOUT.
 *
 *   nb        (2+ ranks) four mismatched _nb calls on the world team, each
 *             completed with gas_wait: the last rank's allreduce_nb refused
 *             (NULL dst), allreduce_nb counts 8 against 9, allreduce_nb
 *             against broadcast_nb, and (on a copy of the world team, then
 *             destroyed) broadcast_nb whose root differs on the last rank.
 *             Every rank's wait in the first three fails (GAS_ERR_INVALID,
 *             the refusal named where it was one), never GAS_TIMEOUT; in
 *             the fourth a rank whose wait returned GAS_OK with data that is
 *             not the root's must get GAS_ERR_INVALID from gas_team_destroy.
 *             A matched allreduce after each case gives the right sums.
 *   test      the same, each handle completed by a gas_test loop that gives
 *             up after 20 s (gas_test used never to learn of the failure).
 *   timeout   (2+ ranks; GAS_TIMEOUT=2s) the last rank sleeps 5 s before
 *             three one_shot allreduces, so the others time out in theirs
 *             (a rank whose own wait times out names the late rank; at least
 *             one does, the others may learn of its timeout first): every
 *             call returns GAS_OK only with the right sum, the late rank's
 *             failures name the rank that timed out; after a world barrier
 *             (retried while it times out) five allreduces succeed with the
 *             right sums.
 * GAS_ERRORS=return.
 */
#include "check.h"

#include <unistd.h>

enum { NB_CASES = 4, N = 9 };
static const char *const nb_name[NB_CASES] = {
    "allreduce_nb refused on the last rank", "allreduce_nb with counts 8 and 9",
    "allreduce_nb against broadcast_nb", "broadcast_nb with a differing root"};
static int use_test;   /* complete handles with gas_test instead of gas_wait */

/* Complete h: gas_wait, or gas_test until done (at most 20 s). */
static gas_status_t complete(gas_handle_t h)
{
    if (!use_test)
        return gas_wait(h);
    int done = 0;
    gas_status_t st = GAS_OK;
    double until = test_elapsed() + 20;
    while (!done && (st = gas_test(h, &done)) == GAS_OK && test_elapsed() < until)
        ;
    if (st == GAS_OK && !done) {
        FAIL("gas_test: not done after 20 s");
        return GAS_ERR_TIMEOUT;
    }
    return st;
}

/* Case c on team t (this rank is team rank tr of n): its status; dst the result. */
static gas_status_t nb_call(int c, gas_team_t t, int tr, int n, int32_t *dst, const int32_t *src)
{
    gas_handle_t h = GAS_HANDLE_NULL;
    int last = tr == n - 1;
    gas_status_t st;
    switch (c) {
    case 0:
        st = gas_allreduce_nb(t, last ? NULL : dst, src, 8, GAS_INT32, GAS_OP_SUM, &h);
        break;
    case 1:
        st = gas_allreduce_nb(t, dst, src, tr == 0 ? 8 : 9, GAS_INT32, GAS_OP_SUM, &h);
        break;
    case 2:
        st = last ? gas_broadcast_nb(t, dst, 8, GAS_INT32, 0, &h)
                  : gas_allreduce_nb(t, dst, src, 8, GAS_INT32, GAS_OP_SUM, &h);
        break;
    default:
        st = gas_broadcast_nb(t, dst, 8, GAS_INT32, last ? 1 : 0, &h);
        break;
    }
    return st == GAS_OK ? complete(h) : st;
}

/* A matched allreduce on the world team must give the right sums (after case `what`). */
static void check_allreduce(const char *what)
{
    int n = t_nranks;
    int64_t v[2] = {t_rank, 1}, sum[2] = {-1, -1};
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, sum, v, 2, GAS_INT64, GAS_OP_SUM));
    CHECK(sum[0] == (int64_t)n * (n - 1) / 2 && sum[1] == n,
          "%s: the allreduce after it gave %lld %lld", what, (long long)sum[0], (long long)sum[1]);
}

/* Whether msg (after its "rank r: call:" prefix) names rank r as "rank r" followed by a
 * space, a quote or a comma. */
static int names_rank(const char *msg, int r)
{
    const char *p = strstr(msg, ": ");
    char want[16];
    int len = snprintf(want, sizeof want, "rank %d", r);
    for (p = p ? p : msg; (p = strstr(p, want)) != NULL; p += len)
        if (p[len] == ' ' || p[len] == '\'' || p[len] == ',')
            return 1;
    return 0;
}

static void nb_mode(void)
{
    int me = t_rank, n = t_nranks;
    for (int c = 0; c < NB_CASES; c++) {
        gas_team_t t = GAS_TEAM_WORLD;
        if (c == 3)
            CHECK_OK(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, &t));
        int32_t src[N], dst[N];
        for (int i = 0; i < N; i++) {
            src[i] = me + 10 * i;
            dst[i] = c == 3 ? me * 1000 + i : -99;
        }
        gas_status_t st = nb_call(c, t, me, n, dst, src);
        CHECK(st != GAS_ERR_TIMEOUT, "%s: GAS_ERR_TIMEOUT (%s)", nb_name[c], gas_last_error());
        if (c == 0 && me != n - 1)
            CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "refused its collective"),
                  "%s: rank %d got %s (%s), not the refusal", nb_name[c], me, gas_strerror(st),
                  st == GAS_OK ? "" : gas_last_error());
        else if (c < 3)
            CHECK(st == GAS_ERR_INVALID, "%s: rank %d got %s (%s), dst[0] = %d", nb_name[c], me,
                  gas_strerror(st), st == GAS_OK ? "" : gas_last_error(), (int)dst[0]);
        /* the rank whose call differs is named on every other rank, also where the news
         * came from a member that found the mismatch (not only "rank r failed") */
        int odd_one = c == 1 ? 0 : n - 1;
        if ((c == 1 || c == 2) && me != odd_one && st == GAS_ERR_INVALID)
            CHECK(names_rank(gas_last_error(), odd_one), "%s: rank %d's error does not name rank "
                  "%d, whose call differs: %s", nb_name[c], me, odd_one, gas_last_error());
        if (c == 3) {
            /* the root (0 on most ranks) holds 0 * 1000 + i */
            int right = 1;
            for (int i = 0; i < 8; i++)
                right &= dst[i] == i;
            gas_status_t dt = gas_team_destroy(t);
            CHECK(st == GAS_OK || st == GAS_ERR_INVALID, "%s: rank %d got %s", nb_name[c], me,
                  gas_strerror(st));
            CHECK(dt == GAS_OK || dt == GAS_ERR_INVALID, "%s: destroy on rank %d: %s", nb_name[c],
                  me, gas_strerror(dt));
            if (st == GAS_OK && !right)
                CHECK(dt == GAS_ERR_INVALID, "%s: rank %d's wait and destroy returned GAS_OK "
                      "with dst[0] = %d (the root's is 0)", nb_name[c], me, (int)dst[0]);
        }
        check_allreduce(nb_name[c]);
        CHECK_OK(gas_barrier());
    }
}

static void timeout_mode(void)
{
    int me = t_rank, n = t_nranks, late = n - 1, failed = 0, firsthand = 0;
    /* one_shot: every rank waits for every other's part directly, so each timeout names
     * the late rank (another algorithm may name a partner that waits for it in turn) */
    CHECK_OK(gas_coll_set_algorithm(GAS_COLL_ALLREDUCE, "one_shot"));
    char named[32];
    snprintf(named, sizeof named, "the part of rank %d,", late);
    if (me == late)
        sleep(5);
    for (int it = 0; it < 3; it++) {
        double d = me + it, r = -1, want = n * (n - 1) / 2.0 + n * it;
        gas_status_t st = gas_allreduce(GAS_TEAM_WORLD, &r, &d, 1, GAS_DOUBLE, GAS_OP_SUM);
        CHECK(st == GAS_OK ? r == want : st == GAS_ERR_TIMEOUT,
              "allreduce %d: %s with %g (want %g)", it, gas_strerror(st), r, want);
        if (st != GAS_OK && me == late)
            CHECK(strstr(gas_last_error(), "GAS_TIMEOUT") != NULL, "allreduce %d: the late rank's "
                  "failure does not name the timeout: %s", it, gas_last_error());
        /* a rank whose own wait timed out names the late rank; one that a member's
         * failure note reached first reports that member's timeout instead */
        if (st == GAS_ERR_TIMEOUT && me != late && failed == 0 &&
            strstr(gas_last_error(), "GAS_TIMEOUT: waited") != NULL) {
            firsthand = 1;
            CHECK(strstr(gas_last_error(), named) != NULL, "allreduce %d: the timeout does not "
                  "name the late rank %d: %s", it, late, gas_last_error());
        }
        failed += st != GAS_OK;
    }
    if (me != late)
        CHECK(failed > 0, "no allreduce timed out while rank %d slept", late);
    gas_status_t st;
    while ((st = gas_barrier()) == GAS_ERR_TIMEOUT)
        ;
    CHECK_OK(st);
    int64_t fh = firsthand, nfh = 0;
    CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &nfh, &fh, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(nfh > 0, "no rank's own wait timed out (each learned of another's timeout first)");
    for (int it = 0; it < 5; it++) {
        double d = me * it, r = -1, want = n * (n - 1) / 2.0 * it;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &r, &d, 1, GAS_DOUBLE, GAS_OP_SUM));
        CHECK(r == want, "allreduce %d after the barrier gave %g (want %g)", it, r, want);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "nb";
    test_begin("coll_fail");
    if (t_nranks < 2) {
        printf("skipped: needs 2 ranks or more\n");
        gas_finalize();
        return 77;
    }
    if (strcmp(mode, "timeout") == 0)
        timeout_mode();
    else {
        use_test = strcmp(mode, "test") == 0;
        nb_mode();
    }
    return test_end();
}
