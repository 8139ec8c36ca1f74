/* error.c - API error reporting and the abort path (see error.h). */
#include "error.h"
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <unistd.h>

static _Thread_local char last_error[800];
static int abort_policy = -1; /* -1: not configured yet, read GAS_ERRORS directly */

void (*gas_rt_abort_hook)(int code, const char *msg);

void gas_rt_error_set_abort(int abort_on_error)
{
    abort_policy = abort_on_error;
}

static int should_abort(void)
{
    if (abort_policy >= 0)
        return abort_policy;
    const char *e = getenv("GAS_ERRORS");
    return !(e && strcasecmp(e, "return") == 0);
}

GAS_EXPORT const char *gas_last_error(void)
{
    return last_error;
}

gas_status_t gas_rt_error_at(const char *file, int line, gas_status_t status, const char *call,
                            const char *fmt, ...)
{
    char cause[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cause, sizeof cause, fmt, ap);
    va_end(ap);
    if (gas_rt_log_rank_ >= 0)
        snprintf(last_error, sizeof last_error, "rank %d: %s: %s", gas_rt_log_rank_, call, cause);
    else
        snprintf(last_error, sizeof last_error, "%s: %s", call, cause);
    if (should_abort())
        gas_rt_abort(1, last_error);
    if (GAS_LOG_ERROR <= gas_rt_log_level_)
        gas_rt_log_emit(GAS_LOG_ERROR, "api", file, line, "%s: %s [%s]", call, cause,
                        gas_strerror(status));
    return status;
}

/*
 * The exit status of an abort with `code`: its low 8 bits (all that an exit
 * status holds), or 1 where those are 0, so that an abort never reads as
 * success (gas_abort(256) would otherwise exit 0); gasrun maps an ABORT's
 * code the same way.
 */
static int exit_status(int code)
{
    return code & 0xff ? code & 0xff : 1;
}

/*
 * One abort per process: threads that fail at once (or call gas_abort
 * together) would interleave their messages to gasrun on the boot socket,
 * which then read text as the exit code.  The first one reports and exits;
 * the others wait for its _exit.  A nested abort in that thread exits.
 */
void gas_rt_abort(int code, const char *msg)
{
    static _Atomic int aborting;
    static _Thread_local int this_thread;
    if (atomic_exchange(&aborting, 1)) {
        if (this_thread)
            _exit(exit_status(code));
        for (;;)
            pause();
    }
    this_thread = 1;
    fflush(stdout);
    fflush(stderr);
    /* The line first: once the hook has told gasrun, gasrun may kill this process. */
    char buf[900];
    int n = gas_rt_log_rank_ >= 0
                ? snprintf(buf, sizeof buf, "[gas r%d] job aborted: %s\n", gas_rt_log_rank_,
                           msg ? msg : "")
                : snprintf(buf, sizeof buf, "[gas] job aborted: %s\n", msg ? msg : "");
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf);
        (void)w;
    }
    if (gas_rt_abort_hook)
        gas_rt_abort_hook(code, msg);
    _exit(exit_status(code));
}
