/*
 * ops.c - the udp transport's ops table (set-up and tear-down are init.c):
 * the address it publishes, routes, and the initiator side of
 * put/get/atomics/quiet and the counters.  A put is
 * copied into datagrams (cut to the MTU) and returns GAS_INPROGRESS; it is
 * complete when the peer's completion point passes its last datagram.
 * Gets and fetching atomics are request/reply (a get asks in pieces of at
 * most 64 KiB; each piece is answered by as many datagrams as it needs).
 * This rank's own route is applied in place, like shm.
 */
#include "transport/udp/udp.h"
#include "transport/udp/ctrl.h"
#include "alloc/segment.h"
#include "runtime/boot_wire.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct gas_tl_ops gas_udp_ops;

static gas_status_t udp_addr_pack(void *buf, size_t cap, size_t *len_p)
{
    const struct gas_udp_state *g = &gas_udp_g;
    unsigned char *p = buf;
    if (cap < GAS_UDP_ADDR_LEN)
        return GAS_ERR_INTERNAL;
    memcpy(p, &g->self.sin_addr.s_addr, 4);
    gas_udp_st16(p + 4, ntohs(g->self.sin_port));
    gas_udp_st16(p + 6, (uint16_t)g->cfg.dgram_max); /* the largest datagram this rank takes */
    gas_boot_put_u64(p + 8, g->env.seg_size);
    gas_boot_put_u64(p + 16, g->env.node_id);
    gas_udp_st16(p + 24, (uint16_t)g->cfg.dgram_local); /* ... from a rank on its host */
    gas_udp_st16(p + 26, 0);
    *len_p = GAS_UDP_ADDR_LEN;
    return GAS_OK;
}

static int udp_reachable(const void *addr, size_t len)
{
    return len == GAS_UDP_ADDR_LEN;
}

static gas_status_t udp_connect(int rank, const void *addr, size_t len, gas_tl_peer_t **peer_p)
{
    if (rank == gas_udp_g.env.rank) {
        *peer_p = &gas_udp_g.self_peer;
        return GAS_OK;
    }
    const struct gas_udp_state *g = &gas_udp_g;
    if (gas_udp_addr_local(addr) && g->cfg.lo_mtu < GAS_UDP_MIN_MTU)
        return gas_rt_error(GAS_ERR_UNSUPPORTED, "connect",
                            "rank %d is on this host, reached over udp through the loopback "
                            "device, whose MTU (%u) is below the %u bytes udp needs: raise it "
                            "(ip link set lo mtu 65536), or let shm reach it (GAS_TRANSPORT=auto)",
                            rank, g->cfg.lo_mtu, GAS_UDP_MIN_MTU);
    struct gas_udp_chan *ch = gas_udp_chan_make(rank, addr);
    if (ch == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "connect", "no memory for the udp channel to rank %d",
                            rank);
    *peer_p = &ch->base;
    return GAS_OK;
}

static void udp_disconnect(gas_tl_peer_t *peer)
{
    /* Channels live until fini: the peer may still send to this rank. */
}

/* ---- this rank's own route: applied in place ---- */

void gas_udp_ring_own(uint64_t off, uint64_t len)
{
    struct gas_udp_state *g = &gas_udp_g;
    gas_rt_doorbell_ring(&gas_al_seg_hdr(g->env.seg_base)->doorbell, off, len);
    if (len == 0 && atomic_load(&g->waiter_asleep)) /* a completion waiter sleeps in epoll */
        gas_udp_poke_waiter();
}

/* ---- waiting for room (called with the channel locked; returns locked) ---- */

enum room_kind { ROOM_QUEUE, ROOM_GETS, ROOM_OPS };

struct room_wait {
    struct gas_udp_chan *ch;
    enum room_kind kind;
    uint64_t need;
};

static int room_ready(void *arg)
{
    const struct room_wait *w = arg;
    struct gas_udp_chan *ch = w->ch;
    if (atomic_load_explicit(&ch->dead, memory_order_acquire))
        return 1;
    if (w->kind == ROOM_QUEUE)
        return atomic_load_explicit(&ch->queued, memory_order_relaxed) < gas_udp_g.cfg.send_queue;
    pthread_mutex_lock(&ch->lock);
    int ok = w->kind == ROOM_GETS ? ch->get_bytes == 0 || ch->get_bytes + w->need <= ch->get_limit
                                  : ch->nfree > 0;
    pthread_mutex_unlock(&ch->lock);
    return ok;
}

/* The channel is dead: the loss story (gas_tl_lost_what) of this rank, when it was itself
 * declared dead, else of the peer. */
static gas_status_t dead_error(struct gas_udp_chan *ch, const char *call)
{
    char why[300];
    gas_tl_lost_what(gas_udp_self_lost() >= 0 ? gas_udp_g.env.rank : ch->rank, why, sizeof why);
    return gas_rt_error(GAS_ERR_PEER, call, "%s: nothing was sent to rank %d", why, ch->rank);
}

static gas_status_t wait_room(struct gas_udp_chan *ch, enum room_kind kind, uint64_t need,
                              const char *call)
{
    static const char *const what[] = {"send-queue room", "room for more gets",
                                       "a free operation slot"};
    struct room_wait w = {ch, kind, need};
    char msg[96];
    snprintf(msg, sizeof msg, "%s towards rank %d (udp)", what[kind], ch->rank);
    gas_udp_chan_push(ch, gas_rt_now_ns(), 1);
    pthread_mutex_unlock(&ch->lock);
    gas_status_t st = gas_rt_wait(room_ready, &w, NULL, call, msg);
    pthread_mutex_lock(&ch->lock);
    if (st == GAS_OK && atomic_load(&ch->dead))
        st = dead_error(ch, call);
    return st;
}

static gas_status_t op_alloc(struct gas_udp_chan *ch, enum gas_udp_op_kind kind,
                             gas_tl_comp_t *comp, void *dst, uint64_t len, const char *call,
                             uint32_t *id_p)
{
    for (;;) {
        uint32_t id = gas_udp_op_new(ch, kind, comp, dst, len);
        if (id) {
            *id_p = id;
            return GAS_OK;
        }
        if (ch->ops_cap < GAS_UDP_MAX_OPS)
            return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for udp operation state");
        gas_status_t st = wait_room(ch, ROOM_OPS, 0, call);
        if (st != GAS_OK)
            return st;
    }
}

/* A call failed after registering op: forget the caller's buffers and comp
 * (the caller handles comp itself on an error), let answers drain. */
static void op_abandon(struct gas_udp_chan *ch, uint32_t id, uint64_t asked)
{
    struct gas_udp_op *op = id ? gas_udp_op_find(ch, id) : NULL;
    if (op == NULL)
        return;
    op->comp = NULL;
    op->dst = NULL;
    op->len = asked;
    if (op->kind == OP_PUT || op->done >= op->len)
        gas_udp_op_finish(ch, op);
}

static gas_status_t no_room_error(const char *call)
{
    return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a udp datagram");
}

/* ---- put, put with signal ---- */

struct sig {
    int on;
    uint64_t off, value;
    gas_signal_op_t op;
};

/*
 * How many bytes of the n left of a put go in its next record *r (flags and
 * range set): GAS_UDP_NOROOM when no datagram can be had.  A record that is
 * not the whole put names the put's whole range (WHOLE), so that its target
 * decides on the whole put, refusing every piece or none.
 */
static size_t put_piece(struct gas_udp_chan *ch, struct gas_udp_rec *r, size_t n)
{
    size_t k = gas_udp_chan_room(ch, gas_udp_chan_fixed(ch, r), n);
    if (k == GAS_UDP_NOROOM || (k == n && r->pos == 0))
        return k;
    r->flags |= GAS_UDP_RF_WHOLE;
    return gas_udp_chan_room(ch, gas_udp_chan_fixed(ch, r), n);
}

static gas_status_t put_remote(struct gas_udp_chan *ch, uint64_t off, const unsigned char *src,
                               size_t n, const struct sig *sig, gas_tl_comp_t *comp,
                               const char *call)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    uint32_t op = 0;
    uint64_t pos = 0, total = n;
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&ch->lock);
    if (atomic_load(&ch->dead)) {
        st = dead_error(ch, call);
        goto out;
    }
    if (comp && (st = op_alloc(ch, OP_PUT, comp, NULL, 0, call, &op)) != GAS_OK)
        goto out;
    for (;;) {
        if (atomic_load_explicit(&ch->queued, memory_order_relaxed) >= c->send_queue &&
            (st = wait_room(ch, ROOM_QUEUE, 0, call)) != GAS_OK)
            goto out_abandon;
        /* Every piece of a put-with-signal names the signal: the target
         * refuses any piece whose signal word it refuses, so a bad one leaves
         * the payload unwritten; only the FINAL piece applies it. */
        struct gas_udp_rec r = {.type = GAS_UDP_R_PUT, .op = op, .off = off, .pos = pos,
                                .total = total};
        if (sig->on) {
            r.flags = GAS_UDP_RF_SIGNAL | (sig->op == GAS_SIGNAL_ADD ? GAS_UDP_RF_SIG_ADD : 0);
            r.a = sig->off;
            r.b = sig->value;
        }
        size_t k = put_piece(ch, &r, n);
        if (k == GAS_UDP_NOROOM) {
            st = no_room_error(call);
            goto out_abandon;
        }
        r.dlen = (uint16_t)k;
        if (k == n)
            r.flags |= GAS_UDP_RF_FINAL;
        memcpy(gas_udp_chan_append(ch, &r), src, k);
        if (k == n) {
            gas_udp_chan_user_op(ch, comp);
            break;
        }
        src += k;
        off += k;
        pos += k;
        n -= k;
        if (ch->next_seq - ch->snd_nxt >= GAS_UDP_BATCH / 2)
            gas_udp_chan_push(ch, gas_rt_now_ns(), 1);
    }
    gas_udp_chan_push(ch, gas_rt_now_ns(), 0);
    st = GAS_INPROGRESS;
    goto out;
out_abandon:
    op_abandon(ch, op, 0);
out:
    pthread_mutex_unlock(&ch->lock);
    return st;
}

static gas_status_t udp_put(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                            gas_tl_comp_t *comp, const char *call)
{
    if (peer->direct_base) {
        memcpy(peer->direct_base + off, src, n);
        gas_udp_ring_own(off, n);
        return GAS_OK;
    }
    struct sig none = {0};
    return put_remote((struct gas_udp_chan *)peer, off, src, n, &none, comp, call);
}

static gas_status_t udp_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                   uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                   gas_tl_comp_t *comp, const char *call)
{
    if (peer->direct_base) {
        memcpy(peer->direct_base + off, src, n);
        gas_tl_signal_apply(peer->direct_base + sig_off, value, op);
        gas_udp_ring_own(off, n);
        gas_udp_ring_own(sig_off, 8);
        return GAS_OK;
    }
    struct sig s = {1, sig_off, value, op};
    return put_remote((struct gas_udp_chan *)peer, off, src, n, &s, comp, call);
}

/* ---- get ---- */

static gas_status_t udp_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                            gas_tl_comp_t *comp, const char *call)
{
    if (peer->direct_base) {
        memcpy(dst, peer->direct_base + off, n);
        return GAS_OK;
    }
    struct gas_udp_chan *ch = (struct gas_udp_chan *)peer;
    uint32_t op = 0;
    uint64_t k = 0;
    pthread_mutex_lock(&ch->lock);
    gas_status_t st = atomic_load(&ch->dead) ? dead_error(ch, call)
                                             : op_alloc(ch, OP_GET, comp, dst, n, call, &op);
    while (st == GAS_OK && k < n) {
        uint64_t piece = n - k < GAS_UDP_GET_MAX ? n - k : GAS_UDP_GET_MAX;
        if (ch->get_bytes && ch->get_bytes + piece > ch->get_limit &&
            (st = wait_room(ch, ROOM_GETS, piece, call)) != GAS_OK)
            break;
        if (gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_GET, 0), 0) == GAS_UDP_NOROOM) {
            st = no_room_error(call);
            break;
        }
        struct gas_udp_rec r = {.type = GAS_UDP_R_GET, .op = op, .off = off + k, .a = piece,
                                .b = k, .total = n};
        gas_udp_chan_append(ch, &r);
        ch->get_bytes += piece;
        k += piece;
    }
    if (st == GAS_OK) {
        gas_udp_chan_user_op(ch, comp);
        gas_udp_chan_push(ch, gas_rt_now_ns(), 0);
        st = GAS_INPROGRESS;
    } else {
        op_abandon(ch, op, k);
    }
    pthread_mutex_unlock(&ch->lock);
    return st;
}

/* ---- atomics ---- */

static gas_status_t udp_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp,
                            const char *call)
{
    int fetch = gas_amo_fetches(a->op);
    if (peer->direct_base) {
        uint64_t old = gas_tl_amo_apply(peer->direct_base + a->offset, a->op, a->width,
                                        a->operand, a->compare);
        if (fetch && a->result)
            *a->result = old;
        if (a->op != GAS_AMO_FETCH)
            gas_udp_ring_own(a->offset, a->width);
        return GAS_OK;
    }
    struct gas_udp_chan *ch = (struct gas_udp_chan *)peer;
    uint32_t op = 0;
    pthread_mutex_lock(&ch->lock);
    gas_status_t st = GAS_OK;
    if (atomic_load(&ch->dead))
        st = dead_error(ch, call);
    else if (fetch || comp)
        st = op_alloc(ch, OP_AMO, comp, fetch ? a->result : NULL, 0, call, &op);
    if (st == GAS_OK &&
        gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_AMO, 0), 0) == GAS_UDP_NOROOM)
        st = no_room_error(call);
    if (st == GAS_OK) {
        struct gas_udp_rec r = {.type = GAS_UDP_R_AMO, .op = op, .off = a->offset,
                                .a = a->operand, .b = a->compare, .amo_op = (uint8_t)a->op,
                                .amo_width = (uint8_t)a->width};
        gas_udp_chan_append(ch, &r);
        gas_udp_chan_user_op(ch, comp);
        gas_udp_chan_push(ch, gas_rt_now_ns(), 0);
        st = GAS_INPROGRESS;
    } else if (op) {
        struct gas_udp_op *o = gas_udp_op_find(ch, op);
        o->comp = NULL;
        gas_udp_op_finish(ch, o);
    }
    pthread_mutex_unlock(&ch->lock);
    return st;
}

/* ---- giving up on a caller's operations ---- */

/* Forget every operation of comp on every channel: their answers still
 * drain (and complete them), but write nothing of the caller's. */
static void udp_forget(gas_tl_comp_t *comp)
{
    struct gas_udp_state *g = &gas_udp_g;
    for (int r = 0; r < g->env.nranks; r++) {
        struct gas_udp_chan *ch = atomic_load(&g->chans[r]);
        if (ch == NULL)
            continue;
        pthread_mutex_lock(&ch->lock);
        for (uint32_t i = 0; i < ch->ops_cap; i++) {
            struct gas_udp_op *op = &ch->ops[i];
            if (op->kind != OP_FREE && op->comp == comp) {
                op->comp = NULL;
                op->dst = NULL;
            }
        }
        pthread_mutex_unlock(&ch->lock);
    }
}

/* ---- ordering ---- */

static gas_status_t udp_fence(void)
{
    /* Each peer applies this rank's datagrams strictly in sequence order, so
     * what was issued before a fence reaches it before what follows. */
    return GAS_OK;
}

struct quiet_arg {
    struct gas_udp_chan **ch;
    uint32_t *until;
    uint32_t n;
};

static int quiet_done(void *arg)
{
    const struct quiet_arg *q = arg;
    for (uint32_t i = 0; i < q->n; i++)
        if (!atomic_load_explicit(&q->ch[i]->dead, memory_order_acquire) &&
            gas_udp_seq_lt(atomic_load_explicit(&q->ch[i]->cacked, memory_order_acquire),
                           q->until[i]))
            return 0;
    return 1;
}

/* Up to four ranks of q's channels that have not acknowledged (all: q's
 * ranks at the start) into buf: "3", "3, 5 and 2 more"; how many in all. */
static uint32_t quiet_ranks(const struct quiet_arg *q, int all, char *buf, size_t cap)
{
    uint32_t shown = 0, more = 0;
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < q->n; i++) {
        if (!all && (atomic_load_explicit(&q->ch[i]->dead, memory_order_acquire) ||
                     !gas_udp_seq_lt(atomic_load_explicit(&q->ch[i]->cacked, memory_order_acquire),
                                     q->until[i])))
            continue;
        if (shown == 4) {
            more++;
            continue;
        }
        int w = snprintf(buf + at, cap - at, "%s%d", shown ? ", " : "", q->ch[i]->rank);
        if (w > 0 && (size_t)w < cap - at)
            at += (size_t)w;
        shown++;
    }
    if (more && at < cap)
        snprintf(buf + at, cap - at, " and %u more", more);
    return shown + more;
}

/* A quiet's timeout: which ranks still owe acknowledgements at the deadline. */
static void quiet_explain(void *arg, char *buf, size_t cap)
{
    char ranks[96];
    uint32_t k = quiet_ranks(arg, 0, ranks, sizeof ranks);
    if (k)
        snprintf(buf, cap, "%s %s %s not acknowledged this rank's datagrams",
                 k > 1 ? "ranks" : "rank", ranks, k > 1 ? "have" : "has");
    else
        buf[0] = '\0';
}

/* Failures of operations that had no completion of their own (gas_tl_take_stored). */
static gas_status_t take_failures(uint32_t n, const char *call, gas_tl_report_t *rep)
{
    struct gas_udp_state *g = &gas_udp_g;
    for (uint32_t i = 0; i < n; i++) {
        struct gas_udp_chan *ch = g->active[i];
        gas_status_t st = gas_tl_take_stored(&ch->lock, &ch->err_status, ch->err_msg, call, rep);
        if (st != GAS_OK)
            return st;
    }
    return GAS_OK;
}

static gas_status_t udp_quiet(const char *call, gas_tl_report_t *rep)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint32_t n = atomic_load_explicit(&g->nactive, memory_order_acquire);
    if (n == 0)
        return GAS_OK;
    struct gas_udp_chan *stack_ch[32];
    uint32_t stack_until[32];
    struct quiet_arg q = {stack_ch, stack_until, 0};
    if (n > 32) {
        q.ch = malloc(n * sizeof *q.ch);
        q.until = malloc(n * sizeof *q.until);
        if (q.ch == NULL || q.until == NULL) {
            free(q.ch);
            free(q.until);
            return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for %u channels", n);
        }
    }
    uint64_t now = gas_rt_now_ns();
    for (uint32_t i = 0; i < n; i++) {
        struct gas_udp_chan *ch = g->active[i];
        pthread_mutex_lock(&ch->lock);
        if (!atomic_load(&ch->dead)) {
            gas_udp_chan_seal(ch, now);
            gas_udp_chan_push(ch, now, 1);
            if (atomic_load(&ch->cacked) != ch->next_seq) {
                q.ch[q.n] = ch;
                q.until[q.n++] = ch->next_seq;
            }
        }
        pthread_mutex_unlock(&ch->lock);
    }
    gas_status_t st = GAS_OK;
    if (q.n) {
        char what[128], ranks[96];
        uint32_t k = quiet_ranks(&q, 1, ranks, sizeof ranks);
        snprintf(what, sizeof what, "udp acknowledgements from %s %s", k > 1 ? "ranks" : "rank",
                 ranks);
        st = gas_rt_wait_explained(quiet_done, &q, NULL, call, what, quiet_explain, &q);
    }
    if (st == GAS_OK)
        st = take_failures(n, call, rep);
    if (q.ch != stack_ch) {
        free(q.ch);
        free(q.until);
    }
    return st;
}

/* ---- counters ---- */

static void add_counters(gas_peer_stats_t *o, const struct gas_udp_counters *c)
{
    o->datagrams_sent += c->dg_tx;
    o->datagrams_received += c->dg_rx;
    o->bytes_sent += c->b_tx;
    o->bytes_received += c->b_rx;
    o->retransmits += c->retx;
    o->duplicates += c->dup;
    o->acks_sent += c->ack_tx;
    o->acks_received += c->ack_rx;
    o->bad_datagrams += c->bad;
    o->rejected += c->rejected;
}

static gas_status_t udp_stats(gas_tl_peer_t *peer, gas_peer_stats_t *out)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (peer == NULL) {
        struct gas_udp_counters t;
        const uint64_t *src = (const uint64_t *)(const void *)&g->totals;
        uint64_t *dst = (uint64_t *)(void *)&t;
        for (size_t i = 0; i < sizeof t / sizeof(uint64_t); i++)
            dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
        add_counters(out, &t);
        memcpy(out->endpoint, g->self_str, sizeof out->endpoint);
        return GAS_OK;
    }
    snprintf(out->transport, sizeof out->transport, "udp");
    if (peer == &g->self_peer) {
        memcpy(out->endpoint, g->self_str, sizeof out->endpoint);
        return GAS_OK;
    }
    struct gas_udp_chan *ch = (struct gas_udp_chan *)peer;
    pthread_mutex_lock(&ch->lock);
    add_counters(out, &ch->c);
    out->srtt_ns = ch->rtt.srtt;
    out->rto_ns = gas_udp_rtt_timeout(&ch->rtt);
    gas_udp_addr_str(&ch->addr, out->endpoint, sizeof out->endpoint);
    pthread_mutex_unlock(&ch->lock);
    return GAS_OK;
}

const struct gas_tl_ops gas_udp_ops = {
    .name = "udp",
    .id = GAS_TL_UDP,
    .init = gas_udp_init,
    .addr_pack = udp_addr_pack,
    .reachable = udp_reachable,
    .connect = udp_connect,
    .put = udp_put,
    .get = udp_get,
    .amo = udp_amo,
    .put_signal = udp_put_signal,
    .fence = udp_fence,
    .quiet = udp_quiet,
    .forget = udp_forget,
    .cpu_sharers = gas_udp_cpu_sharers,
    .progress = gas_udp_progress,
    .stats = udp_stats,
    .disconnect = udp_disconnect,
    .fini = gas_udp_fini,
};
