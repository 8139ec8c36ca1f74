/*
 * Global-pointer encoding: the rank/offset split for job sizes from 1 to 2^20,
 * boundaries (first/last rank, offset limits), and layout indexing at the
 * extremes of arrays of 2^50+ bytes over simulated large jobs: the layouts
 * are planned by the real planner (gas_gs_plan) and every probed pointer is
 * resolved back to its array index by the real resolver (gas_gs_resolve).
 */
#include <gas.h>
#include "gas/internal.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "unit.h"

#include <string.h>

static void use_split(uint64_t nranks)
{
    unsigned rb, ob;
    gas_gs_split_compute(nranks, &rb, &ob);
    gas_ptr_split_.rank_bits = rb;
    gas_ptr_split_.offset_bits = ob;
    gas_ptr_split_.offset_mask = (1ull << ob) - 1;
}

static void check_split(uint64_t nranks, unsigned want_rank_bits)
{
    unsigned rb, ob;
    gas_gs_split_compute(nranks, &rb, &ob);
    UCHECK(rb == want_rank_bits, "nranks=%llu: rank bits %u, want %u", (unsigned long long)nranks,
           rb, want_rank_bits);
    UCHECK(rb + ob == 64, "nranks=%llu: bits do not add up", (unsigned long long)nranks);
    UCHECK((1ull << rb) >= nranks || rb == 64, "nranks=%llu: %u bits cannot count the ranks",
           (unsigned long long)nranks, rb);
    UCHECK(ob <= GAS_PTR_MAX_OFFSET_BITS, "offset bits %u above the cap", ob);
    /*
     * The format spans 2^64 bytes; a job of nranks addresses nranks windows.
     * From 8 ranks up (up to 2^20) that is at least 1 EiB; smaller jobs are
     * capped by what one process can map (2^57 bytes a rank).
     */
    long double span = (long double)nranks * (long double)(1ull << ob);
    if (nranks >= 8)
        UCHECK(span >= (long double)(1ull << 60), "nranks=%llu spans under 1 EiB",
               (unsigned long long)nranks);
    UCHECK(ob >= 44, "nranks=%llu: a window of 2^%u bytes is under 16 TiB",
           (unsigned long long)nranks, ob);

    use_split(nranks);
    uint64_t last = nranks - 1, maxoff = (1ull << ob) - 1;
    gas_ptr_t p = gas_ptr_make((int)last, maxoff);
    UCHECK(gas_ptr_rank(p) == (int)last && gas_ptr_offset(p) == maxoff,
           "nranks=%llu: last rank/offset round trip", (unsigned long long)nranks);
    p = gas_ptr_make(0, 1);
    UCHECK(gas_ptr_rank(p) == 0 && gas_ptr_offset(p) == 1, "first rank round trip");
    UCHECK(gas_ptr_make(0, 0) == GAS_NULL, "rank 0 offset 0 is GAS_NULL");
    /* An offset past the window does not spill into the rank bits. */
    p = gas_ptr_make((int)last, maxoff + 1);
    UCHECK(gas_ptr_rank(p) == (int)last, "offset overflow spilled into the rank");
}

static void check_layout_extremes(uint64_t nranks, uint64_t nbytes, uint64_t block)
{
    use_split(nranks);
    gas_layout_t l = {.nbytes = nbytes, .block = block, .local_offset = 65536,
                      .nranks = (int)nranks, .dist = GAS_DIST_BLOCK};
    uint64_t nchunks = (nbytes + block - 1) / block;
    l.local_bytes = (nchunks + nranks - 1) / nranks * block;
    uint64_t probes[] = {0, 1, block - 1, block, nbytes / 2, nbytes - block, nbytes - 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint64_t b = probes[i];
        gas_ptr_t p = gas_layout_ptr(&l, b);
        uint64_t chunk = b / block;
        uint64_t owner = chunk % nranks;
        uint64_t off = 65536 + (chunk / nranks) * block + b % block;
        UCHECK((uint64_t)gas_ptr_rank(p) == owner && gas_ptr_offset(p) == off,
               "nranks=%llu byte %llu: got rank %d offset %llu, want %llu/%llu",
               (unsigned long long)nranks, (unsigned long long)b, gas_ptr_rank(p),
               (unsigned long long)gas_ptr_offset(p), (unsigned long long)owner,
               (unsigned long long)off);
        UCHECK(off < (1ull << gas_ptr_split_.offset_bits), "offset outside the window");
    }
}

/*
 * Plan nelems x elem over a simulated job of nranks whose segments fill the
 * pointer window, then map indices to (rank, offset) at the extremes and
 * resolve each pointer back to its index.
 */
static void check_plan_extremes(uint64_t nranks, uint64_t nelems, size_t elem, gas_dist_t dist,
                                uint64_t block_elems)
{
    use_split(nranks);
    uint64_t window = 1ull << gas_ptr_split_.offset_bits;
    gas_layout_t l;
    const char *why = "";
    gas_status_t st = gas_gs_plan(nranks, window, nelems, elem, dist, block_elems, &l, &why);
    UCHECK(st == GAS_OK, "plan of %llu x %zu over %llu ranks: %s", (unsigned long long)nelems,
           elem, (unsigned long long)nranks, why);
    if (st != GAS_OK)
        return;
    l.local_offset = 65536;
    l.base = gas_ptr_make(0, l.local_offset);
    UCHECK(l.local_offset + l.local_bytes <= window, "the array does not fit the window");
    /* The resolver's view of the job: this one array below the heap's end. */
    gas_gs.nranks = (int)nranks;
    gas_gs.allocs = &l;
    gas_gs.nallocs = 1;
    gas_gs.heap.end = window;
    uint64_t n = l.nbytes, b = l.block;
    uint64_t probes[] = {0, elem - 1, b - 1, b, b * nranks - 1, b * nranks, n / 2, n / 3 * 2,
                         n - b, n - elem, n - 1};
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        uint64_t idx = probes[i];
        if (idx >= n)
            continue;
        gas_ptr_t p = gas_layout_ptr(&l, idx);
        uint64_t chunk = idx / b;
        UCHECK((uint64_t)gas_ptr_rank(p) == chunk % nranks &&
               gas_ptr_offset(p) == 65536 + chunk / nranks * b + idx % b,
               "%llu ranks, byte %llu: rank %d offset %llu", (unsigned long long)nranks,
               (unsigned long long)idx, gas_ptr_rank(p), (unsigned long long)gas_ptr_offset(p));
        UCHECK(gas_ptr_offset(p) - 65536 < l.local_bytes, "byte %llu lies past local_bytes %llu",
               (unsigned long long)idx, (unsigned long long)l.local_bytes);
        struct gas_gs_span sp;
        st = gas_gs_resolve("test", "pointer", p, 1, &sp);
        UCHECK(st == GAS_OK && sp.l == &l && sp.idx == idx,
               "%llu ranks: byte %llu resolved to %llu (%s)", (unsigned long long)nranks,
               (unsigned long long)idx, (unsigned long long)sp.idx, gas_last_error());
        struct gas_gs_piece pc = gas_gs_piece_at(&sp, sp.idx, n - idx);
        UCHECK(pc.rank == gas_ptr_rank(p) && pc.off == gas_ptr_offset(p) && pc.len >= 1,
               "piece at byte %llu", (unsigned long long)idx);
    }
    /* One past the end is not inside; a range running past the end is refused. */
    struct gas_gs_span sp;
    gas_ptr_t last = gas_layout_ptr(&l, n - 1);
    UCHECK(gas_gs_resolve("test", "pointer", last, 2, &sp) == GAS_ERR_BOUNDS, "range past the end");
    gas_gs.allocs = NULL;
    gas_gs.nallocs = 0;
}

/*
 * A block larger than the array (or than what is left of it for rank 0)
 * reserves only what rank 0 holds, and the resolver refuses pointers into
 * the ranks that hold nothing, however large the block.
 */
static void check_big_blocks(void)
{
    use_split(16);
    uint64_t window = 1ull << gas_ptr_split_.offset_bits;
    gas_layout_t l;
    const char *why = "";
    UCHECK(gas_gs_plan(4, 1ull << 30, 80, 1, GAS_DIST_BLOCK_CYCLIC, 1ull << 27, &l, &why) == GAS_OK &&
               l.local_bytes == 80,
           "80 bytes in 128 MiB blocks reserve %llu bytes per rank, not 80",
           (unsigned long long)l.local_bytes);
    UCHECK(gas_gs_plan(16, window, 80, 1, GAS_DIST_BLOCK_CYCLIC, 1ull << 61, &l, &why) == GAS_OK &&
               l.local_bytes == 80,
           "80 bytes in 2^61-byte blocks: %s, %llu bytes", why, (unsigned long long)l.local_bytes);
    l.local_offset = 65536;
    l.base = gas_ptr_make(0, 65536);
    gas_gs.nranks = 16;
    gas_gs.allocs = &l;
    gas_gs.nallocs = 1;
    gas_gs.heap.end = window;
    struct gas_gs_span sp;
    UCHECK(gas_gs_resolve("test", "pointer", gas_ptr_make(0, 65536 + 79), 1, &sp) == GAS_OK &&
               sp.idx == 79,
           "the last byte of an array in one huge block");
    for (int r = 1; r < 16; r++)
        UCHECK(gas_gs_resolve("test", "pointer", gas_ptr_make(r, 65536 + 8), 1, &sp) == GAS_ERR_BOUNDS,
               "rank %d holds nothing of the array, but a pointer there resolved", r);
    gas_gs.allocs = NULL;
    gas_gs.nallocs = 0;
    /* 2.5 blocks over 2 ranks: rank 0 holds 1.5 of them, and reserves that. */
    UCHECK(gas_gs_plan(2, 1ull << 30, 5 * 1024, 1, GAS_DIST_BLOCK_CYCLIC, 2048, &l, &why) == GAS_OK &&
               l.local_bytes == 2048 + 1024,
           "2.5 blocks over 2 ranks reserve %llu bytes", (unsigned long long)l.local_bytes);
    /* 3.5 blocks over 2 ranks: the partial one is rank 1's; rank 0 holds 2 full ones. */
    UCHECK(gas_gs_plan(2, 1ull << 30, 7 * 1024, 1, GAS_DIST_BLOCK_CYCLIC, 2048, &l, &why) == GAS_OK &&
               l.local_bytes == 4096,
           "3.5 blocks over 2 ranks reserve %llu bytes", (unsigned long long)l.local_bytes);
    /* Only what rank 0 holds must fit the segment. */
    UCHECK(gas_gs_plan(2, 3000, 5 * 1024, 1, GAS_DIST_BLOCK_CYCLIC, 2048, &l, &why) == GAS_ERR_NOSPACE,
           "3 KiB per rank in a 3000-byte segment");
    UCHECK(gas_gs_plan(2, 3072, 5 * 1024, 1, GAS_DIST_BLOCK_CYCLIC, 2048, &l, &why) == GAS_OK,
           "3 KiB per rank in a 3 KiB segment: %s", why);
    check_plan_extremes(2, 5 * 1024, 1, GAS_DIST_BLOCK_CYCLIC, 2048);
    check_plan_extremes(5, 1000003, 1, GAS_DIST_BLOCK_CYCLIC, 4096);
}

int main(void)
{
    gas_rt_error_set_abort(0);
    gas_rt_log_level_ = GAS_LOG_FATAL;
    check_split(1, 7);
    check_split(2, 7);
    check_split(3, 7);
    check_split(128, 7);
    check_split(129, 8);
    check_split(1ull << 16, 16);
    check_split((1ull << 16) + 1, 17);
    check_split(1ull << 20, 20);
    check_split((1ull << 20) - 1, 20);
    /* 2^50 bytes (1 PiB) block-distributed over 2^20 ranks: 1 GiB per rank. */
    check_layout_extremes(1ull << 20, 1ull << 50, 1ull << 30);
    /* 2^60 bytes (1 EiB) over 2^20 ranks: 1 TiB per rank fits a 2^44 window. */
    check_layout_extremes(1ull << 20, 1ull << 60, 1ull << 40);
    /* Block-cyclic with 4 KiB blocks over 3 ranks, 2^52 bytes. */
    check_layout_extremes(3, 1ull << 52, 4096);
    /* Cyclic 8-byte elements over 65536 ranks, 2^50 bytes. */
    check_layout_extremes(1ull << 16, 1ull << 50, 8);
    /* The planner and resolver at full scale. */
    check_plan_extremes(1ull << 20, 1ull << 50, 1, GAS_DIST_BLOCK, 0);            /* 1 PiB, bytes */
    check_plan_extremes(1ull << 20, 1ull << 57, 8, GAS_DIST_BLOCK, 0);            /* 1 EiB of u64 */
    check_plan_extremes(1ull << 20, 1ull << 57, 8, GAS_DIST_CYCLIC, 0);
    check_plan_extremes((1ull << 20) - 3, (1ull << 50) + 12345, 16, GAS_DIST_BLOCK_CYCLIC, 4096);
    check_plan_extremes(3, 1ull << 52, 8, GAS_DIST_BLOCK_CYCLIC, 1ull << 20);
    check_plan_extremes(128, (1ull << 58) / 24, 24, GAS_DIST_BLOCK, 0);           /* 256 PiB of 24-byte structs */
    check_big_blocks();
    /* Too large for the job's segments, and overflowing 64 bits, are refused by the planner. */
    use_split(1ull << 20);
    gas_layout_t l;
    const char *why = "";
    UCHECK(gas_gs_plan(1ull << 20, 1ull << 44, 1ull << 62, 8, GAS_DIST_BLOCK, 0, &l, &why) ==
           GAS_ERR_OVERFLOW, "2^65 bytes");
    UCHECK(gas_gs_plan(4, 1ull << 40, 1ull << 60, 1, GAS_DIST_BLOCK, 0, &l, &why) == GAS_ERR_NOSPACE,
           "1 EiB over 4 ranks of 1 TiB");
    return unit_finish("test_ptr");
}
