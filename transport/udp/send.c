/*
 * send.c - the send side of a channel: what may go out (the window in
 * datagrams, the congestion window in bytes: AIMD, slow start, +1 datagram per
 * round trip, halved once per loss episode, back to its floor on a timeout;
 * ceiling GAS_UDP_INFLIGHT_NEAR/FAR; and the rank's total bytes in flight),
 * batched transmission, acknowledgements in (cumulative, selective, dsack),
 * standalone acknowledgements out, loss detection and the timers.
 *
 * Losses are found by selective acks (a datagram with three later-sent ones
 * acknowledged) or by the RFC 6298 timer, and retransmitted before new data.
 * There is one timer per channel, restarted whenever an acknowledgement makes
 * progress (as TCP's), so the tail of a long burst queued at a busy receiver
 * is not taken for lost.  A timeout resends only the oldest datagram; the
 * next acknowledgement decides (F-RTO, RFC 5682): if it acknowledges a
 * datagram sent before the timeout and never resent, nothing was lost (the
 * receiver or its acknowledgements were only late: a descheduled process)
 * and the window cut is undone; else everything sent before the timeout is
 * taken for lost.  When the receiver reports (dsack) that a datagram resent
 * by a timeout arrived twice, the cut is undone too.
 *
 * Pacing (GAS_UDP_PACE, rate.h): datagrams leave no faster than a multiple
 * of the delivery rate measured from the acknowledgements, in bursts of at
 * most GAS_UDP_PACE_BURST; when the bucket is empty a timer sends the rest.
 * The estimate is cut on a loss.  All functions here are called with the
 * channel's lock held.
 */
#include "transport/udp/udp.h"
#include "runtime/clock.h"

#include <stdio.h>
#include <string.h>

#define RETRY_NS 200000u /* retry after the socket buffer was full */

/* The duplicate to report, as its distance back from the acknowledgement. */
static uint16_t dsack_field(const struct gas_udp_chan *ch)
{
    uint32_t d = ch->rx.next - ch->dsack_seq;
    return ch->have_dsack && d <= UINT16_MAX ? (uint16_t)d : 0;
}

/* ---- sending ---- */

/* Datagrams about to go out, by number: sealing may grow (move) the ring. */
struct batch {
    unsigned char *bufs[GAS_UDP_BATCH];
    uint32_t lens[GAS_UDP_BATCH];
    uint32_t seqs[GAS_UDP_BATCH];
    unsigned n;
};

/* Finish the headers of a batch and send it; undo what the kernel did not take. */
static void send_batch(struct gas_udp_chan *ch, struct batch *b, int last, uint64_t now)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (b->n == 0)
        return;
    for (unsigned i = 0; i < b->n; i++) {
        uint8_t flags = (gas_udp_slot_at(ch, b->seqs[i])->ntx ? GAS_UDP_F_RETX : 0) |
                        (last && i == b->n - 1 ? GAS_UDP_F_ACKREQ : 0);
        gas_udp_hdr_refresh(b->bufs[i], flags, dsack_field(ch), ch->rx.next);
        gas_udp_dgram_sum_set(b->bufs[i], b->lens[i], (uint32_t)ch->rank);
    }
    unsigned took = gas_udp_sock_send(&ch->addr, b->bufs, b->lens, b->n);
    uint64_t bytes = 0, retx = 0;
    for (unsigned i = 0; i < b->n; i++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, b->seqs[i]);
        if (i < took) {
            retx += s->ntx != 0;
            if (s->ntx < 255)
                s->ntx++;
            if (s->ntx == 1)
                s->first_ns = now;
            s->last_ns = now;
            s->txorder = ++ch->txorder;
            bytes += s->len;
        } else { /* not sent: back to the lost list, retried soon */
            s->state = SLOT_LOST;
            ch->lost++;
            ch->inflight -= s->len;
            atomic_fetch_sub(&g->inflight_total, s->len);
            ch->retry_ns = now + RETRY_NS;
        }
    }
    if (took) {
        ch->c.dg_tx += took;
        ch->c.b_tx += bytes;
        ch->c.retx += retx;
        GAS_UDP_COUNT(dg_tx, took);
        GAS_UDP_COUNT(b_tx, bytes);
        GAS_UDP_COUNT(retx, retx);
        /* These carried the acknowledgement, but selective bits travel only
         * in standalone acknowledgements: one still goes when there is a gap. */
        ch->ack_pending = 0;
        ch->ack_now = gas_udp_rxwin_sack(&ch->rx) != 0;
        ch->ack_due_ns = 0;
        ch->have_dsack = 0;
        atomic_store_explicit(&g->last_activity_ns, now, memory_order_relaxed);
        if (ch->rto_at == 0) {
            ch->rto_at = now + gas_udp_rtt_timeout(&ch->rtt);
            gas_udp_timer_at(ch->rto_at);
        }
    }
    if (took < b->n)
        gas_udp_timer_at(ch->retry_ns);
    b->n = 0;
}

/* The window of the delivery-rate filter: ten round trips, at least 1 ms. */
static uint64_t rate_window(const struct gas_udp_chan *ch)
{
    uint64_t w = 10 * ch->rtt.srtt;
    return w > 1000000u ? w : 1000000u;
}

/* Pace at the gain over the estimate (twice it in slow start), or not at all
 * without an estimate. */
static void pace_update(struct gas_udp_chan *ch, uint64_t now)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    if (!c->pace)
        return;
    uint64_t bw = gas_udp_rate_bw(&ch->rate, now);
    double gain = ch->cwnd < ch->ssthresh ? 2.0 : (double)c->pace_gain_ppm / 1e6;
    gas_udp_pace_set(&ch->rate, (uint64_t)((double)bw * gain), now);
}

/* May the pacer let len bytes go now?  If not, a timer sends them when it may. */
static int pace_allows(struct gas_udp_chan *ch, uint32_t len, uint64_t now)
{
    uint64_t when;
    if (gas_udp_pace_take(&ch->rate, len, now, &when))
        return 1;
    ch->pace_at = when;
    gas_udp_timer_at(when);
    return 0;
}

/* May a datagram of len bytes go out now? (Always one when nothing is in flight.) */
static int window_allows(struct gas_udp_chan *ch, uint32_t len, int is_new)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (is_new && ch->snd_nxt - ch->una >= g->cfg.window)
        return 0;
    if (ch->inflight == 0)
        return 1;
    if (ch->inflight + len > ch->cwnd)
        return 0;
    if (atomic_load_explicit(&g->inflight_total, memory_order_relaxed) + len >
        g->cfg.inflight_total) {
        atomic_store(&g->total_blocked, 1);
        return 0;
    }
    return 1;
}

void gas_udp_chan_push(struct gas_udp_chan *ch, uint64_t now, int flush)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (atomic_load_explicit(&ch->dead, memory_order_relaxed) || !ch->have_addr)
        return;
    if (ch->retry_ns && now < ch->retry_ns)
        return;
    ch->retry_ns = 0;
    if (ch->inflight == 0)
        pace_update(ch, now); /* after a pause the estimate may have lapsed */
    struct batch b;
    b.n = 0;
    uint32_t scan = ch->una;
    for (;;) {
        struct gas_udp_slot *s = NULL;
        uint32_t seq = 0;
        int is_new = 0;
        if (ch->lost) {
            for (; scan != ch->snd_nxt; scan++)
                if (gas_udp_slot_at(ch, scan)->state == SLOT_LOST) {
                    seq = scan++;
                    s = gas_udp_slot_at(ch, seq);
                    break;
                }
        }
        if (s == NULL) {
            if (ch->snd_nxt == ch->next_seq && ch->open && ch->open_len > GAS_UDP_HDR_LEN &&
                window_allows(ch, ch->open_len, 1)) {
                if (flush || ch->snd_nxt - ch->una < GAS_UDP_CORK ||
                    ch->open_len >= g->cfg.dgram_max / 2)
                    gas_udp_chan_seal(ch, now);
                else if (!atomic_load_explicit(&g->corked, memory_order_relaxed))
                    atomic_store(&g->corked, 1);
            }
            if (ch->snd_nxt == ch->next_seq)
                break;
            seq = ch->snd_nxt;
            s = gas_udp_slot_at(ch, seq);
            is_new = 1;
        }
        /* A timeout's probe goes whatever the windows and the pacer say. */
        if (!(ch->rto_probe && !is_new) &&
            (!window_allows(ch, s->len, is_new) || !pace_allows(ch, s->len, now)))
            break;
        ch->rto_probe = 0;
        unsigned snap = (ch->inflight == 0 ? GAS_UDP_SNAP_IDLE : 0) |
                        (s->ntx ? GAS_UDP_SNAP_RESENT : 0);
        if (is_new) {
            ch->snd_nxt++;
            atomic_fetch_sub_explicit(&ch->queued, s->len - GAS_UDP_HDR_LEN, memory_order_relaxed);
            if (ch->snd_nxt == ch->next_seq)
                snap |= GAS_UDP_SNAP_APP; /* nothing else waits: the sender sets the pace */
        } else {
            ch->lost--;
        }
        gas_udp_rate_snap(&ch->rate, now, snap, &s->snap);
        s->state = SLOT_FLIGHT;
        ch->inflight += s->len;
        atomic_fetch_add(&g->inflight_total, s->len);
        b.bufs[b.n] = s->buf;
        b.lens[b.n] = s->len;
        b.seqs[b.n++] = seq;
        if (b.n == GAS_UDP_BATCH)
            send_batch(ch, &b, 0, now);
        if (ch->retry_ns)
            break;
    }
    send_batch(ch, &b, 1, now);
}

void gas_udp_chan_send_ack(struct gas_udp_chan *ch, uint64_t now, uint8_t flags)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (!ch->have_addr)
        return;
    /* Replies to what this acknowledges must be numbered before it (cack). */
    gas_udp_chan_seal(ch, now);
    unsigned char buf[GAS_UDP_ACK_LEN];
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ | flags,
                            .dsack = dsack_field(ch), .key = g->env.job_key,
                            .src = (uint32_t)g->env.rank, .seq = ch->next_seq, .ack = ch->rx.next,
                            .sack = gas_udp_rxwin_sack(&ch->rx), .cack = ch->rx.next};
    gas_udp_hdr_write(buf, &h);
    gas_udp_dgram_sum_set(buf, sizeof buf, (uint32_t)ch->rank);
    unsigned char *bp = buf;
    uint32_t len = sizeof buf;
    if (gas_udp_sock_send(&ch->addr, &bp, &len, 1) == 1) {
        ch->ack_pending = 0;
        ch->ack_now = 0;
        ch->ack_due_ns = 0;
        ch->have_dsack = 0;
        ch->c.ack_tx++;
        ch->c.dg_tx++;
        ch->c.b_tx += len;
        GAS_UDP_COUNT(ack_tx, 1);
        GAS_UDP_COUNT(dg_tx, 1);
        GAS_UDP_COUNT(b_tx, len);
    } else {
        ch->ack_due_ns = now + RETRY_NS;
        gas_udp_timer_at(ch->ack_due_ns);
    }
}

/* ---- acknowledgements ---- */

static void mark_lost(struct gas_udp_chan *ch, struct gas_udp_slot *s)
{
    s->state = SLOT_LOST;
    ch->lost++;
    ch->inflight -= s->len;
    atomic_fetch_sub(&gas_udp_g.inflight_total, s->len);
}

static void congestion_event(struct gas_udp_chan *ch, int timeout, uint64_t now)
{
    if (!timeout && ch->in_recovery)
        return; /* one decrease per loss episode */
    if (!timeout) { /* a timeout cuts the rate once it is known to be no false alarm */
        gas_udp_rate_cut(&ch->rate, 7, 10, now);
        pace_update(ch, now);
    }
    ch->ssthresh = ch->cwnd / 2 > ch->cwnd_min ? ch->cwnd / 2 : ch->cwnd_min;
    ch->cwnd = timeout ? ch->cwnd_min : ch->ssthresh;
    ch->in_recovery = 1;
    ch->rec_timeout = timeout; /* after a timeout the window slow-starts again at once */
    ch->recover = ch->snd_nxt;
}

/* Take a slot out of flight as acknowledged; its bytes, for the window.
 * *proof_p is set when it shows that the last timeout was a false alarm
 * (it was sent before it, once, and arrived). */
static uint64_t slot_acked(struct gas_udp_chan *ch, struct gas_udp_slot *s, uint64_t *sample_sent,
                           uint64_t now, int *proof_p)
{
    if (s->state == SLOT_SACKED)
        return 0;
    if (s->state == SLOT_FLIGHT && s->ntx == 1 && s->last_ns < ch->backoff_ns)
        *proof_p = 1;
    gas_udp_rate_acked(&ch->rate, &s->snap, s->len, now, rate_window(ch));
    if (s->state == SLOT_FLIGHT) {
        ch->inflight -= s->len;
        atomic_fetch_sub(&gas_udp_g.inflight_total, s->len);
    } else if (s->state == SLOT_LOST) {
        ch->lost--;
    }
    /* Karn: only a datagram sent once gives an unambiguous sample, and after
     * a timeout only one first sent after it (else the back-off is undone by
     * the short round trips of datagrams sent before the trouble). */
    if (s->ntx == 1 && s->first_ns >= ch->backoff_ns && s->last_ns > *sample_sent)
        *sample_sent = s->last_ns;
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
            mark_lost(ch, s);
    }
    gas_udp_rate_cut(&ch->rate, 1, 2, now);
}

int gas_udp_chan_ack_in(struct gas_udp_chan *ch, const struct gas_udp_hdr *h, uint64_t now)
{
    uint32_t ack = h->ack;
    uint64_t sack = h->sack;
    if (gas_udp_seq_gt(ack, ch->snd_nxt))
        return -1;
    if (h->dsack)
        spurious_check(ch, ack - h->dsack);
    uint64_t acked = 0, sample_sent = 0, old_sacked = ch->sacked_txorder;
    int proof = 0;
    while (gas_udp_seq_lt(ch->una, ack)) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, ch->una);
        acked += slot_acked(ch, s, &sample_sent, now, &proof);
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
        acked += slot_acked(ch, s, &sample_sent, now, &proof);
    }
    if (sample_sent && now > sample_sent)
        gas_udp_rtt_sample(&ch->rtt, now - sample_sent);
    if (acked && ch->frto)
        frto_verdict(ch, proof, now);
    if (acked) {
        ch->last_progress_ns = now;
        ch->rto_at = ch->inflight ? now + gas_udp_rtt_timeout(&ch->rtt) : 0;
        if (!ch->in_recovery || ch->rec_timeout) {
            if (ch->cwnd < ch->ssthresh)
                ch->cwnd += acked;
            else
                ch->cwnd += (uint64_t)gas_udp_g.cfg.dgram_max * acked / ch->cwnd + 1;
            if (ch->cwnd > ch->cwnd_max)
                ch->cwnd = ch->cwnd_max;
        }
    }
    if (ch->in_recovery && gas_udp_seq_ge(ch->una, ch->recover))
        ch->in_recovery = 0;
    if (ch->sacked_txorder > old_sacked) {
        /* Three datagrams sent after this one arrived: it was lost. */
        int loss = 0;
        for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
            struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
            if (s->state == SLOT_FLIGHT && s->txorder + GAS_UDP_DUPTHRESH <= ch->sacked_txorder) {
                mark_lost(ch, s);
                loss = 1;
            }
        }
        if (loss)
            congestion_event(ch, 0, now);
    }
    if (acked)
        pace_update(ch, now);
    return 0;
}

void gas_udp_chan_cack(struct gas_udp_chan *ch, uint32_t cack, uint64_t now)
{
    uint32_t cur = atomic_load_explicit(&ch->cacked, memory_order_relaxed);
    if (gas_udp_seq_gt(cack, cur) && gas_udp_seq_le(cack, ch->next_seq)) {
        atomic_store_explicit(&ch->cacked, cack, memory_order_release);
        ch->last_progress_ns = now;
        ch->probe_backoff = 0;
    }
}

void gas_udp_chan_resend_replies(struct gas_udp_chan *ch, uint32_t dup, uint64_t now)
{
    /* The peer sent `dup` again, so it may not have our answer: the answer
     * is in a datagram sealed after we delivered dup (its cack is past dup),
     * and the acknowledgement the duplicate carried (already applied) says
     * it has not arrived.  Only answers out for a whole timeout are sent
     * again: younger ones may just be queued behind a busy receiver. */
    uint64_t recent = gas_udp_rtt_timeout(&ch->rtt);
    int n = 0;
    for (uint32_t seq = ch->una; seq != ch->snd_nxt && n < 4; seq++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
        if (s->state == SLOT_FLIGHT && gas_udp_seq_gt(s->cack, dup) && now - s->last_ns > recent) {
            mark_lost(ch, s);
            n++;
        }
    }
}

/* ---- timers ---- */

uint64_t gas_udp_chan_timers(struct gas_udp_chan *ch, uint64_t now)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    if (atomic_load_explicit(&ch->dead, memory_order_relaxed))
        return GAS_UDP_NEVER;
    uint64_t next = GAS_UDP_NEVER;
    if (ch->rto_at && now >= ch->rto_at) {
        /* No progress for a whole timeout: resend the oldest datagram out
         * that long, whatever the windows say; the next acknowledgement
         * tells whether the others were lost too (frto_verdict). */
        uint64_t rto = gas_udp_rtt_timeout(&ch->rtt);
        for (uint32_t seq = ch->una; seq != ch->snd_nxt; seq++) {
            struct gas_udp_slot *s = gas_udp_slot_at(ch, seq);
            if (s->state != SLOT_FLIGHT || now < s->last_ns + rto)
                continue;
            if (!ch->frto) {
                ch->spur_cwnd = ch->cwnd;
                ch->spur_ssthresh = ch->ssthresh;
                congestion_event(ch, 1, now);
                ch->frto = 1;
            }
            mark_lost(ch, s);
            ch->rto_probe = 1;
            ch->spur_lo = seq;
            ch->spur_hi = seq + 1;
            ch->spur_check = 1;
            gas_udp_rtt_backoff(&ch->rtt);
            ch->backoff_ns = now;
            break;
        }
        ch->rto_at = ch->inflight || ch->lost ? now + gas_udp_rtt_timeout(&ch->rtt) : 0;
    }
    if (ch->una != ch->next_seq || atomic_load(&ch->cacked) != ch->next_seq) {
        uint64_t quiet_for = now > ch->last_progress_ns ? now - ch->last_progress_ns : 0;
        if (quiet_for >= c->peer_timeout) {
            char why[120];
            snprintf(why, sizeof why, "nothing acknowledged for %.1f s (GAS_UDP_PEER_TIMEOUT)",
                     (double)quiet_for / 1e9);
            gas_udp_chan_kill(ch, why);
            return GAS_UDP_NEVER;
        }
        if (ch->last_progress_ns + c->peer_timeout < next)
            next = ch->last_progress_ns + c->peer_timeout;
    }
    if (ch->una == ch->snd_nxt && ch->snd_nxt == ch->next_seq &&
        atomic_load(&ch->cacked) != ch->next_seq) {
        /* Everything was acknowledged, but the completion point that says
         * so was lost (or is on its way): after a quiet round trip, ask. */
        uint64_t wait = gas_udp_rtt_timeout(&ch->rtt) << ch->probe_backoff;
        if (wait > c->rto_max)
            wait = c->rto_max;
        uint64_t last = ch->last_rx_ns > ch->probe_ns ? ch->last_rx_ns : ch->probe_ns;
        if (now >= last + wait) {
            gas_udp_chan_send_ack(ch, now, GAS_UDP_F_ACKREQ);
            ch->probe_ns = now;
            if (ch->probe_backoff < 16)
                ch->probe_backoff++;
            last = now;
        }
        next = last + wait < next ? last + wait : next;
    }
    if (ch->retry_ns && ch->retry_ns > now && ch->retry_ns < next)
        next = ch->retry_ns;
    if (ch->pace_at && now >= ch->pace_at)
        ch->pace_at = 0; /* the push below sends what the pacer held */
    if (ch->lost || ch->snd_nxt != ch->next_seq || (ch->open && ch->open_len > GAS_UDP_HDR_LEN))
        gas_udp_chan_push(ch, now, 1);
    if (ch->ack_due_ns) {
        if (now >= ch->ack_due_ns)
            gas_udp_chan_send_ack(ch, now, 0);
        else if (ch->ack_due_ns < next)
            next = ch->ack_due_ns;
    }
    if (ch->rto_at && ch->rto_at < next)
        next = ch->rto_at;
    if (ch->pace_at && ch->pace_at < next)
        next = ch->pace_at;
    return next;
}
