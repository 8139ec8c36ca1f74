/*
 * send.c - the send side of a channel: what may go out (the window in
 * datagrams, the congestion window in bytes, the rank's total bytes in
 * flight, and the pacer), batched transmission with losses first,
 * standalone acknowledgements, answers sent again for a peer that timed
 * out, and the channel's timers.  Acknowledgements in and the response to
 * loss are recovery.c.
 *
 * Pacing (GAS_UDP_PACE, rate.h): datagrams leave no faster than the
 * delivery rate measured from the acknowledgements times a gain (below), in
 * bursts of at most GAS_UDP_PACE_BURST; when the bucket is empty a timer
 * sends the rest.  All functions here are called with the channel's lock
 * held.
 */
#include "transport/udp/udp.h"
#include "transport/udp/ctrl.h"
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
    int ask;       /* the burst holds a request or a retransmission, or times a
                    * round trip: its last one asks */
};

/* Finish the headers of a batch and send it; undo what the kernel did not take. */
static void send_batch(struct gas_udp_chan *ch, struct batch *b, int last, uint64_t now)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (b->n == 0)
        return;
    for (unsigned i = 0; i < b->n; i++) {
        uint8_t flags = (gas_udp_slot_at(ch, b->seqs[i])->ntx ? GAS_UDP_F_RETX : 0) |
                        (last && b->ask && i == b->n - 1 ? GAS_UDP_F_ACKREQ : 0);
        gas_udp_hdr_refresh(b->bufs[i], flags, dsack_field(ch), ch->rx.next);
        if (ch->local && !g->cfg.corrupt_ppm) /* injected corruption stands for a wire */
            gas_udp_dgram_hsum_set(b->bufs[i], b->lens[i], (uint32_t)ch->rank);
        else
            gas_udp_dgram_sum_set(b->bufs[i], b->lens[i], (uint32_t)ch->rank);
    }
    unsigned took = gas_udp_sock_send(&ch->addr, b->bufs, b->lens, b->n);
    if (last && took == b->n)
        ch->tail_ask = (uint8_t)(b->ask != 0);
    uint64_t bytes = 0, retx = 0;
    for (unsigned i = 0; i < b->n; i++) {
        struct gas_udp_slot *s = gas_udp_slot_at(ch, b->seqs[i]);
        if (i < took) {
            retx += s->ntx != 0;
            if (s->ntx < 255)
                s->ntx++;
            if (s->ntx == 1) {
                s->first_ns = now;
                s->req_ack = (uint8_t)(last && b->ask && i == b->n - 1);
            }
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
        gas_udp_loss_sent(ch, now);
    }
    if (took < b->n)
        gas_udp_timer_at_urgent(ch->retry_ns);
    b->n = 0;
}

/* The pacing gain over the estimate: twice it in slow start, the estimate
 * itself during loss recovery, else 1 + headroom (so the rate can grow). */
static double pace_gain(const struct gas_udp_chan *ch)
{
    if (ch->in_recovery)
        return 1.0;
    if (ch->cwnd < ch->ssthresh)
        return 2.0;
    return 1.0 + (double)gas_udp_g.cfg.pace_headroom_ppm / 1e6;
}

void gas_udp_pace_update(struct gas_udp_chan *ch, uint64_t now)
{
    if (!ch->paced)
        return;
    uint64_t bw = gas_udp_rate_bw(&ch->rate, now);
    gas_udp_pace_set(&ch->rate, (uint64_t)((double)bw * pace_gain(ch)), now);
}

/* May the pacer let len bytes go now?  If not, a timer sends them when it may. */
static int pace_allows(struct gas_udp_chan *ch, uint32_t len, uint64_t now)
{
    uint64_t when;
    if (gas_udp_pace_take(&ch->rate, len, now, &when))
        return 1;
    ch->pace_at = when;
    gas_udp_timer_at_urgent(when);
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
        gas_udp_pace_update(ch, now); /* after a pause the estimate may have lapsed */
    struct batch b;
    b.n = 0;
    b.ask = 0;
    int paced = 0;
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
            if (ch->snd_nxt == ch->next_seq && gas_udp_chan_has_open(ch) &&
                window_allows(ch, ch->open_len, 1)) {
                if (flush || ch->snd_nxt - ch->una < GAS_UDP_CORK ||
                    ch->open_len >= ch->dgram_max / 2)
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
        /* A timeout's probe goes whatever the windows and the pacer say.
         * Held by the pacer (not the windows), the sender waits for time,
         * not for acknowledgements: its last datagram does not ask for one. */
        if (!(ch->rto_probe && !is_new)) {
            if (!window_allows(ch, s->len, is_new)) {
                b.ask = 1; /* the window is full: acknowledgements are awaited */
                break;
            }
            if (!pace_allows(ch, s->len, now)) {
                paced = 1;
                break;
            }
        }
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
        b.ask |= s->ask || !is_new;
        b.bufs[b.n] = s->buf;
        b.lens[b.n] = s->len;
        b.seqs[b.n++] = seq;
        if (b.n == GAS_UDP_BATCH)
            send_batch(ch, &b, 0, now);
        if (ch->retry_ns)
            break;
    }
    if (b.n && !b.ask && !paced && gas_udp_want_sample(ch, now)) {
        b.ask = 1; /* answers alone, and the round trip is unknown or old: time one */
        ch->sample_ask_ns = now;
    }
    send_batch(ch, &b, !paced, now);
}

int gas_udp_chan_send_standalone(struct gas_udp_chan *ch, const struct gas_udp_hdr *h)
{
    unsigned char buf[GAS_UDP_ACK_LEN];
    gas_udp_hdr_write(buf, h);
    gas_udp_dgram_sum_set(buf, sizeof buf, (uint32_t)ch->rank);
    unsigned char *bp = buf;
    uint32_t len = sizeof buf;
    if (gas_udp_sock_send(&ch->addr, &bp, &len, 1) != 1)
        return 0;
    ch->c.dg_tx++;
    ch->c.b_tx += len;
    GAS_UDP_COUNT(dg_tx, 1);
    GAS_UDP_COUNT(b_tx, len);
    return 1;
}

void gas_udp_chan_send_ack(struct gas_udp_chan *ch, uint64_t now, uint8_t flags)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (!ch->have_addr)
        return;
    /* Replies to what this acknowledges must be numbered before it (cack). */
    gas_udp_chan_seal(ch, now);
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ | flags,
                            .dsack = dsack_field(ch), .key = g->env.job_key,
                            .src = (uint32_t)g->env.rank, .seq = ch->next_seq, .ack = ch->rx.next,
                            .sack = gas_udp_rxwin_sack(&ch->rx), .cack = ch->rx.next};
    if (gas_udp_chan_send_standalone(ch, &h)) {
        ch->ack_pending = 0;
        ch->ack_now = 0;
        ch->ack_due_ns = 0;
        ch->have_dsack = 0;
        ch->c.ack_tx++;
        GAS_UDP_COUNT(ack_tx, 1);
    } else {
        ch->ack_due_ns = now + RETRY_NS;
        gas_udp_timer_at(ch->ack_due_ns);
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
            gas_udp_mark_lost(ch, s);
            n++;
        }
    }
}

/* ---- timers ---- */

uint64_t gas_udp_chan_timers(struct gas_udp_chan *ch, uint64_t now, uint64_t *urgent)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    *urgent = GAS_UDP_NEVER;
    if (atomic_load_explicit(&ch->dead, memory_order_relaxed))
        return GAS_UDP_NEVER;
    if (gas_udp_self_lost() >= 0) {   /* this rank is out of the job */
        gas_udp_chan_retire(ch);
        return GAS_UDP_NEVER;
    }
    uint64_t next = gas_udp_loss_timers(ch, now);
    if (ch->una != ch->next_seq || atomic_load(&ch->cacked) != ch->next_seq) {
        uint64_t quiet_for = now > ch->last_progress_ns ? now - ch->last_progress_ns : 0;
        if (quiet_for >= c->peer_timeout) {
            char why[448], mtu[224];
            gas_udp_mtu_hint(ch, mtu, sizeof mtu);
            if (mtu[0] == '\0')
                gas_udp_loopback_hint(ch, mtu, sizeof mtu);
            snprintf(why, sizeof why, "nothing acknowledged for %.1f s (GAS_UDP_PEER_TIMEOUT%s)%s",
                     (double)quiet_for / 1e9, gas_udp_poll_hint(), mtu);
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
    if (ch->pace_at && now >= ch->pace_at)
        ch->pace_at = 0; /* the push below sends what the pacer held */
    if (ch->lost || ch->snd_nxt != ch->next_seq || gas_udp_chan_has_open(ch))
        gas_udp_chan_push(ch, now, 1);
    if (ch->ack_due_ns) {
        if (now >= ch->ack_due_ns)
            gas_udp_chan_send_ack(ch, now, 0);
        else if (ch->ack_due_ns < next)
            next = ch->ack_due_ns;
    }
    /* Deadlines that hold data back: pacing, a send the kernel refused. */
    uint64_t u = ch->retry_ns > now ? ch->retry_ns : GAS_UDP_NEVER;
    if (ch->pace_at && ch->pace_at < u)
        u = ch->pace_at;
    *urgent = u;
    return u < next ? u : next;
}
