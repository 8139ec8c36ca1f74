/*
 * wait.h - waiting without burning a core: spin briefly, then sleep in the kernel.
 *
 * A doorbell is two words that live in shared memory (each rank has one in
 * its segment header).  A waiter that is about to sleep registers itself in
 * `sleepers` and sleeps on `seq` (a process-shared futex).  Anyone who makes
 * a change the waiter may be waiting for calls gas_rt_doorbell_ring() after
 * the change; it costs one load unless somebody sleeps.
 */
#ifndef GAS_RT_WAIT_H
#define GAS_RT_WAIT_H

#include <gas.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct gas_rt_doorbell {
    _Atomic uint32_t seq;
    _Atomic uint32_t sleepers;
} gas_rt_doorbell_t;

void gas_rt_doorbell_wake(gas_rt_doorbell_t *db);

/* Make every earlier store visible, then wake sleepers of db, if any. */
static inline void gas_rt_doorbell_ring(gas_rt_doorbell_t *db)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&db->sleepers, memory_order_relaxed) != 0)
        gas_rt_doorbell_wake(db);
}

/* A condition to wait for: returns nonzero when satisfied. */
typedef int (*gas_rt_cond_fn)(void *arg);

/*
 * Wait until cond(arg) holds, driving gas_rt_progress() meanwhile and sleeping
 * on this rank's doorbell once the spin budget is spent.  `call` and `what`
 * name the operation for stall warnings and timeout errors (e.g. "gas_barrier",
 * "round 2 signal from rank 3").  Returns GAS_OK or GAS_ERR_TIMEOUT (after
 * GAS_TIMEOUT; raised through gas_rt_error).
 */
gas_status_t gas_rt_wait(gas_rt_cond_fn cond, void *arg, const char *call, const char *what);

/* Configure waits: this rank's doorbell and the spin budget in ns. */
void gas_rt_wait_setup(gas_rt_doorbell_t *own, uint64_t spin_ns, uint64_t timeout_ns,
                       uint64_t stall_warn_ns);

/* Progress hooks that waits drive (transports register theirs at init). */
typedef int (*gas_rt_progress_fn)(void);
int gas_rt_progress_register(gas_rt_progress_fn fn);
void gas_rt_progress_reset(void);
int gas_rt_progress(void);

#endif
