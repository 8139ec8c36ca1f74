/* rtt.c - RFC 6298 retransmission timer (see rtt.h). */
#include "rtt.h"

static uint64_t clamp(const struct gas_udp_rtt *r, uint64_t v)
{
    return v < r->min ? r->min : v > r->max ? r->max : v;
}

void gas_udp_rtt_init(struct gas_udp_rtt *r, uint64_t initial, uint64_t min, uint64_t max)
{
    r->srtt = r->rttvar = 0;
    r->min = min;
    r->max = max < min ? min : max;
    r->rto = clamp(r, initial);
    r->backoff = 0;
}

void gas_udp_rtt_sample(struct gas_udp_rtt *r, uint64_t sample)
{
    if (sample == 0)
        sample = 1;
    if (r->srtt == 0) {
        r->srtt = sample;
        r->rttvar = sample / 2;
    } else {
        uint64_t err = r->srtt > sample ? r->srtt - sample : sample - r->srtt;
        r->rttvar = r->rttvar - r->rttvar / 4 + err / 4;
        r->srtt = r->srtt - r->srtt / 8 + sample / 8;
    }
    r->rto = clamp(r, r->srtt + 4 * r->rttvar);
    r->backoff = 0;
}

uint64_t gas_udp_rtt_timeout(const struct gas_udp_rtt *r)
{
    uint64_t t = r->rto;
    for (unsigned i = 0; i < r->backoff && t < r->max; i++)
        t *= 2;
    return t < r->max ? t : r->max;
}

void gas_udp_rtt_backoff(struct gas_udp_rtt *r)
{
    if (gas_udp_rtt_timeout(r) < r->max)
        r->backoff++;
}

void gas_udp_rtt_progress(struct gas_udp_rtt *r)
{
    r->backoff = 0;
}
