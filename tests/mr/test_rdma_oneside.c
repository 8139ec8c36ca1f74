/*
 * test_rdma_oneside - DQPLB signalled puts complete while the target never
 * calls the library (GAS_TRANSPORT=rdma, GAS_RDMA_DEVICE=sim, progress
 * thread).
 *
 * A DQPLB signal is applied by the target (its receive CQ, served by its
 * progress thread), unlike the payload, which the initiator's NIC writes.
 * Twice, rank 1 leaves the library after a barrier:
 *  - sleeping: it naps in nanosleep until rank 0 sets a "done" word in its
 *    segment, which rank 0 does only after it saw rank 1's signal word
 *    change through gas_get and after its gas_quiet returned (quiet waits
 *    until the target applied the signals);
 *  - computing: it spins with plain loads on its own signal word until the
 *    signal arrives.
 * Each time rank 0 (and rank 2, if any) sends striped signalled puts to
 * rank 1.  If the signal needed rank 1 to call libgas, neither the get loop
 * nor the spin could end (each has a generous deadline so that a failure is
 * reported, not hung).  Rank 1 then checks every payload byte with plain
 * loads and that it applied the signals itself (rdma_signals counter).
 * Skipped with GAS_PROGRESS=poll (a target outside the library serves
 * nothing, docs/udp.md) and without an RC route.
 */
#include "check.h"

#include <time.h>

#define LEN (200u << 10)   /* several stripes over the queue pairs */
#define ROUNDS 4
#define DEADLINE_S 60.0

static gas_ptr_t data, words;

/* Rank r's payload area on rank 1 (data: 4 * LEN per rank), and rank 1's words. */
static gas_ptr_t area(int r)
{
    return test_at(data, 4 * (uint64_t)LEN + (uint64_t)r * LEN);
}

static uint64_t seed(int ph, int i)
{
    return (uint64_t)(ph * 100 + i) * 4099;
}

static gas_ptr_t word(int i) /* 0: signal, 1: done */
{
    return test_at(words, 16 * 1 + 8 * (uint64_t)i);
}

static void nap(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static uint64_t load(const volatile uint64_t *w)
{
    return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

/* Rank 1: wait outside the library; 0 if the deadline passed. */
static int idle_until(const volatile uint64_t *w, uint64_t want, int sleeping)
{
    double end = test_elapsed() + DEADLINE_S;
    while (load(w) < want) {
        if (test_elapsed() > end)
            return 0;
        if (sleeping)
            nap();
    }
    return 1;
}

/* A sender: ROUNDS striped signalled puts, then watch the signal from outside. */
static void send_rounds(int phase, int senders)
{
    uint8_t *buf = test_xmalloc(LEN);
    for (int i = 1; i <= ROUNDS; i++) {
        pattern_fill(buf, LEN, t_rank, 1, seed(phase, i));
        CHECK_OK(gas_put_signal(area(t_rank), buf, LEN, word(0), 1, GAS_SIGNAL_ADD));
    }
    /* quiet returns only once rank 1 applied our signals: rank 1 is idle */
    CHECK_OK(gas_quiet());
    uint64_t want = (uint64_t)(phase * senders * ROUNDS), got = 0;
    double end = test_elapsed() + DEADLINE_S;
    while (got < want && test_elapsed() < end)
        CHECK_OK(gas_get(&got, word(0), 8));
    CHECK(got >= (uint64_t)(phase - 1) * senders * ROUNDS + ROUNDS,
          "phase %d: rank 1's signal is %" PRIu64 ", at least our %d signals expected", phase, got,
          ROUNDS);
    free(buf);
}

static void phase(int ph, int sleeping, int senders)
{
    MUST(gas_barrier());
    uint64_t *w = gas_ptr_local(word(0));
    if (t_rank == 1) {
        uint64_t want = (uint64_t)(ph * senders * ROUNDS);
        int ok = sleeping ? idle_until(&w[1], (uint64_t)ph, 1) : idle_until(&w[0], want, 0);
        CHECK(ok, "%s: no signal within %.0f s while outside the library",
              sleeping ? "sleeping" : "computing", DEADLINE_S);
        CHECK(load(&w[0]) == want, "signal %" PRIu64 ", expected %" PRIu64, load(&w[0]), want);
        for (int r = 0; r < senders + 1; r++)
            if (r != 1)
                check_pattern("payload seen by the idle rank", gas_ptr_local(area(r)), LEN, r, 1,
                              seed(ph, ROUNDS), 0);
    } else if (t_rank == 0 || t_rank == 2) {
        send_rounds(ph, senders);
        if (t_rank == 0) {
            uint64_t done = (uint64_t)ph;
            CHECK_OK(gas_put(word(1), &done, 8)); /* the NIC writes it: rank 1 may leave */
            CHECK_OK(gas_quiet());
        }
    }
    MUST(gas_barrier());
}

int main(void)
{
    test_begin("rdma_oneside");
    const char *prog = getenv("GAS_PROGRESS");
    gas_peer_stats_t st;
    MUST(gas_malloc_dist((uint64_t)t_nranks, LEN * 4, GAS_DIST_BLOCK, 0, &data));
    MUST(gas_malloc_dist((uint64_t)t_nranks, 16, GAS_DIST_BLOCK, 0, &words));
    /* warm up: every sender upgrades its pair with rank 1, rank 1 its own with rank 0 */
    uint64_t zero = 0, rc = 0, all_rc = 0;
    int peer = t_rank == 1 ? 0 : 1;
    if (t_nranks >= 2) {
        MUST(gas_put(t_rank == 1 ? test_at(data, 3 * (uint64_t)LEN) : area(t_rank), &zero, 8));
        MUST(gas_quiet());
        rc = gas_peer_stats(peer, &st) == GAS_OK && strcmp(st.route, "rc") == 0;
        MUST(gas_allreduce(GAS_TEAM_WORLD, &all_rc, &rc, 1, GAS_UINT64, GAS_OP_MIN));
    }
    if ((prog && strcmp(prog, "poll") == 0) || t_nranks < 2 || !all_rc) {
        if (t_rank == 0)
            printf("skipped: needs 2+ ranks on RC (GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim) and "
                   "a progress thread\n");
        gas_finalize();
        return 77;
    }
    int senders = t_nranks >= 3 ? 2 : 1;
    phase(1, 1, senders);
    phase(2, 0, senders);
    if (t_rank == 1) {
        gas_peer_stats_t s;
        CHECK_OK(gas_peer_stats(0, &s));
        CHECK(s.rdma_signals >= 2 * ROUNDS, "rank 1 applied %" PRIu64 " DQPLB signals of rank 0",
              s.rdma_signals);
        test_note("applied %" PRIu64 " DQPLB signals of rank 0 while outside the library",
                  s.rdma_signals);
    }
    return test_end();
}
