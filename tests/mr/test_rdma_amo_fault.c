/*
 * test_rdma_amo_fault - an RDMA atomic whose work request fails
 * (GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_RDMA_ATOMICS=nic with
 * GAS_TEST_RDMA_ACCESS_ERROR or GAS_TEST_RDMA_QP_ERROR; GAS_RDMA_FALLBACK=y).
 *
 * Every rank issues fetch-adds of 1 to its own word at its right neighbour.
 * The failed one returns GAS_ERR_PEER (it may or may not have run: a remote
 * access error on a pointer the origin checked is a failure of the path, not
 * GAS_ERR_BOUNDS), and every other call succeeds (later ones over udp), with
 * the values fetched increasing.  After gas_quiet (which succeeds) and a
 * barrier, the target's word is the number of calls that succeeded, or one
 * more (the failed one ran).  Job-wide some call must have failed: the
 * injection must hit an atomic.
 */
#include "check.h"

#define CALLS 200

int main(void)
{
    test_begin("rdma_amo_fault");
    gas_ptr_t arr;
    MUST(gas_malloc(8 * (size_t)t_nranks * (size_t)t_nranks, &arr));
    gas_layout_t l = test_layout_of(arr);
    if (!CHECK(l.local_bytes >= 8 * (uint64_t)t_nranks, "%" PRIu64 " bytes per rank",
               l.local_bytes))
        return test_end();
    volatile uint64_t *mine = gas_ptr_local(gas_ptr_make(t_rank, l.local_offset));
    for (int r = 0; r < t_nranks; r++)
        mine[r] = 0;
    MUST(gas_barrier());
    int right = (t_rank + 1) % t_nranks, left = (t_rank + t_nranks - 1) % t_nranks;
    gas_ptr_t word = gas_ptr_make(right, l.local_offset + 8 * (uint64_t)t_rank);
    uint64_t counts[2] = {0, 0}; /* calls that succeeded, that failed */
    uint64_t last = 0;
    for (int i = 0; i < CALLS && t_nranks > 1; i++) {
        uint64_t old = 0;
        gas_status_t st = gas_amo(GAS_AMO_FETCH_ADD, 8, word, 1, 0, &old);
        if (st == GAS_OK) {
            CHECK(counts[0] == 0 || old > last, "call %d fetched %" PRIu64 " after %" PRIu64, i,
                  old, last);
            last = old;
            counts[0]++;
        } else {
            CHECK(st == GAS_ERR_PEER, "call %d: %s (%d), want GAS_ERR_PEER: %s", i,
                  gas_strerror(st), (int)st, gas_last_error());
            counts[1]++;
        }
    }
    CHECK(counts[1] <= 1, "%" PRIu64 " calls failed: one injected error may fail one",
          counts[1]);
    CHECK_OK(gas_quiet());
    uint64_t *all = test_xmalloc(2 * (size_t)t_nranks * sizeof *all);
    uint64_t *sent = test_xmalloc(2 * (size_t)t_nranks * sizeof *sent);
    memset(sent, 0, 2 * (size_t)t_nranks * sizeof *sent);
    sent[2 * t_rank] = counts[0];
    sent[2 * t_rank + 1] = counts[1];
    MUST(gas_allreduce(GAS_TEAM_WORLD, all, sent, 2 * (size_t)t_nranks, GAS_UINT64, GAS_OP_SUM));
    MUST(gas_barrier());
    if (t_nranks > 1) {
        uint64_t got = mine[left], ok = all[2 * left], failed = all[2 * left + 1];
        CHECK(got >= ok && got <= ok + failed,
              "rank %d: %" PRIu64 " fetch-adds succeeded, %" PRIu64 " failed, the word is %" PRIu64,
              left, ok, failed, got);
        uint64_t failed_job = 0;
        for (int r = 0; r < t_nranks; r++)
            failed_job += all[2 * r + 1];
        if (t_rank == 0)
            test_note("job: %" PRIu64 " atomics failed", failed_job);
        CHECK(failed_job > 0, "no atomic failed: the injection did not hit one");
    }
    free(all);
    free(sent);
    return test_end();
}
