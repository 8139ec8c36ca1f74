/*
 * recovery.c - a channel's acknowledgements in, and what it does about loss.
 *
 * Acknowledgements: cumulative and selective ones take datagrams out of
 * flight, give RTT samples (Karn: only from datagrams sent once, and after a
 * timeout only from those first sent after it) and delivery-rate samples
 * (rate.h), and grow the congestion window (slow start, then one datagram
 * per round trip).  Samples come from datagrams that carry a request, or
 * that asked for an immediate acknowledgement: a channel that only answers
 * (its peer sends requests, never the other way) would otherwise have none,
 * and with no round trip no tail-loss probe, so its lost answers waited for
 * the timeout, backed off to the maximum.  So a burst of answers alone asks
 * when the channel has no sample, or none for RTT_REFRESH_NS
 * (gas_udp_want_sample).  The acknowledgement of a datagram sent once after
 * the last timeout ends the back-off (Karn), sample or not.
 *
 * Loss is found three ways:
 *  - fast retransmit: a datagram with three later-sent ones acknowledged
 *    (selectively) is lost.  Once per loss episode (a round trip) the
 *    window shrinks, by how much depending on the recent loss rate (a
 *    moving average over about 256 datagrams): below GAS_UDP_LOSS_TOLERANCE
 *    (3%) the loss looks random (a lossy link, not a full queue) and the
 *    window loses 15%; above it, half.  A queue that overflows drops every
 *    round trip, so its loss rate soon passes the tolerance: congestion
 *    still halves the window, while 1% of random loss no longer keeps it
 *    below the bandwidth-delay product.  Pacing loses its headroom until the
 *    episode ends, and when a fifth of the flight (4 datagrams at least) is
 *    lost in one episode the rate estimate is cut to 70%.
 *  - tail-loss probe: no acknowledgement for two round trips (or SRTT +
 *    4 RTTVAR if longer; at least 200 us) while datagrams are out: the
 *    newest is sent again, whatever the windows say, asking for an
 *    acknowledgement.  A lost last datagram, or a lost acknowledgement of
 *    it, then costs that, not a timeout (at least GAS_UDP_RTO_MIN); the
 *    window is not touched.
 *  - the RFC 6298 timer, restarted whenever an acknowledgement makes
 *    progress (as TCP's), so the tail of a long burst queued at a busy
 *    receiver is not taken for lost.  A timeout resends only the oldest
 *    datagram, cuts the window to its floor, and the next acknowledgement
 *    decides (F-RTO, RFC 5682): if it covers a datagram sent before the
 *    timeout and never resent, nothing was lost (the receiver or this rank
 *    was descheduled) and the window comes back; else everything sent before
 *    the timeout is lost and the rate estimate is halved.  A duplicate
 *    report (dsack) of what the timeout resent also undoes it.
 *
 * A peer about to be declared dead for acknowledging nothing may be alive
 * behind an MTU black hole: gas_udp_mtu_hint says so when every datagram
 * still out is larger than any the last acknowledgement covered.
 *
 * All functions here are called with the channel's lock held.
 */
#include "transport/udp/udp.h"

#include <stdio.h>

#define TLP_MIN_NS 200000u   /* a tail-loss probe waits at least this */
#define HEAVY_LOSS_DEN 5     /* a fifth of the flight lost in an episode: cut the rate... */
#define HEAVY_LOSS_MIN 4     /* ...when that is this many datagrams at least */
#define LOSS_ONE 65536u      /* the loss-rate average is a fraction of this */
#define LOSS_SHIFT 8         /* ... over about 2^8 datagrams */
#define RTT_REFRESH_NS 10000000u /* answers alone ask for a sample this often (10 ms) */

/* What the datagrams an acknowledgement covers say. */
struct ack_tally {
    uint64_t sample_sent;  /* newest transmission that gives an RTT sample (0: none) */
    int proof;             /* one shows that the last timeout was a false alarm */
    int fresh;             /* one was sent once, after the last timeout: the back-off ends */
    uint32_t len_max;      /* the largest of them */
};

/* The window of the delivery-rate filter: ten round trips, at least 1 ms. */
static uint64_t rate_window(const struct gas_udp_chan *ch)
{
    uint64_t w = 10 * ch->rtt.srtt;
    return w > 1000000u ? w : 1000000u;
}

void gas_udp_mark_lost(struct gas_udp_chan *ch, struct gas_udp_slot *s)
{
    s->state = SLOT_LOST;
    ch->lost++;
    ch->inflight -= s->len;
    atomic_fetch_sub(&gas_udp_g.inflight_total, s->len);
}

/* Count n datagrams into the loss-rate average, `lost` of them lost. */
static void loss_rate(struct gas_udp_chan *ch, unsigned n, unsigned lost)
{
    for (unsigned i = 0; i < n; i++)
        ch->loss_avg += ((i < lost ? (int32_t)LOSS_ONE : 0) - ch->loss_avg) / (1 << LOSS_SHIFT);
}

/* `lost` datagrams were found lost by fast retransmit. */
static void loss_event(struct gas_udp_chan *ch, uint32_t lost, uint64_t now)
{
    loss_rate(ch, lost, lost);
    if (!ch->in_recovery) { /* a new episode: one decrease */
        int random = (uint64_t)ch->loss_avg * 1000000u <
                     (uint64_t)gas_udp_g.cfg.loss_tolerance_ppm * LOSS_ONE;
        uint64_t w = random ? ch->cwnd - ch->cwnd * 3 / 20 : ch->cwnd / 2;
        ch->ssthresh = w > ch->cwnd_min ? w : ch->cwnd_min;
        ch->cwnd = ch->ssthresh;
        ch->ep_flight = ch->snd_nxt - ch->una;
        ch->ep_lost = 0;
        ch->ep_cut = 0;
        ch->in_recovery = 1;
        ch->rec_timeout = 0;
        ch->recover = ch->snd_nxt;
    }
    ch->ep_lost += lost;
    if (!ch->ep_cut && !ch->rec_timeout && ch->ep_lost >= HEAVY_LOSS_MIN &&
        ch->ep_lost * HEAVY_LOSS_DEN > ch->ep_flight) {
        gas_udp_rate_cut(&ch->rate, 7, 10, now);
        ch->ep_cut = 1;
    }
    gas_udp_pace_update(ch, now);
}

/* Take a slot out of flight as acknowledged, noting in *t what it shows;
 * its bytes, for the window. */
static uint64_t slot_acked(struct gas_udp_chan *ch, struct gas_udp_slot *s, struct ack_tally *t,
                           uint64_t now)
{
    if (s->state == SLOT_SACKED)
        return 0;
    if (s->state == SLOT_FLIGHT && s->ntx == 1 && s->last_ns < ch->backoff_ns)
        t->proof = 1; /* sent before the timeout, once, and arrived */
    if (s->ntx == 1 && s->first_ns >= ch->backoff_ns)
        t->fresh = 1;
    if (s->len > t->len_max)
        t->len_max = s->len;
    gas_udp_rate_acked(&ch->rate, &s->snap, s->len, now, rate_window(ch));
    if (s->state == SLOT_FLIGHT) {
        ch->inflight -= s->len;
        atomic_fetch_sub(&gas_udp_g.inflight_total, s->len);
    } else if (s->state == SLOT_LOST) {
        ch->lost--;
    }
    /* Karn: only a datagram sent once gives an unambiguous sample, and after
     * a timeout only one first sent after it (else the back-off is undone by
     * the short round trips of datagrams sent before the trouble).  A datagram
     * of replies alone may be acknowledged late on purpose: no sample, unless
     * it asked for its acknowledgement at once. */
    if (s->ntx == 1 && (s->ask || s->req_ack) && s->first_ns >= ch->backoff_ns &&
        s->last_ns > t->sample_sent)
        t->sample_sent = s->last_ns;
    s->state = SLOT_SACKED;
    return s->len;
}

/* The last timeout was a false alarm: the window it cut comes back. */
static void undo_timeout(struct gas_udp_chan *ch)
{
    ch->spur_check = 0;
    ch->frto = 0;
    ch->c.spurious++;
    if (ch->cwnd < ch->spur_cwnd)
        ch->cwnd = ch->spur_cwnd;
    if (ch->ssthresh < ch->spur_ssthresh)
        ch->ssthresh = ch->spur_ssthresh;
    ch->in_recovery = 0;
}

/* The receiver got number seq twice: if the last timeout resent it, nothing
 * was lost in the network. */
static void spurious_check(struct gas_udp_chan *ch, uint32_t seq)
{
    if (!ch->spur_check || gas_udp_seq_lt(seq, ch->spur_lo) || gas_udp_seq_ge(seq, ch->spur_hi))
        return;
    undo_timeout(ch);
}

/* The first acknowledgement after a timeout (F-RTO): a false alarm when it
 * covers a datagram sent before the timeout and never resent; else every
 * datagram sent before the timeout and still out is lost, and the rate
 * estimate is halved. */
static void frto_verdict(struct gas_udp_chan *ch, int proof, uint64_t now)
{
    if (proof) {
        undo_timeout(ch);
        return;
    }
    ch->frto = 0;
    for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
        if (s->state == SLOT_FLIGHT && s->last_ns < ch->backoff_ns)
            gas_udp_mark_lost(ch, s);
    }
    gas_udp_rate_cut(&ch->rate, 1, 2, now);
}

int gas_udp_want_sample(const struct gas_udp_chan *ch, uint64_t now)
{
    if (ch->rtt.srtt == 0)
        return 1;
    uint64_t last = ch->sample_ns > ch->sample_ask_ns ? ch->sample_ns : ch->sample_ask_ns;
    return now - last >= RTT_REFRESH_NS;
}

/* The tail-loss probe's delay: two round trips, or the smoothed one plus
 * four deviations when that is longer (an acknowledgement later than that
 * is rare, even from a receiver that was descheduled), at least
 * TLP_MIN_NS; 0 (none) before the first RTT sample. */
static uint64_t tlp_delay(const struct gas_udp_chan *ch)
{
    uint64_t d = 2 * ch->rtt.srtt, v = ch->rtt.srtt + 4 * ch->rtt.rttvar;
    d = v > d ? v : d;
    if (!ch->tail_ask) /* replies alone: the peer may hold its acknowledgement */
        d += gas_udp_g.cfg.ack_delay;
    return ch->rtt.srtt == 0 ? 0 : d > TLP_MIN_NS ? d : TLP_MIN_NS;
}

/* Arm the tail-loss probe from now, when it would come before the timeout. */
static void tlp_arm(struct gas_udp_chan *ch, uint64_t now)
{
    uint64_t d = tlp_delay(ch);
    ch->tlp_at = 0;
    if (d == 0 || ch->frto || ch->tlp_out || ch->inflight == 0 ||
        (ch->rto_at && now + d >= ch->rto_at))
        return;
    ch->tlp_at = now + d;
    gas_udp_timer_at(ch->tlp_at);
}

#define MTU_HINT_FLOOR 576u

void gas_udp_mtu_hint(struct gas_udp_chan *ch, char *buf, size_t size)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    buf[0] = '\0';
    for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
        if (s->state != SLOT_FLIGHT && s->state != SLOT_LOST)
            continue;
        lo = s->len < lo ? s->len : lo;
        hi = s->len > hi ? s->len : hi;
    }
    /* A link of an MTU below 576 (the datagram every IPv4 host must take)
     * is not a plausible cause: there, small datagrams going unacknowledged
     * after smaller ones got through mean a peer that stopped (and the
     * advice could not be followed below GAS_UDP_MTU's floor of 364). */
    if (hi == 0 || ch->ack_len_last == 0 || lo <= ch->ack_len_last ||
        lo + GAS_UDP_IP_UDP_OVERHEAD <= MTU_HINT_FLOOR)
        return;
    snprintf(buf, size, "; only datagrams of %u%s bytes went unacknowledged while smaller ones "
             "got through (the last acknowledgement covered up to %u): a link on the path may "
             "have an MTU below %u; if rank %d is alive, lower GAS_UDP_MTU", lo,
             lo == hi ? "" : " or more", ch->ack_len_last, lo + GAS_UDP_IP_UDP_OVERHEAD, ch->rank);
}

void gas_udp_loss_sent(struct gas_udp_chan *ch, uint64_t now)
{
    if (ch->rto_at == 0) {
        ch->rto_at = now + gas_udp_rtt_timeout(&ch->rtt);
        gas_udp_timer_at(ch->rto_at);
    }
    if (ch->tlp_at == 0)
        tlp_arm(ch, now);
}

int gas_udp_chan_ack_in(struct gas_udp_chan *ch, const struct gas_udp_hdr *h, uint64_t now)
{
    uint32_t ack = h->ack;
    uint64_t sack = h->sack;
    if (gas_udp_seq_gt(ack, ch->snd_nxt))
        return -1;
    if (h->dsack)
        spurious_check(ch, ack - h->dsack);
    uint64_t acked = 0, old_sacked = ch->sacked_txorder, n;
    unsigned nacked = 0;
    struct ack_tally t = {0, 0, 0, 0};
    while (gas_udp_seq_lt(ch->una, ack)) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, ch->una);
        acked += n = slot_acked(ch, s, &t, now);
        nacked += n != 0;
        gas_udp_buf_put(ch, s->buf);
        s->buf = NULL;
        ch->una++;
    }
    for (unsigned i = 0; i < 64 && sack >> i; i++) {
        uint32_t seq = ack + 1 + i;
        if (!(sack >> i & 1) || gas_udp_seq_lt(seq, ch->una))
            continue;
        if (gas_udp_seq_ge(seq, ch->snd_nxt))
            break;
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
        if (s->state != SLOT_SACKED && s->txorder > ch->sacked_txorder)
            ch->sacked_txorder = s->txorder;
        acked += n = slot_acked(ch, s, &t, now);
        nacked += n != 0;
    }
    if (t.sample_sent && now > t.sample_sent) {
        gas_udp_rtt_sample(&ch->rtt, now - t.sample_sent);
        ch->sample_ns = now;
    } else if (t.fresh) {
        gas_udp_rtt_progress(&ch->rtt);
    }
    loss_rate(ch, nacked, 0);
    if (acked && ch->frto)
        frto_verdict(ch, t.proof, now);
    if (acked) {
        ch->last_progress_ns = now;
        ch->ack_len_last = t.len_max;
        ch->tlp_out = 0;
        ch->rto_at = ch->inflight ? now + gas_udp_rtt_timeout(&ch->rtt) : 0;
        tlp_arm(ch, now);
        if (!ch->in_recovery || ch->rec_timeout) {
            if (ch->cwnd < ch->ssthresh)
                ch->cwnd += acked;
            else
                ch->cwnd += (uint64_t)ch->dgram_max * acked / ch->cwnd + 1;
            if (ch->cwnd > ch->cwnd_max)
                ch->cwnd = ch->cwnd_max;
        }
    }
    if (ch->in_recovery && gas_udp_seq_ge(ch->una, ch->recover))
        ch->in_recovery = 0;
    if (ch->sacked_txorder > old_sacked) {
        /* Three datagrams sent after this one arrived: it was lost. */
        uint32_t lost = 0;
        for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
            struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
            if (s->state == SLOT_FLIGHT && s->txorder + GAS_UDP_DUPTHRESH <= ch->sacked_txorder) {
                gas_udp_mark_lost(ch, s);
                lost++;
            }
        }
        if (lost)
            loss_event(ch, lost, now);
    }
    if (acked)
        gas_udp_pace_update(ch, now);
    return 0;
}

void gas_udp_chan_cack(struct gas_udp_chan *ch, uint32_t cack, uint64_t now)
{
    uint32_t cur = atomic_load_explicit(&ch->cacked, memory_order_relaxed);
    if (gas_udp_seq_gt(cack, cur) && gas_udp_seq_le(cack, ch->next_seq)) {
        atomic_store_explicit(&ch->cacked, cack, memory_order_release);
        if (ch->user_owed && !gas_udp_seq_lt(cack, ch->user_until))
            ch->user_owed = 0; /* the caller's operations completed */
        ch->last_progress_ns = now;
        ch->probe_backoff = 0;
    }
}

/* No progress for a whole timeout: resend the oldest datagram out that
 * long, whatever the windows say; the next acknowledgement tells whether
 * the others were lost too (frto_verdict). */
static void timeout(struct gas_udp_chan *ch, uint64_t now)
{
    uint64_t rto = gas_udp_rtt_timeout(&ch->rtt);
    for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
        if (s->state != SLOT_FLIGHT || now < s->last_ns + rto)
            continue;
        if (!ch->frto) {
            ch->spur_cwnd = ch->cwnd;
            ch->spur_ssthresh = ch->ssthresh;
            ch->ssthresh = ch->cwnd / 2 > ch->cwnd_min ? ch->cwnd / 2 : ch->cwnd_min;
            ch->cwnd = ch->cwnd_min;
            ch->in_recovery = 1;
            ch->rec_timeout = 1; /* the window slow-starts again at once */
            ch->recover = ch->snd_nxt;
            ch->frto = 1;
        }
        gas_udp_mark_lost(ch, s);
        ch->rto_probe = 1;
        ch->tlp_at = 0;
        ch->spur_lo = seq;
        ch->spur_hi = seq + 1;
        ch->spur_check = 1;
        gas_udp_rtt_backoff(&ch->rtt);
        ch->backoff_ns = now;
        break;
    }
    ch->rto_at = ch->inflight || ch->lost ? now + gas_udp_rtt_timeout(&ch->rtt) : 0;
}

/* Two round trips without an acknowledgement: send the newest datagram out
 * again (it, or the acknowledgement it asked for, may have been lost). */
static void tail_probe(struct gas_udp_chan *ch)
{
    ch->tlp_at = 0;
    if (ch->frto || ch->tlp_out)
        return;
    for (uint32_t seq = ch->snd_nxt; seq != ch->una; seq--) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq - 1);
        if (s->state == SLOT_FLIGHT) {
            gas_udp_mark_lost(ch, s);
            ch->rto_probe = 1;
            ch->tlp_out = 1;
            return;
        }
    }
}

uint64_t gas_udp_loss_timers(struct gas_udp_chan *ch, uint64_t now)
{
    if (ch->rto_at && now >= ch->rto_at)
        timeout(ch, now);
    else if (ch->tlp_at && now >= ch->tlp_at)
        tail_probe(ch);
    uint64_t next = ch->rto_at ? ch->rto_at : GAS_UDP_NEVER;
    return ch->tlp_at && ch->tlp_at < next ? ch->tlp_at : next;
}
