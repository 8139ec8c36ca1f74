/*
 * gas-bench.h - what the files of gas-bench share:
 *   gas-bench.c    the driver: options, calibration, points, main
 *   bench_util.c   helpers: errors, clock, data patterns, statistics, sizes
 *   bench_ref.c    the references measured in the same run (memcpy, cache-line
 *                  ping-pong, local atomics)
 *   bench_udp.c    the raw UDP references (ping-pong, sendmmsg stream) between
 *                  the ranks' udp addresses
 *   bench_rma.c    the RMA, atomic and barrier modes
 *   bench_coll.c   the collective modes and --tune
 *   bench_compare.c --compare: every algorithm of every collective, interleaved
 *   bench_out.c    output: the aligned table, --csv, --json, progress
 *   bench_svg.c    --plot: latency and bandwidth curves as an SVG
 */
#ifndef GAS_BENCH_H
#define GAS_BENCH_H

#include <gas.h>

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define GiB ((size_t)1 << 30)

/* Latency (us per operation), bandwidth (MB/s), rate (million operations/s). */
enum kind { KIND_LAT, KIND_BW, KIND_RATE };

#define BENCH_POISON 0xa5

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
    int counted;       /* bandwidth from b->counted_bytes, not size x iters */
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
    const char *json;          /* --json[=FILE]: "-" for stdout */
    const char *plot;          /* --plot FILE.svg */
    const char *md;            /* --md FILE: the rows as a markdown table */
    int progress;              /* -1: when stderr is a terminal */
    int udp_ref;               /* --udp-ref */
    const char *colls;         /* collectives of the coll-* modes (NULL: all) */
    const char *tune;          /* --tune FILE */
    int compare;               /* --compare */
};

struct stats {
    double median, p10, p90;
};

/* One printed row, kept for --json and --plot. */
struct row {
    const struct mode *m;
    size_t size;
    struct stats s;
    const char *ref_name; /* NULL: no reference */
    double ref, ratio;    /* ratio: multiple (latency) or percentage (bandwidth, rate) */
};

struct bench {
    struct options opt;
    int rank, nranks, target;
    gas_ptr_t ctl;    /* 2 words per rank: [2r] broadcast slot, [2r+1] error count */
    gas_ptr_t sig;    /* 1 word per rank: the put-signal ping-pong's signal */
    uint64_t sig_seq; /* the last signal value sent and awaited */
    gas_ptr_t data;   /* blk bytes per rank */
    gas_ptr_t tgt;    /* the target's block */
    size_t blk;
    unsigned char *src, *dst; /* rank 0's private buffers, blk bytes each */
    uint64_t seed;    /* the current point's data pattern */
    uint64_t amo_next; /* the value the next atomic must find */
    uint64_t *amo_res; /* --window fetch results of the rate modes */
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
    struct stats amo_mops;        /* local CPU atomics, for the rate rows */
    int have_amo;
    double rtt_end_us;            /* the ping-pong measured again at the end */
    double udp_rtt_end_us, udp_mbs_end; /* the raw UDP references again at the end */
    int udp_drift;                /* ... and they differ from the start's by over 1.5x */
    struct row *rows;             /* every row printed, references first */
    size_t nrows, rows_cap;
    FILE *txt;                    /* the table and notes: stdout, stderr under --json=- */
    FILE *notes;                  /* notes after the table's head: txt, but stderr under
                                   * --csv (stdout then holds only the header and rows) */
    struct bench_udp *udp;        /* the raw UDP references' socket and server */
    uint64_t counted_bytes;       /* what the last batch of a counted mode delivered */
    int udp_ref;                  /* measure the raw UDP references */
    struct stats udp_rtt_us, udp_mbs; /* the fastest udp-pingpong-*, the faster udp-stream* */
    const char *udp_rtt_name, *udp_bw_name;
    int have_udp, have_udp_bw;    /* the round trip, the stream */
    uint64_t points, errors;
    const struct mode *cur;   /* the mode being measured */
    struct bench_coll *coll;  /* the collective modes' buffers */
    struct bench_cmp *cmp;    /* --compare's results */
};

/* The driver (gas-bench.c). */
uint64_t bench_measure(struct bench *b, const struct mode *m, size_t size, double *samples);

/* Helpers (bench_util.c). */
void bench_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void bench_check(gas_status_t s, const char *call);
double bench_now_s(void);
uint64_t bench_mix64(uint64_t z);
/* The pattern: 8-byte word w of a buffer holds mix64(seed + w), little-endian. */
void bench_fill_pattern(unsigned char *buf, size_t size, uint64_t seed);
/* Mismatches in buf: every byte up to 64 KiB, else both ends and a sample. */
uint64_t bench_check_pattern(const unsigned char *buf, size_t size, uint64_t seed);
/* Sorts v; the median and p10/p90 by linear interpolation. */
struct stats bench_summarize(double *v, int n);
/* "64k"-style sizes (k/m/g, optional b), 1 .. 4 GiB; -1 if bad. */
int bench_parse_size(const char *s, size_t *size_p);
const char *bench_size_str(size_t size, char *buf, size_t len);
/* Is word (len bytes) one of the comma-separated items of list? */
int bench_in_list(const char *list, const char *word, size_t len);
gas_ptr_t bench_ctl_slot(const struct bench *b, int rank, int which);

/* References (bench_ref.c): rank 0 alone, measured before the results. */
extern const struct mode bench_ref_modes[];
extern const size_t bench_nref_modes;
/* Stop the references' child processes (rank 0 gets its CPUs back). */
void bench_ref_stop(struct bench *b);

/*
 * Raw UDP references (bench_udp.c).  bench_udp_start is collective: the
 * target forks the server beside itself, rank 0 opens its socket.
 * bench_udp_stop (every rank) ends them.
 */
extern const struct mode bench_udp_modes[];
extern const size_t bench_nudp_modes;
void bench_udp_start(struct bench *b);
void bench_udp_stop(struct bench *b);
/* The stream's datagram size (rank 0, after bench_udp_start). */
size_t bench_udp_dgram(const struct bench *b);
int bench_udp_gso(const struct bench *b);     /* rank 0: the kernel takes UDP GSO sends */
/* A note line on the path the references took (rank 0). */
void bench_udp_note(const struct bench *b, FILE *f, const char *pre);

/* The RMA, atomic and barrier modes (bench_rma.c). */
extern const struct mode bench_rma_modes[];
extern const size_t bench_nrma_modes;

/* Output (bench_out.c). */
void bench_out_header(struct bench *b);
void bench_out_table_head(struct bench *b, const char *title);
/* Print one row (its ratio to the matching reference) and keep it. */
void bench_out_row(struct bench *b, const struct mode *m, size_t size, struct stats s);
/* "[k/n] mode size" on stderr when progress is on (m NULL: clear it); where
 * stderr is not a terminal (under gasrun), a whole line every 2 s at most. */
void bench_out_progress(struct bench *b, const struct mode *m, size_t size, size_t k, size_t n);
/*
 * --md, --json and --plot, after the run; returns -1 (having said which file
 * and why on stderr) if one could not be written.
 */
int bench_out_finish(struct bench *b, double elapsed_s);
void bench_out_fini(struct bench *b);

/* A row as a --csv line: mode,size,median,p10,p90,unit,reference,ratio. */
void bench_out_csv_row(FILE *f, const struct row *r);
/* Keep a row for --json and --plot without printing it. */
void bench_out_keep(struct bench *b, const struct row *r);
/* "round trip X us (start Y us), stream ..." of the raw UDP references' recheck. */
void bench_out_udp_end(const struct bench *b, char *buf, size_t len);
/* "N ranks, transport T, date, host H (C CPUs)" for a --md file's first line. */
void bench_out_md_intro(const struct bench *b, FILE *f);

/* --plot (bench_svg.c): latency and bandwidth curves of b->rows; -1 on error. */
int bench_svg_write(const struct bench *b, const char *file);
/*
 * One latency panel per collective in a grid (--compare --plot): a curve per
 * mode of the rows whose mode has that collective.  colls: the collectives
 * (gas_coll_t) with panels, in order.
 */
int bench_svg_coll_grid(const struct bench *b, const char *file, const int *colls, int ncolls);

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
/* Before the sweep: 1 when --tune's FILE exists and is no good tuning table
 * (rank 0 says which line and why).  Collective. */
int bench_coll_tune_check(const struct bench *b);
/* The sizes --tune and --compare measure (x8 steps, 8 B .. 1 MiB). */
extern const size_t bench_coll_ladder[];
extern const size_t bench_coll_nladder;
/* The algorithms that can run on this job (auto last when with_auto); how many (<= 16). */
int bench_coll_algs(int coll, const char **algs, int with_auto);
/*
 * Each of algs[0..nalg) timed in turn, reps rounds; st[a]: us per call (rank
 * 0); smp_out (or NULL): the samples, smp_out[a * reps + r].
 */
void bench_coll_interleaved(struct bench *b, int coll, size_t size, const char *const *algs,
                            int nalg, struct stats *st, double *smp_out);
/* Room for nalg x reps samples (exits when out of memory). */
double *bench_coll_samples_alloc(int nalg, int reps);
/* x's time over y's: the median over rounds of the ratio within each round. */
double bench_coll_paired_ratio(const double *smp, int reps, int x, int y);
/* Rank 0's v, on every rank (collective). */
uint64_t bench_coll_agree(uint64_t v);

/*
 * --compare (bench_compare.c): each algorithm and auto, interleaved, at the
 * --tune sizes; the tuned choice against the best.  Its rows go to --json;
 * --md and --plot get a table and per-collective curves of their own.
 */
int bench_compare(struct bench *b);
int bench_compare_md(const struct bench *b, const char *file);
int bench_compare_svg(const struct bench *b, const char *file);

#endif
