/*
 * test_exhaust - the symmetric heap and the gas_alloc arenas fill the same
 * segment (GAS_SEGMENT_SIZE=64m here) to exhaustion from both sides.
 *
 *  1. Rank 0 takes 8 MiB with gas_alloc first, so the ranks' arenas differ.
 *  2. gas_malloc 2 MiB per rank until GAS_ERR_NOSPACE: every rank must stop
 *     at the same count (the heap's limit is agreed: the lowest arena floor),
 *     the message must name GAS_SEGMENT_SIZE, and the two sides must then
 *     nearly meet on rank 0.
 *  3. gas_alloc 1 MiB blocks until GAS_ERR_NOSPACE: the arenas cannot take
 *     the heap's space.  The message names GAS_SEGMENT_SIZE.
 *  4. gas_free the last three arrays: the heap shrinks, and gas_alloc can
 *     now take most of that space (a 1 MiB block needs a little more than
 *     1 MiB of extent, so up to about 1 MiB stays unclaimed).
 *  5. gas_malloc of 4 MiB per rank fails (the arenas hold the space now),
 *     with a message that says gas_alloc memory is in the way.
 *  6. Blocks freed with gas_dealloc are reused by later gas_allocs (the
 *     arenas keep their extents; they never hand them back).
 *  7. Everything freed, the arenas can grow down into the rest.
 * Data written to each side is checked at the end of each step, so an
 * overlap would show as corruption.
 */
#include "check.h"

#define MiB ((uint64_t)1 << 20)
enum { MAXARR = 64, MAXBLK = 128 };

static gas_ptr_t arr[MAXARR];
static int narr;
static gas_ptr_t blk[MAXBLK];
static int nblk;
static int me, n;

static void fill_arrays(void)
{
    for (int a = 0; a < narr; a++) {
        gas_layout_t l = test_layout_of(arr[a]);
        pattern_fill((uint8_t *)gas_ptr_local(gas_ptr_make(me, l.local_offset)), 2 * MiB, a, me, 0);
    }
}

static void check_sides(const char *when)
{
    for (int a = 0; a < narr; a++) {
        gas_layout_t l = test_layout_of(arr[a]);
        const uint8_t *p = gas_ptr_local(gas_ptr_make(me, l.local_offset));
        CHECK(pattern_find_mismatch(p, 2 * MiB, a, me, 0) == 2 * MiB, "%s: array %d corrupted", when, a);
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t *p = gas_ptr_local(blk[b]);
        CHECK(pattern_find_mismatch(p, MiB, 1000 + b, me, 0) == MiB, "%s: block %d corrupted", when, b);
    }
}

static int fill_blocks(void)
{
    int got = 0;
    while (nblk < MAXBLK) {
        gas_ptr_t p;
        gas_status_t st = gas_alloc(MiB, &p);
        if (st != GAS_OK) {
            CHECK(st == GAS_ERR_NOSPACE, "gas_alloc ended with %d (%s), not NOSPACE", st,
                  gas_last_error());
            CHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE") != NULL, "message: %s",
                  gas_last_error());
            break;
        }
        pattern_fill(gas_ptr_local(p), MiB, 1000 + nblk, me, 0);
        blk[nblk++] = p;
        got++;
    }
    return got;
}

/* Collective: gas_malloc 2 MiB per rank until NOSPACE; returns how many. */
static int fill_heap(const char *expect_in_message)
{
    int got = 0;
    while (narr < MAXARR) {
        gas_status_t st = gas_malloc((size_t)(2 * MiB * (uint64_t)n), &arr[narr]);
        if (st != GAS_OK) {
            CHECK(st == GAS_ERR_NOSPACE, "gas_malloc ended with %d (%s)", st, gas_last_error());
            CHECK(strstr(gas_last_error(), "GAS_SEGMENT_SIZE") != NULL &&
                      strstr(gas_last_error(), expect_in_message) != NULL,
                  "message lacks '%s': %s", expect_in_message, gas_last_error());
            break;
        }
        narr++;
        got++;
    }
    fill_arrays();
    return got;
}

/* Every rank must have seen the same count. */
static void same_everywhere(int v, const char *what)
{
    static gas_ptr_t box = GAS_NULL;
    if (box == GAS_NULL)
        MUST(gas_malloc((size_t)n * 8, &box));
    uint64_t mine = (uint64_t)v, got;
    MUST(gas_put(test_at(box, (uint64_t)me * 8), &mine, 8));
    MUST(gas_barrier());
    for (int r = 0; r < n; r++) {
        MUST(gas_get(&got, test_at(box, (uint64_t)r * 8), 8));
        CHECK(got == mine, "%s: rank %d saw %" PRIu64 ", this rank %d", what, r, got, v);
    }
    MUST(gas_barrier());
}

int main(void)
{
    setenv("GAS_SEGMENT_SIZE", "64m", 0);
    test_begin("exhaust");
    me = t_rank;
    n = t_nranks;
    gas_mem_stats_t st;
    same_everywhere(0, "start");   /* allocates its box first, below everything else */

    /* 1 */
    gas_ptr_t extra[8];
    int nextra = 0;
    if (me == 0)
        for (; nextra < 8; nextra++)
            MUST(gas_alloc(MiB, &extra[nextra]));
    MUST(gas_barrier());

    /* 2 */
    int h1 = fill_heap("gas_alloc memory");
    same_everywhere(h1, "arrays that fit");
    CHECK(h1 >= 4, "only %d arrays of 2 MiB fit", h1);
    MUST(gas_memory_stats(&st));
    if (me == 0)
        CHECK(st.unclaimed < 4 * MiB, "rank 0: %" PRIu64 " bytes unclaimed after the heap filled",
              st.unclaimed);
    test_note("heap full after %d arrays: heap end %" PRIu64 ", arenas hold %" PRIu64
              ", unclaimed %" PRIu64, h1, st.heap_end, st.arena_reserved, st.unclaimed);

    /* 3 */
    int a1 = fill_blocks();
    MUST(gas_memory_stats(&st));
    CHECK(st.heap_end <= st.reserved - st.arena_reserved, "the sides overlap: heap end %" PRIu64
          ", arenas from %" PRIu64, st.heap_end, st.reserved - st.arena_reserved);
    check_sides("after filling both sides");

    /* 4 */
    for (int k = 0; k < 3 && narr > 0; k++)
        MUST(gas_free(arr[--narr]));
    int a2 = fill_blocks();
    CHECK(a2 >= 3, "after freeing 6 MiB of heap the arenas took only %d more MiB", a2);
    MUST(gas_memory_stats(&st));
    CHECK(st.unclaimed < MiB + 64 * 1024, "%" PRIu64 " bytes unclaimed after the arenas filled",
          st.unclaimed);
    check_sides("after the arenas grew into freed heap space");

    /* 5 */
    gas_ptr_t p;
    gas_status_t s5 = gas_malloc((size_t)(4 * MiB * (uint64_t)n), &p);
    CHECK(s5 == GAS_ERR_NOSPACE && strstr(gas_last_error(), "gas_alloc memory") != NULL,
          "gas_malloc into the arenas' space returned %d: %s", s5, gas_last_error());

    /* 6 */
    int keep = nblk;
    for (int b = 0; b < keep; b++)
        CHECK_OK(gas_dealloc(blk[b]));
    nblk = 0;
    MUST(gas_memory_stats(&st));
    uint64_t held = st.arena_reserved;
    int again = fill_blocks();
    CHECK(again >= keep - 1, "only %d of %d freed 1 MiB blocks could be allocated again", again, keep);
    MUST(gas_memory_stats(&st));
    CHECK(st.arena_reserved <= held + 2 * MiB, "reuse grew the arenas from %" PRIu64 " to %" PRIu64,
          held, st.arena_reserved);
    check_sides("after reuse");
    test_note("arena blocks: %d then %d more after shrinking the heap, %d again after freeing", a1,
              a2, again);

    /* 7 */
    for (int b = 0; b < nblk; b++)
        CHECK_OK(gas_dealloc(blk[b]));
    nblk = 0;
    while (narr > 0)
        MUST(gas_free(arr[--narr]));
    gas_ptr_t big;
    CHECK_OK(gas_alloc(16 * MiB, &big));
    MUST(gas_memory_stats(&st));
    CHECK(st.heap_end + st.unclaimed + st.arena_reserved == st.reserved, "numbers do not add up");
    CHECK_OK(gas_dealloc(big));
    for (int i = 0; i < nextra; i++)
        CHECK_OK(gas_dealloc(extra[i]));
    return test_end();
}
