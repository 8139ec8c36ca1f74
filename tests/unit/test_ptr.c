/*
 * Global-pointer encoding: the rank/offset split for job sizes from 1 to 2^20,
 * boundaries (first/last rank, offset limits), and layout indexing at the
 * extremes of arrays of 2^50+ bytes over simulated large jobs.
 */
#include <gas.h>
#include "gas/internal.h"
#include "unit.h"

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
    /* The format spans 2^64 bytes and a job of nranks addresses nranks windows. */
    long double span = (long double)nranks * (long double)(1ull << ob);
    if (nranks >= (1ull << 13))
        UCHECK(span >= (long double)(1ull << 60), "nranks=%llu spans under 1 EiB",
               (unsigned long long)nranks);

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

int main(void)
{
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
    return unit_finish("test_ptr");
}
