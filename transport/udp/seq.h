/*
 * seq.h - 32-bit sequence numbers of the udp streams, compared in serial-number
 * arithmetic (RFC 1982): a precedes b when the distance from a to b, taken
 * modulo 2^32, is below 2^31.  Valid while fewer than 2^31 numbers are in use
 * at once (the window is at most a few thousand).
 */
#ifndef GAS_UDP_SEQ_H
#define GAS_UDP_SEQ_H

#include <stdint.h>

/*
 * Every stream starts 4096 numbers before the wrap, so every job that sends
 * a few thousand datagrams to a peer crosses it: the wrap is exercised by
 * every test, not only by long runs.
 */
#define GAS_UDP_SEQ_ISN 0xfffff000u

static inline int32_t gas_udp_seq_diff(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b);
}

static inline int gas_udp_seq_lt(uint32_t a, uint32_t b)
{
    return gas_udp_seq_diff(a, b) < 0;
}

static inline int gas_udp_seq_le(uint32_t a, uint32_t b)
{
    return gas_udp_seq_diff(a, b) <= 0;
}

static inline int gas_udp_seq_gt(uint32_t a, uint32_t b)
{
    return gas_udp_seq_diff(a, b) > 0;
}

static inline int gas_udp_seq_ge(uint32_t a, uint32_t b)
{
    return gas_udp_seq_diff(a, b) >= 0;
}

#endif
