/*
 * test_team_stale - a destroyed team's handle stays dead for the rest of the
 * run, however many teams are made and destroyed after it.
 *
 * CYCLES times (TEST_CYCLES overrides): split a team of the world in world
 * order (strided and color splits in turn), destroy it, and split another in
 * reversed order (a tester's reproducer: while handles were the addresses of
 * malloc'ed structs, the new team soon got the old address, a collective on
 * the old handle ran on the new team and a second destroy of the old handle
 * destroyed the new team).  Each cycle: the old handle is dead locally (size
 * 0, rank -1, gas_team_translate GAS_ERR_INVALID); only when every rank sees
 * that (an allreduce over the world, so a rank with the bug cannot hang the
 * others) a collective on it and a second destroy of it fail with
 * GAS_ERR_INVALID "not a live team"; then the new team works (an allreduce
 * and its reversed ranks), and its own double destroy fails too.
 *
 * At the end every handle destroyed in the run is still dead, a few are
 * refused by collectives again, and pointers that are no team handle at all
 * (a copy of a live team's bytes elsewhere, an address inside a live team, a
 * stack address, 0x1) are refused without a crash.  Memory: the resident set
 * may not grow by more than RSS_SLACK bytes per thousand cycles (plus
 * RSS_FLOOR) after the first WARM cycles (a team struct is never reused; the
 * pages of dead ones must go back: keeping them grows it ~1 MB per thousand).
 */
#include "check.h"

#include <unistd.h>

#define CYCLES 2000
#define WARM 200
#define RSS_SLACK (8 << 10)    /* bytes per thousand cycles */
#define RSS_FLOOR (16 << 10)   /* and once (udp's buffers settle by a page or two) */

static int me, P;

static long rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* The handle is dead as far as this rank's local calls tell. */
static int dead_locally(gas_team_t t)
{
    int r = 0;
    return gas_team_size(t) == 0 && gas_team_rank(t) == -1 &&
           gas_team_translate(t, 0, GAS_TEAM_WORLD, &r) == GAS_ERR_INVALID &&
           gas_team_translate(GAS_TEAM_WORLD, 0, t, &r) == GAS_ERR_INVALID;
}

/* Every rank sees what this one says (1) */
static int all_agree(int mine)
{
    int all = 0;
    if (!CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, &all, &mine, 1, GAS_INT32, GAS_OP_MIN)))
        return 0;
    return all;
}

/* A call that failed with "not a live team"; say which when not. */
static void check_refused(gas_status_t st, const char *what, int cycle)
{
    CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "not a live team"),
          "cycle %d: %s on a destroyed team returned %d (%s), want GAS_ERR_INVALID not a live team",
          cycle, what, (int)st, st ? gas_last_error() : "");
}

/* Collective calls and a second destroy on a dead handle (every rank knows it is dead). */
static void check_stale_calls(gas_team_t old, int cycle)
{
    int got[64] = {0}, one = 1, sum = 0;
    check_refused(gas_allgather(old, got, &me, 1, GAS_INT32), "gas_allgather", cycle);
    check_refused(gas_allreduce(old, &sum, &one, 1, GAS_INT32, GAS_OP_SUM), "gas_allreduce",
                  cycle);
    check_refused(gas_team_destroy(old), "gas_team_destroy (second)", cycle);
}

/* The reversed team is the live team it should be. */
static void check_reversed(gas_team_t rev, int cycle)
{
    int mine = me, sum = -1, r = -2;
    CHECK(gas_team_size(rev) == P && gas_team_rank(rev) == P - 1 - me,
          "cycle %d: reversed team has size %d rank %d, want %d and %d", cycle,
          gas_team_size(rev), gas_team_rank(rev), P, P - 1 - me);
    if (CHECK_OK(gas_allreduce(rev, &sum, &mine, 1, GAS_INT32, GAS_OP_SUM)))
        CHECK(sum == P * (P - 1) / 2, "cycle %d: sum %d on the reversed team, want %d", cycle,
              sum, P * (P - 1) / 2);
    if (CHECK_OK(gas_team_translate(rev, 0, GAS_TEAM_WORLD, &r)))
        CHECK(r == P - 1, "cycle %d: team rank 0 is world rank %d, want %d", cycle, r, P - 1);
}

/* One cycle; the two handles it destroyed go to dead[]. */
static void cycle_once(int i, gas_team_t *dead)
{
    gas_team_t old = GAS_TEAM_NULL, rev = GAS_TEAM_NULL;
    if (i % 2)
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, P, &old));
    else
        MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, me, &old));
    MUST(gas_team_destroy(old));
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, -me, &rev));
    int ok = CHECK(dead_locally(old), "cycle %d: destroyed handle %p answers as a live team "
                   "(size %d, rank %d; the new team is %p)", i, (void *)old, gas_team_size(old),
                   gas_team_rank(old), (void *)rev);
    if (all_agree(ok))
        check_stale_calls(old, i);
    check_reversed(rev, i);
    MUST(gas_team_destroy(rev));
    CHECK(dead_locally(rev), "cycle %d: a just destroyed team answers as live", i);
    if (all_agree(dead_locally(rev)))
        check_refused(gas_team_destroy(rev), "gas_team_destroy (second, at once)", i);
    dead[2 * i] = old;
    dead[2 * i + 1] = rev;
}

/* Pointers that are no team handle of this rank are refused, without a crash. */
static void check_garbage(void)
{
    gas_team_t live = GAS_TEAM_NULL;
    MUST(gas_team_split_color(GAS_TEAM_WORLD, 0, me, &live));
    unsigned char *copy = test_xmalloc(4096);
    memcpy(copy, (const void *)live, 64);   /* a live team's first bytes, at another address */
    int local = 0;
    gas_team_t bad[] = {(gas_team_t)copy, (gas_team_t)((char *)live + 8),
                        (gas_team_t)(void *)&local, (gas_team_t)(uintptr_t)1};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        CHECK(dead_locally(bad[k]), "pointer %zu (%p) answers as a live team", k, (void *)bad[k]);
    if (all_agree(dead_locally(bad[0]) && dead_locally(bad[1])))
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
            CHECK_STATUS(gas_team_barrier(bad[k]), GAS_ERR_INVALID);
    free(copy);
    CHECK_OK(gas_team_barrier(live));   /* and the real one was not harmed */
    MUST(gas_team_destroy(live));
}

int main(void)
{
    const char *s = getenv("TEST_CYCLES");
    int cycles = s && *s ? atoi(s) : CYCLES;
    test_begin("team_stale");
    me = t_rank;
    P = t_nranks;
    if (P > 64)
        test_die("at most 64 ranks");
    gas_team_t *dead = test_xmalloc(2 * (size_t)cycles * sizeof *dead);
    memset(dead, 0, 2 * (size_t)cycles * sizeof *dead);   /* resident before the count starts */
    long rss0 = -1;
    for (int i = 0; i < cycles; i++) {
        if (i == WARM)
            rss0 = rss_bytes();
        cycle_once(i, dead);
    }
    long rss1 = rss_bytes();
    int bad = 0;
    for (int i = 0; i < 2 * cycles; i++)
        bad += !dead_locally(dead[i]);
    CHECK(bad == 0, "%d of the %d handles destroyed in this run answer as live teams", bad,
          2 * cycles);
    if (all_agree(bad == 0)) {
        check_stale_calls(dead[0], 0);   /* the first, after every later team */
        check_stale_calls(dead[cycles], cycles / 2);
        check_stale_calls(dead[2 * cycles - 2], cycles - 1);
    }
    check_garbage();
#ifdef __SANITIZE_ADDRESS__
    rss0 = -1;   /* ASan's quarantine and shadow grow it (tens of MB): not ours to count */
#endif
    if (rss0 > 0 && rss1 > 0 && cycles > WARM) {
        long most = RSS_FLOOR + (long)RSS_SLACK * (cycles - WARM) / 1000;
        CHECK(rss1 - rss0 <= most, "resident set grew %ld bytes over %d split/destroy cycles "
              "(at most %ld: %d per thousand and %d of noise)", rss1 - rss0, cycles - WARM, most,
              RSS_SLACK, RSS_FLOOR);
        if (me == 0)
            test_note("%d cycles; resident set %+ld bytes over the last %d", cycles, rss1 - rss0,
                      cycles - WARM);
    }
    free(dead);
    return test_end();
}
