/*
 * gas-bench - libgas latency, bandwidth and rates next to references
 * measured in the same run.
 *
 *   gasrun -n 2 gas-bench [--mode LIST|all] [--min-size S] [--max-size S]
 *                         [--reps N] [--warmup N] [--window N] [--batch-ms MS]
 *                         [--quick] [--csv] [--json[=FILE]] [--plot FILE.svg] [--md FILE]
 *
 * Rank 0 drives and prints; rank 1 is the target of every transfer; further
 * ranks only take part in barriers (and in the barrier and collective modes).
 * With one rank, rank 0 is its own target and the header says so.
 *
 * Every point (mode, size) runs in batches.  The iterations per batch are
 * calibrated until a batch lasts about --batch-ms, one more batch (or
 * --warmup iterations) warms up, then --reps batches are timed; a row gives
 * the median and the p10/p90 (linear interpolation) over those batches, and
 * its ratio to the reference of its kind (bench_ref.c, bench_udp.c),
 * measured first.
 * The cache-line round trip is measured again after the results, and a
 * drift is reported: on a virtual machine the vCPUs' state can change.
 *
 * The modes are in bench_rma.c and bench_coll.c (--compare: bench_compare.c);
 * the driver does calibration, statistics, checks and hands rows to
 * bench_out.c.
 */
#include "gas-bench.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAT_MAX_SIZE_DEFAULT (64 * KiB)
#define BW_MAX_SIZE_DEFAULT (64 * MiB)
#define MAX_ITERS (UINT64_C(1) << 26) /* per batch */
#define MAX_REPS 1000

/* the references, the RMA modes, then the collective modes (built at start-up) */
static struct mode *modes;
static size_t nmodes;
#define NMODES nmodes

/* Every rank gets rank 0's value (collective). */
static uint64_t agree_u64(struct bench *b, uint64_t value)
{
    if (b->rank == 0)
        for (int r = 0; r < b->nranks; r++)
            bench_check(gas_put(bench_ctl_slot(b, r, 0), &value, sizeof value), "gas_put");
    bench_check(gas_barrier(), "gas_barrier");
    value = __atomic_load_n((uint64_t *)gas_ptr_local(bench_ctl_slot(b, b->rank, 0)),
                            __ATOMIC_ACQUIRE);
    bench_check(gas_barrier(), "gas_barrier"); /* nobody overwrites it before all have read */
    return value;
}

static size_t mode_min(const struct bench *b, const struct mode *m)
{
    if (!m->sized)
        return m->fixed_size;
    return b->opt.min_size ? b->opt.min_size : m->def_min ? m->def_min : 1;
}

static size_t mode_max(const struct bench *b, const struct mode *m)
{
    if (!m->sized)
        return m->fixed_size;
    if (b->opt.max_size)
        return b->opt.max_size;
    if (m->def_max)
        return m->def_max;
    return m->kind == KIND_BW ? BW_MAX_SIZE_DEFAULT : LAT_MAX_SIZE_DEFAULT;
}

static double timed_batch(struct bench *b, const struct mode *m, size_t size, uint64_t iters,
                          uint64_t *errors)
{
    if (m->before && b->rank == 0)
        m->before(b, size);
    double t0 = bench_now_s();
    *errors += m->batch(b, size, iters);
    double t = bench_now_s() - t0;
    if (m->verify && b->rank == 0)
        *errors += m->verify(b, size);
    return t;
}

/*
 * Calibrate, warm up and time one point; fills samples (per-op latency in
 * microseconds or bandwidth in MB/s) on rank 0.  Collective for collective
 * modes, else rank 0 alone.
 */
static uint64_t measure(struct bench *b, const struct mode *m, size_t size, double *samples)
{
    uint64_t errors = 0, iters = 1;
    b->cur = m;
    if (m->setup && b->rank == 0)
        m->setup(b, size);
    for (;;) {
        double t = timed_batch(b, m, size, iters, &errors);
        uint64_t next = 0;
        if (t < b->opt.batch_s / 2 && iters < MAX_ITERS) {
            double grow = t > 0 ? b->opt.batch_s / t : 64;
            grow = grow < 2 ? 2 : grow > 64 ? 64 : grow;
            next = (uint64_t)((double)iters * grow);
            next = next > MAX_ITERS ? MAX_ITERS : next;
        }
        if (m->collective)
            next = agree_u64(b, next);
        if (next == 0)
            break;
        iters = next;
    }
    uint64_t warm = b->opt.warmup >= 0 ? (uint64_t)b->opt.warmup : iters;
    if (warm > 0)
        timed_batch(b, m, size, warm, &errors);
    for (int r = 0; r < b->opt.reps; r++) {
        double t = timed_batch(b, m, size, iters, &errors);
        t = t > 1e-9 ? t : 1e-9;
        double bytes = m->counted ? (double)b->counted_bytes : (double)size * (double)iters;
        samples[r] = m->kind == KIND_LAT ? t / (double)iters * 1e6
                     : m->kind == KIND_RATE ? (double)iters / t / 1e6 : bytes / t / 1e6;
    }
    return errors;
}

/* The target prepares its block (collective: everyone passes the barrier). */
static void target_prepare(struct bench *b, const struct mode *m, size_t size)
{
    if (b->rank == b->target && m->prep != PREP_NONE) {
        unsigned char *mine = gas_ptr_local(b->tgt);
        if (m->prep == PREP_POISON)
            memset(mine, BENCH_POISON, size);
        else if (m->prep == PREP_FILL)
            bench_fill_pattern(mine, size, b->seed);
        else
            __atomic_store_n((uint64_t *)mine, 0, __ATOMIC_RELEASE);
    }
    bench_check(gas_barrier(), "gas_barrier");
}

/* After a point the target checks what the puts left; rank 0 collects. */
static uint64_t target_check(struct bench *b, const struct mode *m, size_t size)
{
    bench_check(gas_barrier(), "gas_barrier");
    if (b->rank == b->target && m->prep == PREP_POISON) {
        uint64_t bad = bench_check_pattern(gas_ptr_local(b->tgt), size, b->seed);
        if (bad)
            bench_check(gas_atomic_add_u64(bench_ctl_slot(b, 0, 1), bad), "gas_atomic_add_u64");
    }
    bench_check(gas_barrier(), "gas_barrier");
    uint64_t bad = 0;
    if (b->rank == 0)
        bench_check(gas_atomic_swap_u64(bench_ctl_slot(b, 0, 1), 0, &bad), "gas_atomic_swap_u64");
    return bad;
}

static int selected(const struct bench *b, const struct mode *m)
{
    const char *list = b->opt.modes;
    if (m->alg && b->opt.colls &&
        !bench_in_list(b->opt.colls, gas_coll_name(m->coll), strlen(gas_coll_name(m->coll))))
        return 0;
    if (strcmp(list, "all") == 0)
        return 1;
    size_t ng = strlen(m->group), nn = strlen(m->name);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if ((len == ng && strncmp(p, m->group, len) == 0) ||
            (len == nn && strncmp(p, m->name, len) == 0))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/*
 * The first name of a comma-separated list that known() does not know, or
 * NULL; an empty name (an empty list, ",,", a trailing comma) is unknown.
 */
static const char *first_unknown(const char *list, int (*known)(const char *name, size_t len))
{
    static char name[64];
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (!known(p, len)) {
            snprintf(name, sizeof name, "%.*s", (int)(len < 60 ? len : 60), p);
            return name;
        }
        p += len;
        if (*p == '\0')
            return NULL;
    }
}

/*
 * The value of an option that takes a file or a list; NULL, with a message
 * in err, when it is another option (getopt gives "--tune --quick" the value
 * "--quick": the file would be named so and --quick lost).
 */
static const char *option_value(const char *option, const char *value, char *err, size_t errlen)
{
    if (strncmp(value, "--", 2) != 0)
        return value;
    snprintf(err, errlen, "%s needs a value, not the option '%s' (for a file of that name "
             "write ./%s)", option, value, value);
    return NULL;
}

static int is_named(const char *p, size_t len, const char *name)
{
    return name && strlen(name) == len && strncmp(p, name, len) == 0;
}

static int mode_known(const char *p, size_t len)
{
    for (size_t i = 0; i < NMODES; i++)
        if (!modes[i].reference && (is_named(p, len, modes[i].group) || is_named(p, len, modes[i].name)))
            return 1;
    return 0;
}

static int coll_known(const char *p, size_t len)
{
    for (int c = 0; c < GAS_COLL_COUNT; c++)
        if (is_named(p, len, gas_coll_name((gas_coll_t)c)))
            return 1;
    return 0;
}

/* One point of a measured mode, collective. */
static void run_point(struct bench *b, const struct mode *m, size_t mode_idx, size_t size,
                      double *samples)
{
    b->seed = bench_mix64(((uint64_t)mode_idx << 48) ^ size);
    target_prepare(b, m, size);
    uint64_t errors = 0;
    if (m->collective || b->rank == 0)
        errors += measure(b, m, size, samples);
    errors += target_check(b, m, size);
    if (b->rank == 0) {
        b->points++;
        struct stats st = bench_summarize(samples, b->opt.reps);
        bench_out_row(b, m, size, st);
        if (m->alg)
            bench_coll_record(b, m, size, st.median);
        if (errors) {
            char sz[32];
            fprintf(stderr, "gas-bench: DATA CHECK FAILED: %s size %s: %" PRIu64 " errors\n",
                    m->name, bench_size_str(size, sz, sizeof sz), errors);
            b->errors += errors;
        }
    }
}

/* Does the run need the references of kind k (a selected mode of that kind)? */
static int ref_wanted(const struct bench *b, const struct mode *ref, size_t *lo_p, size_t *hi_p)
{
    int want = 0;
    size_t lo = SIZE_MAX, hi = 0;
    if (strcmp(ref->group, "ref-udp") == 0 && !b->udp_ref)
        return 0;
    if (strcmp(ref->name, "memcpy") == 0 && b->udp_ref)
        return 0; /* bandwidth rows are compared with the raw UDP stream */
    if (strcmp(ref->name, "udp-stream-gso") == 0 && b->udp != NULL && !bench_udp_gso(b))
        return 0; /* the kernel refuses GSO on this route (rank 0 knows, after bench_udp_start) */
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(b, m) || m->kind != ref->kind)
            continue;
        want = 1;
        lo = mode_min(b, m) < lo ? mode_min(b, m) : lo;
        hi = mode_max(b, m) > hi ? mode_max(b, m) : hi;
    }
    *lo_p = ref->sized ? lo : ref->fixed_size;
    *hi_p = ref->sized ? hi : ref->fixed_size;
    return want;
}

/* Remember a reference's result for the ratios of the rows that follow. */
static void keep_reference(struct bench *b, const struct mode *m, size_t size, struct stats s)
{
    const char *pre = b->opt.csv ? "#" : "";
    if (strcmp(m->name, "pingpong") == 0) {
        b->rtt_us = s;
        b->have_rtt = 1;
        if (b->pp_cpu[1] >= 0)
            fprintf(b->notes, "%s  (rank 0 pinned to CPU %d, the child to CPU %d)\n", pre,
                    b->pp_cpu[0], b->pp_cpu[1]);
        else
            fprintf(b->notes, "%s  (one CPU: the round trip includes context switches)\n", pre);
    } else if (strcmp(m->name, "memcpy") == 0 && b->nmemcpy < 64) {
        b->memcpy_size[b->nmemcpy] = size;
        b->memcpy_mbs[b->nmemcpy++] = s;
    } else if (strcmp(m->name, "local-fadd") == 0) {
        b->amo_mops = s;
        b->have_amo = 1;
    } else if (strncmp(m->name, "udp-pingpong", 12) == 0) {
        if (!b->have_udp)
            bench_udp_note(b, b->notes, pre);
        if (!b->have_udp || s.median < b->udp_rtt_us.median) { /* the fastest is the floor */
            b->udp_rtt_us = s;
            b->udp_rtt_name = m->name;
        }
        b->have_udp = 1;
    } else if (strncmp(m->name, "udp-stream", 10) == 0) {
        if (!b->have_udp_bw || s.median > b->udp_mbs.median) { /* the faster is the line */
            b->udp_mbs = s;
            b->udp_bw_name = m->name;
        }
        b->have_udp_bw = 1;
    }
}

/* Are the raw UDP references wanted (the same answer on every rank)? */
static int udp_refs_wanted(struct bench *b)
{
    size_t lo, hi;
    for (size_t i = 0; i < NMODES; i++)
        if (modes[i].reference && strcmp(modes[i].group, "ref-udp") == 0 &&
            ref_wanted(b, &modes[i], &lo, &hi))
            return 1;
    return 0;
}

/*
 * The references at the top: rank 0 alone, the others wait at a barrier
 * (the target's UDP reference server runs beside it meanwhile).  Collective.
 */
static void run_references(struct bench *b, double *samples)
{
    int headed = 0, udp = udp_refs_wanted(b);
    if (udp) {
        bench_udp_start(b);
        for (size_t i = 0; i < NMODES && b->rank == 0; i++)
            if (strncmp(modes[i].name, "udp-stream", 10) == 0) /* the transport's datagram size */
                modes[i].fixed_size = bench_udp_dgram(b);
    }
    for (size_t i = 0; i < NMODES && b->rank == 0; i++) {
        const struct mode *m = &modes[i];
        size_t lo, hi;
        if (!m->reference || !ref_wanted(b, m, &lo, &hi))
            continue;
        if (!headed)
            bench_out_table_head(b, "references (rank 0 alone):");
        headed = 1;
        for (size_t size = lo; size <= hi; size *= 2) {
            b->seed = bench_mix64(size);
            bench_out_progress(b, m, size, 0, 0);
            b->errors += measure(b, m, size, samples);
            struct stats s = bench_summarize(samples, b->opt.reps);
            bench_out_row(b, m, size, s);
            keep_reference(b, m, size, s);
            if (size > SIZE_MAX / 2)
                break;
        }
        bench_ref_stop(b);
    }
    bench_check(gas_barrier(), "gas_barrier");
    if (udp)
        bench_udp_stop(b);
}

/*
 * Measure the ping-pong again after the results: on a shared or virtual
 * machine the CPUs' state can change during a run, and then the ratios mix
 * two machines.  Rank 0 alone; the others wait at the next barrier.
 */
static void recheck_pingpong(struct bench *b, double *samples)
{
    const struct mode *m = &modes[0]; /* bench_ref_modes[0] */
    b->errors += measure(b, m, m->fixed_size, samples);
    bench_ref_stop(b);
    double end = bench_summarize(samples, b->opt.reps).median, start = b->rtt_us.median;
    int drift = end > 1.5 * start || end < start / 1.5;
    b->rtt_end_us = end;
    fprintf(b->notes, "%s%s round trip at the end: %.3f us (start %.3f us)%s\n",
            b->opt.csv ? "# " : "\n", m->name, end, start,
            drift ? ": the machine changed during the run; compare ratios with care" : "");
}

/*
 * The raw UDP references again after the results (collective): the best
 * round trip and stream of the end against those of the start, and a note
 * when they differ by more than 1.5x (the ratios then mix two machines).
 */
static void recheck_udp(struct bench *b, double *samples)
{
    double rtt = 0, mbs = 0;
    bench_udp_start(b);
    for (size_t i = 0; i < NMODES && b->rank == 0; i++) {
        const struct mode *m = &modes[i];
        size_t lo, hi;
        if (!m->reference || strcmp(m->group, "ref-udp") != 0 || !ref_wanted(b, m, &lo, &hi))
            continue;
        b->errors += measure(b, m, m->fixed_size, samples);
        double v = bench_summarize(samples, b->opt.reps).median;
        if (m->kind == KIND_LAT)
            rtt = rtt == 0 || v < rtt ? v : rtt;
        else
            mbs = v > mbs ? v : mbs;
    }
    bench_check(gas_barrier(), "gas_barrier");
    bench_udp_stop(b);
    if (b->rank != 0)
        return;
    b->udp_rtt_end_us = rtt;
    b->udp_mbs_end = mbs;
    b->udp_drift = (rtt > 0 && (rtt > 1.5 * b->udp_rtt_us.median || rtt < b->udp_rtt_us.median / 1.5)) ||
                   (mbs > 0 && (mbs > 1.5 * b->udp_mbs.median || mbs < b->udp_mbs.median / 1.5));
    char what[160];
    bench_out_udp_end(b, what, sizeof what);
    fprintf(b->notes, "%sraw UDP at the end: %s%s\n", b->opt.csv ? "# " : "\n", what,
            b->udp_drift ? ": the machine changed during the run; compare ratios with care" : "");
}

/* Whether gasrun set `name` to 1 (GASRUN_TAG_OUTPUT, GASRUN_STDERR_TTY: docs/gasrun.md). */
static int gasrun_says(const char *name)
{
    const char *t = getenv(name);
    return t != NULL && strcmp(t, "1") == 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gasrun -n 2 gas-bench [options]\n"
            "  --mode LIST      comma-separated modes, or all (default all)\n"
            "  --min-size S     smallest size swept (default 1; k/m/g suffixes)\n"
            "  --max-size S     largest size swept (default 64k for latency, 64m for bandwidth)\n"
            "  --reps N         timed batches per point (default 5)\n"
            "  --warmup N       warm-up iterations per point (default: one batch)\n"
            "  --window N       nbi operations between quiets in bandwidth modes (default 64)\n"
            "  --batch-ms MS    target duration of one batch (default 10)\n"
            "  --quick          short batches (1 ms): a smoke run, not a measurement\n"
            "  --csv            CSV on stdout instead of the aligned table: '#' comment\n"
            "                   lines, the header, then only rows (later notes go to stderr)\n"
            "  --json[=FILE]    a JSON document of every row (header, references, ratios)\n"
            "                   to FILE, or to stdout with the table moved to stderr\n"
            "                   (--csv and --json to stdout are refused when gasrun tags\n"
            "                   output lines, its default for -n 2 and more: give gasrun\n"
            "                   --no-tag-output, or --json=FILE)\n"
            "  --plot FILE.svg  latency and bandwidth curves of the run as an SVG\n"
            "  --md FILE        the rows as a markdown table (make bench uses it)\n"
            "  --progress       a progress line on stderr (default: when it, or gasrun's, is a terminal);\n"
            "  --no-progress    never\n"
            "  --udp-ref        measure the raw UDP references between the ranks' udp\n"
            "                   addresses (default with GAS_TRANSPORT=udp): latency rows\n"
            "                   against the fastest ping-pong, bandwidth rows the fastest stream\n"
            "  --coll LIST      collectives of the coll-lat/coll-bw modes (default: all),\n"
            "                   e.g. allreduce,broadcast\n"
            "  --tune FILE      measure every collective algorithm at sizes 8 B .. 1 MiB\n"
            "                   on this job and write the best per size to FILE as tuning\n"
            "                   table rows for this number of ranks (rows of FILE for\n"
            "                   other rank counts, and with --coll for other collectives,\n"
            "                   are kept; format: docs/collectives.md)\n"
            "  --compare        every collective at the sizes --tune measures: each\n"
            "                   algorithm and auto, interleaved; the tuned choice vs the best\n"
            "                   (--md: a table with the ratios, --plot: a panel per collective)\n"
            "modes:\n");
    for (size_t i = 0; i < NMODES; i++)
        if (!modes[i].reference)
            fprintf(f, "  %-10s %-10s %s\n", modes[i].group,
                    strcmp(modes[i].group, modes[i].name) ? modes[i].name : "", modes[i].doc);
}

/* Parse argv; returns -1 with a message on error (-2: options that cannot
 * work in this environment, said without the usage text), 1 for --help. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    static const struct option longopts[] = {
        { "mode", required_argument, NULL, 'm' },
        { "min-size", required_argument, NULL, 'a' },
        { "max-size", required_argument, NULL, 'z' },
        { "reps", required_argument, NULL, 'r' },
        { "warmup", required_argument, NULL, 'w' },
        { "window", required_argument, NULL, 'W' },
        { "batch-ms", required_argument, NULL, 'b' },
        { "quick", no_argument, NULL, 'q' },
        { "csv", no_argument, NULL, 'c' },
        { "json", optional_argument, NULL, 'j' },
        { "plot", required_argument, NULL, 'p' },
        { "md", required_argument, NULL, 'M' },
        { "progress", no_argument, NULL, 'P' },
        { "no-progress", no_argument, NULL, 'N' },
        { "udp-ref", no_argument, NULL, 'U' },
        { "coll", required_argument, NULL, 'C' },
        { "tune", required_argument, NULL, 'T' },
        { "compare", no_argument, NULL, 'K' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *o = (struct options){ .modes = "all", .reps = 5, .warmup = -1, .window = 64,
                           .batch_s = 0.010, .progress = -1 };
    double batch_ms = 0;
    char *end;
    int c, li = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, &li)) != -1) {
        switch (c) {
        case 'm':
        case 'C':
        case 'T':
        case 'p':
        case 'M':
        case 'j': {
            char name[32];
            snprintf(name, sizeof name, "--%s", longopts[li].name);
            const char *v = optarg ? option_value(name, optarg, err, errlen) : "-";
            if (v == NULL)
                return -1;
            const char **slot = c == 'm' ? &o->modes : c == 'C' ? &o->colls : c == 'T' ? &o->tune
                                : c == 'p' ? &o->plot : c == 'M' ? &o->md : &o->json;
            *slot = v;
            break;
        }
        case 'a':
        case 'z':
            if (bench_parse_size(optarg, c == 'a' ? &o->min_size : &o->max_size) < 0) {
                snprintf(err, errlen, "bad size '%s' (1 .. 4g, k/m/g suffixes)", optarg);
                return -1;
            }
            break;
        case 'r':
            o->reps = (int)strtol(optarg, &end, 10);
            if (*end || o->reps < 1 || o->reps > MAX_REPS) {
                snprintf(err, errlen, "--reps takes 1 .. %d", MAX_REPS);
                return -1;
            }
            break;
        case 'w':
            o->warmup = strtol(optarg, &end, 10);
            if (*end || o->warmup < 0 || (uint64_t)o->warmup > MAX_ITERS) {
                snprintf(err, errlen, "--warmup takes 0 .. %" PRIu64, MAX_ITERS);
                return -1;
            }
            break;
        case 'W': {
            long w = strtol(optarg, &end, 10);
            if (*end || w < 1 || w > 1 << 20) {
                snprintf(err, errlen, "--window takes 1 .. %d", 1 << 20);
                return -1;
            }
            o->window = (unsigned)w;
            break;
        }
        case 'b':
            batch_ms = strtod(optarg, &end);
            if (*end || !(batch_ms > 0 && batch_ms <= 10000)) {
                snprintf(err, errlen, "--batch-ms takes a number in (0, 10000]");
                return -1;
            }
            break;
        case 'q': o->quick = 1; break;
        case 'c': o->csv = 1; break;
        case 'P': o->progress = 1; break;
        case 'N': o->progress = 0; break;
        case 'U': o->udp_ref = 1; break;
        case 'K': o->compare = 1; break;
        case 'h': return 1;
        default:
            snprintf(err, errlen, "unknown or incomplete option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (o->json && strcmp(o->json, "-") == 0 && o->csv) {
        snprintf(err, errlen, "--csv and --json to stdout exclude each other (give --json=FILE)");
        return -1;
    }
    if (gasrun_says("GASRUN_TAG_OUTPUT") && ((o->json && strcmp(o->json, "-") == 0) || o->csv)) {
        snprintf(err, errlen, "%s to stdout would not parse: gasrun prefixes every output line "
                 "with its rank (\"[0] \"); run gasrun with --no-tag-output%s",
                 o->csv ? "--csv" : "--json", o->csv ? "" : ", or give --json=FILE");
        return -2; /* the options are right: no usage text, which would bury the message */
    }
    if (o->progress < 0) /* under gasrun stderr is a pipe: gasrun says whether its own is a terminal */
        o->progress = isatty(2) || gasrun_says("GASRUN_STDERR_TTY");
    if (o->quick)
        o->batch_s = 0.001;
    if (batch_ms > 0)
        o->batch_s = batch_ms / 1000;
    if (o->min_size && o->max_size && o->min_size > o->max_size) {
        snprintf(err, errlen, "--min-size is above --max-size");
        return -1;
    }
    const char *bad = strcmp(o->modes, "all") == 0 ? NULL : first_unknown(o->modes, mode_known);
    if (bad) {
        snprintf(err, errlen, "unknown mode '%s' (see --help)", bad);
        return -1;
    }
    if (o->colls && (bad = first_unknown(o->colls, coll_known)) != NULL) {
        snprintf(err, errlen, "--coll: unknown collective '%s' (gas-info --coll lists them)", bad);
        return -1;
    }
    return 0;
}

/*
 * Rank 0 opens every file an option will write at the end (--json=FILE,
 * --plot, --md, --tune), creating it if needed, so that a path it cannot write
 * fails the run before the sweep rather than after it; the verdict is
 * broadcast (collective).  Returns 0 when all can be written.
 */
static int check_out_files(const struct bench *b)
{
    int32_t bad = 0;
    if (b->rank == 0) {
        const char *opt[4] = {"--json", "--plot", "--md", "--tune"};
        const char *file[4] = {b->opt.json, b->opt.plot, b->opt.md, b->opt.tune};
        for (int i = 0; i < 4; i++) {
            if (file[i] == NULL || strcmp(file[i], "-") == 0)
                continue;
            FILE *f = fopen(file[i], "a");
            if (f == NULL) {
                fprintf(stderr, "gas-bench: %s: cannot write %s: %s\n", opt[i], file[i],
                        strerror(errno));
                bad = 1;
            } else {
                fclose(f);
            }
        }
    }
    bench_check(gas_broadcast(GAS_TEAM_WORLD, &bad, 1, GAS_INT32, 0), "gas_broadcast");
    return bad;
}

int main(int argc, char **argv)
{
    struct bench b = { 0 };
    char err[256];

    bench_check(gas_init(), "gas_init");
    b.rank = gas_rank();
    b.nranks = gas_nranks();
    b.target = b.nranks > 1 ? 1 : 0;
    b.txt = stdout;
    nmodes = bench_nref_modes + bench_nudp_modes + bench_nrma_modes;
    modes = malloc(nmodes * sizeof *modes);
    if (modes == NULL)
        bench_die("out of memory");
    memcpy(modes, bench_ref_modes, bench_nref_modes * sizeof *modes);
    memcpy(modes + bench_nref_modes, bench_udp_modes, bench_nudp_modes * sizeof *modes);
    memcpy(modes + bench_nref_modes + bench_nudp_modes, bench_rma_modes,
           bench_nrma_modes * sizeof *modes);
    bench_coll_modes(&b, &modes, &nmodes);

    /* Every rank parses the same argv; rank 0 alone speaks. */
    int rc = parse_options(argc, argv, &b.opt, err, sizeof err);
    if (rc != 0) {
        if (b.rank == 0) {
            if (rc < 0)
                fprintf(stderr, "gas-bench: %s\n", err);
            if (rc != -2)
                usage(rc < 0 ? stderr : stdout);
        }
        bench_check(gas_finalize(), "gas_finalize");
        return rc < 0 ? 2 : 0;
    }
    if (check_out_files(&b) != 0 || (b.opt.tune && bench_coll_tune_check(&b) != 0)) {
        bench_check(gas_finalize(), "gas_finalize");
        return 2;
    }
    const char *tl = getenv("GAS_TRANSPORT");
    b.udp_ref = b.opt.udp_ref || (tl && strcmp(tl, "udp") == 0);
    if (b.opt.json && strcmp(b.opt.json, "-") == 0)
        b.txt = stderr;
    b.notes = b.opt.csv ? stderr : b.txt;

    /* Room for the largest selected point on every rank, and rank 0's buffers. */
    size_t need = 64, coll_need = 0;
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(&b, m))
            continue;
        if (m->alg)   /* (the references still measure memcpy at their sizes) */
            coll_need = mode_max(&b, m) > coll_need ? mode_max(&b, m) : coll_need;
        need = mode_max(&b, m) > need ? mode_max(&b, m) : need;
    }
    if (b.opt.tune || b.opt.compare)
        coll_need = 1 << 20;
    b.blk = (need + 63) & ~(size_t)63;
    bench_check(gas_malloc(2 * sizeof(uint64_t) * (size_t)b.nranks, &b.ctl), "gas_malloc (control)");
    bench_check(gas_malloc(sizeof(uint64_t) * (size_t)b.nranks, &b.sig), "gas_malloc (signals)");
    bench_check(gas_malloc(b.blk * (size_t)b.nranks, &b.data), "gas_malloc (data)");
    bench_check(gas_ptr_add(b.data, (uint64_t)b.blk * (uint64_t)b.target, &b.tgt), "gas_ptr_add");
    if (gas_ptr_rank(b.tgt) != b.target)
        bench_die("the data block for rank %d lies on rank %d", b.target, gas_ptr_rank(b.tgt));
    if (gas_ptr_rank(bench_ctl_slot(&b, b.rank, 1)) != b.rank)
        bench_die("control word of rank %d lies on rank %d", b.rank,
            gas_ptr_rank(bench_ctl_slot(&b, b.rank, 1)));
    memset(gas_ptr_local(bench_ctl_slot(&b, b.rank, 0)), 0, 2 * sizeof(uint64_t));
    gas_ptr_t my_sig;
    bench_check(gas_ptr_index(b.sig, sizeof(uint64_t), (uint64_t)b.rank, &my_sig), "gas_ptr_index");
    memset(gas_ptr_local(my_sig), 0, sizeof(uint64_t));
    if (b.rank == 0 || b.rank == b.target) {
        /* page-aligned: glibc's memcpy is many times slower on this kind of
         * machine when (dst - src) % 4096 is small but not 0 (4K aliasing) */
        b.src = aligned_alloc(4096, (b.blk + 4095) & ~(size_t)4095);
        b.dst = aligned_alloc(4096, (b.blk + 4095) & ~(size_t)4095);
        if (b.src == NULL || b.dst == NULL)
            bench_die("out of memory for two %zu-byte buffers", b.blk);
        memset(b.src, 0, b.blk); /* touch every page before timing */
        memset(b.dst, 0, b.blk);
        b.amo_res = calloc(b.opt.window, sizeof *b.amo_res);
        if (b.amo_res == NULL)
            bench_die("out of memory");
    }
    if (b.rank == 0)
        bench_out_header(&b);
    bench_check(gas_barrier(), "gas_barrier");

    double *samples = calloc((size_t)b.opt.reps, sizeof *samples);
    if (samples == NULL)
        bench_die("out of memory");
    if (coll_need)
        bench_coll_setup(&b, coll_need);
    if (b.opt.tune || b.opt.compare) {
        rc = b.opt.tune ? bench_coll_tune(&b, samples) : bench_compare(&b);
        bench_coll_fini(&b);
        bench_check(gas_finalize(), "gas_finalize");
        return rc;
    }
    double start = bench_now_s();
    run_references(&b, samples);

    size_t npoints = 0, k = 0;
    for (size_t i = 0; i < NMODES; i++)
        for (size_t size = mode_min(&b, &modes[i]); !modes[i].reference &&
             selected(&b, &modes[i]) && size <= mode_max(&b, &modes[i]); size *= 2) {
            npoints++;
            if (!modes[i].sized || size > SIZE_MAX / 2)
                break;
        }
    int headed = 0;
    for (size_t i = 0; i < NMODES; i++) {
        const struct mode *m = &modes[i];
        if (m->reference || !selected(&b, m))
            continue;
        if (!headed && b.rank == 0)
            bench_out_table_head(&b, "results:");
        headed = 1;
        for (size_t size = mode_min(&b, m); size <= mode_max(&b, m); size *= 2) {
            if (b.rank == 0)
                bench_out_progress(&b, m, size, ++k, npoints);
            run_point(&b, m, i, size, samples);
            if (!m->sized || size > SIZE_MAX / 2)
                break;
        }
    }

    if (b.rank == 0)
        bench_coll_summary(&b);
    if (udp_refs_wanted(&b))
        recheck_udp(&b, samples);
    if (b.rank == 0 && b.have_rtt)
        recheck_pingpong(&b, samples);
    int out_failed = 0; /* a file of --md, --json, --plot: said on stderr, exit status 1 */
    if (b.rank == 0) {
        const char *pre = b.opt.csv ? "# " : "\n";
        out_failed = bench_out_finish(&b, bench_now_s() - start) < 0;
        if (b.errors)
            fprintf(b.notes, "%sdata checks FAILED: %" PRIu64 " errors (see stderr) in %" PRIu64
                   " points, %.1f s\n", pre, b.errors, b.points, bench_now_s() - start);
        else
            fprintf(b.notes, "%sdata checks passed: %" PRIu64 " points, %.1f s\n", pre, b.points,
                   bench_now_s() - start);
    }
    bench_check(gas_barrier(), "gas_barrier");
    bench_check(gas_free(b.data), "gas_free");
    bench_check(gas_free(b.ctl), "gas_free");
    bench_check(gas_free(b.sig), "gas_free");
    free(b.amo_res);
    bench_out_fini(&b);
    free(samples);
    free(b.src);
    free(b.dst);
    bench_coll_fini(&b);
    free(modes);
    bench_check(gas_finalize(), "gas_finalize");
    return b.errors || out_failed ? 1 : 0;
}