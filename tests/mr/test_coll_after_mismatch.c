/*
 * test_coll_after_mismatch - after a collective whose members chose
 * different algorithms (a user error: gas_coll_set_algorithm differs per
 * rank), the team's next, correct collectives give the right results and
 * write nothing into the failed call's destination.
 *
 * A mismatched call's members may count different numbers of messages per
 * pair (ring and recursive doubling send different ones), and zero-copy
 * entries are keyed by message: a later call's sender once took an entry
 * the failed call had posted, put its data into that call's buffer, and the
 * receiver failed ("rank 0 sent 65536 bytes where this rank expects 65536").
 *
 * Rounds over sizes of 64 KiB, 1 MiB and an odd count, each with another
 * rank differing: (1) allreduce of doubles, ring on the differing rank and
 * recursive doubling on the others (or, every other round, allgather with
 * ring against bruck), from and into the segment or (rounds 2 and 3 of
 * every 4) private memory, where the algorithms use segment temporaries:
 * it may fail (GAS_ERR_INVALID) or succeed with the right result; (2) back
 * to "auto", and at once a broadcast into private memory (from the
 * differing rank, or the next one), one into the segment and an allreduce
 * into the segment, all of values above 1e6, which no mismatched call
 * makes: each must return GAS_OK with the right values; (3) after a
 * barrier, no such value may be in the failed call's destination.  The
 * build before the fix fails it at 4 ranks.  GAS_ERRORS=return.
 */
#include "check.h"

#include <string.h>

enum { ROUNDS = 12 };
static const size_t counts[3] = {8192, 131072, 8192 + 13};   /* doubles */
#define MAXCOUNT 131072

static int me, P;
static gas_ptr_t arr;   /* per rank: three areas of MAXCOUNT * P doubles */

static double *area(int which)
{
    gas_ptr_t p = GAS_NULL;
    uint64_t per = (uint64_t)MAXCOUNT * (uint64_t)P * sizeof(double);
    if (gas_ptr_add(arr, (uint64_t)me * 3 * per + (uint64_t)which * per, &p) != GAS_OK)
        test_die("gas_ptr_add");
    double *l = gas_ptr_local(p);
    if (l == NULL)
        test_die("gas_ptr_local of this rank's own area");
    return l;
}

/* Step (1): the mismatched call of round r on count n, into dst; its status. */
static gas_status_t mismatched(int r, size_t n, int odd, double *dst, double *src)
{
    int allgather = r % 2;   /* (src and dst: the segment's or private, as the caller chose) */
    gas_coll_t c = allgather ? GAS_COLL_ALLGATHER : GAS_COLL_ALLREDUCE;
    const char *alg = me == odd ? "ring" : allgather ? "bruck" : "recursive_doubling";
    MUST(gas_coll_set_algorithm(c, alg));
    for (size_t i = 0; i < n; i++)
        src[i] = me + 1 + (double)(i % 7);
    size_t elems = allgather ? n * (size_t)P : n;
    for (size_t i = 0; i < elems; i++)
        dst[i] = -1;
    gas_status_t st = allgather ? gas_allgather(GAS_TEAM_WORLD, dst, src, n, GAS_DOUBLE)
                                : gas_allreduce(GAS_TEAM_WORLD, dst, src, n, GAS_DOUBLE,
                                                GAS_OP_SUM);
    CHECK(st == GAS_OK || st == GAS_ERR_INVALID, "round %d: mismatched %s returned %d (%s)", r,
          allgather ? "allgather" : "allreduce", st, gas_last_error());
    if (st == GAS_OK)   /* not detected: then the result must be right */
        for (size_t i = 0; i < elems; i++) {
            double want = allgather ? (double)(i / n) + 1 + (double)(i % n % 7)
                                    : (double)P * (P + 1) / 2 + (double)P * (double)(i % 7);
            if (!CHECK(dst[i] == want, "round %d: mismatched call returned GAS_OK but [%zu] = "
                       "%g, want %g", r, i, dst[i], want))
                break;
        }
    MUST(gas_coll_set_algorithm(c, "auto"));
    return st;
}

/* Check n doubles at got against base + i (what) in round r; 1 when all are right. */
static int check_seq(int r, const char *what, const double *got, size_t n, double base)
{
    for (size_t i = 0; i < n; i++)
        if (!CHECK(got[i] == base + (double)i, "round %d: %s[%zu] = %g, want %g", r, what, i,
                   got[i], base + (double)i))
            return 0;
    return 1;
}

int main(void)
{
    test_begin("coll_after_mismatch");
    me = t_rank;
    P = t_nranks;
    if (P < 2) {
        test_note("needs 2 or more ranks");
        return test_end();
    }
    MUST(gas_malloc((uint64_t)MAXCOUNT * (uint64_t)P * sizeof(double) * 3 * (uint64_t)P, &arr));
    double *failed_dst = area(0), *seg_dst = area(1), *src = area(2);
    double *priv = test_xmalloc(MAXCOUNT * sizeof(double));
    double *priv_dst = test_xmalloc((size_t)MAXCOUNT * (size_t)P * sizeof(double));
    double *priv_src = test_xmalloc(MAXCOUNT * sizeof(double));
    int failures = 0;
    for (int r = 0; r < ROUNDS; r++) {
        size_t n = counts[r % 3];
        int odd = r % P, root = r % 2 ? odd : (odd + 1) % P;
        size_t failed_elems = r % 2 ? n * (size_t)P : n;
        int private = r % 4 >= 2;
        double *fdst = private ? priv_dst : failed_dst;
        if (mismatched(r, n, odd, fdst, private ? priv_src : src) != GAS_OK)
            failures++;
        /* (2) the next calls, at once: values of 1e6 and more, which no mismatched call makes */
        double base = 1e6 * (r + 1);
        for (size_t i = 0; i < n; i++)
            priv[i] = me == root ? base + 0.5 + (double)i : -1;
        if (CHECK_OK(gas_broadcast(GAS_TEAM_WORLD, priv, n, GAS_DOUBLE, root)))
            check_seq(r, "broadcast into private memory", priv, n, base + 0.5);
        for (size_t i = 0; i < n; i++)
            seg_dst[i] = me == root ? base + (double)i : -1;
        if (CHECK_OK(gas_broadcast(GAS_TEAM_WORLD, seg_dst, n, GAS_DOUBLE, root)))
            check_seq(r, "broadcast into the segment", seg_dst, n, base);
        for (size_t i = 0; i < n; i++)
            src[i] = base + (double)i + me;
        if (CHECK_OK(gas_allreduce(GAS_TEAM_WORLD, seg_dst, src, n, GAS_DOUBLE, GAS_OP_SUM)))
            for (size_t i = 0; i < n; i++) {
                double want = (double)P * (base + (double)i) + (double)P * (P - 1) / 2;
                if (!CHECK(seg_dst[i] == want, "round %d: allreduce [%zu] = %g, want %g", r, i,
                           seg_dst[i], want))
                    break;
            }
        /* (3) every member is past those calls: none of their data is in the failed call's
         * destination (which holds -1 or what the failed call itself wrote there) */
        MUST(gas_team_barrier(GAS_TEAM_WORLD));
        for (size_t i = 0; i < failed_elems; i++)
            if (!CHECK(fdst[i] < 1e5, "round %d: the failed call's destination [%zu] = %g "
                       "after the later calls (a later call's data went there)", r, i, fdst[i]))
                break;
    }
    test_note("mismatched calls that failed here: %d of %d", failures, ROUNDS);
    free(priv);
    free(priv_dst);
    free(priv_src);
    MUST(gas_free(arr));
    return test_end();
}
