/*
 * bench_svg.c - gas-bench --plot FILE.svg: two log-log panels drawn from the
 * rows of the run, latency (us) and bandwidth (MB/s) against message size,
 * one curve per swept mode (median, with a p10..p90 band), and the reference
 * of the panel dashed (the round trip of the run's latency reference as a
 * level line, memcpy or the raw UDP stream as a curve or a level line).
 * --compare draws a grid of such panels instead, one per collective with a
 * curve per algorithm (bench_svg_coll_grid).
 * Plain SVG 1.1 written with fprintf: no plotting dependency.
 */
#include "gas-bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PANEL_W 560
#define PANEL_H 360
#define MARGIN_L 70
#define MARGIN_T 40
#define MARGIN_B 50
#define LEGEND_W 210
#define MAX_SERIES 24

static const char *const colors[] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
};
#define NCOLORS (sizeof colors / sizeof colors[0])

struct axis {
    double x0, x1, y0, y1; /* log2(size) and log10(value) ranges */
    int left, top, w, h;   /* the panel's plot area */
};

/* What one panel shows: the rows of one kind (and of one collective, coll >= 0). */
struct panel_spec {
    enum kind kind;
    int coll;              /* -1: every row */
    int left, top, w, h;
    const char *title, *unit;
};

static double px(const struct axis *a, size_t size)
{
    double x = log2((double)size);
    return a->left + (a->x1 > a->x0 ? (x - a->x0) / (a->x1 - a->x0) : 0.5) * a->w;
}

static double py(const struct axis *a, double v)
{
    double y = log10(v > 1e-12 ? v : 1e-12);
    return a->top + a->h - (y - a->y0) / (a->y1 - a->y0) * a->h;
}

static void text(FILE *f, double x, double y, const char *anchor, int sz, const char *s)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">", x, y, anchor,
            sz);
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
    fputs("</text>\n", f);
}

/* Is row r on this panel's curves (a swept mode of its kind and collective)? */
static int on_panel(const struct row *r, const struct panel_spec *p)
{
    return r->m->kind == p->kind && r->m->sized && (p->coll < 0 || r->m->coll == p->coll);
}

static void panel(const struct bench *b, FILE *f, const struct panel_spec *p)
{
    struct axis a = { .x0 = 1e9, .x1 = -1e9, .y0 = 1e9, .y1 = -1e9, .left = p->left,
                      .top = p->top, .w = p->w, .h = p->h };
    const struct mode *series[MAX_SERIES];
    const char *title = p->title, *unit = p->unit;
    int nseries = 0;
    for (size_t i = 0; i < b->nrows; i++) {
        const struct row *r = &b->rows[i];
        int curve = on_panel(r, p), level = r->m->reference && r->m->kind == p->kind;
        if (!curve && !level)
            continue;
        if (curve) {
            double x = log2((double)r->size);
            a.x0 = x < a.x0 ? x : a.x0;
            a.x1 = x > a.x1 ? x : a.x1;
        }
        double lo = log10(r->s.p10 > 1e-12 ? r->s.p10 : 1e-12), hi = log10(r->s.p90 > 1e-12 ?
                                                                           r->s.p90 : 1e-12);
        a.y0 = lo < a.y0 ? lo : a.y0;
        a.y1 = hi > a.y1 ? hi : a.y1;
        int seen = 0;
        for (int s = 0; s < nseries; s++)
            seen |= series[s] == r->m;
        if (!seen && nseries < MAX_SERIES)
            series[nseries++] = r->m;
    }
    fprintf(f, "<g>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#444\"/>\n", a.left, a.top, a.w, a.h);
    text(f, a.left + a.w / 2.0, a.top - 14, "middle", 15, title);
    if (nseries == 0 || a.x0 > a.x1) {
        text(f, a.left + a.w / 2.0, a.top + a.h / 2.0, "middle", 13, "(no rows)");
        fprintf(f, "</g>\n");
        return;
    }
    a.y0 = floor(a.y0);
    a.y1 = ceil(a.y1);
    if (a.y1 <= a.y0)
        a.y1 = a.y0 + 1;
    char lab[64];
    /* grid: a decade per line, sizes every other power of two */
    for (double y = a.y0; y <= a.y1 + 1e-9; y += 1) {
        double v = pow(10, y), yy = py(&a, v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", a.left,
                yy, a.left + a.w, yy);
        snprintf(lab, sizeof lab, "%g", v);
        text(f, a.left - 6, yy + 4, "end", 11, lab);
    }
    int step = a.x1 - a.x0 > 12 ? 2 : 1;
    for (int x = (int)a.x0; x <= (int)a.x1; x += step) {
        size_t s = (size_t)1 << x;
        double xx = px(&a, s);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", xx,
                a.top, xx, a.top + a.h);
        text(f, xx, a.top + a.h + 16, "middle", 11, bench_size_str(s, lab, sizeof lab));
    }
    text(f, a.left + a.w / 2.0, a.top + a.h + 36, "middle", 12, "message size (bytes)");
    snprintf(lab, sizeof lab, "%s (median; band p10..p90)", unit);
    fprintf(f, "<g transform=\"translate(%d,%.1f) rotate(-90)\">", a.left - 52,
            a.top + a.h / 2.0);
    text(f, 0, 0, "middle", 12, lab);
    fprintf(f, "</g>\n");

    for (int s = 0; s < nseries; s++) {
        const struct mode *m = series[s];
        static const char *const grays[] = { "#000", "#555", "#888", "#aaa" };
        const char *color = m->reference ? grays[s % 4] : colors[s % NCOLORS];
        /* a collective's panel: "auto" dashed, legends without the collective's name */
        int by_alg = p->coll >= 0 && m->alg;
        const char *dash = m->reference || (by_alg && strcmp(m->alg, "auto") == 0)
                           ? " stroke-dasharray=\"6,4\"" : "";
        if (!m->sized) { /* a reference at one size: a level line across the panel */
            for (size_t i = 0; i < b->nrows; i++)
                if (b->rows[i].m == m) {
                    double yy = py(&a, b->rows[i].s.median);
                    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\""
                            " stroke-width=\"1.5\"%s/>\n", a.left, yy, a.left + a.w, yy,
                            color, dash);
                }
        } else {
            /* the p10..p90 band, then the median line */
            fprintf(f, "<polygon fill=\"%s\" fill-opacity=\"0.15\" stroke=\"none\" points=\"",
                    color);
            for (size_t i = 0; i < b->nrows; i++)
                if (b->rows[i].m == m && log2((double)b->rows[i].size) <= a.x1 + 1e-9)
                    fprintf(f, "%.1f,%.1f ", px(&a, b->rows[i].size), py(&a, b->rows[i].s.p90));
            for (size_t i = b->nrows; i-- > 0;)
                if (b->rows[i].m == m && log2((double)b->rows[i].size) <= a.x1 + 1e-9)
                    fprintf(f, "%.1f,%.1f ", px(&a, b->rows[i].size), py(&a, b->rows[i].s.p10));
            fprintf(f, "\"/>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s "
                    "points=\"", color, dash);
            for (size_t i = 0; i < b->nrows; i++)
                if (b->rows[i].m == m && log2((double)b->rows[i].size) <= a.x1 + 1e-9)
                    fprintf(f, "%.1f,%.1f ", px(&a, b->rows[i].size), py(&a, b->rows[i].s.median));
            fprintf(f, "\"/>\n");
        }
        double ly = a.top + 14 + 16 * s;
        int lx = a.left + a.w + 12;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n", lx, ly - 4, lx + 22, ly - 4, color, dash);
        text(f, lx + 28, ly, "start", 11, by_alg ? m->alg : m->name);
    }
    fprintf(f, "</g>\n");
}

/* The XML prolog, the <svg> element of w x h on white, and the title along the bottom. */
static void svg_begin(FILE *f, int w, int h, const char *title)
{
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h, w, h);
    text(f, w / 2.0, h - 10, "middle", 13, title);
}

int bench_svg_write(const struct bench *b, const char *file)
{
    FILE *f = fopen(file, "w");
    if (f == NULL)
        return -1;
    int w = 2 * (MARGIN_L + PANEL_W + LEGEND_W), h = MARGIN_T + PANEL_H + MARGIN_B + 30;
    const char *t = getenv("GAS_TRANSPORT");
    char title[160];
    snprintf(title, sizeof title, "gas-bench: %d ranks, transport %s%s", b->nranks,
             t && *t ? t : "auto", b->opt.quick ? " (--quick: not a measurement)" : "");
    svg_begin(f, w, h, title);
    struct panel_spec lat = { KIND_LAT, -1, MARGIN_L, MARGIN_T, PANEL_W, PANEL_H,
                              "latency (lower is better)", "us" };
    struct panel_spec bw = { KIND_BW, -1, 2 * MARGIN_L + PANEL_W + LEGEND_W, MARGIN_T, PANEL_W,
                             PANEL_H, "bandwidth (higher is better)", "MB/s" };
    panel(b, f, &lat);
    panel(b, f, &bw);
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}

#define GRID_COLS 3
#define GRID_W 340
#define GRID_H 220
#define GRID_LEGEND 190
#define GRID_GAP_V 90

int bench_svg_coll_grid(const struct bench *b, const char *file, const int *colls, int ncolls)
{
    FILE *f = fopen(file, "w");
    if (f == NULL)
        return -1;
    int cols = ncolls < GRID_COLS ? (ncolls > 0 ? ncolls : 1) : GRID_COLS;
    int rows = (ncolls + cols - 1) / cols > 0 ? (ncolls + cols - 1) / cols : 1;
    int cell_w = MARGIN_L + GRID_W + GRID_LEGEND, cell_h = MARGIN_T + GRID_H + GRID_GAP_V - 30;
    int w = cols * cell_w, h = rows * cell_h + 40;
    const char *t = getenv("GAS_TRANSPORT");
    char title[200];
    snprintf(title, sizeof title, "gas-bench --compare: %d ranks, transport %s; us per call "
             "(median, band p10..p90) per algorithm, auto included%s", b->nranks,
             t && *t ? t : "auto", b->opt.quick ? " (--quick: not a measurement)" : "");
    svg_begin(f, w, h, title);
    for (int i = 0; i < ncolls; i++) {
        struct panel_spec p = { KIND_LAT, colls[i], MARGIN_L + (i % cols) * cell_w,
                                MARGIN_T + (i / cols) * cell_h, GRID_W, GRID_H,
                                gas_coll_name((gas_coll_t)colls[i]), "us per call" };
        panel(b, f, &p);
    }
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
