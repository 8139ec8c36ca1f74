/*
 * ctrl.c - what udp offers other transports (ctrl.h): control messages over
 * the udp channel (CTRL records, docs/udp-wire.md), draining one peer, and
 * serving another transport's event source from udp's progress.
 */
#include "transport/udp/ctrl.h"
#include "transport/udp/udp.h"
#include "runtime/clock.h"
#include "runtime/boot_wire.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

static _Atomic(gas_udp_ctrl_fn) handler;

#define GAS_UDP_CTRL_DEAD 0xf1   /* "I gave up on rank <u32 at 4>" */
enum { LOST_HERE = 1, LOST_ANNOUNCED, LOST_REPORTED };

void gas_udp_ctrl_set_handler(gas_udp_ctrl_fn fn)
{
    atomic_store(&handler, fn);
}

static void append_ctrl(struct gas_udp_chan *ch, const void *msg, size_t len)
{
    struct gas_udp_rec r = {.type = GAS_UDP_R_CTRL, .dlen = (uint16_t)len};
    void *at = gas_udp_chan_append(ch, &r);
    if (len)
        memcpy(at, msg, len);
}

void gas_udp_ctrl_in(struct gas_udp_chan *ch, const struct gas_udp_rec *r)
{
    if (r->dlen == 0)
        return;   /* a liveness probe (gas_udp_probe): its acknowledgement is all */
    if (r->data[0] >= GAS_UDP_CTRL_OWN) {
        /* A report from a rank this rank gave up on is a stopped rank that
         * resumed and found its healthy peers silent: not believed. */
        if (r->data[0] == GAS_UDP_CTRL_DEAD && r->dlen >= 8 && !gas_udp_peer_lost(ch->rank) &&
            gas_udp_self_lost() < 0) {
            uint32_t lost = gas_boot_get_u32(r->data + 4);
            if (lost < (uint32_t)gas_udp_g.env.nranks && (int)lost != gas_udp_g.env.rank)
                gas_udp_lost_set((int)lost, ch->rank);
        }
        return;
    }
    gas_udp_ctrl_fn fn = atomic_load(&handler);
    unsigned char reply[GAS_UDP_CTRL_MAX];
    size_t n = fn ? fn(ch->rank, r->data, r->dlen, reply, sizeof reply) : 0;
    size_t k = n ? gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_CTRL, 0), n) : 0;
    if (n && k != GAS_UDP_NOROOM && k >= n)
        append_ctrl(ch, reply, n); /* no room: the peer's handshake times out, it stays on udp */
}

gas_status_t gas_udp_ctrl_send(int rank, const void *msg, size_t len)
{
    if (len > GAS_UDP_CTRL_MAX)
        return GAS_ERR_INVALID;
    struct gas_udp_chan *ch = gas_udp_chan_get(rank, 1);
    if (ch == NULL)
        return GAS_ERR_PEER;
    gas_status_t st = GAS_OK;
    size_t k, fixed = gas_udp_rec_fixed(GAS_UDP_R_CTRL, 0);
    pthread_mutex_lock(&ch->lock);
    if (atomic_load(&ch->dead))
        st = GAS_ERR_PEER;
    else if ((k = gas_udp_chan_room(ch, fixed, len)) == GAS_UDP_NOROOM || k < len)
        st = GAS_ERR_NOMEM;
    else {
        uint64_t now = gas_rt_now_ns();
        append_ctrl(ch, msg, len);
        gas_udp_chan_seal(ch, now);
        gas_udp_chan_push(ch, now, 1);
    }
    pthread_mutex_unlock(&ch->lock);
    return st;
}

struct drain {
    struct gas_udp_chan *ch;
    uint32_t until;
};

static int drained(void *arg)
{
    const struct drain *d = arg;
    return atomic_load(&d->ch->dead) ||
           !gas_udp_seq_lt(atomic_load_explicit(&d->ch->cacked, memory_order_acquire), d->until);
}

gas_status_t gas_udp_drain(int rank, const char *call)
{
    struct gas_udp_chan *ch = gas_udp_chan_get(rank, 0);
    if (ch == NULL)
        return GAS_OK;
    struct drain d = {ch, 0};
    pthread_mutex_lock(&ch->lock);
    uint64_t now = gas_rt_now_ns();
    gas_udp_chan_seal(ch, now);
    gas_udp_chan_push(ch, now, 1);
    d.until = ch->next_seq;
    pthread_mutex_unlock(&ch->lock);
    char what[64];
    snprintf(what, sizeof what, "udp acknowledgements from rank %d", rank);
    gas_status_t st = gas_rt_wait(drained, &d, NULL, call, what);
    if (st == GAS_OK && atomic_load(&ch->dead))
        st = gas_rt_error(GAS_ERR_PEER, call, "rank %d is unreachable over udp", rank);
    return st;
}

int gas_udp_peer_dead(int rank)
{
    struct gas_udp_chan *ch = gas_udp_chan_get(rank, 0);
    return ch != NULL && atomic_load(&ch->dead);
}

void gas_udp_probe(int rank)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (g->chans == NULL)
        return;
    struct gas_udp_chan *ch = gas_udp_chan_get(rank, 1);
    if (ch == NULL || atomic_load(&ch->dead))
        return;
    uint64_t now = gas_rt_now_ns();
    pthread_mutex_lock(&ch->lock);
    if (!atomic_load(&ch->dead) && now - ch->alive_probe_ns >= g->cfg.peer_timeout / 4 &&
        ch->una == ch->next_seq && atomic_load(&ch->cacked) == ch->next_seq &&
        gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_CTRL, 0), 0) != GAS_UDP_NOROOM) {
        ch->alive_probe_ns = now;
        append_ctrl(ch, NULL, 0);
        gas_udp_chan_seal(ch, now);
        gas_udp_chan_push(ch, now, 1);
    }
    pthread_mutex_unlock(&ch->lock);
}

#define KNOCK_BATCH 8                 /* channels looked at per call */
#define KNOCK_SILENT_NS 1000000000ull /* knocked at once silent this long */
#define KNOCK_GAP_NS 250000000ull     /* at most one knock per channel this often */

void gas_udp_knock_some(void)
{
    static _Atomic uint32_t cursor;
    struct gas_udp_state *g = &gas_udp_g;
    if (g->chans == NULL)
        return;
    uint32_t n = atomic_load_explicit(&g->nactive, memory_order_acquire);
    uint64_t now = gas_rt_now_ns();
    for (uint32_t k = 0; k < KNOCK_BATCH && k < n; k++) {
        struct gas_udp_chan *ch = g->active[atomic_fetch_add(&cursor, 1) % n];
        if (atomic_load(&ch->dead) || gas_udp_peer_lost(ch->rank))
            continue;
        pthread_mutex_lock(&ch->lock);
        /* Idle channels only: datagrams out are resent (and refused) anyway. */
        int idle = ch->una == ch->next_seq && !gas_udp_chan_has_open(ch);
        if (idle && ch->have_addr && !ch->bye_recv && !ch->bye_sent &&
            now - ch->last_rx_ns >= KNOCK_SILENT_NS && now - ch->knock_ns >= KNOCK_GAP_NS) {
            ch->knock_ns = now;
            gas_udp_chan_send_ack(ch, now, 0);
        }
        pthread_mutex_unlock(&ch->lock);
    }
}

int gas_udp_dead_count(void)
{
    return atomic_load_explicit(&gas_udp_g.ndead, memory_order_acquire);
}

void gas_udp_lost_set(int rank, int by)
{
    struct gas_udp_state *g = &gas_udp_g;
    unsigned char was = 0;
    int reported = by != g->env.rank;
    if (g->lost == NULL ||
        !atomic_compare_exchange_strong(&g->lost[rank], &was, reported ? LOST_REPORTED : LOST_HERE))
        return;
    atomic_store(&g->lost_by[rank], by);
    if (!reported)
        atomic_fetch_add(&g->unannounced, 1);
    else
        gas_log_warn("udp", "rank %d is lost: rank %d gave up on it", rank, by);
    atomic_fetch_add(&g->ndead, 1);
}

int gas_udp_lost_by(int rank)
{
    struct gas_udp_state *g = &gas_udp_g;
    return g->lost != NULL && atomic_load(&g->lost[rank]) != 0 ? atomic_load(&g->lost_by[rank])
                                                               : -1;
}

void gas_udp_self_lost_set(struct gas_udp_chan *ch, int by)
{
    struct gas_udp_state *g = &gas_udp_g;
    int none = -1;
    if (g->lost == NULL || gas_udp_peer_lost(ch->rank) ||
        !atomic_compare_exchange_strong(&g->self_lost_by, &none, by))
        return;
    atomic_fetch_add(&g->ndead, 1);   /* gas_tl_first_lost looks */
    char told[40] = "", why[320];
    if (by != ch->rank)
        snprintf(told, sizeof told, " (rank %d says so)", ch->rank);
    gas_udp_self_lost_why(why, sizeof why);
    gas_log_warn("udp",
                 "this rank was declared dead by rank %d%s: %s; the other ranks go on without "
                 "it, and every call of this rank that needs another rank fails", by, told, why);
    gas_udp_timer_at(gas_rt_now_ns());   /* the timers retire every channel */
}

int gas_udp_self_lost(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    return g->lost != NULL ? atomic_load(&g->self_lost_by) : -1;
}

double gas_udp_peer_timeout_s(void)
{
    return (double)gas_udp_g.cfg.peer_timeout / 1e9;
}

void gas_udp_self_lost_why(char *buf, size_t cap)
{
    snprintf(buf, cap, "it answered nothing there for %.1f s (GAS_UDP_PEER_TIMEOUT: stopped, or "
             "cut off), or its port refused that rank's datagrams for %.1f s (ICMP port "
             "unreachable: a firewall on this host rejecting them)", gas_udp_peer_timeout_s(),
             (double)gas_udp_refused_grace_ns() / 1e9);
}

const char *gas_udp_poll_hint(void)
{
    return gas_udp_g.cfg.poll_mode ? "; with GAS_PROGRESS=poll, also a live rank that made no "
                                     "libgas call (gas_progress) that long"
                                   : "";
}

int gas_udp_peer_lost(int rank)
{
    struct gas_udp_state *g = &gas_udp_g;
    return g->lost != NULL && atomic_load(&g->lost[rank]) != 0;
}

int gas_udp_lost_refused(int rank)
{
    struct gas_udp_state *g = &gas_udp_g;
    return g->lost_refused != NULL && atomic_load(&g->lost_refused[rank]) != 0;
}

int gas_udp_lost_by_report(int rank)
{
    struct gas_udp_state *g = &gas_udp_g;
    return g->lost != NULL && atomic_load(&g->lost[rank]) == LOST_REPORTED;
}

void gas_udp_announce(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (g->lost == NULL || atomic_load(&g->unannounced) == 0 || gas_udp_self_lost() >= 0)
        return;
    int n = g->env.nranks;
    for (int r = 0; r < n; r++) {
        unsigned char here = LOST_HERE;
        if (!atomic_compare_exchange_strong(&g->lost[r], &here, LOST_ANNOUNCED))
            continue;
        atomic_fetch_sub(&g->unannounced, 1);
        unsigned char msg[8] = {GAS_UDP_CTRL_DEAD};
        gas_boot_put_u32(msg + 4, (uint32_t)r);
        for (int q = 0; q < n; q++)
            if (q != g->env.rank && atomic_load(&g->lost[q]) == 0)
                (void)gas_udp_ctrl_send(q, msg, sizeof msg);   /* best effort */
    }
}

gas_status_t gas_udp_set_event_source(int fd, gas_udp_event_fn fn)
{
    struct gas_udp_state *g = &gas_udp_g;
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&g->ext_lock);
    if (g->ext_fd >= 0)
        epoll_ctl(g->epfd, EPOLL_CTL_DEL, g->ext_fd, NULL);
    g->ext_fd = -1;
    atomic_store(&g->ext_fn, NULL);
    if (fd >= 0 && g->epfd >= 0) {
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            st = gas_rt_error(GAS_ERR_IO, "gas_init", "epoll_ctl (event source): %s",
                              strerror(errno));
        } else {
            g->ext_fd = fd;
            atomic_store(&g->ext_fn, fn);
        }
    }
    pthread_mutex_unlock(&g->ext_lock);
    return st;
}

int gas_udp_event_run(int polled)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (atomic_load_explicit(&g->ext_fn, memory_order_relaxed) == NULL)
        return 0;
    int n = 0;
    pthread_mutex_lock(&g->ext_lock);
    gas_udp_event_fn fn = atomic_load(&g->ext_fn);
    if (fn)
        n = fn(polled);
    pthread_mutex_unlock(&g->ext_lock);
    return n;
}
