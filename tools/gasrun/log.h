/* log.h - gasrun's own messages: one whole "gasrun: ..." line per write(2) on stderr. */
#ifndef GR_LOG_H
#define GR_LOG_H

extern int gr_verbose;

void gr_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Logged only with --verbose; the arguments are not evaluated otherwise. */
#define gr_info(...) do { if (gr_verbose) gr_msg(__VA_ARGS__); } while (0)

/* "SIGSEGV", or "signal 40" for signals without a name; buf holds >= 16 bytes. */
const char *gr_signame(int sig, char *buf);

#endif
