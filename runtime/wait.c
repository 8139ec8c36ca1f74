/* wait.c - spin-then-sleep waits on a futex doorbell, and the progress hooks. */
#include "wait.h"
#include "clock.h"
#include "error.h"
#include "gate.h"
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_PROGRESS_HOOKS 8
#define SLEEP_SLICE_NS 2000000u /* re-check at least this often while asleep */

static gas_rt_progress_fn hooks[MAX_PROGRESS_HOOKS];
static enum gas_rt_hook_kind hook_kind[MAX_PROGRESS_HOOKS];
static int nhooks;
/* gas_rt_progress_hold spans this thread is in: issuing hooks are skipped. */
static _Thread_local int progress_held;

static gas_rt_doorbell_t fallback_bell;
static gas_rt_doorbell_t *own_bell = &fallback_bell;
static const char *own_seg;
static uint64_t own_seg_size;
static _Atomic uint64_t spin_budget_ns = 50000; /* read by udp's progress thread too */
static uint64_t wait_timeout_ns;
static uint64_t stall_warn_after_ns = 60000000000ull;
static uint64_t sleep_slice_ns = SLEEP_SLICE_NS;
static _Atomic(gas_rt_sleep_fn) sleeper; /* NULL: the doorbell */
static void (*_Atomic sleeper_done)(void);
static _Atomic(gas_rt_nudge_fn) nudger;  /* sends wake-up datagrams (udp), or NULL */
static void (*_Atomic waker)(void);      /* wakes a waiter asleep in a transport (udp) */

const char gas_rt_watch_segment_tag;

int gas_rt_progress_register(gas_rt_progress_fn fn, enum gas_rt_hook_kind kind)
{
    if (nhooks == MAX_PROGRESS_HOOKS)
        return -1;
    hook_kind[nhooks] = kind;
    hooks[nhooks++] = fn;
    return 0;
}

void gas_rt_progress_hold(void)
{
    progress_held++;
}

void gas_rt_progress_unhold(void)
{
    progress_held--;
}

void gas_rt_progress_reset(void)
{
    nhooks = 0;
}

_Atomic int gas_rt_tick_on;

void gas_rt_tick_slow(void)
{
    static _Thread_local unsigned calls;
    static _Thread_local uint64_t last;
    if (++calls % 16 != 0)
        return;
    uint64_t now = gas_rt_now_ns();
    if (now - last < 50000)
        return;
    last = now;
    gas_rt_progress();
}

int gas_rt_progress(void)
{
    int n = 0;
    for (int i = 0; i < nhooks; i++)
        if (!progress_held || hook_kind[i] == GAS_RT_HOOK_POLL)
            n += hooks[i]();
    return n;
}

void gas_rt_wait_setup(gas_rt_doorbell_t *own, const char *seg_base, uint64_t seg_size,
                       uint64_t spin_ns, uint64_t timeout_ns, uint64_t stall_warn_ns)
{
    own_bell = own ? own : &fallback_bell;
    own_seg = seg_base;
    own_seg_size = seg_size;
    atomic_store_explicit(&spin_budget_ns, spin_ns, memory_order_relaxed);
    wait_timeout_ns = timeout_ns;
    stall_warn_after_ns = stall_warn_ns;
}

void gas_rt_wait_set_slice(uint64_t slice_ns)
{
    sleep_slice_ns = slice_ns ? slice_ns : SLEEP_SLICE_NS;
}

void gas_rt_wait_set_sleeper(gas_rt_sleep_fn fn, void (*done)(void))
{
    atomic_store(&sleeper, fn);
    atomic_store(&sleeper_done, done);
}


void gas_rt_wait_set_waker(void (*wake)(void))
{
    atomic_store(&waker, wake);
}

void gas_rt_wait_wake_all(void)
{
    gas_rt_doorbell_wake(own_bell);
    void (*wake)(void) = atomic_load(&waker);
    if (wake)
        wake();
}

void gas_rt_doorbell_set_nudge(gas_rt_doorbell_t *db, uint32_t ip, uint16_t port)
{
    atomic_store(&db->nudge_ip, ip);
    atomic_store(&db->nudge_port, port);
}

void gas_rt_doorbell_set_nudger(gas_rt_nudge_fn fn)
{
    atomic_store(&nudger, fn);
}

void gas_rt_doorbell_wake(gas_rt_doorbell_t *db)
{
    atomic_fetch_add_explicit(&db->seq, 1, memory_order_seq_cst);
    syscall(SYS_futex, &db->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    if (atomic_load_explicit(&db->sock_sleepers, memory_order_seq_cst) != 0) {
        gas_rt_nudge_fn fn = atomic_load_explicit(&nudger, memory_order_relaxed);
        uint32_t port = atomic_load_explicit(&db->nudge_port, memory_order_relaxed);
        if (fn && port) /* else the sleeper still wakes at the end of its slice */
            fn(atomic_load_explicit(&db->nudge_ip, memory_order_relaxed), (uint16_t)port);
    }
}

/*
 * Publish the watched offset after counting ourselves as a sleeper: the watch
 * only ever moves UNKNOWN -> offset -> ANY while sleepers remain (and back to
 * UNKNOWN when the last one leaves), so a writer that sees us counted either
 * sees a watch covering our word or wakes everyone.
 */
static void publish_watch(gas_rt_doorbell_t *db, uint64_t want)
{
    uint64_t w = atomic_load_explicit(&db->watch, memory_order_seq_cst);
    while (w != want && w != GAS_RT_WATCH_ANY) {
        uint64_t next = w == GAS_RT_WATCH_UNKNOWN ? want : GAS_RT_WATCH_ANY;
        if (atomic_compare_exchange_weak_explicit(&db->watch, &w, next, memory_order_seq_cst,
                                                  memory_order_seq_cst))
            break;
    }
}

/* The doorbell offset of a wait's watch (see gas_rt_wait). */
static uint64_t watch_offset(const void *watch)
{
    if (watch && watch != GAS_RT_WATCH_SEGMENT && own_seg && (const char *)watch > own_seg &&
        (uint64_t)((const char *)watch - own_seg) < own_seg_size)
        return (uint64_t)((const char *)watch - own_seg);
    return GAS_RT_WATCH_ANY;
}

/* Count a sleeper watching offset `off` in (writers then wake it), and out. */
static void sleeper_in(gas_rt_doorbell_t *db, uint64_t off)
{
    atomic_fetch_add_explicit(&db->sleepers, 1, memory_order_seq_cst);
    publish_watch(db, off);
}

static void sleeper_out(gas_rt_doorbell_t *db)
{
    if (atomic_fetch_sub_explicit(&db->sleepers, 1, memory_order_seq_cst) == 1)
        atomic_store_explicit(&db->watch, GAS_RT_WATCH_UNKNOWN, memory_order_seq_cst);
}

void gas_rt_doorbell_join(const void *watch)
{
    atomic_fetch_add_explicit(&own_bell->sock_sleepers, 1, memory_order_seq_cst);
    sleeper_in(own_bell, watch_offset(watch));
}

void gas_rt_doorbell_leave(void)
{
    sleeper_out(own_bell);
    atomic_fetch_sub_explicit(&own_bell->sock_sleepers, 1, memory_order_seq_cst);
}

/*
 * Sleep on the doorbell for at most slice_ns unless cond already holds.
 * Returns 0 when the whole slice passed unwoken, else 1.
 */
static int doorbell_sleep(gas_rt_cond_fn cond, void *arg, uint64_t watch_off, uint64_t slice_ns)
{
    gas_rt_doorbell_t *db = own_bell;
    uint32_t seq = atomic_load_explicit(&db->seq, memory_order_seq_cst);
    sleeper_in(db, watch_off);
    int woken = 1;
    if (!cond(arg)) {
        struct timespec ts = {.tv_sec = (time_t)(slice_ns / 1000000000u),
                              .tv_nsec = (long)(slice_ns % 1000000000u)};
        if (syscall(SYS_futex, &db->seq, FUTEX_WAIT, seq, &ts, NULL, 0) != 0 && errno == ETIMEDOUT)
            woken = 0;
    }
    sleeper_out(db);
    return woken;
}

int gas_rt_doorbell_sleep(gas_rt_cond_fn cond, void *arg, const void *watch, uint64_t slice_ns)
{
    return doorbell_sleep(cond, arg, watch_offset(watch), slice_ns);
}

uint64_t gas_rt_wait_spin_ns(void)
{
    return atomic_load_explicit(&spin_budget_ns, memory_order_relaxed);
}

void gas_rt_wait_set_spin(uint64_t spin_ns)
{
    atomic_store_explicit(&spin_budget_ns, spin_ns, memory_order_relaxed);
}

void gas_rt_poll_idle(void)
{
    if (gas_rt_wait_spin_ns() == 0)
        sched_yield();
}

/*
 * A wait's clock.  Two of its readings further apart than a sleep slice plus
 * STALL_NS mean the thread did not run in between: the process was stopped
 * (SIGSTOP, ^Z, a debugger at a breakpoint) or starved.  It was not looking
 * then, and what it waits for may be sitting in its socket, unread, so the
 * excess is `forgiven`: not counted against GAS_TIMEOUT.  Otherwise a rank
 * resumed after more than GAS_TIMEOUT failed its wait at its first look at
 * the clock, before its progress thread had read the answer that had come
 * meanwhile.  The udp timers forgive such a stall too (progress.c).
 */
#define STALL_NS 200000000ull

struct wait_clock {
    uint64_t last;        /* the previous reading */
    uint64_t *forgiven;   /* stalls so far, of this wait or of its call */
};

static uint64_t clock_read(struct wait_clock *c)
{
    uint64_t now = gas_rt_now_ns(), allowed = sleep_slice_ns + STALL_NS;
    if (now - c->last > allowed)
        *c->forgiven += now - c->last - allowed;
    c->last = now;
    return now;
}

/*
 * Drive progress and look at cond until it holds (1), or until `spin` ns have
 * passed without progress (0): a waiter that is serving its peers' requests
 * (a target in a barrier, in poll mode) keeps polling while they come.
 */
static int spin_for(gas_rt_cond_fn cond, void *arg, uint64_t spin, struct wait_clock *clk)
{
    if (spin == 0) {
        gas_rt_progress();
        return cond(arg);
    }
    uint64_t end = clock_read(clk) + spin;
    unsigned i = 0;
    for (;;) {
        int moved = gas_rt_progress();
        if (cond(arg))
            return 1;
        gas_rt_cpu_relax();
        /* The clock is cheap next to a progress hook (a system call for udp):
         * with hooks, look every time, so the spin lasts GAS_WAIT_SPIN. */
        if (nhooks || (++i & 63) == 0) {
            uint64_t now = clock_read(clk);
            if (moved)
                end = now + spin;
            else if (now >= end)
                return 0;
        }
    }
}

/* The API call bracket this thread is in (gas_rt_call_begin), when its
 * first wait began waiting (0: none has yet), and the stalls its waits
 * forgave (struct wait_clock). */
static _Thread_local int call_open;
static _Thread_local uint64_t call_wait_start;
static _Thread_local uint64_t call_forgiven;

int gas_rt_call_begin(void)
{
    if (call_open)
        return 0;
    call_open = 1;
    call_wait_start = 0;
    return 1;
}

void gas_rt_call_end(int began)
{
    if (began)
        call_open = 0;
}

struct gas_rt_call_saved gas_rt_call_suspend(void)
{
    struct gas_rt_call_saved saved = {call_open, call_wait_start, call_forgiven};
    call_open = 0;
    return saved;
}

void gas_rt_call_resume(struct gas_rt_call_saved saved)
{
    call_open = saved.open;
    call_wait_start = saved.wait_start;
    call_forgiven = saved.forgiven;
}

/* The explainer of this thread's innermost wait (gas_rt_wait_explained), and
 * whether one is running (waits inside it do not wait). */
struct wait_explainer {
    gas_rt_explain_fn fn;
    void *arg;
};
static _Thread_local struct wait_explainer explainer;
static _Thread_local int explaining;

/* The explainer's finding into why[cap] ("" when the wait has none). */
static void explain_wait(char *why, size_t cap)
{
    why[0] = '\0';
    if (explainer.fn) {
        explaining = 1;
        explainer.fn(explainer.arg, why, cap);
        explaining = 0;
    }
}

/* A wait's GAS_ERR_TIMEOUT, raised: its explainer's finding first, when it has one. */
static gas_status_t timeout_error(const char *call, const char *what, uint64_t waited)
{
    char why[480];
    explain_wait(why, sizeof why);
    if (why[0])
        return gas_rt_error(GAS_ERR_TIMEOUT, call, "%s (GAS_TIMEOUT: waited %.1f s for %s)", why,
                            (double)waited / 1e9, what);
    return gas_rt_error(GAS_ERR_TIMEOUT, call,
                        "waited %.1f s for %s (GAS_TIMEOUT); the peer may be dead or stuck",
                        (double)waited / 1e9, what);
}

/* gas_rt_wait past its first look; *asked set once the sleeper was asked. */
static gas_status_t wait_slow(gas_rt_cond_fn cond, void *arg, const void *watch, const char *call,
                              const char *what, int *asked)
{
    uint64_t watch_off = watch_offset(watch);
    uint64_t own = gas_rt_now_ns(), start = own;   /* own: GAS_STALL_WARN is per wait */
    uint64_t own_forgiven = 0;
    struct wait_clock clk = {own, &own_forgiven};
    if (call_open) {   /* the call's deadline, not this wait's own */
        if (call_wait_start == 0) {
            call_wait_start = start;
            call_forgiven = 0;
        } else {
            start = call_wait_start;
        }
        clk.forgiven = &call_forgiven;
    }
    if (spin_for(cond, arg, gas_rt_wait_spin_ns(), &clk))
        return GAS_OK;
    /* A few yields hand the core to a peer that may be about to answer. */
    for (int y = 0; y < 4; y++) {
        sched_yield();
        gas_rt_progress();
        if (cond(arg))
            return GAS_OK;
    }
    int warned = 0;
    for (;;) {
        uint64_t now = clock_read(&clk);
        uint64_t waited = now - start - *clk.forgiven;
        if (wait_timeout_ns && waited >= wait_timeout_ns) {
            /* One more look first: a stall may just have ended (forgiven
             * above only when longer than STALL_NS). */
            gas_rt_progress();
            if (cond(arg))
                return GAS_OK;
            return timeout_error(call, what, waited);
        }
        if (!warned && stall_warn_after_ns && now - own >= stall_warn_after_ns) {
            char why[480];   /* who is awaited, where the wait can tell (a collective) */
            explain_wait(why, sizeof why);
            gas_log_warn("wait", "%s has waited %.0f s for %s%s%s", call, (double)(now - own) / 1e9,
                         what, why[0] ? ": " : "", why);
            warned = 1;
        }
        uint64_t slice = sleep_slice_ns;
        if (wait_timeout_ns && wait_timeout_ns - waited < slice)
            slice = wait_timeout_ns - waited;
        gas_rt_sleep_fn sl = atomic_load_explicit(&sleeper, memory_order_relaxed);
        int woken = 1;
        *asked |= sl != NULL;
        if (!sl || !sl(cond, arg, watch, slice))
            woken = doorbell_sleep(cond, arg, watch_off, slice);
        /* Woken (by a write or a datagram): spin again, as the first time,
         * since what woke us is often the first of a conversation whose next
         * message comes within the spin.  A doorbell slice that ran out
         * unwoken is only the safety net: look once and sleep again, rather
         * than take the serving of traffic back from udp's progress thread. */
        if (!woken) {
            gas_rt_progress();
            if (cond(arg))
                return GAS_OK;
            continue;
        }
        if (spin_for(cond, arg, gas_rt_wait_spin_ns(), &clk))
            return GAS_OK;
    }
}

/* A wait's condition, which also holds once gas_finalize has closed the gate
 * on the call this thread is in (gate.h): every spin and sleeper looks at it.
 * Once it held it holds for the rest of the wait, without asking cond again:
 * a sleeper that saw it hold reports a wake-up and the wait looks once more,
 * and a condition that found something once (a mismatch report, say) need
 * not find it twice. */
struct gated {
    gas_rt_cond_fn cond;
    void *arg;
    int refused;
    int held;
};

static int gated_cond(void *a)
{
    struct gated *g = a;
    if (g->held || g->cond(g->arg))
        return g->held = 1;
    g->refused = gas_rt_gate_refuses();
    return g->refused;
}

gas_status_t gas_rt_wait_explained(gas_rt_cond_fn cond, void *arg, const void *watch,
                                   const char *call, const char *what,
                                   gas_rt_explain_fn explain, void *explain_arg)
{
    if (cond(arg))
        return GAS_OK;
    if (explaining)
        return GAS_ERR_TIMEOUT;   /* inside an explainer: past the deadline, raise nothing */
    int asked = 0;
    struct gated g = {cond, arg, 0, 0};
    struct wait_explainer outer = explainer;
    explainer.fn = explain;
    explainer.arg = explain_arg;
    gas_status_t st = wait_slow(gated_cond, &g, watch, call, what, &asked);
    explainer = outer;
    if (st == GAS_OK && g.refused)   /* raised inside the call: gas_finalize waits for it */
        st = gas_rt_error(GAS_ERR_NOT_INIT, call,
                          "gas_finalize was called by another thread of this rank while this "
                          "call waited for %s; nothing more was done", what);
    void (*done)(void) = atomic_load_explicit(&sleeper_done, memory_order_relaxed);
    if (asked && done)
        done();
    return st;
}

gas_status_t gas_rt_wait(gas_rt_cond_fn cond, void *arg, const void *watch, const char *call,
                         const char *what)
{
    return gas_rt_wait_explained(cond, arg, watch, call, what, NULL, NULL);
}
