/*
 * test_atomics - every gas_amo_op_t, from all ranks at once, with exact results.
 *
 * For each way of issuing (the typed wrappers, gas_amo, gas_amo_nbi +
 * gas_quiet) and each type (u32, i32, u64, i64) every rank hammers a set of
 * shared words spread over the owners; after a barrier the owner of each word
 * checks it:
 *  - FETCH_ADD counters: the final value is initial + nranks * iters * v
 *    (32-bit counters start near 2^32 and wrap; signed ones add a negative v)
 *    and the fetched old values are exactly {I, I+v, I+2v, ...}, each once
 *    (and, for blocking calls, increasing for each rank);
 *  - ADD sums: initial + iters * sum of every rank's operand;
 *  - OR / FETCH_OR, AND / FETCH_AND, XOR / FETCH_XOR on one word where each
 *    rank owns distinct bits: the final bit pattern is exact and every fetched
 *    value shows this rank's own bits as it left them;
 *  - SWAP chains: the fetched values plus the final one are exactly the
 *    initial value and every swapped-in value, each once;
 *  - CSWAP increments: the final count is exact and the values of the
 *    successful compares are each ticket once;
 *  - a CSWAP spin lock guarding a plain put/get counter (typed wrappers);
 *  - FETCH and SET: 32-bit SETs from two ranks into the two halves of one
 *    8-byte word do not clobber each other.
 * Each 32-bit word shares its 8 bytes (and each word its 16-byte cell) with
 * sentinel bytes that must stay untouched (no carry or width bleeding).
 */
#include <sched.h>

#include "check.h"

enum { M_TYPED, M_AMO, M_NBI, NMODES };
enum { T_U32, T_I32, T_U64, T_I64, NTYPES };
static const char *mode_names[NMODES] = { "typed wrappers", "gas_amo", "gas_amo_nbi+gas_quiet" };
static const char *type_names[NTYPES] = { "u32", "i32", "u64", "i64" };

enum { ITER = 100, ITER_S = 50, ITER_C = 30, ITER_L = 20, NCTR = 3 };
enum { TPR = NCTR * ITER + ITER_S + ITER_C };  /* ticket slots per rank */

/* the shared words ("roles"); role j lives on rank j % nranks */
enum { R_CTR0, R_SUM0 = R_CTR0 + NCTR, R_OR = R_SUM0 + NCTR, R_AND, R_XOR, R_SWAP, R_CSWAP,
       R_LOCK, R_LOCKDATA, NROLES };
#define SENTINEL 0x5a

static gas_ptr_t words, tickets, slots;
static gas_layout_t wl;
static int cur_mode, cur_type;
static unsigned W;      /* width in bytes */
static uint64_t MASK;   /* W * 8 bits of ones */

static int is_signed(void)
{
    return cur_type == T_I32 || cur_type == T_I64;
}

/* Byte index (in `words`) of role j's 16-byte cell, and of its W-byte word. */
static uint64_t cell_index(int j)
{
    int owner = j % t_nranks;
    return (uint64_t)owner * wl.block + (uint64_t)(j / t_nranks) * 16;
}
static uint64_t word_index(int j)
{
    return cell_index(j) + (W == 4 ? 4u * (unsigned)(j % 2) : 0);
}
static gas_ptr_t role_ptr(int j)
{
    return gas_layout_ptr(&wl, word_index(j));
}

/* ---- issuing one atomic in the current mode ---- */

#define TYPED_DISPATCH(T, S)                                                              \
static gas_status_t typed_##S(gas_amo_op_t op, gas_ptr_t p, uint64_t v, uint64_t c,       \
                              uint64_t *res)                                              \
{                                                                                         \
    T o = 0;                                                                              \
    gas_status_t st;                                                                      \
    switch (op) {                                                                         \
    case GAS_AMO_FETCH: st = gas_atomic_fetch_##S(p, &o); break;                          \
    case GAS_AMO_SET: return gas_atomic_set_##S(p, (T)v);                                 \
    case GAS_AMO_SWAP: st = gas_atomic_swap_##S(p, (T)v, &o); break;                      \
    case GAS_AMO_CSWAP: st = gas_atomic_cswap_##S(p, (T)c, (T)v, &o); break;              \
    case GAS_AMO_ADD: return gas_atomic_add_##S(p, (T)v);                                 \
    case GAS_AMO_FETCH_ADD: st = gas_atomic_fetch_add_##S(p, (T)v, &o); break;            \
    case GAS_AMO_AND: return gas_atomic_and_##S(p, (T)v);                                 \
    case GAS_AMO_FETCH_AND: st = gas_atomic_fetch_and_##S(p, (T)v, &o); break;            \
    case GAS_AMO_OR: return gas_atomic_or_##S(p, (T)v);                                   \
    case GAS_AMO_FETCH_OR: st = gas_atomic_fetch_or_##S(p, (T)v, &o); break;              \
    case GAS_AMO_XOR: return gas_atomic_xor_##S(p, (T)v);                                 \
    case GAS_AMO_FETCH_XOR: st = gas_atomic_fetch_xor_##S(p, (T)v, &o); break;            \
    default: return GAS_ERR_INVALID;                                                      \
    }                                                                                     \
    if (st == GAS_OK)                                                                     \
        *res = sizeof(T) == 4 ? (uint64_t)(uint32_t)o : (uint64_t)o;                      \
    return st;                                                                            \
}
TYPED_DISPATCH(uint32_t, u32)
TYPED_DISPATCH(int32_t, i32)
TYPED_DISPATCH(uint64_t, u64)
TYPED_DISPATCH(int64_t, i64)

static const char *op_name(gas_amo_op_t op)
{
    static const char *names[] = { "FETCH", "SET", "SWAP", "CSWAP", "ADD", "FETCH_ADD", "AND",
                                   "FETCH_AND", "OR", "FETCH_OR", "XOR", "FETCH_XOR" };
    return (unsigned)op < GAS_AMO_OP_COUNT ? names[op] : "?";
}

/*
 * Issue op on p with W-bit operands (masked); *res receives the old value
 * (W bits) now, or, in the nbi mode, by the next gas_quiet().
 */
static void amo(gas_amo_op_t op, gas_ptr_t p, uint64_t v, uint64_t c, uint64_t *res)
{
    gas_status_t st;
    uint64_t tmp = 0;
    uint64_t *r = gas_amo_fetches(op) ? (res ? res : &tmp) : NULL;
    v &= MASK;
    c &= MASK;
    switch (cur_mode) {
    case M_TYPED:
        switch (cur_type) {
        case T_U32: st = typed_u32(op, p, v, c, r ? r : &tmp); break;
        case T_I32: st = typed_i32(op, p, v, c, r ? r : &tmp); break;
        case T_U64: st = typed_u64(op, p, v, c, r ? r : &tmp); break;
        default: st = typed_i64(op, p, v, c, r ? r : &tmp); break;
        }
        break;
    case M_AMO:
        st = gas_amo(op, W, p, v, c, r);
        if (st == GAS_OK && r && (*r & ~MASK))
            FAIL("gas_amo(%s, width %u) result 0x%016" PRIx64 " is not zero-extended", op_name(op), W, *r);
        break;
    default:
        st = gas_amo_nbi(op, W, p, v, c, r);
        break;
    }
    if (st != GAS_OK)
        FAIL("%s %s %s on rank %d offset %" PRIu64 " returned %d (%s): %s", mode_names[cur_mode],
             type_names[cur_type], op_name(op), gas_ptr_rank(p), gas_ptr_offset(p), (int)st,
             gas_strerror(st), gas_last_error());
}

/* ---- initial values ---- */

static uint64_t ctr_init(int c)
{
    switch (cur_type) {
    case T_U32: return 0xffffffffu - 100u * (unsigned)c - 37u;       /* wraps during the test */
    case T_I32: return (uint64_t)(int64_t)(1000 * c - 50) & MASK;    /* goes negative */
    case T_U64: return UINT64_MAX - 0x100 - (uint64_t)c;             /* wraps too */
    default: return (uint64_t)((int64_t)c * 1000000000000ll + 77);
    }
}
static uint64_t ctr_step(void)
{
    return is_signed() ? (uint64_t)(cur_type == T_I32 ? -5 : -9) & MASK : (cur_type == T_U32 ? 3 : 7);
}
static uint64_t sum_init(void)
{
    return is_signed() ? (uint64_t)-100 & MASK : 5;
}
static uint64_t sum_operand(int r)
{
    return is_signed() ? (uint64_t)(-(int64_t)(r + 1)) & MASK : (uint64_t)(r + 1);
}
static uint64_t xor_init(void)
{
    return 0xa5a5a5a5a5a5a5a5ull & MASK;
}
static uint64_t swap_init(void)
{
    return 0xdeadbeefcafef00dull & MASK;
}
static uint64_t swap_value(int r, int k)
{
    return W == 4 ? ((uint64_t)(uint32_t)r << 16 | (uint64_t)(k + 1)) & MASK
                  : (uint64_t)(uint32_t)r << 32 | (uint64_t)(k + 1);
}
static uint64_t cswap_init(void)
{
    return is_signed() ? (uint64_t)-37 & MASK : MASK - 10;
}

static uint64_t role_init(int j)
{
    if (j >= R_CTR0 && j < R_CTR0 + NCTR)
        return ctr_init(j - R_CTR0);
    if (j >= R_SUM0 && j < R_SUM0 + NCTR)
        return sum_init();
    switch (j) {
    case R_AND: return MASK;
    case R_XOR: return xor_init();
    case R_SWAP: return swap_init();
    case R_CSWAP: return cswap_init();
    default: return 0;
    }
}

/* My own part of `words`: every cell sentinel, every word its initial value. */
static void init_my_part(void)
{
    uint8_t *img = test_xmalloc(wl.block);
    memset(img, SENTINEL, wl.block);
    for (int j = t_rank; j < NROLES; j += t_nranks) {
        uint64_t v = role_init(j), at = word_index(j) - (uint64_t)t_rank * wl.block;
        if (j == R_LOCKDATA) /* a plain 8-byte counter, whatever the width */
            at = cell_index(j) - (uint64_t)t_rank * wl.block;
        memcpy(img + at, &v, j == R_LOCKDATA ? 8 : W); /* little-endian: the low bytes */
    }
    CHECK_OK(gas_put(gas_layout_ptr(&wl, (uint64_t)t_rank * wl.block), img, wl.block));
    free(img);
}

/* Read role j's word (W bits) and check its cell's sentinel bytes. */
static uint64_t read_role(int j, const char *ctx)
{
    uint8_t cell[16];
    uint64_t v = 0;
    uint64_t in_cell = word_index(j) - cell_index(j);
    CHECK_OK(gas_get(cell, gas_layout_ptr(&wl, cell_index(j)), 16));
    memcpy(&v, cell + in_cell, W);
    for (unsigned b = 0; b < 16; b++) {
        if (b >= in_cell && b < in_cell + W)
            continue;
        if (cell[b] != SENTINEL) {
            FAIL("%s: the byte %u of the 16-byte cell around the %u-byte word was changed to 0x%02x "
                 "(word at cell byte %" PRIu64 ")", ctx, b, W, cell[b], in_cell);
            break;
        }
    }
    return v;
}

static uint64_t inverse_odd(uint64_t v)
{
    uint64_t x = v;
    for (int i = 0; i < 6; i++)
        x *= 2 - v * x;
    return x;
}

/*
 * olds[r * per + k] for r < nranks, k < per: every value must be I + t*v
 * (mod 2^W) for a distinct t < nranks*per; with `ordered`, t grows with k.
 */
static void check_tickets(const char *ctx, const uint64_t *all, size_t stride, size_t first, size_t per,
                          uint64_t I, uint64_t v, int ordered)
{
    uint64_t total = (uint64_t)t_nranks * per, inv = inverse_odd(v);
    uint8_t *seen = test_xmalloc(total);
    int bad = 0;
    memset(seen, 0, total);
    for (int r = 0; r < t_nranks && bad < 5; r++) {
        uint64_t prev = 0;
        for (size_t k = 0; k < per && bad < 5; k++) {
            uint64_t old = all[(size_t)r * stride + first + k];
            uint64_t t = ((old - I) * inv) & MASK;
            if (old & ~MASK) {
                FAIL("%s: rank %d's fetch %zu returned 0x%016" PRIx64 ", wider than %u bytes", ctx, r, k, old, W);
                bad++;
            } else if (t >= total) {
                FAIL("%s: rank %d's fetch %zu returned 0x%" PRIx64 ", which is not initial 0x%" PRIx64
                     " + t * 0x%" PRIx64 " for any t < %" PRIu64, ctx, r, k, old, I, v, total);
                bad++;
            } else if (seen[t]) {
                FAIL("%s: value 0x%" PRIx64 " (ticket %" PRIu64 ") was fetched twice (again by rank %d, fetch %zu)",
                     ctx, old, t, r, k);
                bad++;
            } else if (ordered && k > 0 && t <= prev) {
                FAIL("%s: rank %d's blocking fetch %zu got ticket %" PRIu64 " after ticket %" PRIu64, ctx, r, k,
                     t, prev);
                bad++;
            } else {
                seen[t] = 1;
            }
            prev = t;
        }
    }
    free(seen);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- one (mode, type) round ---- */

static uint64_t my_bits(void)
{
    uint64_t m = 0;
    for (unsigned b = 0; b < W * 8; b++)
        if ((int)(b % (unsigned)t_nranks) == t_rank)
            m |= UINT64_C(1) << b;
    return m;
}

static void run_bit_ops(const char *ctx)
{
    const int check_fetched = cur_mode != M_NBI;
    uint64_t mine = my_bits(), sofar = 0;
    /* one result slot per op: up to 64 ORs, 64 ANDs and 4 * 64 XORs */
    uint64_t *res = test_xmalloc(sizeof *res * 64 * 6);
    int k = 0;
    /* OR: set my bits one by one */
    for (unsigned b = 0; b < W * 8; b++) {
        if (!(mine >> b & 1))
            continue;
        uint64_t bit = UINT64_C(1) << b, *r = &res[k];
        amo(k % 2 ? GAS_AMO_OR : GAS_AMO_FETCH_OR, role_ptr(R_OR), bit, 0, r);
        if (check_fetched && k % 2 == 0 && (*r & mine) != sofar)
            FAIL("%s FETCH_OR: my bits were 0x%" PRIx64 ", expected 0x%" PRIx64, ctx, *r & mine, sofar);
        sofar |= bit;
        k++;
    }
    /* AND: clear my bits one by one */
    sofar = mine;
    for (unsigned b = 0; b < W * 8; b++) {
        if (!(mine >> b & 1))
            continue;
        uint64_t bit = UINT64_C(1) << b, *r = &res[k];
        amo(k % 2 ? GAS_AMO_AND : GAS_AMO_FETCH_AND, role_ptr(R_AND), ~bit, 0, r);
        if (check_fetched && k % 2 == 0 && (*r & mine) != sofar)
            FAIL("%s FETCH_AND: my bits were 0x%" PRIx64 ", expected 0x%" PRIx64, ctx, *r & mine, sofar);
        sofar &= ~bit;
        k++;
    }
    /* XOR: toggle my i-th bit (i % 4) + 1 times */
    sofar = xor_init() & mine;
    int i = 0;
    for (unsigned b = 0; b < W * 8; b++) {
        if (!(mine >> b & 1))
            continue;
        uint64_t bit = UINT64_C(1) << b;
        for (int t = 0; t <= i % 4; t++) {
            uint64_t *r = &res[k];
            amo(k % 2 ? GAS_AMO_XOR : GAS_AMO_FETCH_XOR, role_ptr(R_XOR), bit, 0, r);
            if (check_fetched && k % 2 == 0 && (*r & mine) != sofar)
                FAIL("%s FETCH_XOR: my bits were 0x%" PRIx64 ", expected 0x%" PRIx64, ctx, *r & mine, sofar);
            sofar ^= bit;
            k++;
        }
        i++;
    }
    if (cur_mode == M_NBI)
        CHECK_OK(gas_quiet());
    free(res);
}

static uint64_t xor_expected(void)
{
    uint64_t x = xor_init();
    for (int r = 0; r < t_nranks; r++) {
        int i = 0;
        for (unsigned b = 0; b < W * 8; b++) {
            if ((int)(b % (unsigned)t_nranks) != r)
                continue;
            if ((i % 4) % 2 == 0) /* toggled an odd number of times */
                x ^= UINT64_C(1) << b;
            i++;
        }
    }
    return x;
}

static void run_lock(const char *ctx)
{
    gas_ptr_t lock = role_ptr(R_LOCK);
    gas_ptr_t data = gas_layout_ptr(&wl, cell_index(R_LOCKDATA));
    for (int it = 0; it < ITER_L; it++) {
        uint64_t old = 1;
        long spins = 0;
        for (;;) {
            amo(GAS_AMO_CSWAP, lock, (uint64_t)t_rank + 1, 0, &old);
            if (old == 0)
                break;
            if (old > (uint64_t)t_nranks) {
                FAIL("%s lock: CSWAP returned %" PRIu64 ", not a rank + 1", ctx, old);
                break;
            }
            if (++spins % 4 == 0)
                sched_yield();
        }
        uint64_t v = 0, held = 0;
        amo(GAS_AMO_FETCH, lock, 0, 0, &held);
        CHECK(held == (uint64_t)t_rank + 1, "%s lock: holding it, FETCH shows %" PRIu64 ", expected %d", ctx,
              held, t_rank + 1);
        CHECK_OK(gas_get(&v, data, 8));
        v++;
        CHECK_OK(gas_put(data, &v, 8));
        CHECK_OK(gas_quiet());
        /* release, checking nobody else took it meanwhile */
        amo(GAS_AMO_CSWAP, lock, 0, (uint64_t)t_rank + 1, &old);
        CHECK(old == (uint64_t)t_rank + 1, "%s lock: releasing, CSWAP found %" PRIu64 ", expected %d", ctx, old,
              t_rank + 1);
    }
}

static void run_combo(int mode, int type)
{
    int n = t_nranks, me = t_rank;
    char ctx[96];
    cur_mode = mode;
    cur_type = type;
    W = (type == T_U32 || type == T_I32) ? 4 : 8;
    MASK = W == 4 ? 0xffffffffu : UINT64_MAX;
    snprintf(ctx, sizeof ctx, "%s %s", mode_names[mode], type_names[type]);

    init_my_part();
    /* my slots of the SET table start at zero */
    uint64_t zero = 0;
    CHECK_OK(gas_put(test_at(slots, (uint64_t)me * 8), &zero, 8));
    MUST(gas_barrier());

    uint64_t *olds = test_xmalloc(sizeof *olds * TPR);
    memset(olds, 0, sizeof *olds * TPR);

    /* FETCH_ADD counters and ADD sums, interleaved, counters in a rank-rotated order */
    for (int it = 0; it < ITER; it++) {
        for (int cc = 0; cc < NCTR; cc++) {
            int c = (cc + me) % NCTR;
            amo(GAS_AMO_FETCH_ADD, role_ptr(R_CTR0 + c), ctr_step(), 0, &olds[c * ITER + it]);
            amo(GAS_AMO_ADD, role_ptr(R_SUM0 + c), sum_operand(me), 0, NULL);
        }
    }
    /* SWAP chain */
    for (int k = 0; k < ITER_S; k++)
        amo(GAS_AMO_SWAP, role_ptr(R_SWAP), swap_value(me, k), 0, &olds[NCTR * ITER + k]);
    if (mode == M_NBI)
        CHECK_OK(gas_quiet());
    /* CSWAP increments: retry with the value seen until the compare succeeds */
    uint64_t guess = cswap_init();
    for (int k = 0; k < ITER_C; k++) {
        uint64_t *slot = &olds[NCTR * ITER + ITER_S + k];
        for (;;) {
            amo(GAS_AMO_CSWAP, role_ptr(R_CSWAP), (guess + 1) & MASK, guess, slot);
            if (mode == M_NBI)
                CHECK_OK(gas_quiet());
            if (*slot == guess)
                break;
            guess = *slot;
        }
        guess = (guess + 1) & MASK;
    }
    /* bitwise ops on bits that this rank alone owns */
    run_bit_ops(ctx);
    /* a lock built on CSWAP guarding a plain counter */
    if (mode == M_TYPED && (type == T_U64 || type == T_I32))
        run_lock(ctx);
    /* SET of 32-bit halves by two different ranks / 64-bit words; FETCH them back below */
    if (W == 4) {
        cur_type = T_U32; /* the halves of the slot word */
        amo(GAS_AMO_SET, test_at(slots, (uint64_t)((me + 1) % n) * 8), 0x11000000u + (uint64_t)me, 0, NULL);
        amo(GAS_AMO_SET, test_at(slots, (uint64_t)((me + 2) % n) * 8 + 4), 0x22000000u + (uint64_t)me, 0, NULL);
        cur_type = type;
    } else {
        amo(GAS_AMO_SET, test_at(slots, (uint64_t)((me + 1) % n) * 8),
            0x3300000000000000ull + (uint64_t)me * 0x10001ull, 0, NULL);
    }
    if (mode == M_NBI)
        CHECK_OK(gas_quiet());

    /* publish my fetched values */
    CHECK_OK(gas_put(test_at(tickets, (uint64_t)me * TPR * 8), olds, sizeof *olds * TPR));
    MUST(gas_barrier());

    /* ---- checks: the owner of each word checks it ---- */
    uint64_t *all = test_xmalloc(sizeof *all * TPR * (size_t)n);
    CHECK_OK(gas_get(all, tickets, sizeof *all * TPR * (size_t)n));
    char what[160];
    uint64_t total = (uint64_t)n * ITER;
    for (int c = 0; c < NCTR; c++) {
        if ((R_CTR0 + c) % n != me)
            continue;
        snprintf(what, sizeof what, "%s FETCH_ADD counter %d", ctx, c);
        uint64_t want = (ctr_init(c) + total * ctr_step()) & MASK, got = read_role(R_CTR0 + c, what);
        CHECK(got == want, "%s: final 0x%" PRIx64 ", expected 0x%" PRIx64 " (initial 0x%" PRIx64 " + %" PRIu64
              " * 0x%" PRIx64 ")", what, got, want, ctr_init(c), total, ctr_step());
        check_tickets(what, all, TPR, (size_t)c * ITER, ITER, ctr_init(c), ctr_step(), mode != M_NBI);
    }
    for (int c = 0; c < NCTR; c++) {
        if ((R_SUM0 + c) % n != me)
            continue;
        snprintf(what, sizeof what, "%s ADD sum %d", ctx, c);
        uint64_t want = sum_init();
        for (int r = 0; r < n; r++)
            want += (uint64_t)ITER * sum_operand(r);
        want &= MASK;
        uint64_t got = read_role(R_SUM0 + c, what);
        CHECK(got == want, "%s: final 0x%" PRIx64 ", expected 0x%" PRIx64, what, got, want);
    }
    if (R_OR % n == me) {
        snprintf(what, sizeof what, "%s OR/FETCH_OR of every rank's bits", ctx);
        uint64_t got = read_role(R_OR, what);
        CHECK(got == MASK, "%s: final 0x%" PRIx64 ", expected 0x%" PRIx64, what, got, MASK);
    }
    if (R_AND % n == me) {
        snprintf(what, sizeof what, "%s AND/FETCH_AND clearing every rank's bits", ctx);
        uint64_t got = read_role(R_AND, what);
        CHECK(got == 0, "%s: final 0x%" PRIx64 ", expected 0", what, got);
    }
    if (R_XOR % n == me) {
        snprintf(what, sizeof what, "%s XOR/FETCH_XOR toggles", ctx);
        uint64_t got = read_role(R_XOR, what), want = xor_expected();
        CHECK(got == want, "%s: final 0x%" PRIx64 ", expected 0x%" PRIx64, what, got, want);
    }
    if (R_SWAP % n == me) {
        snprintf(what, sizeof what, "%s SWAP chain", ctx);
        size_t cnt = (size_t)n * ITER_S + 1, bad = 0;
        uint64_t *got = test_xmalloc(sizeof *got * cnt), *want = test_xmalloc(sizeof *want * cnt);
        for (int r = 0; r < n; r++)
            for (int k = 0; k < ITER_S; k++) {
                got[(size_t)r * ITER_S + k] = all[(size_t)r * TPR + NCTR * ITER + k];
                want[(size_t)r * ITER_S + k] = swap_value(r, k);
            }
        got[cnt - 1] = read_role(R_SWAP, what);
        want[cnt - 1] = swap_init();
        qsort(got, cnt, sizeof *got, cmp_u64);
        qsort(want, cnt, sizeof *want, cmp_u64);
        for (size_t i = 0; i < cnt && bad < 3; i++)
            if (got[i] != want[i]) {
                FAIL("%s: the fetched values plus the final one are not the initial value and the swapped-in "
                     "ones: sorted position %zu holds 0x%" PRIx64 ", expected 0x%" PRIx64, what, i, got[i], want[i]);
                bad++;
            }
        free(got);
        free(want);
    }
    if (R_CSWAP % n == me) {
        snprintf(what, sizeof what, "%s CSWAP increments", ctx);
        uint64_t got = read_role(R_CSWAP, what), want = (cswap_init() + (uint64_t)n * ITER_C) & MASK;
        CHECK(got == want, "%s: final 0x%" PRIx64 ", expected 0x%" PRIx64, what, got, want);
        check_tickets(what, all, TPR, NCTR * ITER + ITER_S, ITER_C, cswap_init(), 1, 1);
    }
    if (mode == M_TYPED && (type == T_U64 || type == T_I32) && R_LOCKDATA % n == me) {
        uint64_t v = 0;
        CHECK_OK(gas_get(&v, gas_layout_ptr(&wl, cell_index(R_LOCKDATA)), 8));
        CHECK(v == (uint64_t)n * ITER_L, "%s lock: the counter it guards is %" PRIu64 ", expected %d", ctx, v,
              n * ITER_L);
        snprintf(what, sizeof what, "%s lock word", ctx);
        uint64_t l = read_role(R_LOCK, what);
        CHECK(l == 0, "%s: %" PRIu64 " after every rank released it", what, l);
    }
    /* the SET table: every rank reads every slot with FETCH */
    for (int s = 0; s < n; s++) {
        if (W == 4) {
            uint64_t lo = 0, hi = 0;
            int saved = cur_type;
            cur_type = T_U32;
            amo(GAS_AMO_FETCH, test_at(slots, (uint64_t)s * 8), 0, 0, &lo);
            amo(GAS_AMO_FETCH, test_at(slots, (uint64_t)s * 8 + 4), 0, 0, &hi);
            cur_type = saved;
            if (mode == M_NBI)
                CHECK_OK(gas_quiet());
            CHECK(lo == 0x11000000u + (uint64_t)((s + n - 1) % n) && hi == 0x22000000u + (uint64_t)((s + n - 2) % n),
                  "%s SET of 32-bit halves of slot %d: got low 0x%" PRIx64 " high 0x%" PRIx64 ", expected 0x%x 0x%x",
                  ctx, s, lo, hi, 0x11000000u + (unsigned)((s + n - 1) % n), 0x22000000u + (unsigned)((s + n - 2) % n));
        } else {
            uint64_t v = 0;
            amo(GAS_AMO_FETCH, test_at(slots, (uint64_t)s * 8), 0, 0, &v);
            if (mode == M_NBI)
                CHECK_OK(gas_quiet());
            uint64_t want = 0x3300000000000000ull + (uint64_t)((s + n - 1) % n) * 0x10001ull;
            CHECK(v == want, "%s SET/FETCH of slot %d: got 0x%" PRIx64 ", expected 0x%" PRIx64, ctx, s, v, want);
        }
    }
    free(all);
    free(olds);
    MUST(gas_barrier());
}

int main(void)
{
    test_begin("atomics");
    int n = t_nranks;
    /* 512 bytes per rank: room for ceil(NROLES / nranks) 16-byte cells */
    uint64_t per = ((uint64_t)(NROLES + n - 1) / (uint64_t)n) * 16;
    per = per < 512 ? 512 : per;
    MUST(gas_malloc((size_t)(per * (uint64_t)n), &words));
    wl = test_layout_of(words);
    if (!CHECK(wl.block == per, "gas_malloc(%" PRIu64 "): block %" PRIu64 ", expected %" PRIu64,
               per * (uint64_t)n, wl.block, per))
        test_die("unexpected layout");
    MUST(gas_malloc((size_t)n * TPR * 8, &tickets));
    MUST(gas_malloc((size_t)n * 8, &slots));
    for (int mode = 0; mode < NMODES; mode++)
        for (int type = 0; type < NTYPES; type++)
            run_combo(mode, type);
    CHECK_OK(gas_free(slots));
    CHECK_OK(gas_free(tickets));
    CHECK_OK(gas_free(words));
    return test_end();
}
