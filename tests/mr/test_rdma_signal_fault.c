/*
 * test_rdma_signal_fault - a put-with-signal whose signal fetch-add fails
 * on the NIC names the user's call (GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim
 * GAS_RDMA_ATOMICS=nic GAS_RDMA_DQPLB=n with GAS_TEST_RDMA_ACCESS_ERROR=N
 * hitting a signal's fetch-add).
 *
 * Without DQPLB a signalled put to an RC peer writes its payload, waits for
 * it, then adds the signal with a NIC fetch-add (docs/rdma.md).  Every rank
 * does gas_put_signal (SIGNAL_ADD) to its right neighbour; the one whose
 * fetch-add fails returns GAS_ERR_PEER, and its message (gas_last_error)
 * must name gas_put_signal, the call the program made, not the transport's
 * internal "atomic" (before, it read "rank r: atomic: rank n: an RDMA
 * atomic ... failed").  Every other call succeeds.  Job-wide some call must
 * have failed: the injection must hit a signal.
 *
 * Argument "payload" (the default): 8-byte payloads, so the work requests
 * alternate payload write, signal fetch-add (N must be one of the latter:
 * the manifest picks it per rank count).  "empty": no payload, so every
 * work request of the loop is a signal's fetch-add (any N inside the loop
 * hits one); gas_put_signal then sends the signal alone, as an atomic.
 */
#include "check.h"

#define CALLS 400   /* many: under load the first ones may go over udp while RC connects, and the Nth RC work request must still fall in the loop */

int main(int argc, char **argv)
{
    test_begin("rdma_signal_fault");
    size_t len = argc > 1 && strcmp(argv[1], "empty") == 0 ? 0 : 8;
    gas_ptr_t arr;
    MUST(gas_malloc(64 * (size_t)t_nranks, &arr));
    gas_layout_t l = test_layout_of(arr);
    volatile uint64_t *mine = gas_ptr_local(gas_ptr_make(t_rank, l.local_offset));
    mine[0] = 0;
    MUST(gas_barrier());
    int right = (t_rank + 1) % t_nranks;
    gas_ptr_t data = gas_ptr_make(right, l.local_offset + 8), sig = gas_ptr_make(right, l.local_offset);
    uint64_t failed = 0;
    for (int i = 0; i < CALLS && t_nranks > 1; i++) {
        uint64_t v = (uint64_t)i;
        gas_status_t st = gas_put_signal(data, &v, len, sig, 1, GAS_SIGNAL_ADD);
        if (st == GAS_OK)
            continue;
        failed++;
        const char *m = gas_last_error();
        CHECK(st == GAS_ERR_PEER, "call %d: %s (%d), want GAS_ERR_PEER: %s", i, gas_strerror(st),
              (int)st, m);
        CHECK(strstr(m, ": gas_put_signal: ") != NULL && strstr(m, ": atomic: ") == NULL,
              "call %d failed with a message that does not name gas_put_signal: \"%s\"", i, m);
    }
    CHECK(failed <= 1, "%" PRIu64 " calls failed: one injected error may fail one", failed);
    gas_status_t q = gas_quiet();
    CHECK(q == GAS_OK, "gas_quiet after the calls: %s (%s)", gas_strerror(q), gas_last_error());
    uint64_t job = 0;
    MUST(gas_allreduce(GAS_TEAM_WORLD, &job, &failed, 1, GAS_UINT64, GAS_OP_SUM));
    if (t_rank == 0)
        test_note("job: %" PRIu64 " signalled puts failed", job);
    if (t_nranks > 1)
        CHECK(job > 0, "no signalled put failed: the injection did not hit a signal's fetch-add");
    MUST(gas_barrier());
    return test_end();
}
