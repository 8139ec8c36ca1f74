/*
 * test_wait_deadline - one GAS_TIMEOUT per API call (runtime/wait.h,
 * gas_rt_call_begin/gas_rt_call_end).
 *
 * Waits on a condition that never holds, with a 100 ms timeout, no spin and
 * a 1 ms sleep slice, counting how often each wait looks at its condition:
 *  - outside a bracket, two waits in a row each wait their own 100 ms (each
 *    looks many times: at least once per slice);
 *  - inside one bracket, the second wait of the call finds the call's
 *    deadline passed and returns GAS_ERR_TIMEOUT after its first few looks
 *    (the spin and the yields before it would sleep), without sleeping:
 *    before the bracket existed it waited another 100 ms, so the call took
 *    two timeouts (gas_iget: room to send, then the answers);
 *  - brackets nest: an inner begin/end does not restart or end the call's
 *    deadline, and after the outer end a wait has its own timeout again;
 *  - a wait between gas_rt_call_suspend and gas_rt_call_resume inside a
 *    call whose deadline passed waits a whole timeout of its own (a failed
 *    collective's wait for the puts into buffers its caller frees next), and
 *    after the resume the call's deadline is still passed.
 * The counts, not the clock, are what is checked (the first wait of each
 * pair is the reference for "waited a whole timeout").
 */
#include "runtime/error.h"
#include "runtime/wait.h"
#include "unit.h"

#define TIMEOUT_NS 100000000ull
#define SLICE_NS 1000000ull
#define FEW_LOOKS 10   /* a wait that does not sleep: its first look, the spin, 4 yields */

static int looks;

static int never(void *arg)
{
    (void)arg;
    looks++;
    return 0;
}

/* One wait that must time out; how many times it looked at its condition. */
static int timed_out_wait(const char *what)
{
    looks = 0;
    gas_status_t st = gas_rt_wait(never, NULL, NULL, "test_wait_deadline", what);
    UCHECK(st == GAS_ERR_TIMEOUT, "%s returned %d, want GAS_ERR_TIMEOUT", what, (int)st);
    return looks;
}

int main(void)
{
    gas_rt_error_set_abort(0);
    gas_rt_wait_setup(NULL, NULL, 0, 0, TIMEOUT_NS, 0);
    gas_rt_wait_set_slice(SLICE_NS);
    int whole = (int)(TIMEOUT_NS / SLICE_NS) / 2;   /* a whole timeout: well over this many looks */

    /* Outside a bracket: every wait has its own deadline. */
    int a = timed_out_wait("a first wait outside a call");
    int b = timed_out_wait("a second wait outside a call");
    UCHECK(a > whole && b > whole, "outside a call each wait waits a whole timeout: %d and %d "
           "looks (want > %d)", a, b, whole);

    /* One call: the second wait has no time left. */
    int began = gas_rt_call_begin();
    UCHECK(began == 1, "the outermost gas_rt_call_begin returns 1 (%d)", began);
    int c = timed_out_wait("the first wait of a call");
    int d = timed_out_wait("the second wait of the call");
    /* nested: still the same call, still no time left */
    int inner = gas_rt_call_begin();
    UCHECK(inner == 0, "a nested gas_rt_call_begin returns 0 (%d)", inner);
    int e = timed_out_wait("a wait in a nested bracket");
    gas_rt_call_end(inner);
    int f = timed_out_wait("a wait after the nested bracket ended");
    gas_rt_call_end(began);
    UCHECK(c > whole, "the first wait of a call waits a whole timeout: %d looks (want > %d)", c,
           whole);
    UCHECK(d <= FEW_LOOKS, "the second wait of a call found its deadline passed and looked %d "
           "times (want <= %d): the call waited more than one GAS_TIMEOUT", d, FEW_LOOKS);
    UCHECK(e <= FEW_LOOKS && f <= FEW_LOOKS, "waits in and after a nested bracket of the same call "
           "looked %d and %d times (want <= %d)", e, f, FEW_LOOKS);

    /* Suspended inside a call past its deadline: a wait of its own; resumed:
     * the call's deadline again, still passed. */
    began = gas_rt_call_begin();
    int i1 = timed_out_wait("the first wait of a call that suspends its bracket");
    struct gas_rt_call_saved saved = gas_rt_call_suspend();
    int i2 = timed_out_wait("a wait with the bracket suspended");
    gas_rt_call_resume(saved);
    int i3 = timed_out_wait("a wait after the bracket was resumed");
    gas_rt_call_end(began);
    UCHECK(i1 > whole && i2 > whole, "a wait with the call's bracket suspended waits a whole "
           "timeout of its own: %d looks (the call's first wait %d; want > %d)", i2, i1, whole);
    UCHECK(i3 <= FEW_LOOKS, "after gas_rt_call_resume the call's deadline (passed) holds again: "
           "a wait looked %d times (want <= %d)", i3, FEW_LOOKS);

    /* After the call: a fresh deadline; and a new call starts its own. */
    int g = timed_out_wait("a wait after the call");
    UCHECK(g > whole, "after the call a wait has its own timeout: %d looks (want > %d)", g, whole);
    began = gas_rt_call_begin();
    int h = timed_out_wait("the first wait of a second call");
    gas_rt_call_end(began);
    UCHECK(h > whole, "a new call gets a whole timeout: %d looks (want > %d)", h, whole);
    return unit_finish("test_wait_deadline");
}
