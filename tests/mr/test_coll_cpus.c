/*
 * test_coll_cpus - the tuning table's cpus field: rows marked "own" apply to
 * teams whose ranks each have CPUs to themselves, rows marked "shared" to
 * teams where a member's CPUs hold more ranks of the job than they number.
 *
 * The test writes a table whose allreduce and gather rows differ by cpus,
 * points GAS_COLL_TUNING at it, and checks gas_coll_choice on the world team
 * and on the teams of even and of odd world ranks against what the launching
 * script says each should be (COLL_CPUS_WORLD, COLL_CPUS_EVEN, COLL_CPUS_ODD:
 * own or shared; unset: not checked).  Every team then runs an allreduce and
 * a gather with the chosen algorithm, checked element by element, so a rank
 * that chose differently from the others would fail its call.
 */
#include "check.h"

#include <unistd.h>

/* "own" or "shared" expected of a team (NULL: not checked); the allreduce
 * algorithm and the gather algorithm at 1 KiB blocks that go with it. */
static void check_choice(gas_team_t t, const char *what, const char *expect)
{
    if (expect == NULL)
        return;
    int shared = strcmp(expect, "shared") == 0;
    const char *alg = NULL;
    CHECK_OK(gas_coll_choice(t, GAS_COLL_ALLREDUCE, 64, &alg));
    CHECK(strcmp(alg, shared ? "one_shot" : "ring") == 0,
          "%s (%s CPUs expected): allreduce chose %s", what, expect, alg);
    CHECK_OK(gas_coll_choice(t, GAS_COLL_GATHER, 8, &alg));
    CHECK(strcmp(alg, "binomial") == 0, "%s: gather at 8 B chose %s (a row for both)", what, alg);
    CHECK_OK(gas_coll_choice(t, GAS_COLL_GATHER, 1024, &alg));
    CHECK(strcmp(alg, shared ? "linear" : "binomial") == 0,
          "%s (%s CPUs expected): gather at 1 KiB chose %s", what, expect, alg);
}

/* An allreduce and a gather of 1 KiB blocks on t, checked. */
static void run_team(gas_team_t t, const char *what)
{
    int n = gas_team_size(t), me = gas_team_rank(t);
    enum { COUNT = 128 };
    int64_t src[COUNT], dst[COUNT];
    for (int i = 0; i < COUNT; i++)
        src[i] = (int64_t)(me + 1) * 1000 + i;
    CHECK_OK(gas_allreduce(t, dst, src, COUNT, GAS_INT64, GAS_OP_SUM));
    for (int i = 0; i < COUNT; i++) {
        int64_t want = (int64_t)n * (n + 1) / 2 * 1000 + (int64_t)n * i;
        CHECK(dst[i] == want, "%s: allreduce element %d is %lld, want %lld", what, i,
              (long long)dst[i], (long long)want);
    }
    int64_t *all = malloc(sizeof src * (size_t)n);
    CHECK(all != NULL, "out of memory");
    CHECK_OK(gas_gather(t, all, src, COUNT, GAS_INT64, 0));
    for (int r = 0; me == 0 && r < n; r++)
        for (int i = 0; i < COUNT; i++)
            CHECK(all[r * COUNT + i] == (int64_t)(r + 1) * 1000 + i,
                  "%s: gather block %d element %d is %lld", what, r, i,
                  (long long)all[r * COUNT + i]);
    free(all);
}

int main(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/gas-test-coll-cpus-%d.conf", (int)getpid());
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "test_coll_cpus: cannot write %s\n", path);
        return 2;
    }
    fprintf(f, "allreduce * * 0 ring own\n"
               "allreduce * * 0 one_shot shared\n"
               "gather * * 0 binomial\n"
               "gather * * 64 linear shared\n"
               "gather * * 64 binomial own\n");
    fclose(f);
    setenv("GAS_COLL_TUNING", path, 1);
    test_begin("coll_cpus");
    unlink(path);
    int me = gas_rank();
    check_choice(GAS_TEAM_WORLD, "the world team", getenv("COLL_CPUS_WORLD"));
    run_team(GAS_TEAM_WORLD, "the world team");
    gas_team_t half = GAS_TEAM_NULL;
    CHECK_OK(gas_team_split_color(GAS_TEAM_WORLD, me % 2, me, &half));
    const char *name = me % 2 ? "the team of odd ranks" : "the team of even ranks";
    check_choice(half, name, getenv(me % 2 ? "COLL_CPUS_ODD" : "COLL_CPUS_EVEN"));
    run_team(half, name);
    CHECK_OK(gas_team_destroy(half));
    CHECK_OK(gas_barrier());
    return test_end();
}
