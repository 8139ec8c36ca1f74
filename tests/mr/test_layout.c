/*
 * test_layout - global pointers and distributed-array layouts.
 *
 *  - the pointer split (offset_bits/rank_bits/offset_mask) follows gas.h;
 *  - gas_ptr_make/gas_ptr_rank/gas_ptr_offset/gas_ptr_from_local/gas_ptr_local
 *    round trip;
 *  - for gas_malloc of many sizes (block = ceil(nbytes / nranks) rounded up to
 *    8) and gas_malloc_dist with GAS_DIST_BLOCK, GAS_DIST_CYCLIC and
 *    GAS_DIST_BLOCK_CYCLIC and several element sizes: gas_layout() describes the
 *    documented layout; gas_ptr_add, gas_ptr_index and gas_layout_ptr agree with
 *    each other and with the owner/offset computed by hand from the documented
 *    rule (chunk c = i / block goes to rank c % nranks at local offset
 *    (c / nranks) * block); gas_layout() of interior pointers gives the same
 *    layout; the array pointer is the same on every rank;
 *  - puts through element pointers land at the owner and offset computed by
 *    hand (checked by the owner's direct loads) and a gas_get of the whole array
 *    returns them in order;
 *  - one past the end is a valid gas_ptr_add result, one further is
 *    GAS_ERR_BOUNDS; so are pointers into freed arrays;
 *  - gas_malloc(0) gives GAS_NULL; live allocations do not overlap.
 */
#include "check.h"

static gas_ptr_t ctl;    /* nranks words, word r on rank r: for exchanges */
static int alloc_id;     /* distinguishes the patterns of successive arrays */

/* Every rank must hold the same v (exchanged through ctl); collective. */
static void check_same_everywhere(uint64_t v, const char *what)
{
    int n = t_nranks;
    uint64_t *all = test_xmalloc(sizeof *all * (size_t)n);
    CHECK_OK(gas_put(test_at(ctl, (uint64_t)t_rank * 8), &v, 8));
    MUST(gas_barrier());
    CHECK_OK(gas_get(all, ctl, (size_t)n * 8));
    for (int r = 0; r < n; r++)
        CHECK(all[r] == v, "%s: rank %d has 0x%016" PRIx64 ", I have 0x%016" PRIx64, what, r, all[r], v);
    MUST(gas_barrier());
    free(all);
}

static unsigned ceil_log2(uint64_t x)
{
    unsigned b = 0;
    while (b < 64 && (UINT64_C(1) << b) < x)
        b++;
    return b;
}

static void check_split(void)
{
    const gas_ptr_split_t *s = &gas_ptr_split_;
    unsigned want_rank_bits = ceil_log2((uint64_t)t_nranks);
    if (want_rank_bits < 64 - GAS_PTR_MAX_OFFSET_BITS)
        want_rank_bits = 64 - GAS_PTR_MAX_OFFSET_BITS;
    CHECK(s->rank_bits == want_rank_bits, "split: rank_bits %u, expected %u for %d ranks", s->rank_bits,
          want_rank_bits, t_nranks);
    CHECK(s->offset_bits + s->rank_bits == 64, "split: offset_bits %u + rank_bits %u != 64",
          s->offset_bits, s->rank_bits);
    CHECK(s->offset_bits <= GAS_PTR_MAX_OFFSET_BITS && s->offset_bits >= 1,
          "split: offset_bits %u", s->offset_bits);
    if (s->offset_bits >= 1 && s->offset_bits < 64)
        CHECK(s->offset_mask == (UINT64_C(1) << s->offset_bits) - 1,
              "split: offset_mask 0x%" PRIx64 " for %u offset bits", s->offset_mask, s->offset_bits);
    CHECK(s->rank == t_rank, "split: rank %d, gas_rank() %d", s->rank, t_rank);
    CHECK(s->local_base != NULL, "split: local_base is NULL");
    CHECK(s->segment_size > 0 && s->segment_size - 1 <= s->offset_mask,
          "split: segment_size %" PRIu64 " does not fit the offset bits", s->segment_size);
}

static void check_round_trips(gas_ptr_t arr)
{
    const gas_ptr_split_t *s = &gas_ptr_split_;
    uint64_t offs[] = { 1, 8, 4097, s->segment_size - 1, s->offset_mask };
    for (int r = 0; r < t_nranks; r += (t_nranks > 16 ? t_nranks / 16 : 1)) {
        for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
            gas_ptr_t p = gas_ptr_make(r, offs[k]);
            CHECK(gas_ptr_rank(p) == r && gas_ptr_offset(p) == offs[k],
                  "gas_ptr_make(%d, %" PRIu64 ") = 0x%016" PRIx64 " decodes as rank %d offset %" PRIu64,
                  r, offs[k], p, gas_ptr_rank(p), gas_ptr_offset(p));
            CHECK(gas_ptr_make(gas_ptr_rank(p), gas_ptr_offset(p)) == p,
                  "gas_ptr_make(gas_ptr_rank(p), gas_ptr_offset(p)) != p for p = 0x%016" PRIx64, p);
        }
    }
    CHECK(gas_ptr_local(GAS_NULL) == NULL, "gas_ptr_local(GAS_NULL) is not NULL");
    if (s->segment_size + 4096 <= s->offset_mask) {
        void *l = gas_ptr_local(gas_ptr_make(t_rank, s->segment_size + 4096));
        CHECK(l == NULL, "gas_ptr_local of an offset beyond my segment (%" PRIu64 ") is %p, expected NULL",
              s->segment_size + 4096, l);
    }
    /* my own bytes of arr: local address, symmetric translation */
    gas_layout_t l = test_layout_of(arr);
    gas_ptr_t mine = gas_ptr_make(t_rank, l.local_offset);
    char *loc = gas_ptr_local(mine);
    CHECK(loc == s->local_base + l.local_offset, "gas_ptr_local(my part at offset %" PRIu64 ") = %p, "
          "expected local_base + offset = %p", l.local_offset, (void *)loc, (void *)(s->local_base + l.local_offset));
    if (loc) {
        for (int r = 0; r < t_nranks; r++) {
            gas_ptr_t q = gas_ptr_from_local(r, loc + 5);
            CHECK(q == gas_ptr_make(r, l.local_offset + 5), "gas_ptr_from_local(%d, my address + 5) = "
                  "0x%016" PRIx64 ", expected rank %d offset %" PRIu64, r, q, r, l.local_offset + 5);
            char *peer = gas_ptr_local(q);
            if (r == t_rank)
                CHECK(peer == loc + 5, "gas_ptr_local(gas_ptr_from_local(me, a)) != a");
        }
    }
}

/* Expected owner and offset of byte i by the documented rule. */
static void hand_place(const gas_layout_t *l, uint64_t i, int *owner_p, uint64_t *off_p)
{
    uint64_t c = i / l->block;
    *owner_p = (int)(c % (uint64_t)l->nranks);
    *off_p = l->local_offset + (c / (uint64_t)l->nranks) * l->block + i % l->block;
}

/* The most bytes of the array any rank holds, by the documented rule. */
static uint64_t max_local_extent(const gas_layout_t *l)
{
    if (l->nbytes == 0)
        return 0;
    uint64_t chunks = (l->nbytes + l->block - 1) / l->block;
    uint64_t rows = (chunks + (uint64_t)l->nranks - 1) / (uint64_t)l->nranks;
    uint64_t e = rows * l->block;
    /* when only rank 0's last chunk is partial, that is its extent */
    if ((chunks - 1) % (uint64_t)l->nranks == 0 && l->nbytes % l->block)
        e -= l->block - l->nbytes % l->block;
    return e;
}

static const char *dist_name(gas_dist_t d)
{
    return d == GAS_DIST_BLOCK ? "BLOCK" : d == GAS_DIST_CYCLIC ? "CYCLIC" : "BLOCK_CYCLIC";
}

/*
 * The checks shared by every allocation: `desc` names it; esz is the element
 * size the program will index with.
 */
static void check_array(const char *desc, gas_ptr_t arr, uint64_t nbytes, size_t esz)
{
    int n = t_nranks, me = t_rank;
    gas_layout_t l = test_layout_of(arr);
    char what[256];
    alloc_id++;

    check_same_everywhere(arr, desc);
    CHECK(l.base == arr, "%s: layout.base 0x%016" PRIx64 " != array 0x%016" PRIx64, desc, l.base, arr);
    CHECK(gas_ptr_rank(arr) == 0, "%s: the array starts on rank %d, expected 0", desc, gas_ptr_rank(arr));
    CHECK(l.nbytes == nbytes, "%s: layout.nbytes %" PRIu64 ", expected %" PRIu64, desc, l.nbytes, nbytes);
    CHECK(l.nranks == n, "%s: layout.nranks %d, expected %d", desc, l.nranks, n);
    CHECK(l.local_offset == gas_ptr_offset(arr), "%s: layout.local_offset %" PRIu64 " != offset of the "
          "array pointer %" PRIu64, desc, l.local_offset, gas_ptr_offset(arr));
    if (!CHECK(l.block > 0 && l.nranks > 0, "%s: layout.block %" PRIu64 ", nranks %d", desc, l.block, l.nranks))
        return;
    CHECK(l.block * (uint64_t)n >= nbytes || l.dist != GAS_DIST_BLOCK,
          "%s: BLOCK layout with block %" PRIu64 " does not cover %" PRIu64 " bytes", desc, l.block, nbytes);
    uint64_t ext = max_local_extent(&l);
    CHECK(l.local_bytes >= ext, "%s: layout.local_bytes %" PRIu64 " but a rank holds %" PRIu64
          " bytes of the array", desc, l.local_bytes, ext);
    CHECK(gas_layout_ptr(&l, 0) == arr, "%s: gas_layout_ptr(0) != array", desc);

    /* every byte (or a sample of a large array): three ways agree with the hand rule */
    test_rng_t rng = rng_make(me, (uint64_t)alloc_id);
    uint64_t step = nbytes > 20000 ? nbytes / 20000 : 1;
    long bad = 0;
    for (uint64_t i = 0; i < nbytes && bad < 5; i += step) {
        int owner;
        uint64_t off;
        gas_ptr_t byadd = GAS_NULL, bylay = gas_layout_ptr(&l, i);
        hand_place(&l, i, &owner, &off);
        if (!CHECK_OK(gas_ptr_add(arr, i, &byadd))) {
            bad++;
            continue;
        }
        if (gas_ptr_rank(bylay) != owner || gas_ptr_offset(bylay) != off || byadd != bylay) {
            FAIL("%s: byte %" PRIu64 ": by hand rank %d offset %" PRIu64 ", gas_layout_ptr rank %d offset %"
                 PRIu64 ", gas_ptr_add rank %d offset %" PRIu64, desc, i, owner, off, gas_ptr_rank(bylay),
                 gas_ptr_offset(bylay), gas_ptr_rank(byadd), gas_ptr_offset(byadd));
            bad++;
        }
        if (i % esz == 0) {
            gas_ptr_t byidx = GAS_NULL;
            if (CHECK_OK(gas_ptr_index(arr, esz, i / esz, &byidx)) && byidx != bylay) {
                FAIL("%s: gas_ptr_index(elem %zu, %" PRIu64 ") = 0x%016" PRIx64 ", gas_layout_ptr = 0x%016"
                     PRIx64, desc, esz, i / esz, byidx, bylay);
                bad++;
            }
        }
    }
    /* gas_ptr_add from interior pointers, gas_layout of interior pointers */
    for (int k = 0; k < 200 && bad < 5; k++) {
        uint64_t j = rng_below(&rng, nbytes), d = rng_below(&rng, nbytes - j + 1);
        gas_ptr_t p = gas_layout_ptr(&l, j), q = GAS_NULL;
        if (CHECK_OK(gas_ptr_add(p, d, &q)) && d < nbytes - j && q != gas_layout_ptr(&l, j + d)) {
            FAIL("%s: gas_ptr_add(ptr to byte %" PRIu64 ", %" PRIu64 ") = 0x%016" PRIx64 ", expected 0x%016"
                 PRIx64, desc, j, d, q, gas_layout_ptr(&l, j + d));
            bad++;
        }
        gas_layout_t l2;
        memset(&l2, 0, sizeof l2);
        if (CHECK_OK(gas_layout(p, &l2)) &&
            (l2.base != l.base || l2.nbytes != l.nbytes || l2.block != l.block ||
             l2.local_offset != l.local_offset || l2.local_bytes != l.local_bytes ||
             l2.nranks != l.nranks || l2.dist != l.dist)) {
            FAIL("%s: gas_layout of a pointer to byte %" PRIu64 " differs from the array's layout", desc, j);
            bad++;
        }
        /* one past the end from here is allowed, one more is not */
        gas_ptr_t end = GAS_NULL;
        CHECK_OK(gas_ptr_add(p, nbytes - j, &end));
        CHECK_STATUS(gas_ptr_add(p, nbytes - j + 1, &end), GAS_ERR_BOUNDS);
    }
    gas_ptr_t r = GAS_NULL;
    CHECK_OK(gas_ptr_add(arr, nbytes, &r));
    CHECK_OK(gas_ptr_index(arr, esz, nbytes / esz, &r));
    CHECK_STATUS(gas_ptr_add(arr, nbytes + 1, &r), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_ptr_index(arr, esz, nbytes / esz + 1, &r), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_ptr_add(arr, UINT64_MAX, &r), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_ptr_add(gas_layout_ptr(&l, nbytes - 1), UINT64_MAX, &r), GAS_ERR_BOUNDS);
    CHECK_OK(gas_ptr_add(gas_layout_ptr(&l, nbytes - 1), 1, &r));
    CHECK_STATUS(gas_ptr_add(gas_layout_ptr(&l, nbytes - 1), 2, &r), GAS_ERR_BOUNDS);

    /* puts of whole elements through element pointers, spread over the writers */
    uint64_t nelems = nbytes / esz;
    uint8_t *ebuf = test_xmalloc(esz);
    for (uint64_t e = 0; e < nelems; e++) {
        if ((int)((e * 5 + 1) % (uint64_t)n) != me)
            continue;
        gas_ptr_t p = GAS_NULL;
        if (!CHECK_OK(gas_ptr_index(arr, esz, e, &p)))
            break;
        pattern_fill(ebuf, esz, alloc_id, 0, e * esz);
        if (!CHECK_OK(gas_put(p, ebuf, esz)))
            break;
    }
    free(ebuf);
    MUST(gas_barrier());
    /* the owner finds every byte at the place computed by hand */
    const char *base = gas_ptr_split_.local_base;
    bad = 0;
    for (uint64_t i = 0; i < nelems * esz && bad < 4; i++) {
        int owner;
        uint64_t off;
        hand_place(&l, i, &owner, &off);
        if (owner != me)
            continue;
        uint8_t want = pattern_byte(alloc_id, 0, i), got = (uint8_t)base[off];
        if (got != want) {
            FAIL("%s: byte %" PRIu64 " (element %" PRIu64 "), put through its element pointer, is not at my "
                 "offset %" PRIu64 ": expected 0x%02x got 0x%02x", desc, i, i / esz, off, want, got);
            bad++;
        }
    }
    /* and a get of the whole array sees every element in order */
    uint8_t *all = test_xmalloc(nbytes);
    memset(all, 0, nbytes);
    CHECK_OK(gas_get(all, arr, nelems * esz));
    snprintf(what, sizeof what, "%s: gas_get of the whole array after element puts", desc);
    check_pattern(what, all, nelems * esz, alloc_id, 0, 0, 0);
    free(all);
    MUST(gas_barrier());
}

static void check_gas_malloc(void)
{
    int n = t_nranks;
    uint64_t sizes[] = { 1, 7, 8, 9, 100, 1000, 4099, (uint64_t)n * 8, (uint64_t)n * 8 + 3,
                         (uint64_t)n * 1000 + 1, 65536 + 5 };
    char desc[160];
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        uint64_t nb = sizes[k];
        gas_ptr_t arr = GAS_NULL;
        snprintf(desc, sizeof desc, "gas_malloc(%" PRIu64 ") on %d ranks", nb, n);
        if (!CHECK_OK(gas_malloc(nb, &arr)))
            continue;
        gas_layout_t l = test_layout_of(arr);
        uint64_t want_block = (nb + (uint64_t)n - 1) / (uint64_t)n;
        want_block = (want_block + 7) & ~UINT64_C(7);
        CHECK(l.dist == GAS_DIST_BLOCK, "%s: layout.dist %d, expected GAS_DIST_BLOCK", desc, (int)l.dist);
        CHECK(l.block == want_block, "%s: layout.block %" PRIu64 ", expected ceil(%" PRIu64 "/%d) rounded up "
              "to 8 = %" PRIu64, desc, l.block, nb, n, want_block);
        if (l.block == want_block)
            check_array(desc, arr, nb, 1);
        if (k == 3)
            check_round_trips(arr);
        CHECK_OK(gas_free(arr));
    }
}

static void check_gas_malloc_dist(void)
{
    int n = t_nranks;
    static const size_t esizes[] = { 1, 4, 8, 12, 24 };
    static const uint64_t counts[] = { 1, 5, 97, 1003 };
    static const uint64_t bes[] = { 1, 3, 16 };
    char desc[200];
    for (int d = 0; d <= 2; d++) {
        for (size_t ei = 0; ei < sizeof esizes / sizeof esizes[0]; ei++) {
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                size_t nbe = d == GAS_DIST_BLOCK_CYCLIC ? sizeof bes / sizeof bes[0] : 1;
                for (size_t bi = 0; bi < nbe; bi++) {
                    size_t esz = esizes[ei];
                    uint64_t ne = counts[ci] + (ci == 3 ? (uint64_t)n : 0), be = bes[bi];
                    gas_ptr_t arr = GAS_NULL;
                    snprintf(desc, sizeof desc, "gas_malloc_dist(%" PRIu64 " x %zu B, %s, block_elems %" PRIu64
                             ") on %d ranks", ne, esz, dist_name((gas_dist_t)d), be, n);
                    if (!CHECK_OK(gas_malloc_dist(ne, esz, (gas_dist_t)d, be, &arr)))
                        continue;
                    gas_layout_t l = test_layout_of(arr);
                    uint64_t nb = ne * esz, want = 0;
                    int ok;
                    CHECK(l.dist == (gas_dist_t)d, "%s: layout.dist %d", desc, (int)l.dist);
                    if (d == GAS_DIST_CYCLIC) {
                        want = esz;
                        ok = CHECK(l.block == want, "%s: layout.block %" PRIu64 ", expected the element size %zu",
                                   desc, l.block, esz);
                    } else if (d == GAS_DIST_BLOCK_CYCLIC) {
                        want = be * esz;
                        ok = CHECK(l.block == want, "%s: layout.block %" PRIu64 ", expected block_elems * "
                                   "elem_size = %" PRIu64, desc, l.block, want);
                    } else {
                        /* one chunk per rank: whole elements, or bytes rounded up to 8 as gas_malloc */
                        uint64_t by_elems = (ne + (uint64_t)n - 1) / (uint64_t)n * esz;
                        uint64_t by_bytes = (((nb + (uint64_t)n - 1) / (uint64_t)n) + 7) & ~UINT64_C(7);
                        ok = CHECK(l.block == by_elems || l.block == ((by_elems + 7) & ~UINT64_C(7)) ||
                                   l.block == by_bytes,
                                   "%s: layout.block %" PRIu64 ", expected %" PRIu64 " (whole elements), %"
                                   PRIu64 " (rounded to 8) or %" PRIu64 " (as gas_malloc)", desc, l.block,
                                   by_elems, (by_elems + 7) & ~UINT64_C(7), by_bytes);
                    }
                    if (ok)
                        check_array(desc, arr, nb, esz);
                    /* the documented per-element rules, on top of the byte rule */
                    for (uint64_t e = 0; ok && e < ne; e++) {
                        gas_ptr_t p = gas_layout_ptr(&l, e * esz);
                        int owner = -1;
                        uint64_t off = 0;
                        if (d == GAS_DIST_CYCLIC) {
                            owner = (int)(e % (uint64_t)n);
                            off = l.local_offset + (e / (uint64_t)n) * esz;
                        } else if (d == GAS_DIST_BLOCK_CYCLIC) {
                            uint64_t c = e / be;
                            owner = (int)(c % (uint64_t)n);
                            off = l.local_offset + (c / (uint64_t)n) * be * esz + (e % be) * esz;
                        } else {
                            owner = (int)(e * esz / l.block);
                            off = l.local_offset + e * esz % l.block;
                        }
                        if (gas_ptr_rank(p) != owner || gas_ptr_offset(p) != off) {
                            FAIL("%s: element %" PRIu64 " is at rank %d offset %" PRIu64 ", expected rank %d "
                                 "offset %" PRIu64, desc, e, gas_ptr_rank(p), gas_ptr_offset(p), owner, off);
                            break;
                        }
                    }
                    CHECK_OK(gas_free(arr));
                }
            }
        }
    }
}

static void check_misc(void)
{
    gas_ptr_t z = 1, a = GAS_NULL, b = GAS_NULL;
    gas_layout_t la, lb;
    CHECK_OK(gas_malloc(0, &z));
    CHECK(z == GAS_NULL, "gas_malloc(0) gave 0x%016" PRIx64 ", expected GAS_NULL", z);
    CHECK_OK(gas_free(GAS_NULL));

    /* two live arrays do not overlap on any rank */
    MUST(gas_malloc(10000, &a));
    MUST(gas_malloc_dist(333, 8, GAS_DIST_CYCLIC, 0, &b));
    la = test_layout_of(a);
    lb = test_layout_of(b);
    CHECK(la.local_offset + la.local_bytes <= lb.local_offset || lb.local_offset + lb.local_bytes <= la.local_offset,
          "live arrays overlap: [%" PRIu64 ", +%" PRIu64 ") and [%" PRIu64 ", +%" PRIu64 ")", la.local_offset,
          la.local_bytes, lb.local_offset, lb.local_bytes);
    CHECK(la.local_offset > 0 && lb.local_offset > 0, "an array starts at offset 0, which is reserved");

    /* pointers into a freed array are outside every allocation */
    gas_ptr_t inside = gas_layout_ptr(&la, 5), r = GAS_NULL;
    CHECK_OK(gas_free(a));
    gas_layout_t lx;
    CHECK_STATUS(gas_layout(inside, &lx), GAS_ERR_BOUNDS);
    CHECK_STATUS(gas_ptr_add(inside, 1, &r), GAS_ERR_BOUNDS);
    gas_status_t st = gas_layout(GAS_NULL, &lx);
    CHECK(st == GAS_ERR_BOUNDS || st == GAS_ERR_INVALID, "gas_layout(GAS_NULL) returned %d (%s), expected "
          "GAS_ERR_BOUNDS or GAS_ERR_INVALID", (int)st, gas_strerror(st));
    CHECK_OK(gas_free(b));
}

int main(void)
{
    test_begin("layout");
    check_split();
    MUST(gas_malloc((size_t)t_nranks * 8, &ctl));
    check_gas_malloc();
    check_gas_malloc_dist();
    check_misc();
    CHECK_OK(gas_free(ctl));
    return test_end();
}
