/*
 * held.h - which parts of the segment jemalloc's arenas hold: the extents the
 * alloc hook handed out, less what the dalloc hook took back, each with the
 * jemalloc index of the arena it went to.
 *
 * Why it exists: jemalloc (5.3, with opt.retain, Linux's default) keeps
 * extents of different arenas apart only by the "head" mark of each extent
 * its alloc hook returned: it never merges a free extent with a neighbour
 * above it that is a head.  It assumes that the piece above the end of an
 * extent of arena A, when it is not a head, belongs to A too; it checks the
 * arena only in debug builds.  Our dalloc hook takes back parts of hook
 * extents (a purge frees the dirty ones), and those parts serve any arena.
 * An extent of arena B that ended exactly where a non-head piece of arena A
 * begins was merged with it, moving A's piece into B's free lists: two
 * arenas then handed out the same memory (a crash in dallocx, or blocks that
 * overlap).  So an extent taken from the free ranges must not end where
 * another arena holds the page above it (arena.c: take_extent).
 *
 * A sorted array of disjoint ranges; not thread-safe (arena.c holds
 * big_lock around every call).
 */
#ifndef GAS_AL_HELD_H
#define GAS_AL_HELD_H

#include <stddef.h>
#include <stdint.h>

struct gas_al_held_range {
    uint64_t off, len;
    int arena;             /* jemalloc's arena index */
};

struct gas_al_held {
    struct gas_al_held_range *r;
    size_t n, cap;
};

/* [off, off + len) now belongs to jemalloc arena `arena`: 0, or -1 (no memory). */
int gas_al_held_add(struct gas_al_held *h, uint64_t off, uint64_t len, int arena);
/* [off, off + len) is no longer held (it may span several held ranges). */
void gas_al_held_remove(struct gas_al_held *h, uint64_t off, uint64_t len);
/* The index of the arena holding the byte at off, or -1. */
int gas_al_held_arena(const struct gas_al_held *h, uint64_t off);
void gas_al_held_clear(struct gas_al_held *h);

#endif
