/* config.c - parsing and lookup of the configuration table (see config.h). */
#include "config.h"
#include "error.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

const struct gas_rt_config_def gas_rt_config_defs[GAS_CFG_COUNT] = {
#define GAS_CONFIG_ROW(ID, TYPE, DEF, CHOICES, DOC) \
    [GAS_CFG_##ID] = {#ID, GAS_CFG_T_##TYPE, DEF, CHOICES, DOC},
#include "config_defs.h"
#undef GAS_CONFIG_ROW
};

static const struct range {
    enum gas_rt_config_id id;
    uint64_t lo, hi;
    int zero;           /* 0 is accepted too */
    const char *why;    /* what the bounds are for, or NULL */
} ranges[] = {
#define GAS_CONFIG_RANGE(ID, LO, HI, ZERO, WHY) {GAS_CFG_##ID, LO, HI, ZERO, WHY},
#include "config_ranges.h"
#undef GAS_CONFIG_RANGE
};

static const struct range *range_of(enum gas_rt_config_id id)
{
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
        if (ranges[i].id == id)
            return &ranges[i];
    return NULL;
}

int gas_rt_config_range(enum gas_rt_config_id id, uint64_t *lo_p, uint64_t *hi_p)
{
    const struct range *r = range_of(id);
    if (r == NULL)
        return 0;
    *lo_p = r->lo;
    *hi_p = r->hi;
    return 1;
}

/* A bound as the row's type is written: sizes of whole MiB or GiB with m/g, durations in ns. */
static void bound_text(enum gas_rt_config_type type, uint64_t v, char *buf, size_t cap)
{
    static const char suffix[] = "gm";
    if (type == GAS_CFG_T_TIME) {
        snprintf(buf, cap, "%lluns", (unsigned long long)v);
        return;
    }
    for (int i = 0; type == GAS_CFG_T_SIZE && i < 2; i++) {
        uint64_t unit = 1ull << (10 * (3 - i));
        if (v >= unit && v % unit == 0) {
            snprintf(buf, cap, "%llu%c", (unsigned long long)(v / unit), suffix[i]);
            return;
        }
    }
    snprintf(buf, cap, "%llu", (unsigned long long)v);
}

/* "LO..HI" or "at least LO", with ", or 0" where 0 is accepted too (", or
 * auto (0)" where the row names a word for it). */
static void bounds_text(const struct range *r, char *buf, size_t cap)
{
    const struct gas_rt_config_def *d = &gas_rt_config_defs[r->id];
    char lo[24], hi[24], zero[48] = "";
    bound_text(d->type, r->lo, lo, sizeof lo);
    bound_text(d->type, r->hi, hi, sizeof hi);
    if (r->zero && d->type == GAS_CFG_T_SIZE && d->choices)
        snprintf(zero, sizeof zero, ", or %s (0)", d->choices);
    else if (r->zero)
        snprintf(zero, sizeof zero, ", or 0");
    if (r->hi == UINT64_MAX)
        snprintf(buf, cap, "at least %s%s", lo, zero);
    else
        snprintf(buf, cap, "%s..%s%s", lo, hi, zero);
}

void gas_rt_config_range_text(enum gas_rt_config_id id, char *buf, size_t cap)
{
    const struct range *r = range_of(id);
    char b[96];
    if (r == NULL) {
        snprintf(buf, cap, "%s", "");
        return;
    }
    bounds_text(r, b, sizeof b);
    snprintf(buf, cap, "%s (others are refused%s%s)", b, r->why ? ": " : "",
             r->why ? r->why : "");
}

/* Whether num lies in id's range (any value where id has none). */
static int in_range(const struct range *r, uint64_t num)
{
    return r == NULL || (num == 0 && r->zero) || (num >= r->lo && num <= r->hi);
}

struct value {
    uint64_t num;
    char text[256];
    char source[160];
};

static struct value values[GAS_CFG_COUNT];
static int loaded;

static int find(const char *name)
{
    if (strncmp(name, "GAS_", 4) == 0)
        name += 4;
    for (int i = 0; i < GAS_CFG_COUNT; i++)
        if (strcmp(gas_rt_config_defs[i].name, name) == 0)
            return i;
    return -1;
}

/* Why a string setting's text can never be right, whatever the machine
 * (NULL: it may be); so gas-info refuses it as gas_init would. */
static const char *string_why(enum gas_rt_config_id id, const char *text)
{
    if (id == GAS_CFG_NUMA && gas_rt_config_numa(text, NULL) < 0)
        return "not one of local, interleave, node:N, none";
    return NULL;
}

static gas_status_t set_value(int id, const char *text, const char *source)
{
    const struct gas_rt_config_def *d = &gas_rt_config_defs[id];
    const char *why = NULL;
    uint64_t num;
    if (strlen(text) >= sizeof values[id].text)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_%s='%.40s...' (from %s): longer "
                            "than %zu characters", d->name, text, source,
                            sizeof values[id].text - 1);
    if (gas_rt_config_parse(d->type, d->choices, text, &num, &why) != 0) {
        if (d->type == GAS_CFG_T_ENUM)
            return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_%s='%s' (from %s): %s (%s)",
                                d->name, text, source, why, d->choices);
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_%s='%s' (from %s): %s", d->name,
                            text, source, why);
    }
    if (d->type == GAS_CFG_T_STRING && (why = string_why((enum gas_rt_config_id)id, text)))
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_%s='%s' (from %s): %s", d->name,
                            text, source, why);
    const struct range *r = range_of((enum gas_rt_config_id)id);
    if (!in_range(r, num)) {
        char b[96];
        if (r->hi == UINT64_MAX) {
            strcpy(b, "below ");
            bound_text(d->type, r->lo, b + 6, sizeof b - 6);
        } else {
            strcpy(b, "outside ");
            bounds_text(r, b + 8, sizeof b - 8);
        }
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_%s='%s' (from %s): %s%s%s",
                            d->name, text, source, b, r->why ? ": " : "", r->why ? r->why : "");
    }
    values[id].num = num;
    snprintf(values[id].text, sizeof values[id].text, "%s", text);
    snprintf(values[id].source, sizeof values[id].source, "%s", source);
    return GAS_OK;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[64];
    if (lb >= 63 || la >= 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t cost = toupper((unsigned char)a[i - 1]) != toupper((unsigned char)b[j - 1]);
            size_t best = prev + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

const char *gas_rt_config_nearest(const char *name)
{
    if (strncmp(name, "GAS_", 4) == 0)
        name += 4;
    const char *best = NULL;
    size_t best_d = 4;
    for (int i = 0; i < GAS_CFG_COUNT; i++) {
        size_t d = edit_distance(name, gas_rt_config_defs[i].name);
        if (d < best_d) {
            best_d = d;
            best = gas_rt_config_defs[i].name;
        }
    }
    return best;
}

/*
 * One NAME=VALUE line of the file (comment lines and blank lines already
 * skipped).  A '#' after a blank starts a comment that runs to the line's end.
 */
static gas_status_t load_line(const char *path, int lineno, char *p)
{
    for (char *h = strchr(p, '#'); h != NULL; h = strchr(h + 1, '#')) {
        if (isspace((unsigned char)h[-1])) {
            *h = '\0';
            break;
        }
    }
    /* A file that a shell can also source: "export NAME=VALUE" is NAME=VALUE. */
    if (strncmp(p, "export", 6) == 0 && (p[6] == ' ' || p[6] == '\t'))
        for (p += 6; isspace((unsigned char)*p);)
            p++;
    char *eq = strchr(p, '=');
    char *end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        *--end = '\0';
    if (eq == NULL)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "%s:%d (GAS_CONFIG_FILE): expected "
                            "NAME=VALUE", path, lineno);
    char *nend = eq;
    while (nend > p && isspace((unsigned char)nend[-1]))
        nend--;
    *nend = '\0';
    char *val = eq + 1;
    while (isspace((unsigned char)*val))
        val++;
    int id = find(p);
    char src[160];
    snprintf(src, sizeof src, "file:%s:%d", path, lineno);
    if (id < 0) {
        const char *near = gas_rt_config_nearest(p);
        gas_log_warn("config", "%s: unknown setting '%.64s'%s%s%s", src, p,
                     near ? " (did you mean GAS_" : "", near ? near : "", near ? "?)" : "");
        return GAS_OK;
    }
    return set_value(id, val, src);
}

/*
 * Open GAS_CONFIG_FILE for reading: it must be a regular file (a directory,
 * a FIFO or a device such as /dev/zero is refused: none is a list of
 * settings, and some would block or never end).
 */
static gas_status_t open_file(const char *path, FILE **f_p)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_CONFIG_FILE='%s': cannot open: %s",
                            path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_CONFIG_FILE='%s' is %s, not a regular file of NAME=VALUE lines",
                            path, S_ISDIR(sb.st_mode) ? "a directory" : "a device, FIFO or socket");
    }
    *f_p = fdopen(fd, "r");
    if (*f_p == NULL) {
        int err = errno;
        close(fd);
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "GAS_CONFIG_FILE='%s': %s", path,
                            strerror(err));
    }
    return GAS_OK;
}

/* Lines of any length; a NUL byte in a line is an error naming the line. */
static gas_status_t load_file(const char *path)
{
    FILE *f;
    gas_status_t st = open_file(path, &f);
    if (st != GAS_OK)
        return st;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0;
    while (st == GAS_OK && (len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len) != NULL) {
            st = gas_rt_error(GAS_ERR_INVALID, "gas_init", "%s:%d (GAS_CONFIG_FILE): a NUL byte "
                              "in the line (not a text file?)", path, lineno);
            break;
        }
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (*p != '#' && *p != '\0')
            st = load_line(path, lineno, p);
    }
    if (st == GAS_OK && ferror(f))
        st = gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_CONFIG_FILE='%s': read error after "
                          "line %d: %s", path, lineno, strerror(errno));
    free(line);
    fclose(f);
    return st;
}

/* Settings that must agree with each other (each is in its own range already). */
static gas_status_t check_pairs(void)
{
    const struct value *lo = &values[GAS_CFG_UDP_RTO_MIN], *hi = &values[GAS_CFG_UDP_RTO_MAX];
    if (lo->num > hi->num)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_RTO_MIN='%s' (from %s) is above GAS_UDP_RTO_MAX='%s' (from "
                            "%s): the retransmission timeout's lower clamp cannot exceed its "
                            "upper one", lo->text, lo->source, hi->text, hi->source);
    return GAS_OK;
}

void gas_rt_config_reset(void)
{
    loaded = 0;
}

gas_status_t gas_rt_config_load(void)
{
    if (loaded)
        return GAS_OK;
    for (int i = 0; i < GAS_CFG_COUNT; i++) {
        gas_status_t st = set_value(i, gas_rt_config_defs[i].def, "default");
        if (st != GAS_OK)
            return st;
    }
    /* The log level first, so the rest of loading logs at the chosen level. */
    const char *lvl = getenv("GAS_LOG_LEVEL");
    if (lvl) {
        gas_status_t st = set_value(GAS_CFG_LOG_LEVEL, lvl, "env");
        if (st != GAS_OK)
            return st; /* reported once, here */
        gas_rt_log_level_ = (int)values[GAS_CFG_LOG_LEVEL].num;
    }
    const char *file = getenv("GAS_CONFIG_FILE");
    if (file && *file) {
        gas_status_t st = load_file(file);
        if (st != GAS_OK)
            return st;
    }
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "GAS_", 4) != 0)
            continue;
        const char *eq = strchr(*e, '=');
        if (eq == NULL)
            continue;
        char name[128];
        size_t nlen = (size_t)(eq - *e);
        if (nlen >= sizeof name)
            nlen = sizeof name - 1;
        memcpy(name, *e, nlen);
        name[nlen] = '\0';
        int id = find(name);
        if (id < 0) {
            const char *near = gas_rt_config_nearest(name);
            /* GAS_TEST_* is also the test programs' own prefix: warn only for near misses. */
            if (near == NULL && strncmp(name, "GAS_TEST_", 9) == 0)
                continue;
            gas_log_warn("config", "unknown variable %s ignored%s%s%s", name,
                         near ? " (did you mean GAS_" : "", near ? near : "",
                         near ? "?)" : "");
            continue;
        }
        gas_status_t st = set_value(id, eq + 1, "env");
        if (st != GAS_OK)
            return st;
    }
    gas_status_t st = check_pairs();
    if (st != GAS_OK)
        return st;
    gas_rt_log_level_ = (int)values[GAS_CFG_LOG_LEVEL].num;
    loaded = 1;
    return GAS_OK;
}

uint64_t gas_rt_config_size(enum gas_rt_config_id id)
{
    return values[id].num;
}

uint64_t gas_rt_config_ns(enum gas_rt_config_id id)
{
    return values[id].num;
}

int gas_rt_config_enum(enum gas_rt_config_id id)
{
    return (int)values[id].num;
}

uint64_t gas_rt_config_ppm(enum gas_rt_config_id id)
{
    return values[id].num;
}

const char *gas_rt_config_str(enum gas_rt_config_id id)
{
    return values[id].text;
}

const char *gas_rt_config_source(enum gas_rt_config_id id)
{
    return values[id].source;
}
