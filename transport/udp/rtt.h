/*
 * rtt.h - the retransmission timeout of one peer, from measured round trips
 * (RFC 6298): SRTT and RTTVAR smoothed with gains 1/8 and 1/4, RTO = SRTT +
 * 4 RTTVAR clamped to [min, max], doubled per consecutive timeout (back-off,
 * still clamped to max so traffic resumes promptly after an outage) and
 * reset by the next sample, or by the acknowledgement of new data (Karn: a
 * datagram first sent after the timeout, and sent once, arrived, so the
 * path works again at the measured timeout).  Karn's rule is the caller's:
 * only datagrams sent exactly once give samples or end a back-off.
 */
#ifndef GAS_UDP_RTT_H
#define GAS_UDP_RTT_H

#include <stdint.h>

struct gas_udp_rtt {
    uint64_t srtt, rttvar;  /* ns; srtt 0 until the first sample */
    uint64_t rto;           /* before back-off, clamped */
    uint64_t min, max;
    unsigned backoff;       /* consecutive timeouts */
};

void gas_udp_rtt_init(struct gas_udp_rtt *r, uint64_t initial, uint64_t min, uint64_t max);
/* A round-trip sample in ns; ends any back-off. */
void gas_udp_rtt_sample(struct gas_udp_rtt *r, uint64_t sample);
/* The timeout in force: rto doubled per back-off step, at most max. */
uint64_t gas_udp_rtt_timeout(const struct gas_udp_rtt *r);
/* A timeout happened: back off one step (no further once at max). */
void gas_udp_rtt_backoff(struct gas_udp_rtt *r);
/* New data (sent once, after the last timeout) was acknowledged without a
 * sample: end the back-off; the estimate is unchanged. */
void gas_udp_rtt_progress(struct gas_udp_rtt *r);

#endif
