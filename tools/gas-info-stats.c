/*
 * gas-info-stats.c - gas-info --stats FILE...: the counters that ranks wrote
 * at gas_finalize with GAS_STATS_FILE (transport/stats_file.c, "gas-stats 1"
 * lines of name=value fields), printed as one table: a row per (rank, peer)
 * in the order read, each rank's totals after its peers, and a last line with
 * the job's sums.  Other lines in the files are skipped.
 */
#include "gas-info.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fields shown, in column order: name in the file, heading, divisor. */
static const struct col {
    const char *key, *head;
    double div;
} cols[] = {
    {"datagrams_sent", "sent", 1},      {"bytes_sent", "sent KiB", 1024},
    {"datagrams_received", "recv", 1},  {"bytes_received", "recv KiB", 1024},
    {"retransmits", "retx", 1},         {"duplicates", "dup", 1},
    {"bad_datagrams", "bad", 1},        {"rejected", "rej", 1},
    {"srtt_ns", "srtt us", 1000},       {"rdma_work_requests", "rdma WRs", 1},
    {"rdma_bytes", "rdma KiB", 1024},   {"rdma_errors", "rdma err", 1},
    {"upgraded_peers", "upgraded", 1},
};
#define NCOLS (sizeof cols / sizeof cols[0])

/* The value of key in a line of name=value fields (copied into out); 0 when absent. */
static int field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    for (const char *p = line; (p = strstr(p, key)) != NULL; p += klen) {
        if ((p != line && p[-1] != ' ') || p[klen] != '=')
            continue;
        const char *v = p + klen + 1;
        size_t n = strcspn(v, " \n");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, v, n);
        out[n] = 0;
        return 1;
    }
    return 0;
}

static void print_row(const char *rank, const char *peer, const char *path, const char *route,
                      const double *v)
{
    printf("%-5s %-6s %-5s %-10s", rank, peer, path, route);
    for (size_t c = 0; c < NCOLS; c++)
        printf(cols[c].div == 1 ? " %9.0f" : " %9.1f", v[c] / cols[c].div);
    printf("\n");
}

int gas_info_stats(int nfiles, char **files)
{
    if (nfiles == 0) {
        fprintf(stderr, "gas-info: --stats needs the files GAS_STATS_FILE named (e.g. "
                "gas-info --stats /tmp/stats.*)\n");
        return 2;
    }
    printf("%-5s %-6s %-5s %-10s", "rank", "peer", "path", "rdma route");
    for (size_t c = 0; c < NCOLS; c++)
        printf(" %9s", cols[c].head);
    printf("\n");
    double sum[NCOLS] = {0};
    int rc = 0, rows = 0, ranks = 0;
    for (int i = 0; i < nfiles; i++) {
        FILE *f = fopen(files[i], "r");
        if (f == NULL) {
            fprintf(stderr, "gas-info: --stats: cannot read %s: %s\n", files[i], strerror(errno));
            rc = 1;
            continue;
        }
        char line[2048];
        int found = 0;
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "gas-stats 1 ", 12) != 0)
                continue;
            char rank[16] = "?", peer[16] = "?", path[16] = "-", route[16] = "-", val[32];
            double v[NCOLS];
            field(line, "rank", rank, sizeof rank);
            field(line, "peer", peer, sizeof peer);
            field(line, "transport", path, sizeof path);
            field(line, "route", route, sizeof route);
            int total = strcmp(peer, "total") == 0;
            for (size_t c = 0; c < NCOLS; c++) {
                v[c] = field(line, cols[c].key, val, sizeof val) ? strtod(val, NULL) : 0;
                if (total)
                    sum[c] += v[c];
            }
            print_row(rank, peer, path, route, v);
            found++;
            ranks += total;
        }
        fclose(f);
        if (!found) {
            fprintf(stderr, "gas-info: --stats: %s has no gas-stats lines (written by "
                    "GAS_STATS_FILE at gas_finalize)\n", files[i]);
            rc = 1;
        }
        rows += found;
    }
    if (ranks > 1) {
        for (size_t c = 0; c < NCOLS; c++)
            if (strcmp(cols[c].key, "srtt_ns") == 0)
                sum[c] = 0; /* a round trip does not add up */
        print_row("job", "total", "all", "-", sum);
        printf("(job: the sums of %d ranks' totals)\n", ranks);
    }
    return rows ? rc : 1;
}
