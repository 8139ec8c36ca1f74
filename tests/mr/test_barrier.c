/*
 * test_barrier - barrier stress: nobody leaves early, and a barrier implies quiet.
 *
 * Round k (default 2000 rounds; GAS_TEST_ROUNDS overrides): every rank adds 1
 * to counter[k % 2] on rank 0 (a blocking atomic ADD in half the rounds, an
 * nbi one that nothing but the barrier completes in the others), puts the
 * stamp k + 1 into slot[k % 2] of the next rank with gas_put_nbi, and every
 * 16th round also a 4 KiB nbi payload; then gas_barrier().  After barrier k
 * every rank must find counter[k % 2] == (k / 2 + 1) * nranks (fewer means
 * somebody left the barrier before everybody had entered it, or the barrier
 * did not complete the nbi ops), its own slot[k % 2] == k + 1 and the payload
 * intact.  Two alternating counters let a fast rank run ahead by one round
 * without disturbing the check of a slow one.
 */
#include "check.h"

enum { PAY = 4096, PARTB = 64 + 2 * PAY };
enum { O_CNT = 0, O_SLOT = 16, O_PAY = 64 };

static gas_ptr_t arr;
static gas_layout_t lay;

static gas_ptr_t at_rank(int r, uint64_t off)
{
    return gas_layout_ptr(&lay, (uint64_t)r * PARTB + off);
}

int main(void)
{
    test_begin("barrier");
    int n = t_nranks, me = t_rank, next = (me + 1) % n, prev = (me + n - 1) % n;
    long rounds = 2000;
    const char *s = getenv("GAS_TEST_ROUNDS");
    if (s && *s)
        rounds = strtol(s, NULL, 10);
    MUST(gas_malloc((size_t)n * PARTB, &arr));
    lay = test_layout_of(arr);
    if (!CHECK(lay.block == PARTB, "gas_malloc(%d): block %" PRIu64 ", expected %d", n * PARTB, lay.block, PARTB))
        test_die("unexpected layout");
    uint8_t *mine = gas_ptr_local(at_rank(me, 0));
    if (!mine)
        test_die("gas_ptr_local of my own part is NULL");
    memset(mine, 0, PARTB);
    MUST(gas_barrier());

    uint8_t *pay = test_xmalloc(PAY);
    long bad_rounds = 0;
    for (long k = 0; k < rounds; k++) {
        int p = (int)(k % 2);
        uint64_t stamp = (uint64_t)k + 1;
        gas_ptr_t cnt = at_rank(0, O_CNT + 8 * (uint64_t)p);
        if (k % 4 < 2)
            CHECK_OK(gas_atomic_add_u64(cnt, 1));
        else
            CHECK_OK(gas_amo_nbi(GAS_AMO_ADD, 8, cnt, 1, 0, NULL));
        CHECK_OK(gas_put_nbi(at_rank(next, O_SLOT + 8 * (uint64_t)p), &stamp, 8));
        if (k % 16 == 0) {
            pattern_fill(pay, PAY, me, (int)k, 0);
            CHECK_OK(gas_put_nbi(at_rank(next, O_PAY + (uint64_t)p * PAY), pay, PAY));
            memset(pay, 0, PAY); /* nbi sources may be reused at return */
        }
        gas_status_t st = gas_barrier();
        if (st != GAS_OK) {
            FAIL("barrier %ld returned %d (%s): %s", k, (int)st, gas_strerror(st), gas_last_error());
            test_die("barrier failed");
        }
        uint64_t c = 0, want = (uint64_t)(k / 2 + 1) * (uint64_t)n, got_stamp;
        CHECK_OK(gas_atomic_fetch_u64(cnt, &c));
        got_stamp = __atomic_load_n((uint64_t *)(mine + O_SLOT + 8 * p), __ATOMIC_ACQUIRE);
        int ok = 1;
        ok &= CHECK(c == want, "after barrier %ld: counter[%d] on rank 0 is %" PRIu64 ", expected %" PRIu64
                    " (a rank left early or an %s ADD was not completed by the barrier)", k, p, c, want,
                    k % 4 < 2 ? "atomic" : "nbi");
        ok &= CHECK(got_stamp == stamp, "after barrier %ld: the stamp rank %d put with gas_put_nbi is %" PRIu64
                    ", expected %" PRIu64, k, prev, got_stamp, stamp);
        if (k % 16 == 0) {
            char what[128];
            snprintf(what, sizeof what, "after barrier %ld: rank %d's 4 KiB gas_put_nbi payload", k, prev);
            ok &= check_pattern(what, mine + O_PAY + (size_t)p * PAY, PAY, prev, (int)k, 0, 0) == 0;
        }
        if (!ok && ++bad_rounds >= 10)
            test_die("too many failed rounds");
    }
    if (me == 0)
        test_note("%ld barriers in %.2f s", rounds, test_elapsed());
    free(pay);
    CHECK_OK(gas_free(arr));
    return test_end();
}
