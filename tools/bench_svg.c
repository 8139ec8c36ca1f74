/*
 * bench_svg.c - gas-bench --plot FILE.svg: two log-log panels drawn from the
 * rows of the run, latency (us) and bandwidth (MB/s) against message size,
 * one curve per swept mode (median, with a p10..p90 band), and the reference
 * of the panel dashed (the round trip of the run's latency reference as a
 * level line, memcpy or the raw UDP stream as a curve or a level line).
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
    int left, top;         /* the panel's plot area */
};

static double px(const struct axis *a, size_t size)
{
    double x = log2((double)size);
    return a->left + (a->x1 > a->x0 ? (x - a->x0) / (a->x1 - a->x0) : 0.5) * PANEL_W;
}

static double py(const struct axis *a, double v)
{
    double y = log10(v > 1e-12 ? v : 1e-12);
    return a->top + PANEL_H - (y - a->y0) / (a->y1 - a->y0) * PANEL_H;
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

/* Is row r on this panel's curves (a swept mode of that kind)? */
static int on_panel(const struct row *r, enum kind k)
{
    return r->m->kind == k && r->m->sized;
}

static void panel(const struct bench *b, FILE *f, enum kind k, int left, const char *title,
                  const char *unit)
{
    struct axis a = { .x0 = 1e9, .x1 = -1e9, .y0 = 1e9, .y1 = -1e9, .left = left,
                      .top = MARGIN_T };
    const struct mode *series[MAX_SERIES];
    int nseries = 0;
    for (size_t i = 0; i < b->nrows; i++) {
        const struct row *r = &b->rows[i];
        int curve = on_panel(r, k), level = r->m->reference && r->m->kind == k;
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
            "stroke=\"#444\"/>\n", a.left, a.top, PANEL_W, PANEL_H);
    text(f, a.left + PANEL_W / 2.0, a.top - 14, "middle", 15, title);
    if (nseries == 0 || a.x0 > a.x1) {
        text(f, a.left + PANEL_W / 2.0, a.top + PANEL_H / 2.0, "middle", 13, "(no rows)");
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
                yy, a.left + PANEL_W, yy);
        snprintf(lab, sizeof lab, "%g", v);
        text(f, a.left - 6, yy + 4, "end", 11, lab);
    }
    int step = a.x1 - a.x0 > 12 ? 2 : 1;
    for (int x = (int)a.x0; x <= (int)a.x1; x += step) {
        size_t s = (size_t)1 << x;
        double xx = px(&a, s);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>\n", xx,
                a.top, xx, a.top + PANEL_H);
        text(f, xx, a.top + PANEL_H + 16, "middle", 11, bench_size_str(s, lab, sizeof lab));
    }
    text(f, a.left + PANEL_W / 2.0, a.top + PANEL_H + 36, "middle", 12, "message size (bytes)");
    snprintf(lab, sizeof lab, "%s (median; band p10..p90)", unit);
    fprintf(f, "<g transform=\"translate(%d,%.1f) rotate(-90)\">", a.left - 52,
            a.top + PANEL_H / 2.0);
    text(f, 0, 0, "middle", 12, lab);
    fprintf(f, "</g>\n");

    for (int s = 0; s < nseries; s++) {
        const struct mode *m = series[s];
        const char *color = m->reference ? "#000" : colors[s % NCOLORS];
        const char *dash = m->reference ? " stroke-dasharray=\"6,4\"" : "";
        if (!m->sized) { /* a reference at one size: a level line across the panel */
            for (size_t i = 0; i < b->nrows; i++)
                if (b->rows[i].m == m) {
                    double yy = py(&a, b->rows[i].s.median);
                    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\""
                            " stroke-width=\"1.5\"%s/>\n", a.left, yy, a.left + PANEL_W, yy,
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
        int lx = a.left + PANEL_W + 12;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-width=\"2\"%s/>\n", lx, ly - 4, lx + 22, ly - 4, color, dash);
        text(f, lx + 28, ly, "start", 11, m->name);
    }
    fprintf(f, "</g>\n");
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
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", w, h, w, h);
    text(f, w / 2.0, h - 10, "middle", 13, title);
    panel(b, f, KIND_LAT, MARGIN_L, "latency (lower is better)", "us");
    panel(b, f, KIND_BW, 2 * MARGIN_L + PANEL_W + LEGEND_W, "bandwidth (higher is better)",
          "MB/s");
    fprintf(f, "</svg>\n");
    return fclose(f) == 0 ? 0 : -1;
}
