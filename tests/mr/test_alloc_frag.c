/*
 * test_alloc_frag - a gas_alloc that fails because the arenas' free memory
 * is fragmented, not because it is used, says so.  The segment is filled
 * with 64 KiB blocks, all are freed (the arenas keep the space: nothing is
 * in use), then ever larger blocks are asked for until one fails with
 * GAS_ERR_NOSPACE: its message says how much is in live blocks and that no
 * free range of that size is left.  Before the fix it said only that the
 * segment was full and to raise GAS_SEGMENT_SIZE, with arena_used at 0.
 * Run with a small GAS_SEGMENT_SIZE (tests/manifest).
 */
#include "check.h"

#define SMALL (64u << 10)
#define MAX_BLOCKS 8192

int main(void)
{
    test_begin("alloc_frag");
    static gas_ptr_t b[MAX_BLOCKS];
    int k = 0;
    while (k < MAX_BLOCKS && gas_alloc(SMALL, &b[k]) == GAS_OK)
        k++;
    CHECK(k > 0 && k < MAX_BLOCKS, "%d blocks of %u bytes filled the segment", k, SMALL);
    for (int i = 0; i < k; i++)
        CHECK_OK(gas_dealloc(b[i]));
    gas_mem_stats_t ms;
    MUST(gas_memory_stats(&ms));
    gas_status_t st = GAS_OK;
    size_t size = 1u << 20;
    for (; size <= ms.arena_reserved && st == GAS_OK; size *= 2) {
        gas_ptr_t x;
        st = gas_alloc(size, &x);
        if (st == GAS_OK)
            CHECK_OK(gas_dealloc(x));
    }
    if (st == GAS_OK) {
        test_note("every block up to the arenas' size fitted: no fragmentation to report");
    } else {
        const char *msg = gas_last_error();
        CHECK(st == GAS_ERR_NOSPACE, "gas_alloc of %zu bytes: %d (%s)", size / 2, (int)st,
              gas_strerror(st));
        CHECK(strstr(msg, "of it in live blocks") && strstr(msg, "no free range of") &&
                  strstr(msg, "fragmented"),
              "the message does not say how much is in use and that the free memory is fragmented: "
              "\"%s\"", msg);
    }
    return test_end();
}
