/*
 * chan.c - per-peer channel bookkeeping: making channels (from a route, or on
 * first contact from the peer), filling the open datagram with records and
 * sealing it (numbering it into the send ring), the operations that wait for
 * answers, and declaring a peer dead.  The send side proper (windows,
 * acknowledgements, timers) is send.c.  All functions here except the
 * channel table's are called with the channel's lock held.
 */
#include "transport/udp/udp.h"
#include "transport/udp/ctrl.h"
#include "alloc/segment.h"
#include "runtime/clock.h"
#include "runtime/boot_wire.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX 64

extern const struct gas_tl_ops gas_udp_ops;

static unsigned char *buf_get(struct gas_udp_chan *ch)
{
    if (ch->npool)
        return ch->pool[--ch->npool];
    if (ch->buf_size == 0)
        ch->buf_size = ch->dgram_max; /* set_addr never raises dgram_max above it */
    return malloc(ch->buf_size);
}

void gas_udp_buf_put(struct gas_udp_chan *ch, unsigned char *b)
{
    if (ch->npool < POOL_MAX)
        ch->pool[ch->npool++] = b;
    else
        free(b);
}

/* ---- making channels ---- */

int gas_udp_addr_local(const unsigned char *a)
{
    return gas_boot_get_u64(a + 16) == gas_udp_g.env.node_id;
}

/*
 * The largest datagram to the peer whose published address is a: the
 * smaller of ours and what it takes (its GAS_UDP_MTU or interface MTU,
 * whichever is smaller; 0 from a peer that does not say), or datagrams over
 * its MTU would be dropped silently.  A peer on this host and network
 * namespace is reached through the loopback device, and says what it takes
 * from there separately.  *mine_p: ours.
 */
static uint32_t dgram_to(const unsigned char *a, uint32_t *mine_p)
{
    const struct gas_udp_state *g = &gas_udp_g;
    int local = gas_udp_addr_local(a);
    uint32_t mine = local ? g->cfg.dgram_local : g->cfg.dgram_max;
    uint32_t theirs = gas_udp_ld16(a + (local ? 24 : 6));
    *mine_p = mine;
    return theirs >= GAS_UDP_MIN_DGRAM && theirs < mine ? theirs : mine;
}

/* Rank's published udp address into a (GAS_TL_MAX_ADDR bytes); 0 if it has none. */
static int peer_addr(int rank, unsigned char *a)
{
    size_t alen = 0;
    return gas_tl_peer_addr(rank, GAS_TL_UDP, a, GAS_TL_MAX_ADDR, &alen) == GAS_OK &&
           alen == GAS_UDP_ADDR_LEN;
}

uint32_t gas_udp_peer_dgram(int rank)
{
    unsigned char a[GAS_TL_MAX_ADDR];
    uint32_t mine;
    return gas_udp_g.chans != NULL && peer_addr(rank, a) ? dgram_to(a, &mine) : 0;
}

static void set_addr(struct gas_udp_chan *ch, const unsigned char *a)
{
    const struct gas_udp_state *g = &gas_udp_g;
    const struct gas_udp_cfg *c = &g->cfg;
    ch->addr.sin_family = AF_INET;
    memcpy(&ch->addr.sin_addr.s_addr, a, 4);
    ch->addr.sin_port = htons(gas_udp_ld16(a + 4));
    ch->base.size = gas_boot_get_u64(a + 8);
    int local = gas_udp_addr_local(a);
    uint32_t mine, want = dgram_to(a, &mine);
    if (want < mine)
        gas_log_info("udp", "rank %d takes datagrams of at most %u bytes (a smaller MTU than this "
                            "rank's %u): datagrams to it are no larger",
                     ch->rank, want, mine);
    if (ch->buf_size && want > ch->buf_size)
        want = ch->buf_size; /* buffers made before the address came are no larger */
    ch->dgram_max = want;
    ch->local = local;
    ch->near = local ||
               (ch->addr.sin_addr.s_addr & g->self_mask) == (g->self.sin_addr.s_addr & g->self_mask);
    ch->paced = c->pace && !local; /* loopback has no queue to overrun */
    ch->cwnd_max = ch->near ? c->inflight_near : c->inflight_far;
    /* Loopback datagrams of up to 64 KiB: 4 of them in flight left the
     * stream waiting for acknowledgements half the time. */
    uint64_t least = (local ? GAS_UDP_LOCAL_FLIGHT : 1u) * (uint64_t)ch->dgram_max;
    if (ch->cwnd_max < least)
        ch->cwnd_max = least;
    ch->cwnd_min = 4ull * ch->dgram_max < ch->cwnd_max ? 4ull * ch->dgram_max : ch->cwnd_max;
    ch->cwnd = 32ull * ch->dgram_max < ch->cwnd_max ? 32ull * ch->dgram_max : ch->cwnd_max;
    ch->ssthresh = ch->cwnd_max;
    ch->get_limit = ch->cwnd_max;
    ch->have_addr = 1;
    char hint[224];
    gas_udp_loopback_hint(ch, hint, sizeof hint);
    if (hint[0])
        gas_log_warn("udp", "rank %d may be unreachable%s", ch->rank, hint);
}

/* 127/8 (ip in network order). */
static int is_loopback(uint32_t ip)
{
    return (ntohl(ip) >> IN_CLASSA_NSHIFT) == IN_LOOPBACKNET;
}

void gas_udp_loopback_hint(const struct gas_udp_chan *ch, char *buf, size_t size)
{
    const struct gas_udp_state *g = &gas_udp_g;
    buf[0] = '\0';
    if (!ch->have_addr || ch->local)
        return;
    char as[48];
    if (is_loopback(ch->addr.sin_addr.s_addr)) {
        gas_udp_addr_str(&ch->addr, as, sizeof as);
        snprintf(buf, size, ": it is on another host but published a loopback address (%s): "
                 "its GAS_UDP_IFACE is lo, or it had no other interface up", as);
    } else if (is_loopback(g->self.sin_addr.s_addr)) {
        snprintf(buf, size, ": it is on another host, and this rank is bound to a loopback "
                 "address (%s), which other hosts cannot reach: set GAS_UDP_IFACE to an "
                 "interface the hosts share", g->self_str);
    }
}

static struct gas_udp_chan *chan_new(int rank)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    struct gas_udp_chan *ch = calloc(1, sizeof *ch);
    if (ch == NULL)
        return NULL;
    ch->ring_cap = 64;
    /* until set_addr hears the peer's */
    ch->dgram_max = c->dgram_max < c->dgram_local ? c->dgram_max : c->dgram_local;
    ch->ring = calloc(ch->ring_cap, sizeof *ch->ring);
    ch->pool = calloc(POOL_MAX, sizeof *ch->pool);
    if (ch->ring == NULL || ch->pool == NULL ||
        gas_udp_rxwin_init(&ch->rx, GAS_UDP_SEQ_ISN, c->window) != 0)
        goto err_free;
    ch->held = calloc(ch->rx.size, sizeof *ch->held);
    ch->held_len = calloc(ch->rx.size, sizeof *ch->held_len);
    if (ch->held == NULL || ch->held_len == NULL)
        goto err_free;
    pthread_mutex_init(&ch->lock, NULL);
    ch->rank = rank;
    ch->base = (gas_tl_peer_t){.ops = &gas_udp_ops, .rank = rank};
    ch->next_seq = ch->una = ch->snd_nxt = GAS_UDP_SEQ_ISN;
    atomic_init(&ch->cacked, GAS_UDP_SEQ_ISN);
    gas_udp_rtt_init(&ch->rtt, c->rto_init, c->rto_min, c->rto_max);
    gas_udp_rate_init(&ch->rate, c->pace_burst);
    ch->cwnd = ch->cwnd_min = ch->cwnd_max = ch->ssthresh = ch->get_limit = c->inflight_far;
    ch->last_progress_ns = gas_rt_now_ns();
    return ch;

err_free:
    gas_udp_chan_free(ch);
    return NULL;
}

void gas_udp_chan_free(struct gas_udp_chan *ch)
{
    if (ch == NULL)
        return;
    if (ch->ring)
        for (uint32_t s = ch->una; s != ch->next_seq; s++)
            free(gas_udp_slot_at(ch, s)->buf);
    free(ch->ring);
    free(ch->open);
    for (uint32_t i = 0; ch->pool && i < ch->npool; i++)
        free(ch->pool[i]);
    free(ch->pool);
    for (uint32_t i = 0; ch->held && i < ch->rx.size; i++)
        free(ch->held[i]);
    free(ch->held);
    free(ch->held_len);
    gas_udp_rxwin_fini(&ch->rx);
    free(ch->ops);
    free(ch->ops_free);
    free(ch);
}

struct gas_udp_chan *gas_udp_chan_get(int rank, int create)
{
    struct gas_udp_state *g = &gas_udp_g;
    struct gas_udp_chan *ch = atomic_load_explicit(&g->chans[rank], memory_order_acquire);
    if (ch != NULL || !create)
        return ch;
    /* First contact from the peer: learn its address from what it published. */
    unsigned char a[GAS_TL_MAX_ADDR];
    return gas_udp_chan_make(rank, peer_addr(rank, a) ? a : NULL);
}

struct gas_udp_chan *gas_udp_chan_make(int rank, const unsigned char *addr)
{
    struct gas_udp_state *g = &gas_udp_g;
    pthread_mutex_lock(&g->chans_lock);
    struct gas_udp_chan *ch = atomic_load(&g->chans[rank]);
    if (ch == NULL && (ch = chan_new(rank)) != NULL) {
        if (addr)
            set_addr(ch, addr);
        uint32_t n = atomic_load(&g->nactive);
        g->active[n] = ch;
        atomic_store_explicit(&g->chans[rank], ch, memory_order_release);
        atomic_store_explicit(&g->nactive, n + 1, memory_order_release);
    } else if (ch != NULL && addr != NULL && !ch->have_addr) {
        pthread_mutex_lock(&ch->lock);
        set_addr(ch, addr);
        pthread_mutex_unlock(&ch->lock);
    }
    pthread_mutex_unlock(&g->chans_lock);
    return ch;
}

/* ---- filling datagrams ---- */

static int open_new(struct gas_udp_chan *ch)
{
    if (ch->open == NULL && (ch->open = buf_get(ch)) == NULL)
        return -1;
    ch->open_len = GAS_UDP_HDR_LEN;
    return 0;
}

size_t gas_udp_chan_room(struct gas_udp_chan *ch, size_t fixed, size_t want)
{
    size_t cap = ch->dgram_max - GAS_UDP_HDR_LEN;
    if (ch->open == NULL && open_new(ch) != 0)
        return GAS_UDP_NOROOM;
    size_t left = ch->dgram_max - ch->open_len;
    if (fixed + want <= left)
        return want;
    if (fixed + want > cap && left >= fixed + GAS_UDP_MIN_FRAG)
        return left - fixed;
    if (ch->open_len > GAS_UDP_HDR_LEN) {
        gas_udp_chan_seal(ch, gas_rt_now_ns());
        if (ch->open != NULL || open_new(ch) != 0)
            return GAS_UDP_NOROOM; /* still open: the ring could not grow */
    }
    /* An empty datagram takes what fits, even a piece under GAS_UDP_MIN_FRAG
     * (there is no other room to wait for; GAS_UDP_MIN_DGRAM keeps it rare). */
    if (fixed >= cap)
        return GAS_UDP_NOROOM;
    return want < cap - fixed ? want : cap - fixed;
}

/* Whether r continues the last record appended to the stream (then it goes as a CONT). */
static int cont_ok(const struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    const struct gas_udp_cont *c = &ch->tx_cont;
    return c->type != 0 && c->type == r->type && c->op == r->op && c->off == r->off &&
           (r->type == GAS_UDP_R_PUT || r->flags == 0);
}

size_t gas_udp_chan_fixed(const struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    return gas_udp_rec_fixed(cont_ok(ch, r) ? GAS_UDP_R_CONT : r->type, r->flags);
}

unsigned char *gas_udp_chan_append(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    unsigned char *p = ch->open + ch->open_len;
    struct gas_udp_rec w = *r;
    if (cont_ok(ch, r)) {
        w.type = GAS_UDP_R_CONT;
        w.flags &= (uint8_t)~GAS_UDP_RF_WHOLE; /* a CONT takes its range from the stream */
    }
    unsigned char *data = gas_udp_rec_write(p, &w);
    w.type = r->type;
    /* A datagram of replies alone needs no prompt acknowledgement: the
     * peer's next request carries it, or its delayed one (GAS_UDP_ACK_DELAY). */
    if (r->type != GAS_UDP_R_GET_REPLY && r->type != GAS_UDP_R_AMO_REPLY &&
        r->type != GAS_UDP_R_DONE && r->type != GAS_UDP_R_ERR)
        ch->open_ask = 1;
    gas_udp_cont_step(&ch->tx_cont, &w);
    size_t n = (size_t)(data - p) + r->dlen;
    ch->open_len += (uint32_t)n;
    atomic_fetch_add_explicit(&ch->queued, n, memory_order_relaxed);
    return data;
}

static int ring_grow(struct gas_udp_chan *ch)
{
    uint32_t cap = ch->ring_cap * 2;
    struct gas_udp_slot *r = calloc(cap, sizeof *r);
    if (r == NULL)
        return -1;
    for (uint32_t s = ch->una; s != ch->next_seq; s++)
        r[s & (cap - 1)] = *gas_udp_slot_at(ch, s);
    free(ch->ring);
    ch->ring = r;
    ch->ring_cap = cap;
    return 0;
}

void gas_udp_chan_seal(struct gas_udp_chan *ch, uint64_t now)
{
    const struct gas_udp_state *g = &gas_udp_g;
    if (!gas_udp_chan_has_open(ch))
        return;
    if (ch->next_seq - ch->una + 1 > ch->ring_cap && ring_grow(ch) != 0)
        return; /* stays open; sealed on a later call */
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .key = g->env.job_key,
                            .src = (uint32_t)g->env.rank, .seq = ch->next_seq,
                            .cack = ch->rx.next};
    gas_udp_hdr_write(ch->open, &h);
    if (ch->una == ch->next_seq && atomic_load(&ch->cacked) == ch->next_seq)
        ch->last_progress_ns = now; /* the peer owes us nothing yet: its clock starts now */
    *gas_udp_slot_at(ch, ch->next_seq) = (struct gas_udp_slot){
        .buf = ch->open, .len = ch->open_len, .cack = ch->rx.next, .state = SLOT_QUEUED,
        .ask = ch->open_ask};
    ch->open_ask = 0;
    ch->next_seq++;
    ch->open = NULL;
    ch->open_len = 0;
}

/* ---- operations awaiting replies ---- */

uint32_t gas_udp_op_new(struct gas_udp_chan *ch, enum gas_udp_op_kind kind, gas_tl_comp_t *comp,
                        void *dst, uint64_t len)
{
    if (ch->nfree == 0) {
        if (ch->ops_cap >= GAS_UDP_MAX_OPS)
            return 0;
        uint32_t cap = ch->ops_cap ? ch->ops_cap * 2 : 64;
        if (cap > GAS_UDP_MAX_OPS)
            cap = GAS_UDP_MAX_OPS;
        struct gas_udp_op *ops = realloc(ch->ops, cap * sizeof *ops);
        if (ops == NULL)
            return 0;
        ch->ops = ops;
        uint32_t *fr = realloc(ch->ops_free, cap * sizeof *fr);
        if (fr == NULL)
            return 0;
        ch->ops_free = fr;
        for (uint32_t i = cap; i > ch->ops_cap; i--) {
            ch->ops[i - 1] = (struct gas_udp_op){.kind = OP_FREE};
            ch->ops_free[ch->nfree++] = i - 1;
        }
        ch->ops_cap = cap;
    }
    uint32_t idx = ch->ops_free[--ch->nfree];
    struct gas_udp_op *op = &ch->ops[idx];
    uint16_t gen = (uint16_t)(op->gen + 1);
    *op = (struct gas_udp_op){.comp = comp, .dst = dst, .len = len, .gen = gen ? gen : 1,
                              .kind = (uint8_t)kind};
    ch->ops_live++;
    return (uint32_t)op->gen << 16 | idx;
}

struct gas_udp_op *gas_udp_op_find(struct gas_udp_chan *ch, uint32_t id)
{
    uint32_t idx = id & 0xffff;
    if (idx >= ch->ops_cap)
        return NULL;
    struct gas_udp_op *op = &ch->ops[idx];
    return op->kind != OP_FREE && op->gen == id >> 16 ? op : NULL;
}

void gas_udp_op_finish(struct gas_udp_chan *ch, struct gas_udp_op *op)
{
    if (op->comp) {
        if (op->status != GAS_OK)
            gas_tl_comp_fail(op->comp, (gas_status_t)op->status, ch->rank);
        atomic_fetch_sub_explicit(&op->comp->pending, 1, memory_order_release);
    }
    if (op->kind == OP_GET)
        ch->get_bytes -= op->len - op->done < ch->get_bytes ? op->len - op->done : ch->get_bytes;
    op->kind = OP_FREE;
    op->comp = NULL;
    ch->ops_free[ch->nfree++] = (uint32_t)(op - ch->ops);
    ch->ops_live--;
}

/* ---- failure ---- */

void gas_udp_chan_user_op(struct gas_udp_chan *ch, const gas_tl_comp_t *comp)
{
    if (comp == NULL && !gas_tl_rt_issuing()) {
        ch->user_until = ch->next_seq + 1; /* the open datagram's number, plus one */
        ch->user_owed = 1;
    }
}

/*
 * Fail every operation awaiting an answer with GAS_ERR_PEER and drop every
 * datagram not yet acknowledged; nothing more goes out.  Returns whether an
 * operation of the caller's own without a completion was among them (its
 * failure is for the next quiet).
 */
static int chan_drop(struct gas_udp_chan *ch)
{
    struct gas_udp_state *g = &gas_udp_g;
    int ours = ch->user_owed && gas_udp_seq_lt(atomic_load(&ch->cacked), ch->user_until);
    ch->user_owed = 0;
    for (uint32_t i = 0; i < ch->ops_cap; i++) {
        if (ch->ops[i].kind == OP_FREE)
            continue;
        ch->ops[i].status = GAS_ERR_PEER;
        gas_udp_op_finish(ch, &ch->ops[i]);
    }
    for (uint32_t s = ch->una; s != ch->next_seq; s++) {
        struct gas_udp_slot *sl = gas_udp_slot_at(ch, s);
        if (sl->state == SLOT_FLIGHT)
            atomic_fetch_sub(&g->inflight_total, sl->len);
        free(sl->buf);
        sl->buf = NULL;
    }
    ch->una = ch->snd_nxt = ch->next_seq;
    ch->inflight = 0;
    ch->lost = 0;
    ch->rto_at = 0;
    if (ch->open)
        ch->open_len = GAS_UDP_HDR_LEN;
    atomic_store(&ch->queued, 0);
    atomic_store(&ch->cacked, ch->next_seq);
    return ours;
}

void gas_udp_chan_kill(struct gas_udp_chan *ch, const char *why)
{
    if (atomic_load(&ch->dead))
        return;
    if (chan_drop(ch) && ch->err_status == GAS_OK) {
        ch->err_status = GAS_ERR_PEER;
        snprintf(ch->err_msg, sizeof ch->err_msg, "rank %d is dead or unreachable: %s", ch->rank,
                 why);
    }
    atomic_store(&ch->dead, 1);
    gas_udp_lost_set(ch->rank, gas_udp_g.env.rank);
    char as[48];
    gas_udp_addr_str(&ch->addr, as, sizeof as);
    gas_log_warn("udp", "rank %d (%s) declared dead: %s", ch->rank, as, why);
    gas_udp_ring_own(0, 0); /* waiters for its operations: they failed */
}

void gas_udp_chan_retire(struct gas_udp_chan *ch)
{
    if (atomic_load(&ch->dead))
        return;
    if (chan_drop(ch) && ch->err_status == GAS_OK) {
        char why[256];
        gas_tl_lost_what(gas_udp_g.env.rank, why, sizeof why);
        ch->err_status = GAS_ERR_PEER;
        snprintf(ch->err_msg, sizeof ch->err_msg, "%s: operations to rank %d failed", why,
                 ch->rank);
    }
    atomic_store(&ch->dead, 1);
    gas_udp_ring_own(0, 0);
}
