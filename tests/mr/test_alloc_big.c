/*
 * test_alloc_big - big gas_alloc blocks use the segment's space, not twice it.
 *
 * jemalloc pads each large block by a page and grows an arena by size
 * classes, so without care a 4 MiB block took an 8 MiB extent whose other
 * half no later 4 MiB block fitted: a 1 GiB segment held 128 such blocks.
 * Here, on a 256 MiB segment (GAS_SEGMENT_SIZE, unless set), each rank
 * allocates blocks of one size until GAS_ERR_NOSPACE, for 4, 2, 3 and 1 MiB
 * and 4 MiB + 100 bytes in turn (freeing each round's blocks before the
 * next, so later rounds reuse freed extents), and each round must place at
 * least 90% of the space that was free at the start in live blocks.  Every
 * block carries a pattern that the next rank reads back through gas_get, so
 * an overlap or a block outside the segment shows as a mismatch.
 *
 * First, on the fresh segment: a block of half the room, freed, lies at the
 * bottom of the arenas' space, right above the unclaimed middle; a block
 * 16 MiB bigger must then fit (the freed range grows down into the middle)
 * instead of failing with NOSPACE while most of the segment is free.
 */
#include "check.h"

#define MiB ((uint64_t)1 << 20)
enum { MAXBLK = 1024 };

static gas_ptr_t blk[MAXBLK];
static gas_ptr_t table;   /* per rank: MAXBLK block pointers (gas_malloc'ed) */

/* Pattern the first and last 64 KiB of blk[n] for round `round` (writing all of it
 * costs minutes here). */
static void mark(int n, uint64_t size, int round)
{
    uint64_t edge = size < 64 * 1024 ? size : 64 * 1024;
    char *p = gas_ptr_local(blk[n]);
    pattern_fill(p, edge, round * MAXBLK + n, t_rank, 0);
    pattern_fill(p + size - edge, edge, round * MAXBLK + n, t_rank, size - edge);
}

/* One round: fill with blocks of `size` bytes; returns how many fitted. */
static int fill(uint64_t size, int round)
{
    int n = 0;
    while (n < MAXBLK) {
        gas_status_t st = gas_alloc(size, &blk[n]);
        if (st != GAS_OK) {
            CHECK(st == GAS_ERR_NOSPACE, "gas_alloc(%" PRIu64 ") ended with %d (%s), not NOSPACE",
                  size, st, gas_last_error());
            break;
        }
        mark(n, size, round);
        n++;
    }
    return n;
}

/* The next rank reads back the ends of every block of this round. */
static void check_neighbour(int n, uint64_t size, int round)
{
    MUST(gas_put(test_at(table, (uint64_t)t_rank * (MAXBLK + 1) * 8), &n, sizeof n));
    MUST(gas_put(test_at(table, ((uint64_t)t_rank * (MAXBLK + 1) + 1) * 8), blk, (size_t)n * 8));
    MUST(gas_barrier());
    int from = (t_rank + 1) % t_nranks, theirs = 0;
    MUST(gas_get(&theirs, test_at(table, (uint64_t)from * (MAXBLK + 1) * 8), sizeof theirs));
    static gas_ptr_t ptrs[MAXBLK];
    static uint8_t buf[64 * 1024];
    uint64_t edge = size < sizeof buf ? size : sizeof buf;
    MUST(gas_get(ptrs, test_at(table, ((uint64_t)from * (MAXBLK + 1) + 1) * 8), (size_t)theirs * 8));
    for (int i = 0; i < theirs; i++) {
        MUST(gas_get(buf, ptrs[i], edge));
        CHECK(pattern_find_mismatch(buf, edge, round * MAXBLK + i, from, 0) == edge,
              "rank %d's block %d of %" PRIu64 " bytes: its start does not read back", from, i, size);
        MUST(gas_get(buf, test_at(ptrs[i], size - edge), edge));
        CHECK(pattern_find_mismatch(buf, edge, round * MAXBLK + i, from, size - edge) == edge,
              "rank %d's block %d of %" PRIu64 " bytes: its end does not read back", from, i, size);
    }
    MUST(gas_barrier());
}

/* A freed block at the bottom of the arenas' space and the middle below it serve a bigger one. */
static void grow_from_freed(uint64_t room, int round)
{
    uint64_t first = (room / 2) & ~(MiB - 1), second = first + 16 * MiB;
    MUST(gas_alloc(first, &blk[0]));
    CHECK_OK(gas_dealloc(blk[0]));
    gas_status_t st = gas_alloc(second, &blk[0]);
    CHECK(st == GAS_OK, "a %" PRIu64 " MiB block after freeing one of %" PRIu64 " MiB (room %" PRIu64
          " MiB): %d (%s)", second / MiB, first / MiB, room / MiB, st, gas_last_error());
    int n = st == GAS_OK;
    if (n)
        mark(0, second, round);
    test_note("%" PRIu64 " MiB block, freed, then %" PRIu64 " MiB: %s", first / MiB, second / MiB,
              n ? "fits" : "refused");
    check_neighbour(n, second, round);
    if (n)
        CHECK_OK(gas_dealloc(blk[0]));
    MUST(gas_barrier());
}

int main(void)
{
    setenv("GAS_SEGMENT_SIZE", "256m", 0);
    test_begin("alloc_big");
    MUST(gas_malloc((size_t)t_nranks * (MAXBLK + 1) * 8, &table));
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    uint64_t room = st.reserved - st.heap_end;   /* what the arenas may have, at most */
    const uint64_t sizes[] = {1 * MiB, 2 * MiB, 3 * MiB, 4 * MiB, 4 * MiB + 100, 16 * MiB};
    grow_from_freed(room, (int)(sizeof sizes / sizeof sizes[0]));
    for (int round = 0; round < (int)(sizeof sizes / sizeof sizes[0]); round++) {
        uint64_t size = sizes[round];
        int n = fill(size, round);
        MUST(gas_memory_stats(&st));
        double share = (double)n * (double)size / (double)room;
        test_note("%" PRIu64 "-byte blocks: %d fit, %.1f%% of %" PRIu64 " MiB, arenas hold %" PRIu64
                  " MiB", size, n, 100 * share, room / MiB, st.arena_reserved / MiB);
        CHECK(share >= 0.90, "only %d blocks of %" PRIu64 " bytes fitted (%.1f%% of the %" PRIu64
              " MiB the arenas could have; %" PRIu64 " MiB held)", n, size, 100 * share, room / MiB,
              st.arena_reserved / MiB);
        check_neighbour(n, size, round);
        for (int i = 0; i < n; i++)
            CHECK_OK(gas_dealloc(blk[i]));
        MUST(gas_barrier());
    }
    return test_end();
}
