/*
 * log.h - levelled logging with rank and subsystem prefixes.
 *
 * The macros test the level before evaluating their arguments, keep errno
 * intact, and print "[gas rN] subsys file:line: message" in one write.
 */
#ifndef GAS_RT_LOG_H
#define GAS_RT_LOG_H

#include <stddef.h>
#include <stdint.h>

enum gas_rt_log_level {
    GAS_LOG_FATAL, GAS_LOG_ERROR, GAS_LOG_WARN, GAS_LOG_INFO, GAS_LOG_DEBUG, GAS_LOG_TRACE
};

extern int gas_rt_log_level_;  /* current level; set from GAS_LOG_LEVEL */
extern int gas_rt_log_rank_;   /* rank for the prefix, -1 before init */

void gas_rt_log_emit(int level, const char *subsys, const char *file, int line,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define gas_log(level, subsys, ...)                                              \
    do {                                                                         \
        if ((level) <= gas_rt_log_level_)                                        \
            gas_rt_log_emit((level), (subsys), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

#define gas_log_error(subsys, ...) gas_log(GAS_LOG_ERROR, subsys, __VA_ARGS__)
#define gas_log_warn(subsys, ...)  gas_log(GAS_LOG_WARN, subsys, __VA_ARGS__)
#define gas_log_info(subsys, ...)  gas_log(GAS_LOG_INFO, subsys, __VA_ARGS__)
#define gas_log_debug(subsys, ...) gas_log(GAS_LOG_DEBUG, subsys, __VA_ARGS__)

/* "12.0 GiB" style sizes for messages (powers of 1024). */
void gas_rt_format_bytes(char *buf, size_t cap, uint64_t n);

/* Log at most once per call site for the life of the process. */
#define gas_log_warn_once(subsys, ...)                                           \
    do {                                                                         \
        static int gas_once_;                                                    \
        if (!__atomic_exchange_n(&gas_once_, 1, __ATOMIC_RELAXED))               \
            gas_log(GAS_LOG_WARN, subsys, __VA_ARGS__);                          \
    } while (0)

/*
 * Log at most once per interval_ns per call site (for events a peer or a
 * stranger can cause at any rate); each line says how many were held back.
 */
struct gas_rt_ratelimit {
    uint64_t next_ns;
    uint64_t held;
};
/* 1 when a line may go out now (*held_p: lines held back since the last one). */
int gas_rt_ratelimit_pass(struct gas_rt_ratelimit *rl, uint64_t interval_ns, uint64_t *held_p);

#define gas_log_warn_ratelimited(subsys, interval_ns, fmt, ...)                              \
    do {                                                                                 \
        static struct gas_rt_ratelimit gas_rl_;                                          \
        uint64_t gas_held_;                                                              \
        if (GAS_LOG_WARN <= gas_rt_log_level_ &&                                         \
            gas_rt_ratelimit_pass(&gas_rl_, (interval_ns), &gas_held_)) {                \
            if (gas_held_)                                                               \
                gas_rt_log_emit(GAS_LOG_WARN, (subsys), __FILE__, __LINE__,              \
                                fmt " (and %llu like it since the last such line)",      \
                                __VA_ARGS__, (unsigned long long)gas_held_);             \
            else                                                                         \
                gas_rt_log_emit(GAS_LOG_WARN, (subsys), __FILE__, __LINE__, fmt,         \
                                __VA_ARGS__);                                            \
        }                                                                                \
    } while (0)

#endif
