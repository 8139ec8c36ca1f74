/*
 * test_coll_end - a collective mismatch that no call can see is reported
 * when the team ends.
 *
 * Some mismatched calls complete on every rank: nobody waits for the
 * message that shows the mismatch (a broadcast whose root differs between
 * ranks, a scatter on one rank against a gather on the others, a call only
 * one rank makes).  That message arrives and stays unread; after the last
 * barrier of gas_team_destroy, or of gas_finalize for the teams still live,
 * every message has arrived, so an unread one proves the mismatch.  Others
 * leave two ranks waiting for each other (a reduce or gather whose root
 * differs, a large broadcast): their wait notes must turn that into
 * GAS_ERR_INVALID, not a GAS_TIMEOUT (which this test counts as a failure).
 *
 *   team      (3+ ranks) each case on a team of every rank in reverse order,
 *             then gas_team_destroy: every call and destroy returns GAS_OK or
 *             GAS_ERR_INVALID, and on some rank one of them reports it ("found
 *             at its end" from the destroy where the calls all succeeded);
 *             a matched broadcast before each destroy-free team is also
 *             checked to end cleanly.
 *   refused   (2+ ranks) the last rank's call is refused for its arguments
 *             (a root out of range, a NULL dst, GAS_IN_PLACE off the root,
 *             NULL counts) while the others call correctly: it gets that
 *             error, every other rank GAS_OK or the refusal relayed ("refused
 *             its collective"), never GAS_TIMEOUT; a matched allreduce right
 *             after gives the right sums on every rank; then the same rank
 *             refuses three calls in a row for different reasons before the
 *             others enter the first (each must fail with that call's status
 *             or succeed, never wait for GAS_TIMEOUT); then an allgatherv
 *             whose counts differ on that rank (same total) must fail there
 *             and return GAS_OK nowhere with wrongly cut blocks.
 *   destroy   (2+ ranks) on a team of every rank, one rank calls
 *             gas_team_destroy while the others call a collective that
 *             waits for it (an allreduce, a barrier, a broadcast from it, an
 *             allreduce after a call refused on every rank but it, so its
 *             destroy is numbered with an earlier call; and gas_barrier,
 *             destroy_against_world_barrier): every other rank's
 *             call fails with GAS_ERR_INVALID within 10 s (GAS_TIMEOUT=20s:
 *             never GAS_TIMEOUT) and some rank's error names
 *             gas_team_destroy; then the others destroy the team too, and
 *             every destroy returns (GAS_OK, or GAS_ERR_INVALID reporting
 *             what it found); a world allreduce after it is right.
 *   recover   (3+ ranks) a mismatch that completes on some rank must not
 *             break the team's later calls: on a team of every rank, a
 *             reduce to team rank 0 whose count is doubled on team rank 1 (so
 *             it also picks another algorithm), or a broadcast from team rank
 *             0 while the others allreduce; then five correct allreduces
 *             must give the right sum on every rank (a chunk of the
 *             mismatched call, left unread where that call completed, used
 *             to fail every later call), some rank must report the mismatch
 *             (its call, or its gas_team_destroy "found at its end"), and a
 *             count mismatch must not be blamed on the algorithms.
 *   finalize  (exactly 2 ranks) rank 0 alone broadcasts on the world team;
 *             rank 1's gas_finalize must return GAS_ERR_INVALID saying so,
 *             rank 0's GAS_OK.
 * GAS_ERRORS=return.
 */
#include "check.h"

enum { CASES = 6, BIG = 1 << 15 };
static const char *const case_name[CASES] = {
    "broadcast with differing roots", "scatter against gather", "a call one rank makes",
    "reduce with differing roots", "gather with differing roots",
    "256 KiB broadcast with differing roots"};
static int64_t big[BIG];

/* Run case c on team t (this rank is team rank tr): the call's status. */
static gas_status_t mismatched_call(int c, gas_team_t t, int tr)
{
    int64_t buf[8], out[64];
    for (int i = 0; i < 8; i++)
        buf[i] = tr * 100 + i;
    switch (c) {
    case 0:
        return gas_broadcast(t, buf, 4, GAS_INT64, tr == 0 ? 0 : 1);
    case 1:
        return tr == 0 ? gas_scatter(t, out, buf, 2, GAS_INT64, 0)
                       : gas_gather(t, out, buf, 2, GAS_INT64, 0);
    case 2:
        return tr == 0 ? gas_broadcast(t, buf, 4, GAS_INT64, 0) : GAS_OK;
    case 3:
        return gas_reduce(t, out, buf, 4, GAS_INT64, GAS_OP_SUM, tr == 0 ? 0 : 1);
    case 4:
        return gas_gather(t, out, buf, 2, GAS_INT64, tr == 0 ? 0 : 1);
    default:
        return gas_broadcast(t, big, BIG, GAS_INT64, tr == 0 ? 0 : 1);
    }
}

static int ended_with_report(gas_status_t st)
{
    return st == GAS_ERR_INVALID && strstr(gas_last_error(), "found at its end") != NULL;
}

static void team_mode(void)
{
    int me = t_rank, n = t_nranks;
    gas_ptr_t box;   /* per rank and case: call status, destroy status, reported at end */
    MUST(gas_malloc((size_t)n * CASES * 3 * 8, &box));
    for (int c = 0; c < CASES; c++) {
        gas_team_t t, ok;
        MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, -me, &t));
        MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, me, &ok));
        int tr = gas_team_rank(t);
        gas_status_t call = mismatched_call(c, t, tr);
        gas_status_t end = gas_team_destroy(t);
        int64_t rec[3] = {call, end, ended_with_report(end)};
        if (end != GAS_OK)
            test_note("%s: gas_team_destroy: %s", case_name[c], gas_last_error());
        /* A team whose calls matched ends cleanly. */
        int64_t v[4] = {me, 1, 2, 3};
        CHECK_OK(gas_broadcast(ok, v, 4, GAS_INT64, n - 1));
        CHECK(v[0] == n - 1, "%s: the matched broadcast gave %lld", case_name[c], (long long)v[0]);
        CHECK_OK(gas_team_destroy(ok));
        MUST(gas_put(test_at(box, ((uint64_t)me * CASES + (uint64_t)c) * 24), rec, sizeof rec));
        MUST(gas_barrier());
    }
    if (me == 0) {
        for (int c = 0; c < CASES; c++) {
            int seen = 0, all_calls_ok = 1, reported_at_end = 0;
            for (int r = 0; r < n; r++) {
                int64_t rec[3];
                MUST(gas_get(rec, test_at(box, ((uint64_t)r * CASES + (uint64_t)c) * 24), sizeof rec));
                CHECK((rec[0] == GAS_OK || rec[0] == GAS_ERR_INVALID) &&
                          (rec[1] == GAS_OK || rec[1] == GAS_ERR_INVALID),
                      "%s: rank %d: call %s, destroy %s", case_name[c], r,
                      gas_strerror((gas_status_t)rec[0]), gas_strerror((gas_status_t)rec[1]));
                seen += rec[0] == GAS_ERR_INVALID || rec[1] == GAS_ERR_INVALID;
                all_calls_ok &= rec[0] == GAS_OK;
                reported_at_end += (int)rec[2];
            }
            CHECK(seen > 0, "%s: no rank reported the mismatch", case_name[c]);
            if (all_calls_ok)
                CHECK(reported_at_end > 0, "%s: every call succeeded and no gas_team_destroy "
                      "reported the mismatch", case_name[c]);
            test_note("%s: %d rank(s) reported it%s", case_name[c], seen,
                      all_calls_ok ? ", all at the team's end" : "");
        }
    }
    MUST(gas_barrier());
}

enum { REFUSALS = 5 };
static const char *const refusal_name[REFUSALS] = {
    "broadcast with a root out of range", "allreduce with a NULL dst",
    "reduce with GAS_IN_PLACE off the root", "alltoallv with NULL counts",
    "allreduce_nb with a NULL handle_p"};

/* Case c, refused on the last rank only: the call's status. */
static gas_status_t refusable_call(int c, int refuse)
{
    static int64_t buf[64], out[64];
    size_t counts[64];
    int n = t_nranks;
    for (int i = 0; i < n; i++)
        counts[i] = 1;
    switch (c) {
    case 0:
        return gas_broadcast(GAS_TEAM_WORLD, buf, 8, GAS_INT64, refuse ? n + 3 : 0);
    case 1:
        return gas_allreduce(GAS_TEAM_WORLD, refuse ? NULL : out, buf, 8, GAS_INT64, GAS_OP_SUM);
    case 2:
        return gas_reduce(GAS_TEAM_WORLD, out, refuse ? GAS_IN_PLACE : buf, 8, GAS_INT64,
                          GAS_OP_SUM, 0);
    case 3:
        return gas_alltoallv(GAS_TEAM_WORLD, out, refuse ? NULL : counts, NULL, buf, counts, NULL,
                             GAS_INT64);
    default: {
        gas_handle_t h;
        gas_status_t st = gas_allreduce_nb(GAS_TEAM_WORLD, out, buf, 8, GAS_INT64, GAS_OP_SUM,
                                           refuse ? NULL : &h);
        return st != GAS_OK || refuse ? st : gas_wait(h);
    }
    }
}

static void refused_mode(void)
{
    int me = t_rank, n = t_nranks, refuser = n - 1;
    for (int c = 0; c < REFUSALS; c++) {
        gas_status_t st = refusable_call(c, me == refuser);
        if (me == refuser)
            CHECK(st == GAS_ERR_RANK || st == GAS_ERR_INVALID, "%s: the refusing rank got %s",
                  refusal_name[c], gas_strerror(st));
        else
            CHECK(st == GAS_OK || strstr(gas_last_error(), "refused its collective") != NULL,
                  "%s: rank %d got %s (%s), not GAS_OK or the refusal", refusal_name[c], me,
                  gas_strerror(st), st == GAS_OK ? "" : gas_last_error());
        /* The team goes on: the next calls match and give the right answer. */
        int64_t v[4] = {me, 1, me * me, -me}, sum[4];
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, sum, v, 4, GAS_INT64, GAS_OP_SUM));
        int64_t want0 = (int64_t)n * (n - 1) / 2, want2 = (int64_t)(n - 1) * n * (2 * n - 1) / 6;
        CHECK(sum[0] == want0 && sum[1] == n && sum[2] == want2 && sum[3] == -want0,
              "%s: the allreduce after it gave %lld %lld %lld %lld", refusal_name[c],
              (long long)sum[0], (long long)sum[1], (long long)sum[2], (long long)sum[3]);
        CHECK_OK(gas_barrier());
    }
    /* Three refusals in a row for different reasons (a NULL dst, a root out of range,
     * a count that overflows), all made before the others enter the first: each must
     * reach them with its own status, and none may leave them waiting until GAS_TIMEOUT
     * (a later note used to overwrite an earlier one, or tell it with its own status). */
    {
        gas_status_t st1, st2, st3;
        if (me != refuser) {
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        st1 = refusable_call(1, me == refuser);
        st2 = refusable_call(0, me == refuser);
        static int64_t in8[8], out8[8];
        st3 = gas_allreduce(GAS_TEAM_WORLD, out8, in8, me == refuser ? SIZE_MAX / 4 : 8,
                            GAS_INT64, GAS_OP_SUM);
        if (me == refuser)
            CHECK(st1 == GAS_ERR_INVALID && st2 == GAS_ERR_RANK && st3 == GAS_ERR_OVERFLOW,
                  "three refusals: the refusing rank got %s, %s, %s", gas_strerror(st1),
                  gas_strerror(st2), gas_strerror(st3));
        else
            CHECK((st1 == GAS_OK || st1 == GAS_ERR_INVALID) &&
                      (st2 == GAS_OK || st2 == GAS_ERR_RANK) &&
                      (st3 == GAS_OK || st3 == GAS_ERR_OVERFLOW) &&
                      (st3 == GAS_OK ||
                       strstr(gas_last_error(), "refused its collective") != NULL),
                  "three refusals: rank %d got %s, %s, %s (%s), not GAS_OK or each refusal's "
                  "status", me, gas_strerror(st1), gas_strerror(st2), gas_strerror(st3),
                  gas_last_error());
        /* (a world barrier, not a collective: no message of a later call tells them) */
        CHECK_OK(gas_barrier());
        int64_t v = 1, sum = 0;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &sum, &v, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(sum == n, "three refusals: the allreduce after them gave %lld", (long long)sum);
        CHECK_OK(gas_barrier());
    }
    /* allgatherv whose counts differ on the last rank but not in total: no rank may
     * return GAS_OK with blocks cut where its own counts do not cut them */
    if (n >= 2) {
        size_t counts[64];
        for (int i = 0; i < n; i++)
            counts[i] = 1 + (size_t)(i % 2);
        if (me == refuser) {
            counts[0]++;
            counts[1]--;
        }
        int32_t src[4], dst[256];
        for (int i = 0; i < 4; i++)
            src[i] = me * 10 + i;
        memset(dst, 0xff, sizeof dst);
        gas_status_t st = gas_allgatherv(GAS_TEAM_WORLD, dst, src, counts, NULL, GAS_INT32);
        if (me == refuser)
            CHECK(st == GAS_ERR_INVALID, "allgatherv with other counts: the odd rank got %s",
                  gas_strerror(st));
        if (st == GAS_OK) {
            size_t at = 0;
            for (int r = 0; r < n; r++)
                for (size_t k = 0; k < counts[r]; k++, at++)
                    CHECK(dst[at] == r * 10 + (int32_t)k, "allgatherv with other counts on rank "
                          "%d returned GAS_OK with element %zu = %d (want %d)", refuser, at,
                          (int)dst[at], r * 10 + (int)k);
        }
        int64_t v = 1, total = 0;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &total, &v, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(total == n, "the allreduce after the allgatherv mismatch gave %lld", (long long)total);
    }
}

enum { DESTROYS = 5, WORLD_BARRIER = 4 };
static const char *const destroy_name[DESTROYS] = {
    "allreduce", "team barrier", "broadcast from the destroying rank",
    "allreduce after a call the destroying rank did not make", "world barrier"};

/* Case c of destroy_mode on team t, for a rank that is not the destroying team rank d. */
static gas_status_t call_against_destroy(int c, gas_team_t t, int d)
{
    int64_t v[4] = {1, 2, 3, 4}, out[4];
    switch (c) {
    case 0:
        return gas_allreduce(t, out, v, 4, GAS_INT64, GAS_OP_SUM);
    case 1:
        return gas_team_barrier(t);
    case 2:
        return gas_broadcast(t, v, 4, GAS_INT64, d);
    default:
        /* refused here (root out of range): a call the destroying rank never makes */
        if (gas_broadcast(t, v, 4, GAS_INT64, gas_team_size(t) + 5) != GAS_ERR_RANK)
            FAIL("the refused broadcast was not refused");
        return gas_allreduce(t, out, v, 4, GAS_INT64, GAS_OP_SUM);
    }
}

/*
 * The world barrier case: team rank d calls gas_team_destroy(t) while the
 * others call gas_barrier.  Neither may wait until GAS_TIMEOUT: the barrier
 * fails with GAS_ERR_INVALID naming gas_team_destroy where a rank finds the
 * mismatch (a rank that does not, because another stood in for the call
 * first, completes it once d joins), and d's destroy fails naming
 * gas_barrier.  Recovery as documented: d calls gas_barrier, a rank whose
 * barrier failed calls it again (resuming it); every rank then destroys the
 * team (d's second destroy).  Returns whether this rank's error named
 * gas_team_destroy.
 */
static int destroy_against_world_barrier(gas_team_t t, int d)
{
    int me = t_rank, named = 0;
    double t0 = test_elapsed();
    gas_status_t st = me == d ? gas_team_destroy(t) : gas_barrier();
    double took = test_elapsed() - t0;
    if (st != GAS_OK)
        test_note("world barrier: %s", gas_last_error());
    if (me == d) {
        CHECK(st == GAS_ERR_INVALID && took < 10 && strstr(gas_last_error(), "gas_barrier"),
              "gas_team_destroy against the world barrier: %s after %.1f s (%s)",
              gas_strerror(st), took, st == GAS_OK ? "" : gas_last_error());
    } else {
        named = st != GAS_OK && strstr(gas_last_error(), "gas_team_destroy") != NULL;
        CHECK((st == GAS_ERR_INVALID && named) || st == GAS_OK,
              "gas_barrier against rank %d's gas_team_destroy: %s after %.1f s (%s)", d,
              gas_strerror(st), took, st == GAS_OK ? "" : gas_last_error());
    }
    if (me == d || st != GAS_OK)
        CHECK_OK(gas_barrier());
    return named;
}

static void destroy_mode(void)
{
    int me = t_rank, n = t_nranks;
    for (int c = 0; c < DESTROYS; c++) {
        gas_team_t t;
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, &t));
        int d = c % n;   /* the destroying rank (team rank = world rank here) */
        int64_t named = 0;
        if (c == WORLD_BARRIER && n > 1) {
            named = destroy_against_world_barrier(t, d);
        } else if (me != d) {
            double t0 = test_elapsed();
            gas_status_t st = call_against_destroy(c, t, d);
            double took = test_elapsed() - t0;
            named = st != GAS_OK && strstr(gas_last_error(), "gas_team_destroy") != NULL;
            CHECK(st == GAS_ERR_INVALID && took < 10,
                  "%s against rank %d's gas_team_destroy: %s after %.1f s (%s)", destroy_name[c],
                  d, gas_strerror(st), took, st == GAS_OK ? "" : gas_last_error());
            if (st != GAS_OK)
                test_note("%s: %s", destroy_name[c], gas_last_error());
        }
        gas_status_t end = gas_team_destroy(t);
        CHECK(end == GAS_OK || end == GAS_ERR_INVALID, "%s: gas_team_destroy: %s (%s)",
              destroy_name[c], gas_strerror(end), end == GAS_OK ? "" : gas_last_error());
        int64_t any = 0, one = 1, count = 0;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &any, &named, 1, GAS_INT64, GAS_OP_SUM));
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &count, &one, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(any > 0 || n == 1, "%s: no rank's error named gas_team_destroy", destroy_name[c]);
        CHECK(count == n, "%s: the world allreduce after it gave %lld", destroy_name[c],
              (long long)count);
        MUST(gas_barrier());
    }
}

enum { RECOVERS = 2, RCOUNT = 4096 };
static const char *const recover_name[RECOVERS] = {
    "reduce with a doubled count on team rank 1", "broadcast against allreduce"};

static void recover_mode(void)
{
    int me = t_rank, n = t_nranks;
    static int64_t src[2 * RCOUNT], dst[2 * RCOUNT];
    for (int c = 0; c < RECOVERS; c++) {
        gas_team_t t;
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, &t));
        int tr = gas_team_rank(t);
        gas_status_t st;
        if (c == 0)
            st = gas_reduce(t, dst, src, tr == 1 ? 2 * RCOUNT : RCOUNT, GAS_INT64, GAS_OP_SUM, 0);
        else
            st = tr == 0 ? gas_broadcast(t, src, 8, GAS_INT64, 0)
                         : gas_allreduce(t, dst, src, 8, GAS_INT64, GAS_OP_SUM);
        int64_t reported = st != GAS_OK;
        if (st != GAS_OK) {
            test_note("%s: %s", recover_name[c], gas_last_error());
            CHECK(st == GAS_ERR_INVALID, "%s: %s", recover_name[c], gas_strerror(st));
            CHECK(c != 0 || strstr(gas_last_error(), "different algorithms") == NULL,
                  "%s: a count mismatch blamed on the algorithms: %s", recover_name[c],
                  gas_last_error());
        }
        for (int k = 0; k < 5; k++) {
            int64_t v = me + 1, sum = 0;
            CHECK_OK(gas_allreduce(t, &sum, &v, 1, GAS_INT64, GAS_OP_SUM));
            CHECK(sum == (int64_t)n * (n + 1) / 2, "%s: allreduce %d after it gave %lld",
                  recover_name[c], k + 1, (long long)sum);
        }
        gas_status_t end = gas_team_destroy(t);
        CHECK(end == GAS_OK || end == GAS_ERR_INVALID, "%s: gas_team_destroy: %s",
              recover_name[c], gas_strerror(end));
        reported += end == GAS_ERR_INVALID;
        int64_t any = 0;
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &any, &reported, 1, GAS_INT64, GAS_OP_SUM));
        CHECK(any > 0, "%s: no rank reported the mismatch", recover_name[c]);
        MUST(gas_barrier());
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "team";
    static const struct {
        const char *name;
        int min_ranks;
        void (*run)(void);
    } modes[] = {{"team", 3, team_mode},
                 {"recover", 3, recover_mode},
                 {"destroy", 1, destroy_mode},
                 {"refused", 1, refused_mode}};
    test_begin("coll_end");
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        if (strcmp(mode, modes[i].name) != 0)
            continue;
        if (t_nranks < modes[i].min_ranks) {
            printf("skipped: needs %d ranks or more\n", modes[i].min_ranks);
            gas_finalize();
            return 77;
        }
        modes[i].run();
        return test_end();
    }
    if (t_nranks != 2) {
        printf("skipped: needs exactly 2 ranks\n");
        gas_finalize();
        return 77;
    }
    int me = t_rank;
    CHECK_STATUS(mismatched_call(2, GAS_TEAM_WORLD, me), GAS_OK);
    /* No library call may follow gas_finalize: report as test_end would. */
    gas_status_t st = gas_finalize();
    int bad = me == 0 ? st != GAS_OK : !ended_with_report(st);
    printf("[coll_end rank %d] gas_finalize: %s (%s)%s\n", me, gas_strerror(st),
           st == GAS_OK ? "" : gas_last_error(), bad ? ": FAILED" : "");
    if (bad)
        printf("[coll_end rank %d] expected %s\n", me,
               me == 0 ? "GAS_OK" : "GAS_ERR_INVALID saying the mismatch was found at the team's end");
    return bad || t_failures ? 1 : 0;
}
