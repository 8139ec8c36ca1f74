/*
 * wait.h - waiting without burning a core: spin briefly, then sleep in the kernel.
 *
 * A doorbell lives in shared memory (each rank has one in its segment
 * header).  A waiter about to sleep counts itself in `sleepers`, publishes in
 * `watch` the segment offset of the word it waits on, and sleeps on `seq` (a
 * process-shared futex).  A writer calls gas_rt_doorbell_ring() with the range
 * it changed: one load when nobody sleeps, and a wake-up (a system call) only
 * when the range covers the watched word (or the watch is unknown/any).  So a
 * stream of puts into a rank asleep in a barrier does not wake it per put.
 */
#ifndef GAS_RT_WAIT_H
#define GAS_RT_WAIT_H

#include <gas.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gas_rt_doorbell {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleepers;
    _Atomic uint64_t watch;   /* offset watched, or one of the two values below */
    /* Waiters asleep in a socket rather than on seq (counted in sleepers
     * too), and where an empty datagram wakes them: IPv4 address and port in
     * network order, port 0 when the owner has no such socket. */
    _Atomic uint32_t sock_sleepers;
    _Atomic uint32_t nudge_ip;
    _Atomic uint32_t nudge_port;
} gas_rt_doorbell_t;

#define GAS_RT_WATCH_UNKNOWN 0ull       /* nobody registered yet: wake on anything */
#define GAS_RT_WATCH_ANY UINT64_MAX     /* waiters on several words or on non-segment memory */

/*
 * Wake db's sleepers: the futex ones, and those asleep in a socket (an empty
 * datagram to the owner's nudge address).
 */
void gas_rt_doorbell_wake(gas_rt_doorbell_t *db);

/*
 * The owner of db sleeps in a socket bound to ip:port (network order) at
 * times: writers may wake it there with an empty datagram.  port 0: never.
 */
void gas_rt_doorbell_set_nudge(gas_rt_doorbell_t *db, uint32_t ip, uint16_t port);

/*
 * How this process sends the empty datagram to ip:port (network order): the
 * udp transport installs a sender on its own socket; NULL removes it (then
 * socket sleepers of other ranks are not woken by our writes before their
 * slice ends).
 */
typedef void (*gas_rt_nudge_fn)(uint32_t ip, uint16_t port);
void gas_rt_doorbell_set_nudger(gas_rt_nudge_fn fn);

/*
 * For a transport's sleeper that sleeps in its socket (not on the futex) but
 * whose condition reads segment words other ranks write: join this rank's
 * doorbell as a socket sleeper watching `watch` (as gas_rt_wait's) before
 * the last look at the condition, and leave it after the sleep.  A writer
 * whose ring covers the word then sends the socket an empty datagram.
 */
void gas_rt_doorbell_join(const void *watch);
void gas_rt_doorbell_leave(void);

/*
 * gas_rt_wait's watch for a condition on several words of this rank's
 * segment (a collective's flags): any write into the segment may satisfy it.
 * NULL is for memory outside the segment (completion counters), which only
 * this process's threads change.
 */
extern const char gas_rt_watch_segment_tag;
#define GAS_RT_WATCH_SEGMENT ((const void *)&gas_rt_watch_segment_tag)

static inline int gas_rt_watch_in(uint64_t w, uint64_t off, uint64_t len)
{
    return w >= off && w - off < len;
}

/*
 * Make every earlier store visible, then wake sleepers of db whose watched
 * word may lie in [off, off + len) or [off2, off2 + len2) of the doorbell
 * owner's segment (len2 may be 0).  One fence and one check for both ranges,
 * so a put-with-signal pays for one ring, not two.
 */
static inline void gas_rt_doorbell_ring2(gas_rt_doorbell_t *db, uint64_t off, uint64_t len,
                                         uint64_t off2, uint64_t len2)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&db->sleepers, memory_order_relaxed) == 0)
        return;
    uint64_t w = atomic_load_explicit(&db->watch, memory_order_relaxed);
    if (w == GAS_RT_WATCH_UNKNOWN || w == GAS_RT_WATCH_ANY || gas_rt_watch_in(w, off, len) ||
        gas_rt_watch_in(w, off2, len2))
        gas_rt_doorbell_wake(db);
}

/* As gas_rt_doorbell_ring2 for one range. */
static inline void gas_rt_doorbell_ring(gas_rt_doorbell_t *db, uint64_t off, uint64_t len)
{
    gas_rt_doorbell_ring2(db, off, len, 0, 0);
}

/* A condition to wait for: returns nonzero when satisfied. */
typedef int (*gas_rt_cond_fn)(void *arg);

/*
 * Wait until cond(arg) holds, driving gas_rt_progress() meanwhile and sleeping
 * on this rank's doorbell once it has spun the spin budget without progress
 * (a hook that did work restarts the budget); each wake-up that does not
 * satisfy cond is followed by another such spin.  `watch` is the local
 * address of the word cond reads when it lies in this rank's segment (so only
 * writes to it wake the sleeper), GAS_RT_WATCH_SEGMENT for several segment
 * words, or NULL for memory outside the segment (woken by any write too).  `call`
 * and `what` name the operation for stall warnings and timeout errors (e.g.
 * "gas_barrier", "round 2 signal from rank 3").  Returns GAS_OK,
 * GAS_ERR_TIMEOUT (after GAS_TIMEOUT, counted from the start of the call's
 * first wait inside a gas_rt_call_begin bracket; raised through gas_rt_error),
 * or GAS_ERR_NOT_INIT (raised) when the thread waits inside an API call and
 * gas_finalize closes the gate meanwhile (gate.h: it is woken for that).
 */
gas_status_t gas_rt_wait(gas_rt_cond_fn cond, void *arg, const void *watch, const char *call,
                         const char *what);

/*
 * A wait's explainer: when the wait times out, it writes into buf (cap
 * bytes, "" for nothing found) what keeps the wait from ending, which the
 * timeout error then gives first ("rank 5 has not entered ...", then the
 * wait's own `what`).  It runs on the waiting thread after the deadline:
 * a wait inside it does not wait (past its first look at its condition it
 * returns GAS_ERR_TIMEOUT without raising), so it must bound its own
 * polling (gas_rt_progress) and raise nothing.
 */
typedef void (*gas_rt_explain_fn)(void *arg, char *buf, size_t cap);

/* gas_rt_wait, whose timeout error is explained by explain(explain_arg) (waits
 * nested in cond are not). */
gas_status_t gas_rt_wait_explained(gas_rt_cond_fn cond, void *arg, const void *watch,
                                   const char *call, const char *what,
                                   gas_rt_explain_fn explain, void *explain_arg);

/*
 * One deadline per API call.  A call that may wait more than once (a get
 * that waits for room to send its pieces and then for their answers, a
 * strided transfer, an atomic, a quiet over several transports, a
 * barrier's rounds) brackets its body with began = gas_rt_call_begin() and
 * gas_rt_call_end(began): every gas_rt_wait in between (in the transports
 * too) times out GAS_TIMEOUT after the first of them began waiting, not
 * after its own start, so the whole call returns within one GAS_TIMEOUT of
 * waiting (but for waits that step out with gas_rt_call_suspend).  Brackets
 * are per thread and nest (the outermost counts).  No clock is read unless a
 * wait in the bracket has to wait.
 */
int gas_rt_call_begin(void);
void gas_rt_call_end(int began);

/*
 * Step out of this thread's bracket for a wait that must have a deadline of
 * its own even inside a call whose deadline has passed (a failed
 * collective's wait for the end of the puts into its buffers, which must
 * not be freed before); gas_rt_call_resume puts the bracket back as it was.
 */
struct gas_rt_call_saved {
    int open;
    uint64_t wait_start, forgiven;
};
struct gas_rt_call_saved gas_rt_call_suspend(void);
void gas_rt_call_resume(struct gas_rt_call_saved saved);

/*
 * How a wait sleeps once its spin budget is spent.  By default on this rank's
 * doorbell (futex).  A transport may install a sleeper that is asked first:
 * it gets the wait's condition, the word it watches (NULL: memory outside the
 * segment, such as a completion counter; GAS_RT_WATCH_SEGMENT: several
 * segment words) and the longest sleep, and returns
 * nonzero when it slept (returning early when cond(arg) may have changed), or
 * 0 to let the wait sleep on the doorbell.  udp uses it to let one waiting
 * thread at a time sleep in its socket (the datagram that answers or
 * satisfies it then wakes it directly); with GAS_PROGRESS=poll, where only the
 * rank's own calls serve its traffic, that thread serves the socket for the
 * rest of its wait while the others sleep on the doorbell.  A sleeper whose
 * condition reads segment words joins the doorbell (gas_rt_doorbell_join),
 * so that node-local writers wake it too.  NULL removes it.
 */
typedef int (*gas_rt_sleep_fn)(gas_rt_cond_fn cond, void *arg, const void *watch,
                               uint64_t max_ns);
/*
 * Install the sleeper, and `done` (may be NULL), which a wait that asked the
 * sleeper calls in its thread when it ends, however it ends (but for
 * GAS_ERRORS=abort): udp's poll mode hands the socket on then.
 */
void gas_rt_wait_set_sleeper(gas_rt_sleep_fn fn, void (*done)(void));

/*
 * A function that wakes every waiter asleep in a transport (udp: the one in
 * its socket), for gas_rt_wait_wake_all; NULL removes it.
 */
void gas_rt_wait_set_waker(void (*wake)(void));

/*
 * Wake every thread of this rank that sleeps in a wait (the doorbell's
 * sleepers and the transport's, through the waker), so that each looks at
 * its condition again: gas_finalize's gate close (gate.h) uses it.
 */
void gas_rt_wait_wake_all(void);

/*
 * For a sleeper: sleep on this rank's doorbell as a wait does (watch as
 * gas_rt_wait's), at most slice_ns, unless cond(arg) holds once counted
 * there.  Returns 0 when the whole slice passed unwoken, else 1.
 */
int gas_rt_doorbell_sleep(gas_rt_cond_fn cond, void *arg, const void *watch, uint64_t slice_ns);

/*
 * Configure waits: this rank's doorbell and segment (to turn watched addresses
 * into offsets), the spin budget, the deadline and the stall warning, in ns.
 */
void gas_rt_wait_setup(gas_rt_doorbell_t *own, const char *seg_base, uint64_t seg_size,
                       uint64_t spin_ns, uint64_t timeout_ns, uint64_t stall_warn_ns);

/* How long a wait spins before it sleeps (0 on an oversubscribed node). */
uint64_t gas_rt_wait_spin_ns(void);
/* Change it (gas_init, once it knows every rank that shares this one's CPUs). */
void gas_rt_wait_set_spin(uint64_t spin_ns);

/* The longest sleep before a wait looks again (GAS_WAIT_SLICE; 0: 2 ms). */
void gas_rt_wait_set_slice(uint64_t slice_ns);

/*
 * Calls that finish without waiting (puts, gets and atomics on this node's
 * memory, a quiet or fence with nothing outstanding) tick.  Where no thread
 * serves the transports (udp's GAS_PROGRESS=poll sets gas_rt_tick_on), a
 * tick drives gas_rt_progress() once 50 us have passed since it last did,
 * so a rank that spins through such calls on its own memory (a lock word it
 * owns) still answers its peers.  One relaxed load otherwise.
 */
extern _Atomic int gas_rt_tick_on;
void gas_rt_tick_slow(void);
static inline void gas_rt_tick(void)
{
    if (__builtin_expect(atomic_load_explicit(&gas_rt_tick_on, memory_order_relaxed), 0))
        gas_rt_tick_slow();
}

/*
 * Progress hooks that waits drive.  A transport's hook only moves traffic
 * already issued (GAS_RT_HOOK_POLL); the collective engine's issues new
 * operations (GAS_RT_HOOK_ISSUES).  A thread that waits while holding a
 * transport lock that operations take (rdma's route lock) brackets that
 * span with gas_rt_progress_hold/unhold: gas_rt_progress() on that thread
 * then runs only the polling hooks, so no operation enters that lock again
 * from inside the wait.  The issuing hooks run at the thread's next
 * progress call outside the span.  The holds nest and are per thread.
 */
typedef int (*gas_rt_progress_fn)(void);
enum gas_rt_hook_kind { GAS_RT_HOOK_POLL, GAS_RT_HOOK_ISSUES };
int gas_rt_progress_register(gas_rt_progress_fn fn, enum gas_rt_hook_kind kind);
void gas_rt_progress_reset(void);
int gas_rt_progress(void);

/*
 * A polling call (gas_test, gas_progress, gas_test_until_*) found nothing
 * done: where waits do not spin (GAS_WAIT_SPIN 0, as gas_init sets it when
 * the rank's CPUs are oversubscribed) give the CPU away once (sched_yield),
 * so a program's polling loop does not eat the time slices of the peers it
 * polls for.  Elsewhere it does nothing.
 */
void gas_rt_poll_idle(void);
void gas_rt_progress_hold(void);
void gas_rt_progress_unhold(void);

#endif
