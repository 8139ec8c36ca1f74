/*
 * reduce_ops.c - the reduction kernels: dst[i] = dst[i] op src[i] for every
 * type x op pair.  Signed integers add and multiply in their unsigned type,
 * so overflow wraps (two's complement) instead of being undefined.  The
 * value-index pair types take minloc and maxloc alone, and only they do.
 */
#include "coll.h"

#include <math.h>
#include <string.h>

#define ARITH(T, U)                                                                       \
    static void sum_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = (T)(U)((U)d[i] + (U)s[i]); }                  \
    static void prod_##T(void *dv, const void *sv, size_t n)                                      \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = (T)(U)((U)d[i] * (U)s[i]); }                  \
    static void min_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = s[i] < d[i] ? s[i] : d[i]; }                  \
    static void max_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = s[i] > d[i] ? s[i] : d[i]; }

#define BITS(T)                                                                           \
    static void band_##T(void *dv, const void *sv, size_t n)                                      \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] &= s[i]; }                                      \
    static void bor_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] |= s[i]; }                                      \
    static void bxor_##T(void *dv, const void *sv, size_t n)                                      \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] ^= s[i]; }

/* float and double: plain arithmetic (unsigned-wrap casts do not apply) */
#define FARITH(T)                                                                         \
    static void sum_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] += s[i]; }                                      \
    static void prod_##T(void *dv, const void *sv, size_t n)                                      \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] *= s[i]; }                                      \
    static void min_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = s[i] < d[i] ? s[i] : d[i]; }                  \
    static void max_##T(void *dv, const void *sv, size_t n)                                       \
    { T *d = dv; const T *s = sv; for (size_t i = 0; i < n; i++) d[i] = s[i] > d[i] ? s[i] : d[i]; }

/*
 * Value-index pairs (gas.h): does pair a win over pair b?  Values first
 * (MINLOC: smaller, MAXLOC: larger; a NaN never wins over a number, two
 * NaNs tie), then the smaller index, then, for equal values of other bits
 * (-0.0 and 0.0, NaN payloads) with equal indices, the value's bits as a
 * signed integer (MINLOC: smaller).  A strict total order on (bits, index),
 * so picking the winner is commutative and associative bit for bit: every
 * algorithm's order of combination gives the same pair.  B is the signed
 * integer type of the value's width; ISNAN is isnan or NOT_NAN (integers).
 */
#define NOT_NAN(v) 0
#define LOC(P, B, ISNAN)                                                                  \
    static int wins_##P(const P *a, const P *b, int max)                                  \
    {                                                                                     \
        int an = ISNAN(a->val), bn = ISNAN(b->val);                                       \
        if (an != bn)                                                                     \
            return bn;                                                                    \
        if (!an && a->val != b->val)                                                      \
            return max ? a->val > b->val : a->val < b->val;                               \
        if (a->idx != b->idx)                                                             \
            return a->idx < b->idx;                                                       \
        B ab, bb;                                                                         \
        memcpy(&ab, &a->val, sizeof ab);                                                  \
        memcpy(&bb, &b->val, sizeof bb);                                                  \
        return max ? ab > bb : ab < bb;                                                   \
    }                                                                                     \
    static void minloc_##P(void *dv, const void *sv, size_t n)                           \
    { P *d = dv; const P *s = sv; for (size_t i = 0; i < n; i++) if (wins_##P(&s[i], &d[i], 0)) d[i] = s[i]; } \
    static void maxloc_##P(void *dv, const void *sv, size_t n)                           \
    { P *d = dv; const P *s = sv; for (size_t i = 0; i < n; i++) if (wins_##P(&s[i], &d[i], 1)) d[i] = s[i]; }

ARITH(int8_t, uint8_t) BITS(int8_t)
ARITH(uint8_t, uint8_t) BITS(uint8_t)
ARITH(int16_t, uint16_t) BITS(int16_t)
ARITH(uint16_t, uint16_t) BITS(uint16_t)
ARITH(int32_t, uint32_t) BITS(int32_t)
ARITH(uint32_t, uint32_t) BITS(uint32_t)
ARITH(int64_t, uint64_t) BITS(int64_t)
ARITH(uint64_t, uint64_t) BITS(uint64_t)
FARITH(float)
FARITH(double)
LOC(gas_2int32_t, int32_t, NOT_NAN)
LOC(gas_float_int32_t, int32_t, isnan)
LOC(gas_2int64_t, int64_t, NOT_NAN)
LOC(gas_double_int64_t, int64_t, isnan)

typedef void (*kernel_fn)(void *d, const void *s, size_t n);

#define INT_ROW(T)                                                                        \
    { sum_##T, prod_##T, min_##T, max_##T,     \
      band_##T, bor_##T, bxor_##T }
#define FLT_ROW(T)                                                                        \
    { sum_##T, prod_##T, min_##T, max_##T,     \
      NULL, NULL, NULL }
#define LOC_ROW(P) { [GAS_OP_MINLOC] = minloc_##P, [GAS_OP_MAXLOC] = maxloc_##P }

static const kernel_fn kernels[GAS_DTYPE_COUNT][GAS_OP_COUNT] = {
    [GAS_INT8] = INT_ROW(int8_t),     [GAS_UINT8] = INT_ROW(uint8_t),
    [GAS_INT16] = INT_ROW(int16_t),   [GAS_UINT16] = INT_ROW(uint16_t),
    [GAS_INT32] = INT_ROW(int32_t),   [GAS_UINT32] = INT_ROW(uint32_t),
    [GAS_INT64] = INT_ROW(int64_t),   [GAS_UINT64] = INT_ROW(uint64_t),
    [GAS_FLOAT] = FLT_ROW(float),     [GAS_DOUBLE] = FLT_ROW(double),
    [GAS_2INT32] = LOC_ROW(gas_2int32_t), [GAS_FLOAT_INT32] = LOC_ROW(gas_float_int32_t),
    [GAS_2INT64] = LOC_ROW(gas_2int64_t), [GAS_DOUBLE_INT64] = LOC_ROW(gas_double_int64_t),
};

static const size_t sizes[GAS_DTYPE_COUNT] = {
    [GAS_INT8] = 1, [GAS_UINT8] = 1, [GAS_INT16] = 2, [GAS_UINT16] = 2, [GAS_INT32] = 4,
    [GAS_UINT32] = 4, [GAS_INT64] = 8, [GAS_UINT64] = 8, [GAS_FLOAT] = 4, [GAS_DOUBLE] = 8,
    [GAS_2INT32] = sizeof(gas_2int32_t), [GAS_FLOAT_INT32] = sizeof(gas_float_int32_t),
    [GAS_2INT64] = sizeof(gas_2int64_t), [GAS_DOUBLE_INT64] = sizeof(gas_double_int64_t),
};

static const char *const type_names[GAS_DTYPE_COUNT] = {
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float", "double",
    "2int32", "float_int32", "2int64", "double_int64",
};

static const char *const op_names[GAS_OP_COUNT] = {
    "sum", "prod", "min", "max", "band", "bor", "bxor", "minloc", "maxloc",
};

void gas_co_reduce(void *dst, const void *src, size_t n, gas_dtype_t type, gas_redop_t op)
{
    kernels[type][op](dst, src, n);
}

/* The identity of op for an integer type of es bytes, as the low bytes of a uint64. */
static uint64_t int_identity(gas_redop_t op, size_t es, int is_signed)
{
    uint64_t ones = es == 8 ? ~0ull : (1ull << (8 * es)) - 1, top = 1ull << (8 * es - 1);
    switch (op) {
    case GAS_OP_PROD: return 1;
    case GAS_OP_BAND: return ones;
    case GAS_OP_MIN: return is_signed ? ones ^ top : ones;   /* the largest value */
    case GAS_OP_MAX: return is_signed ? top : 0;             /* the smallest */
    default: return 0;                                       /* sum, bor, bxor */
    }
}

/*
 * The identity of minloc / maxloc for a pair type, into one (sizes[type]
 * bytes): the value that loses to every number (the largest for minloc,
 * the smallest for maxloc, +-INFINITY for float and double) and the
 * largest index, so it loses every tie too.
 */
static void pair_identity(void *one, gas_dtype_t type, gas_redop_t op)
{
    int max = op == GAS_OP_MAXLOC;
    switch (type) {
    case GAS_2INT32: {
        gas_2int32_t p = {.val = max ? INT32_MIN : INT32_MAX, .idx = INT32_MAX};
        memcpy(one, &p, sizeof p);
    } break;
    case GAS_FLOAT_INT32: {
        gas_float_int32_t p = {.val = max ? -INFINITY : INFINITY, .idx = INT32_MAX};
        memcpy(one, &p, sizeof p);
    } break;
    case GAS_2INT64: {
        gas_2int64_t p = {.val = max ? INT64_MIN : INT64_MAX, .idx = INT64_MAX};
        memcpy(one, &p, sizeof p);
    } break;
    default: {
        gas_double_int64_t p = {.val = max ? -INFINITY : INFINITY, .idx = INT64_MAX};
        memcpy(one, &p, sizeof p);
    } break;
    }
}

int gas_co_type_is_pair(gas_dtype_t type)
{
    return type == GAS_2INT32 || type == GAS_FLOAT_INT32 || type == GAS_2INT64 ||
           type == GAS_DOUBLE_INT64;
}

void gas_co_identity(void *dst, size_t n, gas_dtype_t type, gas_redop_t op)
{
    size_t es = sizes[type];
    char one[16];
    if (gas_co_type_is_pair(type)) {
        pair_identity(one, type, op);
    } else if (type == GAS_FLOAT || type == GAS_DOUBLE) {
        double v = op == GAS_OP_PROD ? 1.0 : op == GAS_OP_MIN ? INFINITY
                                           : op == GAS_OP_MAX ? -INFINITY : 0.0;
        float f = (float)v;
        if (type == GAS_FLOAT)
            memcpy(one, &f, sizeof f);
        else
            memcpy(one, &v, sizeof v);
    } else {
        int is_signed = type == GAS_INT8 || type == GAS_INT16 || type == GAS_INT32 ||
                        type == GAS_INT64;
        uint64_t v = int_identity(op, es, is_signed);
        uint8_t v8 = (uint8_t)v;
        uint16_t v16 = (uint16_t)v;
        uint32_t v32 = (uint32_t)v;
        memcpy(one, es == 1 ? (void *)&v8 : es == 2 ? (void *)&v16 : es == 4 ? (void *)&v32
                                                                      : (void *)&v, es);
    }
    for (size_t i = 0; i < n; i++)
        memcpy((char *)dst + i * es, one, es);
}

int gas_co_op_valid(gas_dtype_t type, gas_redop_t op)
{
    return (unsigned)type < GAS_DTYPE_COUNT && (unsigned)op < GAS_OP_COUNT &&
           kernels[type][op] != NULL;
}

const char *gas_co_type_name(gas_dtype_t type)
{
    return (unsigned)type < GAS_DTYPE_COUNT ? type_names[type] : "unknown type";
}

const char *gas_co_op_name(gas_redop_t op)
{
    return (unsigned)op < GAS_OP_COUNT ? op_names[op] : "unknown op";
}

GAS_EXPORT size_t gas_dtype_size(gas_dtype_t type)
{
    return (unsigned)type < GAS_DTYPE_COUNT ? sizes[type] : 0;
}
