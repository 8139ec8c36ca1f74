/*
 * heap.h - the symmetric heap: a deterministic first-fit allocator of offsets.
 *
 * Every rank runs the same sequence of collective allocations on its own copy,
 * so every copy hands out the same offsets.  Free ranges are kept sorted by
 * offset and coalesced on free.  The heap only does arithmetic on offsets; it
 * never touches segment memory.
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

/* Totals for error messages and statistics. */
void gas_al_heap_stats(const struct gas_al_heap *h, uint64_t *free_p, uint64_t *largest_p,
                       uint64_t *used_p);

#endif
