/* log.c - gasrun's own messages (see log.h). */
#include "log.h"
#include "gasrun.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int gr_verbose;

void gr_msg(const char *fmt, ...)
{
    int saved = errno;
    char line[4096];
    int n = snprintf(line, sizeof line, "gasrun: ");
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    struct iovec iov = { .iov_base = line, .iov_len = len };
    gr_sink_writev(STDERR_FILENO, &iov, 1); /* in order with the ranks' stderr */
    errno = saved;
}

const char *gr_signame(int sig, char *buf)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev != NULL)
        snprintf(buf, 16, "SIG%s", abbrev);
    else
        snprintf(buf, 16, "signal %d", sig);
    return buf;
}
