/*
 * test_world_standin - after a team collective that rank 0 makes while the
 * other ranks make a world call (gas_barrier), every rank numbers the
 * team's later collectives alike: results are right, never GAS_OK with
 * another call's data.
 *
 * The world call of a rank that finds rank 0 blocked in the collective
 * "stands in" for it (docs/collectives.md); a rank that was in the same
 * world barrier without finding it (it never saw rank 0's wait note) used to
 * stay one call behind: its next allreduce met the others' next one, and
 * both returned GAS_OK with sums that mixed two calls (black-box tester
 * T27).  Modes (argv[1]), each with 3 allreduces of exact sums after it:
 *   split, allreduce, nb   rank 0 calls gas_team_split_color / gas_allreduce
 *                          / gas_team_barrier_nb + gas_wait on the world team,
 *                          the others gas_barrier; then the recovery gas.h
 *                          gives: rank 0 calls gas_barrier, a rank whose
 *                          barrier failed calls it again;
 *   noretry                as split, but no rank retries: every rank's first
 *                          call ends (an error, not a wait until GAS_TIMEOUT)
 *                          and the allreduces are still right;
 *   destroy                on a copy of the world team, every rank but 1
 *                          calls gas_team_destroy while rank 1 calls
 *                          gas_barrier; the recovery: the destroyers call
 *                          gas_barrier, rank 1 calls it again, then every
 *                          rank destroys the team: GAS_OK everywhere (the
 *                          failed destroy is not "a call that completed"
 *                          at the team's end check).
 * GAS_ERRORS=return, GAS_TIMEOUT=20s (the manifest's).
 */
#include "check.h"

#include <string.h>

/* Three allreduces on the world team: each GAS_OK with the exact sum. */
static void allreduces(const char *mode)
{
    int me = t_rank, n = t_nranks;
    for (int i = 0; i < 3; i++) {
        int64_t v = me * 100 + i * 10000, sum = -1;
        int64_t want = (int64_t)n * (n - 1) / 2 * 100 + (int64_t)n * i * 10000;
        if (CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &sum, &v, 1, GAS_INT64, GAS_OP_SUM)))
            CHECK(sum == want, "%s: allreduce %d after the recovery: sum %lld, want %lld "
                  "(another call's data)", mode, i, (long long)sum, (long long)want);
    }
}

/* Rank 0's collective on the world team, by mode. */
static gas_status_t rank0_call(const char *mode)
{
    if (strcmp(mode, "allreduce") == 0) {
        int64_t a = 1, b = 0;
        return gas_allreduce(GAS_TEAM_WORLD, &b, &a, 1, GAS_INT64, GAS_OP_SUM);
    }
    if (strcmp(mode, "nb") == 0) {
        gas_handle_t h = GAS_HANDLE_NULL;
        gas_status_t st = gas_team_barrier_nb(GAS_TEAM_WORLD, &h);
        return st != GAS_OK ? st : gas_wait(h);
    }
    gas_team_t t = GAS_TEAM_NULL;
    gas_status_t st = gas_team_split_color(GAS_TEAM_WORLD, 0, 0, &t);
    if (st == GAS_OK)   /* (the split cannot complete: rank 0 alone made it) */
        FAIL("%s: rank 0's split completed while the others were in gas_barrier", mode);
    return st;
}

static void against_barrier(const char *mode, int retry)
{
    gas_status_t st;
    if (t_rank == 0) {
        st = rank0_call(mode);
        CHECK(st == GAS_ERR_INVALID, "%s: rank 0's collective returned %d, want "
              "GAS_ERR_INVALID (a mismatch): %s", mode, st, gas_last_error());
        if (retry)
            CHECK_OK(gas_barrier());
    } else {
        st = gas_barrier();
        CHECK(st == GAS_OK || st == GAS_ERR_INVALID, "%s: gas_barrier returned %d: %s", mode,
              st, gas_last_error());
        if (st != GAS_OK && retry)
            CHECK_OK(gas_barrier());
    }
    allreduces(mode);
}

static void destroy_against_barrier(void)
{
    gas_team_t t = GAS_TEAM_NULL;
    MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, t_nranks, &t));
    if (t_rank == 1) {
        gas_status_t st = gas_barrier();
        CHECK(st == GAS_ERR_INVALID, "destroy: rank 1's gas_barrier returned %d: %s", st,
              gas_last_error());
        if (st != GAS_OK)
            CHECK_OK(gas_barrier());
    } else {
        gas_status_t st = gas_team_destroy(t);
        CHECK(st == GAS_ERR_INVALID, "destroy: gas_team_destroy returned %d: %s", st,
              gas_last_error());
        CHECK_OK(gas_barrier());
    }
    CHECK_OK(gas_team_destroy(t));
    allreduces("destroy");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "split";
    test_begin("world_standin");
    if (t_nranks < 3) {
        test_note("needs 3 or more ranks");
        return test_end();
    }
    if (strcmp(mode, "destroy") == 0)
        destroy_against_barrier();
    else
        against_barrier(strcmp(mode, "noretry") == 0 ? "split" : mode,
                        strcmp(mode, "noretry") != 0);
    MUST(gas_barrier());
    return test_end();
}
