/*
 * bench_out.c - gas-bench's output: the header, the aligned table (or --csv),
 * a progress line for long sweeps, and after the run --json, --md and --plot
 * (--compare has a table and a plot of its own, bench_compare.c).
 *
 * Every row is kept (b->rows) with its reference and ratio, so the JSON
 * document and the plot carry exactly what the table printed.  With
 * --json (no file) the JSON goes to stdout and the table to stderr.
 */
#include "gas-bench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char date[64], host[256] = "?";
static int ncpu;

static const char *unit_of(const struct mode *m)
{
    return m->kind == KIND_LAT ? "us" : m->kind == KIND_BW ? "MB/s" : "Mops/s";
}

static const char *kind_name(const struct mode *m)
{
    return m->kind == KIND_LAT ? "latency" : m->kind == KIND_BW ? "bandwidth" : "rate";
}

static const char *transport_name(void)
{
    const char *t = getenv("GAS_TRANSPORT");
    return t && *t ? t : "auto";
}

/* The run's date, host and CPU count, once. */
static void stamp(void)
{
    if (date[0])
        return;
    time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %z", localtime(&t));
    gethostname(host, sizeof host - 1);
    cpu_set_t cpus;
    ncpu = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : -1;
}

void bench_out_header(struct bench *b)
{
    stamp();
    char who[96];
    if (b->nranks > 1)
        snprintf(who, sizeof who, "rank 0 -> rank 1%s", b->nranks > 2 ? ", others idle" : "");
    else
        snprintf(who, sizeof who, "ONE rank: rank 0 is its own target (loopback)");
    const char *pre = b->opt.csv ? "# " : "";
    FILE *f = b->txt;
    fprintf(f, "%sgas-bench (libgas %s): %d ranks (%s), transport %s, %s\n", pre,
            GAS_VERSION_STRING, b->nranks, who, transport_name(), date);
    fprintf(f, "%shost %s, %d CPUs; %d timed batches of ~%g ms per point, median and p10/p90 "
            "across batches%s\n", pre, host, ncpu, b->opt.reps, b->opt.batch_s * 1e3,
            b->opt.quick ? " (--quick: NOT a measurement)" : "");
    fprintf(f, "%sratio: latency rows = multiple of the %s round trip; bandwidth rows = %% of %s; "
            "rate rows = %% of local CPU fetch-add\n", pre,
            b->udp_ref ? "fastest raw UDP" : "cache-line", b->udp_ref ? "the fastest raw UDP stream" :
            "memcpy at that size");
    if (b->opt.csv)
        fprintf(f, "mode,size,median,p10,p90,unit,reference,ratio\n");
    fflush(f);
}

void bench_out_table_head(struct bench *b, const char *title)
{
    if (b->opt.csv)
        return;
    fprintf(b->txt, "\n%s\n%-30s %6s %12s %12s %12s %-6s %-20s %8s\n", title, "mode", "size",
            "median", "p10", "p90", "unit", "reference", "ratio");
}

/* The reference of a row: its name (NULL: none) and median. */
static const char *reference_of(const struct bench *b, const struct mode *m, size_t size,
                                double *ref_p)
{
    if (m->reference)
        return NULL;
    if (m->kind == KIND_LAT) {
        if (b->udp_ref && b->have_udp) {
            *ref_p = b->udp_rtt_us.median;
            return b->udp_rtt_name;
        }
        *ref_p = b->rtt_us.median;
        return b->have_rtt ? "pingpong" : NULL;
    }
    if (m->kind == KIND_RATE) {
        *ref_p = b->amo_mops.median;
        return b->have_amo ? "local-fadd" : NULL;
    }
    if (b->udp_ref && b->have_udp_bw) {
        *ref_p = b->udp_mbs.median;
        return b->udp_bw_name;
    }
    for (size_t i = 0; i < b->nmemcpy; i++)
        if (b->memcpy_size[i] == size) {
            *ref_p = b->memcpy_mbs[i].median;
            return "memcpy";
        }
    return NULL;
}

void bench_out_keep(struct bench *b, const struct row *r)
{
    if (b->nrows == b->rows_cap) {
        size_t cap = b->rows_cap ? 2 * b->rows_cap : 64;
        struct row *n = realloc(b->rows, cap * sizeof *n);
        if (n == NULL)
            bench_die("out of memory for the rows");
        b->rows = n;
        b->rows_cap = cap;
    }
    b->rows[b->nrows++] = *r;
}

void bench_out_csv_row(FILE *f, const struct row *r)
{
    fprintf(f, "%s,%zu,%.4f,%.4f,%.4f,%s,", r->m->name, r->size, r->s.median, r->s.p10, r->s.p90,
            unit_of(r->m));
    if (r->ref_name)
        fprintf(f, "%.4f,%.4f\n", r->ref, r->ratio);
    else
        fprintf(f, ",\n");
}

void bench_out_row(struct bench *b, const struct mode *m, size_t size, struct stats s)
{
    struct row r = { .m = m, .size = size, .s = s };
    r.ref_name = reference_of(b, m, size, &r.ref);
    if (r.ref_name)
        r.ratio = m->kind == KIND_LAT ? s.median / r.ref : 100.0 * s.median / r.ref;
    bench_out_keep(b, &r);
    bench_out_progress(b, NULL, 0, 0, 0);

    FILE *f = b->txt;
    char sz[32], ref[48] = "-", ratio[32] = "-";
    const char *unit = unit_of(m);
    if (m->sized || m->fixed_size)
        bench_size_str(size, sz, sizeof sz);
    else
        strcpy(sz, "-");
    if (b->opt.csv) {
        bench_out_csv_row(f, &r);
    } else {
        if (r.ref_name && m->kind == KIND_LAT) {
            snprintf(ref, sizeof ref, "%s %.3f us", strcmp(r.ref_name, "pingpong") ? "udp-rtt" :
                     "rtt", r.ref);
            snprintf(ratio, sizeof ratio, "%.2fx", r.ratio);
        } else if (r.ref_name) {
            snprintf(ref, sizeof ref, "%s %.0f %s", r.ref_name, r.ref, unit);
            snprintf(ratio, sizeof ratio, "%.1f%%", r.ratio);
        }
        const char *fmt = m->kind == KIND_LAT ? "%-30s %6s %12.3f %12.3f %12.3f %-6s %-20s %8s\n"
                                              : "%-30s %6s %12.1f %12.1f %12.1f %-6s %-20s %8s\n";
        fprintf(f, fmt, m->name, sz, s.median, s.p10, s.p90, unit, ref, ratio);
    }
    fflush(f);
}

void bench_out_progress(struct bench *b, const struct mode *m, size_t size, size_t k, size_t n)
{
    static int shown, lines = -1;
    static double last;
    if (!b->opt.progress)
        return;
    if (lines < 0) {
        lines = !isatty(2);
        last = bench_now_s();
    }
    if (lines) {
        /* stderr is a pipe (gasrun's, which forwards whole lines): a line
         * now and then, so a long sweep shows it is moving and a short one
         * stays quiet */
        double now = bench_now_s();
        if (m != NULL && now - last >= 2.0) {
            char sz[32];
            fprintf(stderr, "progress: [%zu/%zu] %s %s\n", k, n, m->name,
                    bench_size_str(size, sz, sizeof sz));
            last = now;
        }
        return;
    }
    if (m == NULL) {
        if (shown)
            fprintf(stderr, "\r%-60s\r", "");
        shown = 0;
        return;
    }
    char sz[32];
    fprintf(stderr, "\r[%zu/%zu] %-30s %8s ", k, n, m->name, bench_size_str(size, sz, sizeof sz));
    shown = 1;
}

/* A JSON string (names are ours, but escape anyway). */
static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void json_write(const struct bench *b, FILE *f, double elapsed_s)
{
    fprintf(f, "{\n  \"tool\": \"gas-bench\",\n  \"version\": ");
    json_str(f, GAS_VERSION_STRING);
    fprintf(f, ",\n  \"date\": ");
    json_str(f, date);
    fprintf(f, ",\n  \"host\": ");
    json_str(f, host);
    fprintf(f, ",\n  \"cpus\": %d,\n  \"nranks\": %d,\n  \"transport\": ", ncpu, b->nranks);
    json_str(f, transport_name());
    fprintf(f, ",\n  \"reps\": %d,\n  \"batch_ms\": %g,\n  \"quick\": %s,\n", b->opt.reps,
            b->opt.batch_s * 1e3, b->opt.quick ? "true" : "false");
    fprintf(f, "  \"rows\": [");
    for (size_t i = 0; i < b->nrows; i++) {
        const struct row *r = &b->rows[i];
        fprintf(f, "%s\n    {\"mode\": ", i ? "," : "");
        json_str(f, r->m->name);
        fprintf(f, ", \"group\": ");
        json_str(f, r->m->group);
        fprintf(f, ", \"kind\": \"%s\", \"reference\": %s, \"size\": %zu, \"median\": %.6g, "
                "\"p10\": %.6g, \"p90\": %.6g, \"unit\": \"%s\"", kind_name(r->m),
                r->m->reference ? "true" : "false", r->size, r->s.median, r->s.p10, r->s.p90,
                unit_of(r->m));
        if (r->ref_name) {
            /* ratio_unit: "x" a multiple of the reference (latency), "%" a percentage of it */
            fprintf(f, ", \"ref_name\": \"%s\", \"ref\": %.6g, \"ratio\": %.6g, "
                    "\"ratio_unit\": \"%s\"", r->ref_name, r->ref, r->ratio,
                    r->m->kind == KIND_LAT ? "x" : "%");
        }
        fputc('}', f);
    }
    fprintf(f, "\n  ],\n");
    if (b->rtt_end_us > 0)
        fprintf(f, "  \"pingpong_end_us\": %.6g,\n", b->rtt_end_us);
    if (b->udp_rtt_end_us > 0 || b->udp_mbs_end > 0)
        fprintf(f, "  \"udp_rtt_end_us\": %.6g,\n  \"udp_stream_end_mbs\": %.6g,\n",
                b->udp_rtt_end_us, b->udp_mbs_end);
    fprintf(f, "  \"points\": %llu,\n  \"errors\": %llu,\n  \"elapsed_s\": %.3f\n}\n",
            (unsigned long long)b->points, (unsigned long long)b->errors, elapsed_s);
}

void bench_out_udp_end(const struct bench *b, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    if (b->udp_rtt_end_us > 0)
        n = snprintf(buf, len, "round trip %.3f us (start %.3f us)", b->udp_rtt_end_us,
                     b->udp_rtt_us.median);
    if (b->udp_mbs_end > 0 && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "%sstream %.1f MB/s (start %.1f MB/s)", n ? ", " : "",
                 b->udp_mbs_end, b->udp_mbs.median);
}

void bench_out_md_intro(const struct bench *b, FILE *f)
{
    stamp();
    fprintf(f, "%d ranks, transport %s, %s, host %s (%d CPUs)", b->nranks, transport_name(), date,
            host, ncpu);
}

/* A markdown table of the rows (docs/performance.md is made of these). */
static int md_write(const struct bench *b, const char *file)
{
    FILE *f = fopen(file, "w");
    if (f == NULL)
        return -1;
    bench_out_md_intro(b, f);
    fprintf(f, ", %d batches of ~%g ms per point%s\n\n", b->opt.reps, b->opt.batch_s * 1e3,
            b->opt.quick ? " (--quick: not a measurement)" : "");
    fprintf(f, "| mode | size | median | p10 | p90 | unit | reference | ratio |\n"
               "| --- | ---: | ---: | ---: | ---: | --- | --- | ---: |\n");
    for (size_t i = 0; i < b->nrows; i++) {
        const struct row *r = &b->rows[i];
        char sz[32], ref[64] = "-", ratio[32] = "-";
        const char *fmt = r->m->kind == KIND_LAT ? "| %s | %s | %.3f | %.3f | %.3f | %s | %s | %s |\n"
                                                 : "| %s | %s | %.1f | %.1f | %.1f | %s | %s | %s |\n";
        if (r->m->sized || r->m->fixed_size)
            bench_size_str(r->size, sz, sizeof sz);
        else
            strcpy(sz, "-");
        if (r->ref_name) {
            snprintf(ref, sizeof ref, "%s %.*f", r->ref_name, r->m->kind == KIND_LAT ? 3 : 0, r->ref);
            snprintf(ratio, sizeof ratio, r->m->kind == KIND_LAT ? "%.2fx" : "%.1f%%", r->ratio);
        }
        fprintf(f, fmt, r->m->name, sz, r->s.median, r->s.p10, r->s.p90, unit_of(r->m), ref, ratio);
    }
    if (b->rtt_end_us > 0)
        fprintf(f, "\nCache-line round trip at the end of the run: %.3f us (start %.3f us)%s\n",
                b->rtt_end_us, b->rtt_us.median,
                b->rtt_end_us > 1.5 * b->rtt_us.median || b->rtt_end_us < b->rtt_us.median / 1.5
                    ? ": the machine changed during the run" : "");
    if (b->udp_rtt_end_us > 0 || b->udp_mbs_end > 0)
    {
        char what[160];
        bench_out_udp_end(b, what, sizeof what);
        fprintf(f, "\nRaw UDP at the end of the run: %s%s\n", what,
                b->udp_drift ? ": the machine changed during the run" : "");
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* "gas-bench: OPTION: cannot write FILE: why" (errno as the writer left it). */
static void write_failed(const char *option, const char *file)
{
    fprintf(stderr, "gas-bench: %s: cannot write %s: %s\n", option, file,
            errno ? strerror(errno) : "write error");
}

int bench_out_finish(struct bench *b, double elapsed_s)
{
    int rc = 0;
    stamp();
    errno = 0;
    if (b->opt.md && (b->opt.compare ? bench_compare_md(b, b->opt.md) : md_write(b, b->opt.md)) < 0) {
        write_failed("--md", b->opt.md);
        rc = -1;
    }
    if (b->opt.json) {
        int to_stdout = strcmp(b->opt.json, "-") == 0;
        errno = 0;
        FILE *f = to_stdout ? stdout : fopen(b->opt.json, "w");
        if (f == NULL) {
            write_failed("--json", b->opt.json);
            rc = -1;
        } else {
            json_write(b, f, elapsed_s);
            if (to_stdout ? fflush(f) != 0 : fclose(f) != 0) {
                write_failed("--json", to_stdout ? "stdout" : b->opt.json);
                rc = -1;
            }
        }
    }
    errno = 0;
    if (b->opt.plot && (b->opt.compare ? bench_compare_svg(b, b->opt.plot) :
                        bench_svg_write(b, b->opt.plot)) < 0) {
        write_failed("--plot", b->opt.plot);
        rc = -1;
    }
    return rc;
}

void bench_out_fini(struct bench *b)
{
    free(b->rows);
    b->rows = NULL;
    b->nrows = b->rows_cap = 0;
}
