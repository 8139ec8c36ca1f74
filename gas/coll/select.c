/*
 * select.c - which algorithm a collective runs.
 *
 * The algorithms of a collective are the choices of its GAS_COLL_<NAME>
 * config row (runtime/config_defs.h), in that order, "auto" first; the
 * builders below follow the same order.  A call runs, in this order of
 * precedence: the algorithm forced with gas_coll_set_algorithm(), the one
 * named by GAS_COLL_<NAME>, or the tuning table's choice (the last matching
 * row wins; format in docs/collectives.md).  A hierarchical algorithm only
 * runs on a team that spans two nodes or more; elsewhere the table decides.
 * Rows may be limited to teams whose ranks have CPUs of their own or share
 * them (the cpus field; team.c decides which a team is, GAS_COLL_CPUS
 * overrides): the fastest algorithm of a size is not the same on the two.
 */
#include "coll.h"
#include "info.h"
#include "runtime/config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_ALGS 8

static const char builtin_table[] =
#include "coll_tuning.h"
    ;

static const char *const coll_names[GAS_COLL_COUNT] = {
    "barrier", "broadcast", "reduce", "allreduce", "allgather", "allgatherv",
    "alltoall", "alltoallv", "reduce_scatter", "gather", "scatter", "scan", "exscan",
    "gatherv", "scatterv",
};

static const enum gas_rt_config_id cfg_of[GAS_COLL_COUNT] = {
    GAS_CFG_COLL_BARRIER, GAS_CFG_COLL_BROADCAST, GAS_CFG_COLL_REDUCE, GAS_CFG_COLL_ALLREDUCE,
    GAS_CFG_COLL_ALLGATHER, GAS_CFG_COLL_ALLGATHERV, GAS_CFG_COLL_ALLTOALL,
    GAS_CFG_COLL_ALLTOALLV, GAS_CFG_COLL_REDUCE_SCATTER, GAS_CFG_COLL_GATHER,
    GAS_CFG_COLL_SCATTER, GAS_CFG_COLL_SCAN, GAS_CFG_COLL_EXSCAN, GAS_CFG_COLL_GATHERV,
    GAS_CFG_COLL_SCATTERV,
};

/* The builders, in the order of each row's choices (index 0, auto, has none). */
gas_status_t gas_co_barrier_dissemination(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_barrier_hier(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_bcast_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_bcast_scatter_allgather(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_bcast_hier(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_reduce_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_reduce_rs_gather(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_reduce_hier(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_rd(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_rabenseifner(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_ring(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_one_shot(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_two_shot(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allreduce_hier(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allgather_rd(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allgather_bruck(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_allgather_ring(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_alltoall_pairwise(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_alltoall_bruck(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_alltoall_scattered(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_rs_halving(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_rs_ring(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_gather_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_gather_linear(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scatter_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scatter_linear(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scan_rd(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scan_chain(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_exscan_rd(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_exscan_chain(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_gatherv_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_gatherv_linear(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scatterv_binomial(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);
gas_status_t gas_co_scatterv_linear(struct gas_co_sched *, const struct gas_co_grp *, const struct gas_co_args *);

static const gas_co_build_fn builders[GAS_COLL_COUNT][MAX_ALGS] = {
    [GAS_COLL_BARRIER] = {NULL, gas_co_barrier_dissemination, gas_co_barrier_hier},
    [GAS_COLL_BROADCAST] = {NULL, gas_co_bcast_binomial, gas_co_bcast_scatter_allgather,
                            gas_co_bcast_hier},
    [GAS_COLL_REDUCE] = {NULL, gas_co_reduce_binomial, gas_co_reduce_rs_gather,
                         gas_co_reduce_hier},
    [GAS_COLL_ALLREDUCE] = {NULL, gas_co_allreduce_rd, gas_co_allreduce_rabenseifner,
                            gas_co_allreduce_ring, gas_co_allreduce_one_shot,
                            gas_co_allreduce_two_shot,
                            gas_co_allreduce_hier},
    [GAS_COLL_ALLGATHER] = {NULL, gas_co_allgather_rd, gas_co_allgather_bruck,
                            gas_co_allgather_ring},
    [GAS_COLL_ALLGATHERV] = {NULL, gas_co_allgather_rd, gas_co_allgather_bruck,
                             gas_co_allgather_ring},
    [GAS_COLL_ALLTOALL] = {NULL, gas_co_alltoall_pairwise, gas_co_alltoall_bruck,
                           gas_co_alltoall_scattered},
    [GAS_COLL_ALLTOALLV] = {NULL, gas_co_alltoall_pairwise, gas_co_alltoall_scattered},
    [GAS_COLL_REDUCE_SCATTER] = {NULL, gas_co_rs_halving, gas_co_rs_ring},
    [GAS_COLL_GATHER] = {NULL, gas_co_gather_binomial, gas_co_gather_linear},
    [GAS_COLL_SCATTER] = {NULL, gas_co_scatter_binomial, gas_co_scatter_linear},
    [GAS_COLL_SCAN] = {NULL, gas_co_scan_rd, gas_co_scan_chain},
    [GAS_COLL_EXSCAN] = {NULL, gas_co_exscan_rd, gas_co_exscan_chain},
    [GAS_COLL_GATHERV] = {NULL, gas_co_gatherv_binomial, gas_co_gatherv_linear},
    [GAS_COLL_SCATTERV] = {NULL, gas_co_scatterv_binomial, gas_co_scatterv_linear},
};

static char alg_names[GAS_COLL_COUNT][MAX_ALGS][32];
static int nalgs[GAS_COLL_COUNT];
static int forced[GAS_COLL_COUNT];

struct rule {
    int coll, rmin, rmax, nodes; /* nodes: 0 any, 1 one node, 2 several */
    int cpus;                    /* 0 any, 1 own CPUs, 2 shared CPUs */
    uint64_t from;
    int alg;
};
static struct rule *rules;
static size_t nrules;
static _Atomic int npicks[GAS_COLL_COUNT];   /* step functions made from the rules (below) */

/* Split each row's choices into names (once; the table is constant). */
static void load_names(void)
{
    if (nalgs[0])
        return;
    for (int c = 0; c < GAS_COLL_COUNT; c++) {
        const char *p = gas_rt_config_defs[cfg_of[c]].choices;
        int i = 0;
        while (*p && i < MAX_ALGS) {
            size_t len = strcspn(p, "|");
            snprintf(alg_names[c][i++], sizeof alg_names[c][0], "%.*s", (int)len, p);
            p += len + (p[len] == '|');
        }
        nalgs[c] = i;
    }
}

GAS_EXPORT const char *gas_coll_name(gas_coll_t coll)
{
    return (unsigned)coll < GAS_COLL_COUNT ? coll_names[coll] : NULL;
}

const char *gas_co_alg_name(gas_coll_t c, int alg)
{
    load_names();
    return (unsigned)c < GAS_COLL_COUNT && alg >= 0 && alg < nalgs[c] ? alg_names[c][alg] : NULL;
}

GAS_EXPORT const char *gas_coll_algorithm(gas_coll_t coll, int i)
{
    return gas_co_alg_name(coll, i);
}

int gas_co_alg_count(gas_coll_t c)
{
    load_names();
    return nalgs[c];
}

int gas_co_alg_is_hier(gas_coll_t c, int alg)
{
    const char *n = gas_co_alg_name(c, alg);
    return n && strcmp(n, "hierarchical") == 0;
}

gas_co_build_fn gas_co_builder(gas_coll_t c, int alg)
{
    return builders[c][alg];
}

static int alg_index(int c, const char *name, size_t len)
{
    load_names();
    for (int i = 0; i < nalgs[c]; i++)
        if (strlen(alg_names[c][i]) == len && strncmp(alg_names[c][i], name, len) == 0)
            return i;
    return -1;
}

/* Not behind the API gate: it writes only this file's table, which gas_finalize does not release. */
GAS_EXPORT gas_status_t gas_coll_set_algorithm(gas_coll_t coll, const char *algorithm)
{
    const char *call = "gas_coll_set_algorithm";
    if (gas_gs_phase() != GAS_GS_UP)
        return gas_rt_error(GAS_ERR_NOT_INIT, call, "libgas is %s; to force an algorithm from "
                            "the start, set GAS_COLL_<NAME> (e.g. GAS_COLL_ALLREDUCE=ring)",
                            gas_gs_phase_why());
    if ((unsigned)coll >= GAS_COLL_COUNT)
        return gas_rt_error(GAS_ERR_INVALID, call, "unknown collective %d", (int)coll);
    if (algorithm == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "algorithm is NULL");
    int i = alg_index(coll, algorithm, strlen(algorithm));
    if (i < 0)
        return gas_rt_error(GAS_ERR_INVALID, call, "%s has no algorithm \"%s\" (it has: %s)",
                            coll_names[coll], algorithm, gas_rt_config_defs[cfg_of[coll]].choices);
    forced[coll] = i;
    return GAS_OK;
}

/* ------------------------------------------------------------------------ */
/* The tuning table                                                          */
/* ------------------------------------------------------------------------ */

#define FIELDS 7        /* a row's 6 at most, and one more to name as extra */
#define FIELD_MAX 63    /* characters in one field */

#define RANKS_OPEN (1 << 30)          /* rmax of "*" and "A-": no upper end */
#define RANKS_MAX (RANKS_OPEN - 1)     /* the largest rank count a rule may name */

/* One rank count of a ranks field, in 1 .. RANKS_MAX; *end after it.  0, -1
 * (no number there) or -2 (a number out of that range, however long). */
static int parse_count(const char *w, char **end, int *v)
{
    if (!isdigit((unsigned char)*w))
        return -1;
    errno = 0;
    long long a = strtoll(w, end, 10);
    if (errno == ERANGE || a < 1 || a > RANKS_MAX)
        return -2;
    *v = (int)a;
    return 0;
}

/* A ranks field: "*", "N", "A-B" or "A-" into [*lo, *hi]; 0, -1 (bad form)
 * or -2 (a count out of 1 .. RANKS_MAX). */
static int parse_ranks(const char *w, int *lo, int *hi)
{
    char *end;
    int a, b, st;
    if (strcmp(w, "*") == 0) {
        *lo = 1;
        *hi = RANKS_OPEN;
        return 0;
    }
    if ((st = parse_count(w, &end, &a)) != 0)
        return st;
    if (*end == '\0') {
        *lo = *hi = a;
        return 0;
    }
    if (*end != '-')
        return -1;
    const char *rest = end + 1;
    if (*rest == '\0') {
        *lo = a;
        *hi = RANKS_OPEN;
        return 0;
    }
    if ((st = parse_count(rest, &end, &b)) != 0)
        return st;
    if (*end != '\0' || b < a)
        return -1;
    *lo = a;
    *hi = b;
    return 0;
}

static int parse_bytes(const char *w, uint64_t *v)
{
    const char *why;
    return gas_rt_config_parse(GAS_CFG_T_SIZE, NULL, w, v, &why);
}

/* The collectives' names, "barrier, broadcast, ...", for an error message. */
static const char *coll_list(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int c = 0; c < GAS_COLL_COUNT && used < cap; c++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", c ? ", " : "", coll_names[c]);
    return buf;
}

/*
 * One row's n fields (n >= 1) into *r; NULL, or why the row is bad (in why,
 * naming the bad field; the algorithms are listed only when the algorithm is
 * the bad field).  "auto" is no row's algorithm: it means this table.
 */
static const char *parse_row(char w[][FIELD_MAX + 1], int n, struct rule *r, char *why,
                             size_t cap)
{
    char list[160];
    int st;
    r->coll = -1;
    for (int c = 0; c < GAS_COLL_COUNT; c++)
        if (strcmp(w[0], coll_names[c]) == 0)
            r->coll = c;
    if (n < 5)
        snprintf(why, cap, "%d field%s, expected 5 or 6: collective ranks nodes from algorithm "
                 "[cpus]", n, n == 1 ? "" : "s");
    else if (n > 6)
        snprintf(why, cap, "extra field '%s' after the cpus (expected 5 or 6 fields: collective "
                 "ranks nodes from algorithm [cpus])", w[6]);
    else if (n == 6 && strcmp(w[5], "*") && strcmp(w[5], "own") && strcmp(w[5], "shared"))
        snprintf(why, cap, "bad cpus '%s' (*, own or shared)", w[5]);
    else if (r->coll < 0)
        snprintf(why, cap, "unknown collective '%s' (one of: %s)", w[0],
                 coll_list(list, sizeof list));
    else if ((st = parse_ranks(w[1], &r->rmin, &r->rmax)) == -2)
        snprintf(why, cap, "ranks '%s' out of range (a rank count is 1 .. %d)", w[1],
                 RANKS_MAX);
    else if (st != 0)
        snprintf(why, cap, "bad ranks '%s' (*, N, A-B or A-)", w[1]);
    else if (strcmp(w[2], "*") && strcmp(w[2], "1") && strcmp(w[2], "multi"))
        snprintf(why, cap, "bad nodes '%s' (*, 1 or multi)", w[2]);
    else if (parse_bytes(w[3], &r->from) != 0)
        snprintf(why, cap, "bad byte count '%s' (e.g. 0, 512, 16k, 1m)", w[3]);
    else if ((r->alg = alg_index(r->coll, w[4], strlen(w[4]))) <= 0) {
        const char *choices = gas_rt_config_defs[cfg_of[r->coll]].choices;
        const char *algs = strchr(choices, '|') ? strchr(choices, '|') + 1 : choices;
        if (r->alg == 0)
            snprintf(why, cap, "algorithm 'auto' means this table; a row names one of %s's "
                     "algorithms: %s", coll_names[r->coll], algs);
        else
            snprintf(why, cap, "unknown algorithm '%s' for %s (one of: %s)", w[4],
                     coll_names[r->coll], algs);
    } else
        return NULL;
    return why;
}

/*
 * The fields of one line of any length (p, len; a '#' ends it) into w, at
 * most FIELDS of them; *n_p: how many there are in all.  NULL, or why the
 * line is bad (in why): a field too long to be any field's value.
 */
static const char *split_line(const char *p, size_t len, char w[][FIELD_MAX + 1], int *n_p,
                              char *why, size_t cap)
{
    static const char space[] = " \t\r\v\f";
    size_t i = 0;
    int n = 0;
    while (i < len && p[i] != '#') {
        i += strspn(p + i, space);
        size_t k = 0;
        while (i + k < len && p[i + k] != '#' && !strchr(space, p[i + k]))
            k++;
        if (k == 0)
            break;
        if (k > FIELD_MAX) {
            snprintf(why, cap, "field %d ('%.20s...') is %zu characters long (at most %d)",
                     n + 1, p + i, k, FIELD_MAX);
            return why;
        }
        if (n < FIELDS)
            snprintf(w[n], FIELD_MAX + 1, "%.*s", (int)k, p + i);
        n++;
        i += k;
    }
    *n_p = n;
    return NULL;
}

/*
 * One line of a table (len bytes at p, no newline): 0 with *n_p = 0 for a
 * blank or comment line, 0 with *r filled for a good row, -1 with why
 * otherwise.
 */
static int table_line(const char *p, size_t len, struct rule *r, int *n_p, char *why, size_t cap)
{
    char w[FIELDS][FIELD_MAX + 1];
    *r = (struct rule){0};
    *n_p = 0;
    if (memchr(p, '\0', len)) {
        snprintf(why, cap, "a NUL byte (not a text file?)");
        return -1;
    }
    if (split_line(p, len, w, n_p, why, cap) != NULL ||
        (*n_p > 0 && parse_row(w, *n_p, r, why, cap) != NULL))
        return -1;
    if (*n_p > 0) {
        r->nodes = w[2][0] == '*' ? 0 : w[2][0] == '1' ? 1 : 2;
        r->cpus = *n_p < 6 || w[5][0] == '*' ? 0 : w[5][0] == 'o' ? 1 : 2;
    }
    return 0;
}

/*
 * Walk a table of tlen bytes: each good row goes to add(r, arg) when add is
 * given.  Returns 0, or the number of the first bad line (why says what is
 * wrong with it), or -1 when add failed.
 */
static int walk_table(const char *text, size_t tlen, int (*add)(const struct rule *, void *),
                      void *arg, char *why, size_t cap)
{
    int line = 0;
    for (const char *p = text, *end = text + tlen; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct rule r;
        int n;
        line++;
        if (table_line(p, len, &r, &n, why, cap) != 0)
            return line;
        p += len + (nl != NULL);
        if (n > 0 && add && add(&r, arg) != 0)
            return -1;
    }
    return 0;
}

int gas_co_table_check(const char *text, size_t len, char *why, size_t cap)
{
    return walk_table(text, len, NULL, NULL, why, cap);
}

/* Append r to the rules in force (walk_table's add). */
static int add_rule(const struct rule *r, void *arg)
{
    size_t *cap = arg;
    if (nrules == *cap) {
        size_t ncap = *cap ? 2 * *cap : 32;
        struct rule *nr = realloc(rules, ncap * sizeof *nr);
        if (nr == NULL)
            return -1;
        rules = nr;
        *cap = ncap;
    }
    rules[nrules++] = *r;
    return 0;
}

/* Parse a table of tlen bytes; raises naming `where` and the line on a bad row. */
static gas_status_t parse_table(const char *text, size_t tlen, const char *where)
{
    for (int c = 0; c < GAS_COLL_COUNT; c++)
        atomic_store(&npicks[c], 0);
    free(rules);
    rules = NULL;
    nrules = 0;
    size_t cap = 0;
    char why[640];
    int bad = walk_table(text, tlen, add_rule, &cap, why, sizeof why);
    if (bad > 0)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "tuning table %s, line %d: %s",
                            where, bad, why);
    if (bad < 0)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the tuning table");
    return GAS_OK;
}

/* The whole file (GAS_COLL_TUNING) into *text_p (malloc'ed) and *len_p; a
 * path that is not a regular file is refused (a directory reads as nothing). */
static gas_status_t read_table(const char *file, char **text_p, size_t *len_p)
{
    const char *call = "gas_init";
    FILE *f = fopen(file, "r");
    if (f == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "cannot open GAS_COLL_TUNING=%s: %s", file,
                            strerror(errno));
    struct stat sb;
    gas_status_t st = GAS_OK;
    char *text = NULL, buf[4096];
    size_t len = 0, n;
    FILE *m = NULL;
    if (fstat(fileno(f), &sb) != 0) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "cannot stat GAS_COLL_TUNING=%s: %s", file,
                          strerror(errno));
        goto err_close_file;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "GAS_COLL_TUNING=%s is %s, not a regular file "
                          "(name a tuning table file)", file,
                          S_ISDIR(sb.st_mode) ? "a directory" : "a special file");
        goto err_close_file;
    }
    if ((m = open_memstream(&text, &len)) == NULL) {
        st = gas_rt_error(GAS_ERR_NOMEM, call, "no memory to read %s", file);
        goto err_close_file;
    }
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, m);
    int bad = ferror(f), err = errno;
    if (fclose(m) != 0 || text == NULL) {
        st = gas_rt_error(GAS_ERR_NOMEM, call, "no memory to read %s", file);
        goto err_free_text;
    }
    if (bad) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "cannot read GAS_COLL_TUNING=%s: %s", file,
                          strerror(err));
        goto err_free_text;
    }
    fclose(f);
    *text_p = text;
    *len_p = len;
    return GAS_OK;
err_free_text:
    free(text);
err_close_file:
    fclose(f);
    return st;
}

gas_status_t gas_co_select_init(void)
{
    load_names();
    memset(forced, 0, sizeof forced);
    const char *file = gas_rt_config_str(GAS_CFG_COLL_TUNING);
    if (file == NULL || file[0] == '\0')
        return parse_table(builtin_table, sizeof builtin_table - 1, "(built in)");
    char *text = NULL;
    size_t len = 0;
    gas_status_t st = read_table(file, &text, &len);
    if (st != GAS_OK)
        return st;
    st = parse_table(text, len, file);
    free(text);
    return st;
}

void gas_co_select_fini(void)
{
    for (int c = 0; c < GAS_COLL_COUNT; c++)
        atomic_store(&npicks[c], 0);
    free(rules);
    rules = NULL;
    nrules = 0;
}

/* The table's answer: the last rule that matches wins; algorithm 1 when none does. */
static int scan_rules(gas_coll_t c, size_t bytes, int n, int nnodes, int shared, int can_hier)
{
    int best = 0;
    for (size_t i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (r->coll != (int)c || n < r->rmin || n > r->rmax || bytes < r->from)
            continue;
        if ((r->nodes == 1 && nnodes > 1) || (r->nodes == 2 && nnodes < 2))
            continue;
        if ((r->cpus == 1 && shared) || (r->cpus == 2 && !shared))
            continue;
        if (!can_hier && gas_co_alg_is_hier(c, r->alg))
            continue;
        best = r->alg;
    }
    return best ? best : 1;
}

/*
 * The table read for one team shape: for a collective, team size, node
 * count, shared CPUs or not, and whether hierarchical algorithms may be used, the answer only
 * changes at the `from` of a matching rule, so it is a short step function
 * of the byte count.  Made on first use of the shape (the scan over the
 * whole table cost about as much as a 2-rank barrier on an idle machine),
 * never changed until the table is read again at gas_init.
 */
#define PICK_SHAPES 8    /* shapes remembered per collective */
#define PICK_STEPS 16    /* steps of one step function */

struct pick {
    int n, nnodes, shared, can_hier, nsteps;
    uint64_t from[PICK_STEPS];   /* ascending; from[0] == 0 */
    int alg[PICK_STEPS];
};

static struct pick picks[GAS_COLL_COUNT][PICK_SHAPES];
static pthread_mutex_t pick_lock = PTHREAD_MUTEX_INITIALIZER;

/* Make the step function of a shape in *p; 0, or -1 when it has too many steps. */
static int pick_build(struct pick *p, gas_coll_t c, int n, int nnodes, int shared, int can_hier)
{
    *p = (struct pick){.n = n, .nnodes = nnodes, .shared = shared, .can_hier = can_hier};
    uint64_t at[PICK_STEPS];
    int k = 0;
    at[k++] = 0;
    for (size_t i = 0; i < nrules; i++) {
        uint64_t f = rules[i].from;
        int seen = 0;
        for (int j = 0; j < k; j++)
            seen |= at[j] == f;
        if (rules[i].coll != (int)c || seen)
            continue;
        if (k == PICK_STEPS)
            return -1;
        int j = k++;
        for (; j > 0 && at[j - 1] > f; j--)
            at[j] = at[j - 1];
        at[j] = f;
    }
    for (int j = 0; j < k; j++) {
        int alg = scan_rules(c, (size_t)at[j], n, nnodes, shared, can_hier);
        if (p->nsteps > 0 && p->alg[p->nsteps - 1] == alg)
            continue;
        p->from[p->nsteps] = at[j];
        p->alg[p->nsteps++] = alg;
    }
    return 0;
}

/* The table's answer through the remembered step functions (scan when they are full). */
static int table_pick(gas_coll_t c, size_t bytes, int n, int nnodes, int shared, int can_hier)
{
    int have = atomic_load_explicit(&npicks[c], memory_order_acquire);
    for (int i = 0; i < have; i++) {
        const struct pick *p = &picks[c][i];
        if (p->n != n || p->nnodes != nnodes || p->shared != shared || p->can_hier != can_hier)
            continue;
        int j = p->nsteps - 1;
        while (j > 0 && bytes < p->from[j])
            j--;
        return p->alg[j];
    }
    pthread_mutex_lock(&pick_lock);
    int i = atomic_load_explicit(&npicks[c], memory_order_relaxed);
    if (i < PICK_SHAPES && pick_build(&picks[c][i], c, n, nnodes, shared, can_hier) == 0)
        atomic_store_explicit(&npicks[c], i + 1, memory_order_release);
    pthread_mutex_unlock(&pick_lock);
    return scan_rules(c, bytes, n, nnodes, shared, can_hier);
}

int gas_co_select(gas_coll_t c, size_t bytes, int n, int nnodes, int shared, int hier)
{
    int can_hier = hier && nnodes >= 2;
    int alg = forced[c] ? forced[c] : gas_rt_config_enum(cfg_of[c]);
    if (alg > 0 && (can_hier || !gas_co_alg_is_hier(c, alg)))
        return alg;
    return table_pick(c, bytes, n, nnodes, shared, can_hier);
}

gas_status_t gas_co_build_sub(struct gas_co_sched *s, gas_coll_t c, const struct gas_co_grp *g,
                              const struct gas_co_args *a, size_t bytes, int multinode)
{
    int alg = gas_co_select(c, bytes, g->n, multinode ? 2 : 1, s->team->cpus_shared, 0);
    return builders[c][alg](s, g, a);
}

static gas_status_t api_coll_choice(gas_team_t team, gas_coll_t coll, size_t bytes,
                                    const char **algorithm_p)
{
    const char *call = "gas_coll_choice";
    gas_status_t st = gas_co_team_check(call, team);
    if (st != GAS_OK)
        return st;
    if ((unsigned)coll >= GAS_COLL_COUNT)
        return gas_rt_error(GAS_ERR_INVALID, call, "unknown collective %d", (int)coll);
    if (algorithm_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "algorithm_p is NULL");
    int hier = coll == GAS_COLL_BARRIER || coll == GAS_COLL_BROADCAST ||
               coll == GAS_COLL_REDUCE || coll == GAS_COLL_ALLREDUCE;
    *algorithm_p = gas_co_alg_name(coll, gas_co_select(coll, bytes, team->size, team->nnodes,
                                                       team->cpus_shared, hier));
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_coll_choice(gas_team_t team, gas_coll_t coll, size_t bytes,
                                        const char **algorithm_p)
{
    GAS_GS_GATED("gas_coll_choice", api_coll_choice(team, coll, bytes, algorithm_p));
}

/* The configuration and the tuning table, for a tool with no job running
 * (gas-info); gas_co_select_fini undoes it, failed or not. */
static gas_status_t load_for_tool(void)
{
    gas_status_t st = gas_rt_config_load();
    return st == GAS_OK ? gas_co_select_init() : st;
}

gas_status_t gas_co_tuning_check(void)
{
    gas_status_t st = load_for_tool();
    gas_co_select_fini();
    return st;
}

/* The table's rules, one a line, in its order. */
static void print_rules(FILE *f)
{
    fprintf(f, "  rules (last match wins):\n");
    for (size_t i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        char ranks[32];
        if (r->rmin == 1 && r->rmax == RANKS_OPEN)
            snprintf(ranks, sizeof ranks, "*");
        else if (r->rmax == RANKS_OPEN)
            snprintf(ranks, sizeof ranks, "%d-", r->rmin);
        else if (r->rmin == r->rmax)
            snprintf(ranks, sizeof ranks, "%d", r->rmin);
        else
            snprintf(ranks, sizeof ranks, "%d-%d", r->rmin, r->rmax);
        fprintf(f, "    %-15s %-6s %-6s %-8llu %-22s %s\n", coll_names[r->coll], ranks,
                r->nodes == 0 ? "*" : r->nodes == 1 ? "1" : "multi",
                (unsigned long long)r->from, alg_names[r->coll][r->alg],
                r->cpus == 0 ? "*" : r->cpus == 1 ? "own" : "shared");
    }
}

gas_status_t gas_co_info(FILE *f)
{
    gas_status_t st = load_for_tool();
    if (st != GAS_OK) {
        gas_co_select_fini();
        return st;
    }
    const char *file = gas_rt_config_str(GAS_CFG_COLL_TUNING);
    fprintf(f, "collectives (tuning table: %s):\n", file && file[0] ? file : "built in, configs/coll-tuning.conf");
    for (int c = 0; c < GAS_COLL_COUNT; c++) {
        int env = gas_rt_config_enum(cfg_of[c]);
        fprintf(f, "  %-15s algorithms:", coll_names[c]);
        for (int i = 1; i < nalgs[c]; i++)
            fprintf(f, " %s", alg_names[c][i]);
        if (env > 0)
            fprintf(f, "\n  %-15s forced by GAS_COLL_%s=%s\n", "", gas_rt_config_defs[cfg_of[c]].name + 5,
                    alg_names[c][env]);
        else
            fprintf(f, "\n");
        static const size_t sizes[] = {8, 1024, 16384, 65536, 1048576};
        static const char *const labels[] = {"8", "1k", "16k", "64k", "1m"};
        for (int shared = 0; shared < 2; shared++) {
            fprintf(f, "  %-15s choice at 1 node, %s CPUs, 2/4/8 ranks:", "",
                    shared ? "shared" : "own");
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                fprintf(f, " %s:", labels[k]);
                for (int n = 2; n <= 8; n *= 2)
                    fprintf(f, "%s%s", n > 2 ? "/" : "",
                            alg_names[c][gas_co_select((gas_coll_t)c, sizes[k], n, 1, shared, 1)]);
            }
            fprintf(f, "\n");
        }
    }
    print_rules(f);
    gas_co_select_fini();
    return GAS_OK;
}
