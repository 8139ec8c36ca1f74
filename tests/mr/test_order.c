/*
 * test_order - fence, quiet, put-with-signal and gas_wait_until semantics.
 *
 *  A. fence: every rank sends to the next one (a ring, so any rank count
 *     works): data of 1 B .. 1 MiB (put or nbi puts in pieces), gas_fence,
 *     then a flag (put, nbi put, atomic SET or nbi SET) to the same target.
 *     The target waits for the flag with gas_wait_until_u64 and must see all
 *     the data; it acknowledges with an atomic so the inbox can be reused.
 *  B. put-with-signal: gas_put_signal and gas_put_signal_nbi with SET around
 *     the ring; then every rank writes a payload spanning several owners and
 *     ADDs 1 to one signal word on rank 0, which waits for nranks * round and
 *     must see every payload.
 *  C. quiet: a rank puts (nbi) into rank r+1's memory, gas_quiet, then sets a
 *     flag on rank r+2 with an atomic; rank r+2 waits for it and must read the
 *     data from rank r+1 (no barrier anywhere).
 *  D. gas_wait_until_{i32,u32,i64,u64} with every gas_cmp_t, on values that
 *     tell signed from unsigned comparisons: the condition is false until the
 *     previous rank's atomic SET arrives and true afterwards.
 * GAS_TIMEOUT is set (unless already set) so a wait that never ends fails
 * with GAS_ERR_TIMEOUT instead of hanging.
 */
#include <sched.h>

#include "check.h"

#define MiB (1024u * 1024u)
enum { CTRL = 4096, INBOX_MAX = MiB, PART = CTRL + INBOX_MAX + 64 };
/* control words in each part */
enum { O_FLAG = 0, O_ACK = 8, O_SIG = 16, O_SACK = 24, O_SIGADD = 32, O_GO = 40, O_QFLAG = 48,
       O_QACK = 56, O_WAITV = 64 };
enum { ITER_A = 200, ITER_B = 100, ROUNDS_B2 = 20, ITER_C = 100 };

static gas_ptr_t box, big;
static gas_layout_t bl, gl;
static int me, n, next, prev;
static uint64_t big_region;   /* bytes per writer region of `big` */

static gas_ptr_t at_rank(int r, uint64_t off)
{
    return gas_layout_ptr(&bl, (uint64_t)r * PART + off);
}
static void *my_local(uint64_t off)
{
    return test_local_of(at_rank(me, off));
}
static uint64_t load_u64(uint64_t off)
{
    return __atomic_load_n((uint64_t *)my_local(off), __ATOMIC_ACQUIRE);
}

/* Log-uniform size in [1, max]; the same sequence on the sender and the receiver. */
static size_t draw_size(test_rng_t *r, size_t max)
{
    unsigned bits = (unsigned)rng_below(r, 21);
    size_t s = ((size_t)1 << bits) + (size_t)rng_below(r, (uint64_t)1 << bits);
    return s > max ? max : s;
}

static void wait_u64(uint64_t off, gas_cmp_t cmp, uint64_t v, const char *what)
{
    gas_status_t st = gas_wait_until_u64(my_local(off), cmp, v);
    if (st != GAS_OK)
        test_die(what); /* the partners would wait for us forever */
}

/*
 * Wait for *flag == v by plain acquire loads, without calling the library
 * (one-sided operations complete without the target's help).  A spinning
 * receiver sees the flag the moment it lands, so an implementation that
 * makes the flag visible before the data is caught more often than by a
 * receiver woken from gas_wait_until.
 */
static void spin_u64(uint64_t off, int ge, uint64_t v, const char *what)
{
    const uint64_t *flag = my_local(off);
    double deadline = test_elapsed() + 30;
    for (unsigned long i = 1;; i++) {
        uint64_t now = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
        if (ge ? now >= v : now == v)
            break;
        if (i % 64 == 0)
            sched_yield();
        if (i % 4096 == 0 && test_elapsed() > deadline)
            test_die(what);
    }
}

/* Receivers alternate between gas_wait_until and spinning, in pairs of iterations. */
static void receive_eq_u64(int i, uint64_t off, uint64_t v, const char *what)
{
    if ((i / 4) % 2)
        spin_u64(off, 0, v, what);
    else
        wait_u64(off, GAS_CMP_EQ, v, what);
}

/* ---- A: fence ---- */
static void section_fence(void)
{
    test_rng_t snd = rng_make(me, 1), rcv = rng_make(prev, 1);
    uint8_t *buf = test_xmalloc(INBOX_MAX);
    char what[160];
    for (int i = 0; i < ITER_A; i++) {
        size_t s = draw_size(&snd, INBOX_MAX - 64), skew = (size_t)i % 64;
        uint64_t flag = (uint64_t)i + 1;
        int f = i % 4;
        pattern_fill(buf, s, me, i, 0);
        gas_ptr_t dst = at_rank(next, CTRL + skew);
        if (f == 0 || f == 2) {
            CHECK_OK(gas_put(dst, buf, s));
        } else { /* three nbi pieces, issued back to front */
            size_t a = s / 3, b = 2 * s / 3;
            CHECK_OK(gas_put_nbi(at_rank(next, CTRL + skew + b), buf + b, s - b));
            CHECK_OK(gas_put_nbi(at_rank(next, CTRL + skew + a), buf + a, b - a));
            CHECK_OK(gas_put_nbi(dst, buf, a));
        }
        CHECK_OK(gas_fence());
        switch (f) {
        case 0: CHECK_OK(gas_put(at_rank(next, O_FLAG), &flag, 8)); break;
        case 1: CHECK_OK(gas_put_nbi(at_rank(next, O_FLAG), &flag, 8)); CHECK_OK(gas_quiet()); break;
        case 2: CHECK_OK(gas_atomic_set_u64(at_rank(next, O_FLAG), flag)); break;
        default: CHECK_OK(gas_amo_nbi(GAS_AMO_SET, 8, at_rank(next, O_FLAG), flag, 0, NULL));
                 CHECK_OK(gas_quiet()); break;
        }
        /* receive from prev */
        size_t rs = draw_size(&rcv, INBOX_MAX - 64);
        receive_eq_u64(i, O_FLAG, flag, "waiting for the fence test's flag");
        static const char *how[] = { "put, fence, put flag", "nbi puts, fence, nbi put flag",
                                     "put, fence, atomic SET flag", "nbi puts, fence, nbi SET flag" };
        snprintf(what, sizeof what, "fence iteration %d (%s, %zu B from rank %d): inbox", i, how[f], rs, prev);
        check_pattern(what, (uint8_t *)my_local(CTRL + skew), rs, prev, i, 0, 0);
        CHECK_OK(gas_atomic_set_u64(at_rank(prev, O_ACK), flag));
        /* the next round may overwrite next's inbox once it has checked it */
        wait_u64(O_ACK, GAS_CMP_EQ, flag, "waiting for the fence test's ack");
    }
    free(buf);
}

/* ---- B: put with signal ---- */
static void section_signal(void)
{
    test_rng_t snd = rng_make(me, 2), rcv = rng_make(prev, 2);
    uint8_t *buf = test_xmalloc(INBOX_MAX);
    char what[200];
    for (int i = 0; i < ITER_B; i++) {
        size_t s = draw_size(&snd, INBOX_MAX - 64), skew = (size_t)(i * 7) % 64;
        uint64_t v = (uint64_t)i + 1;
        pattern_fill(buf, s, me, 1000 + i, 0);
        if (i % 2 == 0) {
            CHECK_OK(gas_put_signal(at_rank(next, CTRL + skew), buf, s, at_rank(next, O_SIG), v, GAS_SIGNAL_SET));
        } else {
            CHECK_OK(gas_put_signal_nbi(at_rank(next, CTRL + skew), buf, s, at_rank(next, O_SIG), v,
                                        GAS_SIGNAL_SET));
            memset(buf, 0, s); /* nbi sources may be reused at return */
            CHECK_OK(gas_quiet());
        }
        size_t rs = draw_size(&rcv, INBOX_MAX - 64);
        receive_eq_u64(i, O_SIG, v, "waiting for a put-with-signal (SET)");
        snprintf(what, sizeof what, "%s SET iteration %d (%zu B from rank %d): payload",
                 i % 2 ? "gas_put_signal_nbi" : "gas_put_signal", i, rs, prev);
        check_pattern(what, (uint8_t *)my_local(CTRL + skew), rs, prev, 1000 + i, 0, 0);
        CHECK_OK(gas_atomic_set_u64(at_rank(prev, O_SACK), v));
        wait_u64(O_SACK, GAS_CMP_EQ, v, "waiting for the signal test's ack");
    }

    /* every rank: payload over several owners of `big`, ADD 1 to rank 0's counter */
    test_rng_t rr = rng_make(me, 3);
    for (int round = 0; round < ROUNDS_B2; round++) {
        uint64_t lo = (uint64_t)me * big_region + big_region / 2 + 1;
        size_t s = (size_t)rng_range(&rr, big_region / 2, big_region - 8);
        pattern_fill(buf, s, me, 5000 + round, lo);
        if (round % 2 == 0) {
            CHECK_OK(gas_put_signal(test_at(big, lo), buf, s, at_rank(0, O_SIGADD), 1, GAS_SIGNAL_ADD));
        } else {
            CHECK_OK(gas_put_signal_nbi(test_at(big, lo), buf, s, at_rank(0, O_SIGADD), 1, GAS_SIGNAL_ADD));
            CHECK_OK(gas_quiet());
        }
        if (me == 0) {
            if (round % 4 < 2)
                wait_u64(O_SIGADD, GAS_CMP_GE, (uint64_t)n * (round + 1), "waiting for the ADD signals");
            else
                spin_u64(O_SIGADD, 1, (uint64_t)n * (round + 1), "waiting for the ADD signals");
            uint64_t got = load_u64(O_SIGADD);
            CHECK(got == (uint64_t)n * (round + 1), "ADD signal round %d: counter %" PRIu64 ", expected %" PRIu64,
                  round, got, (uint64_t)n * (round + 1));
            for (int w = 0; w < n; w++) {
                test_rng_t wr = rng_make(w, 3);
                size_t ws = 0;
                for (int k = 0; k <= round; k++)
                    ws = (size_t)rng_range(&wr, big_region / 2, big_region - 8);
                uint64_t wlo = (uint64_t)w * big_region + big_region / 2 + 1;
                CHECK_OK(gas_get(buf, test_at(big, wlo), ws));
                int owners = (int)((wlo + ws - 1) / gl.block - wlo / gl.block) + 1;
                snprintf(what, sizeof what, "%s ADD round %d: rank %d's payload of %zu B at offset %" PRIu64
                         " over %d owner(s), read after the signal", round % 2 ? "gas_put_signal_nbi" :
                         "gas_put_signal", round, w, ws, wlo, owners);
                check_pattern(what, buf, ws, w, 5000 + round, wlo, wlo);
            }
            for (int r = 0; r < n; r++)
                CHECK_OK(gas_atomic_set_u64(at_rank(r, O_GO), (uint64_t)round + 1));
        }
        wait_u64(O_GO, GAS_CMP_EQ, (uint64_t)round + 1, "waiting for rank 0's go");
    }
    free(buf);
}

/* ---- C: quiet, then a third party is told by an atomic ---- */
static void section_quiet(void)
{
    int t = next, f = (me + 2) % n, from = (me + n - 2) % n, via = (me + n - 1) % n;
    test_rng_t snd = rng_make(me, 4), rcv = rng_make(from, 4);
    uint8_t *buf = test_xmalloc(INBOX_MAX);
    char what[200];
    for (int i = 0; i < ITER_C; i++) {
        size_t s = draw_size(&snd, 65536);
        uint64_t v = (uint64_t)i + 1;
        pattern_fill(buf, s, me, 9000 + i, 0);
        size_t half = s / 2;
        CHECK_OK(gas_put_nbi(at_rank(t, CTRL + half), buf + half, s - half));
        CHECK_OK(gas_put_nbi(at_rank(t, CTRL), buf, half));
        CHECK_OK(gas_quiet());
        if (i % 2)
            CHECK_OK(gas_atomic_set_u64(at_rank(f, O_QFLAG), v));
        else
            CHECK_OK(gas_atomic_add_u64(at_rank(f, O_QFLAG), 1));
        /* I am the third party for `from`, whose data went to `via` */
        size_t rs = draw_size(&rcv, 65536);
        receive_eq_u64(i, O_QFLAG, v, "waiting for the quiet test's flag");
        CHECK_OK(gas_get(buf, at_rank(via, CTRL), rs));
        snprintf(what, sizeof what, "quiet iteration %d: rank %d's %zu B on rank %d, read by rank %d after "
                 "rank %d's gas_quiet + flag", i, from, rs, via, me, from);
        check_pattern(what, buf, rs, from, 9000 + i, 0, 0);
        CHECK_OK(gas_atomic_set_u64(at_rank(from, O_QACK), v));
        wait_u64(O_QACK, GAS_CMP_EQ, v, "waiting for the quiet test's ack");
    }
    free(buf);
}

/* ---- D: gas_wait_until with every comparison ---- */
typedef struct wcase {
    gas_cmp_t cmp;
    uint64_t x, v, y;  /* initial value, compared value, value set by the previous rank */
} wcase_t;

static const char *cmp_name(gas_cmp_t c)
{
    static const char *names[] = { "EQ", "NE", "GT", "GE", "LT", "LE" };
    return (unsigned)c <= GAS_CMP_LE ? names[c] : "?";
}

static int holds(int sgn, unsigned width, gas_cmp_t cmp, uint64_t a, uint64_t b)
{
    if (sgn) {
        int64_t x = width == 4 ? (int64_t)(int32_t)(uint32_t)a : (int64_t)a;
        int64_t y = width == 4 ? (int64_t)(int32_t)(uint32_t)b : (int64_t)b;
        switch (cmp) {
        case GAS_CMP_EQ: return x == y;
        case GAS_CMP_NE: return x != y;
        case GAS_CMP_GT: return x > y;
        case GAS_CMP_GE: return x >= y;
        case GAS_CMP_LT: return x < y;
        default: return x <= y;
        }
    }
    switch (cmp) {
    case GAS_CMP_EQ: return a == b;
    case GAS_CMP_NE: return a != b;
    case GAS_CMP_GT: return a > b;
    case GAS_CMP_GE: return a >= b;
    case GAS_CMP_LT: return a < b;
    default: return a <= b;
    }
}

static void section_wait(void)
{
    /* H is the top bit of the width: comparisons that unsigned and signed order differently */
    for (int type = 0; type < 4; type++) {
        int sgn = type == 0 || type == 2;
        unsigned width = type < 2 ? 4 : 8;
        uint64_t mask = width == 4 ? 0xffffffffu : UINT64_MAX;
        uint64_t H = width == 4 ? 0x80000000u : 0x8000000000000000ull;
        const char *tn = type == 0 ? "i32" : type == 1 ? "u32" : type == 2 ? "i64" : "u64";
        wcase_t cs[6];
        if (sgn) {
            const uint64_t m1 = (uint64_t)-1, m3 = (uint64_t)-3, m7 = (uint64_t)-7;
            wcase_t s[6] = { { GAS_CMP_EQ, 5, m7, m7 }, { GAS_CMP_NE, m3, m3, 3 }, { GAS_CMP_GT, m1, 0, 1 },
                             { GAS_CMP_GE, m1, 0, 0 },  { GAS_CMP_LT, 0, 0, m1 },  { GAS_CMP_LE, 1, 0, m3 } };
            memcpy(cs, s, sizeof cs);
        } else {
            wcase_t u[6] = { { GAS_CMP_EQ, 1, H + 2, H + 2 }, { GAS_CMP_NE, H, H, 4 },
                             { GAS_CMP_GT, 5, H, H + 1 },    { GAS_CMP_GE, H - 1, H, H },
                             { GAS_CMP_LT, H, H, 7 },        { GAS_CMP_LE, H + 0x10000000, H, H } };
            memcpy(cs, u, sizeof cs);
        }
        for (int c = 0; c < 6; c++) {
            uint64_t x = cs[c].x & mask, v = cs[c].v & mask, y = cs[c].y & mask;
            void *var = my_local(O_WAITV);
            if (holds(sgn, width, cs[c].cmp, x, v) || !holds(sgn, width, cs[c].cmp, y, v))
                test_die("bad wait case table");
            /* my variable starts at x */
            if (width == 4) {
                uint32_t x32 = (uint32_t)x;
                __atomic_store_n((uint32_t *)var, x32, __ATOMIC_RELEASE);
            } else {
                __atomic_store_n((uint64_t *)var, x, __ATOMIC_RELEASE);
            }
            MUST(gas_barrier());
            /* the previous rank's SET makes my condition true */
            CHECK_OK(gas_amo(GAS_AMO_SET, width, at_rank(next, O_WAITV), y, 0, NULL));
            gas_status_t st;
            switch (type) {
            case 0: st = gas_wait_until_i32(var, cs[c].cmp, (int32_t)(uint32_t)v); break;
            case 1: st = gas_wait_until_u32(var, cs[c].cmp, (uint32_t)v); break;
            case 2: st = gas_wait_until_i64(var, cs[c].cmp, (int64_t)v); break;
            default: st = gas_wait_until_u64(var, cs[c].cmp, v); break;
            }
            uint64_t now = width == 4 ? __atomic_load_n((uint32_t *)var, __ATOMIC_ACQUIRE)
                                      : __atomic_load_n((uint64_t *)var, __ATOMIC_ACQUIRE);
            if (CHECK(st == GAS_OK, "gas_wait_until_%s(var %s 0x%" PRIx64 ") returned %d (%s) (var was 0x%" PRIx64
                      ", rank %d sets 0x%" PRIx64 "): %s", tn, cmp_name(cs[c].cmp), v, (int)st, gas_strerror(st),
                      x, prev, y, gas_last_error())) {
                CHECK(now == y, "gas_wait_until_%s(var %s 0x%" PRIx64 ") returned while var is 0x%" PRIx64
                      " (initial 0x%" PRIx64 ", to be set to 0x%" PRIx64 ")", tn, cmp_name(cs[c].cmp), v, now, x, y);
                /* already true: returns at once */
                switch (type) {
                case 0: st = gas_wait_until_i32(var, cs[c].cmp, (int32_t)(uint32_t)v); break;
                case 1: st = gas_wait_until_u32(var, cs[c].cmp, (uint32_t)v); break;
                case 2: st = gas_wait_until_i64(var, cs[c].cmp, (int64_t)v); break;
                default: st = gas_wait_until_u64(var, cs[c].cmp, v); break;
                }
                CHECK(st == GAS_OK, "gas_wait_until_%s on a condition already true returned %d", tn, (int)st);
            }
            MUST(gas_barrier());
        }
    }
}

int main(void)
{
    setenv("GAS_TIMEOUT", "30", 0);
    test_begin("order");
    me = t_rank;
    n = t_nranks;
    next = (me + 1) % n;
    prev = (me + n - 1) % n;
    MUST(gas_malloc((size_t)n * PART, &box));
    bl = test_layout_of(box);
    if (!CHECK(bl.block == PART, "gas_malloc(%zu): block %" PRIu64 ", expected %d", (size_t)n * PART, bl.block,
               (int)PART))
        test_die("unexpected layout");
    big_region = 256 * 1024;
    MUST(gas_malloc((size_t)(n + 1) * big_region, &big));
    gl = test_layout_of(big);
    /* control words start at zero */
    memset(my_local(0), 0, CTRL);
    MUST(gas_barrier());

    section_fence();
    MUST(gas_barrier());
    if (me == 0)
        test_note("fence: %d iterations done (%.2f s)", ITER_A, test_elapsed());
    section_signal();
    MUST(gas_barrier());
    if (me == 0)
        test_note("put-with-signal done (%.2f s)", test_elapsed());
    section_quiet();
    MUST(gas_barrier());
    if (me == 0)
        test_note("quiet + third-party flag done (%.2f s)", test_elapsed());
    section_wait();
    MUST(gas_barrier());
    CHECK_OK(gas_free(big));
    CHECK_OK(gas_free(box));
    return test_end();
}
