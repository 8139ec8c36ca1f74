/* config_parse.c - parsing one configuration value by its type (see config.h).
 * Pure (no table, no logging), so that gasrun links it too. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Index of `word` (length len) in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *word)
{
    int idx = 0;
    size_t wlen = strlen(word);
    for (const char *p = choices; *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == wlen && strncasecmp(p, word, len) == 0)
            return idx;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

/*
 * Length of the decimal number that starts text: digits with at most one
 * '.', at least one digit, then an exponent (e3, E-2) only where digits
 * follow it (else the e is a unit: 1e is an exbibyte).  0 where text does
 * not start with one: a sign, a blank, hex (0x..), nan and inf are refused
 * rather than read the way strtod would.
 */
static size_t decimal_len(const char *text)
{
    size_t i = 0, digits = 0;
    while (isdigit((unsigned char)text[i]))
        i++, digits++;
    if (text[i] == '.')
        for (i++; isdigit((unsigned char)text[i]); i++)
            digits++;
    if (digits == 0)
        return 0;
    if (text[i] == 'e' || text[i] == 'E') {
        size_t j = i + 1;
        if (text[j] == '+' || text[j] == '-')
            j++;
        if (isdigit((unsigned char)text[j])) {
            while (isdigit((unsigned char)text[j]))
                j++;
            i = j;
        }
    }
    return i;
}

static int parse_scaled(const char *text, int is_time, uint64_t *num_p, const char **why_p)
{
    errno = 0;
    char *end;
    size_t len = decimal_len(text);
    double v = len ? strtod(text, &end) : 0;
    if (len == 0 || end != text + len || errno != 0 || !(v >= 0)) {
        *why_p = is_time ? "not a duration (use e.g. 30s, 500ms, 20us)"
                         : "not a size (use e.g. 4096, 512m, 4g)";
        return -1;
    }
    while (*end == ' ')
        end++;
    double scale = 1;
    if (is_time) {
        scale = 1e9;
        if (*end == '\0' || strcasecmp(end, "s") == 0) scale = 1e9;
        else if (strcasecmp(end, "ms") == 0) scale = 1e6;
        else if (strcasecmp(end, "us") == 0) scale = 1e3;
        else if (strcasecmp(end, "ns") == 0) scale = 1;
        else if (strcasecmp(end, "min") == 0) scale = 60e9;
        /* Sizes read m as MiB, so a bare m is refused rather than taken as minutes. */
        else if (strcasecmp(end, "m") == 0) {
            *why_p = "ambiguous unit 'm' (write min for minutes or ms for milliseconds)";
            return -1;
        } else { *why_p = "unknown time unit (use s, ms, us, ns or min)"; return -1; }
    } else {
        char u = (char)tolower((unsigned char)*end);
        const char *rest = *end ? end + 1 : end;
        switch (u) {
        case '\0': scale = 1; break;
        case 'k': scale = 1024.0; break;
        case 'm': scale = 1024.0 * 1024; break;
        case 'g': scale = 1024.0 * 1024 * 1024; break;
        case 't': scale = 1024.0 * 1024 * 1024 * 1024; break;
        case 'p': scale = 1024.0 * 1024 * 1024 * 1024 * 1024; break;
        case 'e': scale = 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024; break;
        default: *why_p = "unknown size unit (use k, m, g, t, p or e)"; return -1;
        }
        if (u && *rest && strcasecmp(rest, "b") != 0 && strcasecmp(rest, "ib") != 0) {
            *why_p = "unknown size unit (use k, m, g, t, p or e)";
            return -1;
        }
    }
    double r = v * scale;
    if (r >= 18446744073709551615.0) {
        *why_p = "too large";
        return -1;
    }
    if (r > 0 && r < 1) {   /* 0.9 (bytes) or 0.5ns would silently become 0 (often: auto) */
        *why_p = is_time ? "below one nanosecond" : "below one byte (a size is whole bytes)";
        return -1;
    }
    *num_p = (uint64_t)r;
    return 0;
}

/* A fraction in [0, 1], written 0.05 or 5%; stored in parts per million. */
static int parse_ratio(const char *text, uint64_t *num_p, const char **why_p)
{
    errno = 0;
    char *end = (char *)text;
    size_t len = decimal_len(text);
    double v = len ? strtod(text, &end) : 0;
    if (end != text + len)   /* strtod read more (hex): refused below */
        end = (char *)text;
    if (end != text && *end == '%' && end[1] == '\0') {
        v /= 100;
        end++;
    }
    if (end == text || *end != '\0' || errno != 0 || !(v >= 0 && v <= 1)) {
        *why_p = "not a fraction between 0 and 1 (use e.g. 0.05 or 5%)";
        return -1;
    }
    *num_p = (uint64_t)(v * 1e6 + 0.5);
    return 0;
}

int gas_rt_config_numa(const char *text, long *node_p)
{
    int word = choice_index("local|interleave|node|none", text);
    if (word >= 0)
        return word == 2 ? -1 : word;   /* "node" needs its number */
    if (strncasecmp(text, "node:", 5) != 0 || !isdigit((unsigned char)text[5]) ||
        strspn(text + 5, "0123456789") != strlen(text + 5))
        return -1;
    errno = 0;
    long id = strtol(text + 5, NULL, 10);
    if (node_p)
        *node_p = errno ? LONG_MAX : id;
    return 2;
}

int gas_rt_config_parse(enum gas_rt_config_type type, const char *choices, const char *text,
                        uint64_t *num_p, const char **why_p)
{
    if (type != GAS_CFG_T_STRING)
        while (*text == ' ' || *text == '\t')   /* blanks before a number or a word */
            text++;
    switch (type) {
    case GAS_CFG_T_SIZE:
        /* A size row may name one word for 0 (e.g. "auto"). */
        if (choices && strcasecmp(text, choices) == 0) {
            *num_p = 0;
            return 0;
        }
        return parse_scaled(text, 0, num_p, why_p);
    case GAS_CFG_T_TIME:
        return parse_scaled(text, 1, num_p, why_p);
    case GAS_CFG_T_UINT: {
        /* Decimal only: 05000 is 5000 (not octal 2560); 0x100 and -1 are refused. */
        char *end;
        errno = 0;
        unsigned long long v = strtoull(text, &end, 10);
        if (!isdigit((unsigned char)text[0]) || *end != '\0' || errno != 0) {
            *why_p = "not a non-negative decimal integer";
            return -1;
        }
        *num_p = v;
        return 0;
    }
    case GAS_CFG_T_BOOL: {
        int t = choice_index("y|yes|1|on|true", text);
        int f = choice_index("n|no|0|off|false", text);
        if (t < 0 && f < 0) {
            *why_p = "not a boolean (use y/yes/1/on/true or n/no/0/off/false, any case)";
            return -1;
        }
        *num_p = t >= 0;
        return 0;
    }
    case GAS_CFG_T_ENUM: {
        int i = choice_index(choices, text);
        if (i < 0) {
            *why_p = "not one of the allowed values";
            return -1;
        }
        *num_p = (uint64_t)i;
        return 0;
    }
    case GAS_CFG_T_STRING:
        *num_p = 0;
        return 0;
    case GAS_CFG_T_RATIO:
        return parse_ratio(text, num_p, why_p);
    }
    *why_p = "unknown type";
    return -1;
}
