/* clock.h - the monotonic clock in nanoseconds. */
#ifndef GAS_RT_CLOCK_H
#define GAS_RT_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t gas_rt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void gas_rt_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}
#endif
