/*
 * array.c - distributed arrays: the collective allocator over the symmetric
 * heap and the table of layouts that every rank holds.
 */
#include "internal.h"
#include "runtime/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAS_GS_ALLOC_ALIGN 64u

static void human(char *buf, size_t cap, uint64_t n)
{
    const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)n;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

gas_status_t gas_gs_resolve(const char *call, const char *what, gas_ptr_t p, uint64_t n,
                            const gas_layout_t **layout_p, uint64_t *index_p)
{
    int rank = gas_ptr_rank(p);
    uint64_t off = gas_ptr_offset(p);
    if ((unsigned)rank >= (unsigned)gas_gs.nranks)
        return gas_rt_error(GAS_ERR_RANK, call, "%s 0x%llx names rank %d, but the job has %d ranks",
                            what, (unsigned long long)p, rank, gas_gs.nranks);
    /* Last allocation that starts at or below off. */
    size_t lo = 0, hi = gas_gs.nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (gas_gs.allocs[mid].local_offset <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    const gas_layout_t *l = lo ? &gas_gs.allocs[lo - 1] : NULL;
    uint64_t idx = 0;
    int inside = 0;
    if (l && off - l->local_offset < l->local_bytes && rank < l->nranks) {
        uint64_t rel = off - l->local_offset;
        uint64_t chunk = (rel / l->block) * (uint64_t)l->nranks + (uint64_t)rank;
        idx = chunk * l->block + rel % l->block;
        inside = idx < l->nbytes;
    }
    if (!inside)
        return gas_rt_error(GAS_ERR_BOUNDS, call,
                            "%s 0x%llx (rank %d, offset %llu) is outside every gas_malloc'ed array",
                            what, (unsigned long long)p, rank, (unsigned long long)off);
    if (n > l->nbytes - idx)
        return gas_rt_error(GAS_ERR_BOUNDS, call,
                            "%s 0x%llx + %llu bytes runs past the end of its %llu-byte array "
                            "(it starts at byte %llu)",
                            what, (unsigned long long)p, (unsigned long long)n,
                            (unsigned long long)l->nbytes, (unsigned long long)idx);
    *layout_p = l;
    *index_p = idx;
    return GAS_OK;
}

/* Work out a layout; GAS_OK or a usage status with *why_p set. */
static gas_status_t plan(uint64_t nelems, size_t elem, gas_dist_t dist, uint64_t block_elems,
                         gas_layout_t *l, const char **why_p)
{
    uint64_t P = (uint64_t)gas_gs.nranks;
    memset(l, 0, sizeof *l);
    if (elem == 0) {
        *why_p = "elem_size is 0";
        return GAS_ERR_INVALID;
    }
    if (nelems > UINT64_MAX / elem) {
        *why_p = "nelems * elem_size overflows 64 bits";
        return GAS_ERR_OVERFLOW;
    }
    uint64_t n = nelems * elem, block;
    switch (dist) {
    case GAS_DIST_BLOCK:
        block = (nelems / P + (nelems % P != 0)) * elem;
        if (elem == 1)  /* gas_malloc: 8-byte words never straddle two owners */
            block = block / 8 * 8 + (block % 8 ? 8 : 0);
        break;
    case GAS_DIST_CYCLIC:
        block = elem;
        break;
    case GAS_DIST_BLOCK_CYCLIC:
        if (block_elems == 0) {
            *why_p = "block_elems is 0";
            return GAS_ERR_INVALID;
        }
        if (block_elems > UINT64_MAX / elem) {
            *why_p = "block_elems * elem_size overflows 64 bits";
            return GAS_ERR_OVERFLOW;
        }
        block = block_elems * elem;
        break;
    default:
        *why_p = "unknown distribution";
        return GAS_ERR_INVALID;
    }
    if (block == 0)
        block = 8;
    uint64_t nchunks = n / block + (n % block != 0);
    uint64_t rounds = nchunks / P + (nchunks % P != 0);
    if (rounds > gas_gs.seg.size / block + 1) {
        *why_p = "too large for the segment";
        return GAS_ERR_NOSPACE;
    }
    l->nbytes = n;
    l->block = block;
    l->local_bytes = rounds * block;
    l->nranks = (int)P;
    l->dist = dist;
    return GAS_OK;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static gas_status_t insert_layout(const gas_layout_t *l)
{
    if (gas_gs.nallocs == gas_gs.allocs_cap) {
        size_t ncap = gas_gs.allocs_cap ? gas_gs.allocs_cap * 2 : 16;
        gas_layout_t *n = realloc(gas_gs.allocs, ncap * sizeof *n);
        if (n == NULL)
            return GAS_ERR_NOMEM;
        gas_gs.allocs = n;
        gas_gs.allocs_cap = ncap;
    }
    size_t i = gas_gs.nallocs;
    while (i > 0 && gas_gs.allocs[i - 1].local_offset > l->local_offset) {
        gas_gs.allocs[i] = gas_gs.allocs[i - 1];
        i--;
    }
    gas_gs.allocs[i] = *l;
    gas_gs.nallocs++;
    return GAS_OK;
}

static gas_status_t malloc_common(const char *call, uint64_t nelems, size_t elem,
                                  gas_dist_t dist, uint64_t block_elems, gas_ptr_t *array_p)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if (array_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "array_p is NULL");
    gas_layout_t l;
    const char *why = "";
    gas_status_t planned = plan(nelems, elem, dist, block_elems, &l, &why);
    /* Every rank takes part in the check, valid arguments or not, so nobody hangs. */
    uint64_t h = mix(mix(mix(mix(0x6761735f6d616c6cull, nelems), elem), (uint64_t)dist),
                     dist == GAS_DIST_BLOCK_CYCLIC ? block_elems : 0);
    int agree = 0;
    st = gas_gs_barrier_check(call, h, &agree);
    if (st != GAS_OK)
        return st;
    if (!agree)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "the ranks passed different arguments (this rank: %llu x %zu bytes, "
                            "distribution %d); all ranks must pass the same",
                            (unsigned long long)nelems, elem, (int)dist);
    char need[32], fr[32], big[32], seg[32];
    if (planned == GAS_ERR_NOSPACE) {
        uint64_t total = 0, largest = 0;
        gas_al_heap_stats(&gas_gs.heap, &total, &largest, NULL);
        human(need, sizeof need, nelems > UINT64_MAX / elem ? UINT64_MAX : nelems * elem);
        human(fr, sizeof fr, total);
        human(seg, sizeof seg, gas_gs.seg.size);
        return gas_rt_error(GAS_ERR_NOSPACE, call,
                            "cannot allocate %s over %d ranks: the symmetric heap has %s free per "
                            "rank; raise GAS_SEGMENT_SIZE (now %s)",
                            need, gas_gs.nranks, fr, seg);
    }
    if (planned != GAS_OK)
        return gas_rt_error(planned, call, "%s", why);
    if (l.nbytes == 0) {
        *array_p = GAS_NULL;
        return GAS_OK;
    }
    uint64_t want = (l.local_bytes + GAS_GS_ALLOC_ALIGN - 1) / GAS_GS_ALLOC_ALIGN * GAS_GS_ALLOC_ALIGN;
    uint64_t off;
    st = gas_al_heap_alloc(&gas_gs.heap, want, GAS_GS_ALLOC_ALIGN, &off);
    if (st == GAS_ERR_NOSPACE) {
        uint64_t total = 0, largest = 0;
        gas_al_heap_stats(&gas_gs.heap, &total, &largest, NULL);
        human(need, sizeof need, want);
        human(fr, sizeof fr, total);
        human(big, sizeof big, largest);
        human(seg, sizeof seg, gas_gs.seg.size);
        return gas_rt_error(GAS_ERR_NOSPACE, call,
                            "cannot allocate %s per rank (%llu bytes over %d ranks): the symmetric "
                            "heap has %s free, the largest free block is %s; raise "
                            "GAS_SEGMENT_SIZE (now %s)",
                            need, (unsigned long long)l.nbytes, gas_gs.nranks, fr, big, seg);
    }
    if (st != GAS_OK)
        return gas_rt_error(st, call, "the heap's bookkeeping ran out of memory");
    l.local_offset = off;
    l.base = gas_ptr_make(0, off);
    st = insert_layout(&l);
    if (st != GAS_OK) {
        gas_al_heap_free(&gas_gs.heap, off);
        return gas_rt_error(st, call, "no memory for the allocation table");
    }
    *array_p = l.base;
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_malloc(size_t nbytes, gas_ptr_t *array_p)
{
    return malloc_common("gas_malloc", nbytes, 1, GAS_DIST_BLOCK, 0, array_p);
}

GAS_EXPORT gas_status_t gas_malloc_dist(uint64_t nelems, size_t elem_size, gas_dist_t dist,
                                        uint64_t block_elems, gas_ptr_t *array_p)
{
    return malloc_common("gas_malloc_dist", nelems, elem_size, dist, block_elems, array_p);
}

GAS_EXPORT gas_status_t gas_free(gas_ptr_t array)
{
    gas_status_t st = gas_gs_check("gas_free");
    if (st != GAS_OK)
        return st;
    int agree = 0;
    st = gas_gs_barrier_check("gas_free", mix(0x6761735f66726565ull, array), &agree);
    if (st != GAS_OK)
        return st;
    if (!agree)
        return gas_rt_error(GAS_ERR_INVALID, "gas_free",
                            "the ranks passed different pointers (this rank: 0x%llx)",
                            (unsigned long long)array);
    if (array == GAS_NULL)
        return GAS_OK;
    size_t i = 0;
    while (i < gas_gs.nallocs && gas_gs.allocs[i].base != array)
        i++;
    if (i == gas_gs.nallocs)
        return gas_rt_error(GAS_ERR_INVALID, "gas_free",
                            "0x%llx is not the start of a gas_malloc'ed array",
                            (unsigned long long)array);
    gas_al_heap_free(&gas_gs.heap, gas_gs.allocs[i].local_offset);
    memmove(gas_gs.allocs + i, gas_gs.allocs + i + 1,
            (gas_gs.nallocs - i - 1) * sizeof *gas_gs.allocs);
    gas_gs.nallocs--;
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_layout(gas_ptr_t p, gas_layout_t *layout_p)
{
    gas_status_t st = gas_gs_check("gas_layout");
    const gas_layout_t *l;
    uint64_t idx;
    if (st == GAS_OK && layout_p == NULL)
        st = gas_rt_error(GAS_ERR_INVALID, "gas_layout", "layout_p is NULL");
    if (st == GAS_OK)
        st = gas_gs_resolve("gas_layout", "pointer", p, 0, &l, &idx);
    if (st == GAS_OK)
        *layout_p = *l;
    return st;
}
