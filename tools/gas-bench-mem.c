/*
 * gas-bench-mem - the cost of libgas's memory features, each next to a
 * reference measured in the same run.
 *
 *   gas-bench-mem [--quick] [--threads N (1 .. 64)] [--help]
 *
 *  1. gas_alloc/gas_dealloc throughput against the process's malloc/free
 *     (whichever malloc the program got; printed), same sizes and order,
 *     with 1..N threads: pairs (alloc then free at once), batches of 256
 *     mixed small blocks, batches of 16 large ones.  Median of 5 runs,
 *     nanoseconds per alloc+free, and the ratio.
 *  2. First touch of lazily backed segment pages (a fresh gas_malloc'ed
 *     block, one store per 4 KiB page) against first touch of private
 *     anonymous memory, the same pages touched again, and gas_malloc with
 *     GAS_PREFAULT=y (fallocate) per page.
 *  3. gas_init time and memory of a rank with a 1 GiB and a 1 TiB (and the
 *     auto) reservation: each in a fresh process, median of 5: time in
 *     gas_init, resident set, page tables, gas_finalize time.
 * Runs as one rank (no gasrun needed).
 */
#include <gas.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define REPS 5
#define MAX_THREADS 64 /* the most --threads runs with */

static int quick;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return v[n / 2];
}

static void check(gas_status_t s, const char *what)
{
    if (s != GAS_OK) {
        fprintf(stderr, "gas-bench-mem: %s: %s\n", what, gas_last_error());
        exit(1);
    }
}

/* ---- 1. allocation throughput ------------------------------------------ */

enum pattern { PAIRS, BATCH, LARGE };
static const char *const pattern_names[] = {"pairs of 64 B", "batches of 256 x 16..4096 B",
                                            "batches of 16 x 64 KiB..1 MiB"};

struct job {
    enum pattern pat;
    int use_gas;
    long ops;          /* alloc+free pairs to do */
    double secs;
};

static size_t size_of(enum pattern pat, long i)
{
    uint64_t h = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    switch (pat) {
    case PAIRS: return 64;
    case BATCH: return 16 + (size_t)(h % 4081);
    default: return (64u << 10) + (size_t)(h % (960u << 10));
    }
}

static void *worker(void *arg)
{
    struct job *j = arg;
    enum { B = 256 };
    void *mp[B];
    gas_ptr_t gp[B];
    int batch = j->pat == PAIRS ? 1 : j->pat == BATCH ? 256 : 16;
    long rounds = j->ops / batch;
    double t0 = now();
    for (long r = 0; r < rounds; r++) {
        if (j->use_gas) {
            for (int k = 0; k < batch; k++)
                if (gas_alloc(size_of(j->pat, k), &gp[k]) != GAS_OK)
                    abort();
            for (int k = 0; k < batch; k++)
                gas_dealloc(gp[k]);
        } else {
            for (int k = 0; k < batch; k++) {
                mp[k] = malloc(size_of(j->pat, k));
                __asm__ volatile("" : : "r"(mp[k]) : "memory");
            }
            for (int k = 0; k < batch; k++)
                free(mp[k]);
        }
    }
    j->secs = now() - t0;
    j->ops = rounds * batch;
    return NULL;
}

/* ns per alloc+free with nthreads threads, each doing ops of them. */
static double run_alloc(enum pattern pat, int use_gas, int nthreads, long ops)
{
    pthread_t th[MAX_THREADS];
    struct job jobs[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        jobs[t] = (struct job){pat, use_gas, ops, 0};
        pthread_create(&th[t], NULL, worker, &jobs[t]);
    }
    double worst = 0;
    long total = 0;
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        if (jobs[t].secs > worst)
            worst = jobs[t].secs;
        total += jobs[t].ops;
    }
    /* Throughput of all threads together, as time per operation. */
    return worst / (double)total * 1e9;
}

static void bench_alloc(int max_threads)
{
    Dl_info info;
    const char *which = "unknown";
    if (dladdr((void *)malloc, &info) && info.dli_fname)
        which = strstr(info.dli_fname, "jemalloc") ? "jemalloc (linked in with libgas)"
              : strstr(info.dli_fname, "libc") ? "glibc" : info.dli_fname;
    printf("1. gas_alloc+gas_dealloc vs malloc+free (malloc here: %s)\n", which);
    printf("   %-32s %7s %12s %12s %7s\n", "pattern", "threads", "malloc ns", "gas ns", "ratio");
    for (int pat = PAIRS; pat <= LARGE; pat++) {
        long ops = pat == PAIRS ? 4000000 : pat == BATCH ? 2000000 : 100000;
        if (quick)
            ops /= 20;
        for (int nt = 1; nt <= max_threads; nt *= 2) {
            double m[REPS], g[REPS];
            run_alloc((enum pattern)pat, 1, nt, ops / 10);  /* warm both up */
            run_alloc((enum pattern)pat, 0, nt, ops / 10);
            for (int r = 0; r < REPS; r++) {
                m[r] = run_alloc((enum pattern)pat, 0, nt, ops);
                g[r] = run_alloc((enum pattern)pat, 1, nt, ops);
            }
            double mm = median(m, REPS), gm = median(g, REPS);
            printf("   %-32s %7d %12.1f %12.1f %6.2fx\n", pattern_names[pat], nt, mm, gm, gm / mm);
        }
    }
}

/* ---- 2. first touch ------------------------------------------------------ */

static double touch_ns(char *p, size_t len)
{
    double t0 = now();
    for (size_t i = 0; i < len; i += 4096)
        p[i] = 1;
    return (now() - t0) / (double)(len / 4096) * 1e9;
}

static void bench_touch(void)
{
    size_t len = quick ? (16u << 20) : (64u << 20);
    double seg[REPS], again[REPS], anon[REPS];
    gas_ptr_t arr[REPS];
    char *p[REPS];
    /* Every repetition gets fresh pages: all blocks first, freed only at the end. */
    for (int r = 0; r < REPS; r++) {
        gas_layout_t l;
        check(gas_malloc(len, &arr[r]), "gas_malloc");
        check(gas_layout(arr[r], &l), "gas_layout");
        p[r] = gas_ptr_local(gas_ptr_make(0, l.local_offset));
    }
    for (int r = 0; r < REPS; r++) {
        seg[r] = touch_ns(p[r], len);
        again[r] = touch_ns(p[r], len);
        char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        anon[r] = touch_ns(q, len);
        munmap(q, len);
    }
    for (int r = REPS - 1; r >= 0; r--)
        check(gas_free(arr[r]), "gas_free");
    printf("\n2. first touch, ns per 4 KiB page (%zu MiB each time, median of %d)\n", len >> 20, REPS);
    printf("   segment page, first touch      %8.0f\n", median(seg, REPS));
    printf("   anonymous page, first touch    %8.0f   (reference)\n", median(anon, REPS));
    printf("   segment page, touched again    %8.0f\n", median(again, REPS));
}

/* ---- 3. init cost in fresh processes ------------------------------------ */

static uint64_t status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t v = 0;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':')
            v = strtoull(line + k + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

/* In the child: one gas_init/gas_finalize, numbers on stdout. */
static int child_init(int prefault_pages)
{
    double t0 = now();
    check(gas_init(), "gas_init");
    double t1 = now();
    uint64_t rss = status_kib("VmRSS"), pte = status_kib("VmPTE"), vm = status_kib("VmSize");
    double pf = 0;
    if (prefault_pages) {
        gas_ptr_t a;
        double p0 = now();
        check(gas_malloc((size_t)prefault_pages * 4096, &a), "gas_malloc with GAS_PREFAULT=y");
        pf = (now() - p0) / prefault_pages * 1e9;
        check(gas_free(a), "gas_free");
    }
    gas_mem_stats_t s;
    gas_memory_stats(&s);
    double t2 = now();
    check(gas_finalize(), "gas_finalize");
    double t3 = now();
    printf("%.6f %" PRIu64 " %" PRIu64 " %" PRIu64 " %.6f %" PRIu64 " %.1f\n", t1 - t0, rss, pte, vm,
           t3 - t2, s.reserved, pf);
    return 0;
}

/* Run self as a child with GAS_SEGMENT_SIZE=size; parse its line. */
static int spawn_child(const char *size, const char *mode, double *v)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return -1;
    self[n] = '\0';
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    setenv("GAS_SEGMENT_SIZE", size, 1);
    char *argv[] = {self, (char *)mode, NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, self, &fa, NULL, argv, environ);
    unsetenv("GAS_SEGMENT_SIZE");
    close(fds[1]);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    char buf[512] = "";
    ssize_t got = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    return sscanf(buf, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                  &v[6]) == 7 ? 0 : -1;
}

static void bench_init(void)
{
    const char *sizes[] = {"1g", "1t", "auto"};
    printf("\n3. one rank's gas_init with reservations of 1 GiB, 1 TiB and auto (fresh process each, "
           "median of %d)\n", REPS);
    printf("   %-6s %12s %10s %12s %12s %12s %14s\n", "size", "reserved", "init ms", "RSS KiB",
           "PTE KiB", "VmSize GiB", "finalize ms");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double col[7][REPS];
        int ok = 1;
        for (int r = 0; r < REPS && ok; r++) {
            double v[7];
            ok = spawn_child(sizes[i], "--child-init", v) == 0;
            for (int c = 0; c < 7 && ok; c++)
                col[c][r] = v[c];
        }
        if (!ok) {
            printf("   %-6s (the child failed)\n", sizes[i]);
            continue;
        }
        printf("   %-6s %10.0f G %10.3f %12.0f %12.0f %12.1f %14.3f\n", sizes[i],
               median(col[5], REPS) / (1 << 30), median(col[0], REPS) * 1e3, median(col[1], REPS),
               median(col[2], REPS), median(col[3], REPS) / (1 << 20), median(col[4], REPS) * 1e3);
    }
    /* GAS_PREFAULT=y: what backing at allocation costs per page. */
    setenv("GAS_PREFAULT", "y", 1);
    double pf[REPS];
    int ok = 1;
    for (int r = 0; r < REPS && ok; r++) {
        double v[7];
        ok = spawn_child("1g", quick ? "--child-prefault-small" : "--child-prefault", v) == 0;
        pf[r] = v[6];
    }
    unsetenv("GAS_PREFAULT");
    if (ok)
        printf("   gas_malloc with GAS_PREFAULT=y: %.0f ns per 4 KiB page backed (fallocate)\n",
               median(pf, REPS));
}

static const char usage[] =
    "usage: gas-bench-mem [--quick] [--threads N]\n"
    "  --quick      a smoke run: 1/20 of the operations, a smaller first-touch area\n"
    "  --threads N  allocation throughput with 1, 2, 4 .. N threads (1 .. 64; default 2)\n";

/* --threads N: a whole number in 1 .. MAX_THREADS; -1 with a message if not. */
static int parse_threads(const char *text, int *threads_p)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v < 1 || v > MAX_THREADS) {
        fprintf(stderr, "gas-bench-mem: --threads '%s': not a whole number in 1 .. %d\n", text,
                MAX_THREADS);
        return -1;
    }
    *threads_p = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    int threads = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--child-init") == 0)
            return child_init(0);
        if (strcmp(argv[i], "--child-prefault") == 0)
            return child_init(65536);
        if (strcmp(argv[i], "--child-prefault-small") == 0)
            return child_init(4096);
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            if (parse_threads(argv[++i], &threads) != 0)
                return 2;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s", usage);
            return 0;
        } else {
            fprintf(stderr, "gas-bench-mem: %s option '%s'\n%s",
                    strcmp(argv[i], "--threads") == 0 ? "a value is missing after the" : "unknown",
                    argv[i], usage);
            return 2;
        }
    }
    check(gas_init(), "gas_init");
    if (gas_nranks() != 1) {
        fprintf(stderr, "gas-bench-mem: run it as one rank (without gasrun, or gasrun -n 1)\n");
        gas_finalize();
        return 2;
    }
    bench_alloc(threads);
    bench_touch();
    check(gas_finalize(), "gas_finalize");
    bench_init();
    return 0;
}
