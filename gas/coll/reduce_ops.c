/*
 * reduce_ops.c - the reduction kernels: dst[i] = dst[i] op src[i] for every
 * type x op pair.  Signed integers add and multiply in their unsigned type,
 * so overflow wraps (two's complement) instead of being undefined.
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

typedef void (*kernel_fn)(void *d, const void *s, size_t n);

#define INT_ROW(T)                                                                        \
    { sum_##T, prod_##T, min_##T, max_##T,     \
      band_##T, bor_##T, bxor_##T }
#define FLT_ROW(T)                                                                        \
    { sum_##T, prod_##T, min_##T, max_##T,     \
      NULL, NULL, NULL }

static const kernel_fn kernels[GAS_DTYPE_COUNT][GAS_OP_COUNT] = {
    [GAS_INT8] = INT_ROW(int8_t),     [GAS_UINT8] = INT_ROW(uint8_t),
    [GAS_INT16] = INT_ROW(int16_t),   [GAS_UINT16] = INT_ROW(uint16_t),
    [GAS_INT32] = INT_ROW(int32_t),   [GAS_UINT32] = INT_ROW(uint32_t),
    [GAS_INT64] = INT_ROW(int64_t),   [GAS_UINT64] = INT_ROW(uint64_t),
    [GAS_FLOAT] = FLT_ROW(float),     [GAS_DOUBLE] = FLT_ROW(double),
};

static const size_t sizes[GAS_DTYPE_COUNT] = {
    [GAS_INT8] = 1, [GAS_UINT8] = 1, [GAS_INT16] = 2, [GAS_UINT16] = 2, [GAS_INT32] = 4,
    [GAS_UINT32] = 4, [GAS_INT64] = 8, [GAS_UINT64] = 8, [GAS_FLOAT] = 4, [GAS_DOUBLE] = 8,
};

static const char *const type_names[GAS_DTYPE_COUNT] = {
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float", "double",
};

static const char *const op_names[GAS_OP_COUNT] = {
    "sum", "prod", "min", "max", "band", "bor", "bxor",
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

void gas_co_identity(void *dst, size_t n, gas_dtype_t type, gas_redop_t op)
{
    size_t es = sizes[type];
    char one[8];
    if (type == GAS_FLOAT || type == GAS_DOUBLE) {
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
