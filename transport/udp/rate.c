/* rate.c - delivery-rate estimate and pacing of one peer (see rate.h). */
#include "rate.h"

#define NS 1000000000ull
#define MIN_INTERVAL_NS 1000u /* shorter sample intervals mean nothing */

void gas_udp_rate_init(struct gas_udp_rate *r, uint64_t burst)
{
    *r = (struct gas_udp_rate){.burst = burst, .tokens = burst};
}

void gas_udp_rate_snap(struct gas_udp_rate *r, uint64_t now, unsigned flags,
                       struct gas_udp_rate_snap *s)
{
    if ((flags & GAS_UDP_SNAP_IDLE) || r->delivered_ns == 0) /* an interval starts now */
        r->delivered_ns = r->first_tx_ns = now;
    *s = (struct gas_udp_rate_snap){.delivered = r->delivered, .delivered_ns = r->delivered_ns,
                                    .first_tx_ns = r->first_tx_ns, .sent_ns = now,
                                    .flags = flags};
}

uint64_t gas_udp_rate_bw(const struct gas_udp_rate *r, uint64_t now)
{
    if (r->window_end == 0 || now >= r->window_end + r->window)
        return 0;
    if (now >= r->window_end)
        return r->bw[0];
    return r->bw[0] > r->bw[1] ? r->bw[0] : r->bw[1];
}

uint64_t gas_udp_rate_acked(struct gas_udp_rate *r, const struct gas_udp_rate_snap *s,
                            uint32_t len, uint64_t now, uint64_t window_ns)
{
    r->delivered += len;
    r->delivered_ns = now;
    r->first_tx_ns = s->sent_ns;
    if ((s->flags & GAS_UDP_SNAP_RESENT) || s->sent_ns < r->cut_ns || now < s->delivered_ns ||
        s->sent_ns < s->first_tx_ns)
        return 0; /* ambiguous; sent before the last cut; or clocks out of order */
    uint64_t send_el = s->sent_ns - s->first_tx_ns, ack_el = now - s->delivered_ns;
    uint64_t iv = send_el > ack_el ? send_el : ack_el;
    if (iv < MIN_INTERVAL_NS)
        return 0;
    uint64_t sample = (uint64_t)((double)(r->delivered - s->delivered) * (double)NS / (double)iv);
    if ((s->flags & GAS_UDP_SNAP_APP) && sample <= gas_udp_rate_bw(r, now))
        return sample; /* the sender, not the path, set its pace */
    if (now >= r->window_end) {
        r->bw[1] = now < r->window_end + r->window ? r->bw[0] : 0;
        r->bw[0] = 0;
        r->window = window_ns;
        r->window_end = now + window_ns;
    }
    if (sample > r->bw[0])
        r->bw[0] = sample;
    return sample;
}

void gas_udp_rate_cut(struct gas_udp_rate *r, unsigned num, unsigned den, uint64_t now)
{
    r->bw[0] = r->bw[0] / den * num;
    r->bw[1] = r->bw[1] / den * num;
    r->cut_ns = now;
}

/* Add what the rate earned since the last refill, up to the burst. */
static void refill(struct gas_udp_rate *r, uint64_t now)
{
    if (now <= r->refill_ns || r->tokens >= r->burst) {
        if (r->tokens >= r->burst)
            r->refill_ns = now;
        return;
    }
    uint64_t dt = now - r->refill_ns, room = r->burst - r->tokens;
    if (dt >= (room * NS + r->rate - 1) / r->rate) {
        r->tokens = r->burst;
        r->refill_ns = now;
        return;
    }
    uint64_t add = dt * r->rate / NS; /* dt * rate < room * NS: no overflow */
    if (add) {                        /* else keep counting from the old time */
        r->tokens += add;
        r->refill_ns = now;
    }
}

void gas_udp_pace_set(struct gas_udp_rate *r, uint64_t rate, uint64_t now)
{
    if (r->rate)
        refill(r, now);
    else
        r->refill_ns = now;
    r->rate = rate;
    if (rate == 0)
        r->tokens = r->burst;
}

int gas_udp_pace_take(struct gas_udp_rate *r, uint32_t len, uint64_t now, uint64_t *when_p)
{
    if (r->rate == 0)
        return 1;
    refill(r, now);
    if (r->tokens >= len) {
        r->tokens -= len;
        return 1;
    }
    *when_p = r->refill_ns + ((len - r->tokens) * NS + r->rate - 1) / r->rate;
    return 0;
}
