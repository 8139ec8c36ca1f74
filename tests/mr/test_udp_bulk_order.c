/*
 * test_udp_bulk_order - large loopback datagrams (ranks of one host exchange
 * datagrams of up to 64 KiB) carry puts, gets, fences and signals exactly as
 * ordered copies would: run over udp on one host, with and without lost,
 * duplicated and reordered datagrams.
 *
 * Every rank writes to the next one and reads from it, at once:
 *  - puts: streams of gas_put_nbi of sizes chosen so that datagrams carry one
 *    record, or the tail of one put and the head of the next, or several small
 *    ones (1 B .. 300 KB), at random, overlapping offsets of the writer's part
 *    of the target; the writer applies each to a local model in issue order,
 *    and after gas_quiet reads its part back and compares byte for byte;
 *  - gets: gas_get_nbi of random ranges of the next rank's fixed pattern, into
 *    poisoned buffers, checked after gas_quiet;
 *  - order: a payload (up to 200 KB, stamped with the round), gas_fence, its
 *    size, gas_fence, a flag; the target waits for the flag and finds the
 *    whole payload of that round (a flag applied before the payload's tail
 *    would show); likewise a gas_put_signal's payload under its signal.
 */
#include "udp_test.h"

#define PART (1u << 20)          /* each writer's part of the put target */
#define PATT (1u << 20)          /* the fixed pattern that gets read */
#define ORDER_MAX (200u << 10)
#define ROUNDS 24
#define PUTS 40
#define GETS 12
#define POISON 0xa5

static const size_t sizes[] = {1, 77, 3000, 16384, 65400, 65459, 65536, 65636, 100000, 131072,
                               300000};

static size_t pick(test_rng_t *r, size_t cap)
{
    size_t n = sizes[rng_below(r, sizeof sizes / sizeof sizes[0])];
    return n < cap ? n : cap;
}

static void stamp(uint8_t *p, size_t n, uint64_t round)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(round * 131 + i * 7 + (i >> 9));
}

static size_t stamp_mismatch(const uint8_t *p, size_t n, uint64_t round)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(round * 131 + i * 7 + (i >> 9)))
            return i;
    return n;
}

/* Streams of overlapping puts into this rank's part of the next rank,
 * modelled locally, read back and compared. */
static void check_puts(gas_ptr_t dst, int next, test_rng_t *r, uint8_t *model, uint8_t *src,
                       uint8_t *back)
{
    gas_ptr_t part = test_at(dst, (uint64_t)next * PART);
    for (int round = 0; round < ROUNDS && t_failures == 0; round++) {
        for (int k = 0; k < PUTS; k++) {
            size_t n = pick(r, PART);
            uint64_t off = rng_below(r, PART - n + 1);
            for (size_t i = 0; i < n; i++)
                src[i] = (uint8_t)rng_next(r);
            memcpy(model + off, src, n);
            CHECK_OK(gas_put_nbi(test_at(part, off), src, n));
        }
        CHECK_OK(gas_quiet());
        memset(back, POISON, PART);
        CHECK_OK(gas_get(back, part, PART));
        size_t i = 0;
        while (i < PART && back[i] == model[i])
            i++;
        if (i < PART)
            FAIL("round %d: byte %zu of this rank's part at rank %d is %#x, the puts in issue "
                 "order leave %#x", round, i, next, back[i], model[i]);
    }
}

/* gas_get_nbi of random ranges of the next rank's pattern, checked after quiet. */
static void check_gets(gas_ptr_t patt, int next, test_rng_t *r, uint8_t **bufs)
{
    size_t len[GETS];
    uint64_t from[GETS];
    for (int round = 0; round < ROUNDS && t_failures == 0; round++) {
        for (int k = 0; k < GETS; k++) {
            len[k] = pick(r, PATT);
            from[k] = rng_below(r, PATT - len[k] + 1);
            memset(bufs[k], POISON, len[k]);
            CHECK_OK(gas_get_nbi(bufs[k], test_at(patt, (uint64_t)next * PATT + from[k]), len[k]));
        }
        CHECK_OK(gas_quiet());
        for (int k = 0; k < GETS; k++) {
            size_t bad = pattern_find_mismatch(bufs[k], len[k], next, 0, from[k]);
            if (bad != len[k])
                FAIL("round %d get %d: byte %zu of %zu (offset %" PRIu64 " of rank %d) is %#x",
                     round, k, bad, len[k], from[k], next, bufs[k][bad]);
        }
    }
}

/*
 * Order: a payload, gas_fence, its size, gas_fence, a flag; then a
 * put-with-signal whose signal carries the round and its size.  This rank
 * waits for the previous rank's flag and signal and checks every byte of
 * the payloads they cover (a flag or signal applied before the tail of its
 * payload shows).  Area per rank: [flag][size][signal][pad][A][B].
 */
static void check_order(gas_ptr_t area, int next, int prev, test_rng_t *r, uint8_t *src)
{
    size_t stride = 32 + 2 * (size_t)ORDER_MAX;
    uint8_t *mine = gas_ptr_local(test_at(area, (uint64_t)t_rank * stride));
    uint64_t *w = (uint64_t *)mine;
    gas_ptr_t there = test_at(area, (uint64_t)next * stride);
    for (uint64_t round = 1; round <= 4 * ROUNDS && t_failures == 0; round++) {
        uint64_t na = 1 + rng_below(r, ORDER_MAX), nb = 1 + rng_below(r, ORDER_MAX);
        stamp(src, na, round);
        CHECK_OK(gas_put_nbi(test_at(there, 32), src, na));
        CHECK_OK(gas_fence());
        CHECK_OK(gas_put_nbi(test_at(there, 8), &na, 8));
        CHECK_OK(gas_fence());
        CHECK_OK(gas_put_nbi(there, &round, 8));
        stamp(src, nb, round + 1000);
        CHECK_OK(gas_put_signal_nbi(test_at(there, 32 + ORDER_MAX), src, nb, test_at(there, 16),
                                    round << 32 | nb, GAS_SIGNAL_SET));
        CHECK_OK(gas_wait_until_u64(&w[0], GAS_CMP_EQ, round));
        size_t got = (size_t)__atomic_load_n(&w[1], __ATOMIC_ACQUIRE);
        size_t bad = got <= ORDER_MAX ? stamp_mismatch(mine + 32, got, round) : 0;
        if (got > ORDER_MAX || bad != got)
            FAIL("round %" PRIu64 ": the flag from rank %d came, the payload fenced before it "
                 "(%zu bytes) differs at byte %zu", round, prev, got, bad);
        CHECK_OK(gas_wait_until_u64(&w[2], GAS_CMP_GE, round << 32));
        uint64_t s = __atomic_load_n(&w[2], __ATOMIC_ACQUIRE);
        got = (size_t)(s & 0xffffffffu);
        bad = (s >> 32) == round && got <= ORDER_MAX
                  ? stamp_mismatch(mine + 32 + ORDER_MAX, got, round + 1000)
                  : 0;
        if ((s >> 32) != round || got > ORDER_MAX || bad != got)
            FAIL("round %" PRIu64 ": the signal from rank %d (%#" PRIx64 ") came, its payload "
                 "differs at byte %zu", round, prev, s, bad);
        /* Both sides finish the round before the payloads are overwritten. */
        CHECK_OK(gas_barrier());
    }
}

int main(void)
{
    test_begin("udp_bulk_order");
    int next = (t_rank + 1) % t_nranks, prev = (t_rank + t_nranks - 1) % t_nranks;
    if (udp_test_skip(2, 0, next, NULL))
        return 77;
    gas_ptr_t dst, patt, area;
    MUST(gas_malloc((size_t)PART * (size_t)t_nranks, &dst));
    MUST(gas_malloc((size_t)PATT * (size_t)t_nranks, &patt));
    MUST(gas_malloc((32 + 2 * (size_t)ORDER_MAX) * (size_t)t_nranks, &area));
    pattern_fill(gas_ptr_local(test_at(patt, (uint64_t)t_rank * PATT)), PATT, t_rank, 0, 0);
    memset(gas_ptr_local(test_at(area, (uint64_t)t_rank * (32 + 2 * (size_t)ORDER_MAX))), 0,
           32 + 2 * (size_t)ORDER_MAX);
    /* The puts' model starts as this rank's part at the next rank: zeros
     * (gas_malloc's memory is not promised zeroed; each rank zeroes its own). */
    memset(gas_ptr_local(test_at(dst, (uint64_t)t_rank * PART)), 0, PART);
    MUST(gas_barrier());
    test_rng_t r = rng_make(t_rank, 11);
    uint8_t *model = test_xmalloc(PART), *src = test_xmalloc(PART), *back = test_xmalloc(PART);
    uint8_t *bufs[GETS];
    for (int k = 0; k < GETS; k++)
        bufs[k] = test_xmalloc(PATT);
    memset(model, 0, PART);
    check_puts(dst, next, &r, model, src, back);
    MUST(gas_barrier());
    check_gets(patt, next, &r, bufs);
    MUST(gas_barrier());
    check_order(area, next, prev, &r, src);
    MUST(gas_barrier());
    free(model);
    free(src);
    free(back);
    for (int k = 0; k < GETS; k++)
        free(bufs[k]);
    return test_end();
}
