/*
 * arena.h - jemalloc arenas over the top of this rank's segment, behind the
 * non-collective gas_alloc/gas_dealloc.
 *
 * Each arena is created with `arenas.create` and extent hooks that hand out
 * extents carved downwards from the top of the segment (alloc/space.h), so
 * every byte jemalloc gives out, its metadata included, lies inside the
 * segment.  The hooks never give memory back to the system: decommit and
 * both purges refuse (return true), so no page a NIC may have registered is
 * discarded; dalloc takes an extent into the free ranges of big blocks
 * (alloc/big.h), which jemalloc only offers when purged (decay is off: when
 * the segment is full).  split and merge accept (every extent is part of one
 * mapping); destroy, at gas_finalize, only counts.  Blocks of GAS_AL_BIG_MIN
 * bytes or more bypass jemalloc (big.h says why).
 *
 * There is one group of arenas per NUMA node the rank uses (alloc/place.h:
 * one unless GAS_NUMA=local and the rank's CPUs span several nodes), of up
 * to GAS_ARENAS arenas (0: one per CPU of the node the rank may use, at most
 * 8).  Each group's first arena is made at start, the others when a thread
 * first allocates and all existing ones have a thread; a thread takes the
 * arena of its node's group with the fewest threads, and allocates through
 * an explicit tcache per thread and arena (jemalloc's automatic tcache would
 * mix the program's blocks into ours) behind a small cache of freed blocks
 * (alloc/arena_fast.h).  A block freed by a thread of another arena passes
 * through that thread's caches before jemalloc returns it to its own arena
 * (finding its arena would take jemalloc's ctl mutex on every free), so that
 * thread may reuse it first.
 *
 * Thread-safe; gas_al_arenas_start/stop are not: no other thread may be in
 * gas_al_arena_* while start runs, nor outside a gas_al_enter bracket while
 * stop runs.  Stop first closes the arenas to gas_al_enter (arena_fast.h)
 * and waits for the threads inside to leave.
 */
#ifndef GAS_AL_ARENA_H
#define GAS_AL_ARENA_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

#include "limits.h"
#include "place.h"
#include "segment.h"
#include "space.h"

#define GAS_AL_MAX_ARENAS 64

struct gas_al_arena_cfg {
    const struct gas_al_segment *seg;
    struct gas_al_space *space;
    const struct gas_al_limits *limits;
    const struct gas_al_place *place;
    int per_node;            /* GAS_ARENAS: arenas per node (>= 1) */
    int prefault;            /* GAS_PREFAULT: back extents when they are taken */
};

gas_status_t gas_al_arenas_start(const struct gas_al_arena_cfg *cfg);
void gas_al_arenas_stop(void);

/* Why the last gas_al_arena_alloc of this thread failed. */
enum gas_al_arena_fail { GAS_AL_ARENA_NOSPACE = 1, GAS_AL_ARENA_NOBACKING = 2, GAS_AL_ARENA_NOMEM = 3 };

/* gas_al_arena_alloc and gas_al_arena_free are inline: alloc/arena_fast.h. */

/* After GAS_AL_ARENA_NOBACKING: why backing failed (this thread's last failure). */
const char *gas_al_arena_failure(void);

/* Number of arenas, and bytes in live blocks over all of them (each at its usable
 * size: jemalloc's size class, or whole pages for a big block; exact while no
 * other thread allocates or frees, cached free blocks not counted). */
int gas_al_arena_count(void);
uint64_t gas_al_arena_allocated(void);

/* ---- interception, for tests --------------------------------------------- */

enum gas_al_hook {
    GAS_AL_HOOK_ALLOC, GAS_AL_HOOK_DALLOC, GAS_AL_HOOK_DESTROY, GAS_AL_HOOK_COMMIT,
    GAS_AL_HOOK_DECOMMIT, GAS_AL_HOOK_PURGE_LAZY, GAS_AL_HOOK_PURGE_FORCED,
    GAS_AL_HOOK_SPLIT, GAS_AL_HOOK_MERGE, GAS_AL_HOOK_COUNT
};

struct gas_al_hook_event {
    enum gas_al_hook hook;
    void *addr;              /* the extent (alloc: what was returned, NULL on failure) */
    size_t size;             /* its size (merge: the first extent's) */
    void *addr_b;            /* merge: the second extent */
    size_t size_b;           /* split: the second part; merge: the second extent */
    unsigned arena;          /* jemalloc's arena index */
    int refused;             /* the hook answered "not done" */
};

/* Called (in the thread running the hook) for every hook call when set. */
extern void (*gas_al_arena_trace)(const struct gas_al_hook_event *ev);

#endif
