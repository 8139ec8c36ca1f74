/*
 * test_deferred_report - a call that synchronises and implies a quiet, whose
 * quiet finds an earlier operation's failure (a put that its target refused,
 * which udp reports only at the next quiet), still does its part and then
 * returns that failure, saying it is an earlier operation's and that the
 * call completed.  Rank 0 puts 8 bytes into rank 1's unclaimed middle (the
 * black-box tester's sequence) before gas_barrier, gas_malloc, gas_free,
 * gas_team_barrier and gas_finalize; every rank makes the same calls, and
 * data checks after them show that they met and did their work.  Before the
 * fix rank 0's gas_barrier returned without taking part, so every later
 * collective call on every rank paired up wrongly ("another rank called
 * gas_malloc at the same point").  Where the put is refused at once (shm
 * maps the target's segment and checks it), the put fails and the calls
 * succeed.  Skipped over rdma, whose writes there land unchecked.
 */
#include "check.h"

#define BLOCK 4096

static gas_ptr_t gap;   /* the middle of rank 1's segment, between heap and arenas */

/* Rank 0's bad put: 1 when it was accepted (its refusal comes later), else 0. */
static int bad_put(void)
{
    if (t_rank != 0)
        return 0;
    uint64_t v = 7;
    gas_status_t st = gas_put(gap, &v, sizeof v);
    if (st == GAS_OK)
        return 1;
    CHECK(st == GAS_ERR_BOUNDS, "gas_put into the gap returned %d (%s), want GAS_ERR_BOUNDS",
          (int)st, gas_strerror(st));
    return 0;
}

/* st of `call` after rank 0's bad put (deferred: its refusal is due here). */
static void expect_report(gas_status_t st, const char *call, int deferred, const char *done)
{
    if (!deferred) {
        CHECK(st == GAS_OK, "%s returned %d (%s): \"%s\"", call, (int)st, gas_strerror(st),
              gas_last_error());
        return;
    }
    const char *msg = gas_last_error();
    char named[64];
    snprintf(named, sizeof named, ": %s: ", call);
    CHECK(st == GAS_ERR_BOUNDS, "%s returned %d (%s), want the put's GAS_ERR_BOUNDS", call,
          (int)st, gas_strerror(st));
    CHECK(strstr(msg, named) && strstr(msg, "an earlier operation") &&
              strstr(msg, "rank 1 refused") && strstr(msg, done),
          "%s's message does not say an earlier put to rank 1 failed and \"%s\": \"%s\"", call,
          done, msg);
}

static uint64_t word(int writer, int round)
{
    return 0x6465660000000000ull | (uint64_t)round << 16 | (uint64_t)writer;
}

/* Each rank puts a word into the next rank's block of a (no quiet). */
static void put_next(gas_ptr_t a, int round)
{
    gas_ptr_t p;
    uint64_t v = word(t_rank, round);
    CHECK_OK(gas_ptr_index(a, BLOCK, (uint64_t)((t_rank + 1) % t_nranks), &p));
    CHECK_OK(gas_put_nbi(p, &v, sizeof v));
}

/* After a barrier: this rank's block of a holds the previous rank's word. */
static void check_mine(gas_ptr_t a, int round, const char *after)
{
    gas_ptr_t p;
    uint64_t got = 0, want = word((t_rank + t_nranks - 1) % t_nranks, round);
    CHECK_OK(gas_ptr_index(a, BLOCK, (uint64_t)t_rank, &p));
    CHECK_OK(gas_get(&got, p, sizeof got));
    CHECK(got == want, "after %s: block holds 0x%llx, want 0x%llx", after,
          (unsigned long long)got, (unsigned long long)want);
}

int main(void)
{
    test_begin("deferred_report");
    if (t_nranks < 2) {
        gas_finalize();
        return 77;
    }
    if (test_peer_unchecked(1)) {
        gas_finalize();
        return 77;
    }
    gas_mem_stats_t ms;   /* every segment is alike: rank 1's middle is where ours is */
    MUST(gas_memory_stats(&ms));
    gap = gas_ptr_make(1, (ms.heap_end + ms.unclaimed / 2) & ~(uint64_t)4095);

    /* The tester's sequence: bad put, barrier, gas_malloc, barrier. */
    int d = bad_put();
    expect_report(gas_barrier(), "gas_barrier", d, "the barrier completed");
    gas_ptr_t a = GAS_NULL, b = GAS_NULL, c = GAS_NULL;
    MUST(gas_malloc((size_t)t_nranks * BLOCK, &a));
    put_next(a, 1);
    CHECK_OK(gas_barrier());
    check_mine(a, 1, "the second gas_barrier");

    /* gas_malloc and gas_free complete everywhere and report it on rank 0. */
    d = bad_put();
    expect_report(gas_malloc((size_t)t_nranks * BLOCK, &b), "gas_malloc", d,
                  "the allocation completed");
    CHECK(b != GAS_NULL && b != a, "gas_malloc gave 0x%llx (first array 0x%llx)",
          (unsigned long long)b, (unsigned long long)a);
    if (b != GAS_NULL) {
        put_next(b, 2);
        CHECK_OK(gas_barrier());
        check_mine(b, 2, "gas_malloc's report");
        d = bad_put();
        expect_report(gas_free(b), "gas_free", d, "the array was freed");
        /* freed everywhere: the same first-fit place is handed out again */
        CHECK_OK(gas_malloc((size_t)t_nranks * BLOCK, &c));
        CHECK(c == b, "a gas_malloc after the gas_free gave 0x%llx, want the freed 0x%llx",
              (unsigned long long)c, (unsigned long long)b);
        CHECK_OK(gas_free(c));
    }

    /* A team barrier (a schedule of the collectives) implies the quiet too. */
    put_next(a, 3);
    d = bad_put();
    expect_report(gas_team_barrier(GAS_TEAM_WORLD), "gas_team_barrier", d,
                  "the barrier completed");
    check_mine(a, 3, "gas_team_barrier");
    CHECK_OK(gas_barrier());

    /* The last one: gas_finalize completes (every rank leaves the job). */
    double secs = test_elapsed();
    d = bad_put();
    expect_report(gas_finalize(), "gas_finalize", d, "gas_finalize completed");
    CHECK(!gas_initialized(), "still initialised after gas_finalize");
    return test_result(secs);
}
