/*
 * live.h - the live-block map: which addresses of this rank's segment are the
 * start of a block that gas_alloc returned and gas_dealloc has not freed.
 *
 * One bit per 8 bytes of the segment (every block starts 8-byte aligned), in
 * leaves of 4 MiB that each cover 256 MiB of the segment and are mapped on
 * the first block inside that span (their pages are backed as bits are set:
 * a 4 KiB page of bits per 256 KiB of the segment that holds blocks, 1/64
 * where blocks are dense).  gas_alloc sets
 * a block's bit, gas_dealloc clears it and refuses a pointer whose bit was
 * clear already: a block freed twice, or an address that is not the start of
 * a live block, is found every time instead of corrupting jemalloc's lists.
 * Atomic on single bits, so threads allocating neighbouring blocks do not
 * lock each other out; the pointer's hand-over between threads orders them.
 */
#ifndef GAS_AL_LIVE_H
#define GAS_AL_LIVE_H

#include <gas.h>
#include <stdatomic.h>
#include <stdint.h>

#define GAS_AL_LIVE_SPAN_SHIFT 28                 /* a leaf covers 256 MiB */
#define GAS_AL_LIVE_LEAF_BYTES ((size_t)1 << (GAS_AL_LIVE_SPAN_SHIFT - 6))

struct gas_al_live {
    _Atomic(_Atomic uint64_t *) *leaves; /* one per 256 MiB of the segment, NULL until used */
    uint64_t nleaves;
};

extern struct gas_al_live gas_al_live;

/* Cover a segment of `size` bytes; nothing is live.  GAS_ERR_NOMEM. */
gas_status_t gas_al_live_start(uint64_t size);
/* Unmap the leaves (every block is gone with the arenas). */
void gas_al_live_stop(void);
/* The leaf for offset off, mapped now if it was not (NULL: no memory). */
_Atomic uint64_t *gas_al_live_leaf_slow(uint64_t off);

/* Mark the block at offset off (8-byte aligned, inside the segment) live:
 * 0, or -1 when the map's leaf cannot be mapped (no memory). */
static inline int gas_al_live_set(uint64_t off)
{
    _Atomic uint64_t *leaf = atomic_load_explicit(&gas_al_live.leaves[off >> GAS_AL_LIVE_SPAN_SHIFT],
                                                  memory_order_acquire);
    if (__builtin_expect(leaf == NULL, 0) && (leaf = gas_al_live_leaf_slow(off)) == NULL)
        return -1;
    uint64_t bit = (off & (((uint64_t)1 << GAS_AL_LIVE_SPAN_SHIFT) - 1)) >> 3;
    atomic_fetch_or_explicit(&leaf[bit >> 6], (uint64_t)1 << (bit & 63), memory_order_relaxed);
    return 0;
}

/* Clear the block at offset off (8-byte aligned, inside the segment): 1 when
 * it was live, 0 when it was not (freed already, or not a block's start). */
static inline int gas_al_live_clear(uint64_t off)
{
    _Atomic uint64_t *leaf = atomic_load_explicit(&gas_al_live.leaves[off >> GAS_AL_LIVE_SPAN_SHIFT],
                                                  memory_order_acquire);
    if (__builtin_expect(leaf == NULL, 0))
        return 0;
    uint64_t bit = (off & (((uint64_t)1 << GAS_AL_LIVE_SPAN_SHIFT) - 1)) >> 3;
    uint64_t m = (uint64_t)1 << (bit & 63);
    return (atomic_fetch_and_explicit(&leaf[bit >> 6], ~m, memory_order_relaxed) & m) != 0;
}

#endif
