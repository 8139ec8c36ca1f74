/*
 * array.c - distributed arrays: the collective allocator over the symmetric
 * heap and the table of layouts that every rank holds.
 */
#include "internal.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GAS_GS_ALLOC_ALIGN 64u
#define GAS_GS_HEAP_GRAIN (2ull << 20) /* the heap's end moves in steps of this */

uint64_t gas_gs_segment_size(int rank)
{
    gas_tl_peer_t *peer;
    if (rank == gas_gs.rank)
        return gas_gs.seg.size;
    if (gas_tl_peer(rank, &peer) == GAS_OK && peer->size)
        return peer->size;
    return gas_gs.seg_min;
}

/*
 * The lowest offset of rank's gas_alloc memory, where this process can read
 * it (its own segment, or a node peer's header); else the heap's end (the
 * target's transport checks the segment's bounds).
 */
static uint64_t arena_floor(int rank)
{
    gas_tl_peer_t *peer;
    char *base = rank == gas_gs.rank ? gas_gs.seg.base
               : gas_tl_peer(rank, &peer) == GAS_OK ? peer->direct_base : NULL;
    if (base == NULL)
        return gas_gs.heap.end;
    return __atomic_load_n(&gas_al_seg_hdr(base)->arena_floor, __ATOMIC_ACQUIRE);
}

gas_status_t gas_gs_resolve(const char *call, const char *what, gas_ptr_t p, uint64_t n,
                            struct gas_gs_span *span_p)
{
    int rank = gas_ptr_rank(p);
    uint64_t off = gas_ptr_offset(p);
    if ((unsigned)rank >= (unsigned)gas_gs.nranks)
        return gas_rt_error(GAS_ERR_RANK, call, "%s 0x%llx names rank %d, but the job has %d ranks",
                            what, (unsigned long long)p, rank, gas_gs.nranks);
    if (off >= gas_gs.heap.end) {
        /* The arenas' side: raw bytes of the owner's gas_alloc memory. */
        uint64_t size = gas_gs_segment_size(rank), floor = arena_floor(rank);
        if (off >= size || n > size - off)
            return gas_rt_error(GAS_ERR_BOUNDS, call,
                                "%s 0x%llx + %llu bytes (rank %d, offset %llu) runs past the end "
                                "of rank %d's %llu-byte segment",
                                what, (unsigned long long)p, (unsigned long long)n, rank,
                                (unsigned long long)off, rank, (unsigned long long)size);
        if (off < floor)
            return gas_rt_error(GAS_ERR_BOUNDS, call,
                                "%s 0x%llx (rank %d, offset %llu) is outside every gas_malloc'ed "
                                "array and below rank %d's gas_alloc memory (offsets %llu and up)",
                                what, (unsigned long long)p, rank, (unsigned long long)off, rank,
                                (unsigned long long)floor);
        *span_p = (struct gas_gs_span){.l = NULL, .idx = off, .rank = rank};
        return GAS_OK;
    }
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
    if (l && off - l->local_offset < l->local_bytes && rank < l->nranks && l->nbytes != 0) {
        uint64_t rel = off - l->local_offset;
        uint64_t chunk = (rel / l->block) * (uint64_t)l->nranks + (uint64_t)rank;
        /* Checked before the product, which a huge block would overflow. */
        if (chunk <= (l->nbytes - 1) / l->block) {
            idx = chunk * l->block + rel % l->block;
            inside = idx < l->nbytes;
        }
    }
    if (!inside)
        return gas_rt_error(GAS_ERR_BOUNDS, call,
                            "%s 0x%llx (rank %d, offset %llu) is outside every gas_malloc'ed array%s",
                            what, (unsigned long long)p, rank, (unsigned long long)off,
                            off < GAS_AL_RESERVED_BYTES ? " (in the segment's reserved header)" : "");
    if (n > l->nbytes - idx)
        return gas_rt_error(GAS_ERR_BOUNDS, call,
                            "%s 0x%llx + %llu bytes runs past the end of its %llu-byte array "
                            "(it starts at byte %llu)",
                            what, (unsigned long long)p, (unsigned long long)n,
                            (unsigned long long)l->nbytes, (unsigned long long)idx);
    *span_p = (struct gas_gs_span){.l = l, .idx = idx, .rank = -1};
    return GAS_OK;
}

gas_status_t gas_gs_plan(uint64_t P, uint64_t seg_size, uint64_t nelems, size_t elem,
                         gas_dist_t dist, uint64_t block_elems, gas_layout_t *l,
                         const char **why_p)
{
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
    /* Each rank reserves what rank 0 holds, the most any rank does: full
     * chunks, but for the array's last chunk when it is rank 0's (a block
     * larger than the array reserves the array, not the block). */
    uint64_t last = block;
    if (nchunks != 0 && (rounds - 1) * P == nchunks - 1 && n % block != 0)
        last = n % block;
    if (rounds != 0 && (last > seg_size || rounds - 1 > (seg_size - last) / block)) {
        *why_p = "too large for the segment";
        return GAS_ERR_NOSPACE;
    }
    l->nbytes = n;
    l->block = block;
    l->local_bytes = rounds == 0 ? 0 : (rounds - 1) * block + last;
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

/* After the heap changed: publish its use by arrays, without libgas's own
 * blocks (gas_memory_stats reads it from any thread). */
static void heap_publish(void)
{
    uint64_t used = 0;
    gas_al_heap_stats(&gas_gs.heap, NULL, NULL, &used);
    uint64_t internal = __atomic_load_n(&gas_gs.heap_internal, __ATOMIC_RELAXED);
    __atomic_store_n(&gas_gs.heap_used, used > internal ? used - internal : 0, __ATOMIC_RELAXED);
}

/* The heap's end after a free: just above its top allocation, in grains. */
static void heap_shrink(void)
{
    heap_publish();
    uint64_t top = gas_al_heap_top(&gas_gs.heap);
    uint64_t end = top == gas_gs.heap.start ? top
                 : (top + GAS_GS_HEAP_GRAIN - 1) / GAS_GS_HEAP_GRAIN * GAS_GS_HEAP_GRAIN;
    if (end < gas_gs.heap.end && gas_al_heap_set_end(&gas_gs.heap, end) == GAS_OK)
        gas_al_space_settle(&gas_gs.space, end);
}

/* nbytes: the array's total (0: a block of `want` bytes per rank, sized by
 * the setting `sized_by`, which the hint then offers to lower). */
static gas_status_t nospace(const char *call, uint64_t want, uint64_t nbytes, const char *sized_by,
                            const char *why)
{
    char need[32], fr[32], big[32], hint[400], total_text[80] = "", lower[80] = "";
    uint64_t total = 0, largest = 0;
    gas_al_heap_stats(&gas_gs.heap, &total, &largest, NULL);
    gas_rt_format_bytes(need, sizeof need, want);
    gas_rt_format_bytes(fr, sizeof fr, total);
    gas_rt_format_bytes(big, sizeof big, largest);
    if (nbytes)
        snprintf(total_text, sizeof total_text, " (%llu bytes over %d ranks)",
                 (unsigned long long)nbytes, gas_gs.nranks);
    if (sized_by)
        snprintf(lower, sizeof lower, "lower %s or ", sized_by);
    return gas_rt_error(GAS_ERR_NOSPACE, call,
                        "cannot allocate %s per rank%s: the symmetric heap has %s free below its "
                        "end, the largest free block is %s, and %s; %s%s",
                        need, total_text, fr, big, why, lower, gas_gs_raise_hint(hint, sizeof hint));
}

/*
 * Find room for `want` bytes at the same offset on every rank.  When the heap
 * is full up to its end, the ranks agree to move the end up: each proposes
 * the same new end and reports the floor of its arenas; the smallest floor
 * decides for everyone (see alloc/space.h).  Collective only when growing,
 * and every rank takes that path together (the heaps are identical).
 */
static gas_status_t place_block(const char *call, uint64_t want, uint64_t nbytes,
                                const char *sized_by, uint64_t *off_p)
{
    gas_status_t st = gas_al_heap_alloc(&gas_gs.heap, want, GAS_GS_ALLOC_ALIGN, off_p);
    if (st != GAS_ERR_NOSPACE) {
        if (st != GAS_OK)
            return gas_rt_error(st, call, "the heap's bookkeeping ran out of memory");
        return GAS_OK;
    }
    uint64_t need, old_end = gas_gs.heap.end, lowest = 0;
    char why[200];
    if (gas_al_heap_need_end(&gas_gs.heap, want, GAS_GS_ALLOC_ALIGN, &need) != GAS_OK ||
        need > gas_gs.seg_min)
        return nospace(call, want, nbytes, sized_by, "the segment ends before the block would");
    uint64_t grain = need > UINT64_MAX - GAS_GS_HEAP_GRAIN ? need
                   : (need + GAS_GS_HEAP_GRAIN - 1) / GAS_GS_HEAP_GRAIN * GAS_GS_HEAP_GRAIN;
    uint64_t tries[2] = {grain < gas_gs.seg_min ? grain : gas_gs.seg_min, need};
    for (int k = 0; k < 2; k++) {
        if (k == 1 && (tries[1] == tries[0] || lowest < need))
            break;
        uint64_t floor = gas_al_space_reserve(&gas_gs.space, tries[k]);
        st = gas_gs_barrier_minmax(call, floor, &lowest, NULL);
        if (st != GAS_OK) {
            gas_al_space_settle(&gas_gs.space, old_end);
            return st;
        }
        if (lowest >= tries[k]) {
            st = gas_al_heap_set_end(&gas_gs.heap, tries[k]);
            if (st == GAS_OK)
                st = gas_al_heap_alloc(&gas_gs.heap, want, GAS_GS_ALLOC_ALIGN, off_p);
            if (st != GAS_OK) {
                gas_al_space_settle(&gas_gs.space, gas_gs.heap.end);
                return gas_rt_error(GAS_ERR_NOMEM, call, "the heap's bookkeeping ran out of memory");
            }
            gas_al_space_settle(&gas_gs.space, tries[k]);
            return GAS_OK;
        }
        gas_al_space_settle(&gas_gs.space, old_end);
    }
    char at[32];
    gas_rt_format_bytes(at, sizeof at, lowest);
    snprintf(why, sizeof why,
             "growing it to offset %llu would run into gas_alloc memory, which reaches down "
             "to offset %llu (%s) on some rank",
             (unsigned long long)need, (unsigned long long)lowest, at);
    return nospace(call, want, nbytes, sized_by, why);
}

gas_status_t gas_gs_sym_alloc(const char *call, uint64_t len, const char *sized_by,
                              uint64_t *off_p)
{
    uint64_t want = (len + GAS_GS_ALLOC_ALIGN - 1) / GAS_GS_ALLOC_ALIGN * GAS_GS_ALLOC_ALIGN;
    gas_status_t st = place_block(call, want, 0, sized_by, off_p);
    if (st == GAS_OK) {
        /* The block (want bytes in the heap's used list) is libgas's own: counted apart
         * from the arrays in heap_used. */
        __atomic_fetch_add(&gas_gs.heap_internal, want, __ATOMIC_RELAXED);
        heap_publish();
    }
    return st;
}

/*
 * GAS_PREFAULT: back this rank's block now.  Collective: all ranks learn
 * whether every rank succeeded; if one failed, the block is given up
 * everywhere and every rank returns GAS_ERR_NOMEM.
 */
static gas_status_t prefault_block(const char *call, uint64_t off, uint64_t len)
{
    char why[500] = "";
    int bad = gas_al_segment_back(&gas_gs.seg, &gas_gs.limits, off, len, why, sizeof why) != 0;
    uint64_t first_bad = UINT64_MAX;
    gas_status_t st = gas_gs_barrier_minmax(call, bad ? (uint64_t)gas_gs.rank : UINT64_MAX,
                                            &first_bad, NULL);
    if (st != GAS_OK || first_bad == UINT64_MAX)
        return st;
    gas_al_segment_unback(&gas_gs.seg, off, len);
    gas_al_heap_free(&gas_gs.heap, off);
    heap_shrink();
    char a[32];
    gas_rt_format_bytes(a, sizeof a, len);
    if (bad)
        return gas_rt_error(GAS_ERR_NOMEM, call,
                            "GAS_PREFAULT=y: cannot back this rank's %s share: %s", a, why);
    return gas_rt_error(GAS_ERR_NOMEM, call,
                        "GAS_PREFAULT=y: rank %llu could not back its %s share (its message "
                        "says why); nothing was allocated",
                        (unsigned long long)first_bad, a);
}

/*
 * After a collective call's check found that the ranks' argument hashes h
 * differ (every rank calls it then): " (rank R's differ from rank S's)",
 * R the highest rank whose hash is not the smallest one and S the lowest
 * whose hash is, into buf; "" when the two extra barriers fail.
 */
static void name_differing(const char *call, uint64_t h, char *buf, size_t cap)
{
    uint64_t hmin = 0, lo = 0, hi = 0;
    buf[0] = '\0';
    if (gas_gs_barrier_minmax(call, h, &hmin, NULL) != GAS_OK)
        return;
    uint64_t me = (uint64_t)gas_gs.rank;
    if (gas_gs_barrier_minmax(call, h == hmin ? me : 1ull << 32 | me, &lo, &hi) != GAS_OK ||
        !(hi >> 32))
        return;
    snprintf(buf, cap, " (rank %llu's differ from rank %llu's)",
             (unsigned long long)(hi & 0xffffffffu), (unsigned long long)lo);
}

static gas_status_t malloc_in(const char *call, uint64_t nelems, size_t elem, gas_dist_t dist,
                              uint64_t block_elems, gas_ptr_t *array_p)
{
    gas_status_t st;
    gas_layout_t l;
    const char *why = "";
    gas_status_t planned = gas_gs_plan((uint64_t)gas_gs.nranks, gas_gs.seg_min, nelems, elem, dist,
                                       block_elems, &l, &why);
    /* Every rank takes part in the check, valid arguments or not, so nobody hangs. */
    uint64_t h = mix(mix(mix(mix(mix(0x6761735f6d616c6cull, nelems), elem), (uint64_t)dist),
                         dist == GAS_DIST_BLOCK_CYCLIC ? block_elems : 0),
                     array_p == NULL);   /* the others must not allocate without this rank */
    int differ = 0;
    st = gas_gs_barrier_call(call, GAS_GS_CALL_MALLOC, h, &differ);
    if (st != GAS_OK)
        return st;
    char who[64] = "";
    if (differ)   /* every rank: the naming takes two more barriers */
        name_differing(call, h, who, sizeof who);
    if (array_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "array_p is NULL");
    if (differ)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "the ranks passed different arguments%s (this rank: %llu x %zu "
                            "bytes, distribution %d), or one passed a NULL array_p; all ranks "
                            "must pass the same",
                            who, (unsigned long long)nelems, elem, (int)dist);
    if (planned == GAS_ERR_NOSPACE) {
        char need[32], hint[400];
        gas_rt_format_bytes(need, sizeof need, nelems > UINT64_MAX / elem ? UINT64_MAX : nelems * elem);
        return gas_rt_error(GAS_ERR_NOSPACE, call,
                            "cannot allocate %s over %d ranks: each rank's share is larger than "
                            "its segment; %s",
                            need, gas_gs.nranks, gas_gs_raise_hint(hint, sizeof hint));
    }
    if (planned != GAS_OK)
        return gas_rt_error(planned, call, "%s", why);
    if (l.nbytes == 0) {
        *array_p = GAS_NULL;
        return GAS_OK;
    }
    uint64_t want = (l.local_bytes + GAS_GS_ALLOC_ALIGN - 1) / GAS_GS_ALLOC_ALIGN * GAS_GS_ALLOC_ALIGN;
    uint64_t off;
    if ((st = place_block(call, want, l.nbytes, NULL, &off)) != GAS_OK)
        return st;
    if (gas_gs.prefault && (st = prefault_block(call, off, l.local_bytes)) != GAS_OK)
        return st;
    l.local_offset = off;
    l.base = gas_ptr_make(0, off);
    st = insert_layout(&l);
    if (st != GAS_OK) {
        gas_al_heap_free(&gas_gs.heap, off);
        heap_shrink();
        return gas_rt_error(st, call, "no memory for the allocation table");
    }
    heap_publish();
    *array_p = l.base;
    return GAS_OK;
}

/* gas_malloc and gas_malloc_dist: a collective call on the world team (gas_co_call_enter);
 * its barriers (the call's, the heap's growth, GAS_PREFAULT's) within one GAS_TIMEOUT. */
static gas_status_t malloc_common(const char *call, uint64_t nelems, size_t elem,
                                  gas_dist_t dist, uint64_t block_elems, gas_ptr_t *array_p)
{
    gas_status_t st = gas_gs_check(call);
    if (st == GAS_OK)
        st = gas_co_call_enter(call, gas_team_world_);
    if (st != GAS_OK)
        return st;
    int began = gas_rt_call_begin();
    st = malloc_in(call, nelems, elem, dist, block_elems, array_p);
    gas_rt_call_end(began);
    st = gas_gs_sync_report(call, "the allocation completed and *array_p was written", st);
    return gas_co_call_leave(gas_team_world_, st);
}

static gas_status_t api_malloc(size_t nbytes, gas_ptr_t *array_p)
{
    return malloc_common("gas_malloc", nbytes, 1, GAS_DIST_BLOCK, 0, array_p);
}

GAS_EXPORT gas_status_t gas_malloc(size_t nbytes, gas_ptr_t *array_p)
{
    GAS_GS_GATED("gas_malloc", api_malloc(nbytes, array_p));
}

static gas_status_t api_malloc_dist(uint64_t nelems, size_t elem_size, gas_dist_t dist,
                                    uint64_t block_elems, gas_ptr_t *array_p)
{
    return malloc_common("gas_malloc_dist", nelems, elem_size, dist, block_elems, array_p);
}

GAS_EXPORT gas_status_t gas_malloc_dist(uint64_t nelems, size_t elem_size, gas_dist_t dist,
                                        uint64_t block_elems, gas_ptr_t *array_p)
{
    GAS_GS_GATED("gas_malloc_dist",
                 api_malloc_dist(nelems, elem_size, dist, block_elems, array_p));
}

static gas_status_t free_in(gas_ptr_t array)
{
    gas_status_t st;
    int differ = 0;
    st = gas_gs_barrier_call("gas_free", GAS_GS_CALL_FREE, mix(0x6761735f66726565ull, array), &differ);
    if (st != GAS_OK)
        return st;
    if (differ) {
        char who[64];
        name_differing("gas_free", mix(0x6761735f66726565ull, array), who, sizeof who);
        return gas_rt_error(GAS_ERR_INVALID, "gas_free",
                            "the ranks passed different pointers%s (this rank: 0x%llx)", who,
                            (unsigned long long)array);
    }
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
    heap_shrink();
    return GAS_OK;
}

/* Its waits within one GAS_TIMEOUT (gas_rt_call_begin). */
static gas_status_t api_free(gas_ptr_t array)
{
    gas_status_t st = gas_gs_check("gas_free");
    if (st == GAS_OK)
        st = gas_co_call_enter("gas_free", gas_team_world_);
    if (st != GAS_OK)
        return st;
    int began = gas_rt_call_begin();
    st = free_in(array);
    gas_rt_call_end(began);
    st = gas_gs_sync_report("gas_free", "the array was freed", st);
    return gas_co_call_leave(gas_team_world_, st);
}

GAS_EXPORT gas_status_t gas_free(gas_ptr_t array)
{
    GAS_GS_GATED("gas_free", api_free(array));
}

static gas_status_t api_layout(gas_ptr_t p, gas_layout_t *layout_p)
{
    gas_status_t st = gas_gs_check("gas_layout");
    struct gas_gs_span sp;
    if (st == GAS_OK && layout_p == NULL)
        st = gas_rt_error(GAS_ERR_INVALID, "gas_layout", "layout_p is NULL");
    if (st == GAS_OK)
        st = gas_gs_resolve("gas_layout", "pointer", p, 0, &sp);
    if (st == GAS_OK && sp.l == NULL)
        st = gas_rt_error(GAS_ERR_BOUNDS, "gas_layout",
                          "pointer 0x%llx (rank %d, offset %llu) is above the symmetric heap "
                          "(gas_alloc memory): it is in no gas_malloc'ed array",
                          (unsigned long long)p, sp.rank, (unsigned long long)sp.idx);
    if (st == GAS_OK)
        *layout_p = *sp.l;
    return st;
}

GAS_EXPORT gas_status_t gas_layout(gas_ptr_t p, gas_layout_t *layout_p)
{
    GAS_GS_GATED("gas_layout", api_layout(p, layout_p));
}
