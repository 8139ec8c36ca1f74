/*
 * test_big_array - a real job allocates an array of tens of TiB of virtual
 * space (far more than the machine's memory), writes and reads elements
 * scattered over all of it from every rank, and stays small in memory.
 *
 * GAS_SEGMENT_SIZE defaults to 8 TiB here; the array takes 7 TiB of every
 * rank's segment (28 TiB at 4 ranks).  Every rank puts WRITES 8-byte
 * elements at random indices of the whole array (value: a function of the
 * index and the writer) and adds to a quarter of them with remote atomics;
 * the first and the last element are written too.  After a barrier every
 * rank regenerates every rank's indices and reads them back.  At the end
 * each rank's segment must have only about the pages touched backed
 * (gas_memory_stats), and its resident set must stay under 160 MiB.
 */
#include "check.h"

#include <sys/sysinfo.h>

#define TiB ((uint64_t)1 << 40)
enum { WRITES = 500 };

static uint64_t value_of(uint64_t idx, int writer)
{
    return mix64(idx * 0x9e3779b97f4a7c15ull + (uint64_t)writer + 1);
}

static uint64_t status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t v = 0;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':')
            v = strtoull(line + k + 1, NULL, 10);
    if (f)
        fclose(f);
    return v;
}

int main(void)
{
    setenv("GAS_SEGMENT_SIZE", "8t", 0);
    test_begin("big_array");
    int me = t_rank, n = t_nranks;
    uint64_t per_rank = 7 * TiB, nelems = per_rank / 8 * (uint64_t)n;
    struct sysinfo si;
    sysinfo(&si);
    uint64_t ram = (uint64_t)si.totalram * si.mem_unit;
    gas_ptr_t a;
    MUST(gas_malloc_dist(nelems, 8, GAS_DIST_BLOCK, 0, &a));
    CHECK(nelems * 8 > ram, "the array (%" PRIu64 " bytes) is not larger than memory (%" PRIu64 ")",
          nelems * 8, ram);
    gas_layout_t l = test_layout_of(a);
    if (me == 0)
        test_note("array of %" PRIu64 " TiB over %d ranks (memory: %" PRIu64 " GiB), %" PRIu64
                  " TiB per rank", nelems * 8 / TiB, n, ram >> 30, l.local_bytes / TiB);

    /* The extremes map where the layout says. */
    gas_ptr_t first = gas_layout_ptr(&l, 0), last = gas_layout_ptr(&l, nelems * 8 - 8);
    CHECK(gas_ptr_rank(first) == 0 && gas_ptr_rank(last) == n - 1 &&
              gas_ptr_offset(last) == l.local_offset + l.block - 8,
          "last element at rank %d offset %" PRIu64, gas_ptr_rank(last), gas_ptr_offset(last));
    gas_ptr_t via_index;
    MUST(gas_ptr_index(a, 8, nelems - 1, &via_index));
    CHECK(via_index == last, "gas_ptr_index disagrees with gas_layout_ptr at the last element");
    if (me == 0) {
        uint64_t v0 = 11, v1 = 22;
        MUST(gas_put(first, &v0, 8));
        MUST(gas_put(last, &v1, 8));
    }

    /* Scattered writes and atomics from every rank. */
    test_rng_t r = rng_make(me, 77);
    for (int k = 0; k < WRITES; k++) {
        uint64_t idx = 1 + rng_below(&r, nelems - 2), v = value_of(idx, me);
        gas_ptr_t p = gas_layout_ptr(&l, idx * 8);
        CHECK_OK(gas_put(p, &v, 8));
        if (k % 4 == 0)
            CHECK_OK(gas_atomic_add_u64(p, 1));
    }
    MUST(gas_barrier());

    /* Everyone reads everyone's writes. */
    for (int w = 0; w < n; w++) {
        test_rng_t rw = rng_make(w, 77);
        for (int k = 0; k < WRITES; k++) {
            uint64_t idx = 1 + rng_below(&rw, nelems - 2), got = 0;
            uint64_t want = value_of(idx, w) + (k % 4 == 0);
            CHECK_OK(gas_get(&got, gas_layout_ptr(&l, idx * 8), 8));
            CHECK(got == want, "element %" PRIu64 " written by rank %d: got %" PRIx64 ", want %" PRIx64,
                  idx, w, got, want);
        }
    }
    uint64_t g0 = 0, g1 = 0;
    CHECK_OK(gas_get(&g0, first, 8));
    CHECK_OK(gas_get(&g1, last, 8));
    CHECK(g0 == 11 && g1 == 22, "first/last element: %" PRIu64 "/%" PRIu64, g0, g1);
    MUST(gas_barrier());

    /* Small footprint: about one page per element that landed here. */
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    uint64_t touches = (uint64_t)WRITES * (uint64_t)n / (uint64_t)n + 2;
    uint64_t limit = (touches * 3 + 1024) * 4096 + (8u << 20);
    uint64_t rss = status_kib("VmRSS") * 1024, pte = status_kib("VmPTE") * 1024;
    CHECK(st.reserved >= 8 * TiB && st.heap_end >= l.local_offset + l.local_bytes,
          "reserved %" PRIu64 ", heap end %" PRIu64, st.reserved, st.heap_end);
    CHECK(st.backed <= limit, "%" PRIu64 " bytes backed for ~%" PRIu64 " touched pages (limit %" PRIu64 ")",
          st.backed, touches, limit);
    CHECK(rss < (160u << 20), "resident set %" PRIu64 " bytes", rss);
    test_note("reserved %" PRIu64 " TiB, backed %" PRIu64 " KiB, resident %" PRIu64
              " MiB, page tables %" PRIu64 " KiB, peers mapped %" PRIu64 " TiB",
              st.reserved / TiB, st.backed >> 10, rss >> 20, pte >> 10, st.peers_mapped / TiB);
    MUST(gas_free(a));
    return test_end();
}
