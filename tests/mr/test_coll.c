/*
 * test_coll - every collective x every algorithm x types x ops x sizes on
 * several teams at once, checked element by element against references that
 * each rank computes locally.
 *
 * Teams: the world; the even ranks and the odd ranks (strided splits, so the
 * teams skip ranks); a color/key split (rank % 3, key reversing the order);
 * the node team; a strided team of one.  On each: barrier, broadcast,
 * reduce, allreduce, reduce-scatter, allgather(v), alltoall(v), gather(v),
 * scatter(v), scan and exscan with every algorithm forced in turn (then "auto", the tuning
 * table), at element counts 0, 1, odd ones, just under and over every
 * crossover that the table has for that collective on that team (found with
 * gas_coll_choice), and a large one.  Every type x op pair is run at
 * the small counts; larger counts rotate through them (a full cross product
 * at every size would take minutes at 8 ranks on 2 cores).
 *
 * Contributions are a function of (world rank, index, call number), so the
 * expected result of any call is computed locally.  Integer results must be
 * exact (sums and products wrap); float/double sums may differ from the
 * sequential sum by (n-1) units of rounding times the sum of magnitudes;
 * products of values in [0.5, 2) by 2n units relative; min/max are exact.
 *
 * The value-index pair types (minloc / maxloc, and broadcast) draw values
 * and indices from a few each, so most elements tie in value, many in both,
 * with NaNs of two payloads, -0.0 and 0.0 among the float pairs: every
 * algorithm must give the one pair gas.h's rule selects, bit for bit, in
 * whatever order it combines.
 *
 * Then: in-place forms; non-blocking barrier/broadcast/allreduce on two
 * teams at once, overlapped with puts; many back-to-back collectives
 * alternating teams (no cross-talk); argument errors (bitwise op on float,
 * minloc on a plain type, another op on a pair type,
 * root out of range, NULL buffers, overflow); a mismatched pair of
 * collectives, which must fail with a clear message.
 *
 * Scan and exscan are checked per member against the prefix over members
 * 0 .. i (0 .. i-1; member 0 of an exscan: the op's identity): the chain's
 * float results bit for bit against the sequential order, recursive
 * doubling's within ceil(log2 i) units of rounding times the sum of
 * magnitudes; in place with GAS_IN_PLACE and with src == dst.
 *
 * gatherv and scatterv run with blocks of varying size (some empty, all
 * empty at count 0) at the root's displs packed, in team order with gaps,
 * or in reverse order with gaps (the root's gaps must stay untouched), in
 * place at the root, and into a dst in the segment (zero-copy).
 *
 * `test_coll --quick` keeps only the small counts (for the udp, hierarchical
 * and sanitizer runs); `--nb` runs the matrix through the _nb forms, each
 * completed by gas_wait or a gas_test loop (the v forms' vectors scribbled
 * on before the wait: they are read by the call); `--only LIST` runs the
 * matrices (and zero-copy checks) of the listed collectives alone
 * (gas_coll_name()s, comma-separated); `--scan` is `--only scan,exscan`;
 * `--pairs` runs the reductions' matrices with the pair types alone (with a
 * tiny GAS_COLL_SCRATCH, their 16-byte elements then span many chunks).
 */
#include "check.h"

#include <math.h>

#define NTEAMS_MAX 8

struct tteam {
    const char *name;
    gas_team_t team;
    int n, me;
    int world[64];          /* team rank -> world rank */
};

static struct tteam teams[NTEAMS_MAX];
static int nteams;
static int quick;
static int use_nb;          /* --nb: the matrix through the _nb forms */
static const char *only;    /* --only LIST: the matrices of these collectives alone */
static uint64_t callno;     /* advances identically on every rank */

static const gas_dtype_t all_types[] = {GAS_INT8, GAS_UINT8, GAS_INT16, GAS_UINT16, GAS_INT32,
                                        GAS_UINT32, GAS_INT64, GAS_UINT64, GAS_FLOAT, GAS_DOUBLE,
                                        GAS_2INT32, GAS_FLOAT_INT32, GAS_2INT64, GAS_DOUBLE_INT64};
#define NTYPES 14
static const char *const tnames[] = {"int8", "uint8", "int16", "uint16", "int32", "uint32",
                                     "int64", "uint64", "float", "double", "2int32",
                                     "float_int32", "2int64", "double_int64"};
static const char *const onames[] = {"sum", "prod", "min", "max", "band", "bor", "bxor",
                                     "minloc", "maxloc"};
static int pairs_only;      /* --pairs: the reductions' matrices with the pair types alone */

/* Is coll one of --only's comma-separated names (or is there no --only)? */
static int wanted(int coll)
{
    const char *name = gas_coll_name((gas_coll_t)coll);
    size_t len = strlen(name);
    for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
            return 1;
    return only == NULL;
}

static int is_float(gas_dtype_t t)
{
    return t == GAS_FLOAT || t == GAS_DOUBLE;
}

static int is_pair(gas_dtype_t t)
{
    return t == GAS_2INT32 || t == GAS_FLOAT_INT32 || t == GAS_2INT64 || t == GAS_DOUBLE_INT64;
}

/* Does the library take op on type t (the matrix runs exactly these)? */
static int op_ok(gas_dtype_t t, int op)
{
    if (is_pair(t))
        return op == GAS_OP_MINLOC || op == GAS_OP_MAXLOC;
    return op < (is_float(t) ? GAS_OP_BAND : GAS_OP_MINLOC);
}

/* ------------------------------------------------------------------------ */
/* Values and references                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t gen(int wrank, uint64_t idx, uint64_t salt)
{
    return mix64(mix64(salt * 0x9e3779b97f4a7c15ull + (uint64_t)wrank) ^ (idx * 0xd6e8feb86659fd93ull));
}

static double unit(uint64_t v)
{
    return (double)(v >> 11) * (1.0 / 9007199254740992.0);
}

/*
 * A pair element from g: values from a few (so most elements tie with
 * another member's), NaNs of two payloads, -0.0 and 0.0, the type's
 * extremes; indices from a few too (ties of value and index both),
 * negative ones and the largest (the identity's).
 */
static void pair_value(void *out, gas_dtype_t t, uint64_t g)
{
    static const int64_t ix[] = {0, 1, 2, 3, -1, INT64_MAX};
    int k = (int)(g % 8), j = (int)((g >> 8) % 6);
    int64_t i64 = ix[j];
    int32_t i32 = j == 5 ? INT32_MAX : (int32_t)i64;
    static const int64_t iv[] = {-1, 0, 1, 2, 1, 0, INT64_MIN, INT64_MAX};
    static const double fv[] = {1.0, -1.0, 0.0, -0.0, 1.0, 2.5, 0, 0};   /* 6, 7: NaNs */
    double f = fv[k];
    if (k >= 6) {   /* quiet NaNs, the second with another payload and the sign bit */
        uint64_t bits = k == 6 ? 0x7ff8000000000000ull : 0xfff8000000000123ull;
        memcpy(&f, &bits, 8);
    }
    switch (t) {
    case GAS_2INT32: {
        int64_t v = iv[k];
        gas_2int32_t p = {.val = v == INT64_MIN ? INT32_MIN : v == INT64_MAX ? INT32_MAX
                                                                             : (int32_t)v,
                          .idx = i32};
        memcpy(out, &p, sizeof p);
    } break;
    case GAS_2INT64: { gas_2int64_t p = {.val = iv[k], .idx = i64}; memcpy(out, &p, sizeof p); } break;
    case GAS_FLOAT_INT32: {
        gas_float_int32_t p = {.val = (float)f, .idx = i32};
        if (k >= 6) {   /* (a conversion need not keep the payload) */
            uint32_t b = k == 6 ? 0x7fc00000u : 0xffc00123u;
            memcpy(&p.val, &b, 4);
        }
        memcpy(out, &p, sizeof p);
    } break;
    default: { gas_double_int64_t p = {.val = f, .idx = i64}; memcpy(out, &p, sizeof p); } break;
    }
}

/* Element idx of world rank w's contribution to call `salt` with op. */
static void value(void *out, gas_dtype_t t, int w, uint64_t idx, uint64_t salt, gas_redop_t op)
{
    uint64_t g = gen(w, idx, salt);
    if (is_pair(t)) {
        pair_value(out, t, g);
        return;
    }
    double f = op == GAS_OP_PROD ? 0.5 + 1.5 * unit(g) : 2.0 * unit(g) - 1.0;
    switch (t) {
    case GAS_INT8: case GAS_UINT8: { uint8_t v = (uint8_t)g; memcpy(out, &v, 1); break; }
    case GAS_INT16: case GAS_UINT16: { uint16_t v = (uint16_t)g; memcpy(out, &v, 2); break; }
    case GAS_INT32: case GAS_UINT32: { uint32_t v = (uint32_t)g; memcpy(out, &v, 4); break; }
    case GAS_INT64: case GAS_UINT64: memcpy(out, &g, 8); break;
    case GAS_FLOAT: { float v = (float)f; memcpy(out, &v, 4); break; }
    case GAS_DOUBLE: memcpy(out, &f, 8); break;
    default: break;
    }
}

static void fill(void *buf, gas_dtype_t t, size_t n, int w, uint64_t salt, gas_redop_t op)
{
    size_t es = gas_dtype_size(t);
    for (size_t i = 0; i < n; i++)
        value((char *)buf + i * es, t, w, i, salt, op);
}

/* An integer of type t as int64 (sign-extended) or uint64. */
static int64_t as_signed(gas_dtype_t t, uint64_t v)
{
    switch (t) {
    case GAS_INT8: return (int8_t)v;
    case GAS_INT16: return (int16_t)v;
    case GAS_INT32: return (int32_t)v;
    default: return (int64_t)v;
    }
}

static uint64_t as_unsigned(gas_dtype_t t, uint64_t v)
{
    size_t es = gas_dtype_size(t);
    return es == 8 ? v : v & ((1ull << (8 * es)) - 1);
}

static int is_signed_int(gas_dtype_t t)
{
    return t == GAS_INT8 || t == GAS_INT16 || t == GAS_INT32 || t == GAS_INT64;
}

/* The op over members 0 .. upto-1's contributions in double, and the sum of their magnitudes. */
static void float_reference(gas_dtype_t t, gas_redop_t op, const struct tteam *tt, int upto,
                            uint64_t idx, uint64_t salt, double *ref_p, double *mag_p)
{
    char v[8];
    double ref = 0, mag = 0;
    for (int m = 0; m < upto; m++) {
        value(v, t, tt->world[m], idx, salt, op);
        double x = t == GAS_FLOAT ? (double)*(float *)(void *)v : *(double *)(void *)v;
        ref = m == 0 ? x : op == GAS_OP_SUM ? ref + x : op == GAS_OP_PROD ? ref * x
            : op == GAS_OP_MIN ? (x < ref ? x : ref) : (x > ref ? x : ref);
        mag += fabs(x);
    }
    *ref_p = ref;
    *mag_p = mag;
}

/*
 * A float result against its double reference: sums within sum_units units
 * of rounding times the sum of magnitudes, products within 2 * prod_n units
 * relative, min/max exact (in the type).
 */
static int check_float(const void *got, gas_dtype_t t, gas_redop_t op, double ref, double mag,
                       double sum_units, int prod_n, uint64_t idx, const char *what)
{
    double eps = t == GAS_FLOAT ? 1.1920929e-7 : 2.220446e-16, bound = 0;
    double g = t == GAS_FLOAT ? (double)*(const float *)got : *(const double *)got;
    if (op == GAS_OP_SUM)
        bound = sum_units * eps * mag + 1e-300;
    else if (op == GAS_OP_PROD)
        bound = 2.0 * prod_n * eps * fabs(ref);
    else if (t == GAS_FLOAT)
        ref = (double)(float)ref;
    if (fabs(g - ref) > bound)
        return CHECK(0, "%s: element %" PRIu64 ": got %.17g, expected %.17g (bound %.3g)", what,
                     idx, g, ref, bound);
    return 1;
}

/* One pair element taken apart: the value (as a double or an integer), NaN or not,
 * the index, and the value's bits as a signed integer of its width. */
struct pair_parts {
    double f;
    int64_t i, idx, bits;
    int nan;
};

static struct pair_parts pair_parts(const void *p, gas_dtype_t t)
{
    struct pair_parts r = {0};
    if (t == GAS_2INT32 || t == GAS_FLOAT_INT32) {
        int32_t b, x;
        memcpy(&b, p, 4);
        memcpy(&x, (const char *)p + 4, 4);
        r.bits = b;
        r.idx = x;
        if (t == GAS_FLOAT_INT32) {
            float f;
            memcpy(&f, p, 4);
            r.f = f;
        }
    } else {
        memcpy(&r.bits, p, 8);
        memcpy(&r.idx, (const char *)p + 8, 8);
        if (t == GAS_DOUBLE_INT64)
            memcpy(&r.f, p, 8);
    }
    r.i = r.bits;
    r.nan = r.f != r.f;
    return r;
}

/*
 * The minloc / maxloc of element idx over members 0 .. upto-1, into out, as
 * gas.h states the rule (written as a selection, not as the library's
 * pairwise kernel): the members whose value is a number (all of them when
 * none is) with the best value, of those the smallest index, of those the
 * value with the smallest bits (minloc) or the largest (maxloc).
 */
static void pair_reference(void *out, gas_dtype_t t, gas_redop_t op, const struct tteam *tt,
                           int upto, uint64_t idx, uint64_t salt)
{
    size_t es = gas_dtype_size(t);
    int max = op == GAS_OP_MAXLOC, flt = t == GAS_FLOAT_INT32 || t == GAS_DOUBLE_INT64;
    char v[64][16];
    struct pair_parts pp[64];
    int cand[64] = {0}, nc = 0, best = -1;   /* best: a member with the best number (-1: none) */
    for (int m = 0; m < upto; m++) {
        value(v[m], t, tt->world[m], idx, salt, op);
        pp[m] = pair_parts(v[m], t);
        if (!pp[m].nan && (best < 0 || (flt ? (max ? pp[m].f > pp[best].f : pp[m].f < pp[best].f)
                                            : (max ? pp[m].i > pp[best].i : pp[m].i < pp[best].i))))
            best = m;
    }
    for (int m = 0; m < upto; m++)     /* every member with that value (or every NaN) */
        if (best < 0 || (!pp[m].nan && (flt ? pp[m].f == pp[best].f : pp[m].i == pp[best].i)))
            cand[nc++] = m;
    int win = cand[0];
    for (int k = 1; k < nc; k++) {
        const struct pair_parts *c = &pp[cand[k]], *w = &pp[win];
        if (c->idx < w->idx || (c->idx == w->idx && (max ? c->bits > w->bits : c->bits < w->bits)))
            win = cand[k];
    }
    memcpy(out, v[win], es);
}

/* A pair result against pair_reference: bit for bit, whatever the algorithm. */
static int check_pair(const void *got, gas_dtype_t t, gas_redop_t op, const struct tteam *tt,
                      int upto, uint64_t idx, uint64_t salt, const char *what)
{
    char want[16];
    pair_reference(want, t, op, tt, upto, idx, salt);
    if (memcmp(got, want, gas_dtype_size(t)) == 0)
        return 1;
    struct pair_parts g = pair_parts(got, t), w = pair_parts(want, t);
    if (gas_dtype_size(t) == 8) {   /* 4-byte values: their own bits */
        g.bits = (uint32_t)g.bits;
        w.bits = (uint32_t)w.bits;
    }
    return CHECK(0, "%s: element %" PRIu64 ": got (value bits 0x%" PRIx64 " = %.17g, index %"
                 PRId64 "), expected (0x%" PRIx64 " = %.17g, index %" PRId64 ")", what, idx,
                 (uint64_t)g.bits, t == GAS_FLOAT_INT32 || t == GAS_DOUBLE_INT64 ? g.f : (double)g.i,
                 g.idx, (uint64_t)w.bits, t == GAS_FLOAT_INT32 || t == GAS_DOUBLE_INT64 ? w.f
                 : (double)w.i, w.idx);
}

/* Check element idx of got against the op over the team's contributions. */
static int check_reduced(const void *got, gas_dtype_t t, gas_redop_t op, const struct tteam *tt,
                         uint64_t idx, uint64_t salt, const char *what)
{
    size_t es = gas_dtype_size(t);
    char v[8];
    if (is_pair(t))
        return check_pair(got, t, op, tt, tt->n, idx, salt, what);
    if (is_float(t)) {
        double ref, mag;
        float_reference(t, op, tt, tt->n, idx, salt, &ref, &mag);
        return check_float(got, t, op, ref, mag, tt->n - 1, tt->n, idx, what);
    }
    uint64_t acc = 0;
    for (int m = 0; m < tt->n; m++) {
        uint64_t x = 0;
        value(v, t, tt->world[m], idx, salt, op);
        memcpy(&x, v, es);
        if (m == 0) {
            acc = x;
            continue;
        }
        switch (op) {
        case GAS_OP_SUM: acc += x; break;
        case GAS_OP_PROD: acc *= x; break;
        case GAS_OP_MIN:
            if (is_signed_int(t) ? as_signed(t, x) < as_signed(t, acc) : as_unsigned(t, x) < as_unsigned(t, acc))
                acc = x;
            break;
        case GAS_OP_MAX:
            if (is_signed_int(t) ? as_signed(t, x) > as_signed(t, acc) : as_unsigned(t, x) > as_unsigned(t, acc))
                acc = x;
            break;
        case GAS_OP_BAND: acc &= x; break;
        case GAS_OP_BOR: acc |= x; break;
        case GAS_OP_BXOR: acc ^= x; break;
        default: break;
        }
    }
    uint64_t g = 0;
    memcpy(&g, got, es);
    if (as_unsigned(t, g) != as_unsigned(t, acc))
        return CHECK(0, "%s: element %" PRIu64 ": got 0x%" PRIx64 ", expected 0x%" PRIx64, what, idx,
                     as_unsigned(t, g), as_unsigned(t, acc));
    return 1;
}

/* Check n elements; stop reporting after a few. */
static void check_reduced_all(const void *got, gas_dtype_t t, gas_redop_t op,
                              const struct tteam *tt, size_t n, uint64_t first_idx, uint64_t salt,
                              const char *what)
{
    size_t es = gas_dtype_size(t);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 3; i++)
        bad += !check_reduced((const char *)got + i * es, t, op, tt, first_idx + i, salt, what);
}

/* Check a block that must equal world rank w's contribution [from, from + n). */
static void check_block(const void *got, gas_dtype_t t, int w, uint64_t from, size_t n,
                        uint64_t salt, const char *what)
{
    size_t es = gas_dtype_size(t);
    char v[16];
    for (size_t i = 0; i < n; i++) {
        value(v, t, w, from + i, salt, GAS_OP_SUM);
        if (memcmp((const char *)got + i * es, v, es) != 0) {
            FAIL("%s: element %zu (from world rank %d, its element %" PRIu64 ") differs", what,
                 i, w, from + i);
            return;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* The matrix                                                                */
/* ------------------------------------------------------------------------ */

static char what[256];

static void describe(const struct tteam *tt, const char *coll, const char *alg, gas_dtype_t t,
                     int op, size_t count, int root)
{
    snprintf(what, sizeof what, "team %s (%d ranks), %s/%s, %s%s%s, count %zu, root %d, call %" PRIu64,
             tt->name, tt->n, coll, alg, tnames[t], op >= 0 ? " " : "", op >= 0 ? onames[op] : "",
             count, root, callno);
}

static void *xalloc(size_t n)
{
    return test_xmalloc(n ? n : 1);
}

static void poison(void *p, size_t n)
{
    memset(p, 0xa5, n);
}

#define ST(call) do { gas_status_t st_ = (call); \
    if (st_ != GAS_OK) { FAIL("%s: %s returned %s: %s", what, #call, gas_strerror(st_), gas_last_error()); \
        test_die("a collective failed"); } } while (0)

/*
 * One collective of the matrix: the blocking call, or with --nb its _nb form
 * (given &nb_h) completed by gas_wait, or by a gas_test loop on odd calls.
 */
static gas_handle_t nb_h;
static void nb_finish(void)
{
    int done = 0;
    if (callno % 2)
        while (!done)
            ST(gas_test(nb_h, &done));
    else
        ST(gas_wait(nb_h));
}
#define COLL(blocking, nonblocking)                                                                \
    do {                                                                                           \
        if (use_nb) {                                                                              \
            nb_h = GAS_HANDLE_NULL;                                                                \
            ST(nonblocking);                                                                       \
            nb_finish();                                                                           \
        } else {                                                                                   \
            ST(blocking);                                                                          \
        }                                                                                          \
    } while (0)

static void t_barrier(const struct tteam *tt, const char *alg, gas_ptr_t stamps)
{
    /* each member puts the call number into the next member's stamp (nbi): the barrier completes it */
    describe(tt, "barrier", alg, GAS_UINT8, -1, 0, 0);
    int next = tt->world[(tt->me + 1) % tt->n];
    uint64_t v = ++callno;
    gas_ptr_t slot;
    MUST(gas_ptr_index(stamps, 8, (uint64_t)next, &slot));
    ST(gas_put_nbi(slot, &v, 8));
    COLL(gas_team_barrier(tt->team), gas_team_barrier_nb(tt->team, &nb_h));
    gas_ptr_t mine;
    MUST(gas_ptr_index(stamps, 8, (uint64_t)t_rank, &mine));
    uint64_t got = __atomic_load_n((uint64_t *)gas_ptr_local(mine), __ATOMIC_ACQUIRE);
    CHECK(got == v, "%s: stamp %" PRIu64 ", expected %" PRIu64 " (the barrier did not complete the previous member's put)",
          what, got, v);
    ST(gas_team_barrier(tt->team));  /* nobody overwrites a stamp before it is read */
}

static void t_bcast(const struct tteam *tt, const char *alg, gas_dtype_t t, size_t count, int root)
{
    size_t es = gas_dtype_size(t);
    uint64_t salt = ++callno;
    describe(tt, "broadcast", alg, t, -1, count, root);
    char *buf = xalloc(count * es);
    if (tt->me == root)
        fill(buf, t, count, tt->world[root], salt, GAS_OP_SUM);
    else
        poison(buf, count * es);
    COLL(gas_broadcast(tt->team, buf, count, t, root),
         gas_broadcast_nb(tt->team, buf, count, t, root, &nb_h));
    check_block(buf, t, tt->world[root], 0, count, salt, what);
    free(buf);
}

static void t_reduce(const struct tteam *tt, const char *alg, gas_dtype_t t, gas_redop_t op,
                     size_t count, int root, int all, int in_place)
{
    size_t es = gas_dtype_size(t);
    uint64_t salt = ++callno;
    describe(tt, all ? (in_place ? "allreduce(in place)" : "allreduce")
                     : (in_place ? "reduce(in place)" : "reduce"), alg, t, op, count, root);
    char *src = xalloc(count * es), *dst = xalloc(count * es);
    fill(src, t, count, t_rank, salt, op);
    poison(dst, count * es);
    int has = all || tt->me == root;
    if (in_place && has) {
        memcpy(dst, src, count * es);
        if (all)
            COLL(gas_allreduce(tt->team, dst, GAS_IN_PLACE, count, t, op),
                 gas_allreduce_nb(tt->team, dst, GAS_IN_PLACE, count, t, op, &nb_h));
        else
            COLL(gas_reduce(tt->team, dst, GAS_IN_PLACE, count, t, op, root),
                 gas_reduce_nb(tt->team, dst, GAS_IN_PLACE, count, t, op, root, &nb_h));
    } else if (all) {
        COLL(gas_allreduce(tt->team, dst, src, count, t, op),
             gas_allreduce_nb(tt->team, dst, src, count, t, op, &nb_h));
    } else {
        COLL(gas_reduce(tt->team, dst, src, count, t, op, root),
             gas_reduce_nb(tt->team, dst, src, count, t, op, root, &nb_h));
    }
    if (has)
        check_reduced_all(dst, t, op, tt, count, 0, salt, what);
    char *again = xalloc(count * es);
    fill(again, t, count, t_rank, salt, op);
    if (!in_place)
        CHECK(memcmp(again, src, count * es) == 0, "%s: the source buffer was modified", what);
    free(again);
    free(src);
    free(dst);
}

static void t_reduce_scatter(const struct tteam *tt, const char *alg, gas_dtype_t t,
                             gas_redop_t op, size_t count, int in_place)
{
    size_t es = gas_dtype_size(t), all = count * (size_t)tt->n;
    uint64_t salt = ++callno;
    describe(tt, in_place ? "reduce_scatter(in place)" : "reduce_scatter", alg, t, op, count, 0);
    char *src = xalloc(all * es), *dst = xalloc(all * es);
    fill(src, t, all, t_rank, salt, op);
    poison(dst, all * es);
    if (in_place) {
        memcpy(dst, src, all * es);
        COLL(gas_reduce_scatter(tt->team, dst, GAS_IN_PLACE, count, t, op),
             gas_reduce_scatter_nb(tt->team, dst, GAS_IN_PLACE, count, t, op, &nb_h));
    } else {
        COLL(gas_reduce_scatter(tt->team, dst, src, count, t, op),
             gas_reduce_scatter_nb(tt->team, dst, src, count, t, op, &nb_h));
    }
    check_reduced_all(dst, t, op, tt, count, (uint64_t)tt->me * count, salt, what);
    free(src);
    free(dst);
}

/* The identity of op for type t (exscan's member 0), written independently of the library. */
static void identity_of(void *out, gas_dtype_t t, gas_redop_t op)
{
    size_t es = gas_dtype_size(t);
    if (is_pair(t)) {   /* the value that loses to every number, the largest index */
        int max = op == GAS_OP_MAXLOC;
        gas_2int32_t a = {max ? INT32_MIN : INT32_MAX, INT32_MAX};
        gas_float_int32_t b = {max ? -INFINITY : INFINITY, INT32_MAX};
        gas_2int64_t c = {max ? INT64_MIN : INT64_MAX, INT64_MAX};
        gas_double_int64_t d = {max ? -INFINITY : INFINITY, INT64_MAX};
        memcpy(out, t == GAS_2INT32 ? (void *)&a : t == GAS_FLOAT_INT32 ? (void *)&b
                    : t == GAS_2INT64 ? (void *)&c : (void *)&d, es);
        return;
    }
    if (is_float(t)) {
        double v = op == GAS_OP_PROD ? 1.0 : op == GAS_OP_MIN ? INFINITY
                                      : op == GAS_OP_MAX ? -INFINITY : 0.0;
        float f = (float)v;
        memcpy(out, t == GAS_FLOAT ? (void *)&f : (void *)&v, es);
        return;
    }
    int64_t smin[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN};
    int64_t smax[] = {INT8_MAX, INT16_MAX, INT32_MAX, INT64_MAX};
    int lg = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
    uint64_t v = 0, ones = as_unsigned(t, ~0ull);
    switch (op) {
    case GAS_OP_PROD: v = 1; break;
    case GAS_OP_BAND: v = ones; break;
    case GAS_OP_MIN: v = is_signed_int(t) ? (uint64_t)smax[lg] : ones; break;
    case GAS_OP_MAX: v = is_signed_int(t) ? as_unsigned(t, (uint64_t)smin[lg]) : 0; break;
    default: v = 0; break;
    }
    int8_t v8 = (int8_t)v; int16_t v16 = (int16_t)v; int32_t v32 = (int32_t)v;
    memcpy(out, es == 1 ? (void *)&v8 : es == 2 ? (void *)&v16 : es == 4 ? (void *)&v32 : (void *)&v, es);
}

/*
 * Element idx of a prefix over team members 0 .. upto-1 (upto 0: the
 * identity, exscan's member 0).  Integers exactly.  Floats: exact (bit for
 * bit the sequential left-to-right result in the type's own arithmetic) for
 * the chain; otherwise within what a tree of depth ceil(log2 upto) allows:
 * sums within depth units of rounding times the sum of magnitudes (plus the
 * double reference's own upto - 1), products 2 * upto units relative,
 * min/max exact.
 */
static int check_prefix(const void *got, gas_dtype_t t, gas_redop_t op, const struct tteam *tt,
                        int upto, uint64_t idx, uint64_t salt, int exact, const char *label)
{
    size_t es = gas_dtype_size(t);
    char v[16];
    if (upto == 0) {
        identity_of(v, t, op);
        if (memcmp(got, v, es) != 0)
            return CHECK(0, "%s: element %" PRIu64 " of member 0 is not the identity of %s", label,
                         idx, onames[op]);
        return 1;
    }
    struct tteam sub = *tt;
    sub.n = upto;   /* members 0 .. upto-1 */
    if (!is_float(t))
        return check_reduced(got, t, op, &sub, idx, salt, label);
    if (exact) {
        float f = 0;
        double d = 0;
        for (int m = 0; m < upto; m++) {
            value(v, t, tt->world[m], idx, salt, op);
            float xf; double xd;
            memcpy(&xf, v, 4);
            memcpy(&xd, v, 8);
            if (t == GAS_FLOAT) {
                f = m == 0 ? xf : op == GAS_OP_SUM ? f + xf : op == GAS_OP_PROD ? f * xf
                  : op == GAS_OP_MIN ? (xf < f ? xf : f) : (xf > f ? xf : f);
            } else {
                d = m == 0 ? xd : op == GAS_OP_SUM ? d + xd : op == GAS_OP_PROD ? d * xd
                  : op == GAS_OP_MIN ? (xd < d ? xd : d) : (xd > d ? xd : d);
            }
        }
        if (memcmp(got, t == GAS_FLOAT ? (void *)&f : (void *)&d, es) != 0)
            return CHECK(0, "%s: element %" PRIu64 ": got %.17g, expected exactly %.17g (the "
                         "sequential order)", label, idx,
                         t == GAS_FLOAT ? (double)*(const float *)got : *(const double *)got,
                         t == GAS_FLOAT ? (double)f : d);
        return 1;
    }
    double ref, mag;
    float_reference(t, op, tt, upto, idx, salt, &ref, &mag);
    int depth = 0;
    while ((1 << depth) < upto)
        depth++;
    return check_float(got, t, op, ref, mag, depth + (t == GAS_DOUBLE ? upto - 1 : 0), upto, idx,
                       label);
}

/* scan (excl: exscan) of count elements; in place (GAS_IN_PLACE, or src == dst) or not. */
static void t_scan(const struct tteam *tt, const char *alg, gas_dtype_t t, gas_redop_t op,
                   size_t count, int excl, int in_place)
{
    size_t es = gas_dtype_size(t);
    uint64_t salt = ++callno;
    char name[32];
    snprintf(name, sizeof name, "%s%s", excl ? "exscan" : "scan",
             in_place == 1 ? "(GAS_IN_PLACE)" : in_place == 2 ? "(src == dst)" : "");
    describe(tt, name, alg, t, op, count, 0);
    char *src = xalloc(count * es), *dst = xalloc(count * es);
    fill(src, t, count, t_rank, salt, op);
    poison(dst, count * es);
    const void *s = src;
    if (in_place) {
        memcpy(dst, src, count * es);
        s = in_place == 1 ? GAS_IN_PLACE : dst;
    }
    if (excl)
        COLL(gas_exscan(tt->team, dst, s, count, t, op),
             gas_exscan_nb(tt->team, dst, s, count, t, op, &nb_h));
    else
        COLL(gas_scan(tt->team, dst, s, count, t, op),
             gas_scan_nb(tt->team, dst, s, count, t, op, &nb_h));
    int upto = tt->me + !excl, exact = strcmp(alg, "chain") == 0, bad = 0;
    for (size_t i = 0; i < count && bad < 3; i++)
        bad += !check_prefix(dst + i * es, t, op, tt, upto, i, salt, exact, what);
    if (!in_place) {
        char *again = xalloc(count * es);
        fill(again, t, count, t_rank, salt, op);
        CHECK(memcmp(again, src, count * es) == 0, "%s: the source buffer was modified", what);
        free(again);
    }
    free(src);
    free(dst);
}

/* allgather (v: counts vary), gather (root >= 0); in place or not */
static void t_allgather(const struct tteam *tt, const char *alg, gas_dtype_t t, size_t count,
                        int v, int root, int in_place)
{
    size_t es = gas_dtype_size(t), n = (size_t)tt->n;
    uint64_t salt = ++callno;
    describe(tt, root >= 0 ? (in_place ? "gather(in place)" : "gather")
                           : v ? (in_place ? "allgatherv(in place)" : "allgatherv")
                               : (in_place ? "allgather(in place)" : "allgather"),
             alg, t, -1, count, root);
    size_t *counts = xalloc(n * sizeof *counts), *displs = xalloc(n * sizeof *displs);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        counts[i] = v ? (count * (i % 3)) / 2 + (i == 1) : count;   /* some empty, some odd */
        displs[i] = total + (v && i % 2 ? 3 : 0);                   /* gaps between blocks */
        total = displs[i] + counts[i];
    }
    size_t mine = counts[tt->me];
    char *src = xalloc(mine * es), *dst = xalloc(total * es);
    fill(src, t, mine, t_rank, salt, GAS_OP_SUM);
    poison(dst, total * es);
    const void *s = src;
    if (in_place) {
        size_t at = v ? displs[tt->me] : (size_t)tt->me * count;
        memcpy(dst + at * es, src, mine * es);
        s = GAS_IN_PLACE;
    }
    if (root >= 0)
        COLL(gas_gather(tt->team, tt->me == root ? dst : NULL, s, count, t, root),
             gas_gather_nb(tt->team, tt->me == root ? dst : NULL, s, count, t, root, &nb_h));
    else if (v && use_nb) {
        /* the vectors are read before the call returns: scribble on them before the wait */
        size_t *c2 = xalloc(n * sizeof *c2), *d2 = xalloc(n * sizeof *d2);
        memcpy(c2, counts, n * sizeof *c2);
        memcpy(d2, displs, n * sizeof *d2);
        nb_h = GAS_HANDLE_NULL;
        ST(gas_allgatherv_nb(tt->team, dst, s, c2, d2, t, &nb_h));
        memset(c2, 0xff, n * sizeof *c2);
        memset(d2, 0xff, n * sizeof *d2);
        nb_finish();
        free(c2);
        free(d2);
    } else if (v)
        ST(gas_allgatherv(tt->team, dst, s, counts, displs, t));
    else
        COLL(gas_allgather(tt->team, dst, s, count, t),
             gas_allgather_nb(tt->team, dst, s, count, t, &nb_h));
    if (root < 0 || tt->me == root)
        for (size_t i = 0; i < n; i++)
            check_block(dst + (v ? displs[i] : i * count) * es, t, tt->world[i], 0, counts[i],
                        salt, what);
    free(counts);
    free(displs);
    free(src);
    free(dst);
}

static void t_scatter(const struct tteam *tt, const char *alg, gas_dtype_t t, size_t count,
                      int root)
{
    size_t es = gas_dtype_size(t), n = (size_t)tt->n;
    uint64_t salt = ++callno;
    describe(tt, "scatter", alg, t, -1, count, root);
    char *src = xalloc(n * count * es), *dst = xalloc(count * es);
    fill(src, t, n * count, tt->world[root], salt, GAS_OP_SUM);
    poison(dst, count * es);
    COLL(gas_scatter(tt->team, dst, tt->me == root ? src : NULL, count, t, root),
         gas_scatter_nb(tt->team, dst, tt->me == root ? src : NULL, count, t, root, &nb_h));
    check_block(dst, t, tt->world[root], (uint64_t)tt->me * count, count, salt, what);
    free(src);
    free(dst);
}

/*
 * gatherv / scatterv: member i's block is counts[i] elements (some empty;
 * all empty at count 0), at the root's displs[i].  layout 0: displs NULL
 * (packed); 1: in team order with gaps; 2: in reverse team order with gaps
 * (so no subtree of the binomial tree is contiguous), passed by the root
 * only (the others pass NULL: displs is the root's).  The root's gaps must
 * stay untouched; in place: the root's block is already at displs[root].
 * With --nb, the _nb form, its vectors scribbled on before the wait.
 */
static void v_layout(const struct tteam *tt, size_t count, int root, int layout, size_t *counts,
                     size_t *displs, size_t *total_p)
{
    size_t n = (size_t)tt->n, total = 0;
    for (size_t i = 0; i < n; i++)
        counts[i] = (count * ((i + (size_t)root) % 3)) / 2 + (count && i == 1);
    for (size_t k = 0; k < n; k++) {
        size_t i = layout == 2 ? n - 1 - k : k;
        displs[i] = total + (layout && k % 2 ? 3 : 0);
        total = displs[i] + counts[i];
    }
    *total_p = total;
}

static void t_rootedv(const struct tteam *tt, const char *alg, gas_dtype_t t, size_t count,
                      int root, int gathers, int layout, int in_place)
{
    size_t es = gas_dtype_size(t), n = (size_t)tt->n, total = 0;
    uint64_t salt = ++callno;
    int is_root = tt->me == root;
    in_place = in_place && is_root;   /* the root's form only */
    char name[64];
    snprintf(name, sizeof name, "%s(%slayout %d)", gathers ? "gatherv" : "scatterv",
             in_place ? "in place, " : "", layout);
    describe(tt, name, alg, t, -1, count, root);
    size_t *counts = xalloc(n * sizeof *counts), *displs = xalloc(n * sizeof *displs);
    v_layout(tt, count, root, layout, counts, displs, &total);
    size_t mine = counts[tt->me], dlen = gathers ? total : mine + 1;
    char *src = xalloc((gathers ? mine : total) * es), *dst = xalloc(dlen * es);
    poison(dst, dlen * es);
    if (gathers)
        fill(src, t, mine, t_rank, salt, GAS_OP_SUM);
    else
        fill(src, t, total, tt->world[root], salt, GAS_OP_SUM);   /* element k: value(root, k) */
    const void *s = src;
    void *d = dst;
    if (in_place && gathers) {
        memcpy(dst + displs[root] * es, src, mine * es);
        s = GAS_IN_PLACE;
    } else if (in_place) {
        d = xalloc(total * es);
        memcpy(d, src, total * es);
        s = GAS_IN_PLACE;
    }
    const size_t *dv = layout == 0 || !is_root ? NULL : displs;
    if (use_nb) {
        size_t *c2 = xalloc(n * sizeof *c2), *d2 = xalloc(n * sizeof *d2);
        memcpy(c2, counts, n * sizeof *c2);
        memcpy(d2, displs, n * sizeof *d2);
        nb_h = GAS_HANDLE_NULL;
        if (gathers)
            ST(gas_gatherv_nb(tt->team, d, s, c2, dv ? d2 : NULL, t, root, &nb_h));
        else
            ST(gas_scatterv_nb(tt->team, d, s, c2, dv ? d2 : NULL, t, root, &nb_h));
        memset(c2, 0xff, n * sizeof *c2);
        memset(d2, 0xff, n * sizeof *d2);
        nb_finish();
        free(c2);
        free(d2);
    } else if (gathers) {
        ST(gas_gatherv(tt->team, d, s, counts, dv, t, root));
    } else {
        ST(gas_scatterv(tt->team, d, s, counts, dv, t, root));
    }
    char *gap = xalloc(es);
    poison(gap, es);
    if (gathers && is_root) {
        char *mark = xalloc(total ? total : 1);   /* which elements are some block's */
        memset(mark, 0, total ? total : 1);
        for (size_t i = 0; i < n; i++) {
            check_block(dst + displs[i] * es, t, tt->world[i], 0, counts[i], salt, what);
            memset(mark + displs[i], 1, counts[i]);
        }
        for (size_t k = 0; k < total; k++)
            if (!mark[k] && !CHECK(memcmp(dst + k * es, gap, es) == 0,
                                   "%s: gap element %zu was written", what, k))
                break;
        free(mark);
    } else if (!gathers) {
        const char *got = in_place && is_root ? (char *)d + displs[root] * es : dst;
        check_block(got, t, tt->world[root], displs[tt->me], mine, salt, what);
        if (!in_place || !is_root)
            CHECK(memcmp(dst + mine * es, gap, es) == 0, "%s: the element after the block was "
                  "written", what);
    }
    if (d != dst)
        free(d);
    free(gap);
    free(counts);
    free(displs);
    free(src);
    free(dst);
}

/* alltoall(v): element k of what w sends to j is value(w, j * BIG + k) */
#define BIG 100000000ull
static void t_alltoall(const struct tteam *tt, const char *alg, gas_dtype_t t, size_t count,
                       int v, int in_place)
{
    size_t es = gas_dtype_size(t), n = (size_t)tt->n;
    uint64_t salt = ++callno;
    describe(tt, v ? "alltoallv" : in_place ? "alltoall(in place)" : "alltoall", alg, t, -1,
             count, 0);
    /* alltoallv: i sends (count * (i + j)) % 5 + ... elements to j */
#define VCOUNT(i, j) (v ? (count * (size_t)(((i) + 2 * (j)) % 4)) / 2 : count)
    size_t *sc = xalloc(n * sizeof *sc), *sd = xalloc(n * sizeof *sd);
    size_t *rc = xalloc(n * sizeof *rc), *rd = xalloc(n * sizeof *rd);
    size_t stot = 0, rtot = 0;
    for (size_t j = 0; j < n; j++) {
        sc[j] = VCOUNT((size_t)tt->me, j);
        sd[j] = stot + (v ? 1 : 0);
        stot = sd[j] + sc[j];
        rc[j] = VCOUNT(j, (size_t)tt->me);
        rd[j] = rtot + (v && j % 2 ? 2 : 0);
        rtot = rd[j] + rc[j];
    }
    char *src = xalloc(stot * es), *dst = xalloc((rtot > stot ? rtot : stot) * es);
    char one[16];
    for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < sc[j]; k++) {
            value(one, t, t_rank, (uint64_t)tt->world[j] * BIG + k, salt, GAS_OP_SUM);
            memcpy(src + (sd[j] + k) * es, one, es);
        }
    poison(dst, (rtot > stot ? rtot : stot) * es);
    if (v) {
        COLL(gas_alltoallv(tt->team, dst, rc, rd, src, sc, sd, t),
             gas_alltoallv_nb(tt->team, dst, rc, rd, src, sc, sd, t, &nb_h));
    } else if (in_place) {
        memcpy(dst, src, stot * es);
        COLL(gas_alltoall(tt->team, dst, GAS_IN_PLACE, count, t),
             gas_alltoall_nb(tt->team, dst, GAS_IN_PLACE, count, t, &nb_h));
    } else {
        COLL(gas_alltoall(tt->team, dst, src, count, t),
             gas_alltoall_nb(tt->team, dst, src, count, t, &nb_h));
    }
    for (size_t j = 0; j < n; j++)
        check_block(dst + (v ? rd[j] : j * count) * es, t, tt->world[j],
                    (uint64_t)t_rank * BIG, v ? rc[j] : count, salt, what);
#undef VCOUNT
    free(sc); free(sd); free(rc); free(rd); free(src); free(dst);
}

/*
 * The byte sizes (up to 1 MiB) where the tuning table's choice for coll on
 * this team changes: found with gas_coll_choice, doubling then bisecting.
 */
static size_t crossovers(const struct tteam *tt, gas_coll_t c, size_t *out, size_t cap)
{
    size_t k = 0;
    const char *prev = NULL, *cur = NULL;
    MUST(gas_coll_choice(tt->team, c, 1, &prev));
    for (size_t b = 2; b <= ((size_t)1 << 20) && k < cap; b *= 2, prev = cur) {
        MUST(gas_coll_choice(tt->team, c, b, &cur));
        if (strcmp(cur, prev) == 0)
            continue;
        size_t lo = b / 2, hi = b;   /* choice(lo) == prev, choice(hi) != prev */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            const char *m = NULL;
            MUST(gas_coll_choice(tt->team, c, mid, &m));
            if (strcmp(m, prev) == 0)
                lo = mid;
            else
                hi = mid;
        }
        out[k++] = hi;
    }
    return k;
}

/*
 * Counts to try for element size es: small ones, then both sides of every
 * crossover of the table (cross, in bytes), and a large one.
 */
static size_t counts_for(size_t es, size_t *out, int large, const size_t *cross, size_t ncross)
{
    size_t k = 0;
    out[k++] = 0;
    out[k++] = 1;
    out[k++] = 7;
    out[k++] = 33;
    if (quick)
        return k;
    for (size_t i = 0; i < ncross; i++) {
        size_t e = cross[i] / es;
        if (e > 34)
            out[k++] = e - 1;
        if (e + 1 > 34)
            out[k++] = e + 1;
    }
    if (large)
        out[k++] = (1u << 20) / es + 3;
    return k;
}

static int small_count(size_t c)
{
    return c <= 33;
}

/*
 * The pair types run one of minloc / maxloc at each small count (k: its
 * place in counts_for), alternating by type, so each type has both at 7
 * and 33 on every algorithm at half the calls.
 */
static int pair_skips(int ti, int op, size_t k)
{
    return is_pair(all_types[ti]) && (int)((k + (size_t)ti) % 2) != op - GAS_OP_MINLOC;
}

/* Make algorithm ai (1, 2, ...) of coll the one used, or "auto" (the tuning
 * table, *is_auto_p = 1) once ai is past the last: loops run every
 * algorithm in turn, then auto.  Returns its name. */
static const char *use_algorithm(gas_coll_t coll, int ai, int *is_auto_p)
{
    const char *alg = gas_coll_algorithm(coll, ai);
    *is_auto_p = alg == NULL;
    if (alg == NULL)
        alg = "auto";
    MUST(gas_coll_set_algorithm(coll, alg));
    return alg;
}

static void run_matrix(const struct tteam *tt, gas_ptr_t stamps)
{
    size_t cs[64], cross[24];
    for (int coll = 0; coll < GAS_COLL_COUNT; coll++) {
        if (!wanted(coll))
            continue;
        size_t ncross = crossovers(tt, (gas_coll_t)coll, cross, 24);
        for (int ai = 1;; ai++) {
            int is_auto;
            const char *alg = use_algorithm((gas_coll_t)coll, ai, &is_auto);
            uint64_t rot = 0;   /* rotates type/op pairs over the larger counts */
            switch (coll) {
            case GAS_COLL_BARRIER:
                for (int i = 0; i < 3; i++)
                    t_barrier(tt, alg, stamps);
                break;
            case GAS_COLL_BROADCAST:
                for (int ti = 0; ti < NTYPES; ti++) {
                    if (is_pair(all_types[ti]) && all_types[ti] != GAS_2INT64)
                        continue;   /* bytes to a broadcast: one 16-byte type is enough */
                    size_t nc = counts_for(gas_dtype_size(all_types[ti]), cs, ti == 9 || ti == 1, cross, ncross);
                    for (size_t k = 0; k < nc; k++)
                        if (small_count(cs[k]) || rot++ % 3 == 0)
                            t_bcast(tt, alg, all_types[ti], cs[k], (int)((k + ti) % (size_t)tt->n));
                }
                break;
            case GAS_COLL_REDUCE:
            case GAS_COLL_ALLREDUCE:
            case GAS_COLL_REDUCE_SCATTER:
                for (int ti = pairs_only ? 10 : 0; ti < NTYPES; ti++) {
                    gas_dtype_t t = all_types[ti];
                    size_t nc = counts_for(gas_dtype_size(t), cs, coll != GAS_COLL_REDUCE_SCATTER && (ti == 9 || ti == 6 || ti == 13), cross, ncross);
                    for (int op = 0; op < GAS_OP_COUNT; op++) {
                        if (!op_ok(t, op))
                            continue;
                        for (size_t k = 0; k < nc; k++) {
                            if (!small_count(cs[k]) && (rot++ % 16) != 0)
                                continue;
                            if (small_count(cs[k]) && pair_skips(ti, op, k))
                                continue;
                            if (coll == GAS_COLL_REDUCE_SCATTER)
                                t_reduce_scatter(tt, alg, t, (gas_redop_t)op, cs[k], k == 3);
                            else
                                t_reduce(tt, alg, t, (gas_redop_t)op, cs[k], (int)((k + op) % (size_t)tt->n),
                                         coll == GAS_COLL_ALLREDUCE,
                                         k == 3 && (op < 2 || op == GAS_OP_MINLOC));
                        }
                    }
                }
                break;
            case GAS_COLL_SCAN:
            case GAS_COLL_EXSCAN:
                for (int ti = pairs_only ? 10 : 0; ti < NTYPES; ti++) {
                    gas_dtype_t t = all_types[ti];
                    size_t nc = counts_for(gas_dtype_size(t), cs, ti == 9 || ti == 4 || ti == 11, cross, ncross);
                    for (int op = 0; op < GAS_OP_COUNT; op++) {
                        if (!op_ok(t, op))
                            continue;
                        for (size_t k = 0; k < nc; k++) {
                            if (!small_count(cs[k]) && (rot++ % 16) != 0)
                                continue;
                            if (small_count(cs[k]) && pair_skips(ti, op, k))
                                continue;
                            /* in place at 7 (GAS_IN_PLACE) and 33 (src == dst), two ops each
                             * (maxloc for the pairs) */
                            int ip = (k == 2 || k == 3) && (op % 3 == 0 || op == GAS_OP_MAXLOC)
                                         ? (int)k - 1 : 0;
                            t_scan(tt, alg, t, (gas_redop_t)op, cs[k], coll == GAS_COLL_EXSCAN, ip);
                        }
                    }
                }
                break;
            default: {
                static const gas_dtype_t mt[] = {GAS_UINT8, GAS_INT16, GAS_FLOAT, GAS_DOUBLE};
                for (int ti = 0; ti < 4; ti++) {
                    size_t nc = counts_for(gas_dtype_size(mt[ti]), cs, ti == 0, cross, ncross);
                    for (size_t k = 0; k < nc; k++) {
                        size_t c = cs[k];
                        int root = (int)((k + ti) % (size_t)tt->n);
                        if (coll == GAS_COLL_ALLGATHER)
                            t_allgather(tt, alg, mt[ti], c, 0, -1, k == 2);
                        else if (coll == GAS_COLL_ALLGATHERV)
                            t_allgather(tt, alg, mt[ti], c, 1, -1, k == 2);
                        else if (coll == GAS_COLL_GATHER)
                            t_allgather(tt, alg, mt[ti], c, 0, root, k == 2 && tt->me == root);
                        else if (coll == GAS_COLL_SCATTER)
                            t_scatter(tt, alg, mt[ti], c, root);
                        else if (coll == GAS_COLL_GATHERV || coll == GAS_COLL_SCATTERV)
                            t_rootedv(tt, alg, mt[ti], c, root, coll == GAS_COLL_GATHERV,
                                      (int)((k + ti) % 3), k == 2 || (k == 3 && ti == 1));
                        else
                            t_alltoall(tt, alg, mt[ti], c, coll == GAS_COLL_ALLTOALLV, k == 2);
                    }
                }
            } break;
            }
            MUST(gas_coll_set_algorithm((gas_coll_t)coll, "auto"));
            if (is_auto)
                break;
        }
    }
}

/*
 * Count 0 with NULL buffers is a valid call (NULL is an error only with
 * count > 0): every collective x every algorithm, each followed by an
 * allreduce that must see no message left over from it.
 */
static void t_zero_null(const struct tteam *tt)
{
    size_t zeros[64] = {0};
    if (tt->n > 64)
        return;
    for (int coll = 0; coll < GAS_COLL_COUNT; coll++) {
        if (coll == GAS_COLL_BARRIER || !wanted(coll))
            continue;
        for (int ai = 1;; ai++) {
            int is_auto;
            const char *alg = use_algorithm((gas_coll_t)coll, ai, &is_auto);
            int root = (int)(callno % (uint64_t)tt->n);
            describe(tt, gas_coll_name((gas_coll_t)coll), alg, GAS_INT32, GAS_OP_SUM, 0, root);
            ++callno;
            gas_team_t t = tt->team;
            switch (coll) {
            case GAS_COLL_BROADCAST: ST(gas_broadcast(t, NULL, 0, GAS_INT32, root)); break;
            case GAS_COLL_REDUCE: ST(gas_reduce(t, NULL, NULL, 0, GAS_INT32, GAS_OP_SUM, root)); break;
            case GAS_COLL_ALLREDUCE: ST(gas_allreduce(t, NULL, NULL, 0, GAS_INT32, GAS_OP_SUM)); break;
            case GAS_COLL_ALLGATHER: ST(gas_allgather(t, NULL, NULL, 0, GAS_INT32)); break;
            case GAS_COLL_ALLGATHERV: ST(gas_allgatherv(t, NULL, NULL, zeros, NULL, GAS_INT32)); break;
            case GAS_COLL_ALLTOALL: ST(gas_alltoall(t, NULL, NULL, 0, GAS_INT32)); break;
            case GAS_COLL_ALLTOALLV:
                ST(gas_alltoallv(t, NULL, zeros, NULL, NULL, zeros, NULL, GAS_INT32));
                break;
            case GAS_COLL_REDUCE_SCATTER: ST(gas_reduce_scatter(t, NULL, NULL, 0, GAS_INT32, GAS_OP_SUM)); break;
            case GAS_COLL_GATHER: ST(gas_gather(t, NULL, NULL, 0, GAS_INT32, root)); break;
            case GAS_COLL_SCATTER: ST(gas_scatter(t, NULL, NULL, 0, GAS_INT32, root)); break;
            case GAS_COLL_SCAN: ST(gas_scan(t, NULL, NULL, 0, GAS_INT32, GAS_OP_SUM)); break;
            case GAS_COLL_EXSCAN: ST(gas_exscan(t, NULL, NULL, 0, GAS_INT32, GAS_OP_SUM)); break;
            case GAS_COLL_GATHERV:
                ST(gas_gatherv(t, NULL, NULL, zeros, NULL, GAS_INT32, root));
                break;
            case GAS_COLL_SCATTERV:
                ST(gas_scatterv(t, NULL, NULL, zeros, NULL, GAS_INT32, root));
                break;
            }
            MUST(gas_coll_set_algorithm((gas_coll_t)coll, "auto"));
            int32_t one = 1, sum = 0;
            ST(gas_allreduce(t, &sum, &one, 1, GAS_INT32, GAS_OP_SUM));
            CHECK(sum == tt->n, "%s: the allreduce after it gave %d, expected %d", what, (int)sum, tt->n);
            if (is_auto)
                break;
        }
    }
}

/* ------------------------------------------------------------------------ */
/* Non-blocking, concurrency, errors                                         */
/* ------------------------------------------------------------------------ */

/* Non-blocking collectives on two teams at once, overlapped with puts. */
static void t_nonblocking(const struct tteam *a, const struct tteam *b, gas_ptr_t stamps)
{
    enum { N = 1000 };
    static double x[N], y[N], z[N];
    static int32_t bc[N];
    static double sc[N];
    static int64_t ex_in[N], ex[N];
    static gas_double_int64_t loc_in[N], loc[N];
    for (int iter = 0; iter < 20; iter++) {
        /* scan and exscan among them: recursive doubling, then the chain on odd iterations */
        const char *salg = iter % 2 ? "chain" : "recursive_doubling";
        MUST(gas_coll_set_algorithm(GAS_COLL_SCAN, salg));
        MUST(gas_coll_set_algorithm(GAS_COLL_EXSCAN, salg));
        uint64_t salt = ++callno;
        snprintf(what, sizeof what, "non-blocking, teams %s and %s, iteration %d", a->name, b->name, iter);
        fill(x, GAS_DOUBLE, N, t_rank, salt, GAS_OP_SUM);
        fill(bc, GAS_INT32, N, t_rank, salt, GAS_OP_SUM);
        int root = iter % b->n;
        fill(ex_in, GAS_INT64, N, t_rank, salt, GAS_OP_BXOR);
        fill(loc_in, GAS_DOUBLE_INT64, N, t_rank, salt, GAS_OP_MAXLOC);
        gas_handle_t h[7] = {0};
        ST(gas_allreduce_nb(a->team, y, x, N, GAS_DOUBLE, GAS_OP_SUM, &h[0]));
        ST(gas_broadcast_nb(b->team, bc, N, GAS_INT32, root, &h[1]));
        ST(gas_scan_nb(a->team, sc, x, N, GAS_DOUBLE, GAS_OP_SUM, &h[4]));
        ST(gas_team_barrier_nb(a->team, &h[2]));
        ST(gas_exscan_nb(b->team, ex, ex_in, N, GAS_INT64, GAS_OP_BXOR, &h[5]));
        ST(gas_allreduce_nb(b->team, z, x, N, GAS_DOUBLE, GAS_OP_MAX, &h[3]));
        ST(gas_allreduce_nb(a->team, loc, loc_in, N, GAS_DOUBLE_INT64, GAS_OP_MAXLOC, &h[6]));
        /* puts while they run: a stamp for the next world rank */
        uint64_t v = salt;
        gas_ptr_t slot;
        MUST(gas_ptr_index(stamps, 8, (uint64_t)((t_rank + 1) % t_nranks), &slot));
        for (int k = 0; k < 10; k++)
            ST(gas_put(slot, &v, 8));
        int done = 0;
        if (iter % 2)
            for (int spins = 0; spins < 1000 && !done; spins++)
                ST(gas_test(h[2], &done));
        if (!done)
            ST(gas_wait(h[2]));
        ST(gas_wait(h[1]));
        ST(gas_wait(h[0]));
        ST(gas_wait(h[3]));
        ST(gas_wait(h[5]));
        ST(gas_wait(h[4]));
        ST(gas_wait(h[6]));
        int bad = 0;
        for (size_t i = 0; i < N && bad < 3; i++) {
            bad += !check_prefix(&sc[i], GAS_DOUBLE, GAS_OP_SUM, a, a->me + 1, i, salt,
                                 iter % 2, what);
            bad += !check_prefix(&ex[i], GAS_INT64, GAS_OP_BXOR, b, b->me, i, salt, 0, what);
        }
        check_reduced_all(y, GAS_DOUBLE, GAS_OP_SUM, a, N, 0, salt, what);
        check_reduced_all(z, GAS_DOUBLE, GAS_OP_MAX, b, N, 0, salt, what);
        check_reduced_all(loc, GAS_DOUBLE_INT64, GAS_OP_MAXLOC, a, N, 0, salt, what);
        check_block(bc, GAS_INT32, b->world[root], 0, N, salt, what);
        ST(gas_barrier());
        gas_ptr_t mine;
        MUST(gas_ptr_index(stamps, 8, (uint64_t)t_rank, &mine));
        CHECK(*(uint64_t *)gas_ptr_local(mine) == v, "%s: the overlapped put did not land", what);
        ST(gas_barrier());
    }
    MUST(gas_coll_set_algorithm(GAS_COLL_SCAN, "auto"));
    MUST(gas_coll_set_algorithm(GAS_COLL_EXSCAN, "auto"));
}

/*
 * Destinations inside the segment (a gas_malloc'ed array's local part): the
 * large messages go zero-copy, straight into them.  Every data-moving
 * algorithm, counts on both sides of GAS_COLL_ZCOPY_MIN.
 */
static void t_zero_copy(const struct tteam *tt)
{
    static const size_t counts[] = {1, 1000, 4095, 4097, 70001};
    size_t maxb = 70001 * 8 * (size_t)t_nranks + 64;
    gas_ptr_t arr;
    MUST(gas_malloc(maxb * (size_t)t_nranks, &arr));
    char *seg = gas_ptr_local(test_at(arr, (uint64_t)t_rank * maxb));
    if (seg == NULL)
        test_die("gas_ptr_local of my part is NULL");
    static const int colls[] = {GAS_COLL_ALLGATHER, GAS_COLL_BROADCAST, GAS_COLL_ALLTOALL,
                                GAS_COLL_GATHER, GAS_COLL_GATHERV, GAS_COLL_SCATTERV,
                                GAS_COLL_ALLREDUCE, GAS_COLL_SCAN, GAS_COLL_EXSCAN};
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
        gas_coll_t c = (gas_coll_t)colls[ci];
        for (int a = 1; wanted(c) && gas_coll_algorithm(c, a); a++) {
            const char *alg = gas_coll_algorithm(c, a);
            MUST(gas_coll_set_algorithm(c, alg));
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
                size_t n = counts[k] / (c == GAS_COLL_ALLTOALL || c == GAS_COLL_GATHER ||
                                        c == GAS_COLL_GATHERV || c == GAS_COLL_SCATTERV ? 2 : 1);
                size_t vc[64], vd[64], vt = 0;   /* v forms: member i has n - i (at least 0) */
                for (int i = 0; i < tt->n && i < 64; i++) {
                    vc[i] = n > (size_t)i ? n - (size_t)i : 0;
                    vd[i] = vt;
                    vt += vc[i];
                }
                uint64_t salt = ++callno;
                size_t es = 8, nr = (size_t)tt->n;
                char *src = xalloc(n * nr * es);
                describe(tt, "zero-copy", alg, GAS_DOUBLE, -1, n, 0);
                strncat(what, " (dst in the segment)", sizeof what - strlen(what) - 1);
                poison(seg, n * nr * es);
                switch (c) {
                case GAS_COLL_ALLGATHER:
                    fill(src, GAS_DOUBLE, n, t_rank, salt, GAS_OP_SUM);
                    ST(gas_allgather(tt->team, seg, src, n, GAS_DOUBLE));
                    for (size_t i = 0; i < nr; i++)
                        check_block(seg + i * n * es, GAS_DOUBLE, tt->world[i], 0, n, salt, what);
                    break;
                case GAS_COLL_BROADCAST:
                    if (tt->me == 0)
                        fill(seg, GAS_DOUBLE, n, t_rank, salt, GAS_OP_SUM);
                    ST(gas_broadcast(tt->team, seg, n, GAS_DOUBLE, 0));
                    check_block(seg, GAS_DOUBLE, tt->world[0], 0, n, salt, what);
                    break;
                case GAS_COLL_ALLTOALL:
                    for (size_t j = 0; j < nr; j++)
                        for (size_t i = 0; i < n; i++)
                            value(src + (j * n + i) * es, GAS_DOUBLE, t_rank,
                                  (uint64_t)tt->world[j] * BIG + i, salt, GAS_OP_SUM);
                    ST(gas_alltoall(tt->team, seg, src, n, GAS_DOUBLE));
                    for (size_t j = 0; j < nr; j++)
                        check_block(seg + j * n * es, GAS_DOUBLE, tt->world[j],
                                    (uint64_t)t_rank * BIG, n, salt, what);
                    break;
                case GAS_COLL_GATHER:
                    fill(src, GAS_DOUBLE, n, t_rank, salt, GAS_OP_SUM);
                    ST(gas_gather(tt->team, seg, src, n, GAS_DOUBLE, 0));
                    if (tt->me == 0)
                        for (size_t i = 0; i < nr; i++)
                            check_block(seg + i * n * es, GAS_DOUBLE, tt->world[i], 0, n, salt, what);
                    break;
                case GAS_COLL_SCAN:
                case GAS_COLL_EXSCAN: {
                    int excl = c == GAS_COLL_EXSCAN, bad = 0;
                    fill(src, GAS_DOUBLE, n, t_rank, salt, GAS_OP_SUM);
                    ST(excl ? gas_exscan(tt->team, seg, src, n, GAS_DOUBLE, GAS_OP_SUM)
                            : gas_scan(tt->team, seg, src, n, GAS_DOUBLE, GAS_OP_SUM));
                    for (size_t i = 0; i < n && bad < 3; i++)
                        bad += !check_prefix(seg + i * es, GAS_DOUBLE, GAS_OP_SUM, tt,
                                             tt->me + !excl, i, salt,
                                             strcmp(alg, "chain") == 0, what);
                } break;
                case GAS_COLL_GATHERV:
                    fill(src, GAS_DOUBLE, vc[tt->me], t_rank, salt, GAS_OP_SUM);
                    ST(gas_gatherv(tt->team, seg, src, vc, NULL, GAS_DOUBLE, 0));
                    if (tt->me == 0)
                        for (size_t i = 0; i < nr; i++)
                            check_block(seg + vd[i] * es, GAS_DOUBLE, tt->world[i], 0, vc[i],
                                        salt, what);
                    break;
                case GAS_COLL_SCATTERV:
                    fill(src, GAS_DOUBLE, vt, tt->world[0], salt, GAS_OP_SUM);
                    ST(gas_scatterv(tt->team, seg, src, vc, NULL, GAS_DOUBLE, 0));
                    check_block(seg, GAS_DOUBLE, tt->world[0], vd[tt->me], vc[tt->me], salt, what);
                    break;
                default:
                    fill(src, GAS_DOUBLE, n, t_rank, salt, GAS_OP_MAX);
                    ST(gas_allreduce(tt->team, seg, src, n, GAS_DOUBLE, GAS_OP_MAX));
                    check_reduced_all(seg, GAS_DOUBLE, GAS_OP_MAX, tt, n, 0, salt, what);
                    break;
                }
                free(src);
            }
            MUST(gas_coll_set_algorithm(c, "auto"));
        }
    }
    CHECK_OK(gas_free(arr));
}

/* Many small collectives back to back, alternating teams: no cross-talk. */
static void t_back_to_back(void)
{
    for (int iter = 0; iter < 300; iter++) {
        const struct tteam *tt = &teams[iter % nteams];
        uint64_t salt = ++callno;
        int64_t in[3], out[3];
        snprintf(what, sizeof what, "back-to-back %d on team %s", iter, tt->name);
        fill(in, GAS_INT64, 3, t_rank, salt, GAS_OP_SUM);
        if (tt->team == GAS_TEAM_NULL)
            continue;
        ST(gas_allreduce(tt->team, out, in, 3, GAS_INT64, GAS_OP_SUM));
        check_reduced_all(out, GAS_INT64, GAS_OP_SUM, tt, 3, 0, salt, what);
        int root = iter % tt->n;
        if (tt->me == root)
            memcpy(out, in, sizeof in);
        ST(gas_broadcast(tt->team, out, 3, GAS_INT64, root));
        check_block(out, GAS_INT64, tt->world[root], 0, 3, salt, what);
    }
}

/* status st with a message that holds `has`; every rank calls alike. */
static void check_err(gas_status_t st, gas_status_t want, const char *has, const char *call)
{
    CHECK(st == want && strstr(gas_last_error(), has) != NULL,
          "%s: status %s (want %s), message \"%s\" (want \"%s\" in it)", call,
          gas_strerror(st), gas_strerror(want), st == GAS_OK ? "" : gas_last_error(), has);
}

/*
 * gatherv / scatterv argument errors.  Where every rank passes the same bad
 * value, every rank names the cause; where only the root's arguments are
 * bad (its displs, its dst), the others fail with its refusal relayed.
 */
static void t_errors_v(void)
{
    gas_team_t w = GAS_TEAM_WORLD;
    int n = t_nranks, me = t_rank;
    size_t ones[64], huge[64], far[64];
    int32_t buf[64] = {0};
    gas_handle_t h = (gas_handle_t)1;
    for (int i = 0; i < n; i++) {
        ones[i] = 1;
        huge[i] = SIZE_MAX / 3;
        far[i] = i == n - 1 ? SIZE_MAX / 4 : (size_t)i;   /* x 4 bytes + 4: past SIZE_MAX */
    }
    check_err(gas_gatherv(w, buf, buf, ones, NULL, GAS_INT32, n), GAS_ERR_RANK, "root",
              "gatherv, root out of range");
    check_err(gas_scatterv(w, buf, buf, ones, NULL, GAS_INT32, -1), GAS_ERR_RANK, "root",
              "scatterv, root -1");
    check_err(gas_gatherv(w, buf, buf, NULL, NULL, GAS_INT32, 0), GAS_ERR_INVALID,
              "counts is NULL", "gatherv, counts NULL");
    check_err(gas_scatterv(w, buf, buf, NULL, NULL, GAS_INT32, 0), GAS_ERR_INVALID,
              "counts is NULL", "scatterv, counts NULL");
    check_err(gas_gatherv(w, buf, NULL, ones, NULL, GAS_INT32, 0), GAS_ERR_INVALID,
              "src is NULL", "gatherv, src NULL");
    check_err(gas_scatterv(w, NULL, buf, ones, NULL, GAS_INT32, 0), GAS_ERR_INVALID,
              "dst is NULL", "scatterv, dst NULL");
    check_err(gas_gatherv(w, buf, buf, huge, NULL, GAS_INT32, 0), GAS_ERR_OVERFLOW,
              "overflow", "gatherv, counts overflow");
    check_err(gas_scatterv(w, buf, buf, huge, NULL, GAS_INT32, 0), GAS_ERR_OVERFLOW,
              "overflow", "scatterv, counts overflow");
    if (n >= 2) {   /* each block fits, their sum times 4 bytes does not: no displs to blame */
        size_t sixth[64];
        for (int i = 0; i < n; i++)
            sixth[i] = SIZE_MAX / 6;
        check_err(gas_allgatherv(w, buf, buf, sixth, NULL, GAS_INT32), GAS_ERR_OVERFLOW,
                  "counts overflow (their sum times the element size, displs being NULL)",
                  "allgatherv, NULL displs, the blocks' sum overflows");
    }
    check_err(gas_gatherv_nb(w, buf, buf, ones, NULL, GAS_INT32, 0, NULL), GAS_ERR_INVALID,
              "handle_p is NULL", "gatherv_nb, handle_p NULL");
    check_err(gas_scatterv_nb(w, buf, buf, ones, NULL, GAS_INT32, 0, &h), GAS_OK, "",
              "scatterv_nb on 1-element blocks");
    CHECK_OK(gas_wait(h));
    /* The root's arguments alone are bad: the others learn of its refusal (two
     * refusals in a row for different causes: test_coll_end's refused mode). */
    const char *relayed = "refused its collective";
    check_err(gas_scatterv(w, buf, buf, ones, far, GAS_INT32, 0), GAS_ERR_OVERFLOW,
              me == 0 ? "displs[" : relayed, "scatterv, the root's displs overflow");
    MUST(gas_barrier());
    /* (a sender's part may complete without the root: GAS_OK there, its message thrown away) */
    gas_status_t st = gas_gatherv(w, me == 0 ? NULL : buf, buf, ones, NULL, GAS_INT32, 0);
    if (me != 0 && st == GAS_OK)
        check_err(st, GAS_OK, "", "gatherv, the root's dst NULL");
    else
        check_err(st, GAS_ERR_INVALID, me == 0 ? "dst is NULL" : relayed,
                  "gatherv, the root's dst NULL");
    MUST(gas_barrier());
    if (n > 1) {   /* GAS_IN_PLACE off the root: refused there; the root learns of it */
        int root = n - 1;
        check_err(gas_gatherv(w, buf, GAS_IN_PLACE, ones, NULL, GAS_INT32, root),
                  GAS_ERR_INVALID, me == root ? relayed : "GAS_IN_PLACE is for the root",
                  "gatherv, GAS_IN_PLACE off the root");
        /* (the root only sends: it may complete before it learns of the refusals) */
        gas_status_t sst = gas_scatterv(w, buf, GAS_IN_PLACE, ones, NULL, GAS_INT32, root);
        if (me != root || sst != GAS_OK)
            check_err(sst, GAS_ERR_INVALID, me == root ? relayed : "GAS_IN_PLACE is for the root",
                      "scatterv, GAS_IN_PLACE off the root");
    }
}

/* st is GAS_ERR_INVALID with a message holding all of call, op and type. */
static void check_refused(gas_status_t st, const char *call, const char *op, const char *type)
{
    const char *m = st == GAS_OK ? "" : gas_last_error();
    CHECK(st == GAS_ERR_INVALID && strstr(m, call) && strstr(m, op) && strstr(m, type),
          "%s with %s on %s: status %s, message \"%s\" (want the call, op and type named)",
          call, op, type, gas_strerror(st), m);
}

/*
 * minloc / maxloc take the pair types alone, and the pair types take them
 * alone; the sizes of the pair types.
 */
static void t_errors_loc(void)
{
    gas_team_t w = GAS_TEAM_WORLD;
    gas_double_int64_t p[4] = {{0}};
    int32_t i4[4] = {0};
    float f[4] = {0};
    gas_handle_t h = (gas_handle_t)1;
    CHECK(gas_dtype_size(GAS_2INT32) == 8 && gas_dtype_size(GAS_FLOAT_INT32) == 8 &&
          gas_dtype_size(GAS_2INT64) == 16 && gas_dtype_size(GAS_DOUBLE_INT64) == 16 &&
          gas_dtype_size(GAS_DTYPE_COUNT) == 0, "gas_dtype_size of the pair types");
    check_refused(gas_allreduce(w, i4, i4, 4, GAS_INT32, GAS_OP_MINLOC), "gas_allreduce",
                  "minloc", "int32");
    CHECK(strstr(gas_last_error(), "pair types only"), "minloc on int32: \"%s\"",
          gas_last_error());
    check_refused(gas_reduce(w, f, f, 4, GAS_FLOAT, GAS_OP_MAXLOC, 0), "gas_reduce", "maxloc",
                  "float");
    check_refused(gas_reduce_scatter(w, p, p, 1, GAS_DOUBLE_INT64, GAS_OP_SUM),
                  "gas_reduce_scatter", "sum", "double_int64");
    CHECK(strstr(gas_last_error(), "minloc and maxloc only"), "sum on double_int64: \"%s\"",
          gas_last_error());
    check_refused(gas_scan(w, p, p, 2, GAS_2INT32, GAS_OP_MIN), "gas_scan", "min", "2int32");
    check_refused(gas_exscan(w, p, p, 2, GAS_FLOAT_INT32, GAS_OP_MAX), "gas_exscan", "max",
                  "float_int32");
    check_refused(gas_allreduce_nb(w, p, p, 2, GAS_2INT64, GAS_OP_BXOR, &h), "gas_allreduce_nb",
                  "bxor", "2int64");
    CHECK(h == GAS_HANDLE_NULL, "allreduce_nb refused: the handle is not GAS_HANDLE_NULL");
    /* a valid pair call after the refusals, on the world */
    gas_2int32_t mine = {.val = t_rank % 2, .idx = t_nranks - t_rank}, got;
    CHECK_OK(gas_allreduce(w, &got, &mine, 1, GAS_2INT32, GAS_OP_MAXLOC));
    int32_t want_idx = t_nranks > 1 ? t_nranks - (t_nranks % 2 ? t_nranks - 2 : t_nranks - 1) : 1;
    CHECK(got.val == (t_nranks > 1) && got.idx == want_idx,
          "maxloc after the refusals: (%d, %d), expected (%d, %d)", got.val, got.idx,
          t_nranks > 1, want_idx);
}

static void t_errors(void)
{
    gas_team_t w = GAS_TEAM_WORLD;
    float f[4] = {0};
    int32_t i4[4] = {0};
    CHECK_STATUS(gas_allreduce(w, f, f, 4, GAS_FLOAT, GAS_OP_BXOR), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "bitwise") != NULL, "bitwise op on float: message \"%s\"", gas_last_error());
    CHECK_STATUS(gas_reduce(w, f, f, 4, GAS_DOUBLE, GAS_OP_BAND, 0), GAS_ERR_INVALID);
    CHECK_STATUS(gas_allreduce(w, i4, i4, 4, (gas_dtype_t)99, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK_STATUS(gas_allreduce(w, i4, i4, 4, GAS_INT32, (gas_redop_t)42), GAS_ERR_INVALID);
    CHECK_STATUS(gas_broadcast(w, i4, 4, GAS_INT32, t_nranks), GAS_ERR_RANK);
    CHECK(strstr(gas_last_error(), "root") != NULL, "bad root: message \"%s\"", gas_last_error());
    CHECK_STATUS(gas_reduce(w, i4, i4, 4, GAS_INT32, GAS_OP_SUM, -1), GAS_ERR_RANK);
    CHECK_STATUS(gas_gather(w, i4, i4, 1, GAS_INT32, -5), GAS_ERR_RANK);
    CHECK_STATUS(gas_allreduce(w, NULL, i4, 4, GAS_INT32, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK_STATUS(gas_allgather(w, i4, NULL, 1, GAS_INT32), GAS_ERR_INVALID);
    CHECK_STATUS(gas_allreduce(w, i4, i4, SIZE_MAX / 2, GAS_INT32, GAS_OP_SUM), GAS_ERR_OVERFLOW);
    CHECK_STATUS(gas_alltoall(w, i4, i4, SIZE_MAX / 2, GAS_INT32), GAS_ERR_OVERFLOW);
    /* scan and exscan: allreduce's checks, messages naming the call */
    gas_handle_t h = (gas_handle_t)1;
    CHECK_STATUS(gas_scan(w, f, f, 4, GAS_FLOAT, GAS_OP_BOR), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "gas_scan") && strstr(gas_last_error(), "bitwise"),
          "scan, bitwise op on float: message \"%s\"", gas_last_error());
    CHECK_STATUS(gas_exscan(w, f, f, 4, GAS_DOUBLE, GAS_OP_BAND), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "gas_exscan") && strstr(gas_last_error(), "bitwise"),
          "exscan, bitwise op on double: message \"%s\"", gas_last_error());
    CHECK_STATUS(gas_scan(w, i4, i4, 4, (gas_dtype_t)99, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "unknown type"), "scan, unknown type: \"%s\"", gas_last_error());
    CHECK_STATUS(gas_exscan(w, i4, i4, 4, GAS_INT32, (gas_redop_t)42), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "unknown reduction op"), "exscan, unknown op: \"%s\"",
          gas_last_error());
    CHECK_STATUS(gas_scan(w, NULL, i4, 4, GAS_INT32, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "gas_scan") && strstr(gas_last_error(), "dst is NULL"),
          "scan, NULL dst: \"%s\"", gas_last_error());
    CHECK_STATUS(gas_exscan(w, i4, NULL, 4, GAS_INT32, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "src is NULL"), "exscan, NULL src: \"%s\"", gas_last_error());
    CHECK_STATUS(gas_exscan(w, i4, i4, SIZE_MAX / 2, GAS_INT32, GAS_OP_SUM), GAS_ERR_OVERFLOW);
    CHECK(strstr(gas_last_error(), "gas_exscan") && strstr(gas_last_error(), "overflow"),
          "exscan, overflow: \"%s\"", gas_last_error());
    CHECK_STATUS(gas_scan_nb(w, i4, i4, 4, GAS_INT32, GAS_OP_SUM, NULL), GAS_ERR_INVALID);
    CHECK(strstr(gas_last_error(), "gas_scan_nb") && strstr(gas_last_error(), "handle_p is NULL"),
          "scan_nb, NULL handle_p: \"%s\"", gas_last_error());
    CHECK_STATUS(gas_exscan_nb(w, i4, i4, 4, GAS_FLOAT, GAS_OP_BXOR, &h), GAS_ERR_INVALID);
    CHECK(h == GAS_HANDLE_NULL, "exscan_nb refused: the handle is not GAS_HANDLE_NULL");
    t_errors_loc();
    CHECK_STATUS(gas_scan(GAS_TEAM_NULL, i4, i4, 4, GAS_INT32, GAS_OP_SUM), GAS_ERR_INVALID);
    CHECK_STATUS(gas_team_barrier(GAS_TEAM_NULL), GAS_ERR_INVALID);
    CHECK_STATUS(gas_team_destroy(w), GAS_ERR_INVALID);
    CHECK_STATUS(gas_coll_set_algorithm(GAS_COLL_ALLREDUCE, "quantum"), GAS_ERR_INVALID);
    CHECK_STATUS(gas_team_split_strided(w, 0, 0, 1, NULL), GAS_ERR_INVALID);
    int r = 0;
    CHECK_STATUS(gas_team_translate(w, t_nranks, w, &r), GAS_ERR_RANK);
    /* collective argument errors: every rank passes the same bad value */
    gas_team_t t = (gas_team_t)1;
    CHECK_STATUS(gas_team_split_strided(w, 0, 1, t_nranks + 1, &t), GAS_ERR_RANK);
    CHECK_STATUS(gas_team_split_color(w, -7, 0, &t), GAS_ERR_INVALID);
    /* ... or different ones */
    CHECK_STATUS(gas_team_split_strided(w, 0, 1, t_rank == 0 ? 1 : t_nranks, &t),
                 t_nranks > 1 ? GAS_ERR_INVALID : GAS_OK);
    if (t_nranks == 1)
        CHECK_OK(gas_team_destroy(t));
    t_errors_v();
    /* the world still works */
    int32_t one = 1, sum = 0;
    CHECK_OK(gas_allreduce(w, &sum, &one, 1, GAS_INT32, GAS_OP_SUM));
    CHECK(sum == t_nranks, "allreduce after the errors: %d, expected %d", sum, t_nranks);
}

/* Pairs of ranks call mismatched collectives: the receiver must say so. */
static void t_mismatch(void)
{
    gas_team_t pair = GAS_TEAM_NULL;
    int32_t buf[4] = {1, 2, 3, 4}, out[4];
    MUST(gas_coll_set_algorithm(GAS_COLL_ALLREDUCE, "recursive_doubling"));
    MUST(gas_team_split_color(GAS_TEAM_WORLD, t_rank / 2, 0, &pair));
    if (gas_team_size(pair) == 2) {
        if (gas_team_rank(pair) == 0) {
            CHECK_OK(gas_broadcast(pair, buf, 4, GAS_INT32, 0));
        } else {
            gas_status_t st = gas_allreduce(pair, out, buf, 4, GAS_INT32, GAS_OP_SUM);
            CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "mismatch") &&
                  strstr(gas_last_error(), "broadcast") && strstr(gas_last_error(), "allreduce"),
                  "mismatched broadcast/allreduce: status %s, message \"%s\"", gas_strerror(st),
                  gas_last_error());
        }
    }
    /* The broadcaster's call completed; the allreduce chunk it never took shows it at the end
     * (the other rank already reported, so its destroy says nothing more). */
    int pair_size = gas_team_size(pair);
    gas_status_t end = gas_team_destroy(pair);
    if (pair_size == 2 && t_rank % 2 == 0)
        CHECK(end == GAS_ERR_INVALID && strstr(gas_last_error(), "found at its end") &&
                  strstr(gas_last_error(), "allreduce"),
              "broadcaster's gas_team_destroy: status %s, message \"%s\"", gas_strerror(end),
              gas_last_error());
    else
        CHECK_STATUS(end, GAS_OK);
    /* same collective, different counts: both see it */
    MUST(gas_team_split_color(GAS_TEAM_WORLD, t_rank / 2, 0, &pair));
    if (gas_team_size(pair) == 2) {
        gas_status_t st = gas_allreduce(pair, out, buf, gas_team_rank(pair) ? 4 : 3, GAS_INT32,
                                        GAS_OP_SUM);
        CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "mismatch"),
              "allreduce with different counts: status %s, message \"%s\"", gas_strerror(st),
              gas_last_error());
    }
    MUST(gas_team_destroy(pair));
    /* gatherv / scatterv whose counts differ on the non-root (same total): the
     * member that receives the other's block reports it, the other may have
     * completed (its gas_team_destroy may then report it) */
    for (int gathers = 1; gathers >= 0; gathers--) {
        MUST(gas_team_split_color(GAS_TEAM_WORLD, t_rank / 2, 0, &pair));
        int pr = gas_team_rank(pair), receiver = gathers ? 0 : 1;
        size_t counts[2] = {2, 2};
        if (pr == 1) {
            counts[0] = 1;
            counts[1] = 3;
        }
        int32_t v[8] = {0};
        gas_status_t st = gathers ? gas_gatherv(pair, out, buf, counts, NULL, GAS_INT32, 0)
                                  : gas_scatterv(pair, out, v, counts, NULL, GAS_INT32, 0);
        if (gas_team_size(pair) == 2 && pr == receiver)
            CHECK(st == GAS_ERR_INVALID && strstr(gas_last_error(), "mismatch") &&
                      strstr(gas_last_error(), gathers ? "gas_gatherv" : "gas_scatterv"),
                  "%s with different counts: status %s, message \"%s\"",
                  gathers ? "gatherv" : "scatterv", gas_strerror(st),
                  st == GAS_OK ? "" : gas_last_error());
        else
            CHECK(st == GAS_OK || st == GAS_ERR_INVALID, "%s with different counts, the sender: "
                  "%s", gathers ? "gatherv" : "scatterv", gas_strerror(st));
        st = gas_team_destroy(pair);
        CHECK(st == GAS_OK || (st == GAS_ERR_INVALID && pr != receiver),
              "%s with different counts: gas_team_destroy on team rank %d: %s",
              gathers ? "gatherv" : "scatterv", pr, gas_strerror(st));
    }
    MUST(gas_coll_set_algorithm(GAS_COLL_ALLREDUCE, "auto"));
    MUST(gas_barrier());
}

static void add_team(const char *name, gas_team_t t)
{
    struct tteam *tt = &teams[nteams];
    tt->name = name;
    tt->team = t;
    nteams++;   /* the same index on every rank, member or not */
    if (t == GAS_TEAM_NULL)
        return;
    tt->n = gas_team_size(t);
    tt->me = gas_team_rank(t);
    if (tt->n > 64)
        test_die("team too large for the test");
    for (int i = 0; i < tt->n; i++)
        MUST(gas_team_translate(t, i, GAS_TEAM_WORLD, &tt->world[i]));
}

static void check_team(const char *name, gas_team_t t, int want_n, const int *want_world)
{
    if (!CHECK(gas_team_size(t) == want_n, "team %s: size %d, expected %d", name, gas_team_size(t), want_n))
        return;
    for (int i = 0; i < want_n; i++) {
        int w = -1, back = -1;
        CHECK_OK(gas_team_translate(t, i, GAS_TEAM_WORLD, &w));
        CHECK(w == want_world[i], "team %s: member %d is world rank %d, expected %d", name, i, w, want_world[i]);
        CHECK_OK(gas_team_translate(GAS_TEAM_WORLD, w, t, &back));
        CHECK(back == i, "team %s: world rank %d translates back to %d, expected %d", name, w, back, i);
        if (w == t_rank)
            CHECK(gas_team_rank(t) == i, "team %s: my rank %d, expected %d", name, gas_team_rank(t), i);
    }
}

int main(int argc, char **argv)
{
    test_begin("coll");
    for (int i = 1; i < argc; i++) {
        quick |= strcmp(argv[i], "--quick") == 0;
        use_nb |= strcmp(argv[i], "--nb") == 0;
        if (strcmp(argv[i], "--scan") == 0)
            only = "scan,exscan";
        if (strcmp(argv[i], "--pairs") == 0) {
            pairs_only = 1;
            only = "reduce,allreduce,reduce_scatter,scan,exscan";
        }
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
    }
    int n = t_nranks, me = t_rank;
    gas_ptr_t stamps;
    MUST(gas_malloc((size_t)n * 8, &stamps));
    gas_layout_t lay = test_layout_of(stamps);
    if (lay.block != 8)
        test_die("unexpected layout of the stamps");
    MUST(gas_barrier());

    /* teams, and what they must contain */
    int want[64], k;
    gas_team_t even = GAS_TEAM_NULL, odd = GAS_TEAM_NULL, col = GAS_TEAM_NULL, node = GAS_TEAM_NULL,
               solo = GAS_TEAM_NULL;
    MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 2, (n + 1) / 2, &even));
    if (n > 1)
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 1, 2, n / 2, &odd));
    MUST(gas_team_split_color(GAS_TEAM_WORLD, me % 3 == 2 ? GAS_COLOR_UNDEFINED : me % 3, -me, &col));
    MUST(gas_team_split_node(GAS_TEAM_WORLD, &node));
    MUST(gas_team_split_strided(GAS_TEAM_WORLD, n - 1, 1, 1, &solo));
    CHECK((me % 2 == 0) == (even != GAS_TEAM_NULL), "membership of the even team");
    CHECK((me % 2 == 1) == (odd != GAS_TEAM_NULL), "membership of the odd team");
    CHECK((me % 3 != 2) == (col != GAS_TEAM_NULL), "membership of the color team");
    CHECK((me == n - 1) == (solo != GAS_TEAM_NULL), "membership of the team of one");
    CHECK(node != GAS_TEAM_NULL, "every rank is in its node team");
    if (even) {
        for (k = 0; 2 * k < n; k++) want[k] = 2 * k;
        check_team("even", even, k, want);
    }
    if (odd) {
        for (k = 0; 2 * k + 1 < n; k++) want[k] = 2 * k + 1;
        check_team("odd", odd, k, want);
    }
    if (col) {   /* same color, key -rank: descending ranks */
        k = 0;
        for (int r = n - 1; r >= 0; r--)
            if (r % 3 == me % 3) want[k++] = r;
        check_team("color", col, k, want);
    }
    if (solo) {
        want[0] = n - 1;
        check_team("solo", solo, 1, want);
    }
    add_team("world", GAS_TEAM_WORLD);
    add_team(me % 2 ? "odd" : "even", me % 2 ? odd : even);
    add_team("color", col);
    add_team("node", node);
    add_team("solo", solo);

    /* the matrix, one team after another; other teams' members wait at the world barrier */
    for (int i = 0; i < nteams; i++) {
        double t0 = test_elapsed();
        callno = (uint64_t)(i + 1) << 32;   /* the same on every member of the team */
        MUST(gas_barrier());   /* stamps of the previous team are all read */
        if (teams[i].team == GAS_TEAM_NULL)
            continue;
        run_matrix(&teams[i], stamps);
        t_zero_null(&teams[i]);
        if (teams[i].me == 0)
            test_note("team %s (%d ranks): matrix passed %s in %.1f s", teams[i].name, teams[i].n,
                      t_failures ? "WITH FAILURES" : "", test_elapsed() - t0);
    }
    MUST(gas_barrier());
    callno = 100ull << 32;
    if (only == NULL)   /* --only: the listed matrices (and zero-copy) alone */
        t_back_to_back();
    MUST(gas_barrier());
    t_nonblocking(&teams[0], &teams[1], stamps);
    callno = 200ull << 32;
    t_zero_copy(&teams[0]);
    if (me == 0)
        test_note("non-blocking and back-to-back passed at %.1f s", test_elapsed());
    t_errors();
    MUST(gas_barrier());
    t_mismatch();
    if (me == 0)
        test_note("errors and mismatches detected at %.1f s", test_elapsed());

    MUST(gas_team_destroy(even));
    MUST(gas_team_destroy(odd));
    MUST(gas_team_destroy(col));
    MUST(gas_team_destroy(node));
    MUST(gas_team_destroy(solo));
    /* a non-blocking collective's handle outlives its team: gas_team_destroy
     * completes it, and gas_wait / gas_test afterwards only free the handle
     * (the sanitizers test catches a touch of the freed team) */
    for (int i = 0; i < 4; i++) {
        gas_team_t t;
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, &t));
        int64_t src = me + i, sum = -1;
        gas_handle_t h, hb;
        CHECK_OK(gas_allreduce_nb(t, &sum, &src, 1, GAS_INT64, GAS_OP_SUM, &h));
        CHECK_OK(gas_team_barrier_nb(t, &hb));
        MUST(gas_team_destroy(t));
        if (i % 2) {
            int done = 0;
            CHECK_OK(gas_test(h, &done));
            CHECK(done, "gas_test after gas_team_destroy: the allreduce is not done");
            CHECK_OK(gas_test(hb, &done));
            CHECK(done, "gas_test after gas_team_destroy: the barrier is not done");
        } else {
            CHECK_OK(gas_wait(h));
            CHECK_OK(gas_wait(hb));
        }
        int64_t expect = (int64_t)n * (n - 1) / 2 + (int64_t)n * i;
        CHECK(sum == expect, "non-blocking allreduce completed by gas_team_destroy: %" PRId64
              ", expected %" PRId64, sum, expect);
    }
    /* slots come back: create and destroy more teams than there are slots */
    for (int i = 0; i < 40; i++) {
        gas_team_t t;
        MUST(gas_team_split_strided(GAS_TEAM_WORLD, 0, 1, n, &t));
        int32_t one = 1, sum = 0;
        CHECK_OK(gas_allreduce(t, &sum, &one, 1, GAS_INT32, GAS_OP_SUM));
        CHECK(sum == n, "allreduce on re-created team %d: %d", i, sum);
        MUST(gas_team_destroy(t));
    }
    CHECK_OK(gas_free(stamps));
    return test_end();
}
