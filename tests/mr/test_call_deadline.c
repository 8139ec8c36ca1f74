/*
 * test_call_deadline - GAS_TIMEOUT bounds gas_malloc as a whole, not each of
 * its world barriers (runtime/wait.h, gas_rt_call_begin/gas_rt_call_end).
 *
 * 3 ranks; rank 0 has GAS_TIMEOUT=1s, the others 20s.  Every rank calls
 * gas_malloc for 64 MiB shares, so the call makes two world barriers: the
 * call's, then one that grows the heap.  Progress hooks (they run inside the
 * waits) order the ranks.  Rank 0 calls 0.5 s late, so its signals of the
 * first barrier go out before it waits (in its last round), and there it
 * sleeps 1.5 s: the barrier succeeds (the signal came meanwhile), but the
 * call has waited longer than GAS_TIMEOUT.  The last rank, waiting for rank
 * 0 in that barrier, sleeps from 0.2 s to 2.7 s in its wait, so its signal
 * of the heap barrier comes at 2.7 s.  Rank 0's wait in the heap barrier
 * (from 2 s) must fail with GAS_ERR_TIMEOUT at once, naming that barrier.
 * The hooks sleep only in the call's first barrier, and rank 1's hook holds
 * its part of it (from 0.3 s to 0.9 s or later) so that rank 0 must wait
 * there: on a loaded machine rank 1's signal could otherwise be in before
 * rank 0 looked, rank 0's sleep then fell in the heap barrier, and the test
 * failed for its own timing (6 of 20 runs under load).  Before, each barrier
 * had its own GAS_TIMEOUT: the heap barrier waited 0.7 s for the last rank's
 * signal and gas_malloc returned GAS_OK after 2.2 s of waiting, twice
 * GAS_TIMEOUT.  What is checked is the status and which barrier failed (the
 * sleeps only order the ranks, with 0.2 s or more to spare).  Then every
 * rank finalizes (rank 0's first gas_finalize meets its own unfinished heap
 * barrier, on which the others' gas_malloc completes, and fails; its second
 * passes).
 */
#include <pthread.h>
#include <time.h>

#include "check.h"
#include "runtime/wait.h"

uint64_t gas_gs_world_epoch(void);   /* gas/internal.h: world barriers entered */

static volatile int armed;
static double armed_at, sleep_after, sleep_for;
static uint64_t sleep_epoch;   /* the world barrier the hook sleeps in */
static int slept;
static pthread_t main_thread;

/* Once, on the calling thread, in a wait at least sleep_after s after arming: sleep sleep_for s. */
static int sleepy_hook(void)
{
    if (armed && !slept && pthread_equal(pthread_self(), main_thread) &&
        gas_gs_world_epoch() == sleep_epoch && test_elapsed() - armed_at >= sleep_after) {
        slept = 1;
        struct timespec ts = {(time_t)sleep_for, (long)((sleep_for - (time_t)sleep_for) * 1e9)};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int main(void)
{
    const char *r = getenv("GASRUN_RANK");
    setenv("GAS_TIMEOUT", r && strcmp(r, "0") == 0 ? "1s" : "20s", 1);
    test_begin("call_deadline");
    if (t_nranks < 3) {
        test_note("skipped: needs 3 ranks or more");
        gas_finalize();
        return 77;
    }
    main_thread = pthread_self();
    int last = t_nranks - 1;
    if (t_rank <= 1 || t_rank == last) {
        sleep_after = t_rank == 0 ? 0 : t_rank == 1 ? 0.3 : 0.2;
        sleep_for = t_rank == 0 ? 1.5 : t_rank == 1 ? 0.6 : 2.5;
        CHECK(gas_rt_progress_register(sleepy_hook, GAS_RT_HOOK_POLL) == 0, "no room for a hook");
    }
    MUST(gas_barrier());
    gas_ptr_t a = GAS_NULL;
    size_t share = 64u << 20;
    uint64_t e0 = gas_gs_world_epoch();
    sleep_epoch = e0 + 1;
    if (t_rank == 0) {
        struct timespec late = {0, 500000000L};
        nanosleep(&late, NULL);
    }
    armed_at = test_elapsed();
    armed = 1;
    gas_status_t st = gas_malloc(share * (size_t)t_nranks, &a);
    armed = 0;
    if (t_rank != 0) {
        CHECK(st == GAS_OK, "gas_malloc: %d (%s), \"%s\"", (int)st, gas_strerror(st),
              gas_last_error());
        if (t_rank == last)
            CHECK(slept, "the last rank's hook never slept inside gas_malloc");
        return test_end();
    }
    const char *msg = gas_last_error();
    const char *at = strstr(msg, " of barrier ");
    unsigned long long which = at ? strtoull(at + 12, NULL, 10) : 0;
    CHECK(slept, "the hook never ran inside gas_malloc");
    CHECK(st == GAS_ERR_TIMEOUT && which == e0 + 2,
          "gas_malloc whose first barrier took longer than GAS_TIMEOUT: %d (%s), \"%s\"; want "
          "GAS_ERR_TIMEOUT in its next barrier (#%llu): the call as a whole had waited "
          "GAS_TIMEOUT", (int)st, gas_strerror(st), st == GAS_OK ? "" : msg,
          (unsigned long long)e0 + 2);
    if (st == GAS_ERR_TIMEOUT)
        test_note("as expected: %s", msg);
    double secs = test_elapsed();
    st = gas_finalize();
    if (st == GAS_ERR_INVALID && gas_initialized())
        st = gas_finalize();
    CHECK(st == GAS_OK, "gas_finalize: %d (%s), \"%s\"", (int)st, gas_strerror(st),
          gas_last_error());
    return test_result(secs);
}
