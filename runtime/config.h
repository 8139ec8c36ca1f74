/*
 * config.h - the configuration table (see config_defs.h for the rows).
 *
 * gas_rt_config_load() reads defaults, then GAS_CONFIG_FILE, then GAS_*
 * environment variables, remembering where each value came from.  Unknown
 * GAS_* variables draw a warning with the nearest known name.
 */
#ifndef GAS_RT_CONFIG_H
#define GAS_RT_CONFIG_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

enum gas_rt_config_type {
    GAS_CFG_T_SIZE, GAS_CFG_T_UINT, GAS_CFG_T_BOOL, GAS_CFG_T_TIME, GAS_CFG_T_ENUM,
    GAS_CFG_T_STRING, GAS_CFG_T_RATIO
};

enum gas_rt_config_id {
#define GAS_CONFIG_ROW(ID, TYPE, DEF, CHOICES, DOC) GAS_CFG_##ID,
#include "config_defs.h"
#undef GAS_CONFIG_ROW
    GAS_CFG_COUNT
};

struct gas_rt_config_def {
    const char *name;        /* without the GAS_ prefix */
    enum gas_rt_config_type type;
    const char *def;
    const char *choices;
    const char *doc;
};

extern const struct gas_rt_config_def gas_rt_config_defs[GAS_CFG_COUNT];

/*
 * Load the table (idempotent until gas_rt_config_reset).  Returns
 * GAS_ERR_INVALID with a message naming the variable on a bad value.
 */
gas_status_t gas_rt_config_load(void);
void gas_rt_config_reset(void);

/*
 * GAS_NUMA's value, in any case: 0 local, 1 interleave, 2 node:N (*node_p =
 * N, decimal digits), 3 none (alloc/place.h enum gas_al_numa's order); -1
 * for anything else.  The configuration refuses -1 when it is read;
 * alloc/place.c plans from the same reading.
 */
int gas_rt_config_numa(const char *text, long *node_p);

/* Parse one value of a given type; 0 on success, -1 with *why_p set. */
int gas_rt_config_parse(enum gas_rt_config_type type, const char *choices, const char *text,
                        uint64_t *num_p, const char **why_p);

/* Typed readers (the table must be loaded). */
uint64_t gas_rt_config_size(enum gas_rt_config_id id);   /* SIZE, UINT, BOOL */
uint64_t gas_rt_config_ns(enum gas_rt_config_id id);     /* TIME, in ns */
uint64_t gas_rt_config_ppm(enum gas_rt_config_id id);    /* RATIO, in parts per million */
int gas_rt_config_enum(enum gas_rt_config_id id);        /* index into choices */
const char *gas_rt_config_str(enum gas_rt_config_id id); /* the text as set */
const char *gas_rt_config_source(enum gas_rt_config_id id); /* "default", "env", "file:..." */

/*
 * Least values that config_ranges.h enforces and the layers above rely on:
 * the segment (alloc/segment.h GAS_AL_SEG_MIN_BYTES) and the udp transport's
 * MTU (transport/udp/wire.h checks it against its header sizes).
 */
#define GAS_RT_SEGMENT_MIN_BYTES (6u << 20)
#define GAS_RT_UDP_MTU_MIN 364u

/* Whether id has a range (config_ranges.h): 1 with *lo_p..*hi_p, else 0
 * (a row that also accepts 0 says so in gas_rt_config_range_text). */
int gas_rt_config_range(enum gas_rt_config_id id, uint64_t *lo_p, uint64_t *hi_p);

/* The values id accepts, as the docs show them ("16..1048576 (others are
 * refused)", "at least 6m, or 0 (others are refused: why)"); "" when any
 * value is accepted. */
void gas_rt_config_range_text(enum gas_rt_config_id id, char *buf, size_t cap);

/* The closest known name to an unknown one (NULL when nothing is close). */
const char *gas_rt_config_nearest(const char *name);

#endif
