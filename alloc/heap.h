/*
 * heap.h - the symmetric heap: a deterministic first-fit allocator of offsets.
 *
 * Every rank runs the same sequence of collective allocations on its own copy,
 * so every copy hands out the same offsets.  Free ranges are kept sorted by
 * offset and coalesced on free.  The heap only does arithmetic on offsets; it
 * never touches segment memory.
 *
 * The heap covers [start, end); `end` moves: the caller grows it (after
 * agreeing with the other ranks that the space above is free, see
 * alloc/space.h) when an allocation does not fit, and lowers it after frees
 * at the top so that the space can serve other uses.
 */
#ifndef GAS_AL_HEAP_H
#define GAS_AL_HEAP_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

struct gas_al_range {
    uint64_t off, len;
};

struct gas_al_heap {
    uint64_t start, end;
    struct gas_al_range *free; /* sorted, disjoint, never adjacent */
    size_t nfree, free_cap;
    struct gas_al_range *used; /* sorted by offset */
    size_t nused, used_cap;
};

gas_status_t gas_al_heap_init(struct gas_al_heap *h, uint64_t start, uint64_t end);
void gas_al_heap_fini(struct gas_al_heap *h);

/*
 * Allocate len bytes (len > 0) aligned to `align` (a power of two).
 * GAS_ERR_NOSPACE when no free range fits; the heap is unchanged then.
 */
gas_status_t gas_al_heap_alloc(struct gas_al_heap *h, uint64_t len, uint64_t align,
                               uint64_t *off_p);

/* Free the allocation starting at off; GAS_ERR_INVALID if none starts there. */
gas_status_t gas_al_heap_free(struct gas_al_heap *h, uint64_t off);

/*
 * The smallest end at which an allocation of len bytes aligned to align
 * would fit (using the free range at the top, if any).  GAS_ERR_OVERFLOW if
 * that end does not fit 64 bits.
 */
gas_status_t gas_al_heap_need_end(const struct gas_al_heap *h, uint64_t len, uint64_t align,
                                  uint64_t *end_p);

/*
 * Move the end.  Growing adds [end, new_end) to the free space; shrinking
 * needs [new_end, end) to be free (else GAS_ERR_INVALID, nothing changes).
 */
gas_status_t gas_al_heap_set_end(struct gas_al_heap *h, uint64_t new_end);

/* The end of the highest allocation (start when there is none). */
uint64_t gas_al_heap_top(const struct gas_al_heap *h);

/* Totals for error messages and statistics. */
void gas_al_heap_stats(const struct gas_al_heap *h, uint64_t *free_p, uint64_t *largest_p,
                       uint64_t *used_p);

#endif
