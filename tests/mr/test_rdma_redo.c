/*
 * test_rdma_redo - what was in flight when a queue pair failed is redone
 * over udp, in an order that keeps every ordering promise
 * (GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim with GAS_TEST_RDMA_QP_ERROR,
 * GAS_TEST_RDMA_ACCESS_ERROR, or GAS_TEST_RDMA_MARKER_ERROR: a completion
 * marker fails, after everything before it completed; optionally
 * GAS_TEST_RDMA_DELAY so that requests queue behind the failing one and are
 * flushed).
 *
 * Every rank streams to its right neighbour, mostly with gas_put_nbi (inline,
 * staged and multi-stripe sizes), mixed with gas_put_nb + gas_wait,
 * gas_get_nb of data the target wrote beforehand, and signalled puts:
 *   pass A  writes pattern A into every chunk of its area, then gas_quiet;
 *           after a barrier the target checks every chunk (a lost redo shows);
 *   pass B  overwrites every chunk with pattern B, then, after gas_fence,
 *           every third chunk again with pattern C, then gas_quiet.
 * No call may fail.  After a barrier the target checks its area with plain
 * loads against the reference: C where written, else B (a put of pass A, or
 * of B before the fence, redone after what followed it, would show), the
 * signal count, and the issuer checks every get.  Where the injected failure
 * lands (pass A or B) depends on N.  Job-wide, some rank must
 * have counted an RDMA error, and with TEST_EXPECT_REDO=1 (run it with
 * GAS_TEST_RDMA_DELAY=100%, so that requests queue behind the failing one)
 * redone something over udp.
 */
#include "check.h"

#define AREA (4u << 20)
#define GSRC (256u << 10)
#define NCHUNK 96
#define MAXGETS 16

static const size_t sizes[] = {8, 100, 128, 129, 1000, 4096, 70000, 150000};

static size_t chunk_len(int i)
{
    return sizes[(size_t)i % (sizeof sizes / sizeof sizes[0])];
}

static uint64_t chunk_off(int i)
{
    uint64_t off = 0;
    for (int k = 0; k < i; k++)
        off += (chunk_len(k) + 63) & ~63ull;
    return off;
}

static uint64_t seed(char pass, int i)
{
    return (uint64_t)(pass - 'A' + 1) * 1000003u + (uint64_t)i * 7919u;
}

static gas_ptr_t data, gsrc, sig;
static int right, left;

/* The target: check the left neighbour's chunks (pass p; every third is c if c). */
static void check_area(char p, char c)
{
    const uint8_t *mine = gas_ptr_local(test_at(data, (uint64_t)t_rank * AREA));
    for (int i = 0; i < NCHUNK; i++)
        check_pattern(c ? "chunk after pass B" : "chunk after pass A", mine + chunk_off(i),
                      chunk_len(i), left, t_rank, seed(c && i % 3 == 0 ? c : p, i), chunk_off(i));
}

static long failures;

static void must_ok(gas_status_t st, const char *what)
{
    if (st != GAS_OK) {
        failures++;
        FAIL("%s failed: %s (%s)", what, gas_strerror(st), gas_last_error());
    }
}

/* Rank r's area (on its right neighbour) and signal word. */
static gas_ptr_t at_right(uint64_t off)
{
    return test_at(data, (uint64_t)right * AREA + off);
}

struct pending_get {
    gas_handle_t h;
    uint64_t off;
    size_t len;
    uint8_t buf[4096];
};

static void pass(char p, int every, char over, uint8_t *buf, struct pending_get *gets, int *ng,
                 uint64_t *signals)
{
    test_rng_t r = rng_make(t_rank, (uint64_t)p);
    for (int i = 0; i < NCHUNK; i++) {
        if (every > 1 && i % every != 0)
            continue;
        char pat = over ? over : p;
        size_t len = chunk_len(i);
        pattern_fill(buf, len, t_rank, right, seed(pat, i));
        uint64_t k = rng_below(&r, 10);
        gas_handle_t h;
        if (k < 6) {
            must_ok(gas_put_nbi(at_right(chunk_off(i)), buf, len), "gas_put_nbi");
        } else if (k < 8) {
            must_ok(gas_put_nb(at_right(chunk_off(i)), buf, len, &h), "gas_put_nb");
            must_ok(gas_wait(h), "gas_wait (put)");
        } else {
            must_ok(gas_put_signal_nbi(at_right(chunk_off(i)), buf, len,
                                       test_at(sig, (uint64_t)right * 8), 1, GAS_SIGNAL_ADD),
                    "gas_put_signal_nbi");
            (*signals)++;
        }
        if (i % 5 == 2 && *ng < MAXGETS) {
            struct pending_get *g = &gets[(*ng)++];
            g->len = (size_t)rng_range(&r, 1, sizeof g->buf);
            g->off = rng_below(&r, GSRC - g->len);
            must_ok(gas_get_nb(g->buf, test_at(gsrc, (uint64_t)right * GSRC + g->off), g->len,
                               &g->h),
                    "gas_get_nb");
        }
    }
}

int main(void)
{
    test_begin("rdma_redo");
    right = (t_rank + 1) % t_nranks;
    left = (t_rank + t_nranks - 1) % t_nranks;
    MUST(gas_malloc((size_t)AREA * (size_t)t_nranks, &data));
    MUST(gas_malloc((size_t)GSRC * (size_t)t_nranks, &gsrc));
    MUST(gas_malloc(8 * (size_t)t_nranks, &sig));
    if (chunk_off(NCHUNK) > AREA)
        test_die("chunks do not fit the area");
    /* what the left neighbour will get from us */
    pattern_fill(gas_ptr_local(test_at(gsrc, (uint64_t)t_rank * GSRC)), GSRC, t_rank, t_rank, 77);
    MUST(gas_barrier());
    uint8_t *buf = test_xmalloc(200000);
    struct pending_get *gets = test_xmalloc(sizeof *gets * MAXGETS);
    int ng = 0;
    uint64_t signals = 0;
    if (t_nranks > 1) {
        pass('A', 1, 0, buf, gets, &ng, &signals);
        must_ok(gas_quiet(), "gas_quiet after pass A");
        MUST(gas_barrier());
        check_area('A', 0);
        MUST(gas_barrier());
        pass('B', 1, 0, buf, gets, &ng, &signals);
        must_ok(gas_fence(), "gas_fence");
        pass('B', 3, 'C', buf, gets, &ng, &signals);
        must_ok(gas_quiet(), "gas_quiet after pass B");
        for (int i = 0; i < ng; i++) {
            struct pending_get *g = &gets[i];
            must_ok(gas_wait(g->h), "gas_wait (get)");
            check_pattern("get of data the target wrote", g->buf, g->len, right, right,
                          77 + g->off, 0);
        }
    }
    /* Our signal count goes to the target, which checks its word against it. */
    uint64_t *counts = test_xmalloc(8 * (size_t)t_nranks), *all = test_xmalloc(8 * (size_t)t_nranks);
    memset(counts, 0, 8 * (size_t)t_nranks);
    counts[t_rank] = signals;
    MUST(gas_allreduce(GAS_TEAM_WORLD, all, counts, (size_t)t_nranks, GAS_UINT64, GAS_OP_SUM));
    MUST(gas_barrier());
    if (t_nranks > 1) {
        check_area('B', 'C');
        uint64_t got = __atomic_load_n((uint64_t *)gas_ptr_local(test_at(sig, (uint64_t)t_rank * 8)),
                                       __ATOMIC_ACQUIRE);
        CHECK(got == all[left], "signal word %" PRIu64 ", rank %d sent %" PRIu64 " signals", got,
              left, all[left]);
    }
    gas_peer_stats_t tot;
    CHECK_OK(gas_peer_stats(t_rank, &tot));
    uint64_t seen[3] = {tot.rdma_errors, tot.rdma_redone, (uint64_t)failures}, sum[3] = {0};
    MUST(gas_allreduce(GAS_TEAM_WORLD, sum, seen, 3, GAS_UINT64, GAS_OP_SUM));
    if (t_rank == 0)
        test_note("job: %" PRIu64 " RDMA errors, %" PRIu64 " requests or signals redone over udp, "
                  "%" PRIu64 " failed calls", sum[0], sum[1], sum[2]);
    const char *inject = getenv("GAS_TEST_RDMA_QP_ERROR"), *acc = getenv("GAS_TEST_RDMA_ACCESS_ERROR");
    const char *mark = getenv("GAS_TEST_RDMA_MARKER_ERROR"), *redo = getenv("TEST_EXPECT_REDO");
    if (t_nranks > 1 && ((inject && atoi(inject) > 0) || (acc && atoi(acc) > 0) ||
                         (mark && atoi(mark) > 0)))
        CHECK(sum[0] > 0, "no RDMA error was counted: the injection did not hit");
    if (t_nranks > 1 && redo && atoi(redo) > 0)
        CHECK(sum[1] > 0, "nothing was redone over udp");
    free(buf);
    free(gets);
    free(counts);
    free(all);
    return test_end();
}
