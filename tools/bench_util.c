/*
 * bench_util.c - gas-bench's helpers: errors, the clock, data patterns,
 * statistics over batches, sizes and lists.
 */
#include "gas-bench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE_LIMIT (4 * GiB)         /* --max-size cap */
#define FULL_CHECK_BYTES (64 * KiB)   /* larger buffers are checked by sampling */
#define SAMPLE_POINTS 4096

void bench_die(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gas-bench: rank %d: %s\n", gas_rank(), msg);
    if (gas_initialized())
        gas_abort(2, "gas-bench failed");
    exit(2);
}

void bench_check(gas_status_t s, const char *call)
{
    if (s != GAS_OK)
        bench_die("%s: %s (%s)", call, gas_strerror(s), gas_last_error());
}

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

uint64_t bench_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static unsigned char pattern_at(uint64_t seed, size_t i)
{
    return (unsigned char)(bench_mix64(seed + i / 8) >> (8 * (i % 8)));
}

void bench_fill_pattern(unsigned char *buf, size_t size, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w = bench_mix64(seed + i / 8);
        for (int k = 0; k < 8; k++)
            buf[i + k] = (unsigned char)(w >> (8 * k));
    }
    for (; i < size; i++)
        buf[i] = pattern_at(seed, i);
}

uint64_t bench_check_pattern(const unsigned char *buf, size_t size, uint64_t seed)
{
    uint64_t bad = 0;
    if (size <= FULL_CHECK_BYTES) {
        for (size_t i = 0; i < size; i++)
            bad += buf[i] != pattern_at(seed, i);
        return bad;
    }
    /* both ends, then SAMPLE_POINTS spread over the middle at random offsets */
    for (size_t i = 0; i < 64; i++) {
        bad += buf[i] != pattern_at(seed, i);
        bad += buf[size - 1 - i] != pattern_at(seed, size - 1 - i);
    }
    size_t stride = size / SAMPLE_POINTS;
    for (size_t k = 0; k < SAMPLE_POINTS; k++) {
        size_t i = k * stride + (size_t)(bench_mix64(seed ^ k) % stride);
        bad += buf[i] != pattern_at(seed, i);
    }
    return bad;
}

gas_ptr_t bench_ctl_slot(const struct bench *b, int rank, int which)
{
    gas_ptr_t p;
    bench_check(gas_ptr_index(b->ctl, sizeof(uint64_t), 2 * (uint64_t)rank + (uint64_t)which, &p),
                "gas_ptr_index");
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return sorted[n - 1];
    return sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]);
}

struct stats bench_summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (struct stats){ percentile(v, n, 0.5), percentile(v, n, 0.1), percentile(v, n, 0.9) };
}

int bench_parse_size(const char *s, size_t *size_p)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    unsigned long long mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = KiB; end++; break;
    case 'm': case 'M': mult = MiB; end++; break;
    case 'g': case 'G': mult = GiB; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || v == 0 || v > SIZE_LIMIT / mult)
        return -1;
    *size_p = (size_t)(v * mult);
    return 0;
}

const char *bench_size_str(size_t size, char *buf, size_t len)
{
    if (size >= GiB && size % GiB == 0)
        snprintf(buf, len, "%zuG", size / GiB);
    else if (size >= MiB && size % MiB == 0)
        snprintf(buf, len, "%zuM", size / MiB);
    else if (size >= KiB && size % KiB == 0)
        snprintf(buf, len, "%zuK", size / KiB);
    else
        snprintf(buf, len, "%zu", size);
    return buf;
}

int bench_in_list(const char *list, const char *word, size_t len)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (n == len && strncmp(p, word, len) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}
