/*
 * test_heap_used - gas_memory_stats' heap_used counts the program's
 * gas_malloc arrays only (gas.h, gas_mem_stats_t).
 *
 * Right after gas_init, with nothing gas_malloc'ed, heap_used is 0 and the
 * world team's collective scratch (GAS_COLL_SCRATCH, from the same heap)
 * shows in heap_internal instead (before, heap_used held it: a program
 * that had allocated nothing saw heap_used > 0).  Then heap_used follows
 * the arrays exactly: each adds its layout's local_bytes rounded up to 64,
 * the same on every rank, and freeing them brings it back to 0, while
 * heap_internal stays what it was.
 */
#include "check.h"

static gas_mem_stats_t stats(void)
{
    gas_mem_stats_t s;
    memset(&s, 0xff, sizeof s);
    MUST(gas_memory_stats(&s));
    return s;
}

static uint64_t round64(uint64_t n)
{
    return (n + 63) / 64 * 64;
}

int main(void)
{
    test_begin("heap_used");
    gas_mem_stats_t s0 = stats();
    CHECK(s0.heap_used == 0, "nothing gas_malloc'ed, yet heap_used is %" PRIu64
          " (heap_internal %" PRIu64 ")", s0.heap_used, s0.heap_internal);
    CHECK(s0.heap_internal > 0 && s0.heap_internal <= s0.heap_end,
          "the world team's scratch: heap_internal %" PRIu64 " (heap end %" PRIu64 ")",
          s0.heap_internal, s0.heap_end);

    /* three arrays of odd sizes and layouts */
    gas_ptr_t a = GAS_NULL, b = GAS_NULL, c = GAS_NULL;
    MUST(gas_malloc(1000 * (size_t)t_nranks + 3, &a));
    MUST(gas_malloc_dist(777, 24, GAS_DIST_CYCLIC, 0, &b));
    MUST(gas_malloc_dist(5000, 8, GAS_DIST_BLOCK_CYCLIC, 7, &c));
    gas_layout_t la = test_layout_of(a), lb = test_layout_of(b), lc = test_layout_of(c);
    uint64_t want = round64(la.local_bytes) + round64(lb.local_bytes) + round64(lc.local_bytes);
    gas_mem_stats_t s1 = stats();
    CHECK(s1.heap_used == want, "three arrays of %" PRIu64 ", %" PRIu64 " and %" PRIu64
          " bytes per rank: heap_used %" PRIu64 ", want %" PRIu64, la.local_bytes, lb.local_bytes,
          lc.local_bytes, s1.heap_used, want);
    CHECK(s1.heap_internal == s0.heap_internal, "heap_internal moved from %" PRIu64 " to %" PRIu64
          " with the program's arrays", s0.heap_internal, s1.heap_internal);

    MUST(gas_free(b));
    gas_mem_stats_t s2 = stats();
    CHECK(s2.heap_used == want - round64(lb.local_bytes), "after freeing one: heap_used %" PRIu64
          ", want %" PRIu64, s2.heap_used, want - round64(lb.local_bytes));
    MUST(gas_free(a));
    MUST(gas_free(c));
    gas_mem_stats_t s3 = stats();
    CHECK(s3.heap_used == 0, "every array freed, yet heap_used is %" PRIu64, s3.heap_used);
    CHECK(s3.heap_internal == s0.heap_internal, "heap_internal %" PRIu64 " at the end, %" PRIu64
          " at the start", s3.heap_internal, s0.heap_internal);
    return test_end();
}
