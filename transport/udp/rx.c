/*
 * rx.c - the receive side: a batch of datagrams (recvmmsg) is checked, each
 * good one goes to its peer's channel: its acknowledgement first, then its
 * records, which are applied strictly in sequence order (early datagrams are
 * held; duplicates are dropped, so every put and atomic is applied exactly
 * once).  As target, this rank checks every offset and length against its
 * segment before touching it and answers gets, fetching atomics, tracked
 * operations and refusals; as initiator it completes operations from the
 * answers.  After the batch, each channel that received something answers
 * (its replies carry the acknowledgement), or acknowledges alone.
 */
#include "transport/udp/bounds.h"
#include "transport/udp/udp.h"
#include "transport/udp/ctrl.h"
#include "alloc/segment.h"
#include "runtime/clock.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/local.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define LOG_EVERY_NS 1000000000ull /* bad-datagram warnings: at most one a second per kind */

static void count_bad(struct gas_udp_chan *ch, const struct sockaddr_in *from, const char *why)
{
    GAS_UDP_COUNT(bad, 1);
    if (ch) {
        pthread_mutex_lock(&ch->lock);
        ch->c.bad++;
        pthread_mutex_unlock(&ch->lock);
    }
    char as[48];
    gas_udp_addr_str(from, as, sizeof as);
    gas_log_warn_ratelimited("udp", LOG_EVERY_NS, "dropped a datagram from %s: %s", as, why);
}

/* ---- as target ---- */

/* Append an answer without data (DONE, AMO_REPLY, ERR). */
static void reply(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    if (gas_udp_chan_room(ch, gas_udp_rec_fixed(r->type, r->flags), 0) == GAS_UDP_NOROOM)
        return; /* no memory for a datagram: the peer's operation times out */
    gas_udp_chan_append(ch, r);
}

/*
 * Answer req with ERR: the request of its operation at [off, off + len) was
 * refused with st; why says what the range reached (logged, rate-limited).
 */
static void refuse(struct gas_udp_chan *ch, const struct gas_udp_rec *req, gas_status_t st,
                   uint64_t off, uint64_t len, const char *what, const char *why)
{
    ch->c.rejected++;
    GAS_UDP_COUNT(rejected, 1);
    gas_log_warn_ratelimited("udp", LOG_EVERY_NS,
                             "refused a %s from rank %d: offset %llu, %llu bytes (%s: %s; "
                             "segment %llu bytes)",
                             what, ch->rank, (unsigned long long)off, (unsigned long long)len,
                             gas_strerror(st), why, (unsigned long long)gas_udp_g.env.seg_size);
    struct gas_udp_rec e = {.type = GAS_UDP_R_ERR, .flags = req->flags & GAS_UDP_RF_FINAL,
                            .op = req->op, .off = off, .a = (uint64_t)(int64_t)st, .b = len};
    reply(ch, &e);
}

/*
 * Whether [off, off + len) reaches into this rank's unclaimed middle: above
 * the top the heap can reach and below its gas_alloc memory (the segment
 * header's heap_top and arena_floor, alloc/space.h), where nothing lives.
 * An initiator over shm checks this itself (it reads the header); one off
 * this node cannot, so the target does.
 */
static int in_gap(uint64_t off, uint64_t len)
{
    const struct gas_al_seg_hdr *h = gas_al_seg_hdr(gas_udp_g.env.seg_base);
    uint64_t top = __atomic_load_n(&h->heap_top, __ATOMIC_ACQUIRE);
    uint64_t floor = __atomic_load_n(&h->arena_floor, __ATOMIC_ACQUIRE);
    return len > 0 && top != 0 && top < floor && off < floor && off + len > top;
}

/* Why this rank refuses [off, off + len) (checked without a sum that can
 * overflow): NULL when it lies in the segment and out of the unclaimed middle. */
static const char *range_refusal(uint64_t off, uint64_t len)
{
    if (!gas_udp_range_ok(off, len, GAS_AL_HEADER_BYTES, gas_udp_g.env.seg_size))
        return "outside the segment";
    if (in_gap(off, len))
        return "reaches into the unclaimed middle between the heap and the gas_alloc memory";
    return NULL;
}

/*
 * The start of the operation that the piece r (len bytes at r->off, r->pos
 * bytes into it) belongs to, in *start_p; 0 when the piece does not lie
 * inside the operation's r->total bytes (a malformed request).
 */
static int op_start(const struct gas_udp_rec *r, uint64_t len, uint64_t *start_p)
{
    if (r->pos > r->off || r->pos > r->total || len > r->total - r->pos)
        return 0;
    *start_p = r->off - r->pos;
    return 1;
}

static int put_was_refused(const struct gas_udp_chan *ch, uint32_t op, uint64_t start,
                           uint64_t total)
{
    return ch->rx_refused.set && ch->rx_refused.op == op && ch->rx_refused.start == start &&
           ch->rx_refused.total == total;
}

/* A put's refusal: what to answer (ERR) and log. */
struct put_no {
    gas_status_t st;
    uint64_t off, len;   /* the whole put's range, or its signal word's */
    const char *what, *why;
};

/*
 * Whether the put that r is a piece of is refused (*no filled), judged
 * whole: its range and its signal word, on every piece, so a put is applied
 * whole or not at all.  Also the piece itself, in case the unclaimed middle
 * grew since the put's first piece (which only a racing allocation does).
 */
static int put_refused(const struct gas_udp_rec *r, uint64_t start, struct put_no *no)
{
    *no = (struct put_no){GAS_ERR_BOUNDS, start, r->total, "put", range_refusal(start, r->total)};
    if (no->why == NULL)
        no->why = range_refusal(r->off, r->dlen);
    if (no->why == NULL && (r->flags & GAS_UDP_RF_SIGNAL)) {
        *no = (struct put_no){GAS_ERR_BOUNDS, r->a, 8, "signal", range_refusal(r->a, 8)};
        if (r->a % 8) {
            no->st = GAS_ERR_ALIGN;
            no->why = "misaligned";
        }
    }
    return no->why != NULL;
}

/* A piece of a refused put: nothing written; the FINAL piece completes a
 * tracked put (DONE: its ERR already gave the failure) and ends the put. */
static void put_skip(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    if (!(r->flags & GAS_UDP_RF_FINAL))
        return;
    ch->rx_refused.set = 0;
    if (r->op) {
        struct gas_udp_rec d = {.type = GAS_UDP_R_DONE, .op = r->op};
        reply(ch, &d);
    }
}

/*
 * A PUT piece.  Its put is judged whole (put_refused) before any byte of it
 * is written: a refused put is answered with one ERR naming its whole range
 * (or its signal word) and remembered, and its later pieces are dropped
 * unwritten, so no byte and no signal of it lands.  The FINAL piece of an
 * accepted put-with-signal applies the signal after its data.
 */
static void target_put(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    const gas_tl_env_t *e = &gas_udp_g.env;
    uint64_t start;
    struct put_no no;
    if (!op_start(r, r->dlen, &start)) {
        refuse(ch, r, GAS_ERR_BOUNDS, r->off, r->dlen, "put", "a piece outside its put");
        return;
    }
    if (r->pos > 0 && put_was_refused(ch, r->op, start, r->total)) {
        put_skip(ch, r);
        return;
    }
    if (put_refused(r, start, &no)) {
        refuse(ch, r, no.st, no.off, no.len, no.what, no.why);
        ch->rx_refused.op = r->op;
        ch->rx_refused.start = start;
        ch->rx_refused.total = r->total;
        ch->rx_refused.set = !(r->flags & GAS_UDP_RF_FINAL);
        return;
    }
    if (put_was_refused(ch, r->op, start, r->total))
        ch->rx_refused.set = 0; /* a new put of the same range, accepted now */
    memcpy(e->seg_base + r->off, r->data, r->dlen);
    gas_udp_ring_own(r->off, r->dlen);
    if ((r->flags & GAS_UDP_RF_SIGNAL) && (r->flags & GAS_UDP_RF_FINAL)) {
        gas_tl_signal_apply(e->seg_base + r->a, r->b,
                            r->flags & GAS_UDP_RF_SIG_ADD ? GAS_SIGNAL_ADD : GAS_SIGNAL_SET);
        gas_udp_ring_own(r->a, 8);
    }
    if ((r->flags & GAS_UDP_RF_FINAL) && r->op) {
        struct gas_udp_rec d = {.type = GAS_UDP_R_DONE, .op = r->op};
        reply(ch, &d);
    }
}

/*
 * A GET piece: answered only when the whole get lies in memory this rank
 * serves, so a get that reaches anywhere it may not is refused in every
 * piece and no data of it reaches the initiator's buffer.  Each refusal
 * names its piece (the initiator counts the bytes answered).
 */
static void target_get(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    const gas_tl_env_t *e = &gas_udp_g.env;
    uint64_t len = r->a, start;
    const char *why = len > GAS_UDP_GET_MAX || !op_start(r, len, &start)
                          ? "a malformed piece"
                          : range_refusal(start, r->total);
    if (why) {
        refuse(ch, r, GAS_ERR_BOUNDS, r->off, len, "get", why);
        return;
    }
    for (uint64_t k = 0; k < len;) {
        struct gas_udp_rec d = {.type = GAS_UDP_R_GET_REPLY, .op = r->op, .off = r->b + k};
        size_t n = gas_udp_chan_room(ch, gas_udp_chan_fixed(ch, &d), len - k);
        if (n == GAS_UDP_NOROOM || n == 0)
            return;
        d.dlen = (uint16_t)n;
        memcpy(gas_udp_chan_append(ch, &d), e->seg_base + r->off + k, n);
        k += n;
    }
}

static void target_amo(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    const gas_tl_env_t *e = &gas_udp_g.env;
    if (r->amo_op >= GAS_AMO_OP_COUNT || (r->amo_width != 4 && r->amo_width != 8)) {
        refuse(ch, r, GAS_ERR_INVALID, r->off, r->amo_width, "atomic", "malformed");
        return;
    }
    if (!gas_udp_word_ok(r->off, r->amo_width, GAS_AL_HEADER_BYTES, e->seg_size) ||
        in_gap(r->off, r->amo_width)) {
        refuse(ch, r, r->off % r->amo_width ? GAS_ERR_ALIGN : GAS_ERR_BOUNDS, r->off,
               r->amo_width, "atomic",
               r->off % r->amo_width ? "misaligned" : range_refusal(r->off, r->amo_width));
        return;
    }
    gas_amo_op_t op = (gas_amo_op_t)r->amo_op;
    uint64_t old = gas_tl_amo_apply(e->seg_base + r->off, op, r->amo_width, r->a, r->b);
    if (op != GAS_AMO_FETCH)
        gas_udp_ring_own(r->off, r->amo_width);
    struct gas_udp_rec d = {.type = GAS_UDP_R_DONE, .op = r->op};
    if (gas_amo_fetches(op)) {
        d.type = GAS_UDP_R_AMO_REPLY;
        d.a = old;
    }
    if (r->op)
        reply(ch, &d);
}

/* ---- as initiator ---- */

static void stray_answer(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    ch->c.bad++;
    GAS_UDP_COUNT(bad, 1);
    gas_log_warn_ratelimited("udp", LOG_EVERY_NS,
                             "rank %d answered operation %u, which this rank is not waiting for",
                             ch->rank, (unsigned)r->op);
}

static void got_refusal(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    gas_status_t st = (gas_status_t)(int64_t)r->a;
    if (st >= 0 || !GAS_STATUS_IS_USAGE(st))
        st = GAS_ERR_BOUNDS;
    gas_log_warn_ratelimited("udp", LOG_EVERY_NS,
                             "rank %d refused a request at offset %llu (%llu bytes): %s", ch->rank,
                             (unsigned long long)r->off, (unsigned long long)r->b,
                             gas_strerror(st));
    struct gas_udp_op *op = r->op ? gas_udp_op_find(ch, r->op) : NULL;
    if (op == NULL) {
        if (ch->err_status == GAS_OK) {
            ch->err_status = st;
            snprintf(ch->err_msg, sizeof ch->err_msg,
                     "rank %d refused a request at its offset %llu (%llu bytes): %s", ch->rank,
                     (unsigned long long)r->off, (unsigned long long)r->b, gas_strerror(st));
        }
        return;
    }
    op->status = st;
    if (op->comp)   /* (first: op_finish's gas_tl_comp_fail then keeps it) */
        gas_tl_comp_refused(op->comp, st, ch->rank, r->off, r->b);
    if (op->kind == OP_GET) {
        uint64_t n = r->b < op->len - op->done ? r->b : op->len - op->done;
        op->done += n;
        ch->get_bytes -= n < ch->get_bytes ? n : ch->get_bytes;
        if (op->done == op->len)
            gas_udp_op_finish(ch, op);
    } else if (op->kind == OP_AMO || (r->flags & GAS_UDP_RF_FINAL)) {
        gas_udp_op_finish(ch, op);
    }
}

static void got_answer(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    struct gas_udp_op *op = gas_udp_op_find(ch, r->op);
    switch (r->type) {
    case GAS_UDP_R_GET_REPLY:
        if (op == NULL || op->kind != OP_GET || r->off > op->len || r->dlen > op->len - r->off) {
            stray_answer(ch, r);
            return;
        }
        if (op->dst) /* NULL: the get was abandoned (its call failed) */
            memcpy((char *)op->dst + r->off, r->data, r->dlen);
        op->done += r->dlen;
        ch->get_bytes -= r->dlen < ch->get_bytes ? r->dlen : ch->get_bytes;
        if (op->done >= op->len)
            gas_udp_op_finish(ch, op);
        return;
    case GAS_UDP_R_AMO_REPLY:
        if (op == NULL || op->kind != OP_AMO) {
            stray_answer(ch, r);
            return;
        }
        if (op->dst)
            *(uint64_t *)op->dst = r->a;
        gas_udp_op_finish(ch, op);
        return;
    default: /* DONE */
        if (op == NULL || op->kind == OP_GET) {
            stray_answer(ch, r);
            return;
        }
        gas_udp_op_finish(ch, op);
        return;
    }
}

/* A CONT record that continues nothing the peer sent (a broken or forged
 * stream): dropped and counted, as a malformed record is. */
static void stray_cont(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    ch->c.bad++;
    GAS_UDP_COUNT(bad, 1);
    gas_log_warn_ratelimited("udp", LOG_EVERY_NS,
                             "rank %d sent a continuation record (%u bytes) that continues nothing "
                             "(dropped)", ch->rank, (unsigned)r->dlen);
}

int gas_udp_rx_deliver(struct gas_udp_chan *ch, const unsigned char *buf, uint32_t len, uint64_t now)
{
    size_t pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    while (gas_udp_rec_next(buf, len, &pos, &r)) {
        if (!gas_udp_cont_step(&ch->rx_cont, &r)) {
            stray_cont(ch, &r);
            continue;
        }
        switch (r.type) {
        case GAS_UDP_R_PUT: target_put(ch, &r); break;
        case GAS_UDP_R_GET: target_get(ch, &r); break;
        case GAS_UDP_R_AMO: target_amo(ch, &r); break;
        case GAS_UDP_R_ERR: got_refusal(ch, &r); break;
        case GAS_UDP_R_CTRL: gas_udp_ctrl_in(ch, &r); break;
        case GAS_UDP_R_BYE:
            ch->bye_recv = 1;
            ch->bye_recv_ns = now;
            break;
        default: got_answer(ch, &r); break;
        }
    }
    gas_udp_chan_cack(ch, gas_udp_ld32(buf + 24), now);
    return 1;
}

/* ---- dead peers ---- */

#define NOTICE_GAP_NS 100000000ull /* DEAD notices to one peer: at most one per 100 ms */

/*
 * A datagram from a peer this rank gave up on (or counts lost by another
 * rank's report) is dropped and answered with a DEAD notice, so that a
 * stopped rank that resumes learns it is out of the job instead of taking
 * its healthy peers' silence for their death.  A rank that was itself
 * declared dead tells nobody.
 */
static void notice_out(struct gas_udp_chan *ch, uint64_t now)
{
    struct gas_udp_state *g = &gas_udp_g;
    int by = gas_udp_lost_by(ch->rank);
    if (by < 0 || gas_udp_self_lost() >= 0 || !ch->have_addr ||
        (ch->notice_ns && now - ch->notice_ns < NOTICE_GAP_NS))
        return;
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ | GAS_UDP_F_DEAD,
                            .key = g->env.job_key, .src = (uint32_t)g->env.rank,
                            .sack = (uint64_t)by};
    if (gas_udp_chan_send_standalone(ch, &h))
        ch->notice_ns = now;
}

/* A DEAD notice: the peer gave up on this rank (sack: the rank that declared it). */
static void notice_in(struct gas_udp_chan *ch, const struct gas_udp_hdr *h)
{
    ch->c.dg_rx++;
    int by = h->sack < (uint64_t)gas_udp_g.env.nranks ? (int)h->sack : ch->rank;
    gas_udp_self_lost_set(ch, by);
}

/* ---- a batch ---- */

/* A numbered datagram of ch's peer, in buf (a receive buffer: one held for
 * later is copied). */
static void data_in(struct gas_udp_chan *ch, const struct gas_udp_hdr *h, unsigned char *buf,
                    uint32_t len, uint64_t now)
{
    switch (gas_udp_rxwin_classify(&ch->rx, h->seq)) {
    case GAS_UDP_RX_NEXT: {
        gas_udp_rx_deliver(ch, buf, len, now);
        gas_udp_rxwin_step(&ch->rx);
        ch->ack_pending++;
        uint32_t seq;
        while (gas_udp_rxwin_pop(&ch->rx, &seq)) {
            uint32_t i = seq & (ch->rx.size - 1);
            gas_udp_rx_deliver(ch, ch->held[i], ch->held_len[i], now);
            gas_udp_rxwin_step(&ch->rx);
            free(ch->held[i]);
            ch->held[i] = NULL;
            ch->ack_pending++;
        }
        if (ch->stash && gas_udp_seq_le(ch->stash_seq, ch->rx.next)) {
            gas_udp_chan_cack(ch, ch->stash_cack, now);
            ch->stash = 0;
        }
        if ((h->flags & GAS_UDP_F_ACKREQ) || ch->ack_pending >= GAS_UDP_ACK_EVERY)
            ch->ack_now = 1;
        return;
    }
    case GAS_UDP_RX_AHEAD: {
        /* Held as a copy of its own size: the receive buffers take the
         * largest datagram (64 KiB for this host's), most held ones are
         * far smaller, and a window of them may wait for one gap. */
        unsigned char *copy = malloc(len);
        if (copy == NULL)
            return; /* dropped: it is retransmitted */
        memcpy(copy, buf, len);
        uint32_t i = h->seq & (ch->rx.size - 1);
        ch->held[i] = copy;
        ch->held_len[i] = len;
        gas_udp_rxwin_hold(&ch->rx, h->seq);
        ch->ack_now = 1; /* a gap: tell the sender at once */
        return;
    }
    case GAS_UDP_RX_DUP:
        ch->c.dup++;
        GAS_UDP_COUNT(dup, 1);
        ch->ack_now = 1;
        ch->dsack_seq = h->seq; /* tell the sender: was its timeout spurious? */
        ch->have_dsack = 1;
        if (h->flags & GAS_UDP_F_RETX) /* the peer timed out waiting for us */
            gas_udp_chan_resend_replies(ch, h->seq, now);
        return;
    case GAS_UDP_RX_BEYOND:
        ch->c.bad++;
        GAS_UDP_COUNT(bad, 1);
        gas_log_warn_ratelimited("udp", LOG_EVERY_NS,
                                 "rank %d sent datagram %u, beyond the receive window at %u "
                                 "(do all ranks use the same GAS_UDP_WINDOW?)",
                                 ch->rank, (unsigned)h->seq, (unsigned)ch->rx.next);
        return;
    }
}

/* A standalone acknowledgement: its completion point counts once we hold
 * every datagram the peer numbered before it. */
static void ack_in_order(struct gas_udp_chan *ch, const struct gas_udp_hdr *h, uint64_t now)
{
    if (gas_udp_seq_le(h->seq, ch->rx.next)) {
        gas_udp_chan_cack(ch, h->cack, now);
    } else if (!ch->stash || gas_udp_seq_gt(h->seq, ch->stash_seq)) {
        ch->stash = 1;
        ch->stash_seq = h->seq;
        ch->stash_cack = h->cack;
    }
}

/* ---- ICMP errors ---- */

#define REFUSED_GRACE_NS 1000000000ull /* refused this long, nothing heard: the peer has ended */
#define REFUSED_GAP_NS 1500000000ull   /* no refusal for this long (and 3 gaps): an episode ended */

uint64_t gas_udp_refused_grace_ns(void)
{
    uint64_t half = gas_udp_g.cfg.peer_timeout / 2;
    return half < REFUSED_GRACE_NS ? half : REFUSED_GRACE_NS;
}

/*
 * An ICMP port unreachable for a datagram to ch, sent by the peer's host:
 * nothing listens at the address the peer published.  Its socket is bound
 * before the address is published and closed only when the process ends or
 * finalizes (a peer that said goodbye is left alone), so refusals that go on
 * for REFUSED_GRACE_NS (capped at half GAS_UDP_PEER_TIMEOUT) with nothing
 * received from the peer meanwhile declare it dead then, instead of after
 * GAS_UDP_PEER_TIMEOUT of silence.  Refusals that stop end their episode: a
 * refusal after a pause longer than REFUSED_GAP_NS, and three times the gap
 * before it (retransmissions back off; the kernel sends about one refusal a
 * second to another host), starts a new one.  So a firewall that rejects for
 * less than the grace, even now and then, never kills a live peer that is
 * silent meanwhile (computing in poll mode).  A peer that only stopped
 * (SIGSTOP, a debugger) keeps its socket and is never refused.  While this
 * rank finalizes (its goodbye sent), a refusal only ends its wait for the
 * peer's goodbye.  Called with ch->lock held.
 */
static void refused(struct gas_udp_chan *ch, uint64_t now)
{
    if (atomic_load_explicit(&ch->dead, memory_order_relaxed) || ch->bye_recv)
        return;
    uint64_t gap = now - ch->refused_last_ns;
    int fresh = ch->refused_ns == 0 ||
                (gap > REFUSED_GAP_NS && gap > 3 * ch->refused_gap_ns);
    ch->refused_gap_ns = fresh ? 0 : gap;
    ch->refused_last_ns = now;
    if (fresh)
        ch->refused_ns = now;
    if (fresh || ch->bye_sent)   /* both finalizing: the peer closed its socket first (init.c parted) */
        return;
    if (now - ch->refused_ns < gas_udp_refused_grace_ns())
        return;
    char why[640], hint[256];
    gas_udp_loopback_hint(ch, hint, sizeof hint);
    snprintf(why, sizeof why, "its address refused datagrams for %.1f s (ICMP port unreachable "
             "from its host: nothing listens there%s)%s", (double)(now - ch->refused_ns) / 1e9,
             hint[0] ? "" : "; its process has ended or closed its socket, or a firewall there "
                            "rejects this rank's datagrams",
             hint);
    if (gas_udp_g.lost_refused)
        atomic_store(&gas_udp_g.lost_refused[ch->rank], 1);
    gas_udp_chan_kill(ch, why);
}

/*
 * The channel whose peer published address a (NULL: none in use); returned
 * locked.  The address is read under the channel's lock (set_addr writes it).
 */
static struct gas_udp_chan *chan_at_locked(const struct sockaddr_in *a)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint32_t n = atomic_load_explicit(&g->nactive, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++) {
        struct gas_udp_chan *ch = g->active[i];
        pthread_mutex_lock(&ch->lock);
        if (ch->have_addr && ch->addr.sin_addr.s_addr == a->sin_addr.s_addr &&
            ch->addr.sin_port == a->sin_port)
            return ch;
        pthread_mutex_unlock(&ch->lock);
    }
    return NULL;
}

/* Whether the ICMP error ee came from the host of address to (the peer's
 * own kernel, not a router or a firewall on the way). */
static int from_host_of(const struct sock_extended_err *ee, const struct sockaddr_in *to)
{
    struct sockaddr_in off;
    memcpy(&off, SO_EE_OFFENDER(ee), sizeof off);
    return off.sin_family != AF_INET || off.sin_addr.s_addr == to->sin_addr.s_addr;
}

/*
 * Whether the n bytes an ICMP error quotes (data) are the start of a
 * datagram this rank sent to ch: this rank's header with the job's key and,
 * for a numbered datagram, a number sent and not yet acknowledged (one that
 * was acknowledged reached the peer).  A refusal that quotes anything else
 * (fewer bytes than a header, another job's datagram, a made-up one) is not
 * taken as a sign of death: a process without the job key cannot kill a live
 * rank with forged ICMP.  Called with ch locked.
 */
static int quotes_ours(const unsigned char *data, size_t n, const struct gas_udp_chan *ch)
{
    const struct gas_udp_state *g = &gas_udp_g;
    if (n < GAS_UDP_HDR_LEN || data[0] != GAS_UDP_VERSION ||
        gas_udp_ld64(data + 8) != g->env.job_key || gas_udp_ld32(data + 4) != (uint32_t)g->env.rank)
        return 0;
    uint32_t seq = gas_udp_ld32(data + 16);
    return (data[1] & GAS_UDP_F_NOSEQ) ||
           (!gas_udp_seq_lt(seq, ch->una) && gas_udp_seq_lt(seq, ch->snd_nxt));
}

/*
 * Read the socket's error queue (IP_RECVERR, sock.c) until it is empty: a
 * queued error makes the socket readable-with-error for epoll and fails the
 * next recvmmsg, so it must be taken.  Port unreachables go to refused();
 * the rest (host unreachable, a too-big datagram: the protocol's own timers
 * and GAS_UDP_MTU cover them) are dropped.  A death declared here is told
 * to the other ranks at once.
 */
static void drain_errors(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    int refusals = 0;
    for (int k = 0; k < 256; k++) {
        struct sockaddr_in to;
        unsigned char data[64];
        union {
            char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in))];
            struct cmsghdr align;
        } ctl;
        struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
        struct msghdr mh = {.msg_name = &to, .msg_namelen = sizeof to, .msg_iov = &iov,
                            .msg_iovlen = 1, .msg_control = ctl.buf,
                            .msg_controllen = sizeof ctl.buf};
        ssize_t got = recvmsg(g->fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
        if (got < 0)
            break;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
            if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
                continue;
            const struct sock_extended_err *ee = (const void *)CMSG_DATA(c);
            if (c->cmsg_len < CMSG_LEN(sizeof *ee + sizeof(struct sockaddr_in)) ||
                ee->ee_origin != SO_EE_ORIGIN_ICMP || ee->ee_type != ICMP_DEST_UNREACH ||
                ee->ee_code != ICMP_PORT_UNREACH || mh.msg_namelen < sizeof to ||
                !from_host_of(ee, &to))
                continue;
            struct gas_udp_chan *ch = chan_at_locked(&to);
            if (ch == NULL)
                continue;
            if (!quotes_ours(data, (size_t)got, ch)) {
                pthread_mutex_unlock(&ch->lock);
                continue;
            }
            refused(ch, gas_rt_now_ns());
            pthread_mutex_unlock(&ch->lock);
            refusals++;
        }
    }
    if (refusals)
        gas_udp_announce();
}

/*
 * gas_udp_rx_batch's recvmmsg vectors over g->rx_bufs, built once by
 * gas_udp_rx_vectors_init and used under rx_lock.  A poll that finds the
 * socket empty then costs the system call alone: building the 64 headers
 * each time was a third of an empty poll's cost, and a waiting thread polls
 * several times per round trip.  The kernel writes only msg_len,
 * msg_namelen and msg_flags, which the batch resets for the entries it
 * read (and msg_controllen, which stays 0: there is no control buffer).
 */
static struct mmsghdr rx_m[GAS_UDP_BATCH];
static struct iovec rx_iov[GAS_UDP_BATCH];
static struct sockaddr_in rx_from[GAS_UDP_BATCH];

void gas_udp_rx_vectors_init(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    for (unsigned i = 0; i < GAS_UDP_BATCH; i++) {
        rx_iov[i] = (struct iovec){.iov_base = g->rx_bufs[i], .iov_len = g->cfg.dgram_accept};
        rx_m[i].msg_hdr = (struct msghdr){.msg_name = &rx_from[i],
                                          .msg_namelen = sizeof rx_from[i],
                                          .msg_iov = &rx_iov[i], .msg_iovlen = 1};
        rx_m[i].msg_len = 0;
    }
}

/* Ready rx_m's first n entries for the next recvmmsg (the kernel wrote them). */
static void rx_vectors_reset(int n)
{
    for (int i = 0; i < n; i++) {
        rx_m[i].msg_hdr.msg_namelen = sizeof rx_from[i];
        rx_m[i].msg_hdr.msg_flags = 0;
        rx_m[i].msg_len = 0;
    }
}

int gas_udp_rx_batch(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    struct mmsghdr *m = rx_m;
    struct sockaddr_in *from = rx_from;
    rx_vectors_reset(1);   /* (a failed call may have written the first) */
    if (atomic_load_explicit(&g->errq_pending, memory_order_relaxed) &&
        atomic_exchange(&g->errq_pending, 0))
        drain_errors();   /* a send took the pending error: its details wait in the queue */
    int n = recvmmsg(g->fd, m, GAS_UDP_BATCH, MSG_DONTWAIT, NULL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        drain_errors();   /* an ICMP error was pending: it failed this call */
        n = recvmmsg(g->fd, m, GAS_UDP_BATCH, MSG_DONTWAIT, NULL);
    }
    if (n <= 0)
        return 0;
    uint64_t now = gas_rt_now_ns();
    struct gas_udp_chan *touched[GAS_UDP_BATCH];
    unsigned nt = 0;
    int wake = 0, nudged = 0;
    for (int i = 0; i < n; i++) {
        uint32_t len = m[i].msg_len;
        if (len == 0) {
            nudged = 1; /* a wake-up from a node-local writer (gas_rt_doorbell_wake) */
            continue;
        }
        GAS_UDP_COUNT(dg_rx, 1);
        GAS_UDP_COUNT(b_rx, len);
        struct gas_udp_hdr h;
        const char *why = NULL;
        if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
            count_bad(NULL, &from[i], "larger than GAS_UDP_MTU allows");
            continue;
        }
        if (gas_udp_dgram_check(g->rx_bufs[i], len, g->env.job_key, (uint32_t)g->env.rank,
                                (uint32_t)g->env.nranks, &h, &why) != 0) {
            count_bad(h.src < (uint32_t)g->env.nranks ? gas_udp_chan_get((int)h.src, 0) : NULL,
                      &from[i], why);
            continue;
        }
        struct gas_udp_chan *ch = gas_udp_chan_get((int)h.src, 1);
        if (ch == NULL || !ch->have_addr) {
            count_bad(NULL, &from[i], "its rank published no udp address");
            continue;
        }
        pthread_mutex_lock(&ch->lock);
        if (from[i].sin_addr.s_addr != ch->addr.sin_addr.s_addr ||
            from[i].sin_port != ch->addr.sin_port) {
            pthread_mutex_unlock(&ch->lock);
            count_bad(ch, &from[i], "not sent from the address its source rank published");
            continue;
        }
        if ((h.flags & GAS_UDP_F_HSUM) && !ch->local) {
            pthread_mutex_unlock(&ch->lock);
            count_bad(ch, &from[i], "a header-only checksum from a rank on another host");
            continue;
        }
        if (h.flags & GAS_UDP_F_DEAD) {
            notice_in(ch, &h);
            pthread_mutex_unlock(&ch->lock);
            continue;
        }
        if (atomic_load_explicit(&ch->dead, memory_order_relaxed) ||
            gas_udp_peer_lost(ch->rank)) {
            notice_out(ch, now);
            pthread_mutex_unlock(&ch->lock);
            continue;
        }
        ch->c.dg_rx++;
        ch->c.b_rx += len;
        ch->last_rx_ns = now;
        ch->refused_ns = 0;
        if (gas_udp_chan_ack_in(ch, &h, now) != 0) {
            pthread_mutex_unlock(&ch->lock);
            count_bad(ch, &from[i], "acknowledges datagrams never sent");
            continue;
        }
        if (h.flags & GAS_UDP_F_NOSEQ) {
            ch->c.ack_rx++;
            GAS_UDP_COUNT(ack_rx, 1);
            ack_in_order(ch, &h, now);
            if (h.flags & GAS_UDP_F_ACKREQ) /* a probe: the peer lost our last word */
                ch->ack_now = 1;
        } else {
            data_in(ch, &h, g->rx_bufs[i], len, now);
        }
        wake = 1;
        if (!ch->touched) {
            ch->touched = 1;
            touched[nt++] = ch;
        }
        pthread_mutex_unlock(&ch->lock);
    }
    for (unsigned t = 0; t < nt; t++) {
        struct gas_udp_chan *ch = touched[t];
        pthread_mutex_lock(&ch->lock);
        ch->touched = 0;
        gas_udp_chan_push(ch, now, 1);
        if (ch->ack_pending || ch->ack_now) {
            if (ch->ack_now || g->cfg.ack_delay == 0)
                gas_udp_chan_send_ack(ch, now, 0);
            else if (ch->ack_due_ns == 0) {
                ch->ack_due_ns = now + g->cfg.ack_delay;
                gas_udp_timer_at(ch->ack_due_ns);
            }
        }
        pthread_mutex_unlock(&ch->lock);
    }
    if (atomic_load(&g->total_blocked))
        gas_udp_timer_at_urgent(now);
    if (wake)
        gas_udp_ring_own(0, 0); /* completions: their waiters watch no segment word */
    else if (nudged && atomic_load(&g->waiter_asleep))
        /* The wake-up was meant for the thread asleep in the socket, and we
         * read it first: pass it on, or that thread sleeps its whole slice
         * although its word changed. */
        gas_udp_poke_waiter();
    rx_vectors_reset(n);
    return n;
}
