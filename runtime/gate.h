/*
 * gate.h - the API gate: calls that other threads may make while one thread
 * runs gas_finalize.
 *
 * Every API call that touches the segment, the transports or the gas/
 * layer's tables runs between gas_rt_gate_enter and gas_rt_gate_leave.
 * gas_finalize, once its barrier has completed and before it releases
 * anything, calls gas_rt_gate_close: from then on gas_rt_gate_enter refuses
 * (the call must return GAS_ERR_NOT_INIT and touch nothing), a thread that
 * waits inside a call (gas_rt_wait) is woken and its wait returns
 * GAS_ERR_NOT_INIT, and close returns once every thread has been seen
 * outside the gate.  So a call that overlaps gas_finalize either completes
 * as usual or fails with GAS_ERR_NOT_INIT, and never touches unmapped
 * memory.
 *
 * The entry costs no atomic read-modify-write: a per-thread depth counter
 * (plain store) and a load of the gate word.  The store-load ordering
 * against the closing thread comes from its membarrier
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED: every thread of the process passes a
 * full fence), the userspace-RCU pairing the allocator's gate uses too
 * (alloc/arena.c, "entry and close"); where the kernel refuses membarrier,
 * the entry takes a fence instead (GAS_RT_GATE_FENCE).
 */
#ifndef GAS_RT_GATE_H
#define GAS_RT_GATE_H

#include <stdatomic.h>
#include <stddef.h>

struct gas_rt_gate_thr {
    struct gas_rt_gate_thr *next;
    _Atomic int inside;       /* calls of this thread under way (they nest) */
    int seen_out;             /* close: seen outside since it began (under the list lock) */
};

#define GAS_RT_GATE_CLOSED 1  /* gas_finalize closed it: enter refuses */
#define GAS_RT_GATE_FENCE 2   /* no membarrier: enter fences */

extern _Thread_local struct gas_rt_gate_thr *gas_rt_gate_self
    __attribute__((tls_model("initial-exec")));
extern _Atomic int gas_rt_gate;

struct gas_rt_gate_thr *gas_rt_gate_enter_slow(struct gas_rt_gate_thr *t);

/*
 * Enter an API call: this thread's record (pass it to gas_rt_gate_leave), or
 * NULL when the call must be refused: the gate is closed (gas_finalize has
 * begun to release the rank's resources, or has returned), or no record
 * could be made for this thread (no memory).  gas_rt_gate_refusal() tells
 * which.
 */
static inline struct gas_rt_gate_thr *gas_rt_gate_enter(void)
{
    struct gas_rt_gate_thr *t = gas_rt_gate_self;
    if (__builtin_expect(t == NULL, 0))
        return gas_rt_gate_enter_slow(NULL);
    int depth = atomic_load_explicit(&t->inside, memory_order_relaxed);
    atomic_store_explicit(&t->inside, depth + 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&gas_rt_gate, memory_order_relaxed) != 0, 0))
        return gas_rt_gate_enter_slow(t);
    return t;
}

/* Leave what gas_rt_gate_enter entered (t from it, not NULL). */
static inline void gas_rt_gate_leave(struct gas_rt_gate_thr *t)
{
    int depth = atomic_load_explicit(&t->inside, memory_order_relaxed);
    atomic_store_explicit(&t->inside, depth - 1, memory_order_release);
}

/*
 * Whether this thread is inside a call and the gate has closed: its wait
 * must end with GAS_ERR_NOT_INIT (gas_rt_wait checks it).  Threads outside
 * every call (gas_finalize's own, udp's progress thread) are never refused.
 */
static inline int gas_rt_gate_refuses(void)
{
    struct gas_rt_gate_thr *t = gas_rt_gate_self;
    return t != NULL && atomic_load_explicit(&t->inside, memory_order_relaxed) > 0 &&
           (atomic_load_explicit(&gas_rt_gate, memory_order_acquire) & GAS_RT_GATE_CLOSED);
}

/* Why gas_rt_gate_enter refused this thread's call. */
enum gas_rt_gate_why {
    GAS_RT_GATE_NOMEM,        /* no memory for its record (the gate is open) */
    GAS_RT_GATE_OTHER_THREAD, /* closed by gas_finalize in another thread */
    GAS_RT_GATE_THIS_THREAD,  /* closed by this thread's gas_finalize */
};
enum gas_rt_gate_why gas_rt_gate_refusal(void);

/*
 * Register (once per process) for the expedited private membarrier that
 * this gate's and the allocator's closes rely on: 1 when the kernel grants
 * it, 0 where it (or a seccomp filter) refuses, and entries must fence.
 */
int gas_rt_membarrier_setup(void);
/* Make every thread of the process pass a full fence (the membarrier, or a
 * fence of this thread's where `fenced`, or the call fails). */
void gas_rt_membarrier(int fenced);

/* gas_init: set up the membarrier the close relies on (once per process). */
void gas_rt_gate_setup(void);

/*
 * gas_finalize: close the gate, wake the threads that wait inside calls
 * (gas_rt_wait_wake_all), and return once every thread has been seen
 * outside.  Not called from inside a call.  The gate stays closed for the
 * life of the process (libgas cannot be initialised again).
 */
void gas_rt_gate_close(void);

#endif
