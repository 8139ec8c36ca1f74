/*
 * bench_compare.c - gas-bench --compare: for every collective (or those of
 * --coll), each algorithm that can run on this job and "auto" (the tuning
 * table) measured interleaved (bench_coll_interleaved) at the sizes --tune
 * measures, 8 B .. 1 MiB; per size, how much slower the tuned choice
 * (gas_coll_choice) is than the best single algorithm (the one of lowest
 * median), as a paired ratio (bench_coll_paired_ratio: the median over
 * rounds of the ratio of the two batches of a round, which a slow spell of
 * the machine hits alike).
 *
 * A choice that comes out more than 10% slower than the best is measured
 * again at once, the two algorithms alone and with CONFIRM_X times the
 * rounds: on a small shared machine one pass over ~100 points nearly always
 * has an outlier or two that a second look does not reproduce.  So is an
 * "auto" row (the call through the tuning table) that came out more than
 * 10% slower, beside the best (and the choice, when that is measured
 * again too).  Both ratios are reported; the worst cases and the bold rows
 * use the confirming ones.
 *
 * The text goes to stdout as it is measured (--csv: a CSV row per algorithm
 * and size, the rest as '#' comment lines).  After the run --md FILE
 * writes one table (per collective and size: every algorithm's time, the
 * choice, the best, the ratios), --plot FILE.svg one panel per collective
 * with a curve per algorithm, and --json[=FILE] every measurement as a row
 * (mode "coll:alg", its ratio to the best algorithm at that size).
 */
#include "gas-bench.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ALGS 16
#define SLOW_PCT 10.0   /* the target: the choice within 10% of the best */
#define CONFIRM_X 3     /* a confirming re-measurement runs this many times the rounds */

/* One collective at one size. */
struct point {
    int coll;
    size_t size;
    int nalg;                       /* algorithms, auto last */
    const char *algs[MAX_ALGS];
    struct stats st[MAX_ALGS];      /* us per call */
    double ratio[MAX_ALGS];         /* paired ratio to the best */
    const char *chose;              /* what the tuning table picks */
    int best, mine;                 /* indices (mine -1: not measured) */
    double confirmed;               /* chosen/best measured again, or 0 */
    double confirmed_auto;          /* auto/best measured again, or 0 */
};

/* The chosen algorithm's ratio to the best: the confirming one when there is one. */
static double chosen_ratio(const struct point *p)
{
    if (p->mine < 0)
        return 0;
    return p->confirmed > 0 ? p->confirmed : p->ratio[p->mine];
}

/* The auto row's ratio to the best: the confirming one when there is one. */
static double auto_ratio(const struct point *p)
{
    return p->confirmed_auto > 0 ? p->confirmed_auto : p->ratio[p->nalg - 1];
}

struct bench_cmp {
    struct point *pts;
    size_t npts, cap;
    struct mode *modes;             /* one per (collective, algorithm), for the rows */
    size_t nmodes, modes_cap;
    int colls[GAS_COLL_COUNT];      /* the collectives measured, in order */
    int ncolls;
};

static void *grow(void *p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return p;
    size_t ncap = *cap ? 2 * *cap : 64;
    void *q = realloc(p, ncap * elem);
    if (q == NULL)
        bench_die("out of memory");
    *cap = ncap;
    return q;
}

/* The row mode of (coll, alg): names live as long as the program. */
static const struct mode *mode_of(struct bench_cmp *c, int coll, const char *alg)
{
    for (size_t i = 0; i < c->nmodes; i++)
        if (c->modes[i].coll == coll && strcmp(c->modes[i].alg, alg) == 0)
            return &c->modes[i];
    /* rows point into modes: it is sized once for every collective and algorithm */
    if (c->nmodes == c->modes_cap)
        bench_die("--compare: more algorithms than expected");
    size_t len = strlen(gas_coll_name((gas_coll_t)coll)) + strlen(alg) + 2;
    char *name = malloc(len);
    if (name == NULL)
        bench_die("out of memory");
    snprintf(name, len, "%s:%s", gas_coll_name((gas_coll_t)coll), alg);
    c->modes[c->nmodes] = (struct mode){ .name = name, .group = "compare", .kind = KIND_LAT,
                                         .sized = coll != GAS_COLL_BARRIER, .collective = 1,
                                         .coll = coll, .alg = alg,
                                         .doc = "--compare: one algorithm, us per call" };
    return &c->modes[c->nmodes++];
}

/*
 * Print one point's line and keep its rows (rank 0).  With --csv the rows
 * are CSV lines (reference: the best algorithm's median; ratio: the paired
 * ratio to it) and the point's line a comment after them.
 */
static void report(struct bench *b, struct point *p)
{
    const char *name = gas_coll_name((gas_coll_t)p->coll);
    double best = p->st[p->best].median;
    for (int a = 0; a < p->nalg; a++) {
        struct row r = { .m = mode_of(b->cmp, p->coll, p->algs[a]), .size = p->size,
                         .s = p->st[a], .ref_name = "best", .ref = best,
                         .ratio = p->ratio[a] };
        bench_out_keep(b, &r);
        if (b->opt.csv)
            bench_out_csv_row(b->txt, &r);
    }
    fprintf(b->notes, "%s%-15s %8zu B ", b->opt.csv ? "# " : "", name, p->size);
    for (int a = 0; a < p->nalg; a++) {
        if (p->size <= 512)
            fprintf(b->notes, " %s %.2f us", p->algs[a], p->st[a].median);
        else
            fprintf(b->notes, " %s %.0f MB/s", p->algs[a], (double)p->size / p->st[a].median);
        fprintf(b->notes, "%s", a + 1 < p->nalg ? "," : "");
    }
    double slower = p->mine >= 0 ? (p->ratio[p->mine] - 1) * 100 : 0;
    double slower_auto = (p->ratio[p->nalg - 1] - 1) * 100;
    double final = p->mine >= 0 ? (chosen_ratio(p) - 1) * 100 : 0;
    char again[96] = "", again_auto[64] = "";
    if (p->confirmed > 0)
        snprintf(again, sizeof again, ", measured again (alone, %dx the rounds): %+.1f%%",
                 CONFIRM_X, final);
    if (p->confirmed_auto > 0)
        snprintf(again_auto, sizeof again_auto, ", again %+.1f%%", (p->confirmed_auto - 1) * 100);
    fprintf(b->notes, "  | chosen %s: %+.1f%% vs best (%s)%s, auto row %+.1f%%%s%s\n", p->chose, slower,
           p->algs[p->best], again, slower_auto, again_auto,
           final > SLOW_PCT ? "  <-- more than 10% slower" : "");
    fflush(b->notes);
}

/* Measure one collective at one size (collective); fills *p on rank 0. */
static void measure_point(struct bench *b, int coll, size_t size, struct point *p)
{
    *p = (struct point){ .coll = coll, .size = size, .mine = -1, .chose = "?" };
    p->nalg = bench_coll_algs(coll, p->algs, 1);
    double *smp = bench_coll_samples_alloc(p->nalg, b->opt.reps);
    bench_coll_interleaved(b, coll, size, p->algs, p->nalg, p->st, smp);
    if (b->rank != 0) {
        free(smp);
        return;
    }
    gas_coll_choice(GAS_TEAM_WORLD, (gas_coll_t)coll, size, &p->chose);
    for (int a = 0; a < p->nalg - 1; a++) {
        if (p->st[a].median < p->st[p->best].median)
            p->best = a;
        if (strcmp(p->algs[a], p->chose) == 0)
            p->mine = a;
    }
    for (int a = 0; a < p->nalg; a++)
        p->ratio[a] = bench_coll_paired_ratio(smp, b->opt.reps, a, p->best);
    free(smp);
}

/*
 * When the chosen algorithm, or the auto row, came out more than SLOW_PCT
 * slower than the best, time it (or them) again beside the best, alone, with
 * CONFIRM_X times the rounds, and keep those paired ratios in p->confirmed
 * and p->confirmed_auto (collective: rank 0 decides).
 */
static void confirm_point(struct bench *b, struct point *p)
{
    uint64_t plan = 0;
    if (b->rank == 0) {
        int mine = p->mine >= 0 && p->mine != p->best && (p->ratio[p->mine] - 1) * 100 > SLOW_PCT;
        int aut = (p->ratio[p->nalg - 1] - 1) * 100 > SLOW_PCT;
        if (mine || aut)
            plan = 1 | (uint64_t)mine << 1 | (uint64_t)aut << 2 | (uint64_t)p->mine << 8 |
                   (uint64_t)p->best << 16;
    }
    if ((plan = bench_coll_agree(plan)) == 0)
        return;
    /* the best first, then the choice and/or auto */
    const char *algs[3] = { p->algs[(plan >> 16) & 0xff] };
    int n = 1, at_mine = -1, at_auto = -1;
    if (plan & 2) {
        at_mine = n;
        algs[n++] = p->algs[(plan >> 8) & 0xff];
    }
    if (plan & 4) {
        at_auto = n;
        algs[n++] = p->algs[p->nalg - 1];
    }
    int reps = b->opt.reps;
    b->opt.reps = reps * CONFIRM_X;
    struct stats st[3];
    double *smp = bench_coll_samples_alloc(n, b->opt.reps);
    bench_coll_interleaved(b, p->coll, p->size, algs, n, st, smp);
    if (b->rank == 0) {
        if (at_mine > 0)
            p->confirmed = bench_coll_paired_ratio(smp, b->opt.reps, at_mine, 0);
        if (at_auto > 0)
            p->confirmed_auto = bench_coll_paired_ratio(smp, b->opt.reps, at_auto, 0);
    }
    b->opt.reps = reps;
    free(smp);
}

int bench_compare(struct bench *b)
{
    struct bench_cmp *c = calloc(1, sizeof *c);
    if (c == NULL)
        bench_die("out of memory");
    b->cmp = c;
    c->modes_cap = (size_t)GAS_COLL_COUNT * (MAX_ALGS + 1);
    c->modes = calloc(c->modes_cap, sizeof *c->modes);
    if (c->modes == NULL)
        bench_die("out of memory");
    double start = bench_now_s(), worst = 0, worst_auto = 0, worst_first = 0;
    char worst_what[96] = "-";
    if (b->rank == 0)
        fprintf(b->notes, "%sgas-bench --compare: %d ranks; each algorithm and auto measured in turn, %d "
               "rounds of ~%g ms batches, median; up to 512 B in us per call, larger in MB/s%s%s\n",
               b->opt.csv ? "# " : "", b->nranks, b->opt.reps, b->opt.batch_s * 1e3,
               b->opt.quick ? " (--quick: NOT a measurement)" : "",
               b->opt.csv ? "; CSV rows in us per call, reference: the best algorithm's median, "
                            "ratio: the paired ratio to it" : "");
    for (int coll = 0; coll < GAS_COLL_COUNT; coll++) {
        const char *name = gas_coll_name((gas_coll_t)coll);
        if (b->opt.colls && !bench_in_list(b->opt.colls, name, strlen(name)))
            continue;
        c->colls[c->ncolls++] = coll;
        for (size_t si = 0; si < bench_coll_nladder; si++) {
            size_t size = coll == GAS_COLL_BARRIER ? 0 : bench_coll_ladder[si];
            c->pts = grow(c->pts, &c->cap, c->npts, sizeof *c->pts);
            struct point *p = &c->pts[c->npts];
            measure_point(b, coll, size, p);
            confirm_point(b, p);
            if (b->rank == 0) {
                c->npts++;
                b->points++;
                report(b, p);
                double first = p->mine >= 0 ? (p->ratio[p->mine] - 1) * 100 : 0;
                double slower = p->mine >= 0 ? (chosen_ratio(p) - 1) * 100 : 0;
                if (first > worst_first)
                    worst_first = first;
                double slower_auto = (auto_ratio(p) - 1) * 100;
                if (slower > worst) {
                    worst = slower;
                    snprintf(worst_what, sizeof worst_what, "%s at %zu B", name, size);
                }
                worst_auto = slower_auto > worst_auto ? slower_auto : worst_auto;
            }
            if (coll == GAS_COLL_BARRIER)
                break;
        }
    }
    int rc = 0;
    if (b->rank == 0) {
        fprintf(b->notes, "%sworst case: the tuned choice is %.1f%% slower than the best algorithm "
               "(%s; first pass before re-measuring: %.1f%%); the auto rows %.1f%%\n",
               b->opt.csv ? "# " : "", worst, worst_what, worst_first, worst_auto);
        if (bench_out_finish(b, bench_now_s() - start) < 0)
            rc = 1;
    }
    for (size_t i = 0; i < c->nmodes; i++)
        free((char *)c->modes[i].name);
    bench_out_fini(b);
    free(c->modes);
    free(c->pts);
    free(c);
    b->cmp = NULL;
    return rc || b->errors ? 1 : 0;
}

/* "R.RRx", algorithm a's paired ratio to the best ("-" for none), then
 * ", again R.RRx" when it was measured again (again > 0). */
static void ratio_text(const struct point *p, int a, double again, char *buf, size_t len)
{
    if (a < 0)
        snprintf(buf, len, "-");
    else if (again > 0)
        snprintf(buf, len, "%.2fx, again %.2fx", p->ratio[a], again);
    else
        snprintf(buf, len, "%.2fx", p->ratio[a]);
}

int bench_compare_md(const struct bench *b, const char *file)
{
    const struct bench_cmp *c = b->cmp;
    FILE *f = fopen(file, "w");
    if (f == NULL || c == NULL) {
        if (f)
            fclose(f);
        return -1;
    }
    bench_out_md_intro(b, f);
    fprintf(f, "; gas-bench --compare: every algorithm and auto timed in turn, %d rounds of "
            "~%g ms batches, median us per call%s.  chosen: what the tuning table picks at "
            "that size; best: the lowest median; x/best: the median over rounds of x's batch "
            "over best's in the same round (target: chosen/best at most 1.10x); \"again\": a "
            "chosen/best over 1.10x measured again at once, the two alone with %dx the rounds "
            "(that value counts).\n\n",
            b->opt.reps, b->opt.batch_s * 1e3, b->opt.quick ? " (--quick: not a measurement)" : "",
            CONFIRM_X);
    fprintf(f, "| collective | size | us per call (median), per algorithm | chosen | MB/s of the chosen | "
               "best | chosen/best | auto/best |\n"
               "| --- | ---: | --- | --- | ---: | --- | ---: | ---: |\n");
    double worst = 0;
    const struct point *worst_p = NULL;
    for (size_t i = 0; i < c->npts; i++) {
        const struct point *p = &c->pts[i];
        char sz[32], mbs[32] = "-", mine[32], aut[32];
        fprintf(f, "| %s | %s | ", gas_coll_name((gas_coll_t)p->coll),
                p->coll == GAS_COLL_BARRIER ? "-" : bench_size_str(p->size, sz, sizeof sz));
        for (int a = 0; a < p->nalg; a++)
            fprintf(f, "%s%s %.*f", a ? ", " : "", p->algs[a], p->st[a].median < 100 ? 2 : 0,
                    p->st[a].median);
        if (p->mine >= 0 && p->size >= 4096)
            snprintf(mbs, sizeof mbs, "%.0f", (double)p->size / p->st[p->mine].median);
        ratio_text(p, p->mine, p->confirmed, mine, sizeof mine);
        ratio_text(p, p->nalg - 1, p->confirmed_auto, aut, sizeof aut);
        int slow = chosen_ratio(p) > 1 + SLOW_PCT / 100;
        fprintf(f, " | %s | %s | %s | %s%s%s | %s |\n", p->chose, mbs, p->algs[p->best],
                slow ? "**" : "", mine, slow ? "**" : "", aut);
        double r = chosen_ratio(p);
        if (r > worst) {
            worst = r;
            worst_p = p;
        }
    }
    if (worst_p) {
        char sz[32];
        fprintf(f, "\nWorst: the chosen algorithm at %.2fx the best (%s at %s)%s.\n", worst,
                gas_coll_name((gas_coll_t)worst_p->coll), bench_size_str(worst_p->size, sz, sizeof sz),
                worst > 1 + SLOW_PCT / 100 ? "; rows over 1.10x are in bold" : "");
    }
    return fclose(f) == 0 ? 0 : -1;
}

int bench_compare_svg(const struct bench *b, const char *file)
{
    const struct bench_cmp *c = b->cmp;
    int colls[GAS_COLL_COUNT], n = 0;
    if (c == NULL)
        return -1;
    for (int i = 0; i < c->ncolls; i++)
        if (c->colls[i] != GAS_COLL_BARRIER) /* one size: in the table only */
            colls[n++] = c->colls[i];
    return bench_svg_coll_grid(b, file, colls, n);
}
