/*
 * check.h - small helpers shared by the multi-rank conformance tests.
 *
 * Each test is one program: it calls test_begin(), records failures with
 * CHECK()/CHECK_OK()/CHECK_STATUS()/check_bytes() (which report and count but
 * never leave the function, so every rank keeps taking part in the collectives),
 * and returns test_end() from main: 0 when this rank saw no failure, else 1.
 * A failure that makes going on pointless (an allocation failed) calls
 * test_die(), which aborts the whole job through gas_abort().
 *
 * Determinism: every random choice comes from a xorshift generator seeded
 * from test_seed (GAS_TEST_SEED, default 1), the rank and a stream number;
 * the seed is printed so that a failing run can be repeated.
 */
#ifndef GAS_TESTS_MR_CHECK_H
#define GAS_TESTS_MR_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gas.h"

#define TEST_MAX_REPORTS 20  /* mismatch lines printed per rank before going quiet */

static const char *test_name = "?";
static int t_rank = -1;          /* this rank, valid after test_begin() */
static int t_nranks = 0;         /* job size, valid after test_begin() */
static uint64_t test_seed = 1;
static long t_failures = 0;      /* failures seen by this rank */
static long t_reports = 0;       /* lines printed about them */
static struct timespec t_start;

/* ------------------------------------------------------------------------ */
/* Reporting                                                                 */
/* ------------------------------------------------------------------------ */

static inline double test_elapsed(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t_start.tv_sec) + (double)(now.tv_nsec - t_start.tv_nsec) * 1e-9;
}

__attribute__((format(printf, 1, 2)))
static inline void test_note(const char *fmt, ...)
{
    va_list ap;
    char line[512];
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    printf("[%s rank %d] %s\n", test_name, t_rank, line);
    fflush(stdout);
}

/* Print one failure line unless this rank has printed too many already. */
static inline void test_report_v_(const char *file, int line, const char *fmt, va_list ap)
{
    char msg[768];
    if (t_reports >= TEST_MAX_REPORTS)
        return;
    t_reports++;
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "[%s rank %d/%d] FAIL %s:%d: %s\n", test_name, t_rank, t_nranks, file, line, msg);
    if (t_reports == TEST_MAX_REPORTS)
        fprintf(stderr, "[%s rank %d/%d] (further failures counted, not printed)\n",
                test_name, t_rank, t_nranks);
    fflush(stderr);
}

__attribute__((format(printf, 3, 4)))
static inline void test_report_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    test_report_v_(file, line, fmt, ap);
    va_end(ap);
}

/* Count one failure and report it. */
__attribute__((format(printf, 3, 4)))
static inline void test_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    t_failures++;
    va_start(ap, fmt);
    test_report_v_(file, line, fmt, ap);
    va_end(ap);
}

#define FAIL(...) test_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* CHECK(cond, "fmt", ...): record a failure with the message when cond is false. */
#define CHECK(cond, ...) ((cond) ? 1 : (test_fail_at(__FILE__, __LINE__, __VA_ARGS__), 0))

static inline int check_status_at(const char *file, int line, const char *call,
                                  gas_status_t got, gas_status_t want)
{
    if (got == want)
        return 1;
    test_fail_at(file, line, "%s returned %d (%s), expected %d (%s); last error: \"%s\"", call,
                 (int)got, gas_strerror(got), (int)want, gas_strerror(want), gas_last_error());
    return 0;
}

/* Evaluate a gas call once; 1 if it returned `want`, else record a failure and 0. */
#define CHECK_STATUS(call, want) check_status_at(__FILE__, __LINE__, #call, (call), (want))
#define CHECK_OK(call) CHECK_STATUS(call, GAS_OK)

/* Give up on the whole job (used when going on makes no sense). */
static inline void test_die_at(const char *file, int line, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "[%s rank %d] FATAL %s:%d: %s (last error: \"%s\")", test_name,
             t_rank, file, line, what, gas_last_error());
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    fflush(stdout);
    if (gas_initialized())
        gas_abort(2, msg);
    exit(2);
}
#define test_die(what) test_die_at(__FILE__, __LINE__, (what))

/* Run a gas call that must succeed for the test to go on. */
#define MUST(call)                                                              \
    do {                                                                        \
        if (!CHECK_OK(call))                                                    \
            test_die_at(__FILE__, __LINE__, "required call failed: " #call);    \
    } while (0)

/*
 * Compare n bytes; report the first few mismatching offsets (base_index + i)
 * with expected and actual values.  Returns the number of mismatching bytes.
 */
static inline size_t check_bytes_at(const char *file, int line, const char *what,
                                    const void *got, const void *want, size_t n,
                                    uint64_t base_index)
{
    const uint8_t *g = got, *w = want;
    size_t bad = 0;
    if (memcmp(got, want, n) == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (g[i] == w[i])
            continue;
        if (bad < 4)
            test_report_at(file, line, "%s: byte %" PRIu64 ": expected 0x%02x got 0x%02x", what,
                           base_index + i, w[i], g[i]);
        bad++;
    }
    t_failures++;
    if (bad > 4)
        test_report_at(file, line, "%s: %zu of %zu bytes differ", what, bad, n);
    return bad;
}
#define check_bytes(what, got, want, n, base) \
    check_bytes_at(__FILE__, __LINE__, (what), (got), (want), (n), (base))

/* ------------------------------------------------------------------------ */
/* Random numbers and patterns                                               */
/* ------------------------------------------------------------------------ */

typedef struct test_rng {
    uint64_t s;
} test_rng_t;

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A generator for (test_seed, rank, stream): the same on every run with that seed. */
static inline test_rng_t rng_make(int rank, uint64_t stream)
{
    test_rng_t r;
    r.s = mix64(test_seed * 0x9e3779b97f4a7c15ull + mix64((uint64_t)(uint32_t)rank + 1) +
                mix64(stream + 0x1234567ull));
    if (r.s == 0)
        r.s = 0x2545f4914f6cdd1dull;
    return r;
}

/* xorshift64* */
static inline uint64_t rng_next(test_rng_t *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n) (n > 0; the tiny modulo bias does not matter here). */
static inline uint64_t rng_below(test_rng_t *r, uint64_t n)
{
    return rng_next(r) % n;
}

/* Uniform in [lo, hi]. */
static inline uint64_t rng_range(test_rng_t *r, uint64_t lo, uint64_t hi)
{
    return lo + rng_below(r, hi - lo + 1);
}

/*
 * The byte that `writer` stores at position `index` of what it sends to
 * `target` (either may be any tag the test chooses: a rank, a round, a
 * flavour).  Cheap: one mix per 8 bytes, see pattern_fill().
 */
static inline uint64_t pattern_word_(int writer, int target, uint64_t word)
{
    return mix64(word * 0x9e3779b97f4a7c15ull ^ ((uint64_t)(uint32_t)writer << 40) ^
                 ((uint64_t)(uint32_t)target << 20) ^ test_seed * 0xd6e8feb86659fd93ull);
}

static inline uint8_t pattern_byte(int writer, int target, uint64_t index)
{
    return (uint8_t)(pattern_word_(writer, target, index >> 3) >> (8 * (index & 7)));
}

/* buf[i] = pattern_byte(writer, target, start + i) for i < n. */
static inline void pattern_fill(void *buf, size_t n, int writer, int target, uint64_t start)
{
    uint8_t *b = buf;
    size_t i = 0;
    while (i < n && ((start + i) & 7) != 0) {
        b[i] = pattern_byte(writer, target, start + i);
        i++;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t w = pattern_word_(writer, target, (start + i) >> 3);
        memcpy(b + i, &w, 8); /* little-endian: byte k of w is index start+i+k */
    }
    for (; i < n; i++)
        b[i] = pattern_byte(writer, target, start + i);
}

/* Index of the first byte where buf differs from the pattern, or n if none. */
static inline size_t pattern_find_mismatch(const void *buf, size_t n, int writer, int target,
                                           uint64_t start)
{
    const uint8_t *b = buf;
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern_byte(writer, target, start + i))
            return i;
    return n;
}

/*
 * Check buf against the pattern; report the first few mismatches naming what,
 * the offset (report_base + i), expected and actual.  Returns mismatches.
 */
static inline size_t check_pattern_at(const char *file, int line, const char *what,
                                      const void *buf, size_t n, int writer, int target,
                                      uint64_t start, uint64_t report_base)
{
    enum { CHUNK = 65536 };
    static uint8_t want[CHUNK];
    size_t bad = 0;
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t len = n - off < CHUNK ? n - off : CHUNK;
        pattern_fill(want, len, writer, target, start + off);
        if (memcmp(want, (const uint8_t *)buf + off, len) != 0)
            bad += check_bytes_at(file, line, what, (const uint8_t *)buf + off, want, len,
                                  report_base + off);
    }
    return bad;
}
#define check_pattern(what, buf, n, writer, target, start, report_base) \
    check_pattern_at(__FILE__, __LINE__, (what), (buf), (n), (writer), (target), (start), (report_base))

/* ------------------------------------------------------------------------ */
/* Start and end                                                             */
/* ------------------------------------------------------------------------ */

static inline void *test_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        test_die("out of process memory");
    return p;
}

/*
 * Errors are checked by the tests, so they run with GAS_ERRORS=return unless
 * the caller set something else (the runner exports it too).
 */
static inline void test_begin(const char *name)
{
    const char *s;
    test_name = name;
    clock_gettime(CLOCK_MONOTONIC, &t_start);
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("GAS_ERRORS", "return", 0);
    s = getenv("GAS_TEST_SEED");
    if (s && *s)
        test_seed = strtoull(s, NULL, 0);
    gas_status_t st = gas_init();
    if (st != GAS_OK) {
        fprintf(stderr, "[%s] FATAL gas_init returned %d (%s): %s\n", name, (int)st,
                gas_strerror(st), gas_last_error());
        exit(2);
    }
    t_rank = gas_rank();
    t_nranks = gas_nranks();
    if (t_rank == 0)
        test_note("starting with %d rank(s), seed %" PRIu64, t_nranks, test_seed);
}

/* This rank's exit status, said in a line (secs: how long the test ran). */
static inline int test_result(double secs)
{
    if (t_failures) {
        fprintf(stderr, "[%s rank %d/%d] FAILED: %ld failure(s), seed %" PRIu64 "\n", test_name,
                t_rank, t_nranks, t_failures, test_seed);
        return 1;
    }
    if (t_rank == 0)
        test_note("passed in %.2f s", secs);
    return 0;
}

/* Collective: finalize and return the exit status of this rank. */
static inline int test_end(void)
{
    double secs = test_elapsed();
    CHECK_OK(gas_finalize());
    return test_result(secs);
}

/*
 * Whether rank `peer` is reached over rdma, where writes into a peer's
 * unclaimed memory land unchecked (docs/memory.md): then rank 0 says the
 * test is skipped, and the caller finalizes and returns 77.
 */
static inline int test_peer_unchecked(int peer)
{
    gas_peer_stats_t ps;
    MUST(gas_peer_stats(peer, &ps));
    if (strcmp(ps.transport, "rdma") != 0)
        return 0;
    if (t_rank == 0)
        test_note("skipped: rdma writes into unclaimed memory unchecked (docs/memory.md)");
    return 1;
}

/* The local address of p, which this rank owns (NULL is fatal: its own part must map). */
static inline void *test_local_of(gas_ptr_t p)
{
    void *l = gas_ptr_local(p);
    if (l == NULL)
        test_die("gas_ptr_local of my own part is NULL");
    return l;
}

/* The layout of an array (a failure is fatal: nothing else can be checked). */
static inline gas_layout_t test_layout_of(gas_ptr_t p)
{
    gas_layout_t l;
    memset(&l, 0, sizeof l);
    MUST(gas_layout(p, &l));
    return l;
}

/* Pointer to byte i of the array at `array` (through gas_ptr_add, checked). */
static inline gas_ptr_t test_at(gas_ptr_t array, uint64_t i)
{
    gas_ptr_t p = GAS_NULL;
    MUST(gas_ptr_add(array, i, &p));
    return p;
}

#endif /* GAS_TESTS_MR_CHECK_H */
