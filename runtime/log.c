/* log.c - formatting and output of log lines (see log.h). */
#include "log.h"
#include "clock.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int gas_rt_log_level_ = GAS_LOG_WARN;
int gas_rt_log_rank_ = -1;

static const char *const level_names[] = {"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};

void gas_rt_log_emit(int level, const char *subsys, const char *file, int line,
                     const char *fmt, ...)
{
    int saved = errno;
    char buf[1024];
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int n;
    if (gas_rt_log_rank_ >= 0)
        n = snprintf(buf, sizeof buf, "[gas r%d] %s %s %s:%d: ", gas_rt_log_rank_,
                     level_names[level], subsys, base, line);
    else
        n = snprintf(buf, sizeof buf, "[gas] %s %s %s:%d: ", level_names[level], subsys,
                     base, line);
    if (n < 0 || (size_t)n >= sizeof buf)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, len);
    (void)w;
    errno = saved;
}

int gas_rt_ratelimit_pass(struct gas_rt_ratelimit *rl, uint64_t interval_ns, uint64_t *held_p)
{
    uint64_t now = gas_rt_now_ns();
    uint64_t next = __atomic_load_n(&rl->next_ns, __ATOMIC_RELAXED);
    if (now < next ||
        !__atomic_compare_exchange_n(&rl->next_ns, &next, now + interval_ns, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&rl->held, 1, __ATOMIC_RELAXED);
        return 0;
    }
    *held_p = __atomic_exchange_n(&rl->held, 0, __ATOMIC_RELAXED);
    return 1;
}

void gas_rt_format_bytes(char *buf, size_t cap, uint64_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}
