/*
 * test_sizes - transfers from 1 byte to 16 MiB, unaligned at both ends, over
 * one or several owners.
 *
 * A block-distributed array with a 16 MiB part per rank.  Phase 1: every
 * writer owns a region that starts in the middle of an owner's part and runs
 * into the next one, and makes transfers of every size in sizes[] (powers of
 * two from 1 B to 16 MiB and odd sizes such as 3, 4095, 65537, 1 MiB + 7)
 * at random offsets of its region, from and to buffers at random misalignments,
 * rotating the put and get flavours; each is read back at once (after
 * gas_quiet) and checked, with guard bytes around the destination.  Afterwards
 * every owner checks its whole part by direct loads and every rank reads
 * ranges of other regions and of owner boundaries; the expected contents come
 * from replaying every writer's (deterministic) transfer list, since the data
 * of a transfer is a function of (writer, transfer, global index).  Phase 2:
 * rank 0 writes the whole array from offset 1 in one put, owners check their
 * parts by direct loads and the last rank reads it back in one get from
 * offset 3 to 2 bytes before the end.
 */
#include "check.h"

#define MiB (1024u * 1024u)
#define PART (16u * MiB)       /* bytes of the array per rank */
#define INIT_WRITER 1000001    /* pattern tag of the initial contents */
#define WHOLE_WRITER 1000002   /* pattern tag of the phase-2 whole-array put */

static const uint64_t sizes[] = {
    1, 2, 3, 4, 7, 8, 9, 16, 32, 63, 64, 65, 128, 256, 512, 1024, 2048, 4095, 4096, 4097,
    8192, 16384, 32768, 65535, 65536, 65537, 131072, 262144, 524288, MiB, MiB + 7,
    2 * MiB, 4 * MiB - 1, 4 * MiB, 8 * MiB, 16 * MiB,
};
enum { NT = sizeof sizes / sizeof sizes[0] };

typedef struct xfer {
    uint64_t g;      /* global start index */
    uint64_t len;
    unsigned sa, da; /* misalignment of the source and destination buffers */
} xfer_t;

static gas_ptr_t arr;
static gas_layout_t lay;
static uint64_t nbytes;
static xfer_t *plan;     /* plan[w * NT + t] */

static uint64_t region_start(int w)
{
    return w == 0 ? 0 : (uint64_t)w * PART + PART / 2 + 3;
}
static uint64_t region_end(int w)
{
    return w == t_nranks - 1 ? nbytes : (uint64_t)(w + 1) * PART + PART / 2 + 3;
}

static void make_plan(void)
{
    plan = test_xmalloc(sizeof *plan * (size_t)t_nranks * NT);
    for (int w = 0; w < t_nranks; w++) {
        test_rng_t rng = rng_make(w, 7);
        uint64_t lo = region_start(w), rlen = region_end(w) - lo;
        for (int t = 0; t < NT; t++) {
            xfer_t *x = &plan[w * NT + t];
            x->len = sizes[t] < rlen ? sizes[t] : rlen - 1;
            x->g = lo + rng_below(&rng, rlen - x->len + 1);
            x->sa = (unsigned)rng_below(&rng, 8);
            x->da = (unsigned)rng_below(&rng, 8);
        }
    }
}

/* out[0 .. hi-lo) = what phase 1 leaves in global bytes [lo, hi). */
static void replay(uint8_t *out, uint64_t lo, uint64_t hi)
{
    pattern_fill(out, hi - lo, INIT_WRITER, 0, lo);
    for (int w = 0; w < t_nranks; w++) {
        if (region_end(w) <= lo || region_start(w) >= hi)
            continue;
        for (int t = 0; t < NT; t++) {
            const xfer_t *x = &plan[w * NT + t];
            uint64_t a = x->g > lo ? x->g : lo, b = x->g + x->len < hi ? x->g + x->len : hi;
            if (a < b)
                pattern_fill(out + (a - lo), b - a, w, t, a);
        }
    }
}

static void put_flavour(int k, gas_ptr_t dst, const void *src, uint64_t len)
{
    gas_handle_t h = GAS_HANDLE_NULL;
    switch (k % 3) {
    case 0:
        CHECK_OK(gas_put(dst, src, len));
        CHECK_OK(gas_quiet());
        break;
    case 1:
        CHECK_OK(gas_put_nbi(dst, src, len));
        CHECK_OK(gas_quiet());
        break;
    default:
        CHECK_OK(gas_put_nb(dst, src, len, &h));
        CHECK_OK(gas_wait(h));
        break;
    }
}

static void get_flavour(int k, void *dst, gas_ptr_t src, uint64_t len)
{
    gas_handle_t h = GAS_HANDLE_NULL;
    switch (k % 3) {
    case 0:
        CHECK_OK(gas_get(dst, src, len));
        break;
    case 1:
        CHECK_OK(gas_get_nbi(dst, src, len));
        CHECK_OK(gas_quiet());
        break;
    default:
        CHECK_OK(gas_get_nb(dst, src, len, &h));
        CHECK_OK(gas_wait(h));
        break;
    }
}

static const char *put_names[] = { "gas_put+gas_quiet", "gas_put_nbi+gas_quiet", "gas_put_nb+gas_wait" };
static const char *get_names[] = { "gas_get", "gas_get_nbi+gas_quiet", "gas_get_nb+gas_wait" };

/* Count the owners of global bytes [lo, hi). */
static int owners_of(uint64_t lo, uint64_t hi)
{
    return (int)((hi - 1) / lay.block - lo / lay.block) + 1;
}

static void phase1(uint8_t *src, uint8_t *dst)
{
    int me = t_rank, spanning = 0;
    char what[200];
    for (int t = 0; t < NT; t++) {
        const xfer_t *x = &plan[me * NT + t];
        uint8_t *s = src + x->sa, *d = dst + x->da;
        pattern_fill(s, x->len, me, t, x->g);
        put_flavour(t, test_at(arr, x->g), s, x->len);
        memset(dst, 0xcc, x->len + 16);
        get_flavour(t / 3 + t, d, test_at(arr, x->g), x->len);
        snprintf(what, sizeof what, "%s of %" PRIu64 " B at array offset %" PRIu64
                 " (src+%u, %d owner(s)), read back with %s (dst+%u)", put_names[t % 3], x->len,
                 x->g, x->sa, owners_of(x->g, x->g + x->len), get_names[(t / 3 + t) % 3], x->da);
        check_pattern(what, d, x->len, me, t, x->g, x->g);
        CHECK(x->da == 0 || dst[x->da - 1] == 0xcc, "%s: the get wrote the byte before its destination", what);
        CHECK(d[x->len] == 0xcc, "%s: the get wrote the byte after its destination", what);
        spanning += owners_of(x->g, x->g + x->len) > 1;
    }
    if (me == 0 || me == t_nranks / 2)
        test_note("phase 1: %d transfers, %d of them over several owners", NT, spanning);
}

static void check_range_by_get(const char *label, uint64_t lo, uint64_t hi, uint8_t *buf,
                               uint8_t *want, int flavour)
{
    char what[200];
    unsigned da = (unsigned)(lo % 7);
    memset(buf, 0xcc, hi - lo + 16);
    get_flavour(flavour, buf + da, test_at(arr, lo), hi - lo);
    snprintf(what, sizeof what, "%s: %s of array bytes [%" PRIu64 ", %" PRIu64 ") over %d owner(s)",
             label, get_names[flavour % 3], lo, hi, owners_of(lo, hi));
    check_bytes(what, buf + da, want, hi - lo, lo);
    CHECK(buf[da + hi - lo] == 0xcc, "%s: the get wrote past its destination", what);
}

static void phase1_check(uint8_t *buf, uint8_t *want)
{
    int me = t_rank, n = t_nranks;
    char what[200];
    /* the owner's direct loads over its whole part */
    uint64_t lo = (uint64_t)me * lay.block, hi = lo + lay.block < nbytes ? lo + lay.block : nbytes;
    const uint8_t *mine = gas_ptr_local(gas_layout_ptr(&lay, lo));
    if (CHECK(mine != NULL, "gas_ptr_local of my own part is NULL")) {
        replay(want, lo, hi);
        snprintf(what, sizeof what, "after phase 1, direct load of my part [%" PRIu64 ", %" PRIu64 ")", lo, hi);
        check_bytes(what, mine, want, hi - lo, lo);
    }
    /* ranges of the next ranks' regions, and one over two owner boundaries */
    test_rng_t rng = rng_make(me, 8);
    for (int k = 0; k < 4; k++) {
        uint64_t len = rng_range(&rng, 1, 4 * MiB);
        lo = rng_below(&rng, nbytes - len + 1) | 1;
        if (lo + len > nbytes)
            lo -= 2;
        replay(want, lo, lo + len);
        check_range_by_get("after phase 1, random range", lo, lo + len, buf, want, k + me);
    }
    if (n >= 3) {
        int r = me % (n - 2);
        lo = (uint64_t)(r + 1) * PART - 4097;
        hi = (uint64_t)(r + 2) * PART + 65537;
        replay(want, lo, hi);
        check_range_by_get("after phase 1, range over 3 owners", lo, hi, buf, want, me);
    }
}

static void phase2(void)
{
    int me = t_rank, n = t_nranks;
    char what[200];
    /* rank 0 writes bytes [1, nbytes) in one put, from a misaligned source */
    if (me == 0) {
        uint8_t *src = test_xmalloc(nbytes + 8);
        pattern_fill(src + 3, nbytes - 1, WHOLE_WRITER, 0, 1);
        CHECK_OK(gas_put(test_at(arr, 1), src + 3, nbytes - 1));
        free(src);
    }
    MUST(gas_barrier());
    /* every owner checks its part by direct loads; byte 0 keeps its phase-1 value */
    uint64_t lo = (uint64_t)me * lay.block, hi = lo + lay.block < nbytes ? lo + lay.block : nbytes;
    const uint8_t *mine = gas_ptr_local(gas_layout_ptr(&lay, lo));
    if (mine) {
        if (me == 0) {
            uint8_t b0;
            replay(&b0, 0, 1);
            CHECK(mine[0] == b0, "after the whole-array put from offset 1, byte 0 changed: "
                  "expected 0x%02x got 0x%02x", b0, mine[0]);
        }
        uint64_t from = lo == 0 ? 1 : lo;
        snprintf(what, sizeof what, "after rank 0's put of array bytes [1, %" PRIu64 "), direct load "
                 "of my part", nbytes);
        check_pattern(what, mine + (from - lo), hi - from, WHOLE_WRITER, 0, from, from);
    }
    /* the last rank reads nearly all of it back in one get over every owner */
    if (me == n - 1) {
        uint64_t a = 3, b = nbytes - 2;
        uint8_t *buf = test_xmalloc(nbytes + 16);
        memset(buf, 0xcc, nbytes + 16);
        CHECK_OK(gas_get(buf + 5, test_at(arr, a), b - a));
        snprintf(what, sizeof what, "gas_get of array bytes [%" PRIu64 ", %" PRIu64 ") over %d owners "
                 "after rank 0's whole-array put", a, b, owners_of(a, b));
        check_pattern(what, buf + 5, b - a, WHOLE_WRITER, 0, a, a);
        CHECK(buf[4] == 0xcc && buf[5 + b - a] == 0xcc, "%s: wrote outside its destination", what);
        free(buf);
    }
}

int main(void)
{
    test_begin("sizes");
    nbytes = (uint64_t)t_nranks * PART;
    gas_status_t st = gas_malloc(nbytes, &arr);
    if (st != GAS_OK) {
        FAIL("gas_malloc(%" PRIu64 ") returned %d (%s): %s (the test needs %u MiB of heap per rank)",
             nbytes, (int)st, gas_strerror(st), gas_last_error(), PART / MiB);
        test_die("cannot allocate the test array");
    }
    lay = test_layout_of(arr);
    CHECK(lay.block == PART, "gas_malloc(%" PRIu64 ") on %d ranks: block %" PRIu64 ", expected %u",
          nbytes, t_nranks, lay.block, PART);
    make_plan();

    /* initial contents: every owner fills its own part */
    uint64_t lo = (uint64_t)t_rank * lay.block;
    uint8_t *mine = gas_ptr_local(gas_layout_ptr(&lay, lo));
    if (!mine)
        test_die("gas_ptr_local of my own part is NULL");
    pattern_fill(mine, lay.block, INIT_WRITER, 0, lo);
    MUST(gas_barrier());

    /* room for the longest range read back: one part plus 4097 + 65537 bytes */
    size_t bufsz = PART + 256 * 1024;
    uint8_t *src = test_xmalloc(bufsz), *dst = test_xmalloc(bufsz), *want = test_xmalloc(bufsz);
    phase1(src, dst);
    MUST(gas_barrier());
    phase1_check(dst, want);
    free(src);
    free(dst);
    free(want);
    MUST(gas_barrier());
    phase2();
    MUST(gas_barrier());
    free(plan);
    CHECK_OK(gas_free(arr));
    return test_end();
}
