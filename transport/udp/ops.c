/*
 * ops.c - the udp transport's ops table: set-up and tear-down, the address
 * it publishes, and the initiator side of put/get/atomics/quiet.  A put is
 * copied into datagrams (cut to the MTU) and returns GAS_INPROGRESS; it is
 * complete when the peer's completion point passes its last datagram.
 * Gets and fetching atomics are request/reply (a get asks in pieces of at
 * most 64 KiB; each piece is answered by as many datagrams as it needs).
 * This rank's own route is applied in place, like shm.
 */
#include "transport/udp/udp.h"
#include "alloc/segment.h"
#include "runtime/boot_wire.h"
#include "runtime/clock.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/local.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define BYE_WAIT_MAX_NS 5000000000ull /* finalize waits this long at most for peers' goodbyes */

extern const struct gas_tl_ops gas_udp_ops;
struct gas_udp_state gas_udp_g = {.fd = -1, .epfd = -1, .evfd = -1};

/* ---- set-up ---- */

static gas_status_t read_config(struct gas_udp_cfg *c)
{
    uint64_t mtu = gas_rt_config_size(GAS_CFG_UDP_MTU);
    if (mtu < 320 || mtu > 65535)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_MTU=%llu is outside 320..65535", (unsigned long long)mtu);
    c->dgram_accept = (uint32_t)mtu - GAS_UDP_IP_UDP_OVERHEAD;
    if (c->dgram_accept > GAS_UDP_MAX_DGRAM)
        c->dgram_accept = GAS_UDP_MAX_DGRAM;
    c->dgram_max = c->dgram_accept;
    uint64_t w = gas_rt_config_size(GAS_CFG_UDP_WINDOW);
    if (w < 16 || w > (1u << 20))
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_WINDOW=%llu is outside 16..1048576", (unsigned long long)w);
    c->window = (uint32_t)w;
    c->inflight_near = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_NEAR);
    c->inflight_far = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_FAR);
    c->inflight_total = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_TOTAL);
    c->send_queue = gas_rt_config_size(GAS_CFG_UDP_SEND_QUEUE);
    c->rto_min = gas_rt_config_ns(GAS_CFG_UDP_RTO_MIN);
    c->rto_max = gas_rt_config_ns(GAS_CFG_UDP_RTO_MAX);
    c->rto_init = gas_rt_config_ns(GAS_CFG_UDP_RTO_INIT);
    c->ack_delay = gas_rt_config_ns(GAS_CFG_UDP_ACK_DELAY);
    c->peer_timeout = gas_rt_config_ns(GAS_CFG_UDP_PEER_TIMEOUT);
    if (c->rto_min == 0 || c->peer_timeout == 0)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_RTO_MIN and GAS_UDP_PEER_TIMEOUT must be above 0");
    c->poll_mode = gas_rt_config_enum(GAS_CFG_PROGRESS) == 1;
    c->drop_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_TEST_UDP_DROP);
    c->dup_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_TEST_UDP_DUP);
    c->reorder_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_TEST_UDP_REORDER);
    c->corrupt_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_TEST_UDP_CORRUPT);
    c->fault_delay = gas_rt_config_ns(GAS_CFG_TEST_UDP_DELAY);
    if (c->drop_ppm | c->dup_ppm | c->reorder_ppm | c->corrupt_ppm)
        gas_log_warn_once("udp", "test fault injection is on (GAS_TEST_UDP_*): drop %u, "
                                 "duplicate %u, reorder %u, corrupt %u per million datagrams",
                          c->drop_ppm, c->dup_ppm, c->reorder_ppm, c->corrupt_ppm);
    return GAS_OK;
}

static gas_status_t epoll_add(int ep, int fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init", "epoll_ctl: %s", strerror(errno));
    return GAS_OK;
}

static void release(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    gas_udp_progress_stop();
    gas_rt_wait_set_sleeper(NULL);
    uint32_t n = atomic_load(&g->nactive);
    for (uint32_t i = 0; g->active && i < n; i++)
        gas_udp_chan_free(g->active[i]);
    for (unsigned i = 0; g->rx_bufs && i < GAS_UDP_BATCH; i++)
        free(g->rx_bufs[i]);
    free(g->rx_bufs);
    free(g->active);
    free((void *)g->chans);
    gas_udp_sock_close();
    if (g->epfd >= 0)
        close(g->epfd);
    if (g->evfd >= 0)
        close(g->evfd);
    if (g->wait_ep >= 0)
        close(g->wait_ep);
    if (g->done_evfd >= 0)
        close(g->done_evfd);
    pthread_mutex_destroy(&g->sleep_lock);
    pthread_mutex_destroy(&g->lease_lock);
    pthread_mutex_destroy(&g->chans_lock);
    pthread_mutex_destroy(&g->rx_lock);
    pthread_mutex_destroy(&g->timer_lock);
    pthread_mutex_destroy(&g->fault_lock);
    memset(g, 0, sizeof *g);
    g->fd = g->epfd = g->evfd = g->wait_ep = g->done_evfd = -1;
}

static gas_status_t udp_init(const gas_tl_env_t *env)
{
    struct gas_udp_state *g = &gas_udp_g;
    memset(g, 0, sizeof *g);
    g->fd = g->epfd = g->evfd = g->wait_ep = g->done_evfd = -1;
    g->env = *env;
    pthread_mutex_init(&g->sleep_lock, NULL);
    pthread_mutex_init(&g->lease_lock, NULL);
    pthread_mutex_init(&g->chans_lock, NULL);
    pthread_mutex_init(&g->rx_lock, NULL);
    pthread_mutex_init(&g->timer_lock, NULL);
    pthread_mutex_init(&g->fault_lock, NULL);
    atomic_store(&g->next_timer_ns, GAS_UDP_NEVER);
    gas_status_t st = read_config(&g->cfg);
    if (st != GAS_OK)
        goto err_release;
    uint32_t imtu = 0;
    st = gas_udp_sock_open(gas_rt_config_str(GAS_CFG_UDP_IFACE),
                           (uint32_t)gas_rt_config_size(GAS_CFG_UDP_PORT),
                           gas_rt_config_size(GAS_CFG_UDP_SOCKBUF), &imtu);
    if (st != GAS_OK)
        goto err_release;
    if (imtu >= 320 && imtu - GAS_UDP_IP_UDP_OVERHEAD < g->cfg.dgram_max)
        g->cfg.dgram_max = imtu - GAS_UDP_IP_UDP_OVERHEAD; /* the interface's MTU is smaller */
    g->chans = calloc((size_t)env->nranks, sizeof *g->chans);
    g->active = calloc((size_t)env->nranks, sizeof *g->active);
    g->rx_bufs = calloc(GAS_UDP_BATCH, sizeof *g->rx_bufs);
    st = GAS_ERR_NOMEM;
    if (g->chans == NULL || g->active == NULL || g->rx_bufs == NULL)
        goto err_nomem;
    for (unsigned i = 0; i < GAS_UDP_BATCH; i++)
        if ((g->rx_bufs[i] = malloc(g->cfg.dgram_accept)) == NULL)
            goto err_nomem;
    g->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (g->epfd < 0) {
        st = gas_rt_error(GAS_ERR_IO, "gas_init", "epoll_create1: %s", strerror(errno));
        goto err_release;
    }
    if ((st = epoll_add(g->epfd, g->fd)) != GAS_OK)
        goto err_release;
    atomic_store(&g->pt_sock_on, 1);
    g->self_peer = (gas_tl_peer_t){.ops = &gas_udp_ops, .rank = env->rank,
                                   .direct_base = env->seg_base, .size = env->seg_size};
    if (!g->cfg.poll_mode) {
        g->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        g->done_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        g->wait_ep = epoll_create1(EPOLL_CLOEXEC);
        if (g->evfd < 0 || g->done_evfd < 0 || g->wait_ep < 0) {
            st = gas_rt_error(GAS_ERR_IO, "gas_init", "eventfd/epoll: %s", strerror(errno));
            goto err_release;
        }
        if ((st = epoll_add(g->epfd, g->evfd)) != GAS_OK ||
            (st = epoll_add(g->wait_ep, g->fd)) != GAS_OK ||
            (st = epoll_add(g->wait_ep, g->done_evfd)) != GAS_OK ||
            (st = gas_udp_progress_start()) != GAS_OK)
            goto err_release;
    }
    gas_rt_wait_set_sleeper(gas_udp_sleep);
    g->ready = 1;
    return GAS_OK;

err_nomem:
    st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the udp transport's state");
err_release:
    release();
    return st;
}

static gas_status_t udp_addr_pack(void *buf, size_t cap, size_t *len_p)
{
    const struct gas_udp_state *g = &gas_udp_g;
    unsigned char *p = buf;
    if (cap < GAS_UDP_ADDR_LEN)
        return GAS_ERR_INTERNAL;
    memcpy(p, &g->self.sin_addr.s_addr, 4);
    gas_udp_st16(p + 4, ntohs(g->self.sin_port));
    gas_udp_st16(p + 6, 0);
    gas_boot_put_u64(p + 8, g->env.seg_size);
    gas_boot_put_u64(p + 16, g->env.node_id);
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
    if (len == 0 && atomic_load(&g->waiter_asleep)) { /* a completion waiter sleeps in epoll */
        uint64_t one = 1;
        ssize_t w = write(g->done_evfd, &one, sizeof one);
        (void)w;
    }
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

static gas_status_t dead_error(struct gas_udp_chan *ch, const char *call)
{
    return gas_rt_error(GAS_ERR_PEER, call,
                        "rank %d is unreachable: it acknowledged nothing for GAS_UDP_PEER_TIMEOUT",
                        ch->rank);
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

static gas_status_t put_remote(struct gas_udp_chan *ch, uint64_t off, const unsigned char *src,
                               size_t n, const struct sig *sig, gas_tl_comp_t *comp,
                               const char *call)
{
    const struct gas_udp_cfg *c = &gas_udp_g.cfg;
    uint32_t op = 0;
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&ch->lock);
    if (atomic_load(&ch->dead)) {
        st = dead_error(ch, call);
        goto out;
    }
    if (comp && (st = op_alloc(ch, OP_PUT, comp, NULL, 0, call, &op)) != GAS_OK)
        goto out;
    size_t fixed = gas_udp_rec_fixed(GAS_UDP_R_PUT, sig->on ? GAS_UDP_RF_SIGNAL : 0);
    for (;;) {
        if (atomic_load_explicit(&ch->queued, memory_order_relaxed) >= c->send_queue &&
            (st = wait_room(ch, ROOM_QUEUE, 0, call)) != GAS_OK)
            goto out_abandon;
        size_t k = gas_udp_chan_room(ch, fixed, n);
        if (k == GAS_UDP_NOROOM) {
            st = no_room_error(call);
            goto out_abandon;
        }
        struct gas_udp_rec r = {.type = GAS_UDP_R_PUT, .dlen = (uint16_t)k, .op = op, .off = off};
        if (k == n) {
            r.flags = GAS_UDP_RF_FINAL;
            if (sig->on) {
                r.flags |= GAS_UDP_RF_SIGNAL | (sig->op == GAS_SIGNAL_ADD ? GAS_UDP_RF_SIG_ADD : 0);
                r.a = sig->off;
                r.b = sig->value;
            }
        }
        memcpy(gas_udp_chan_append(ch, &r), src, k);
        if (k == n)
            break;
        src += k;
        off += k;
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
                            gas_tl_comp_t *comp)
{
    if (peer->direct_base) {
        memcpy(peer->direct_base + off, src, n);
        gas_udp_ring_own(off, n);
        return GAS_OK;
    }
    struct sig none = {0};
    return put_remote((struct gas_udp_chan *)peer, off, src, n, &none, comp, "put");
}

static gas_status_t udp_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                   uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                   gas_tl_comp_t *comp)
{
    if (peer->direct_base) {
        memcpy(peer->direct_base + off, src, n);
        gas_tl_signal_apply(peer->direct_base + sig_off, value, op);
        gas_udp_ring_own(off, n);
        gas_udp_ring_own(sig_off, 8);
        return GAS_OK;
    }
    struct sig s = {1, sig_off, value, op};
    return put_remote((struct gas_udp_chan *)peer, off, src, n, &s, comp, "put_signal");
}

/* ---- get ---- */

static gas_status_t udp_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                            gas_tl_comp_t *comp)
{
    if (peer->direct_base) {
        memcpy(dst, peer->direct_base + off, n);
        return GAS_OK;
    }
    struct gas_udp_chan *ch = (struct gas_udp_chan *)peer;
    uint32_t op = 0;
    uint64_t k = 0;
    pthread_mutex_lock(&ch->lock);
    gas_status_t st = atomic_load(&ch->dead) ? dead_error(ch, "get")
                                             : op_alloc(ch, OP_GET, comp, dst, n, "get", &op);
    while (st == GAS_OK && k < n) {
        uint64_t piece = n - k < GAS_UDP_GET_MAX ? n - k : GAS_UDP_GET_MAX;
        if (ch->get_bytes && ch->get_bytes + piece > ch->get_limit &&
            (st = wait_room(ch, ROOM_GETS, piece, "get")) != GAS_OK)
            break;
        if (gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_GET, 0), 0) == GAS_UDP_NOROOM) {
            st = no_room_error("get");
            break;
        }
        struct gas_udp_rec r = {.type = GAS_UDP_R_GET, .op = op, .off = off + k, .a = piece,
                                .b = k};
        gas_udp_chan_append(ch, &r);
        ch->get_bytes += piece;
        k += piece;
    }
    if (st == GAS_OK) {
        gas_udp_chan_push(ch, gas_rt_now_ns(), 0);
        st = GAS_INPROGRESS;
    } else {
        op_abandon(ch, op, k);
    }
    pthread_mutex_unlock(&ch->lock);
    return st;
}

/* ---- atomics ---- */

static gas_status_t udp_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp)
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
        st = dead_error(ch, "atomic");
    else if (fetch || comp)
        st = op_alloc(ch, OP_AMO, comp, fetch ? a->result : NULL, 0, "atomic", &op);
    if (st == GAS_OK &&
        gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_AMO, 0), 0) == GAS_UDP_NOROOM)
        st = no_room_error("atomic");
    if (st == GAS_OK) {
        struct gas_udp_rec r = {.type = GAS_UDP_R_AMO, .op = op, .off = a->offset,
                                .a = a->operand, .b = a->compare, .amo_op = (uint8_t)a->op,
                                .amo_width = (uint8_t)a->width};
        gas_udp_chan_append(ch, &r);
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

static gas_status_t udp_quiet(void)
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
            return gas_rt_error(GAS_ERR_NOMEM, "gas_quiet", "no memory for %u channels", n);
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
        char what[96];
        snprintf(what, sizeof what, "udp acknowledgements from rank %d%s", q.ch[0]->rank,
                 q.n > 1 ? " and others" : "");
        st = gas_rt_wait(quiet_done, &q, NULL, "gas_quiet", what);
    }
    /* Failures of operations that had no completion of their own. */
    for (uint32_t i = 0; i < n && st == GAS_OK; i++) {
        struct gas_udp_chan *ch = g->active[i];
        char msg[sizeof ch->err_msg];
        pthread_mutex_lock(&ch->lock);
        gas_status_t err = (gas_status_t)ch->err_status;
        snprintf(msg, sizeof msg, "%s", ch->err_msg);
        ch->err_status = GAS_OK;
        pthread_mutex_unlock(&ch->lock);
        if (err != GAS_OK)
            st = gas_rt_error(err, "gas_quiet", "%s", msg);
    }
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

/* ---- tear-down ---- */

/* Our goodbye is acknowledged and the peer's arrived; or the peer is gone;
 * or its goodbye arrived and ours may only have lost its acknowledgement. */
static int parted(struct gas_udp_chan *ch, uint64_t now)
{
    if (atomic_load(&ch->dead) || !ch->have_addr)
        return 1;
    if (!ch->bye_recv)
        return 0;
    uint64_t linger = 3 * gas_udp_rtt_timeout(&ch->rtt);
    return ch->una == ch->next_seq || now - ch->bye_recv_ns > (linger < 100000000u ? linger : 100000000u);
}

/*
 * Every peer that exchanged datagrams with this rank may still need an
 * acknowledgement from it, so before closing the socket each side sends a
 * BYE record (in order, after everything else) and waits until its BYE is
 * acknowledged and the peer's BYE has arrived (bounded).
 */
static void say_goodbye(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint64_t start = gas_rt_now_ns();
    uint64_t limit = g->cfg.peer_timeout < BYE_WAIT_MAX_NS ? g->cfg.peer_timeout : BYE_WAIT_MAX_NS;
    for (;;) {
        uint64_t now = gas_rt_now_ns();
        int all = 1;
        uint32_t n = atomic_load_explicit(&g->nactive, memory_order_acquire);
        for (uint32_t i = 0; i < n; i++) {
            struct gas_udp_chan *ch = g->active[i];
            pthread_mutex_lock(&ch->lock);
            if (!ch->bye_sent && !atomic_load(&ch->dead) && ch->have_addr &&
                gas_udp_chan_room(ch, GAS_UDP_REC_LEN, 0) != GAS_UDP_NOROOM) {
                struct gas_udp_rec r = {.type = GAS_UDP_R_BYE};
                gas_udp_chan_append(ch, &r);
                gas_udp_chan_seal(ch, now);
                gas_udp_chan_push(ch, now, 1);
                ch->bye_sent = 1;
            }
            all &= parted(ch, now);
            pthread_mutex_unlock(&ch->lock);
        }
        if (all)
            return;
        if (now - start > limit) {
            gas_log_info("udp", "finalize: some peers did not say goodbye within %.1f s",
                         (double)limit / 1e9);
            return;
        }
        if (gas_udp_progress() == 0) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
}

static void udp_fini(void)
{
    if (!gas_udp_g.ready)
        return;
    say_goodbye();
    gas_udp_g.ready = 0;
    release();
}

const struct gas_tl_ops gas_udp_ops = {
    .name = "udp",
    .id = GAS_TL_UDP,
    .init = udp_init,
    .addr_pack = udp_addr_pack,
    .reachable = udp_reachable,
    .connect = udp_connect,
    .put = udp_put,
    .get = udp_get,
    .amo = udp_amo,
    .put_signal = udp_put_signal,
    .fence = udp_fence,
    .quiet = udp_quiet,
    .progress = gas_udp_progress,
    .stats = udp_stats,
    .disconnect = udp_disconnect,
    .fini = udp_fini,
};
