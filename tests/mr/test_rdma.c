/*
 * test_rdma.c - the rdma transport's own behaviour (GAS_TRANSPORT=rdma,
 * GAS_RDMA_DEVICE=sim): every rank streams signalled puts of several sizes
 * to its right neighbour, which waits for the signal with gas_wait_until
 * and checks the data; then the route and upgrade counters are checked
 * against TEST_EXPECT_ROUTE (rc, fallback, or mixed: ranks listed in
 * GAS_TEST_RDMA_RANKS reach each other over RC, every other pair stays on
 * udp).  Injected QP errors (GAS_TEST_RDMA_QP_ERROR/ACCESS_ERROR) are
 * logged by the rank that saw them, and the pair falls back to udp with
 * what failed redone (GAS_RDMA_FALLBACK=y): no call may fail, every payload
 * and signal must arrive, some rank must count an RDMA error and some pair
 * must be on fallback.  With GAS_TEST_RDMA_DELAY the pieces of a DQPLB
 * signalled put complete out of order across QPs and the target must still
 * see the signal only after the whole payload.
 */
#include "check.h"

#define ITERS 40
#define MAXLEN (300u << 10)

static int listed(const char *list, int r)
{
    if (list == NULL || *list == 0)
        return 1;
    for (const char *s = list; *s;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            return 0;
        if (v == r)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int main(void)
{
    test_begin("rdma");
    const char *expect = getenv("TEST_EXPECT_ROUTE");
    expect = expect ? expect : "rc";
    int right = (t_rank + 1) % t_nranks, left = (t_rank + t_nranks - 1) % t_nranks;
    gas_ptr_t data, sig;
    MUST(gas_malloc((size_t)MAXLEN * (size_t)t_nranks, &data));
    MUST(gas_malloc(8 * (size_t)t_nranks, &sig));
    uint64_t *my_sig = gas_ptr_local(test_at(sig, (uint64_t)t_rank * 8));
    unsigned char *mine = gas_ptr_local(test_at(data, (uint64_t)t_rank * MAXLEN));
    unsigned char *buf = test_xmalloc(MAXLEN);
    MUST(gas_barrier());
    long errors = 0;
    for (int it = 1; it <= ITERS && t_nranks > 1; it++) {
        size_t len = (size_t)1 << (it % 19);
        if (len > MAXLEN)
            len = MAXLEN;
        pattern_fill(buf, len, t_rank, right, (uint64_t)it * 7);
        for (int tries = 0;; tries++) {
            gas_status_t st = gas_put_signal(test_at(data, (uint64_t)right * MAXLEN), buf, len,
                                             test_at(sig, (uint64_t)right * 8), 1, GAS_SIGNAL_ADD);
            if (st == GAS_OK)
                break;
            errors++;
            test_note("put_signal to rank %d failed (%s): retrying", right, gas_strerror(st));
            gas_status_t q = gas_quiet(); /* may raise the same failure once */
            (void)q;
            if (!CHECK(tries < 3, "put_signal keeps failing"))
                break;
        }
        CHECK_OK(gas_wait_until_u64(my_sig, GAS_CMP_GE, (uint64_t)it));
        check_pattern_at(__FILE__, __LINE__, "signalled payload", mine, len, left, t_rank,
                         (uint64_t)it * 7, 0);
        /* the buffer is reused next round; a barrier starts with quiet, which
         * raises an injected failure once (then nothing else was done) */
        int tries = 0;
        while (gas_barrier() != GAS_OK)
            if (!CHECK(++tries <= t_nranks, "gas_barrier keeps failing") || ++errors < 0)
                break;
    }
    gas_status_t q = gas_quiet();
    if (q != GAS_OK)
        errors++;
    gas_peer_stats_t st, tot;
    if (t_nranks > 1) {
        CHECK_OK(gas_peer_stats(right, &st));
        CHECK_OK(gas_peer_stats(t_rank, &tot));
        test_note("route to rank %d: %s %s; upgraded peers %u, %llu work requests, %ld errors seen",
                  right, st.transport, st.route, tot.upgraded_peers,
                  (unsigned long long)tot.rdma_work_requests, errors);
        if (strcmp(expect, "rc") == 0) {
            CHECK(strcmp(st.route, "rc") == 0, "route to rank %d is %s, not rc", right, st.route);
            CHECK(tot.upgraded_peers >= 1, "no peer was upgraded");
            CHECK(errors == 0, "%ld failures without injected faults", errors);
        } else if (strcmp(expect, "fallback") == 0) {
            CHECK(errors == 0, "%ld failures reached the program despite the fallback", errors);
            gas_peer_stats_t ls;
            CHECK_OK(gas_peer_stats(left, &ls));
            uint64_t seen[2] = {tot.rdma_errors, strcmp(st.route, "fallback") == 0 ||
                                                     strcmp(ls.route, "fallback") == 0};
            uint64_t sum[2] = {0, 0};
            CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, sum, seen, 2, GAS_UINT64, GAS_OP_SUM));
            CHECK(sum[0] > 0, "no rank counted an RDMA error");
            CHECK(sum[1] > 0, "no pair fell back to udp");
        } else { /* mixed */
            const char *ranks = getenv("GAS_TEST_RDMA_RANKS");
            int both = listed(ranks, t_rank) && listed(ranks, right);
            CHECK(both ? strcmp(st.route, "rc") == 0 : strcmp(st.transport, "udp") == 0 ||
                                                           strcmp(st.route, "udp") == 0,
                  "rank %d -> %d: transport %s route %s (rdma on both: %d)", t_rank, right,
                  st.transport, st.route, both);
        }
    }
    free(buf);
    MUST(gas_barrier());
    return test_end();
}
