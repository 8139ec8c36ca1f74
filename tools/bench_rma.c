/*
 * bench_rma.c - gas-bench's RMA, atomic and barrier modes.  Rank 0 drives,
 * the target (rank 1) is passive except in putsig-lat, where it answers.
 * Every mode checks its data: puts leave the point's pattern at the target
 * (checked there after the point), gets are poisoned before and checked after
 * every batch, and every value a fetching atomic returns is checked.
 */
#include "gas-bench.h"

#include <string.h>

static void fill_src(struct bench *b, size_t size)
{
    bench_fill_pattern(b->src, size, b->seed);
}

static void poison_dst(struct bench *b, size_t size)
{
    memset(b->dst, BENCH_POISON, size);
}

static uint64_t verify_dst(struct bench *b, size_t size)
{
    return bench_check_pattern(b->dst, size, b->seed);
}

static uint64_t put_lat_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        bench_check(gas_put(b->tgt, b->src, size), "gas_put");
        bench_check(gas_quiet(), "gas_quiet");
    }
    return 0;
}

/* gas_put alone: each returns once its source may be reused (shm: the data is
 * at the target; udp/rdma: copied or sent); the batch's quiet is not counted
 * per call but is inside the batch's time, once. */
static uint64_t put_call_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        bench_check(gas_put(b->tgt, b->src, size), "gas_put");
    bench_check(gas_quiet(), "gas_quiet");
    return 0;
}

static uint64_t get_lat_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        bench_check(gas_get(b->dst, b->tgt, size), "gas_get");
    return 0;
}

/* Back-pressure (GAS_ERR_AGAIN) is not an error for a stream: drain, retry. */
static void nbi_retry(gas_status_t s, const char *call, struct bench *b, size_t size, int put)
{
    while (s == GAS_ERR_AGAIN) {
        bench_check(gas_quiet(), "gas_quiet");
        s = put ? gas_put_nbi(b->tgt, b->src, size) : gas_get_nbi(b->dst, b->tgt, size);
    }
    bench_check(s, call);
}

static uint64_t put_bw_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        nbi_retry(gas_put_nbi(b->tgt, b->src, size), "gas_put_nbi", b, size, 1);
        if ((i + 1) % b->opt.window == 0)
            bench_check(gas_quiet(), "gas_quiet");
    }
    bench_check(gas_quiet(), "gas_quiet");
    return 0;
}

static uint64_t get_bw_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        nbi_retry(gas_get_nbi(b->dst, b->tgt, size), "gas_get_nbi", b, size, 0);
        if ((i + 1) % b->opt.window == 0)
            bench_check(gas_quiet(), "gas_quiet");
    }
    bench_check(gas_quiet(), "gas_quiet");
    return 0;
}

static void amo_setup(struct bench *b, size_t size)
{
    b->amo_next = 0; /* the target zeroed the word */
}

static uint64_t amo_fadd_batch(struct bench *b, size_t size, uint64_t iters)
{
    uint64_t bad = 0, old = 0;
    for (uint64_t i = 0; i < iters; i++) {
        bench_check(gas_atomic_fetch_add_u64(b->tgt, 1, &old), "gas_atomic_fetch_add_u64");
        bad += old != b->amo_next;
        b->amo_next = old + 1;
    }
    return bad;
}

static uint64_t amo_cswap_batch(struct bench *b, size_t size, uint64_t iters)
{
    uint64_t bad = 0, old = 0;
    for (uint64_t i = 0; i < iters; i++) {
        bench_check(gas_atomic_cswap_u64(b->tgt, b->amo_next, b->amo_next + 1, &old),
              "gas_atomic_cswap_u64");
        bad += old != b->amo_next;
        b->amo_next = old + 1;
    }
    return bad;
}

/* The word must hold exactly what the atomics counted. */
static uint64_t amo_verify(struct bench *b, size_t size)
{
    uint64_t v = 0;
    bench_check(gas_atomic_fetch_u64(b->tgt, &v), "gas_atomic_fetch_u64");
    return v != b->amo_next;
}

static uint64_t barrier_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++)
        bench_check(gas_barrier(), "gas_barrier");
    return 0;
}

static gas_ptr_t sig_slot(const struct bench *b, int rank)
{
    gas_ptr_t p;
    bench_check(gas_ptr_index(b->sig, sizeof(uint64_t), (uint64_t)rank, &p), "gas_ptr_index");
    return p;
}

/*
 * Rank 0 puts size bytes with a signal to the target and waits for the
 * target's answer (size bytes and a signal into rank 0's block); the signal
 * values count on both sides in step, as both run the same iterations.
 */
static uint64_t putsig_batch(struct bench *b, size_t size, uint64_t iters)
{
    const uint64_t *mine = gas_ptr_local(sig_slot(b, b->rank));
    gas_ptr_t home;
    if (b->rank == 0) {
        for (uint64_t i = 0; i < iters; i++) {
            uint64_t seq = ++b->sig_seq;
            bench_check(gas_put_signal(b->tgt, b->src, size, sig_slot(b, b->target), seq,
                                       GAS_SIGNAL_SET), "gas_put_signal");
            bench_check(gas_wait_until_u64(mine, GAS_CMP_GE, seq), "gas_wait_until_u64");
        }
    } else if (b->rank == b->target) {
        bench_check(gas_ptr_add(b->data, 0, &home), "gas_ptr_add"); /* rank 0's block */
        for (uint64_t i = 0; i < iters; i++) {
            uint64_t seq = ++b->sig_seq;
            bench_check(gas_wait_until_u64(mine, GAS_CMP_GE, seq), "gas_wait_until_u64");
            bench_check(gas_put_signal(home, b->src, size, sig_slot(b, 0), seq, GAS_SIGNAL_SET),
                        "gas_put_signal");
        }
    }
    return 0;
}

/* A stream of non-blocking atomics; fetched values must be the next ones, in some order. */
static uint64_t amo_rate(struct bench *b, uint64_t iters, gas_amo_op_t op)
{
    uint64_t bad = 0, base = b->amo_next;
    unsigned w = 0;
    for (uint64_t i = 0; i < iters; i++) {
        gas_status_t s;
        while ((s = gas_amo_nbi(op, 8, b->tgt, 1, 0, &b->amo_res[w])) == GAS_ERR_AGAIN)
            bench_check(gas_quiet(), "gas_quiet");
        bench_check(s, "gas_amo_nbi");
        if (++w == b->opt.window || i + 1 == iters) {
            bench_check(gas_quiet(), "gas_quiet");
            if (op == GAS_AMO_FETCH_ADD) {
                /* the w results are base .. base + w - 1: their sum and range */
                uint64_t sum = 0;
                for (unsigned k = 0; k < w; k++) {
                    sum += b->amo_res[k];
                    bad += b->amo_res[k] < base || b->amo_res[k] >= base + w;
                }
                bad += sum != w * base + (uint64_t)w * (w - 1) / 2;
            }
            base += w;
            w = 0;
        }
    }
    b->amo_next = base;
    return bad;
}

static uint64_t amo_add_rate_batch(struct bench *b, size_t size, uint64_t iters)
{
    return amo_rate(b, iters, GAS_AMO_ADD);
}

static uint64_t amo_fadd_rate_batch(struct bench *b, size_t size, uint64_t iters)
{
    return amo_rate(b, iters, GAS_AMO_FETCH_ADD);
}

const struct mode bench_rma_modes[] = {
    { .name = "put-lat", .group = "put-lat", .kind = KIND_LAT, .sized = 1, .prep = PREP_POISON,
      .setup = fill_src, .batch = put_lat_batch,
      .doc = "blocking gas_put + gas_quiet, one at a time" },
    { .name = "put-call", .group = "put-call", .kind = KIND_LAT, .sized = 1,
      .prep = PREP_POISON, .setup = fill_src, .batch = put_call_batch,
      .doc = "blocking gas_put alone, back to back (the time until it returns: the source "
             "may be reused); one gas_quiet per batch" },
    { .name = "get-lat", .group = "get-lat", .kind = KIND_LAT, .sized = 1, .prep = PREP_FILL,
      .before = poison_dst, .batch = get_lat_batch, .verify = verify_dst,
      .doc = "blocking gas_get, one at a time" },
    { .name = "put-bw", .group = "put-bw", .kind = KIND_BW, .sized = 1, .prep = PREP_POISON,
      .setup = fill_src, .batch = put_bw_batch,
      .doc = "a stream of gas_put_nbi, gas_quiet every --window" },
    { .name = "get-bw", .group = "get-bw", .kind = KIND_BW, .sized = 1, .prep = PREP_FILL,
      .before = poison_dst, .batch = get_bw_batch, .verify = verify_dst,
      .doc = "a stream of gas_get_nbi, gas_quiet every --window" },
    { .name = "amo-fadd", .group = "amo-lat", .kind = KIND_LAT, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_fadd_batch, .verify = amo_verify,
      .doc = "gas_atomic_fetch_add_u64, one at a time" },
    { .name = "amo-cswap", .group = "amo-lat", .kind = KIND_LAT, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_cswap_batch, .verify = amo_verify,
      .doc = "gas_atomic_cswap_u64 (always succeeding), one at a time" },
    { .name = "putsig-lat", .group = "putsig-lat", .kind = KIND_LAT, .sized = 1,
      .collective = 1, .prep = PREP_POISON, .setup = fill_src, .batch = putsig_batch,
      .doc = "gas_put_signal ping-pong between rank 0 and the target (round trip)" },
    { .name = "amo-add-rate", .group = "amo-rate", .kind = KIND_RATE, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_add_rate_batch, .verify = amo_verify,
      .doc = "a stream of gas_amo_nbi(ADD), gas_quiet every --window" },
    { .name = "amo-fadd-rate", .group = "amo-rate", .kind = KIND_RATE, .fixed_size = 8,
      .prep = PREP_ZERO, .setup = amo_setup, .batch = amo_fadd_rate_batch, .verify = amo_verify,
      .doc = "a stream of gas_amo_nbi(FETCH_ADD), gas_quiet every --window" },
    { .name = "barrier", .group = "barrier", .kind = KIND_LAT, .fixed_size = 0, .collective = 1,
      .batch = barrier_batch, .doc = "gas_barrier with all ranks" },
};
const size_t bench_nrma_modes = sizeof bench_rma_modes / sizeof bench_rma_modes[0];
