/*
 * test_random_access - a GUPS-like mixed workload, checked against local shadows.
 *
 * Every rank does 20000 random operations (GAS_TEST_OPS overrides): puts of
 * 1..4096 B (gas_put, gas_put_nbi, gas_put_nb + gas_wait) at random offsets
 * of a region that it alone writes (regions straddle owners), gets from that
 * region after a gas_quiet (gas_get, gas_get_nb, gas_get_nbi + gas_quiet)
 * checked against its shadow copy, unchecked gets from other ranks' regions
 * (traffic), and atomic adds of random amounts to counters spread over every
 * owner (fetching ones must never go below what this rank already knows the
 * counter to have reached).  At the end every writer reads its region back
 * and compares it with its shadow byte by byte, publishes a checksum of each
 * 4 KiB block of the shadow, and every rank reads every region and checks it
 * against those checksums; the owner of each counter checks it against the
 * sum of every rank's published contributions.
 */
#include "check.h"

enum { REGION = 256 * 1024, CSB = 4096, NCS = REGION / CSB, MAXLEN = 4096 };

static gas_ptr_t data, counters, contrib, sums;
static int me, n, nctr;

static uint64_t checksum(const uint8_t *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int main(void)
{
    test_begin("random_access");
    me = t_rank;
    n = t_nranks;
    nctr = 4 * n;
    long ops = 20000;
    const char *s = getenv("GAS_TEST_OPS");
    if (s && *s)
        ops = strtol(s, NULL, 10);

    uint64_t nbytes = (uint64_t)n * REGION + REGION / 2;  /* so regions straddle owners */
    MUST(gas_malloc(nbytes, &data));
    MUST(gas_malloc((size_t)nctr * 8, &counters));
    MUST(gas_malloc((size_t)n * (size_t)nctr * 8, &contrib));
    MUST(gas_malloc((size_t)n * NCS * 8, &sums));
    gas_layout_t dl = test_layout_of(data), cl = test_layout_of(counters);

    uint8_t *shadow = test_xmalloc(REGION), *buf = test_xmalloc(REGION + 64), *back = test_xmalloc(MAXLEN + 64);
    uint64_t *mine_contrib = test_xmalloc(sizeof(uint64_t) * (size_t)nctr);
    uint64_t *lower = test_xmalloc(sizeof(uint64_t) * (size_t)nctr);
    memset(mine_contrib, 0, sizeof(uint64_t) * (size_t)nctr);
    memset(lower, 0, sizeof(uint64_t) * (size_t)nctr);

    /* start: my region holds a known pattern, the counters are zero */
    uint64_t base = (uint64_t)me * REGION;
    pattern_fill(shadow, REGION, me, -1, 0);
    MUST(gas_put(test_at(data, base), shadow, REGION));
    uint64_t zero = 0;
    for (int c = me; c < nctr; c += n)
        MUST(gas_put(test_at(counters, (uint64_t)c * 8), &zero, 8));
    MUST(gas_barrier());

    test_rng_t rng = rng_make(me, 11);
    long nput = 0, nget = 0, namo = 0, spanning = 0;
    char what[200];
    for (long k = 0; k < ops; k++) {
        unsigned kind = (unsigned)rng_below(&rng, 100);
        if (kind < 35) { /* put into my region */
            size_t len = (size_t)rng_range(&rng, 1, MAXLEN);
            uint64_t off = rng_below(&rng, REGION - len + 1);
            gas_ptr_t dst = test_at(data, base + off);
            pattern_fill(buf, len, me, (int)k, 0);
            memcpy(shadow + off, buf, len);
            gas_handle_t h = GAS_HANDLE_NULL;
            switch (k % 3) {
            case 0: CHECK_OK(gas_put(dst, buf, len)); break;
            case 1: CHECK_OK(gas_put_nbi(dst, buf, len)); break;
            default: CHECK_OK(gas_put_nb(dst, buf, len, &h)); CHECK_OK(gas_wait(h)); break;
            }
            spanning += (base + off) / dl.block != (base + off + len - 1) / dl.block;
            nput++;
        } else if (kind < 65) { /* read my region back */
            size_t len = (size_t)rng_range(&rng, 1, MAXLEN);
            uint64_t off = rng_below(&rng, REGION - len + 1);
            gas_ptr_t src = test_at(data, base + off);
            gas_handle_t h = GAS_HANDLE_NULL;
            CHECK_OK(gas_quiet());
            memset(back, 0xcc, len + 1);
            switch (k % 3) {
            case 0: CHECK_OK(gas_get(back, src, len)); break;
            case 1: CHECK_OK(gas_get_nb(back, src, len, &h)); CHECK_OK(gas_wait(h)); break;
            default: CHECK_OK(gas_get_nbi(back, src, len)); CHECK_OK(gas_quiet()); break;
            }
            snprintf(what, sizeof what, "op %ld: get of %zu B of my region at array offset %" PRIu64, k, len,
                     base + off);
            if (check_bytes(what, back, shadow + off, len, base + off))
                test_note("(the region is written by this rank only; the get followed gas_quiet)");
            CHECK(back[len] == 0xcc, "%s: wrote past its destination", what);
            nget++;
        } else if (kind < 70) { /* traffic: read somebody else's region, unchecked */
            size_t len = (size_t)rng_range(&rng, 1, MAXLEN);
            uint64_t off = rng_below(&rng, nbytes - len + 1);
            CHECK_OK(gas_get(back, test_at(data, off), len));
        } else { /* counters */
            int c = (int)rng_below(&rng, (uint64_t)nctr);
            uint64_t v = rng_range(&rng, 1, 1000), old = 0;
            gas_ptr_t p = gas_layout_ptr(&cl, (uint64_t)c * 8);
            mine_contrib[c] += v;
            namo++;
            switch (k % 4) {
            case 0:
                CHECK_OK(gas_atomic_add_u64(p, v));
                lower[c] += v;
                break;
            case 1:
                CHECK_OK(gas_amo_nbi(GAS_AMO_ADD, 8, p, v, 0, NULL));
                break;
            default:
                if (CHECK_OK(gas_atomic_fetch_add_u64(p, v, &old))) {
                    CHECK(old >= lower[c], "op %ld: fetch_add on counter %d (rank %d) returned %" PRIu64
                          ", but this rank already saw it reach %" PRIu64, k, c, gas_ptr_rank(p), old, lower[c]);
                    lower[c] = old + v;
                }
                break;
            }
        }
    }
    CHECK_OK(gas_quiet());
    if (me == 0)
        test_note("%ld ops: %ld puts (%ld over two owners), %ld checked gets, %ld atomics in %.2f s", ops, nput,
                  spanning, nget, namo, test_elapsed());

    /* my whole region against my shadow */
    CHECK_OK(gas_get(buf, test_at(data, base), REGION));
    check_bytes("end: my whole region read back", buf, shadow, REGION, base);
    /* publish checksums and contributions */
    uint64_t cs[NCS];
    for (int b = 0; b < NCS; b++)
        cs[b] = checksum(shadow + (size_t)b * CSB, CSB);
    CHECK_OK(gas_put(test_at(sums, (uint64_t)me * NCS * 8), cs, sizeof cs));
    CHECK_OK(gas_put(test_at(contrib, (uint64_t)me * (uint64_t)nctr * 8), mine_contrib, (size_t)nctr * 8));
    MUST(gas_barrier());

    /* every region, read by every rank, against its writer's checksums */
    uint64_t *allcs = test_xmalloc(sizeof(uint64_t) * (size_t)n * NCS);
    CHECK_OK(gas_get(allcs, sums, sizeof(uint64_t) * (size_t)n * NCS));
    for (int w0 = 0; w0 < n; w0++) {
        int w = (w0 + me) % n, bad = 0;
        CHECK_OK(gas_get(buf, test_at(data, (uint64_t)w * REGION), REGION));
        for (int b = 0; b < NCS && bad < 3; b++) {
            uint64_t got = checksum(buf + (size_t)b * CSB, CSB);
            if (got != allcs[(size_t)w * NCS + (size_t)b]) {
                FAIL("end: rank %d's region, bytes [%" PRIu64 ", %" PRIu64 ") of the array: checksum 0x%016" PRIx64
                     ", rank %d's shadow has 0x%016" PRIx64, w, (uint64_t)w * REGION + (uint64_t)b * CSB,
                     (uint64_t)w * REGION + (uint64_t)(b + 1) * CSB, got, w, allcs[(size_t)w * NCS + (size_t)b]);
                bad++;
            }
        }
    }
    free(allcs);
    /* counters against the sum of the contributions */
    uint64_t *allc = test_xmalloc(sizeof(uint64_t) * (size_t)n * (size_t)nctr);
    CHECK_OK(gas_get(allc, contrib, sizeof(uint64_t) * (size_t)n * (size_t)nctr));
    for (int c = 0; c < nctr; c++) {
        gas_ptr_t p = gas_layout_ptr(&cl, (uint64_t)c * 8);
        if (gas_ptr_rank(p) != me)
            continue;
        uint64_t want = 0, got = 0;
        for (int r = 0; r < n; r++)
            want += allc[(size_t)r * (size_t)nctr + (size_t)c];
        CHECK_OK(gas_get(&got, p, 8));
        CHECK(got == want, "end: counter %d (on rank %d) is %" PRIu64 ", the ranks added %" PRIu64, c, me, got, want);
    }
    free(allc);
    MUST(gas_barrier());

    free(shadow);
    free(buf);
    free(back);
    free(mine_contrib);
    free(lower);
    CHECK_OK(gas_free(sums));
    CHECK_OK(gas_free(contrib));
    CHECK_OK(gas_free(counters));
    CHECK_OK(gas_free(data));
    return test_end();
}
