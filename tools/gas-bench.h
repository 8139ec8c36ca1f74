/*
 * gas-bench.h - what gas-bench.c (the driver and the RMA modes) shares with
 * bench_coll.c (the collective modes and --tune).
 */
#ifndef GAS_BENCH_H
#define GAS_BENCH_H

#include <gas.h>

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum kind { KIND_LAT, KIND_BW };

/* What the target does to its block before a point. */
enum prep {
    PREP_NONE,
    PREP_POISON, /* poison [0, size): the point's puts must overwrite it */
    PREP_FILL,   /* fill [0, size) with the point's pattern, for gets */
    PREP_ZERO    /* zero the first word, for atomics */
};

struct bench;

/* A mode: one kind of row.  Hooks other than batch may be NULL. */
struct mode {
    const char *name;  /* row label */
    const char *group; /* name that --mode selects (several rows may share one) */
    enum kind kind;
    int sized;         /* swept over sizes; else fixed_size */
    size_t fixed_size;
    int collective;    /* every rank runs the batches, else rank 0 alone */
    int reference;     /* a reference: measured at the top, no target */
    enum prep prep;
    /* rank 0, untimed, once per point, then before every batch */
    void (*setup)(struct bench *b, size_t size);
    void (*before)(struct bench *b, size_t size);
    /* the timed part: iters operations of size bytes; returns data errors */
    uint64_t (*batch)(struct bench *b, size_t size, uint64_t iters);
    /* rank 0, untimed, after every timed batch: returns data errors */
    uint64_t (*verify)(struct bench *b, size_t size);
    const char *doc;
    /* collective modes (bench_coll.c) */
    int coll;          /* gas_coll_t */
    const char *alg;   /* forced algorithm, "auto" for the tuning table */
    size_t def_min, def_max; /* default sweep (0: the kind's default) */
};

struct options {
    const char *modes;
    size_t min_size, max_size; /* 0: the mode's default */
    int reps;
    long warmup;               /* iterations; -1: one calibrated batch */
    unsigned window;           /* nbi operations between two quiets */
    double batch_s;
    int quick, csv;
    const char *colls;         /* collectives of the coll-* modes (NULL: all) */
    const char *tune;          /* --tune FILE */
    int compare;               /* --compare */
};

struct stats {
    double median, p10, p90;
};

struct bench {
    struct options opt;
    int rank, nranks, target;
    gas_ptr_t ctl;    /* 2 words per rank: [2r] broadcast slot, [2r+1] error count */
    gas_ptr_t data;   /* blk bytes per rank */
    gas_ptr_t tgt;    /* the target's block */
    size_t blk;
    unsigned char *src, *dst; /* rank 0's private buffers, blk bytes each */
    uint64_t seed;    /* the current point's data pattern */
    uint64_t amo_next; /* the value the next atomic must find */
    volatile uint64_t *pp_line; /* ping-pong cache line (shared with the child) */
    pid_t pp_child;
    uint64_t pp_seq;
    int pp_cpu[2];              /* CPUs of rank 0 and the child, -1: not pinned */
    cpu_set_t pp_saved;         /* rank 0's CPUs before pinning */
    unsigned pp_yield_mask;     /* spins between two sched_yield()s, minus 1 */
    /* references, for the ratio column */
    struct stats rtt_us;
    int have_rtt;
    size_t nmemcpy;
    size_t memcpy_size[64];
    struct stats memcpy_mbs[64];
    uint64_t points, errors;
    const struct mode *cur;   /* the mode being measured */
    struct bench_coll *coll;  /* the collective modes' buffers */
};

/* The driver, for bench_coll.c. */
uint64_t bench_measure(struct bench *b, const struct mode *m, size_t size, double *samples);
struct stats bench_summarize(double *v, int n);
void bench_check(gas_status_t s, const char *call);
/* Is word (len bytes) one of the comma-separated items of list? */
int bench_in_list(const char *list, const char *word, size_t len);

/*
 * Collective modes: rows "coll:alg" (8-byte latency, group coll-lat) and
 * "coll/alg" (bandwidth sweep, group coll-bw) for every collective, every
 * algorithm that can run on this job, and "auto".  Appends to *modes_p.
 */
void bench_coll_modes(struct bench *b, struct mode **modes_p, size_t *nmodes_p);
/* Buffers for the selected coll modes, up to max_size bytes per block. */
void bench_coll_setup(struct bench *b, size_t max_size);
void bench_coll_fini(struct bench *b);
/* After a coll point: remember its median for the summary (rank 0). */
void bench_coll_record(struct bench *b, const struct mode *m, size_t size, double median);
/* The "tuned vs best" summary of the coll modes measured (rank 0). */
void bench_coll_summary(struct bench *b);
/* --tune FILE: measure every algorithm at a ladder of sizes, write the table. */
int bench_coll_tune(struct bench *b, double *samples);
/* --compare: each algorithm and auto, interleaved, at the sizes --tune measures. */
int bench_coll_compare(struct bench *b);

#endif
