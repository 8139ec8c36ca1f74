/*
 * test_finalize_mismatch CASE [WORLD] - the last rank makes a world call
 * (WORLD: finalize, the default, or barrier, malloc, free) while the others
 * call a collective that waits for it: every rank gets GAS_ERR_INVALID
 * saying so within about a second, never GAS_ERR_TIMEOUT (GAS_TIMEOUT=20s;
 * the default waits for ever).  Before, both sides waited for each other
 * until GAS_TIMEOUT: the world barrier of the world call and the team's
 * collective each waited for a message the other side never sends.
 *
 * finalize: then every rank finalizes with GAS_OK (the last one calls
 * gas_finalize again if its first call left it initialised).  With
 * "then_barrier" as WORLD, the last rank calls gas_barrier after its failed
 * gas_finalize, as the others do after their failed collective.  When the
 * finalize's barrier had sent its rounds, that gas_barrier resumes it, so
 * every rank's first gas_barrier meets the unfinished gas_finalize and
 * fails; the last rank's message must name it as this rank's own (it said
 * "another rank called gas_finalize" on the rank that had called it).
 * (When the others' gas_barrier met the finalize's barrier first, the
 * finalize failed on it and the barriers pass at once.)  Then every rank's
 * next barrier passes and every rank finalizes.
 * barrier, malloc, free: then the others make that world call too (their
 * program's order), the last rank makes it again, and every rank must get
 * GAS_OK (malloc: an array that every rank can write; free: the array
 * allocated at the start is freed) and finalize with one gas_finalize.
 *
 * CASE: team_barrier_nb (gas_team_barrier_nb on the world, then gas_wait:
 * gas_team_barrier on the world is gas_barrier, a world call), allreduce_nb
 * (gas_allreduce_nb on the world, then gas_wait), broadcast (from the
 * last rank), split (gas_team_split_strided of the world), team
 * (gas_allreduce on a team of every rank in reverse order); and legit (no
 * mismatch: the others start gas_allreduce_nb, test it for 0.5 s, which
 * writes wait notes for the last rank, then call WORLD and gas_wait; the
 * last rank calls WORLD 0.7 s late, then gas_allreduce: every call must
 * succeed, the stale notes of a call that was not blocked must not count).
 * GAS_ERRORS=return.
 */
#include <time.h>

#include "check.h"

static gas_ptr_t start_array = GAS_NULL;

static gas_status_t make_call(const char *c, gas_team_t rev, int fin)
{
    int64_t v = 1, out = 0;
    if (strcmp(c, "team_barrier_nb") == 0) {
        gas_handle_t h = GAS_HANDLE_NULL;
        gas_status_t st = gas_team_barrier_nb(GAS_TEAM_WORLD, &h);
        return st != GAS_OK ? st : gas_wait(h);
    }
    if (strcmp(c, "allreduce_nb") == 0) {
        gas_handle_t h = GAS_HANDLE_NULL;
        gas_status_t st = gas_allreduce_nb(GAS_TEAM_WORLD, &out, &v, 1, GAS_INT64, GAS_OP_SUM,
                                           &h);
        return st != GAS_OK ? st : gas_wait(h);
    }
    if (strcmp(c, "broadcast") == 0)
        return gas_broadcast(GAS_TEAM_WORLD, &out, 1, GAS_INT64, fin);
    if (strcmp(c, "split") == 0) {
        gas_team_t t = GAS_TEAM_NULL;
        return gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, t_nranks, &t);
    }
    if (strcmp(c, "team") == 0)
        return gas_allreduce(rev, &out, &v, 1, GAS_INT64, GAS_OP_SUM);
    test_die("unknown case");
    return GAS_ERR_INVALID;
}

/* The world call under test; *array_p gets gas_malloc's array. */
static gas_status_t world_call(const char *w, gas_ptr_t *array_p)
{
    if (strcmp(w, "barrier") == 0)
        return gas_barrier();
    if (strcmp(w, "malloc") == 0)
        return gas_malloc(64 * (size_t)t_nranks, array_p);
    if (strcmp(w, "free") == 0)
        return gas_free(start_array);
    test_die("unknown world call");
    return GAS_ERR_INVALID;
}

/* The name a world call's errors carry. */
static const char *world_name(const char *w)
{
    return strcmp(w, "malloc") == 0 ? "gas_malloc" : strcmp(w, "free") == 0 ? "gas_free"
                                                                             : "gas_barrier";
}

/* Every rank writes its rank into its block of `a` and reads every block back. */
static void check_array(gas_ptr_t a)
{
    CHECK(a != GAS_NULL, "gas_malloc gave GAS_NULL");
    if (a == GAS_NULL)
        return;
    int64_t mine = t_rank;
    CHECK_OK(gas_put(test_at(a, 64 * (uint64_t)t_rank), &mine, sizeof mine));
    CHECK_OK(gas_barrier());
    for (int r = 0; r < t_nranks; r++) {
        int64_t got = -1;
        CHECK_OK(gas_get(&got, test_at(a, 64 * (uint64_t)r), sizeof got));
        CHECK(got == r, "block %d of the new array holds %lld", r, (long long)got);
    }
    CHECK_OK(gas_barrier());
    CHECK_OK(gas_free(a));
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/*
 * No mismatch: the others' nb allreduce waits for the last rank (tested,
 * not blocked) across their world call; the last rank comes late.
 */
static int legit(const char *w, int fin)
{
    gas_ptr_t a = GAS_NULL;
    int64_t v = 1, out = 0;
    if (t_rank != fin) {
        gas_handle_t h = GAS_HANDLE_NULL;
        CHECK_OK(gas_allreduce_nb(GAS_TEAM_WORLD, &out, &v, 1, GAS_INT64, GAS_OP_SUM, &h));
        double until = test_elapsed() + 0.5;
        int done = 0;
        while (!done && test_elapsed() < until)
            if (!CHECK_OK(gas_test(h, &done)))
                break;
        CHECK(!done, "the allreduce completed without the last rank");
        gas_status_t st = world_call(w, &a);
        CHECK(st == GAS_OK, "%s while this rank's gas_allreduce_nb waits: %d (%s), \"%s\"",
              world_name(w), (int)st, gas_strerror(st), gas_last_error());
        if (!done)
            CHECK_OK(gas_wait(h));
    } else {
        pause_ms(700);
        gas_status_t st = world_call(w, &a);
        CHECK(st == GAS_OK, "%s late: %d (%s), \"%s\"", world_name(w), (int)st, gas_strerror(st),
              gas_last_error());
        CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &out, &v, 1, GAS_INT64, GAS_OP_SUM));
    }
    CHECK(out == t_nranks, "allreduce gave %lld, want %d", (long long)out, t_nranks);
    if (strcmp(w, "malloc") == 0)
        check_array(a);
    return test_end();
}

/*
 * After the mismatch every rank calls gas_barrier until it passes (twice at
 * most: the world barrier that the last rank's gas_finalize began may meet
 * one gas_barrier).  A failure must say what met there: on the last rank
 * its own unfinished gas_finalize or the others' gas_barrier, never
 * "another rank called gas_finalize".
 */
static int then_barrier(int fin)
{
    gas_status_t st = GAS_ERR_INVALID;
    for (int tries = 0; tries < 2 && st != GAS_OK; tries++) {
        st = gas_barrier();
        const char *msg = gas_last_error();
        if (st == GAS_OK)
            break;
        test_note("gas_barrier: %s", msg);
        if (t_rank == fin)
            CHECK(st == GAS_ERR_INVALID && strstr(msg, "this rank's gas_finalize") != NULL &&
                      strstr(msg, "another rank called gas_finalize") == NULL,
                  "gas_barrier after this rank's failed gas_finalize: %d (%s), \"%s\"; want "
                  "GAS_ERR_INVALID naming this rank's unfinished gas_finalize", (int)st,
                  gas_strerror(st), msg);
        else
            CHECK(st == GAS_ERR_INVALID && strstr(msg, "gas_finalize") != NULL,
                  "gas_barrier after rank %d's failed gas_finalize: %d (%s), \"%s\"; want "
                  "GAS_ERR_INVALID naming gas_finalize", fin, (int)st, gas_strerror(st), msg);
    }
    CHECK(st == GAS_OK, "gas_barrier failed twice after the mismatch");
    /* The last rank never made the others' failed collective: unless its
     * finalize stood in for it at once, its next gas_finalize reports it. */
    double secs = test_elapsed();
    st = gas_finalize();
    if (st == GAS_ERR_INVALID && t_rank == fin && gas_initialized()) {
        test_note("gas_finalize: %s", gas_last_error());
        st = gas_finalize();
    }
    CHECK(st == GAS_OK, "gas_finalize after the mismatch: %d (%s), \"%s\"", (int)st,
          gas_strerror(st), gas_last_error());
    return test_result(secs);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "team_barrier_nb";
    const char *w = argc > 2 ? argv[2] : "finalize";
    int fin_call = strcmp(w, "finalize") == 0 || strcmp(w, "then_barrier") == 0;
    test_begin("finalize_mismatch");
    if (t_nranks < 2) {
        test_note("skipped: needs 2 ranks or more");
        gas_finalize();
        return 77;
    }
    int fin = t_nranks - 1;
    gas_team_t rev = GAS_TEAM_NULL;
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, t_nranks - t_rank, &rev));
    if (strcmp(w, "free") == 0)
        MUST(gas_malloc(64 * (size_t)t_nranks, &start_array));
    MUST(gas_barrier());
    if (strcmp(c, "legit") == 0)
        return legit(w, fin);
    gas_ptr_t a = GAS_NULL;
    if (t_rank != fin) {
        gas_status_t st = make_call(c, rev, fin);
        const char *msg = gas_last_error();
        const char *other = fin_call ? "gas_finalize" : world_name(w);
        CHECK(st == GAS_ERR_INVALID && strstr(msg, "collective") &&
                  (strstr(msg, other) || strstr(msg, "that rank's error says why")),
              "%s while rank %d calls %s: %d (%s), \"%s\"; want GAS_ERR_INVALID naming %s", c,
              fin, other, (int)st, gas_strerror(st), msg, other);
        if (strcmp(w, "then_barrier") == 0)
            return then_barrier(fin);
        if (fin_call)
            return test_end();
        st = world_call(w, &a);   /* this rank's program goes on with it */
        CHECK(st == GAS_OK, "%s after the failed %s: %d (%s), \"%s\"", world_name(w), c, (int)st,
              gas_strerror(st), gas_last_error());
        if (strcmp(w, "malloc") == 0)
            check_array(a);
        return test_end();
    }
    if (!fin_call) {
        gas_status_t st = world_call(w, &a);
        const char *msg = gas_last_error();
        CHECK(st == GAS_ERR_INVALID && strstr(msg, "collective mismatch") &&
                  strstr(msg, world_name(w)),
              "%s while the others call %s: %d (%s), \"%s\"; want GAS_ERR_INVALID naming the "
              "mismatch", world_name(w), c, (int)st, gas_strerror(st), msg);
        if (st != GAS_OK)
            test_note("as expected: %s", msg);
        st = world_call(w, &a);   /* again: the others make it now */
        CHECK(st == GAS_OK, "%s again: %d (%s), \"%s\"", world_name(w), (int)st,
              gas_strerror(st), gas_last_error());
        if (strcmp(w, "malloc") == 0)
            check_array(a);
        return test_end();
    }
    gas_status_t st = gas_finalize();
    char msg[800];
    snprintf(msg, sizeof msg, "%s", gas_last_error());
    /* (with then_barrier, the others' gas_barrier may meet this finalize's barrier first) */
    int ok = st == GAS_ERR_INVALID &&
             (strstr(msg, "collective mismatch") != NULL ||
              (strcmp(w, "then_barrier") == 0 && strstr(msg, "another rank called gas_barrier")));
    if (!ok)
        fprintf(stderr, "[finalize_mismatch rank %d] FAIL: gas_finalize while the others call "
                "%s: %d (%s), \"%s\"; want GAS_ERR_INVALID naming the mismatch\n", t_rank, c,
                (int)st, gas_strerror(st), msg);
    if (strcmp(w, "then_barrier") == 0 && gas_initialized()) {
        printf("[finalize_mismatch rank %d] as expected: %s\n", t_rank, msg);
        if (!ok)
            t_failures++;
        return then_barrier(fin);
    }
    if (gas_initialized() && (st = gas_finalize()) != GAS_OK) {
        fprintf(stderr, "[finalize_mismatch rank %d] FAIL: gas_finalize again: %d (%s)\n",
                t_rank, (int)st, gas_strerror(st));
        ok = 0;
    }
    printf("[finalize_mismatch rank %d] %s: %s\n", t_rank, ok ? "passed" : "FAILED", msg);
    return ok ? 0 : 1;
}
