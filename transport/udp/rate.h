/*
 * rate.h - pacing one peer's datagrams at a rate estimated from its
 * acknowledgements.
 *
 * Delivery rate: each datagram remembers, when sent, how many bytes the
 * peer had acknowledged by then and when; when it is acknowledged, the
 * bytes acknowledged since, over the longer of the time they took to be
 * sent and to be acknowledged, is a sample of the rate the path delivers
 * (the IETF delivery-rate estimation draft, as in TCP BBR).  The estimate is
 * the largest sample of the last one or two windows (a window is a few
 * round trips); a sample from a datagram sent when the sender had nothing
 * more to send (application-limited) only counts when it raises it.  With
 * no sample in two windows there is no estimate, and nothing is paced.
 *
 * Pacing: a token bucket that fills at the rate the caller sets (send.c:
 * the estimate times a gain), up to `burst` bytes (what may leave back to
 * back).  On heavy loss the caller cuts the estimate (back-off), and
 * samples from datagrams sent before the cut are ignored, so only what the
 * path delivers afterwards raises it again.
 *
 * Pure bookkeeping on times the caller passes in (ns), unit-tested alone.
 */
#ifndef GAS_UDP_RATE_H
#define GAS_UDP_RATE_H

#include <stdint.h>

/* What a datagram records when sent, to make a sample when acknowledged. */
struct gas_udp_rate_snap {
    uint64_t delivered;      /* bytes acknowledged when it was sent */
    uint64_t delivered_ns;   /* when the last of those was acknowledged */
    uint64_t first_tx_ns;    /* when the datagram acknowledged last had been sent */
    uint64_t sent_ns;        /* when it was sent */
    unsigned flags;          /* GAS_UDP_SNAP_* */
};

enum {
    GAS_UDP_SNAP_IDLE = 1,    /* nothing else was in flight: its interval starts now */
    GAS_UDP_SNAP_APP = 2,     /* application-limited: nothing else waited to be sent */
    GAS_UDP_SNAP_RESENT = 4   /* a retransmission: its acknowledgement gives no sample */
};

struct gas_udp_rate {
    uint64_t delivered, delivered_ns, first_tx_ns;
    uint64_t bw[2];          /* largest sample of this window and of the last, bytes/s */
    uint64_t window_end;     /* when this window ends */
    uint64_t window;         /* its length */
    uint64_t cut_ns;         /* samples of datagrams sent before this are ignored */
    uint64_t rate;           /* pacing rate in force, bytes/s (0: not paced) */
    uint64_t tokens, refill_ns, burst;
};

void gas_udp_rate_init(struct gas_udp_rate *r, uint64_t burst);

/* A datagram goes out now: its snapshot (flags: GAS_UDP_SNAP_*). */
void gas_udp_rate_snap(struct gas_udp_rate *r, uint64_t now, unsigned flags,
                       struct gas_udp_rate_snap *s);

/* A datagram of len bytes was acknowledged: count it; its sample (bytes/s,
 * 0 when none) enters the estimate, whose window is window_ns. */
uint64_t gas_udp_rate_acked(struct gas_udp_rate *r, const struct gas_udp_rate_snap *s,
                            uint32_t len, uint64_t now, uint64_t window_ns);

/* The estimate (bytes/s), 0 when there is none. */
uint64_t gas_udp_rate_bw(const struct gas_udp_rate *r, uint64_t now);

/* A loss: cut the estimate to num/den of itself, from now on. */
void gas_udp_rate_cut(struct gas_udp_rate *r, unsigned num, unsigned den, uint64_t now);

/* Set the pacing rate (0: not paced), keeping the bucket's level. */
void gas_udp_pace_set(struct gas_udp_rate *r, uint64_t rate, uint64_t now);

/* May len bytes leave now?  If so they are taken from the bucket; if not,
 * *when_p is when they may. */
int gas_udp_pace_take(struct gas_udp_rate *r, uint32_t len, uint64_t now, uint64_t *when_p);

#endif
