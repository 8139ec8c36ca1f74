/*
 * test_finalize_mismatch CASE - the last rank calls gas_finalize while the
 * others call a collective that waits for it: every rank gets
 * GAS_ERR_INVALID saying so within about a second, never GAS_ERR_TIMEOUT
 * (GAS_TIMEOUT=20s; the default waits for ever), and then every rank
 * finalizes with GAS_OK (the last one calls gas_finalize again if its first
 * call left it initialised).  Before, both sides waited for each other
 * until GAS_TIMEOUT: the world barrier of gas_finalize and the team's
 * collective each waited for a message the other side never sends.
 *
 * CASE: team_barrier (gas_team_barrier on the world), allreduce_nb
 * (gas_allreduce_nb on the world, then gas_wait), broadcast (from the
 * finalizing rank), split (gas_team_split_strided of the world), team
 * (gas_allreduce on a team of every rank in reverse order).
 * GAS_ERRORS=return.
 */
#include "check.h"

static gas_status_t make_call(const char *c, gas_team_t rev, int fin)
{
    int64_t v = 1, out = 0;
    if (strcmp(c, "team_barrier") == 0)
        return gas_team_barrier(GAS_TEAM_WORLD);
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

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "team_barrier";
    test_begin("finalize_mismatch");
    if (t_nranks < 2) {
        test_note("skipped: needs 2 ranks or more");
        gas_finalize();
        return 77;
    }
    int fin = t_nranks - 1;
    gas_team_t rev = GAS_TEAM_NULL;
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, t_nranks - t_rank, &rev));
    MUST(gas_barrier());
    if (t_rank != fin) {
        gas_status_t st = make_call(c, rev, fin);
        const char *msg = gas_last_error();
        CHECK(st == GAS_ERR_INVALID && strstr(msg, "collective") &&
                  (strstr(msg, "gas_finalize") || strstr(msg, "that rank's error says why")),
              "%s while rank %d calls gas_finalize: %d (%s), \"%s\"; want GAS_ERR_INVALID "
              "naming gas_finalize", c, fin, (int)st, gas_strerror(st), msg);
        return test_end();
    }
    gas_status_t st = gas_finalize();
    char msg[800];
    snprintf(msg, sizeof msg, "%s", gas_last_error());
    int ok = st == GAS_ERR_INVALID && strstr(msg, "collective mismatch") != NULL;
    if (!ok)
        fprintf(stderr, "[finalize_mismatch rank %d] FAIL: gas_finalize while the others call "
                "%s: %d (%s), \"%s\"; want GAS_ERR_INVALID naming the mismatch\n", t_rank, c,
                (int)st, gas_strerror(st), msg);
    if (gas_initialized() && (st = gas_finalize()) != GAS_OK) {
        fprintf(stderr, "[finalize_mismatch rank %d] FAIL: gas_finalize again: %d (%s)\n",
                t_rank, (int)st, gas_strerror(st));
        ok = 0;
    }
    printf("[finalize_mismatch rank %d] %s: %s\n", t_rank, ok ? "passed" : "FAILED", msg);
    return ok ? 0 : 1;
}
