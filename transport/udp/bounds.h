/*
 * bounds.h - the check every offset and length taken from the wire passes
 * before the target touches its segment.  Written so that no sum can
 * overflow: off is compared with size first, then len with what is left.
 */
#ifndef GAS_UDP_BOUNDS_H
#define GAS_UDP_BOUNDS_H

#include <stdint.h>

/* 1 when [off, off + len) lies inside [lo, size) (len 0 allowed at size). */
static inline int gas_udp_range_ok(uint64_t off, uint64_t len, uint64_t lo, uint64_t size)
{
    return off >= lo && off <= size && len <= size - off;
}

/* As gas_udp_range_ok, for a naturally aligned word of width 4 or 8. */
static inline int gas_udp_word_ok(uint64_t off, unsigned width, uint64_t lo, uint64_t size)
{
    return (width == 4 || width == 8) && off % width == 0 &&
           gas_udp_range_ok(off, width, lo, size);
}

#endif
