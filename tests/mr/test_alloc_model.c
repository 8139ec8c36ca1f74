/*
 * test_alloc_model - random gas_alloc/gas_dealloc sequences checked against a
 * model, interleaved with collective gas_malloc/gas_free.
 *
 * The model holds every live block (offset, size, contents tag) sorted by
 * offset.  Each new block must be on this rank, aligned, inside the arenas'
 * part of the segment (at or above the floor that gas_memory_stats reports,
 * below the segment's end), overlap no live block and no gas_malloc'ed
 * array's share on this rank.  A block's contents must survive until it is
 * freed (every block is filled with its own pattern and checked before
 * gas_dealloc).  Every 500 operations the ranks together gas_malloc or
 * gas_free an array of random size, so the heap grows and shrinks in
 * between.  The numbers of gas_memory_stats must add up throughout.
 */
#include "check.h"

enum { OPS = 20000, MAXLIVE = 2000, MAXARR = 16, EPOCH = 500 };

struct blk {
    uint64_t off, size;
    int tag;
};

static struct blk live[MAXLIVE];
static int nlive;
static struct { gas_ptr_t p; uint64_t off, len; } arrays[MAXARR];
static int narr;
static int me;

static uint64_t block_size(test_rng_t *r)
{
    uint64_t x = rng_below(r, 100);
    if (x < 70)
        return rng_range(r, 1, 256);
    if (x < 97)
        return rng_range(r, 257, 32768);
    return rng_range(r, 32769, 2u << 20);
}

/* Index of the first live block with offset >= off. */
static int lower_bound(uint64_t off)
{
    int lo = 0, hi = nlive;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (live[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

static void check_block(const struct blk *b, const char *when)
{
    const uint8_t *p = gas_ptr_local(gas_ptr_make(me, b->off));
    size_t bad = pattern_find_mismatch(p, b->size, b->tag, me, 0);
    CHECK(bad == b->size, "%s: block at offset %" PRIu64 " (%" PRIu64 " bytes) changed at byte %zu",
          when, b->off, b->size, bad);
}

static void do_alloc(test_rng_t *r, int tag, uint64_t floor_hint)
{
    uint64_t size = block_size(r);
    gas_ptr_t p;
    if (!CHECK_OK(gas_alloc(size, &p)))
        return;
    uint64_t off = gas_ptr_offset(p);
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    CHECK(gas_ptr_rank(p) == me, "block on rank %d", gas_ptr_rank(p));
    CHECK(off % (size >= 16 ? 16 : 8) == 0, "block of %" PRIu64 " at %" PRIu64 " misaligned", size, off);
    CHECK(off >= st.reserved - st.arena_reserved && off + size <= st.reserved && off >= st.heap_end,
          "block [%" PRIu64 ", +%" PRIu64 ") outside the arenas' part [%" PRIu64 ", %" PRIu64 ")",
          off, size, st.reserved - st.arena_reserved, st.reserved);
    int i = lower_bound(off);
    if (i > 0)
        CHECK(!overlaps(live[i - 1].off, live[i - 1].size, off, size),
              "block at %" PRIu64 " overlaps the live block at %" PRIu64, off, live[i - 1].off);
    if (i < nlive)
        CHECK(!overlaps(live[i].off, live[i].size, off, size),
              "block at %" PRIu64 " overlaps the live block at %" PRIu64, off, live[i].off);
    for (int a = 0; a < narr; a++)
        CHECK(!overlaps(arrays[a].off, arrays[a].len, off, size),
              "block at %" PRIu64 " overlaps a gas_malloc'ed array at %" PRIu64, off, arrays[a].off);
    (void)floor_hint;
    memmove(live + i + 1, live + i, (size_t)(nlive - i) * sizeof *live);
    live[i] = (struct blk){off, size, tag};
    nlive++;
    pattern_fill(gas_ptr_local(p), size, tag, me, 0);
}

static void do_free(test_rng_t *r)
{
    int i = (int)rng_below(r, (uint64_t)nlive);
    check_block(&live[i], "before gas_dealloc");
    CHECK_OK(gas_dealloc(gas_ptr_make(me, live[i].off)));
    memmove(live + i, live + i + 1, (size_t)(nlive - i - 1) * sizeof *live);
    nlive--;
}

/* Collective: every rank draws the same choice from the same stream. */
static void do_collective(test_rng_t *shared)
{
    if (narr < MAXARR && (narr == 0 || rng_below(shared, 3) != 0)) {
        uint64_t per_rank = rng_range(shared, 1, 8u << 20);
        gas_ptr_t p;
        if (!CHECK_OK(gas_malloc((size_t)(per_rank * (uint64_t)t_nranks), &p)))
            return;
        gas_layout_t l = test_layout_of(p);
        for (int i = 0; i < nlive; i++)
            CHECK(!overlaps(live[i].off, live[i].size, l.local_offset, l.local_bytes),
                  "new array [%" PRIu64 ", +%" PRIu64 ") overlaps the live block at %" PRIu64,
                  l.local_offset, l.local_bytes, live[i].off);
        arrays[narr].p = p;
        arrays[narr].off = l.local_offset;
        arrays[narr++].len = l.local_bytes;
    } else if (narr > 0) {
        int a = (int)rng_below(shared, (uint64_t)narr);
        CHECK_OK(gas_free(arrays[a].p));
        arrays[a] = arrays[--narr];
    }
}

static void check_stats(void)
{
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    uint64_t held = 0;
    for (int i = 0; i < nlive; i++)
        held += live[i].size;
    CHECK(st.heap_end + st.unclaimed + st.arena_reserved == st.reserved,
          "heap end %" PRIu64 " + unclaimed %" PRIu64 " + arenas %" PRIu64 " != reserved %" PRIu64,
          st.heap_end, st.unclaimed, st.arena_reserved, st.reserved);
    CHECK(st.arena_used >= held && st.arena_used <= st.arena_reserved,
          "arena_used %" PRIu64 " for %" PRIu64 " bytes in live blocks (%" PRIu64 " held)",
          st.arena_used, held, st.arena_reserved);
    CHECK(st.backed <= st.reserved, "backed %" PRIu64 " > reserved", st.backed);
}

int main(void)
{
    test_begin("alloc_model");
    me = t_rank;
    test_rng_t r = rng_make(me, 1), shared = rng_make(0, 2);
    for (int op = 0; op < OPS; op++) {
        if (op % EPOCH == 0) {
            check_stats();
            do_collective(&shared);
        }
        if (nlive < MAXLIVE && (nlive == 0 || rng_below(&r, 100) < 55))
            do_alloc(&r, op, 0);
        else
            do_free(&r);
    }
    for (int i = 0; i < nlive; i++)
        check_block(&live[i], "at the end");
    while (nlive > 0)
        do_free(&r);
    check_stats();
    while (narr > 0)
        CHECK_OK(gas_free(arrays[--narr].p));
    return test_end();
}
