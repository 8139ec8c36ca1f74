/*
 * ivar.c - waiting on and testing local words that other ranks write
 * (gas_wait_until_*, gas_test_until_*, and their _all/_any/_some forms over
 * an array of words, and the _vector forms of those with a comparison value
 * per word, as OpenSHMEM 1.5's point-to-point synchronisation).
 *
 * Every form is one look at a set of words: a single word is a set of one
 * that must hold (ALL).  A wait repeats the look inside gas_rt_wait, which
 * drives progress and sleeps on the doorbell; a test drives progress once
 * and looks once.  Either fails with GAS_ERR_PEER when the condition does not
 * hold and a rank has been given up on (the write may never come).
 */
#include "internal.h"
#include "runtime/wait.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

enum set_kind { SET_ALL, SET_ANY, SET_SOME };

/* The words of one call, and what it found. */
struct ivar_set {
    const char *call;
    enum set_kind kind;
    const void *ivars;
    size_t nelems;
    const int *status; /* NULL: every word counts; else word i counts when status[i] == 0 */
    unsigned width;    /* 4 or 8 */
    int is_signed;
    gas_cmp_t cmp;
    uint64_t value;
    const void *values; /* _vector forms: word i is compared with values[i], not value */
    int vector;        /* a _vector form (values must then be given) */
    size_t next;       /* ALL: words before it have been seen to hold */
    size_t *indices;   /* SOME: where the satisfying indices go */
    size_t found;      /* ANY: the index (SIZE_MAX: none); SOME: how many */
    int lost;          /* a rank given up on (-1: none) */
    uint64_t probe_at; /* gas_tl_probe_due's clock for this wait */
    int probe_next;    /* the next rank gas_tl_probe_gone_some looks at */
};

static int counts(const struct ivar_set *s, size_t i)
{
    return s->status == NULL || s->status[i] == 0;
}

static uint64_t load_word(const struct ivar_set *s, size_t i)
{
    if (s->width == 4)
        return __atomic_load_n((const uint32_t *)s->ivars + i, __ATOMIC_ACQUIRE);
    return __atomic_load_n((const uint64_t *)s->ivars + i, __ATOMIC_ACQUIRE);
}

/* What word i is compared with: the call's value, or values[i] (_vector). */
static uint64_t value_of(const struct ivar_set *s, size_t i)
{
    if (s->values == NULL)
        return s->value;
    if (s->width == 4)
        return ((const uint32_t *)s->values)[i];
    return ((const uint64_t *)s->values)[i];
}

/* Whether word i satisfies the call's comparison now. */
static int word_holds(const struct ivar_set *s, size_t i)
{
    uint64_t cur = load_word(s, i), value = value_of(s, i);
    int c;
    if (s->is_signed) {
        int64_t a = s->width == 4 ? (int64_t)(int32_t)cur : (int64_t)cur;
        int64_t b = s->width == 4 ? (int64_t)(int32_t)value : (int64_t)value;
        c = (a > b) - (a < b);
    } else {
        c = (cur > value) - (cur < value);
    }
    switch (s->cmp) {
    case GAS_CMP_EQ: return c == 0;
    case GAS_CMP_NE: return c != 0;
    case GAS_CMP_GT: return c > 0;
    case GAS_CMP_GE: return c >= 0;
    case GAS_CMP_LT: return c < 0;
    case GAS_CMP_LE: return c <= 0;
    }
    return 0;
}

/*
 * One look.  ALL: advances s->next past the words that hold (a word seen to
 * hold is not read again) and is done at the end.  ANY: the lowest counted
 * word that holds.  SOME: every counted word that holds, in ascending order.
 * Returns nonzero when the call is done.
 */
static int look(struct ivar_set *s)
{
    switch (s->kind) {
    case SET_ALL:
        while (s->next < s->nelems && (!counts(s, s->next) || word_holds(s, s->next)))
            s->next++;
        return s->next == s->nelems;
    case SET_ANY:
        for (size_t i = 0; i < s->nelems; i++)
            if (counts(s, i) && word_holds(s, i)) {
                s->found = i;
                return 1;
            }
        return 0;
    case SET_SOME:
        s->found = 0;
        for (size_t i = 0; i < s->nelems; i++)
            if (counts(s, i) && word_holds(s, i))
                s->indices[s->found++] = i;
        return s->found > 0;
    }
    return 1;
}

/* Whether an ANY or SOME call has no word to wait for (it then ends at once). */
static int nothing_counts(const struct ivar_set *s)
{
    if (s->kind == SET_ALL)
        return 0;
    for (size_t i = 0; i < s->nelems; i++)
        if (counts(s, i))
            return 0;
    return 1;
}

/* The condition holds, or a rank was given up on (the write may never come). */
static int set_cond(void *arg)
{
    struct ivar_set *s = arg;
    if (look(s))
        return 1;
    /* Any rank may be the writer: node-mates whose process ended are found
     * here, a few per probe (over udp a rank is found lost by its traffic) */
    if (gas_tl_probe_due(&s->probe_at))
        gas_tl_probe_gone_some(&s->probe_next);
    s->lost = gas_tl_first_lost(NULL, gas_gs.nranks);
    return s->lost >= 0;
}

static gas_status_t check_args(const struct ivar_set *s, const void *out, const char *out_name)
{
    gas_status_t st = gas_gs_check(s->call);
    if (st != GAS_OK)
        return st;
    if (s->ivars == NULL && s->nelems > 0)
        return gas_rt_error(GAS_ERR_INVALID, s->call, "ivar%s is NULL",
                            s->kind == SET_ALL && s->nelems == 1 ? "" : "s");
    if ((uintptr_t)s->ivars % s->width != 0)
        return gas_rt_error(GAS_ERR_ALIGN, s->call, "ivar%s %p is not %u-byte aligned",
                            s->nelems == 1 ? "" : "s", s->ivars, s->width);
    if (s->nelems > SIZE_MAX / s->width ||
        (uintptr_t)s->ivars > UINTPTR_MAX - s->nelems * s->width)
        return gas_rt_error(GAS_ERR_OVERFLOW, s->call, "%zu words from %p overflow the address space",
                            s->nelems, s->ivars);
    if ((unsigned)s->cmp > GAS_CMP_LE)
        return gas_rt_error(GAS_ERR_INVALID, s->call, "unknown comparison %d", (int)s->cmp);
    if (s->kind == SET_SOME && s->indices == NULL && s->nelems > 0)
        return gas_rt_error(GAS_ERR_INVALID, s->call, "indices is NULL");
    if (s->vector && s->values == NULL && s->nelems > 0)
        return gas_rt_error(GAS_ERR_INVALID, s->call, "cmp_values is NULL");
    if (s->vector && (uintptr_t)s->values % s->width != 0)
        return gas_rt_error(GAS_ERR_ALIGN, s->call, "cmp_values %p is not %u-byte aligned",
                            s->values, s->width);
    if (out_name != NULL && out == NULL)
        return gas_rt_error(GAS_ERR_INVALID, s->call, "%s is NULL", out_name);
    return GAS_OK;
}

/* What a wait waits for, for its stall warnings and timeout error. */
static void describe(const struct ivar_set *s, char *buf, size_t cap)
{
    if (s->kind == SET_ALL && s->nelems == 1)
        snprintf(buf, cap, "the value at %p to satisfy the condition", s->ivars);
    else
        snprintf(buf, cap, "%s of the %zu words at %p to satisfy the condition%s",
                 s->kind == SET_ALL ? "all" : "any", s->nelems, s->ivars,
                 s->vector ? ", each against its own value" : "");
}

/* At an _all wait's timeout: the first word that has not been seen to hold. */
static void explain_all(void *arg, char *buf, size_t cap)
{
    const struct ivar_set *s = arg;
    if (s->kind != SET_ALL || s->nelems < 2 || s->next >= s->nelems)
        return;
    char against[48] = "";
    if (s->vector)
        snprintf(against, sizeof against, " against %" PRIu64, value_of(s, s->next));
    snprintf(buf, cap, "word %zu (at %p, value %" PRIu64 ") does not satisfy the condition%s; "
             "the %zu before it did", s->next, (const void *)((const char *)s->ivars +
             s->next * s->width), load_word(s, s->next), against, s->next);
}

/* The error for a condition that does not hold when a rank has been given up on. */
static gas_status_t lost_error(const struct ivar_set *s)
{
    char what[128];
    if (s->nelems == 1)
        snprintf(what, sizeof what, "the value at %p may never be written", s->ivars);
    else
        snprintf(what, sizeof what, "the words at %p may never be written", s->ivars);
    return gas_gs_lost_error(s->call, s->lost, what);
}

/* Waits until the set's condition holds (see the file comment). */
static gas_status_t set_wait(struct ivar_set *s, const void *out, const char *out_name)
{
    gas_status_t st = check_args(s, out, out_name);
    if (st != GAS_OK || nothing_counts(s) || look(s))
        return st;
    const void *watch = s->nelems == 1 ? s->ivars : GAS_RT_WATCH_SEGMENT;
    char what[160];
    describe(s, what, sizeof what);
    st = gas_rt_wait_explained(set_cond, s, watch, s->call, what, explain_all, s);
    if (st == GAS_OK && s->lost >= 0)
        st = lost_error(s);
    return st;
}

/* Drives progress once and looks once; *done says whether the condition holds. */
static gas_status_t set_test(struct ivar_set *s, int *done, const void *out, const char *out_name)
{
    gas_status_t st = check_args(s, out, out_name);
    if (st != GAS_OK)
        return st;
    if (nothing_counts(s)) {
        *done = 0;
        return GAS_OK;
    }
    if (look(s)) {
        *done = 1;
        return GAS_OK;
    }
    gas_rt_progress();
    *done = look(s);
    if (!*done) {
        gas_rt_poll_idle();
        s->lost = gas_tl_first_lost(NULL, gas_gs.nranks);
        if (s->lost >= 0)
            return lost_error(s);
    }
    return GAS_OK;
}

/*
 * A whole wait of any kind, with its results: *index_p (ANY: the index, or
 * SIZE_MAX on an error) and *count_p (SOME: the count, 0 on an error).
 */
static gas_status_t set_wait_out(struct ivar_set *s, size_t *index_p, size_t *count_p)
{
    const void *out = s->kind == SET_ANY ? (const void *)index_p : (const void *)count_p;
    const char *out_name = s->kind == SET_ANY ? "index_p" : s->kind == SET_SOME ? "count_p" : NULL;
    if (s->kind == SET_SOME)
        s->found = 0;
    gas_status_t st = set_wait(s, out, out_name);
    if (s->kind == SET_ANY && index_p != NULL)
        *index_p = st == GAS_OK ? s->found : SIZE_MAX;
    if (s->kind == SET_SOME && count_p != NULL)
        *count_p = st == GAS_OK ? s->found : 0;
    return st;
}

/* A whole test of any kind, with its result (*done_p, *index_p or *count_p, as set_wait_out). */
static gas_status_t set_test_out(struct ivar_set *s, int *done_p, size_t *index_p,
                                 size_t *count_p)
{
    const void *out = s->kind == SET_ALL ? (const void *)done_p
                      : s->kind == SET_ANY ? (const void *)index_p : (const void *)count_p;
    const char *out_name = s->kind == SET_ALL ? "done_p" : s->kind == SET_ANY ? "index_p" : "count_p";
    int done = 0;
    if (s->kind == SET_SOME)
        s->found = 0;
    gas_status_t st = set_test(s, &done, out, out_name);
    if (s->kind == SET_ALL && done_p != NULL)
        *done_p = st == GAS_OK && done;
    if (s->kind == SET_ANY && index_p != NULL)
        *index_p = st == GAS_OK && done ? s->found : SIZE_MAX;
    if (s->kind == SET_SOME && count_p != NULL)
        *count_p = st == GAS_OK && done ? s->found : 0;
    return st;
}

/*
 * The set of one call, built from its arguments (values/vector: the _vector
 * forms, word i against values[i]), and the whole call on it, gated against
 * gas_finalize: a wait (IVAR_WAIT) or a test (IVAR_TEST), with its results.
 */
#define IVAR_SET(call_, kind_, ivars_, n_, status_, W, S, cmp_, value_, values_, vector_, ind_)   \
    {.call = (call_), .kind = (kind_), .ivars = (ivars_), .nelems = (n_), .status = (status_),    \
     .width = (W), .is_signed = (S), .cmp = (cmp_), .value = (uint64_t)(value_),                  \
     .values = (values_), .vector = (vector_), .indices = (ind_), .found = SIZE_MAX, .lost = -1}
#define IVAR_WAIT(call_, set_args, index_p_, count_p_)                                            \
    do {                                                                                          \
        struct ivar_set s_ = IVAR_SET set_args;                                                   \
        GAS_GS_GATED(call_, set_wait_out(&s_, (index_p_), (count_p_)));                           \
    } while (0)
#define IVAR_TEST(call_, set_args, done_p_, index_p_, count_p_)                                   \
    do {                                                                                          \
        struct ivar_set s_ = IVAR_SET set_args;                                                   \
        GAS_GS_GATED(call_, set_test_out(&s_, (done_p_), (index_p_), (count_p_)));                \
    } while (0)

/*
 * The eight exported calls of one word type T (C type CT, width W, signedness
 * S); see include/gas.h for what they promise.
 */
#define IVAR_CALLS(T, CT, W, S)                                                                   \
    GAS_EXPORT gas_status_t gas_wait_until_##T(const CT *ivar, gas_cmp_t cmp, CT value)           \
    {                                                                                             \
        static const char call[] = "gas_wait_until_" #T;                                          \
        IVAR_WAIT(call, (call, SET_ALL, ivar, 1, NULL, W, S, cmp, value, NULL, 0, NULL), NULL,    \
                  NULL);                                                                          \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_wait_until_all_##T(const CT *ivars, size_t nelems,                \
                                                   const int *status, gas_cmp_t cmp, CT value)    \
    {                                                                                             \
        static const char call[] = "gas_wait_until_all_" #T;                                      \
        IVAR_WAIT(call, (call, SET_ALL, ivars, nelems, status, W, S, cmp, value, NULL, 0, NULL),  \
                  NULL, NULL);                                                                    \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_wait_until_any_##T(const CT *ivars, size_t nelems,                \
                                                   const int *status, gas_cmp_t cmp, CT value,    \
                                                   size_t *index_p)                               \
    {                                                                                             \
        static const char call[] = "gas_wait_until_any_" #T;                                      \
        IVAR_WAIT(call, (call, SET_ANY, ivars, nelems, status, W, S, cmp, value, NULL, 0, NULL),  \
                  index_p, NULL);                                                                 \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_wait_until_some_##T(const CT *ivars, size_t nelems,               \
                                                    size_t *indices, const int *status,           \
                                                    gas_cmp_t cmp, CT value, size_t *count_p)     \
    {                                                                                             \
        static const char call[] = "gas_wait_until_some_" #T;                                     \
        IVAR_WAIT(call, (call, SET_SOME, ivars, nelems, status, W, S, cmp, value, NULL, 0,        \
                         indices), NULL, count_p);                                                \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_##T(const CT *ivar, gas_cmp_t cmp, CT value,           \
                                               int *done_p)                                       \
    {                                                                                             \
        static const char call[] = "gas_test_until_" #T;                                          \
        IVAR_TEST(call, (call, SET_ALL, ivar, 1, NULL, W, S, cmp, value, NULL, 0, NULL), done_p,  \
                  NULL, NULL);                                                                    \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_all_##T(const CT *ivars, size_t nelems,                \
                                                   const int *status, gas_cmp_t cmp, CT value,    \
                                                   int *done_p)                                   \
    {                                                                                             \
        static const char call[] = "gas_test_until_all_" #T;                                      \
        IVAR_TEST(call, (call, SET_ALL, ivars, nelems, status, W, S, cmp, value, NULL, 0, NULL),  \
                  done_p, NULL, NULL);                                                            \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_any_##T(const CT *ivars, size_t nelems,                \
                                                   const int *status, gas_cmp_t cmp, CT value,    \
                                                   size_t *index_p)                               \
    {                                                                                             \
        static const char call[] = "gas_test_until_any_" #T;                                      \
        IVAR_TEST(call, (call, SET_ANY, ivars, nelems, status, W, S, cmp, value, NULL, 0, NULL),  \
                  NULL, index_p, NULL);                                                           \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_some_##T(const CT *ivars, size_t nelems,               \
                                                    size_t *indices, const int *status,           \
                                                    gas_cmp_t cmp, CT value, size_t *count_p)     \
    {                                                                                             \
        static const char call[] = "gas_test_until_some_" #T;                                     \
        IVAR_TEST(call, (call, SET_SOME, ivars, nelems, status, W, S, cmp, value, NULL, 0,        \
                         indices), NULL, NULL, count_p);                                          \
    }

IVAR_CALLS(i32, int32_t, 4, 1)
IVAR_CALLS(u32, uint32_t, 4, 0)
IVAR_CALLS(i64, int64_t, 8, 1)
IVAR_CALLS(u64, uint64_t, 8, 0)

/* The six exported _vector calls of one word type T (as IVAR_CALLS). */
#define IVAR_VECTOR_CALLS(T, CT, W, S)                                                            \
    GAS_EXPORT gas_status_t gas_wait_until_all_vector_##T(const CT *ivars, size_t nelems,         \
                                                          const int *status, gas_cmp_t cmp,       \
                                                          const CT *cmp_values)                   \
    {                                                                                             \
        static const char call[] = "gas_wait_until_all_vector_" #T;                               \
        IVAR_WAIT(call, (call, SET_ALL, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,       \
                         NULL), NULL, NULL);                                                      \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_wait_until_any_vector_##T(const CT *ivars, size_t nelems,         \
                                                          const int *status, gas_cmp_t cmp,       \
                                                          const CT *cmp_values, size_t *index_p)  \
    {                                                                                             \
        static const char call[] = "gas_wait_until_any_vector_" #T;                               \
        IVAR_WAIT(call, (call, SET_ANY, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,       \
                         NULL), index_p, NULL);                                                   \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_wait_until_some_vector_##T(const CT *ivars, size_t nelems,        \
                                                           size_t *indices, const int *status,    \
                                                           gas_cmp_t cmp, const CT *cmp_values,   \
                                                           size_t *count_p)                       \
    {                                                                                             \
        static const char call[] = "gas_wait_until_some_vector_" #T;                              \
        IVAR_WAIT(call, (call, SET_SOME, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,      \
                         indices), NULL, count_p);                                                \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_all_vector_##T(const CT *ivars, size_t nelems,         \
                                                          const int *status, gas_cmp_t cmp,       \
                                                          const CT *cmp_values, int *done_p)      \
    {                                                                                             \
        static const char call[] = "gas_test_until_all_vector_" #T;                               \
        IVAR_TEST(call, (call, SET_ALL, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,       \
                         NULL), done_p, NULL, NULL);                                              \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_any_vector_##T(const CT *ivars, size_t nelems,         \
                                                          const int *status, gas_cmp_t cmp,       \
                                                          const CT *cmp_values, size_t *index_p)  \
    {                                                                                             \
        static const char call[] = "gas_test_until_any_vector_" #T;                               \
        IVAR_TEST(call, (call, SET_ANY, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,       \
                         NULL), NULL, index_p, NULL);                                             \
    }                                                                                             \
    GAS_EXPORT gas_status_t gas_test_until_some_vector_##T(const CT *ivars, size_t nelems,        \
                                                           size_t *indices, const int *status,    \
                                                           gas_cmp_t cmp, const CT *cmp_values,   \
                                                           size_t *count_p)                       \
    {                                                                                             \
        static const char call[] = "gas_test_until_some_vector_" #T;                              \
        IVAR_TEST(call, (call, SET_SOME, ivars, nelems, status, W, S, cmp, 0, cmp_values, 1,      \
                         indices), NULL, NULL, count_p);                                          \
    }

IVAR_VECTOR_CALLS(i32, int32_t, 4, 1)
IVAR_VECTOR_CALLS(u32, uint32_t, 4, 0)
IVAR_VECTOR_CALLS(i64, int64_t, 8, 1)
IVAR_VECTOR_CALLS(u64, uint64_t, 8, 0)
