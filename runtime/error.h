/*
 * error.h - raising API errors.
 *
 * gas_rt_error() formats "rank R: CALL: cause", keeps it for gas_last_error(),
 * logs it, and then either returns `status` (GAS_ERRORS=return) or aborts the
 * job (GAS_ERRORS=abort).  Call it once, where the error is first understood;
 * callers above only propagate the status.
 */
#ifndef GAS_RT_ERROR_H
#define GAS_RT_ERROR_H

#include <gas.h>

gas_status_t gas_rt_error_at(const char *file, int line, gas_status_t status, const char *call,
                            const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define gas_rt_error(status, call, ...) \
    gas_rt_error_at(__FILE__, __LINE__, (status), (call), __VA_ARGS__)

/* Set the policy from the loaded configuration (1: abort, 0: return). */
void gas_rt_error_set_abort(int abort_on_error);

/* The abort path: report, tell the launcher, exit.  Used by gas_abort(). */
void gas_rt_abort(int code, const char *msg) __attribute__((noreturn));

/* Installed by init: how to ask the launcher to end the job. */
extern void (*gas_rt_abort_hook)(int code, const char *msg);

#endif
