/*
 * rxwin.h - the receive side of one stream: which sequence numbers have
 * arrived.  Everything before `next` was delivered in order (next is the
 * cumulative ack); of the numbers after it, a bitmap says which arrived early
 * and are held until the gap before them fills.  Pure bookkeeping: the
 * datagrams themselves are kept by the caller.
 */
#ifndef GAS_UDP_RXWIN_H
#define GAS_UDP_RXWIN_H

#include <stdint.h>

struct gas_udp_rxwin {
    uint32_t next;   /* the next number expected: everything before it is delivered */
    uint32_t size;   /* a power of two: numbers in [next, next + size) may be held */
    uint64_t *bits;  /* bit (seq & (size - 1)): seq is held */
};

enum gas_udp_rx_verdict {
    GAS_UDP_RX_NEXT,    /* the expected one: deliver it now */
    GAS_UDP_RX_AHEAD,   /* early, inside the window: hold it */
    GAS_UDP_RX_DUP,     /* delivered or held already: drop it (and acknowledge again) */
    GAS_UDP_RX_BEYOND   /* too far ahead: drop it, the sender retransmits */
};

/* size is rounded up to a power of two (at least 64); 0 or -1 (no memory). */
int gas_udp_rxwin_init(struct gas_udp_rxwin *w, uint32_t isn, uint32_t size);
void gas_udp_rxwin_fini(struct gas_udp_rxwin *w);

enum gas_udp_rx_verdict gas_udp_rxwin_classify(const struct gas_udp_rxwin *w, uint32_t seq);

/* Record an AHEAD number as held. */
void gas_udp_rxwin_hold(struct gas_udp_rxwin *w, uint32_t seq);

/* After delivering `next`: step past it. */
static inline void gas_udp_rxwin_step(struct gas_udp_rxwin *w)
{
    w->next++;
}

/*
 * When `next` is held: release it (*seq_p = next) and return 1; else 0.
 * `next` stays: the caller delivers it, then steps (gas_udp_rxwin_step), as
 * for one that arrived in order.  (While a datagram is delivered, `next`
 * must be its own number: replies sealed meanwhile carry it as the point up
 * to which requests are answered, and a reply that spans several datagrams
 * must not claim its request before its last piece.)
 */
int gas_udp_rxwin_pop(struct gas_udp_rxwin *w, uint32_t *seq_p);

/* Selective acks: bit i set when next + 1 + i is held (i < 64). */
uint64_t gas_udp_rxwin_sack(const struct gas_udp_rxwin *w);

#endif
