/*
 * test_team_many - thousands of live teams, and every one of them works.
 *
 * NTEAMS teams (TEST_TEAMS overrides) are split and all held: strided splits
 * of the world (every start, so sizes 1 .. P), color/key splits in reverse
 * rank order (two colors), color splits that leave one rank out
 * (GAS_COLOR_UNDEFINED), and now and then a reversing split of the team made
 * just before (a parent other than the world).  Each rank works out every
 * team's members from the arguments alone and checks size, rank and
 * translation both ways against them.
 *
 * With every team held: a blocking allreduce on each (the sum over the
 * members of a value of the team and the member, against the local sum),
 * and on a few teams (the first, one in the middle, the last) a non-blocking
 * allreduce that only another wait can progress: rank 0 starts it and then
 * waits in a world barrier, while the other members make the same call
 * blocking and only then enter the barrier.  Rank 0's collective must be
 * pumped from inside its barrier wait, where thousands of idle teams are
 * live, or the job hangs (until GAS_TIMEOUT: the barrier fails).
 *
 * Then the teams are destroyed in one shuffled order (the same on every
 * rank: destroy is collective), and after each quarter every team still
 * live runs an allreduce again, and the progress check above runs on one of
 * them, so teams that moved in the live lists still work.
 *
 * No timing assertion: the time limit in the manifest bounds the run.  The
 * number of live teams used to slow every wait (each poll walked them all;
 * 20,000 teams at 4 ranks took 20-30 s to split on a 2-vCPU VM, 4-8 s since
 * progress walks only the teams with queued collectives, docs/collectives.md).
 */
#include "check.h"

#define NTEAMS 3000     /* TEST_TEAMS overrides */

struct expect {
    gas_team_t team;
    int n;              /* members */
    int *world;         /* their world ranks, in team order */
    int me;             /* this rank's index, or -1 */
};

static struct expect *ex;
static int me, P;

/* The members of team i from the split's arguments: the world ranks of the
 * parent members kept, in team order. */
static void expect_members(int i, int kind, const struct expect *parent, int arg)
{
    struct expect *e = &ex[i];
    int pn = parent ? parent->n : P;
    e->world = malloc((size_t)pn * sizeof *e->world);
    if (e->world == NULL)
        test_die("out of memory");
    e->n = 0;
    for (int k = 0; k < pn; k++) {
        int src;
        switch (kind) {
        case 0:   /* strided: start arg, stride 1, to the end */
            src = k < pn - arg ? arg + k : -1;
            break;
        case 1:   /* color (rank + arg) % 2, key -rank: my color's ranks, reversed */
            src = pn - 1 - k;
            if ((src + arg) % 2 != (me + arg) % 2)
                src = -1;
            break;
        case 2:   /* rank arg left out, key rank */
            src = k != arg ? k : -1;
            break;
        default:  /* the parent's members, reversed */
            src = pn - 1 - k;
            break;
        }
        if (src < 0)
            continue;
        e->world[e->n++] = parent ? parent->world[src] : src;
    }
    e->me = -1;
    for (int k = 0; k < e->n; k++)
        if (e->world[k] == me)
            e->me = k;
}

static void split_one(int i)
{
    gas_team_t t = GAS_TEAM_NULL;
    int kind = i % 3, arg = 0;
    const struct expect *parent = NULL;
    if (i % 7 == 6 && ex[i - 1].team != GAS_TEAM_NULL && ex[i - 1].me >= 0) {
        /* Every rank must split the same parent: only when all are in team i-1. */
        int everyone = ex[i - 1].n == P;
        if (everyone) {
            parent = &ex[i - 1];
            kind = 3;
            CHECK_OK(gas_team_split_color(parent->team, 0, -parent->me, &t));
            expect_members(i, kind, parent, 0);
            ex[i].team = t;
            return;
        }
    }
    if (kind == 0) {
        arg = i / 3 % P;
        CHECK_OK(gas_team_split_strided(GAS_TEAM_WORLD, arg, 1, P - arg, &t));
    } else if (kind == 1) {
        arg = i / 3 % 2;
        CHECK_OK(gas_team_split_color(GAS_TEAM_WORLD, (me + arg) % 2, -me, &t));
    } else {
        arg = i / 3 % P;
        CHECK_OK(gas_team_split_color(GAS_TEAM_WORLD, me == arg ? GAS_COLOR_UNDEFINED : 0, me, &t));
    }
    expect_members(i, kind, NULL, arg);
    ex[i].team = t;
}

/* Size, rank and translation of team i against what the split's arguments say. */
static void check_shape(int i)
{
    const struct expect *e = &ex[i];
    if (e->me < 0) {
        CHECK(e->team == GAS_TEAM_NULL, "team %d: this rank is no member, but got a team", i);
        return;
    }
    if (!CHECK(e->team != GAS_TEAM_NULL, "team %d: this rank is a member, but got none", i))
        return;
    CHECK(gas_team_size(e->team) == e->n, "team %d: size %d, expected %d", i,
          gas_team_size(e->team), e->n);
    CHECK(gas_team_rank(e->team) == e->me, "team %d: rank %d, expected %d", i,
          gas_team_rank(e->team), e->me);
    for (int k = 0; k < e->n; k++) {
        int w = -2, back = -2;
        CHECK_OK(gas_team_translate(e->team, k, GAS_TEAM_WORLD, &w));
        CHECK(w == e->world[k], "team %d: member %d is world rank %d, expected %d", i, k, w,
              e->world[k]);
        CHECK_OK(gas_team_translate(GAS_TEAM_WORLD, e->world[k], e->team, &back));
        CHECK(back == k, "team %d: world rank %d translates to %d, expected %d", i, e->world[k],
              back, k);
    }
}

static int64_t value(int i, int world_rank)
{
    return (int64_t)(i + 1) * 1000 + world_rank + 1;
}

static int64_t expected_sum(int i)
{
    int64_t s = 0;
    for (int k = 0; k < ex[i].n; k++)
        s += value(i, ex[i].world[k]);
    return s;
}

static void allreduce_one(int i)
{
    if (ex[i].me < 0)
        return;
    int64_t v = value(i, me), got = -1;
    CHECK_OK(gas_allreduce(ex[i].team, &got, &v, 1, GAS_INT64, GAS_OP_SUM));
    CHECK(got == expected_sum(i), "team %d: allreduce %" PRId64 ", expected %" PRId64, i, got,
          expected_sum(i));
}

/* Team i holds every rank: rank 0's non-blocking allreduce can only be
 * progressed inside its world barrier (see the head of the file).  It is
 * many chunks long, so rank 0 must be pumped again and again to finish. */
#define PROBE_N 1024
static void progress_check(int i)
{
    if (ex[i].n != P)
        return;
    static int64_t v[PROBE_N], got[PROBE_N];
    for (int k = 0; k < PROBE_N; k++) {
        v[k] = value(i, me) * (k + 1);
        got[k] = -1;
    }
    if (me == 0) {
        gas_handle_t h = GAS_HANDLE_NULL;
        CHECK_OK(gas_allreduce_nb(ex[i].team, got, v, PROBE_N, GAS_INT64, GAS_OP_SUM, &h));
        CHECK_OK(gas_barrier());
        CHECK_OK(gas_wait(h));
    } else {
        CHECK_OK(gas_allreduce(ex[i].team, got, v, PROBE_N, GAS_INT64, GAS_OP_SUM));
        CHECK_OK(gas_barrier());
    }
    int64_t sum = expected_sum(i);
    for (int k = 0; k < PROBE_N; k++)
        if (!CHECK(got[k] == sum * (k + 1), "team %d: non-blocking allreduce element %d is %" PRId64
                   ", expected %" PRId64, i, k, got[k], sum * (k + 1)))
            break;
}

/* The first team of every rank at or after index from (all teams searched). */
static int full_team_from(int from, int n)
{
    for (int k = 0; k < n; k++) {
        int i = (from + k) % n;
        if (ex[i].n == P && ex[i].team != GAS_TEAM_NULL)
            return i;
    }
    return -1;
}

int main(void)
{
    test_begin("team_many");
    me = t_rank;
    P = t_nranks;
    int n = NTEAMS;
    const char *e = getenv("TEST_TEAMS");
    if (e && *e)
        n = atoi(e);
    ex = calloc((size_t)n, sizeof *ex);
    int *order = malloc((size_t)n * sizeof *order);
    if (ex == NULL || order == NULL)
        test_die("out of memory");

    for (int i = 0; i < n; i++)
        split_one(i);
    int mine = 0;
    for (int i = 0; i < n; i++) {
        check_shape(i);
        mine += ex[i].team != GAS_TEAM_NULL;
    }
    if (me == 0)
        test_note("%d teams split, %d of them held by rank 0 (%.2f s)", n, mine, test_elapsed());

    for (int i = 0; i < n; i++)
        allreduce_one(i);
    int probes[3] = {full_team_from(0, n), full_team_from(n / 2, n), full_team_from(n - 1, n)};
    for (int k = 0; k < 3; k++)
        if (probes[k] >= 0)
            progress_check(probes[k]);
    if (me == 0)
        test_note("every team ran an allreduce (%.2f s)", test_elapsed());

    /* One shuffled destroy order, the same on every rank (a seed of its own). */
    test_rng_t r = rng_make(0, 77);
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&r, (uint64_t)i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    for (int q = 0; q < 4; q++) {
        for (int k = q * n / 4; k < (q + 1) * n / 4; k++) {
            struct expect *d = &ex[order[k]];
            if (d->team != GAS_TEAM_NULL)
                CHECK_OK(gas_team_destroy(d->team));
            d->team = GAS_TEAM_NULL;
            d->me = -1;
            d->n = 0;
        }
        for (int i = 0; i < n; i++)
            allreduce_one(i);
        int p = full_team_from(order[n - 1 - q], n);
        if (p >= 0)
            progress_check(p);
    }
    for (int i = 0; i < n; i++)
        free(ex[i].world);
    free(ex);
    free(order);
    return test_end();
}
