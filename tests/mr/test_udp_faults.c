/*
 * test_udp_faults - a mixed random workload over a faulty network, checked
 * against a shadow copy.
 *
 * Run with GAS_TRANSPORT=udp and the test-only fault knobs (the manifest sets
 * GAS_TEST_UDP_DROP=5%, _DUP=2%, _REORDER=5%, _CORRUPT=1%).  Every rank
 * issues GAS_TEST_OPS / nranks operations (default 10^5 in all) to random
 * ranks: puts (blocking, _nbi, _nb + wait) of 1 B to 64 KiB, put-with-signal,
 * gets (blocking, _nb + wait) checked at once against the shadow, atomics on
 * words only this rank touches (every fetched value checked) and adds to
 * counters shared by all ranks.  Writer w owns slice w of every rank's part,
 * so its shadow is exact.  At the end every slice is read back whole and
 * every shared counter must equal the sum of what all ranks added: zero
 * mismatches, atomics exact.  With the knobs on, each rank must also have
 * dropped corrupted datagrams (checksum) and retransmitted.
 */
#include "udp_test.h"

#define SLICE (256u << 10)  /* bytes per writer per rank */
#define NWORDS 64           /* private atomic words at the start of each slice */
#define NCOUNT 64           /* shared counters per rank */
#define DATA0 (NWORDS * 8)  /* where put/get data starts in a slice */

static int me, P;
static gas_ptr_t data, counters, sums;
static uint8_t *shadow;     /* [t * SLICE ...]: this rank's slice on rank t */
static uint64_t *added;     /* [t * NCOUNT + c]: what this rank added to counter c of rank t */

static gas_ptr_t slice_at(int t, uint64_t off)
{
    return test_at(data, ((uint64_t)t * (uint64_t)P + (uint64_t)me) * SLICE + off);
}

static size_t pick_len(test_rng_t *r)
{
    uint64_t k = rng_below(r, 100);
    if (k < 85)
        return (size_t)rng_range(r, 1, 256);
    if (k < 98)
        return (size_t)rng_range(r, 257, 4096);
    return (size_t)rng_range(r, 4097, 65536);
}

static void do_put(test_rng_t *r, int t, uint8_t *buf)
{
    size_t len = pick_len(r);
    uint64_t off = DATA0 + rng_below(r, SLICE - DATA0 - len + 1);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)rng_next(r);
    memcpy(shadow + (size_t)t * SLICE + off, buf, len);
    gas_ptr_t p = slice_at(t, off);
    switch (rng_below(r, 5)) {
    case 0:
        CHECK_OK(gas_put(p, buf, len));
        break;
    case 1: {
        gas_handle_t h;
        if (CHECK_OK(gas_put_nb(p, buf, len, &h)))
            CHECK_OK(gas_wait(h));
        break;
    }
    case 2: { /* put with signal: the signal is private word 0, added to */
        uint64_t *w0 = (uint64_t *)(void *)(shadow + (size_t)t * SLICE);
        *w0 += 1;
        CHECK_OK(gas_put_signal_nbi(p, buf, len, slice_at(t, 0), 1, GAS_SIGNAL_ADD));
        break;
    }
    default:
        CHECK_OK(gas_put_nbi(p, buf, len));
        break;
    }
}

static void do_get(test_rng_t *r, int t, uint8_t *buf)
{
    size_t len = pick_len(r);
    uint64_t off = DATA0 + rng_below(r, SLICE - DATA0 - len + 1);
    gas_ptr_t p = slice_at(t, off);
    if (rng_below(r, 2)) {
        CHECK_OK(gas_get(buf, p, len));
    } else {
        gas_handle_t h;
        if (CHECK_OK(gas_get_nb(buf, p, len, &h)))
            CHECK_OK(gas_wait(h));
    }
    check_bytes("get", buf, shadow + (size_t)t * SLICE + off, len, off);
}

/* An atomic on a private word (1..NWORDS-1): every fetched value is checked. */
static void do_private_amo(test_rng_t *r, int t)
{
    unsigned w = 1 + (unsigned)rng_below(r, NWORDS - 1);
    uint64_t *cur = (uint64_t *)(void *)(shadow + (size_t)t * SLICE + 8 * w);
    uint64_t v = rng_next(r), old = 0, want = *cur, cmp = rng_below(r, 2) ? *cur : *cur + 1;
    gas_ptr_t p = slice_at(t, 8 * w);
    gas_amo_op_t ops[] = {GAS_AMO_FETCH, GAS_AMO_SET, GAS_AMO_SWAP, GAS_AMO_CSWAP, GAS_AMO_ADD,
                          GAS_AMO_FETCH_ADD, GAS_AMO_FETCH_AND, GAS_AMO_FETCH_OR,
                          GAS_AMO_XOR, GAS_AMO_FETCH_XOR};
    gas_amo_op_t op = ops[rng_below(r, sizeof ops / sizeof ops[0])];
    int nbi = !gas_amo_fetches(op) && rng_below(r, 2);
    gas_status_t st = nbi ? gas_amo_nbi(op, 8, p, v, cmp, NULL) : gas_amo(op, 8, p, v, cmp, &old);
    if (!CHECK(st == GAS_OK, "amo %d on rank %d: %s", (int)op, t, gas_last_error()))
        return;
    if (gas_amo_fetches(op))
        CHECK(old == want, "amo %d on rank %d word %u returned %" PRIu64 ", expected %" PRIu64,
              (int)op, t, w, old, want);
    switch (op) {
    case GAS_AMO_SET: case GAS_AMO_SWAP: *cur = v; break;
    case GAS_AMO_CSWAP: if (*cur == cmp) *cur = v; break;
    case GAS_AMO_ADD: case GAS_AMO_FETCH_ADD: *cur += v; break;
    case GAS_AMO_FETCH_AND: *cur &= v; break;
    case GAS_AMO_FETCH_OR: *cur |= v; break;
    case GAS_AMO_XOR: case GAS_AMO_FETCH_XOR: *cur ^= v; break;
    default: break;
    }
}

static void do_shared_add(test_rng_t *r, int t)
{
    unsigned c = (unsigned)rng_below(r, NCOUNT);
    uint64_t v = rng_range(r, 1, 1000), old;
    gas_ptr_t p = test_at(counters, ((uint64_t)t * NCOUNT + c) * 8);
    gas_status_t st;
    switch (rng_below(r, 3)) {
    case 0: st = gas_atomic_add_u64(p, v); break;
    case 1: st = gas_amo_nbi(GAS_AMO_ADD, 8, p, v, 0, NULL); break;
    default: st = gas_atomic_fetch_add_u64(p, v, &old); break;
    }
    if (CHECK(st == GAS_OK, "shared add on rank %d: %s", t, gas_last_error()))
        added[(size_t)t * NCOUNT + c] += v;
}

static void verify(void)
{
    uint8_t *buf = test_xmalloc(SLICE);
    for (int t = 0; t < P; t++) {
        CHECK_OK(gas_get(buf, slice_at(t, 0), SLICE));
        check_bytes("final slice", buf, shadow + (size_t)t * SLICE, SLICE, (uint64_t)t * SLICE);
    }
    free(buf);
    udp_test_check_counters(counters, sums, (size_t)P * NCOUNT, 1, &added);
}

int main(void)
{
    test_begin("udp_faults");
    me = t_rank;
    P = t_nranks;
    if (udp_test_skip(2, 0, (me + 1) % P, NULL))
        return 77;
    long mine = (udp_test_ops(100000) + P - 1) / P;
    MUST(gas_malloc((size_t)P * (size_t)P * SLICE, &data));
    MUST(gas_malloc((size_t)P * NCOUNT * 8, &counters));
    MUST(gas_malloc((size_t)P * (size_t)P * NCOUNT * 8, &sums));
    shadow = calloc((size_t)P, SLICE);
    added = calloc((size_t)P * NCOUNT, 8);
    if (!shadow || !added)
        test_die("out of memory");
    /* Fresh segment pages read as zero, like the shadow. */
    MUST(gas_barrier());
    test_rng_t r = rng_make(me, 1);
    uint8_t *buf = test_xmalloc(65536);
    double t0 = test_elapsed();
    for (long i = 0; i < mine && t_failures < 20; i++) {
        int t = (int)rng_below(&r, (uint64_t)P);
        uint64_t k = rng_below(&r, 100);
        if (k < 45)
            do_put(&r, t, buf);
        else if (k < 70)
            do_get(&r, t, buf);
        else if (k < 85)
            do_private_amo(&r, t);
        else
            do_shared_add(&r, t);
        if (rng_below(&r, 64) == 0)
            CHECK_OK(gas_quiet());
    }
    CHECK_OK(gas_quiet());
    double t1 = test_elapsed();
    MUST(gas_barrier());
    verify();
    gas_peer_stats_t tot;
    MUST(gas_peer_stats(me, &tot));
    test_note("%ld operations in %.1f s; sent %" PRIu64 " datagrams (%" PRIu64 " retransmitted), "
              "received %" PRIu64 " (%" PRIu64 " duplicates, %" PRIu64 " bad)",
              mine, t1 - t0, tot.datagrams_sent, tot.retransmits, tot.datagrams_received,
              tot.duplicates, tot.bad_datagrams);
    const char *corrupt = getenv("GAS_TEST_UDP_CORRUPT"), *drop = getenv("GAS_TEST_UDP_DROP");
    if (P > 1 && corrupt && strcmp(corrupt, "0") != 0 && tot.datagrams_received > 2000)
        CHECK(tot.bad_datagrams > 0, "corruption was injected but no bad datagram was counted");
    if (P > 1 && drop && strcmp(drop, "0") != 0 && tot.datagrams_sent > 2000)
        CHECK(tot.retransmits > 0, "drops were injected but nothing was retransmitted");
    free(buf);
    free(shadow);
    free(added);
    return test_end();
}
