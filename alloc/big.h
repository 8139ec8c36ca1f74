/*
 * big.h - book-keeping for big gas_alloc blocks, which bypass jemalloc.
 *
 * jemalloc pads every large block by a page and never merges extents that
 * its hooks handed out separately, so big blocks served by it waste up to
 * half the segment (a 4 MiB block takes an 8 MiB extent) and the space of
 * freed ones cannot serve a block of another size.  Blocks of GAS_AL_BIG_MIN
 * bytes or more are therefore carved by alloc/arena.c itself, page-rounded,
 * from the top of the segment, and their space is kept here when freed:
 *
 *  - free ranges, sorted by offset and merged with their neighbours, from
 *    which big blocks (best fit) and new jemalloc extents are taken;
 *  - the live blocks, offset -> length, so that gas_dealloc can tell a big
 *    block from a jemalloc one and knows its length.
 *
 * Offsets are into the segment and never 0.  Not thread-safe: the caller
 * holds one lock around every call.
 */
#ifndef GAS_AL_BIG_H
#define GAS_AL_BIG_H

#include <stddef.h>
#include <stdint.h>

#define GAS_AL_BIG_MIN ((size_t)1 << 20)   /* blocks from this size are big */

struct gas_al_range {
    uint64_t off, len;
};

struct gas_al_big {
    struct gas_al_range *free;  /* sorted by off; no two touch */
    size_t nfree, capfree;
    uint64_t *key, *val;        /* live blocks: open addressing, linear probing; key 0 empty */
    size_t cap, nlive;          /* cap: a power of two, or 0 */
    uint64_t live_bytes;        /* their lengths' sum */
};

/*
 * Take len bytes at an offset that is a multiple of align (a power of two)
 * from the free range that fits most tightly: 0 with *off_p set, or -1.
 * When top_ok is not NULL, a place that would end exactly at a range's top
 * is taken only if top_ok(end, arg) says so (arena.c: extents must not end
 * under another arena's memory, alloc/held.h).
 */
int gas_al_big_take(struct gas_al_big *b, uint64_t len, uint64_t align,
                    int (*top_ok)(uint64_t end, void *arg), void *arg, uint64_t *off_p);

/* Return [off, off+len) to the free ranges, merged with its neighbours: 0, or -1 (no memory: the range is lost). */
int gas_al_big_give(struct gas_al_big *b, uint64_t off, uint64_t len);

/* Record a live block: 0, or -1 (no memory). */
int gas_al_big_track(struct gas_al_big *b, uint64_t off, uint64_t len);

/* Forget the live block at off: 0 with *len_p set, or -1 when there is none. */
int gas_al_big_untrack(struct gas_al_big *b, uint64_t off, uint64_t *len_p);

/* The live block's length at off, or 0. */
uint64_t gas_al_big_length(const struct gas_al_big *b, uint64_t off);

/* Drop everything (the arenas are gone). */
void gas_al_big_clear(struct gas_al_big *b);

#endif
