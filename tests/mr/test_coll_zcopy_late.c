/*
 * test_coll_zcopy_late - a collective that fails writes nothing into its
 * destination after it returned, also where a sender had begun putting a
 * message there directly (zero-copy).
 *
 * Root 0 broadcasts MB MiB (binomial: straight into rank 1's destination
 * in the segment, one large put), while rank 2 makes the same broadcast
 * with itself as the root a few milliseconds later: a mismatch that rank 1
 * finds from rank 2's chunk within microseconds (gas_broadcast_nb and
 * gas_test in a loop, odd iterations) or milliseconds (gas_broadcast,
 * with a short GAS_WAIT_SLICE), while root 0's put into its buffer is
 * under way.  Rank 1's call fails (GAS_ERR_INVALID); right after
 * it returned, rank 1 refills its buffer with 0x11; after a barrier (every
 * put of the root is complete there) not one byte may differ.  A call that
 * completed (the put was over first) must hold the root's bytes.  Several
 * iterations with rank 2 later each time; at least one must have failed on
 * rank 1 (else the test says it proved nothing: it fails); each iteration's
 * note says whether the root's put had ended in the destination by the
 * return (the claimed entry's wait) or the call failed before it.
 *
 * The build before the fix failed it (rank 1's failure took the entry back
 * with one store that a sender which had read it never saw: tens of MB
 * landed after the return).  Run with 3 ranks, GAS_COLL_BROADCAST=binomial,
 * GAS_WAIT_SLICE=20us, GAS_ERRORS=return; argument: MiB per rank (default 96).
 */
#include "check.h"

#include <string.h>
#include <unistd.h>

enum { ITERS = 8 };
static const unsigned delay_us[ITERS] = {1000, 1000, 3000, 3000, 6000, 6000, 10000, 10000};

/* Rank 1's broadcast: blocking, or (odd iterations) _nb completed by gas_test in a loop. */
static gas_status_t bcast(int it, void *b, size_t bytes, int root)
{
    if (it % 2 == 0)
        return gas_broadcast(GAS_TEAM_WORLD, b, bytes, GAS_UINT8, root);
    gas_handle_t h;
    gas_status_t st = gas_broadcast_nb(GAS_TEAM_WORLD, b, bytes, GAS_UINT8, root, &h);
    int done = h == GAS_HANDLE_NULL;
    while (st == GAS_OK && !done)
        st = gas_test(h, &done);
    return st;
}

/* Bytes of b (n) that are not v; the first one's index in *first_p. */
static size_t count_not(const unsigned char *b, size_t n, unsigned char v, size_t *first_p)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v && bad++ == 0)
            *first_p = i;
    return bad;
}

int main(int argc, char **argv)
{
    test_begin("coll_zcopy_late");
    size_t bytes = (size_t)(argc > 1 ? strtoul(argv[1], NULL, 0) : 96) << 20;
    int me = gas_rank(), P = gas_nranks();
    if (P != 3) {
        if (me == 0)
            test_note("needs exactly 3 ranks: skipped");
        gas_finalize();
        return 77;
    }
    gas_ptr_t arr, mine;
    MUST(gas_malloc(bytes * (size_t)P, &arr));
    MUST(gas_ptr_add(arr, (uint64_t)me * bytes, &mine));
    unsigned char *b = gas_ptr_local(mine);
    if (b == NULL)
        test_die("gas_ptr_local of this rank's own block");
    int failed_mid = 0;
    for (int it = 0; it < ITERS; it++) {
        unsigned char v = (unsigned char)(0xA0 + it);
        memset(b, me == 0 ? v : me == 2 ? 0xC0 : 0x00, bytes);
        MUST(gas_barrier());
        if (me == 2)
            usleep(delay_us[it]);
        gas_status_t st = me == 1 ? bcast(it, b, bytes, 0)
                                  : gas_broadcast(GAS_TEAM_WORLD, b, bytes, GAS_UINT8,
                                                  me == 2 ? 2 : 0);
        /* the root's last byte in place at the return: it had claimed the entry, and the
         * failed call waited for its put to end (else the mailbox path, or a revoke first) */
        int landed = me == 1 && b[bytes - 1] == v;
        if (me == 1 && st != GAS_OK)
            memset(b, 0x11, bytes);   /* reuse the buffer at once: the call returned */
        CHECK(st == GAS_OK || st == GAS_ERR_INVALID, "iteration %d: broadcast returned %d (%s)",
              it, (int)st, gas_last_error());
        MUST(gas_barrier());   /* every put issued before is complete */
        /* every pair's channel takes its next message: the failed calls' chunks left in the
         * mailboxes are thrown away (else rank 2's next chunks to rank 1 wait for room) */
        uint64_t out[3] = {1, 2, 3}, in[3];
        CHECK_OK(gas_alltoall(GAS_TEAM_WORLD, in, out, 1, GAS_UINT64));
        if (me != 1)
            continue;
        size_t first = 0, bad;
        if (st != GAS_OK) {
            bad = count_not(b, bytes, 0x11, &first);
            CHECK(bad == 0, "iteration %d: %zu bytes of the failed broadcast's destination were "
                  "written after it returned (the first at %zu: 0x%02x)", it, bad, first,
                  bad ? b[first] : 0);
            failed_mid++;
        } else {
            bad = count_not(b, bytes, v, &first);
            CHECK(bad == 0, "iteration %d: the broadcast returned GAS_OK but %zu bytes are not "
                  "the root's (the first at %zu)", it, bad, first);
        }
        test_note("iteration %d (%s, rank 2 %u us late): %s", it,
                  it % 2 ? "gas_broadcast_nb and gas_test" : "gas_broadcast", delay_us[it],
                  st == GAS_OK ? "completed"
                  : bad        ? "failed, and data landed after it returned"
                  : landed     ? "failed after the root's put had ended, nothing landed after"
                               : "failed before the root's put, nothing landed after");
    }
    if (me == 1)
        CHECK(failed_mid > 0, "rank 1's broadcast never failed: the test proved nothing (raise "
              "the size)");
    MUST(gas_barrier());
    gas_free(arr);
    return test_end();
}
