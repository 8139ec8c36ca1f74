/*
 * gas-bench - libgas latency and bandwidth, next to references measured in
 * the same run.
 *
 *   gasrun -n 2 gas-bench [--mode LIST|all] [--min-size S] [--max-size S]
 *                         [--reps N] [--warmup N] [--window N] [--batch-ms MS]
 *                         [--quick] [--csv]
 *
 * Rank 0 drives and prints; rank 1 is the target of every transfer; further
 * ranks only take part in barriers (and in the barrier mode).  With one rank,
 * rank 0 is its own target and the header says so.
 *
 * Every point (mode, size) runs in batches.  The iterations per batch are
 * calibrated until a batch lasts about --batch-ms, one more batch (or
 * --warmup iterations) warms up, then --reps batches are timed; a row gives
 * the median and the p10/p90 (linear interpolation) over those batches.
 *
 * References, measured first by rank 0 in its own process:
 *  - memcpy bandwidth between two private page-aligned buffers, per size:
 *    bandwidth rows print their percentage of it;
 *  - the round trip of one 64-byte cache line bounced between rank 0 and a
 *    forked child process (not a rank) through a MAP_SHARED page, the floor
 *    of any shared-memory round trip: latency rows print their multiple of it.
 *    It is measured again after the results, and a drift is reported: on a
 *    virtual machine the vCPUs' state can change in mid-run.
 *
 * Data is checked, so a broken path cannot report a good number: the target
 * checks in place a sample of what the puts left in its segment, get
 * destinations are poisoned before every batch and checked after it, and
 * every value a fetching atomic returns is checked.  Any failure is reported
 * and makes the exit status 1.
 *
 * To add a mode, write its batch function (and hooks) and add a row to
 * `modes` below; the driver does calibration, statistics, checks and output.
 */
#include <gas.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

#define LAT_MAX_SIZE_DEFAULT (64 * KiB)
#define BW_MAX_SIZE_DEFAULT (64 * MiB)
#define SIZE_LIMIT (4 * GiB)         /* --max-size cap */
#define MAX_ITERS (UINT64_C(1) << 26) /* per batch */
#define MAX_REPS 1000
#define FULL_CHECK_BYTES (64 * KiB)   /* larger buffers are checked by sampling */
#define SAMPLE_POINTS 4096
#define POISON 0xa5
#define PINGPONG_STOP UINT64_MAX
#define PINGPONG_TIMEOUT_S 5.0

#include "gas-bench.h"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                 */
/* ---------------------------------------------------------------------- */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
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

static void check(gas_status_t s, const char *call)
{
    if (s != GAS_OK)
        die("%s: %s (%s)", call, gas_strerror(s), gas_last_error());
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The pattern: 8-byte word w of a buffer holds mix64(seed + w), little-endian. */
static unsigned char pattern_at(uint64_t seed, size_t i)
{
    return (unsigned char)(mix64(seed + i / 8) >> (8 * (i % 8)));
}

static void fill_pattern(unsigned char *buf, size_t size, uint64_t seed)
{
    size_t i = 0;
    for (; i + 8 <= size; i += 8) {
        uint64_t w = mix64(seed + i / 8);
        for (int k = 0; k < 8; k++)
            buf[i + k] = (unsigned char)(w >> (8 * k));
    }
    for (; i < size; i++)
        buf[i] = pattern_at(seed, i);
}

/* Mismatches in buf: every byte up to FULL_CHECK_BYTES, else a sample. */
static uint64_t check_pattern(const unsigned char *buf, size_t size, uint64_t seed)
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
        size_t i = k * stride + (size_t)(mix64(seed ^ k) % stride);
        bad += buf[i] != pattern_at(seed, i);
    }
    return bad;
}

static gas_ptr_t ctl_slot(const struct bench *b, int rank, int which)
{
    gas_ptr_t p;
    check(gas_ptr_index(b->ctl, sizeof(uint64_t), 2 * (uint64_t)rank + (uint64_t)which, &p),
          "gas_ptr_index");
    return p;
}

/* Every rank gets rank 0's value (collective). */
static uint64_t agree_u64(struct bench *b, uint64_t value)
{
    if (b->rank == 0)
        for (int r = 0; r < b->nranks; r++)
            check(gas_put(ctl_slot(b, r, 0), &value, sizeof value), "gas_put");
    check(gas_barrier(), "gas_barrier");
    value = __atomic_load_n((uint64_t *)gas_ptr_local(ctl_slot(b, b->rank, 0)), __ATOMIC_ACQUIRE);
    check(gas_barrier(), "gas_barrier"); /* nobody overwrites it before all have read */
    return value;
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

static struct stats summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return (struct stats){ percentile(v, n, 0.5), percentile(v, n, 0.1), percentile(v, n, 0.9) };
}

static int parse_size(const char *s, size_t *size_p)
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

static const char *size_str(size_t size, char *buf, size_t len)
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

/* ---------------------------------------------------------------------- */
/* References (rank 0 alone)                                               */
/* ---------------------------------------------------------------------- */

static uint64_t memcpy_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->dst, b->src, size);
        __asm__ __volatile__("" ::: "memory"); /* keep every copy */
    }
    return 0;
}

/* The child: answer every odd value with the next even one, until told to stop. */
static void pingpong_child(volatile uint64_t *line, pid_t parent, unsigned yield_mask)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    for (unsigned spins = 0;; spins++) {
        uint64_t v = __atomic_load_n(line, __ATOMIC_ACQUIRE);
        if (v == PINGPONG_STOP)
            _exit(0);
        if (v & 1) {
            __atomic_store_n(line, v + 1, __ATOMIC_RELEASE);
            spins = 0;
        } else if ((spins & yield_mask) == yield_mask) {
            sched_yield(); /* lets a single CPU make progress */
        }
    }
}

/*
 * Fork the child.  With two CPUs or more, rank 0 and the child are pinned to
 * two different ones (spinning on one CPU would measure the scheduler);
 * pingpong_stop() gives rank 0 its CPUs back.
 */
static void pingpong_setup(struct bench *b, size_t size)
{
    if (b->pp_line == NULL) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
            die("mmap of the ping-pong page: %s", strerror(errno));
        b->pp_line = page; /* page-aligned, so the word owns its 64-byte line */
    }
    if (b->pp_child > 0)
        return;
    *b->pp_line = 0;
    b->pp_seq = 0;
    b->pp_cpu[0] = b->pp_cpu[1] = -1;
    cpu_set_t one;
    if (sched_getaffinity(0, sizeof b->pp_saved, &b->pp_saved) == 0 &&
        CPU_COUNT(&b->pp_saved) >= 2) {
        int here = sched_getcpu();
        b->pp_cpu[0] = here >= 0 && CPU_ISSET(here, &b->pp_saved) ? here : -1;
        for (int c = 0; c < CPU_SETSIZE && b->pp_cpu[1] < 0; c++) {
            if (!CPU_ISSET(c, &b->pp_saved) || c == b->pp_cpu[0])
                continue;
            if (b->pp_cpu[0] < 0)
                b->pp_cpu[0] = c;
            else
                b->pp_cpu[1] = c;
        }
        CPU_ZERO(&one);
        CPU_SET(b->pp_cpu[0], &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    b->pp_yield_mask = b->pp_cpu[1] >= 0 ? 4095 : 15;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        die("fork for the ping-pong reference: %s", strerror(errno));
    if (pid == 0) {
        if (b->pp_cpu[1] >= 0) {
            CPU_ZERO(&one);
            CPU_SET(b->pp_cpu[1], &one);
            sched_setaffinity(0, sizeof one, &one);
        }
        pingpong_child(b->pp_line, parent, b->pp_yield_mask);
    }
    b->pp_child = pid;
}

static void pingpong_stop(struct bench *b)
{
    if (b->pp_child <= 0)
        return;
    __atomic_store_n(b->pp_line, PINGPONG_STOP, __ATOMIC_RELEASE);
    waitpid(b->pp_child, NULL, 0);
    b->pp_child = 0;
    if (b->pp_cpu[0] >= 0)
        sched_setaffinity(0, sizeof b->pp_saved, &b->pp_saved);
}

static uint64_t pingpong_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t v = b->pp_seq + 1;
        double waiting_since = 0;
        __atomic_store_n(b->pp_line, v, __ATOMIC_RELEASE);
        for (unsigned spins = 1; __atomic_load_n(b->pp_line, __ATOMIC_ACQUIRE) != v + 1; spins++) {
            if ((spins & b->pp_yield_mask) == 0)
                sched_yield();
            if ((spins & 0xfffff) == 0) {
                if (waiting_since == 0)
                    waiting_since = now_s();
                else if (now_s() - waiting_since > PINGPONG_TIMEOUT_S)
                    die("the ping-pong child stopped answering");
            }
        }
        b->pp_seq = v + 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Modes                                                                   */
/* ---------------------------------------------------------------------- */

static void fill_src(struct bench *b, size_t size)
{
    fill_pattern(b->src, size, b->seed);
}

static void poison_dst(struct bench *b, size_t size)
{
    memset(b->dst, POISON, size);
}

static uint64_t verify_dst(struct bench *b, size_t size)
{
    return check_pattern(b->dst, size, b->seed);
}

static uint64_t put_lat_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        check(gas_put(b->tgt, b->src, size), "gas_put");
        check(gas_quiet(), "gas_quiet");
    }
    return 0;
}

static uint64_t get_lat_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        check(gas_get(b->dst, b->tgt, size), "gas_get");
    return 0;
}

/* Back-pressure (GAS_ERR_AGAIN) is not an error for a stream: drain, retry. */
static void nbi_retry(gas_status_t s, const char *call, struct bench *b, size_t size, int put)
{
    while (s == GAS_ERR_AGAIN) {
        check(gas_quiet(), "gas_quiet");
        s = put ? gas_put_nbi(b->tgt, b->src, size) : gas_get_nbi(b->dst, b->tgt, size);
    }
    check(s, call);
}

static uint64_t put_bw_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        nbi_retry(gas_put_nbi(b->tgt, b->src, size), "gas_put_nbi", b, size, 1);
        if ((i + 1) % b->opt.window == 0)
            check(gas_quiet(), "gas_quiet");
    }
    check(gas_quiet(), "gas_quiet");
    return 0;
}

static uint64_t get_bw_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        nbi_retry(gas_get_nbi(b->dst, b->tgt, size), "gas_get_nbi", b, size, 0);
        if ((i + 1) % b->opt.window == 0)
            check(gas_quiet(), "gas_quiet");
    }
    check(gas_quiet(), "gas_quiet");
    return 0;
}

static void amo_setup(struct bench *b, size_t size)
{
    b->amo_next = 0; /* the target zeroed the word */
}

static uint64_t amo_fadd_batch(struct bench *b, size_t size, uint64_t iters)
{
    uint64_t bad = 0, old;
    for (uint64_t i = 0; i < iters; i++) {
        check(gas_atomic_fetch_add_u64(b->tgt, 1, &old), "gas_atomic_fetch_add_u64");
        bad += old != b->amo_next;
        b->amo_next = old + 1;
    }
    return bad;
}

static uint64_t amo_cswap_batch(struct bench *b, size_t size, uint64_t iters)
{
    uint64_t bad = 0, old;
    for (uint64_t i = 0; i < iters; i++) {
        check(gas_atomic_cswap_u64(b->tgt, b->amo_next, b->amo_next + 1, &old),
              "gas_atomic_cswap_u64");
        bad += old != b->amo_next;
        b->amo_next = old + 1;
    }
    return bad;
}

/* The word must hold exactly what the atomics counted. */
static uint64_t amo_verify(struct bench *b, size_t size)
{
    uint64_t v;
    check(gas_atomic_fetch_u64(b->tgt, &v), "gas_atomic_fetch_u64");
    return v != b->amo_next;
}

static uint64_t barrier_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        check(gas_barrier(), "gas_barrier");
    return 0;
}

static const struct mode base_modes[] = {
    { .name = "pingpong", .group = "ref", .kind = KIND_LAT, .fixed_size = 64, .reference = 1,
      .setup = pingpong_setup, .batch = pingpong_batch,
      .doc = "reference: 64-byte cache-line round trip with a forked child (MAP_SHARED)" },
    { .name = "memcpy", .group = "ref", .kind = KIND_BW, .sized = 1, .reference = 1,
      .setup = fill_src, .batch = memcpy_batch,
      .doc = "reference: memcpy between two private buffers of rank 0" },
    { .name = "put-lat", .group = "put-lat", .kind = KIND_LAT, .sized = 1, .prep = PREP_POISON,
      .setup = fill_src, .batch = put_lat_batch,
      .doc = "blocking gas_put + gas_quiet, one at a time" },
    { .name = "get-lat", .group = "get-lat", .kind = KIND_LAT, .sized = 1, .prep = PREP_FILL,
      .before = poison_dst, .batch = get_lat_batch, .verify = verify_dst,
      .doc = "blocking gas_get, one at a time" },
    { .name = "put-bw", .group = "put-bw", .kind = KIND_BW, .sized = 1, .prep = PREP_POISON,
      .setup = fill_src, .batch = put_bw_batch,
      .doc = "a stream of gas_put_nbi, gas_quiet every --window" },
    { .name = "get-bw", .group = "get-bw", .kind = KIND_BW, .sized = 1, .prep = PREP_FILL,
      .before = poison_dst, .batch = get_bw_batch, .verify = verify_dst,
      .doc = "a stream of gas_get_nbi, gas_quiet every --window" },
    { .name = "amo-fadd", .group = "amo-lat", .kind = KIND_LAT, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_fadd_batch, .verify = amo_verify,
      .doc = "gas_atomic_fetch_add_u64, one at a time" },
    { .name = "amo-cswap", .group = "amo-lat", .kind = KIND_LAT, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_cswap_batch, .verify = amo_verify,
      .doc = "gas_atomic_cswap_u64 (always succeeding), one at a time" },
    { .name = "barrier", .group = "barrier", .kind = KIND_LAT, .fixed_size = 0, .collective = 1,
      .batch = barrier_batch, .doc = "gas_barrier with all ranks" },
};
#define NBASE (sizeof base_modes / sizeof base_modes[0])

/* base_modes, then the collective modes (built at start-up) */
static struct mode *modes;
static size_t nmodes;
#define NMODES nmodes

/* ---------------------------------------------------------------------- */
/* Driver                                                                  */
/* ---------------------------------------------------------------------- */

static size_t mode_min(const struct bench *b, const struct mode *m)
{
    if (!m->sized)
        return m->fixed_size;
    return b->opt.min_size ? b->opt.min_size : m->def_min ? m->def_min : 1;
}

static size_t mode_max(const struct bench *b, const struct mode *m)
{
    if (!m->sized)
        return m->fixed_size;
    if (b->opt.max_size)
        return b->opt.max_size;
    if (m->def_max)
        return m->def_max;
    return m->kind == KIND_BW ? BW_MAX_SIZE_DEFAULT : LAT_MAX_SIZE_DEFAULT;
}

static double timed_batch(struct bench *b, const struct mode *m, size_t size, uint64_t iters,
                          uint64_t *errors)
{
    if (m->before && b->rank == 0)
        m->before(b, size);
    double t0 = now_s();
    *errors += m->batch(b, size, iters);
    double t = now_s() - t0;
    if (m->verify && b->rank == 0)
        *errors += m->verify(b, size);
    return t;
}

/*
 * Calibrate, warm up and time one point; fills samples (per-op latency in
 * microseconds or bandwidth in MB/s) on rank 0.  Collective for collective
 * modes, else rank 0 alone.
 */
static uint64_t measure(struct bench *b, const struct mode *m, size_t size, double *samples)
{
    uint64_t errors = 0, iters = 1;
    b->cur = m;
    if (m->setup && b->rank == 0)
        m->setup(b, size);
    for (;;) {
        double t = timed_batch(b, m, size, iters, &errors);
        uint64_t next = 0;
        if (t < b->opt.batch_s / 2 && iters < MAX_ITERS) {
            double grow = t > 0 ? b->opt.batch_s / t : 64;
            grow = grow < 2 ? 2 : grow > 64 ? 64 : grow;
            next = (uint64_t)((double)iters * grow);
            next = next > MAX_ITERS ? MAX_ITERS : next;
        }
        if (m->collective)
            next = agree_u64(b, next);
        if (next == 0)
            break;
        iters = next;
    }
    uint64_t warm = b->opt.warmup >= 0 ? (uint64_t)b->opt.warmup : iters;
    if (warm > 0)
        timed_batch(b, m, size, warm, &errors);
    for (int r = 0; r < b->opt.reps; r++) {
        double t = timed_batch(b, m, size, iters, &errors);
        t = t > 1e-9 ? t : 1e-9;
        samples[r] = m->kind == KIND_LAT ? t / (double)iters * 1e6
                                         : (double)size * (double)iters / t / 1e6;
    }
    return errors;
}

uint64_t bench_measure(struct bench *b, const struct mode *m, size_t size, double *samples)
{
    return measure(b, m, size, samples);
}

struct stats bench_summarize(double *v, int n)
{
    return summarize(v, n);
}

void bench_check(gas_status_t s, const char *call)
{
    check(s, call);
}

/* The target prepares its block (collective: everyone passes the barrier). */
static void target_prepare(struct bench *b, const struct mode *m, size_t size)
{
    if (b->rank == b->target && m->prep != PREP_NONE) {
        unsigned char *mine = gas_ptr_local(b->tgt);
        if (m->prep == PREP_POISON)
            memset(mine, POISON, size);
        else if (m->prep == PREP_FILL)
            fill_pattern(mine, size, b->seed);
        else
            __atomic_store_n((uint64_t *)mine, 0, __ATOMIC_RELEASE);
    }
    check(gas_barrier(), "gas_barrier");
}

/* After a point the target checks what the puts left; rank 0 collects. */
static uint64_t target_check(struct bench *b, const struct mode *m, size_t size)
{
    check(gas_barrier(), "gas_barrier");
    if (b->rank == b->target && m->prep == PREP_POISON) {
        uint64_t bad = check_pattern(gas_ptr_local(b->tgt), size, b->seed);
        if (bad)
            check(gas_atomic_add_u64(ctl_slot(b, 0, 1), bad), "gas_atomic_add_u64");
    }
    check(gas_barrier(), "gas_barrier");
    uint64_t bad = 0;
    if (b->rank == 0)
        check(gas_atomic_swap_u64(ctl_slot(b, 0, 1), 0, &bad), "gas_atomic_swap_u64");
    return bad;
}

static void print_row(struct bench *b, const struct mode *m, size_t size, struct stats s)
{
    char sz[32], ref[48] = "-", ratio[32] = "-";
    const char *unit = m->kind == KIND_LAT ? "us" : "MB/s";
    int have = 0;
    double refval = 0, rat = 0;
    if (!m->reference && m->kind == KIND_LAT && b->have_rtt) {
        have = 1;
        refval = b->rtt_us.median;
        rat = s.median / refval;
    } else if (!m->reference && m->kind == KIND_BW) {
        for (size_t i = 0; i < b->nmemcpy; i++)
            if (b->memcpy_size[i] == size) {
                have = 1;
                refval = b->memcpy_mbs[i].median;
                rat = 100.0 * s.median / refval;
            }
    }
    if (m->sized || m->fixed_size)
        size_str(size, sz, sizeof sz);
    else
        strcpy(sz, "-");
    if (b->opt.csv) {
        printf("%s,%zu,%.4f,%.4f,%.4f,%s,", m->name, size, s.median, s.p10, s.p90, unit);
        if (have)
            printf("%.4f,%.4f\n", refval, rat);
        else
            printf(",\n");
    } else {
        if (have && m->kind == KIND_LAT) {
            snprintf(ref, sizeof ref, "rtt %.3f us", refval);
            snprintf(ratio, sizeof ratio, "%.1fx", rat);
        } else if (have) {
            snprintf(ref, sizeof ref, "memcpy %.0f MB/s", refval);
            snprintf(ratio, sizeof ratio, "%.1f%%", rat);
        }
        const char *fmt = m->kind == KIND_LAT ? "%-30s %6s %12.3f %12.3f %12.3f %-5s %-20s %8s\n"
                                              : "%-30s %6s %12.1f %12.1f %12.1f %-5s %-20s %8s\n";
        printf(fmt, m->name, sz, s.median, s.p10, s.p90, unit, ref, ratio);
    }
    fflush(stdout);
}

static void print_table_head(const struct bench *b, const char *title)
{
    if (b->opt.csv)
        return;
    printf("\n%s\n%-30s %6s %12s %12s %12s %-5s %-20s %8s\n", title, "mode", "size", "median",
           "p10", "p90", "unit", "reference", "ratio");
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

static int selected(const struct bench *b, const struct mode *m)
{
    const char *list = b->opt.modes;
    if (m->alg && b->opt.colls &&
        !bench_in_list(b->opt.colls, gas_coll_name(m->coll), strlen(gas_coll_name(m->coll))))
        return 0;
    if (strcmp(list, "all") == 0)
        return 1;
    size_t ng = strlen(m->group), nn = strlen(m->name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if ((len == ng && strncmp(p, m->group, len) == 0) ||
            (len == nn && strncmp(p, m->name, len) == 0))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Unknown names in --mode, or NULL. */
static const char *unknown_mode(const char *list)
{
    static char name[64];
    if (strcmp(list, "all") == 0)
        return NULL;
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        int known = 0;
        for (size_t i = 0; i < NMODES; i++)
            if (!modes[i].reference &&
                ((strlen(modes[i].group) == len && strncmp(p, modes[i].group, len) == 0) ||
                 (strlen(modes[i].name) == len && strncmp(p, modes[i].name, len) == 0)))
                known = 1;
        if (!known) {
            snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), p);
            return name;
        }
        p += len + (p[len] == ',');
    }
    return NULL;
}

/* One point of a measured mode, collective. */
static void run_point(struct bench *b, const struct mode *m, size_t mode_idx, size_t size,
                      double *samples)
{
    b->seed = mix64(((uint64_t)mode_idx << 48) ^ size);
    target_prepare(b, m, size);
    uint64_t errors = 0;
    if (m->collective || b->rank == 0)
        errors += measure(b, m, size, samples);
    errors += target_check(b, m, size);
    if (b->rank == 0) {
        b->points++;
        struct stats st = summarize(samples, b->opt.reps);
        print_row(b, m, size, st);
        if (m->alg)
            bench_coll_record(b, m, size, st.median);
        if (errors) {
            char sz[32];
            fprintf(stderr, "gas-bench: DATA CHECK FAILED: %s size %s: %" PRIu64 " errors\n",
                    m->name, size_str(size, sz, sizeof sz), errors);
            b->errors += errors;
        }
    }
}

/* The references at the top: rank 0 alone, the others wait at a barrier. */
static void run_references(struct bench *b, double *samples)
{
    int want_lat = 0, want_bw = 0;
    size_t bw_min = SIZE_MAX, bw_max = 0;
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(b, m))
            continue;
        want_lat |= m->kind == KIND_LAT;
        if (m->kind == KIND_BW) {
            want_bw = 1;
            bw_min = mode_min(b, m) < bw_min ? mode_min(b, m) : bw_min;
            bw_max = mode_max(b, m) > bw_max ? mode_max(b, m) : bw_max;
        }
    }
    if (b->rank == 0 && (want_lat || want_bw)) {
        print_table_head(b, "references (rank 0 alone):");
        for (size_t i = 0; i < NMODES; i++) {
            const struct mode *m = &modes[i];
            if (!m->reference || (m->kind == KIND_LAT ? !want_lat : !want_bw))
                continue;
            size_t lo = m->sized ? bw_min : m->fixed_size, hi = m->sized ? bw_max : m->fixed_size;
            for (size_t size = lo; size <= hi && b->nmemcpy < 64; size *= 2) {
                b->seed = mix64(size);
                b->errors += measure(b, m, size, samples);
                struct stats s = summarize(samples, b->opt.reps);
                print_row(b, m, size, s);
                if (m->kind == KIND_LAT) {
                    b->rtt_us = s;
                    b->have_rtt = 1;
                    if (b->pp_cpu[1] >= 0)
                        printf("%s  (rank 0 pinned to CPU %d, the child to CPU %d)\n",
                               b->opt.csv ? "#" : "", b->pp_cpu[0], b->pp_cpu[1]);
                    else
                        printf("%s  (one CPU: the round trip includes context switches)\n",
                               b->opt.csv ? "#" : "");
                } else {
                    b->memcpy_size[b->nmemcpy] = size;
                    b->memcpy_mbs[b->nmemcpy++] = s;
                }
                if (size > SIZE_MAX / 2)
                    break;
            }
            pingpong_stop(b);
        }
    }
    check(gas_barrier(), "gas_barrier");
}

/*
 * Measure the ping-pong again after the results: on a shared or virtual
 * machine the CPUs' state can change during a run, and then the ratios mix
 * two machines.  Rank 0 alone; the others wait at the next barrier.
 */
static void recheck_pingpong(struct bench *b, double *samples)
{
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (!m->reference || m->kind != KIND_LAT)
            continue;
        b->errors += measure(b, m, m->fixed_size, samples);
        pingpong_stop(b);
        double end = summarize(samples, b->opt.reps).median, start = b->rtt_us.median;
        int drift = end > 1.5 * start || end < start / 1.5;
        printf("%s%s round trip at the end: %.3f us (start %.3f us)%s\n", b->opt.csv ? "# " : "\n",
               m->name, end, start,
               drift ? ": the machine changed during the run; compare ratios with care" : "");
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gasrun -n 2 gas-bench [options]\n"
            "  --mode LIST      comma-separated modes, or all (default all)\n"
            "  --min-size S     smallest size swept (default 1; k/m/g suffixes)\n"
            "  --max-size S     largest size swept (default 64k for latency, 64m for bandwidth)\n"
            "  --reps N         timed batches per point (default 5)\n"
            "  --warmup N       warm-up iterations per point (default: one batch)\n"
            "  --window N       nbi operations between quiets in bandwidth modes (default 64)\n"
            "  --batch-ms MS    target duration of one batch (default 10)\n"
            "  --quick          short batches (1 ms): a smoke run, not a measurement\n"
            "  --csv            CSV instead of the aligned table (run gasrun with\n"
            "                   --no-tag-output to keep rank tags out of it)\n"
            "  --coll LIST      collectives of the coll-lat/coll-bw modes (default: all),\n"
            "                   e.g. allreduce,broadcast\n"
            "  --tune FILE      measure every collective algorithm at sizes 8 B .. 1 MiB\n"
            "                   on this job and write the best per size to FILE as tuning\n"
            "                   table rows for this number of ranks (rows of FILE for\n"
            "                   other rank counts are kept; format: docs/collectives.md)\n"
            "  --compare        every collective at the sizes --tune measures: each\n"
            "                   algorithm and auto, interleaved; the tuned choice vs the best\n"
            "modes:\n");
    for (size_t i = 0; i < NMODES; i++)
        if (!modes[i].reference)
            fprintf(f, "  %-10s %-10s %s\n", modes[i].group,
                    strcmp(modes[i].group, modes[i].name) ? modes[i].name : "", modes[i].doc);
}

/* Parse argv; returns -1 with a message on error, 1 for --help. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        { "mode", required_argument, NULL, 'm' },
        { "min-size", required_argument, NULL, 'a' },
        { "max-size", required_argument, NULL, 'z' },
        { "reps", required_argument, NULL, 'r' },
        { "warmup", required_argument, NULL, 'w' },
        { "window", required_argument, NULL, 'W' },
        { "batch-ms", required_argument, NULL, 'b' },
        { "quick", no_argument, NULL, 'q' },
        { "csv", no_argument, NULL, 'c' },
        { "coll", required_argument, NULL, 'C' },
        { "tune", required_argument, NULL, 'T' },
        { "compare", no_argument, NULL, 'K' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *o = (struct options){ .modes = "all", .reps = 5, .warmup = -1, .window = 64,
                           .batch_s = 0.010 };
    double batch_ms = 0;
    char *end;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': o->modes = optarg; break;
        case 'a':
        case 'z':
            if (parse_size(optarg, c == 'a' ? &o->min_size : &o->max_size) < 0) {
                snprintf(err, errlen, "bad size '%s' (1 .. 4g, k/m/g suffixes)", optarg);
                return -1;
            }
            break;
        case 'r':
            o->reps = (int)strtol(optarg, &end, 10);
            if (*end || o->reps < 1 || o->reps > MAX_REPS) {
                snprintf(err, errlen, "--reps takes 1 .. %d", MAX_REPS);
                return -1;
            }
            break;
        case 'w':
            o->warmup = strtol(optarg, &end, 10);
            if (*end || o->warmup < 0 || (uint64_t)o->warmup > MAX_ITERS) {
                snprintf(err, errlen, "--warmup takes 0 .. %" PRIu64, MAX_ITERS);
                return -1;
            }
            break;
        case 'W': {
            long w = strtol(optarg, &end, 10);
            if (*end || w < 1 || w > 1 << 20) {
                snprintf(err, errlen, "--window takes 1 .. %d", 1 << 20);
                return -1;
            }
            o->window = (unsigned)w;
            break;
        }
        case 'b':
            batch_ms = strtod(optarg, &end);
            if (*end || !(batch_ms > 0 && batch_ms <= 10000)) {
                snprintf(err, errlen, "--batch-ms takes a number in (0, 10000]");
                return -1;
            }
            break;
        case 'q': o->quick = 1; break;
        case 'c': o->csv = 1; break;
        case 'C': o->colls = optarg; break;
        case 'T': o->tune = optarg; break;
        case 'K': o->compare = 1; break;
        case 'h': return 1;
        default:
            snprintf(err, errlen, "unknown or incomplete option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (o->quick)
        o->batch_s = 0.001;
    if (batch_ms > 0)
        o->batch_s = batch_ms / 1000;
    if (o->min_size && o->max_size && o->min_size > o->max_size) {
        snprintf(err, errlen, "--min-size is above --max-size");
        return -1;
    }
    const char *bad = unknown_mode(o->modes);
    if (bad) {
        snprintf(err, errlen, "unknown mode '%s' (see --help)", bad);
        return -1;
    }
    return 0;
}

static void print_header(const struct bench *b)
{
    char date[64], host[256] = "?";
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %z", localtime(&t));
    gethostname(host, sizeof host - 1);
    cpu_set_t cpus;
    int ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
    const char *transport = getenv("GAS_TRANSPORT");
    transport = transport && *transport ? transport : "auto";
    char who[96];
    if (b->nranks > 1)
        snprintf(who, sizeof who, "rank 0 -> rank 1%s", b->nranks > 2 ? ", others idle" : "");
    else
        snprintf(who, sizeof who, "ONE rank: rank 0 is its own target (loopback)");
    const char *pre = b->opt.csv ? "# " : "";
    printf("%sgas-bench (libgas %s): %d ranks (%s), transport %s, %s\n", pre, GAS_VERSION_STRING,
           b->nranks, who, transport, date);
    printf("%shost %s, %d CPUs; %d timed batches of ~%g ms per point, median and p10/p90 across "
           "batches%s\n", pre, host, ncpu, b->opt.reps, b->opt.batch_s * 1e3,
           b->opt.quick ? " (--quick: NOT a measurement)" : "");
    printf("%sratio: latency rows = multiple of the cache-line round trip (rtt); "
           "bandwidth rows = %% of memcpy at that size\n", pre);
    if (b->opt.csv)
        printf("mode,size,median,p10,p90,unit,reference,ratio\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    struct bench b = { 0 };
    char err[256];

    check(gas_init(), "gas_init");
    b.rank = gas_rank();
    b.nranks = gas_nranks();
    b.target = b.nranks > 1 ? 1 : 0;
    modes = malloc(NBASE * sizeof *modes);
    if (modes == NULL)
        die("out of memory");
    memcpy(modes, base_modes, sizeof base_modes);
    nmodes = NBASE;
    bench_coll_modes(&b, &modes, &nmodes);

    /* Every rank parses the same argv; rank 0 alone speaks. */
    int rc = parse_options(argc, argv, &b.opt, err, sizeof err);
    if (rc != 0) {
        if (b.rank == 0) {
            if (rc < 0)
                fprintf(stderr, "gas-bench: %s\n", err);
            usage(rc < 0 ? stderr : stdout);
        }
        check(gas_finalize(), "gas_finalize");
        return rc < 0 ? 2 : 0;
    }

    /* Room for the largest selected point on every rank, and rank 0's buffers. */
    size_t need = 64, coll_need = 0;
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(&b, m))
            continue;
        if (m->alg)   /* (the references still measure memcpy at their sizes) */
            coll_need = mode_max(&b, m) > coll_need ? mode_max(&b, m) : coll_need;
        need = mode_max(&b, m) > need ? mode_max(&b, m) : need;
    }
    if (b.opt.tune || b.opt.compare)
        coll_need = 1 << 20;
    b.blk = (need + 63) & ~(size_t)63;
    check(gas_malloc(2 * sizeof(uint64_t) * (size_t)b.nranks, &b.ctl), "gas_malloc (control)");
    check(gas_malloc(b.blk * (size_t)b.nranks, &b.data), "gas_malloc (data)");
    check(gas_ptr_add(b.data, (uint64_t)b.blk * (uint64_t)b.target, &b.tgt), "gas_ptr_add");
    if (gas_ptr_rank(b.tgt) != b.target)
        die("the data block for rank %d lies on rank %d", b.target, gas_ptr_rank(b.tgt));
    if (gas_ptr_rank(ctl_slot(&b, b.rank, 1)) != b.rank)
        die("control word of rank %d lies on rank %d", b.rank,
            gas_ptr_rank(ctl_slot(&b, b.rank, 1)));
    memset(gas_ptr_local(ctl_slot(&b, b.rank, 0)), 0, 2 * sizeof(uint64_t));
    if (b.rank == 0) {
        /* page-aligned: glibc's memcpy is many times slower on this kind of
         * machine when (dst - src) % 4096 is small but not 0 (4K aliasing) */
        b.src = aligned_alloc(4096, (b.blk + 4095) & ~(size_t)4095);
        b.dst = aligned_alloc(4096, (b.blk + 4095) & ~(size_t)4095);
        if (b.src == NULL || b.dst == NULL)
            die("out of memory for two %zu-byte buffers", b.blk);
        memset(b.src, 0, b.blk); /* touch every page before timing */
        memset(b.dst, 0, b.blk);
        print_header(&b);
    }
    check(gas_barrier(), "gas_barrier");

    double *samples = calloc((size_t)b.opt.reps, sizeof *samples);
    if (samples == NULL)
        die("out of memory");
    if (coll_need)
        bench_coll_setup(&b, coll_need);
    if (b.opt.tune || b.opt.compare) {
        rc = b.opt.tune ? bench_coll_tune(&b, samples) : bench_coll_compare(&b);
        bench_coll_fini(&b);
        check(gas_finalize(), "gas_finalize");
        return rc;
    }
    double start = now_s();
    run_references(&b, samples);

    int headed = 0;
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(&b, m))
            continue;
        if (!headed && b.rank == 0)
            print_table_head(&b, "results:");
        headed = 1;
        for (size_t size = mode_min(&b, m); size <= mode_max(&b, m); size *= 2) {
            run_point(&b, m, i, size, samples);
            if (!m->sized || size > SIZE_MAX / 2)
                break;
        }
    }

    if (b.rank == 0)
        bench_coll_summary(&b);
    if (b.rank == 0 && b.have_rtt)
        recheck_pingpong(&b, samples);
    if (b.rank == 0) {
        const char *pre = b.opt.csv ? "# " : "\n";
        if (b.errors)
            printf("%sdata checks FAILED: %" PRIu64 " errors (see stderr) in %" PRIu64
                   " points, %.1f s\n", pre, b.errors, b.points, now_s() - start);
        else
            printf("%sdata checks passed: %" PRIu64 " points, %.1f s\n", pre, b.points,
                   now_s() - start);
    }
    check(gas_barrier(), "gas_barrier");
    check(gas_free(b.data), "gas_free");
    check(gas_free(b.ctl), "gas_free");
    free(samples);
    free(b.src);
    free(b.dst);
    bench_coll_fini(&b);
    free(modes);
    check(gas_finalize(), "gas_finalize");
    return b.errors ? 1 : 0;
}
