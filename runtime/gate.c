/* gate.c - the API gate's records, slow paths and close (see gate.h). */
#include "gate.h"
#include "clock.h"
#include "wait.h"

#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REWAKE_NS 1000000ull   /* close: wake the waiters again this often */

_Thread_local struct gas_rt_gate_thr *gas_rt_gate_self __attribute__((tls_model("initial-exec")));
_Atomic int gas_rt_gate;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gas_rt_gate_thr *threads;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t exit_key;
static _Thread_local int closer;   /* this thread closed the gate */

/* A thread's exit: unlink and free its record (it is outside every call). */
static void thread_gone(void *arg)
{
    struct gas_rt_gate_thr *t = arg;
    pthread_mutex_lock(&list_lock);
    for (struct gas_rt_gate_thr **pp = &threads; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    pthread_mutex_unlock(&list_lock);
    gas_rt_gate_self = NULL;
    free(t);
}

static void make_key(void)
{
    if (pthread_key_create(&exit_key, thread_gone) != 0)
        exit_key = (pthread_key_t)-1;
}

/* This thread's record, made and linked on its first call; NULL: no memory. */
static struct gas_rt_gate_thr *thr_register(void)
{
    pthread_once(&key_once, make_key);
    struct gas_rt_gate_thr *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    pthread_mutex_lock(&list_lock);
    t->next = threads;
    threads = t;
    pthread_mutex_unlock(&list_lock);
    if (exit_key != (pthread_key_t)-1)
        pthread_setspecific(exit_key, t);   /* else the record stays until the process ends */
    gas_rt_gate_self = t;
    return t;
}

/*
 * gas_rt_gate_enter's rare cases: this thread has no record yet (made here,
 * unless the gate is closed), the gate is closed, or there is no membarrier
 * and the ordering takes a fence here.  On refusal the depth is back to what
 * it was.
 */
struct gas_rt_gate_thr *gas_rt_gate_enter_slow(struct gas_rt_gate_thr *t)
{
    if (t == NULL) {   /* no record is made for a call that is refused anyway */
        if ((atomic_load(&gas_rt_gate) & GAS_RT_GATE_CLOSED) || (t = thr_register()) == NULL)
            return NULL;
        atomic_store_explicit(&t->inside, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    }
    int gate = atomic_load_explicit(&gas_rt_gate, memory_order_relaxed);
    if (gate & GAS_RT_GATE_FENCE) {
        atomic_thread_fence(memory_order_seq_cst);
        gate = atomic_load_explicit(&gas_rt_gate, memory_order_relaxed);
    }
    if (!(gate & GAS_RT_GATE_CLOSED))
        return t;
    gas_rt_gate_leave(t);
    return NULL;
}

enum gas_rt_gate_why gas_rt_gate_refusal(void)
{
    if (!(atomic_load(&gas_rt_gate) & GAS_RT_GATE_CLOSED))
        return GAS_RT_GATE_NOMEM;
    return closer ? GAS_RT_GATE_THIS_THREAD : GAS_RT_GATE_OTHER_THREAD;
}

static pthread_once_t mb_once = PTHREAD_ONCE_INIT;
static int mb_ok;

static void membarrier_register(void)
{
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    mb_ok = cmds >= 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
            syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

int gas_rt_membarrier_setup(void)
{
    pthread_once(&mb_once, membarrier_register);
    return mb_ok;
}

void gas_rt_membarrier(int fenced)
{
    if (fenced || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        atomic_thread_fence(memory_order_seq_cst);
}

void gas_rt_gate_setup(void)
{
    if (!gas_rt_membarrier_setup())
        atomic_fetch_or(&gas_rt_gate, GAS_RT_GATE_FENCE);
}

/* One look at every record: 1 while a thread not yet seen outside is inside a call. */
static int any_inside(void)
{
    int waiting = 0;
    pthread_mutex_lock(&list_lock);
    for (struct gas_rt_gate_thr *t = threads; t; t = t->next) {
        if (!t->seen_out && atomic_load_explicit(&t->inside, memory_order_acquire) > 0)
            waiting = 1;
        else
            t->seen_out = 1;
    }
    pthread_mutex_unlock(&list_lock);
    return waiting;
}

/*
 * Each thread needs to be seen outside once: after the membarrier, a thread
 * outside cannot come back in.  The scan does not hold the list lock while
 * it waits (a thread that exits meanwhile needs it).
 */
void gas_rt_gate_close(void)
{
    closer = 1;
    int gate = atomic_fetch_or(&gas_rt_gate, GAS_RT_GATE_CLOSED);
    gas_rt_membarrier(gate & GAS_RT_GATE_FENCE);
    pthread_mutex_lock(&list_lock);
    for (struct gas_rt_gate_thr *t = threads; t; t = t->next)
        t->seen_out = 0;
    pthread_mutex_unlock(&list_lock);
    uint64_t woke = 0;
    while (any_inside()) {
        uint64_t now = gas_rt_now_ns();
        if (now - woke >= REWAKE_NS) {
            gas_rt_wait_wake_all();
            woke = now;
        }
        sched_yield();
    }
}
