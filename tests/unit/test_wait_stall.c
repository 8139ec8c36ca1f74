/*
 * test_wait_stall - a wait does not count time its process was stopped
 * against GAS_TIMEOUT (runtime/wait.c, struct wait_clock).
 *
 * A child process waits (gas_rt_wait, 1 s timeout, 1 ms sleep slice) on a
 * flag in a shared mapping.  The parent stops it with SIGSTOP once it has
 * looked at its condition a few times, keeps it stopped 3 s (three
 * timeouts), resumes it, and sets the flag 100 ms later:
 *  - a plain wait, and the second wait of a call (gas_rt_call_begin
 *    bracket: the stall is forgiven on the call's deadline), stopped each,
 *    return GAS_OK: before the fix the first look
 *    at the clock after the resume found the deadline passed and failed;
 *  - a wait on a flag nobody sets, stopped 3 s, still fails with
 *    GAS_ERR_TIMEOUT, within 3 s + one timeout + slack (the stall is
 *    forgiven, not the timeout).
 * The child reports each outcome and its wall time through the mapping.
 */
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/wait.h"
#include "unit.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT_NS 1000000000ull
#define SLICE_NS 1000000ull
#define STOP_S 3

struct shared {
    _Atomic int flag;      /* the condition waited for */
    _Atomic int looks;     /* how often the child looked */
    _Atomic int status;    /* the wait's result, once it returned */
    _Atomic int done;
    double wall_s;         /* how long the wait took */
};

static struct shared *sh;

static int flag_set(void *arg)
{
    (void)arg;
    atomic_fetch_add(&sh->looks, 1);
    return atomic_load(&sh->flag) != 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int after_five(void *arg)
{
    return ++*(int *)arg >= 5;
}

/* The child: one wait, the second of a call when in_call, its result in sh. */
static void child(int in_call)
{
    gas_rt_error_set_abort(0);
    gas_rt_wait_setup(NULL, NULL, 0, 0, TIMEOUT_NS, 0);
    gas_rt_wait_set_slice(SLICE_NS);
    int began = 0;
    if (in_call) {   /* the call's first wait, which starts its deadline, ends after a few looks */
        began = gas_rt_call_begin();
        int n = 0;
        gas_rt_wait(after_five, &n, NULL, "test_wait_stall", "five looks");
    }
    uint64_t t0 = gas_rt_now_ns();
    gas_status_t st = gas_rt_wait(flag_set, NULL, NULL, "test_wait_stall", "the flag");
    sh->wall_s = (double)(gas_rt_now_ns() - t0) / 1e9;
    if (in_call)
        gas_rt_call_end(began);
    atomic_store(&sh->status, (int)st);
    atomic_store(&sh->done, 1);
    _exit(0);
}

/* Run one child wait, stop it STOP_S seconds, resume it, set the flag
 * (unless never) 100 ms later; its status and wall time. */
static gas_status_t stopped_wait(const char *what, int in_call, int never, double *wall)
{
    memset((void *)sh, 0, sizeof *sh);
    pid_t pid = fork();
    if (pid == 0)
        child(in_call);
    UCHECK(pid > 0, "%s: fork failed", what);
    if (pid < 0)
        return GAS_ERR_INTERNAL;
    for (int i = 0; i < 5000 && atomic_load(&sh->looks) < 20; i++)
        sleep_ms(1);
    kill(pid, SIGSTOP);
    sleep_ms(STOP_S * 1000L);
    kill(pid, SIGCONT);
    if (!never) {
        sleep_ms(100);
        atomic_store(&sh->flag, 1);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
    UCHECK(WIFEXITED(wst) && atomic_load(&sh->done), "%s: the child did not finish its wait", what);
    *wall = sh->wall_s;
    return (gas_status_t)atomic_load(&sh->status);
}

int main(void)
{
    sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    double wall = 0;
    gas_status_t st = stopped_wait("a plain wait", 0, 0, &wall);
    UCHECK(st == GAS_OK, "a wait stopped %d s (timeout 1 s) and satisfied 100 ms after the resume "
           "returned %d after %.2f s, want GAS_OK", STOP_S, (int)st, wall);
    st = stopped_wait("a wait in a call", 1, 0, &wall);
    UCHECK(st == GAS_OK, "a wait in a call stopped %d s and satisfied 100 ms after the resume "
           "returned %d after %.2f s, want GAS_OK", STOP_S, (int)st, wall);
    st = stopped_wait("a wait for nothing", 0, 1, &wall);
    UCHECK(st == GAS_ERR_TIMEOUT, "a wait stopped %d s for a flag nobody sets returned %d, want "
           "GAS_ERR_TIMEOUT", STOP_S, (int)st);
    UCHECK(wall >= STOP_S && wall < STOP_S + 1.0 + 2.0, "a wait stopped %d s for nothing took "
           "%.2f s, want %d s + about one 1 s timeout", STOP_S, wall, STOP_S);
    munmap(sh, sizeof *sh);
    return unit_finish("test_wait_stall");
}
