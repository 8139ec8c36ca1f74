/*
 * bench_coll.c - gas-bench's collective modes, --tune, and the interleaved
 * measurement that --tune and --compare share.
 *
 * Modes (all ranks take part, on GAS_TEAM_WORLD):
 *   coll-lat  "coll:alg"  one call of 8 bytes (one double for reductions)
 *   coll-bw   "coll/alg"  a sweep of sizes (default 1 KiB .. 4 MiB); MB/s
 *                         counts the bytes of the message as the tuning table
 *                         does: the vector (broadcast, reduce, allreduce, scan,
 *                         exscan) or one rank's block (the others)
 * for every algorithm that can run on this job, and "auto" (the tuning
 * table).  Reductions are double sums of every rank's rank + 1, data movers
 * move bytes of a per-rank pattern; after every batch each rank checks a
 * sample of its result (a failure is reported and makes the exit status 1).
 * At the end rank 0 prints, per collective and size, how far "auto" is from
 * the best algorithm measured.  Result buffers are in the segment (gas_alloc),
 * so large messages into them go zero-copy.
 *
 * --compare is in bench_compare.c.
 *
 * --tune FILE measures every algorithm at 8 B .. 1 MiB (x8 steps) and writes
 * the fastest per size as tuning-table rows for this job's rank count (with
 * --coll, only the listed collectives' rows are replaced); the
 * choice only changes when another algorithm is more than 5% faster, so
 * noise between equivalent algorithms does not make rules.
 */
#include "gas-bench.h"
#include "gas/coll/coll.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COLL_BW_MIN (1u << 10)
#define COLL_BW_MAX (4u << 20)

struct rec {
    const struct mode *m;
    size_t size;
    double median;
};

struct bench_coll {
    size_t max;              /* bytes per block */
    double *dsrc;            /* doubles: my rank + 1 */
    unsigned char *bsrc;     /* bytes: pattern(my rank, i) */
    unsigned char *dst;      /* in the segment */
    gas_ptr_t dst_ptr;
    size_t *counts;
    struct rec *recs;
    size_t nrecs, cap;
};

static unsigned char pattern(int r, size_t i)
{
    return (unsigned char)((unsigned)r * 131u + (unsigned)i * 7u + 1u);
}

static int is_reduction(int c)
{
    return c == GAS_COLL_REDUCE || c == GAS_COLL_ALLREDUCE || c == GAS_COLL_REDUCE_SCATTER ||
           c == GAS_COLL_SCAN || c == GAS_COLL_EXSCAN;
}

static void run_one(struct bench *b, int coll, size_t size)
{
    struct bench_coll *c = b->coll;
    gas_team_t w = GAS_TEAM_WORLD;
    size_t n8 = size / 8 ? size / 8 : 1;
    gas_status_t st = GAS_OK;
    switch (coll) {
    case GAS_COLL_BARRIER: st = gas_team_barrier(w); break;
    case GAS_COLL_BROADCAST:
        st = gas_broadcast(w, b->rank == 0 ? c->bsrc : c->dst, size, GAS_UINT8, 0);
        break;
    case GAS_COLL_REDUCE: st = gas_reduce(w, c->dst, c->dsrc, n8, GAS_DOUBLE, GAS_OP_SUM, 0); break;
    case GAS_COLL_ALLREDUCE: st = gas_allreduce(w, c->dst, c->dsrc, n8, GAS_DOUBLE, GAS_OP_SUM); break;
    case GAS_COLL_REDUCE_SCATTER:
        st = gas_reduce_scatter(w, c->dst, c->dsrc, n8, GAS_DOUBLE, GAS_OP_SUM);
        break;
    case GAS_COLL_ALLGATHER: st = gas_allgather(w, c->dst, c->bsrc, size, GAS_UINT8); break;
    case GAS_COLL_ALLGATHERV:
        st = gas_allgatherv(w, c->dst, c->bsrc, c->counts, NULL, GAS_UINT8);
        break;
    case GAS_COLL_ALLTOALL: st = gas_alltoall(w, c->dst, c->bsrc, size, GAS_UINT8); break;
    case GAS_COLL_ALLTOALLV:
        st = gas_alltoallv(w, c->dst, c->counts, NULL, c->bsrc, c->counts, NULL, GAS_UINT8);
        break;
    case GAS_COLL_GATHER: st = gas_gather(w, c->dst, c->bsrc, size, GAS_UINT8, 0); break;
    case GAS_COLL_SCATTER: st = gas_scatter(w, c->dst, c->bsrc, size, GAS_UINT8, 0); break;
    case GAS_COLL_SCAN: st = gas_scan(w, c->dst, c->dsrc, n8, GAS_DOUBLE, GAS_OP_SUM); break;
    case GAS_COLL_EXSCAN: st = gas_exscan(w, c->dst, c->dsrc, n8, GAS_DOUBLE, GAS_OP_SUM); break;
    case GAS_COLL_GATHERV:
        st = gas_gatherv(w, c->dst, c->bsrc, c->counts, NULL, GAS_UINT8, 0);
        break;
    case GAS_COLL_SCATTERV:
        st = gas_scatterv(w, c->dst, c->bsrc, c->counts, NULL, GAS_UINT8, 0);
        break;
    default: break;
    }
    bench_check(st, gas_coll_name((gas_coll_t)coll));
}

/* The sampled positions of a block of len bytes. */
static size_t sample(size_t len, int k)
{
    return k == 0 ? 0 : k == 1 ? len / 2 : len - 1;
}

/* Poison (what < 0) or check (returns mismatches) the sampled result bytes. */
static uint64_t result_sample(struct bench *b, int coll, size_t size, int poison)
{
    struct bench_coll *c = b->coll;
    int n = b->nranks, me = b->rank;
    uint64_t bad = 0;
    if (size == 0 || coll == GAS_COLL_BARRIER)
        return 0;
    if (is_reduction(coll)) {
        size_t n8 = size / 8 ? size / 8 : 1;
        /* the sum of rank + 1 over the ranks: all of them, or a prefix (scan, exscan) */
        int upto = coll == GAS_COLL_SCAN ? me + 1 : coll == GAS_COLL_EXSCAN ? me : n;
        double want = (double)upto * (upto + 1) / 2;
        double *d = (double *)(void *)c->dst;
        if (coll == GAS_COLL_REDUCE && me != 0)
            return 0;
        for (int k = 0; k < 3; k++) {
            size_t i = sample(n8, k);
            if (poison)
                d[i] = -1;
            else
                bad += d[i] != want;
        }
        return bad;
    }
    int scatters = coll == GAS_COLL_SCATTER || coll == GAS_COLL_SCATTERV;
    int blocks = coll == GAS_COLL_BROADCAST || scatters ? 1 : n;
    if (coll == GAS_COLL_BROADCAST && me == 0)
        return 0;
    if ((coll == GAS_COLL_GATHER || coll == GAS_COLL_GATHERV) && me != 0)
        return 0;
    for (int j = 0; j < blocks; j++)
        for (int k = 0; k < 3; k++) {
            size_t i = sample(size, k), at = (size_t)j * size + i;
            unsigned char want;
            if (coll == GAS_COLL_BROADCAST)
                want = pattern(0, i);
            else if (scatters)
                want = pattern(0, (size_t)me * size + i);
            else if (coll == GAS_COLL_ALLTOALL || coll == GAS_COLL_ALLTOALLV)
                want = pattern(j, (size_t)me * size + i);
            else
                want = pattern(j, i);
            if (poison)
                c->dst[at] = (unsigned char)~want;
            else
                bad += c->dst[at] != want;
        }
    return bad;
}

static uint64_t coll_batch(struct bench *b, size_t size, uint64_t iters)
{
    const struct mode *m = b->cur;
    struct bench_coll *c = b->coll;
    bench_check(gas_coll_set_algorithm((gas_coll_t)m->coll, m->alg), "gas_coll_set_algorithm");
    for (int i = 0; i < b->nranks; i++)
        c->counts[i] = size;
    result_sample(b, m->coll, size, 1);
    for (uint64_t i = 0; i < iters; i++)
        run_one(b, m->coll, size);
    uint64_t bad = result_sample(b, m->coll, size, 0);
    if (bad) {
        fprintf(stderr, "gas-bench: rank %d: DATA CHECK FAILED: %s size %zu: %" PRIu64 " errors\n",
                b->rank, m->name, size, bad);
        b->errors += bad;
    }
    return 0;
}

/* Can `alg` run here (hierarchical needs several nodes)? */
static int runnable(int coll, const char *alg)
{
    const char *got = NULL;
    if (strcmp(alg, "hierarchical") != 0)
        return 1;
    bench_check(gas_coll_set_algorithm((gas_coll_t)coll, alg), "gas_coll_set_algorithm");
    bench_check(gas_coll_choice(GAS_TEAM_WORLD, (gas_coll_t)coll, 8, &got), "gas_coll_choice");
    bench_check(gas_coll_set_algorithm((gas_coll_t)coll, "auto"), "gas_coll_set_algorithm");
    return got && strcmp(got, alg) == 0;
}

/* Row names live as long as the program (no allocation to free). */
static const char *fmt(const char *a, char sep, const char *b)
{
    static char names[256][48];
    static size_t used;
    if (used == sizeof names / sizeof names[0])
        return "?";
    char *s = names[used++];
    snprintf(s, sizeof names[0], "%s%c%s", a, sep, b);
    return s;
}

void bench_coll_modes(struct bench *b, struct mode **modes_p, size_t *nmodes_p)
{
    for (int c = 0; c < GAS_COLL_COUNT; c++) {
        for (int a = 1;; a++) {
            const char *alg = gas_coll_algorithm((gas_coll_t)c, a);
            int is_auto = alg == NULL;
            if (is_auto)
                alg = "auto";
            if (!runnable(c, alg))
                continue;
            struct mode *n = realloc(*modes_p, (*nmodes_p + 2) * sizeof *n);
            if (n == NULL) {
                fprintf(stderr, "gas-bench: out of memory\n");
                exit(2);
            }
            *modes_p = n;
            struct mode lat = {
                .name = fmt(gas_coll_name((gas_coll_t)c), ':', alg), .group = "coll-lat",
                .kind = KIND_LAT, .fixed_size = c == GAS_COLL_BARRIER ? 0 : 8, .collective = 1,
                .batch = coll_batch, .coll = c, .alg = alg,
                .doc = "each collective x algorithm (and auto): one 8-byte call",
            };
            struct mode bw = lat;
            bw.name = fmt(gas_coll_name((gas_coll_t)c), '/', alg);
            bw.group = "coll-bw";
            bw.kind = KIND_BW;
            bw.sized = 1;
            bw.def_min = COLL_BW_MIN;
            bw.def_max = COLL_BW_MAX;
            bw.doc = "each collective x algorithm (and auto): MB/s over 1 KiB .. 4 MiB";
            n[(*nmodes_p)++] = lat;
            if (c != GAS_COLL_BARRIER)
                n[(*nmodes_p)++] = bw;
            if (is_auto)
                break;
        }
    }
}

void bench_coll_setup(struct bench *b, size_t max_size)
{
    struct bench_coll *c = calloc(1, sizeof *c);
    size_t n = (size_t)b->nranks, bytes = (max_size + 64) * n;
    if (c == NULL) {
        fprintf(stderr, "gas-bench: out of memory\n");
        exit(2);
    }
    c->max = max_size;
    c->dsrc = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    c->bsrc = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    /* results land in the segment (gas_alloc), where collectives write them zero-copy */
    gas_ptr_t seg_dst = GAS_NULL;
    bench_check(gas_alloc(bytes + 4096, &seg_dst), "gas_alloc");
    c->dst_ptr = seg_dst;
    c->dst = (unsigned char *)(((uintptr_t)gas_ptr_local(seg_dst) + 4095) & ~(uintptr_t)4095);
    c->counts = calloc(n, sizeof *c->counts);
    if (!c->dsrc || !c->bsrc || !c->dst || !c->counts) {
        fprintf(stderr, "gas-bench: out of memory for %zu-byte collective buffers\n", bytes);
        exit(2);
    }
    for (size_t i = 0; i < bytes / 8; i++)
        c->dsrc[i] = b->rank + 1;
    for (size_t i = 0; i < bytes; i++)
        c->bsrc[i] = pattern(b->rank, i);
    memset(c->dst, 0, bytes);
    b->coll = c;
}

void bench_coll_fini(struct bench *b)
{
    struct bench_coll *c = b->coll;
    if (c == NULL)
        return;
    free(c->dsrc);
    free(c->bsrc);
    gas_dealloc(c->dst_ptr);
    free(c->counts);
    free(c->recs);
    free(c);
    b->coll = NULL;
}

void bench_coll_record(struct bench *b, const struct mode *m, size_t size, double median)
{
    struct bench_coll *c = b->coll;
    if (c == NULL)
        return;
    if (c->nrecs == c->cap) {
        size_t ncap = c->cap ? 2 * c->cap : 256;
        struct rec *r = realloc(c->recs, ncap * sizeof *r);
        if (r == NULL)
            return;
        c->recs = r;
        c->cap = ncap;
    }
    c->recs[c->nrecs++] = (struct rec){m, size, median};
}

/* Lower is better: latency in us; for bandwidth the inverse of MB/s. */
static double cost(const struct rec *r)
{
    return r->m->kind == KIND_LAT ? r->median : 1.0 / (r->median > 0 ? r->median : 1e-9);
}

/* The record of (coll, kind, size) for algorithm alg, or NULL. */
static const struct rec *find(const struct bench_coll *c, const struct rec *like, const char *alg)
{
    for (size_t j = 0; j < c->nrecs; j++) {
        const struct rec *r = &c->recs[j];
        if (r->m->coll == like->m->coll && r->m->kind == like->m->kind && r->size == like->size &&
            strcmp(r->m->alg, alg) == 0)
            return r;
    }
    return NULL;
}

/*
 * Per collective and size: the algorithm the table chose, its own row, the
 * best row, and the "auto" row (which runs the chosen algorithm; it differs
 * from the chosen algorithm's row only by measurement noise).
 */
void bench_coll_summary(struct bench *b)
{
    struct bench_coll *c = b->coll;
    if (c == NULL || c->nrecs == 0)
        return;
    const char *pre = b->opt.csv ? "# " : "";
    fprintf(b->notes, "\n%stuned choice vs the best algorithm, per collective and size (slower by: the "
           "chosen algorithm's row / the auto row)\n", pre);
    double worst = 0, worst_auto = 0;
    for (size_t i = 0; i < c->nrecs; i++) {
        const struct rec *a = &c->recs[i];
        if (strcmp(a->m->alg, "auto") != 0)
            continue;
        const struct rec *best = NULL;
        for (size_t j = 0; j < c->nrecs; j++) {
            const struct rec *r = &c->recs[j];
            if (r->m->coll == a->m->coll && r->m->kind == a->m->kind && r->size == a->size &&
                strcmp(r->m->alg, "auto") != 0 && (best == NULL || cost(r) < cost(best)))
                best = r;
        }
        const char *chose = "?";
        gas_coll_choice(GAS_TEAM_WORLD, (gas_coll_t)a->m->coll,
                        a->m->kind == KIND_LAT ? a->m->fixed_size : a->size, &chose);
        const struct rec *mine = find(c, a, chose);
        if (best == NULL || mine == NULL)
            continue;
        double slower = (cost(mine) / cost(best) - 1) * 100;
        double slower_auto = (cost(a) / cost(best) - 1) * 100;
        worst = slower > worst ? slower : worst;
        worst_auto = slower_auto > worst_auto ? slower_auto : worst_auto;
        const char *unit = a->m->kind == KIND_LAT ? "us" : "MB/s";
        fprintf(b->notes, "%s%-15s %8zu B  chosen %-20s %10.2f %-4s  best %-20s %10.2f  %5.1f%% / %5.1f%%%s\n",
               pre, gas_coll_name((gas_coll_t)a->m->coll), a->size, chose, mine->median, unit,
               best->m->alg, best->median, slower, slower_auto,
               slower > 10 ? "  <-- chosen more than 10% slower" : "");
    }
    fprintf(b->notes, "%sworst case: the chosen algorithm is %.1f%% slower than the best (the auto rows: %.1f%%)\n",
           pre, worst, worst_auto);
}

/* ------------------------------------------------------------------------ */
/* Interleaved measurement (--tune, --compare)                               */
/* ------------------------------------------------------------------------ */

/* One timed batch of alg, all ranks starting together; seconds on rank 0. */
static double timed(struct bench *b, int coll, const char *alg, size_t size, uint64_t iters)
{
    struct mode m = {.name = alg, .group = "cmp", .kind = KIND_LAT, .collective = 1,
                     .batch = coll_batch, .coll = coll, .alg = alg};
    b->cur = &m;
    bench_check(gas_barrier(), "gas_barrier");
    double t0 = bench_now_s();
    coll_batch(b, size, iters);
    double t = bench_now_s() - t0;
    b->cur = NULL;
    return t;
}

/* Rank 0's value, on every rank. */
uint64_t bench_coll_agree(uint64_t v)
{
    bench_check(gas_broadcast(GAS_TEAM_WORLD, &v, 1, GAS_UINT64, 0), "gas_broadcast");
    return v;
}

/*
 * Time each of the nalg algorithms (with auto among them if wanted) at one
 * size: iterations per batch calibrated per algorithm, then reps rounds in
 * which every algorithm runs one batch in turn (each round starting one
 * algorithm later), so a machine that changes speed during the run affects
 * all alike.  st: us per call (rank 0); smp_out, when not NULL, gets the
 * samples by algorithm and round (smp_out[a * reps + r], us per call), for
 * bench_coll_paired_ratio.
 */
void bench_coll_interleaved(struct bench *b, int coll, size_t size, const char *const *algs,
                            int nalg, struct stats *st, double *smp_out)
{
    int reps = b->opt.reps;
    uint64_t *iters = calloc((size_t)nalg, sizeof *iters);
    double *smp = calloc((size_t)nalg * (size_t)reps, sizeof *smp);
    if (iters == NULL || smp == NULL) {
        fprintf(stderr, "gas-bench: out of memory\n");
        exit(2);
    }
    for (int a = 0; a < nalg; a++) {
        uint64_t it = 1;
        timed(b, coll, algs[a], size, 1);   /* warm up: first touch, routes */
        for (;;) {
            double t = timed(b, coll, algs[a], size, it);
            uint64_t next = 0;
            if (t < b->opt.batch_s / 2 && it < (1u << 24))
                next = it * (t > 0 && b->opt.batch_s / t < 64 ? (uint64_t)(b->opt.batch_s / t) + 1 : 64);
            if ((next = bench_coll_agree(next)) == 0)
                break;
            it = next;
        }
        iters[a] = it;
    }
    for (int r = 0; r < reps; r++) {
        for (int k = 0; k < nalg; k++) {
            int a = (k + r) % nalg;
            smp[a * reps + r] = timed(b, coll, algs[a], size, iters[a]) / (double)iters[a] * 1e6;
        }
    }
    if (smp_out)
        memcpy(smp_out, smp, sizeof *smp * (size_t)nalg * (size_t)reps);
    for (int a = 0; a < nalg; a++)
        st[a] = bench_summarize(smp + a * reps, reps);
    bench_check(gas_coll_set_algorithm((gas_coll_t)coll, "auto"), "gas_coll_set_algorithm");
    free(iters);
    free(smp);
}

double *bench_coll_samples_alloc(int nalg, int reps)
{
    double *p = calloc((size_t)nalg * (size_t)reps, sizeof *p);
    if (p == NULL) {
        fprintf(stderr, "gas-bench: out of memory\n");
        exit(2);
    }
    return p;
}

/*
 * Algorithm x's time relative to y's, as the median over rounds of the ratio
 * of their batches in the same round: a slow spell of the machine hits both
 * batches of a round, so this varies far less than a ratio of medians.
 */
double bench_coll_paired_ratio(const double *smp, int reps, int x, int y)
{
    double *q = bench_coll_samples_alloc(1, reps);
    for (int r = 0; r < reps; r++)
        q[r] = smp[y * reps + r] > 0 ? smp[x * reps + r] / smp[y * reps + r] : 1;
    double m = bench_summarize(q, reps).median;
    free(q);
    return m;
}

int bench_coll_algs(int coll, const char **algs, int with_auto)
{
    int n = 0;
    for (int a = 1; gas_coll_algorithm((gas_coll_t)coll, a) && n < 15; a++)
        if (runnable(coll, gas_coll_algorithm((gas_coll_t)coll, a)))
            algs[n++] = gas_coll_algorithm((gas_coll_t)coll, a);
    if (with_auto)
        algs[n++] = "auto";
    return n;
}

static int listed(const char *list, const char *word)
{
    return bench_in_list(list, word, strlen(word));
}

const size_t bench_coll_ladder[] = {8, 64, 512, 4096, 32768, 262144, 1048576};
const size_t bench_coll_nladder = sizeof bench_coll_ladder / sizeof bench_coll_ladder[0];

/* ------------------------------------------------------------------------ */
/* --tune                                                                    */
/* ------------------------------------------------------------------------ */

#define TUNE_SLACK 0.05   /* a new rule only for a gain of more than 5% */

#define tune_sizes bench_coll_ladder
#define NTUNE bench_coll_nladder

static void size_text(size_t v, char *buf, size_t cap)
{
    if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(buf, cap, "%zum", v >> 20);
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, cap, "%zuk", v >> 10);
    else
        snprintf(buf, cap, "%zu", v);
}

/* Is `line` a "# measured by gas-bench --tune on N ranks" heading for n ranks? */
static int tune_heading(const char *line, int n)
{
    static const char head[] = "# measured by gas-bench --tune on ";
    return strncmp(line, head, sizeof head - 1) == 0 && atoi(line + sizeof head - 1) == n;
}

/*
 * FILE's lines less the rows this run replaces: those for exactly this rank
 * count, node shape and cpus (own or shared; a row without that field stays:
 * the new rows come after it and so win), of the measured collectives
 * (colls; NULL: all).  A
 * heading of an earlier --tune on this rank count goes with its rows: it is
 * kept only while one of the rows right below it is.
 */
static char *kept_rows(const char *file, int n, const char *nodes, const char *cpus,
                       const char *colls)
{
    FILE *f = fopen(file, "r");
    char *out = NULL, line[512], heading[512] = "";
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (m == NULL) {
        if (f)
            fclose(f);
        return NULL;
    }
    while (f && fgets(line, sizeof line, f)) {
        char c[64], r[64], nd[64], from[64], alg[64], cp[64];
        int k = sscanf(line, "%63s %63s %63s %63s %63s %63s", c, r, nd, from, alg, cp);
        int row = k >= 3 && c[0] != '#';
        if (row && atoi(r) == n && strchr(r, '-') == NULL && strcmp(nd, nodes) == 0 &&
            k >= 6 && cp[0] != '#' && strcmp(cp, cpus) == 0 && (colls == NULL || listed(colls, c)))
            continue;
        if (row && heading[0])
            fputs(heading, m);
        heading[0] = '\0';
        if (tune_heading(line, n))
            snprintf(heading, sizeof heading, "%s", line);
        else
            fputs(line, m);
    }
    if (f)
        fclose(f);
    fclose(m);
    return out;
}

/*
 * Rank 0: is FILE, where it exists, a tuning table gas_init would accept?
 * --tune keeps its rows for other rank counts, so a bad line there would
 * make the new table fail gas_init too: say which, before measuring.
 * Returns 0 when FILE is missing or good.
 */
static int tune_file_bad(const char *file)
{
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return 0; /* unreadable: kept_rows keeps nothing from it either */
    char *text = NULL, buf[4096], why[640];
    size_t len = 0, n;
    FILE *m = open_memstream(&text, &len);
    if (m == NULL) {
        fclose(f);
        fprintf(stderr, "gas-bench: out of memory\n");
        return 1;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, m);
    fclose(f);
    fclose(m);
    int bad = gas_co_table_check(text, len, why, sizeof why);
    free(text);
    if (bad != 0)
        fprintf(stderr, "gas-bench: --tune: %s, line %d: %s (--tune keeps the rows of FILE for "
                "other rank counts, so fix or remove that line first)\n", file, bad, why);
    return bad != 0;
}

int bench_coll_tune_check(const struct bench *b)
{
    int32_t bad = b->rank == 0 ? tune_file_bad(b->opt.tune) : 0;
    bench_check(gas_broadcast(GAS_TEAM_WORLD, &bad, 1, GAS_INT32, 0), "gas_broadcast");
    return bad;
}

int bench_coll_tune(struct bench *b, double *samples)
{
    struct bench_coll *c = b->coll;
    const char *file = b->opt.tune;
    int multi = runnable(GAS_COLL_BARRIER, "hierarchical");
    const char *nodes = multi ? "multi" : "1";
    const char *cpus = GAS_TEAM_WORLD->cpus_shared ? "shared" : "own";
    char *rows = NULL;
    size_t rlen = 0;
    FILE *out = open_memstream(&rows, &rlen);
    if (out == NULL) {
        fprintf(stderr, "gas-bench: out of memory\n");
        return 2;
    }
    if (b->rank == 0)
        printf("gas-bench --tune: %d ranks (%s node%s, %s CPUs), sizes 8 B .. 1 MiB, %d batches "
               "of ~%g ms per point\n", b->nranks, multi ? "several" : "one", multi ? "s" : "", cpus,
               b->opt.reps, b->opt.batch_s * 1e3);
    for (int coll = 0; coll < GAS_COLL_COUNT; coll++) {
        const char *name = gas_coll_name((gas_coll_t)coll);
        if (b->opt.colls && !listed(b->opt.colls, name))
            continue;
        const char *prev = NULL;
        size_t prev_size = 0;
        for (size_t si = 0; si < NTUNE; si++) {
            size_t size = coll == GAS_COLL_BARRIER ? 0 : tune_sizes[si];
            if (size > c->max)
                break;
            const char *best = NULL;
            double best_us = 0, prev_us = -1;
            struct stats med[16];
            const char *algs[16];
            int nalg = bench_coll_algs(coll, algs, 0), ibest = -1, iprev = -1;
            int reps = b->opt.reps;
            double *smp = bench_coll_samples_alloc(nalg, reps);
            bench_coll_interleaved(b, coll, size, algs, nalg, med, smp);
            for (int a = 0; a < nalg; a++) {
                const char *alg = algs[a];
                double us = med[a].median;
                if (b->rank == 0)
                    printf("  %-15s %8zu B  %-22s %12.3f us\n", name, size, alg, us);
                if (best == NULL || us < best_us) {
                    best = alg;
                    best_us = us;
                    ibest = a;
                }
                if (prev && strcmp(alg, prev) == 0) {
                    prev_us = us;
                    iprev = a;
                }
            }
            bench_check(gas_coll_set_algorithm((gas_coll_t)coll, "auto"), "gas_coll_set_algorithm");
            /* keep the current choice while it is within TUNE_SLACK of the best (less churn) */
            if (prev && prev_us >= 0 &&
                bench_coll_paired_ratio(smp, reps, iprev, ibest) <= 1 + TUNE_SLACK)
                best = prev;
            free(smp);
            if (best && (prev == NULL || strcmp(best, prev) != 0)) {
                /* the crossover lies between the two measured sizes: take the middle */
                size_t from = prev == NULL ? 0 : (size_t)sqrt((double)prev_size * (double)size);
                char ft[32];
                size_text(from, ft, sizeof ft);
                fprintf(out, "%-17s %-6d %-6s %-6s %-22s %s\n", name, b->nranks, nodes, ft, best,
                        cpus);
                prev = best;
            }
            prev_size = size;
            if (coll == GAS_COLL_BARRIER)
                break;
        }
    }
    fclose(out);
    int rc = 0;
    if (b->rank == 0) {
        char *keep = kept_rows(file, b->nranks, nodes, cpus, b->opt.colls);
        FILE *f = fopen(file, "w");
        if (f == NULL) {
            fprintf(stderr, "gas-bench: --tune: cannot write %s: %s\n", file, strerror(errno));
            rc = 1;
        } else {
            char host[256] = "?", date[64];
            time_t t = time(NULL);
            gethostname(host, sizeof host - 1);
            strftime(date, sizeof date, "%Y-%m-%d", localtime(&t));
            if (keep && keep[0])
                fputs(keep, f);
            else
                fputs("# libgas collective tuning table (format: docs/collectives.md)\n"
                      "# collective      ranks  nodes  from   algorithm              cpus\n", f);
            fprintf(f, "# measured by gas-bench --tune on %d ranks (%s CPUs; %s, %s)%s%s\n%s",
                    b->nranks, cpus, host, date, b->opt.colls ? ": " : "",
                    b->opt.colls ? b->opt.colls : "",
                    rows ? rows : "");
            fclose(f);
            printf("wrote the rows for %d ranks to %s\n", b->nranks, file);
        }
        free(keep);
    }
    free(rows);
    if (b->errors)
        rc = 1;
    return rc;
}
