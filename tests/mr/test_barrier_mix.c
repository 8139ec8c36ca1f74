/*
 * test_barrier_mix [MODE] - gas_team_barrier(GAS_TEAM_WORLD) is gas_barrier
 * (gas.h): either call on one rank meets either on the others.
 *
 * mix (the default): 300 rounds; in each, every rank puts (nbi) the round
 * number into the next rank's word, then calls gas_barrier or
 * gas_team_barrier(GAS_TEAM_WORLD), each rank choosing by round and rank,
 * so both calls meet in every round (ranks 0 and 1 always differ); after
 * it the word written by the previous rank must hold the round number (the
 * barrier's implied quiet), then a second mixed barrier keeps the next
 * round's put from overwriting it before it is read.  Before the fix every
 * rank failed the first round with a collective mismatch.
 *
 * mismatch: the last rank calls gas_team_barrier_nb(GAS_TEAM_WORLD) and
 * gas_wait (a collective on the world team, matched only by the same
 * non-blocking call), the others gas_team_barrier(GAS_TEAM_WORLD): every
 * rank gets GAS_ERR_INVALID within a few seconds naming the call the other
 * side made (gas_team_barrier_nb on the others, gas_team_barrier on the
 * last rank; or gas_finalize on one of the others, whose barrier the others'
 * gas_finalize met first), never GAS_ERR_TIMEOUT; then every rank calls gas_finalize,
 * which finalizes, or fails with GAS_ERR_INVALID saying "call gas_finalize
 * again" (the barrier that this rank's failed gas_team_barrier began met the
 * others' gas_finalize), and then the second call finalizes.
 *
 * fini_fails: the last rank calls gas_finalize while the others call
 * gas_barrier: both fail (the finalize's message says to call it again);
 * the last rank exits 0 at once, still initialised, and the others 1 s
 * later.  The manifest checks that gasrun says the last rank's
 * gas_finalize failed, not that it never called it.
 * GAS_ERRORS=return.
 */
#include <time.h>

#include "check.h"

enum { ROUNDS = 300 };

/* Round i's barrier on this rank: ranks 0 and 1 always make different calls. */
static gas_status_t mixed_barrier(int i, int salt)
{
    return ((i + t_rank + salt) & 1) ? gas_team_barrier(GAS_TEAM_WORLD) : gas_barrier();
}

static int mix(void)
{
    gas_ptr_t words = GAS_NULL;
    MUST(gas_malloc(8 * (size_t)t_nranks, &words));
    int next = (t_rank + 1) % t_nranks, prev = (t_rank + t_nranks - 1) % t_nranks;
    gas_ptr_t mine_p, next_p;
    MUST(gas_ptr_index(words, 8, (uint64_t)t_rank, &mine_p));
    MUST(gas_ptr_index(words, 8, (uint64_t)next, &next_p));
    const uint64_t *mine = gas_ptr_local(mine_p);
    for (int i = 1; i <= ROUNDS; i++) {   /* every round even after a failure: ranks stay in step */
        uint64_t v = (uint64_t)i;
        CHECK_OK(gas_put_nbi(next_p, &v, sizeof v));
        if (!CHECK_OK(mixed_barrier(i, 0)))
            test_note("round %d: %s", i, gas_last_error());
        uint64_t got = __atomic_load_n(mine, __ATOMIC_ACQUIRE);
        CHECK(got == v, "round %d: rank %d's put before the barrier is not visible after it "
              "(word %llu)", i, prev, (unsigned long long)got);
        if (!CHECK_OK(mixed_barrier(i, 1)))
            test_note("round %d (second barrier): %s", i, gas_last_error());
    }
    CHECK_OK(gas_free(words));
    return test_end();
}

/* gas_finalize until it finalizes: a failure must say to call it again (twice at most). */
static void finalize_after_mismatch(void)
{
    for (int tries = 0; tries < 2; tries++) {
        gas_status_t st = gas_finalize();
        if (st == GAS_OK || !gas_initialized())
            return;
        const char *msg = gas_last_error();
        test_note("gas_finalize: %s", msg);
        CHECK(st == GAS_ERR_INVALID && strstr(msg, "call gas_finalize again") != NULL,
              "gas_finalize after the mismatch: %d (%s), \"%s\"; want GAS_OK, or "
              "GAS_ERR_INVALID saying to call gas_finalize again", (int)st, gas_strerror(st),
              msg);
    }
    CHECK(!gas_initialized(), "gas_finalize failed twice after the mismatch");
}

/* Whether msg names API call `name` itself (not a longer name that starts with it). */
static int names_call(const char *msg, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(msg, name); p != NULL; p = strstr(p + 1, name))
        if (p[n] != '_' && (p[n] < 'a' || p[n] > 'z'))
            return 1;
    return 0;
}

static int mismatch(void)
{
    int last = t_nranks - 1;
    double t0 = test_elapsed();
    gas_status_t st;
    if (t_rank == last) {
        gas_handle_t h = GAS_HANDLE_NULL;
        st = gas_team_barrier_nb(GAS_TEAM_WORLD, &h);
        if (st == GAS_OK)
            st = gas_wait(h);
    } else {
        st = gas_team_barrier(GAS_TEAM_WORLD);
    }
    const char *msg = gas_last_error();
    /* (a rank whose world check did not find the last rank first may see the
     * others' gas_finalize meet its barrier instead) */
    const char *other = t_rank == last ? "gas_team_barrier" : "gas_team_barrier_nb";
    CHECK(st == GAS_ERR_INVALID &&
              (names_call(msg, other) || (t_rank != last && names_call(msg, "gas_finalize"))),
          "%s against the other side's %s: %d (%s), \"%s\"; want GAS_ERR_INVALID naming %s",
          t_rank == last ? "gas_team_barrier_nb" : "gas_team_barrier", other, (int)st,
          gas_strerror(st), msg, other);
    CHECK(test_elapsed() - t0 < 10, "the mismatch took %.1f s to report", test_elapsed() - t0);
    if (st != GAS_OK)
        test_note("as expected: %s", msg);
    double secs = test_elapsed();
    finalize_after_mismatch();
    return test_result(secs);
}

static int fini_fails(void)
{
    int last = t_nranks - 1;
    gas_status_t st = t_rank == last ? gas_finalize() : gas_barrier();
    const char *msg = gas_last_error();
    CHECK(st == GAS_ERR_INVALID, "%s: %d (%s), \"%s\"; want GAS_ERR_INVALID",
          t_rank == last ? "gas_finalize against gas_barrier" : "gas_barrier against "
          "gas_finalize", (int)st, gas_strerror(st), msg);
    if (t_rank == last) {
        CHECK(strstr(msg, "call gas_finalize again") != NULL,
              "the failed gas_finalize does not say to call it again: \"%s\"", msg);
        CHECK(gas_initialized(), "the failed gas_finalize finalized");
    } else {
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    printf("[barrier_mix rank %d] %s: %s\n", t_rank, t_failures ? "FAILED" : "as expected", msg);
    return t_failures ? 1 : 0;   /* exits still initialised, on purpose */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "mix";
    test_begin("barrier_mix");
    if (strcmp(mode, "mix") == 0)
        return mix();
    if (t_nranks < 2) {
        test_note("skipped: needs 2 ranks or more");
        gas_finalize();
        return 77;
    }
    if (strcmp(mode, "mismatch") == 0)
        return mismatch();
    if (strcmp(mode, "fini_fails") == 0)
        return fini_fails();
    test_die("unknown mode");
    return 2;
}
