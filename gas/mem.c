/*
 * mem.c - non-collective allocation (gas_alloc/gas_dealloc over the jemalloc
 * arenas of alloc/arena.c) and the memory statistics of a rank.
 */
#include "internal.h"
#include "alloc/arena_fast.h"
#include "alloc/fault.h"
#include "alloc/live.h"
#include "runtime/log.h"

#include <stdio.h>
#include <string.h>

/* Copy what fits of src (the stats' strings are shorter than the descriptions). */
static void copy_str(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/*
 * The error of a gas_alloc of nbytes that the arenas refused (why: a
 * GAS_AL_ARENA_* reason).  It says how much of the arenas is in live
 * blocks; when that is at most half of what they hold and the rest would
 * fit the block, that no free range of that size is left (fragmentation:
 * below half, jemalloc's own overhead and retained extents can explain the
 * shortfall, and the segment is simply full).
 */
static __attribute__((noinline, cold)) gas_status_t alloc_failed(size_t nbytes, int why)
{
    char a[32], seg[32], heap[32], arena[32], used[32], hint[400];
    uint64_t heap_end = 0, floor = 0;
    gas_al_space_get(&gas_gs.space, &heap_end, &floor);
    uint64_t held = gas_gs.seg.size - floor, in_use = gas_al_arena_allocated();
    gas_rt_format_bytes(a, sizeof a, nbytes);
    gas_rt_format_bytes(seg, sizeof seg, gas_gs.seg.size);
    gas_rt_format_bytes(heap, sizeof heap, heap_end);
    gas_rt_format_bytes(arena, sizeof arena, held);
    gas_rt_format_bytes(used, sizeof used, in_use);
    uint64_t room = gas_gs.seg.size > heap_end ? gas_gs.seg.size - heap_end : 0;
    switch (why) {
    case GAS_AL_ARENA_NOSPACE:
        if (nbytes > room) { /* no freeing could make it fit: say so, not "full" */
            char r[32];
            gas_rt_format_bytes(r, sizeof r, room);
            return gas_rt_error(GAS_ERR_NOSPACE, "gas_alloc",
                                "cannot allocate %s: more than this rank's %s segment can ever "
                                "give gas_alloc (the symmetric heap reaches %s into it, so at "
                                "most %s is left above it, %s of it in live gas_alloc blocks); "
                                "%s", a, seg, heap, r, used, gas_gs_raise_hint(hint, sizeof hint));
        }
        if (in_use <= held / 2 && nbytes <= held - in_use)
            return gas_rt_error(GAS_ERR_NOSPACE, "gas_alloc",
                                "cannot allocate %s: this rank's %s segment is full (the "
                                "symmetric heap reaches %s into it, the gas_alloc arenas hold %s "
                                "at its top, %s of it in live blocks), and no free range of %s "
                                "is left in the arenas: their free memory is fragmented into "
                                "smaller pieces (freed blocks stay with the arenas, "
                                "docs/memory.md); allocate large blocks first, or %s",
                                a, seg, heap, arena, used, a,
                                gas_gs_raise_hint(hint, sizeof hint));
        return gas_rt_error(GAS_ERR_NOSPACE, "gas_alloc",
                            "cannot allocate %s: this rank's %s segment is full (the symmetric "
                            "heap reaches %s into it, the gas_alloc arenas hold %s at its top, "
                            "%s of it in live blocks); %s",
                            a, seg, heap, arena, used, gas_gs_raise_hint(hint, sizeof hint));
    case GAS_AL_ARENA_NOBACKING:
        return gas_rt_error(GAS_ERR_NOMEM, "gas_alloc", "cannot allocate %s: GAS_PREFAULT=y: %s",
                            a, gas_al_arena_failure());
    default:
        return gas_rt_error(GAS_ERR_NOMEM, "gas_alloc",
                            "cannot allocate %s: jemalloc could not (out of process memory for "
                            "its metadata, or the size is too large)",
                            a);
    }
}

/*
 * Why gas_al_enter refused `call` (entered: NULL): not initialised, or
 * gas_finalize has begun in another thread (GAS_ERR_NOT_INIT), or no memory
 * for the calling thread's allocator state (GAS_ERR_NOMEM).
 */
static __attribute__((noinline, cold)) gas_status_t enter_refused(const char *call)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if (!gas_al_open())
        return gas_rt_error(GAS_ERR_NOT_INIT, call,
                            "libgas is being finalised (gas_finalize was called in another thread)");
    return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for this thread's allocator state");
}

/* Leave t (gas_al_enter's, or NULL) and return the error for a refused gas_alloc. */
static __attribute__((noinline, cold)) gas_status_t alloc_refused(struct gas_al_thr *t)
{
    if (t == NULL)
        return enter_refused("gas_alloc");
    gas_al_leave(t);
    gas_status_t st = gas_gs_check("gas_alloc");
    return st != GAS_OK ? st : gas_rt_error(GAS_ERR_INVALID, "gas_alloc", "ptr_p is NULL");
}

/*
 * gas_alloc, gas_dealloc and gas_memory_stats run inside gas_al_enter/leave:
 * gas_finalize in another thread waits for them before it stops the arenas,
 * and refuses them from then on (alloc/arena.c, "entry and close").
 */
GAS_EXPORT gas_status_t gas_alloc(size_t nbytes, gas_ptr_t *ptr_p)
{
    struct gas_al_thr *t = gas_al_enter();
    if (__builtin_expect(t == NULL || gas_gs_phase() != GAS_GS_UP || ptr_p == NULL, 0))
        return alloc_refused(t);
    gas_status_t st = GAS_OK;
    int why = 0;
    void *m = nbytes != 0 && nbytes < gas_gs.seg.size ? gas_al_arena_alloc(nbytes, &why) : NULL;
    if (__builtin_expect(m == NULL, 0)) {
        if (nbytes == 0)
            *ptr_p = GAS_NULL;
        else
            st = alloc_failed(nbytes, why ? why : GAS_AL_ARENA_NOSPACE);
    } else {
        uint64_t off = (uint64_t)((char *)m - gas_gs.seg.base);
        if (__builtin_expect(gas_al_live_set(off) == 0, 1)) {
            *ptr_p = gas_ptr_make(gas_gs.rank, off);
        } else {
            gas_al_arena_free(m);
            st = alloc_failed(nbytes, GAS_AL_ARENA_NOMEM);
        }
    }
    gas_al_leave(t);
    return st;
}

static __attribute__((noinline, cold)) gas_status_t dealloc_refused(gas_ptr_t p)
{
    gas_status_t st = gas_gs_check("gas_dealloc");
    int rank = gas_ptr_rank(p);
    if (st != GAS_OK)
        return st;
    if (rank != gas_gs.rank)
        return gas_rt_error(GAS_ERR_INVALID, "gas_dealloc",
                            "0x%llx belongs to rank %d: only the rank that allocated a block "
                            "can free it",
                            (unsigned long long)p, rank);
    return gas_rt_error(GAS_ERR_INVALID, "gas_dealloc",
                        "0x%llx (offset %llu) is not a block from gas_alloc: those lie at "
                        "offsets %llu and up, 8-byte aligned",
                        (unsigned long long)p, (unsigned long long)gas_ptr_offset(p),
                        (unsigned long long)__atomic_load_n(&gas_gs.space.floor, __ATOMIC_RELAXED));
}

GAS_EXPORT gas_status_t gas_dealloc(gas_ptr_t p)
{
    if (p == GAS_NULL && gas_gs_phase() == GAS_GS_UP)
        return GAS_OK;
    struct gas_al_thr *t = gas_al_enter();
    if (__builtin_expect(t == NULL, 0))
        return enter_refused("gas_dealloc");
    gas_status_t st = GAS_OK;
    uint64_t off = gas_ptr_offset(p);
    uint64_t floor = __atomic_load_n(&gas_gs.space.floor, __ATOMIC_RELAXED);
    if (__builtin_expect(gas_gs_phase() != GAS_GS_UP || gas_ptr_rank(p) != gas_gs.rank ||
                             off < floor || off >= gas_gs.seg.size || off % 8 != 0, 0))
        st = dealloc_refused(p);
    else if (__builtin_expect(!gas_al_live_clear(off), 0))
        st = gas_rt_error(GAS_ERR_INVALID, "gas_dealloc",
                          "0x%llx (offset %llu) is not a live block from gas_alloc: it was "
                          "freed already (gas_dealloc twice) or is not the start of a block; "
                          "nothing was done", (unsigned long long)p, (unsigned long long)off);
    else
        gas_al_arena_free(gas_gs.seg.base + off);
    gas_al_leave(t);
    return st;
}

/* gas_memory_stats's snapshot (inside gas_al_enter, initialised). */
static void stats_fill(gas_mem_stats_t *stats_p)
{
    gas_mem_stats_t s;
    memset(&s, 0, sizeof s);
    uint64_t heap_end = 0, floor = 0;
    uint64_t used = __atomic_load_n(&gas_gs.heap_used, __ATOMIC_RELAXED);
    gas_al_space_get(&gas_gs.space, &heap_end, &floor);
    s.reserved = gas_gs.seg.size;
    s.backed = gas_al_segment_backed(&gas_gs.seg);
    s.heap_end = heap_end;
    s.heap_used = used;
    s.heap_internal = __atomic_load_n(&gas_gs.heap_internal, __ATOMIC_RELAXED);
    s.arena_reserved = gas_gs.seg.size - floor;
    s.arena_used = gas_al_arena_allocated();
    s.unclaimed = floor > heap_end ? floor - heap_end : 0;
    s.peers_mapped = gas_al_fault_peer_bytes(gas_gs.rank);
    s.numa_node = gas_gs.place.node;
    s.arenas = gas_al_arena_count();
    copy_str(s.numa_policy, sizeof s.numa_policy, gas_gs.place.numa_desc);
    copy_str(s.hugepages, sizeof s.hugepages, gas_gs.place.huge_desc);
    char backing[4200];
    if (gas_gs.limits.dir_kind == GAS_AL_DIR_NONE)
        snprintf(backing, sizeof backing, "memfd%s", gas_gs.seg.hugetlb ? " (hugetlb)" : "");
    else
        snprintf(backing, sizeof backing, "%s %s",
                 gas_gs.limits.dir_kind == GAS_AL_DIR_TMPFS ? "tmpfs" : "hugetlbfs",
                 gas_gs.limits.dir);
    copy_str(s.backing, sizeof s.backing, backing);
    *stats_p = s;
}

GAS_EXPORT gas_status_t gas_memory_stats(gas_mem_stats_t *stats_p)
{
    struct gas_al_thr *t = gas_al_enter();
    if (t == NULL)
        return enter_refused("gas_memory_stats");
    gas_status_t st = gas_gs_check("gas_memory_stats");
    if (st == GAS_OK && stats_p == NULL)
        st = gas_rt_error(GAS_ERR_INVALID, "gas_memory_stats", "stats_p is NULL");
    if (st == GAS_OK)
        stats_fill(stats_p);
    gas_al_leave(t);
    return st;
}
