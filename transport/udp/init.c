/*
 * init.c - set-up and tear-down of the udp transport: the configuration rows,
 * the socket, the epoll sets and the progress thread; and at finalize the
 * goodbye handshake that lets every peer collect its last acknowledgements
 * before the socket closes.
 */
#include "transport/udp/udp.h"
#include "alloc/segment.h"
#include "runtime/clock.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/node.h"
#include "runtime/wait.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define BYE_WAIT_MAX_NS 5000000000ull /* finalize waits this long at most for peers' goodbyes */

extern const struct gas_tl_ops gas_udp_ops;
/* The record a udp peer costs on first contact (gas-bench-scale reports it). */
const size_t gas_udp_peer_bytes = sizeof(struct gas_udp_chan);

struct gas_udp_state gas_udp_g = {.fd = -1, .epfd = -1, .evfd = -1, .wait_ep = -1, .done_evfd = -1,
                                  .ext_fd = -1, .lease_tfd = -1};

/* ---- set-up ---- */

/* GAS_UDP_LEASE=0: short where the progress threads have CPUs of their own. */
static uint64_t auto_lease(const gas_tl_env_t *env)
{
    int threads = 2 * (env->local_size > 0 ? env->local_size : 1);
    return threads <= gas_rt_usable_cpus() ? GAS_UDP_LEASE_SHORT : GAS_UDP_LEASE_CROWDED;
}

/*
 * At the end of gas_init: `ranks` ranks of the job compete for this rank's
 * CPUs (network namespaces or containers on one machine count, which
 * env->local_size did not).  Where their progress threads and waiters
 * outnumber those CPUs, the automatic lease takes its crowded length now
 * instead of after two preemptions (lease_watch in progress.c).
 */
void gas_udp_cpu_sharers(int ranks)
{
    struct gas_udp_state *g = &gas_udp_g;
    int cpus = gas_rt_usable_cpus();
    /* Only where the launcher's count gave the short lease (said whether or
     * not the growth rule got there first during gas_init). */
    if (!g->cfg.lease_auto || g->cfg.lease >= GAS_UDP_LEASE_CROWDED || 2 * (int64_t)ranks <= cpus)
        return;
    atomic_store(&g->lease_ns, GAS_UDP_LEASE_CROWDED);
    gas_log_info("udp", "%d ranks of this job (network namespaces or containers on this machine "
                        "included) share this rank's %d CPU%s: the lease is %.0f ms "
                        "(GAS_UDP_LEASE sets it)",
                 ranks, cpus, cpus == 1 ? "" : "s", GAS_UDP_LEASE_CROWDED / 1e6);
}

_Static_assert(GAS_UDP_MIN_MTU == GAS_RT_UDP_MTU_MIN,
               "config_ranges.h's least GAS_UDP_MTU must be the transport's (wire.h)");

static gas_status_t read_config(struct gas_udp_cfg *c, const gas_tl_env_t *env)
{
    /* 0 (auto) or 364..65535: config_ranges.h.  The interfaces' MTUs lower
     * both sizes once the socket is bound (gas_udp_init). */
    uint64_t mtu = gas_rt_config_size(GAS_CFG_UDP_MTU);
    c->dgram_max = (uint32_t)(mtu ? mtu : GAS_UDP_AUTO_MTU) - GAS_UDP_IP_UDP_OVERHEAD;
    c->dgram_local = mtu ? (uint32_t)mtu - GAS_UDP_IP_UDP_OVERHEAD : GAS_UDP_MAX_DGRAM;
    if (c->dgram_max > GAS_UDP_MAX_DGRAM)
        c->dgram_max = GAS_UDP_MAX_DGRAM;
    if (c->dgram_local > GAS_UDP_MAX_DGRAM)
        c->dgram_local = GAS_UDP_MAX_DGRAM;
    c->window = (uint32_t)gas_rt_config_size(GAS_CFG_UDP_WINDOW); /* 16..2^20 */
    c->inflight_near = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_NEAR);
    c->inflight_far = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_FAR);
    c->inflight_total = gas_rt_config_size(GAS_CFG_UDP_INFLIGHT_TOTAL);
    c->send_queue = gas_rt_config_size(GAS_CFG_UDP_SEND_QUEUE);
    c->rto_min = gas_rt_config_ns(GAS_CFG_UDP_RTO_MIN);
    c->rto_max = gas_rt_config_ns(GAS_CFG_UDP_RTO_MAX);
    c->rto_init = gas_rt_config_ns(GAS_CFG_UDP_RTO_INIT);
    c->ack_delay = gas_rt_config_ns(GAS_CFG_UDP_ACK_DELAY);
    c->peer_timeout = gas_rt_config_ns(GAS_CFG_UDP_PEER_TIMEOUT);
    c->pace = gas_rt_config_size(GAS_CFG_UDP_PACE) != 0;
    c->pace_burst = gas_rt_config_size(GAS_CFG_UDP_PACE_BURST);
    if (c->pace_burst < c->dgram_max) /* paced channels go to other hosts */
        c->pace_burst = c->dgram_max;
    if (c->pace_burst > (1u << 30))
        c->pace_burst = 1u << 30;
    c->pace_headroom_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_UDP_PACE_HEADROOM);
    c->loss_tolerance_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_UDP_LOSS_TOLERANCE);
    c->poll_mode = gas_rt_config_enum(GAS_CFG_PROGRESS) == 1;
    c->gso = gas_rt_config_size(GAS_CFG_UDP_GSO) != 0;
    c->sleep_slice = gas_rt_config_ns(GAS_CFG_WAIT_SLICE);
    if (c->sleep_slice == 0)
        c->sleep_slice = 1000000; /* 1 ms */
    c->lease = gas_rt_config_ns(GAS_CFG_UDP_LEASE);
    c->lease_auto = c->lease == 0;
    if (c->lease_auto)
        c->lease = auto_lease(env);
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

/*
 * Lower the datagram sizes to the MTUs the socket's routes have: iface_mtu,
 * the bound interface's, for ranks on other hosts, and local_mtu, the
 * loopback route's, for ranks on this host and network namespace.  The
 * receive buffers take the larger.
 */
static void fit_datagrams(struct gas_udp_cfg *c, uint32_t iface_mtu, uint32_t local_mtu)
{
    if (iface_mtu - GAS_UDP_IP_UDP_OVERHEAD < c->dgram_max)
        c->dgram_max = iface_mtu - GAS_UDP_IP_UDP_OVERHEAD;
    c->lo_mtu = local_mtu;
    if (local_mtu < GAS_UDP_MIN_MTU)
        local_mtu = GAS_UDP_MIN_MTU; /* udp_connect refuses ranks on this host */
    if (local_mtu - GAS_UDP_IP_UDP_OVERHEAD < c->dgram_local)
        c->dgram_local = local_mtu - GAS_UDP_IP_UDP_OVERHEAD;
    c->dgram_accept = c->dgram_max > c->dgram_local ? c->dgram_max : c->dgram_local;
    gas_log_info("udp", "datagrams of at most %u bytes to ranks on other hosts, %u to ranks on "
                        "this one (GAS_UDP_MTU=%s; interface MTU %u, loopback %u)",
                 c->dgram_max, c->dgram_local, gas_rt_config_str(GAS_CFG_UDP_MTU), iface_mtu,
                 c->lo_mtu);
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
    atomic_store(&gas_rt_tick_on, 0);
    struct gas_udp_state *g = &gas_udp_g;
    gas_udp_progress_stop();
    gas_rt_wait_set_sleeper(NULL, NULL);
    gas_rt_wait_set_waker(NULL);
    gas_rt_doorbell_set_nudger(NULL);
    if (g->env.seg_base != NULL)
        gas_rt_doorbell_set_nudge(&gas_al_seg_hdr(g->env.seg_base)->doorbell, 0, 0);
    uint32_t n = atomic_load(&g->nactive);
    for (uint32_t i = 0; g->active && i < n; i++)
        gas_udp_chan_free(g->active[i]);
    for (unsigned i = 0; g->rx_bufs && i < GAS_UDP_BATCH; i++)
        free(g->rx_bufs[i]);
    free(g->rx_bufs);
    free(g->active);
    free((void *)g->chans);
    free((void *)g->lost);
    free((void *)g->lost_by);
    free((void *)g->lost_refused);
    gas_udp_sock_close();
    if (g->epfd >= 0)
        close(g->epfd);
    if (g->evfd >= 0)
        close(g->evfd);
    if (g->wait_ep >= 0)
        close(g->wait_ep);
    if (g->done_evfd >= 0)
        close(g->done_evfd);
    if (g->lease_tfd >= 0)
        close(g->lease_tfd);
    pthread_mutex_destroy(&g->sleep_lock);
    pthread_mutex_destroy(&g->lease_lock);
    pthread_mutex_destroy(&g->ext_lock);
    pthread_mutex_destroy(&g->chans_lock);
    pthread_mutex_destroy(&g->rx_lock);
    pthread_mutex_destroy(&g->timer_lock);
    pthread_mutex_destroy(&g->fault_lock);
    memset(g, 0, sizeof *g);
    g->fd = g->epfd = g->evfd = g->wait_ep = g->done_evfd = g->ext_fd = g->lease_tfd = -1;
}

gas_status_t gas_udp_init(const gas_tl_env_t *env)
{
    struct gas_udp_state *g = &gas_udp_g;
    memset(g, 0, sizeof *g);
    g->fd = g->epfd = g->evfd = g->wait_ep = g->done_evfd = g->ext_fd = g->lease_tfd = -1;
    g->env = *env;
    pthread_mutex_init(&g->sleep_lock, NULL);
    pthread_mutex_init(&g->lease_lock, NULL);
    pthread_mutex_init(&g->ext_lock, NULL);
    pthread_mutex_init(&g->chans_lock, NULL);
    pthread_mutex_init(&g->rx_lock, NULL);
    pthread_mutex_init(&g->timer_lock, NULL);
    pthread_mutex_init(&g->fault_lock, NULL);
    atomic_store(&g->next_timer_ns, GAS_UDP_NEVER);
    atomic_store(&g->next_urgent_ns, GAS_UDP_NEVER);
    gas_status_t st = read_config(&g->cfg, env);
    if (st != GAS_OK)
        goto err_release;
    atomic_store(&g->lease_ns, g->cfg.lease);
    uint32_t imtu = 0;
    st = gas_udp_sock_open(gas_rt_config_str(GAS_CFG_UDP_IFACE),
                           (uint32_t)gas_rt_config_size(GAS_CFG_UDP_PORT),
                           gas_rt_config_size(GAS_CFG_UDP_SOCKBUF), &imtu);
    if (st != GAS_OK)
        goto err_release;
    fit_datagrams(&g->cfg, imtu, gas_udp_sock_local_mtu());
    g->chans = calloc((size_t)env->nranks, sizeof *g->chans);
    g->active = calloc((size_t)env->nranks, sizeof *g->active);
    g->lost = calloc((size_t)env->nranks, sizeof *g->lost);
    g->lost_by = calloc((size_t)env->nranks, sizeof *g->lost_by);
    g->lost_refused = calloc((size_t)env->nranks, sizeof *g->lost_refused);
    atomic_store(&g->self_lost_by, -1);
    g->rx_bufs = calloc(GAS_UDP_BATCH, sizeof *g->rx_bufs);
    st = GAS_ERR_NOMEM;
    if (g->chans == NULL || g->active == NULL || g->lost == NULL || g->lost_by == NULL ||
        g->lost_refused == NULL || g->rx_bufs == NULL)
        goto err_nomem;
    for (unsigned i = 0; i < GAS_UDP_BATCH; i++)
        if ((g->rx_bufs[i] = malloc(g->cfg.dgram_accept)) == NULL)
            goto err_nomem;
    gas_udp_rx_vectors_init();
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
        g->lease_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (g->evfd < 0 || g->done_evfd < 0 || g->wait_ep < 0 || g->lease_tfd < 0) {
            st = gas_rt_error(GAS_ERR_IO, "gas_init", "eventfd/epoll/timerfd: %s", strerror(errno));
            goto err_release;
        }
        if ((st = epoll_add(g->epfd, g->evfd)) != GAS_OK ||
            (st = epoll_add(g->epfd, g->lease_tfd)) != GAS_OK ||
            (st = epoll_add(g->wait_ep, g->fd)) != GAS_OK ||
            (st = epoll_add(g->wait_ep, g->done_evfd)) != GAS_OK ||
            (st = gas_udp_progress_start()) != GAS_OK)
            goto err_release;
    } else {
        g->done_evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (g->done_evfd < 0) {
            st = gas_rt_error(GAS_ERR_IO, "gas_init", "eventfd: %s", strerror(errno));
            goto err_release;
        }
        if ((st = epoll_add(g->epfd, g->done_evfd)) != GAS_OK)
            goto err_release;
    }
    /* Node-local writers wake a waiter asleep in the socket with an empty
     * datagram (gas_udp_sleep joins the doorbell). */
    gas_rt_doorbell_set_nudge(&gas_al_seg_hdr(env->seg_base)->doorbell, g->self.sin_addr.s_addr,
                              g->self.sin_port);
    gas_rt_doorbell_set_nudger(gas_udp_sock_nudge);
    gas_rt_wait_set_sleeper(gas_udp_sleep, gas_udp_wait_done);
    gas_rt_wait_set_waker(gas_udp_poke_waiter);   /* gas_finalize wakes the socket's sleeper */
    if (g->cfg.poll_mode)
        atomic_store(&gas_rt_tick_on, 1);   /* calls that do not wait drive progress too */
    g->ready = 1;
    return GAS_OK;

err_nomem:
    st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the udp transport's state");
err_release:
    release();
    return st;
}

/* ---- tear-down ---- */

/* Our goodbye is acknowledged and the peer's arrived; or the peer is gone
 * (its socket closed: rx.c refused); or its goodbye arrived and ours may only
 * have lost its acknowledgement. */
static int parted(struct gas_udp_chan *ch, uint64_t now)
{
    if (atomic_load(&ch->dead) || !ch->have_addr || ch->refused_ns != 0)
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
                gas_udp_chan_room(ch, gas_udp_rec_fixed(GAS_UDP_R_BYE, 0), 0) != GAS_UDP_NOROOM) {
                struct gas_udp_rec r = {.type = GAS_UDP_R_BYE};
                gas_udp_chan_append(ch, &r);
                gas_udp_chan_seal(ch, now);
                gas_udp_chan_push(ch, now, 1);
                ch->bye_sent = 1;
                ch->refused_ns = 0;   /* parted: only a refusal of the goodbye counts */
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

void gas_udp_fini(void)
{
    if (!gas_udp_g.ready)
        return;
    say_goodbye();
    gas_udp_g.ready = 0;
    release();
}
