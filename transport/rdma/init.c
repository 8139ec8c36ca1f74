/*
 * init.c - set-up and tear-down of the rdma transport: the configuration
 * rows, the device (GAS_RDMA_DEVICE: a verbs device, or sim), one protection
 * domain, one registration for the segment and one for the signal mailbox,
 * the CQs; the address it publishes, routes, counters and the ops table.
 * No QP exists until a peer is upgraded (conn.c).
 */
#include "transport/rdma/rdma.h"
#include "runtime/boot_wire.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "transport/udp/ctrl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CQ_DEPTH 4096

extern const struct gas_tl_ops gas_udp_ops;
struct gas_rdma_state gas_rdma_g = {.mbox_fd = -1};

/* A setting whose range (runtime/config_ranges.h) the configuration checked. */
static unsigned cfg_uint(enum gas_rt_config_id id)
{
    return (unsigned)gas_rt_config_size(id);
}

_Static_assert(GAS_RDMA_MAX_QPS == 16, "runtime/config_ranges.h's GAS_RDMA_QPS_* ranges");

static void read_config(struct gas_rdma_cfg *c)
{
    c->qps[0] = cfg_uint(GAS_CFG_RDMA_QPS_NEAR);
    c->qps[1] = cfg_uint(GAS_CFG_RDMA_QPS_FAR);
    c->qp_max[0] = cfg_uint(GAS_CFG_RDMA_QP_OUTSTANDING_NEAR);
    c->qp_max[1] = cfg_uint(GAS_CFG_RDMA_QP_OUTSTANDING_FAR);
    c->stripe[0] = cfg_uint(GAS_CFG_RDMA_STRIPE_NEAR);
    c->stripe[1] = cfg_uint(GAS_CFG_RDMA_STRIPE_FAR);
    c->peer_max = cfg_uint(GAS_CFG_RDMA_PEER_OUTSTANDING);
    c->inline_max = cfg_uint(GAS_CFG_RDMA_INLINE);
    c->signal_every = cfg_uint(GAS_CFG_RDMA_SIGNAL_EVERY);
    c->recv_depth = cfg_uint(GAS_CFG_RDMA_RECV_DEPTH);
    c->upgrade_after = gas_rt_config_size(GAS_CFG_RDMA_UPGRADE_AFTER);
    /* DQPLB needs the target's progress: auto turns it on where a progress
     * thread serves the receive CQ while the application computes. */
    c->poll_mode = gas_rt_config_enum(GAS_CFG_PROGRESS) == 1;
    switch (gas_rt_config_enum(GAS_CFG_RDMA_DQPLB)) {
    case 1: c->dqplb = 1; break;
    case 2: c->dqplb = 0; break;
    default: c->dqplb = !c->poll_mode; break;
    }
    c->fallback = gas_rt_config_size(GAS_CFG_RDMA_FALLBACK) != 0;
    c->timeout = cfg_uint(GAS_CFG_RDMA_TIMEOUT);
    c->retry_cnt = cfg_uint(GAS_CFG_RDMA_RETRY_CNT);
    c->rnr_retry = cfg_uint(GAS_CFG_RDMA_RNR_RETRY);
    c->min_rnr_timer = cfg_uint(GAS_CFG_RDMA_MIN_RNR_TIMER);
    c->path_mtu = cfg_uint(GAS_CFG_RDMA_PATH_MTU);
    c->rd_atomic = cfg_uint(GAS_CFG_RDMA_RD_ATOMIC);
    c->sl = cfg_uint(GAS_CFG_RDMA_SL);
    c->hop_limit = cfg_uint(GAS_CFG_RDMA_HOP_LIMIT);
    c->port = cfg_uint(GAS_CFG_RDMA_PORT);
    c->gid_index = cfg_uint(GAS_CFG_RDMA_GID_INDEX);
}

/* GAS_TEST_RDMA_RANKS: is this rank one of those that open a device? */
static int rank_enabled(int rank)
{
    const char *s = gas_rt_config_str(GAS_CFG_TEST_RDMA_RANKS);
    if (s == NULL || *s == 0)
        return 1;
    while (*s) {
        char *end;
        long r = strtol(s, &end, 10);
        if (end == s)
            return 0;
        if (r == rank)
            return 1;
        s = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static void release(void)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    gas_udp_ctrl_set_handler(NULL);
    if (g->rcq)
        gas_udp_set_event_source(-1, NULL); /* returns once the progress thread is out of it */
    if (g->peers) {
        for (int r = 0; r < g->env.nranks; r++)
            if (atomic_load(&g->peers[r]))
                gas_rdma_peer_free(atomic_load(&g->peers[r]));
        free((void *)g->peers);
    }
    if (g->scq)
        g->vb->destroy_cq(g->scq);
    if (g->rcq)
        g->vb->destroy_cq(g->rcq);
    if (g->mbox_mr)
        g->vb->dereg_mr(g->mbox_mr);
    if (g->seg_mr)
        g->vb->dereg_mr(g->seg_mr);
    if (g->mbox)
        munmap(g->mbox, g->mbox_len);
    if (g->mbox_fd >= 0)
        close(g->mbox_fd);
    if (g->pd)
        g->vb->dealloc_pd(g->pd);
    if (g->ctx)
        g->vb->close(g->ctx);
    pthread_mutex_destroy(&g->poll_lock);
    pthread_mutex_destroy(&g->peers_lock);
    memset(g, 0, sizeof *g);
    g->mbox_fd = -1;
}

/* The signal mailbox: a memfd so that the sim can expose it too. */
static gas_status_t mbox_create(struct gas_rdma_state *g)
{
    g->mbox_len = (uint64_t)g->env.nranks * (8 + GAS_RDMA_MBOX_SLOTS * GAS_RDMA_MBOX_SLOT_LEN);
    g->mbox_fd = memfd_create("gas-rdma-mbox", MFD_CLOEXEC);
    if (g->mbox_fd < 0 || ftruncate(g->mbox_fd, (off_t)g->mbox_len) != 0)
        return gas_rt_error(GAS_ERR_IO, "gas_init", "rdma mailbox: %s", strerror(errno));
    g->mbox = mmap(NULL, g->mbox_len, PROT_READ | PROT_WRITE, MAP_SHARED, g->mbox_fd, 0);
    if (g->mbox == MAP_FAILED) {
        g->mbox = NULL;
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "rdma mailbox: mmap: %s", strerror(errno));
    }
    return GAS_OK;
}

static gas_status_t rdma_init(const gas_tl_env_t *env)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    memset(g, 0, sizeof *g);
    g->mbox_fd = -1;
    g->env = *env;
    pthread_mutex_init(&g->poll_lock, NULL);
    pthread_mutex_init(&g->peers_lock, NULL);
    const char *dev = gas_rt_config_str(GAS_CFG_RDMA_DEVICE);
    gas_status_t st;
    if (strcmp(dev, "none") == 0 || !rank_enabled(env->rank)) {
        st = GAS_ERR_UNSUPPORTED;
        goto err_release;
    }
    read_config(&g->cfg);
    if (strcmp(dev, "sim") == 0) {
        g->vb = &gas_vb_sim_ops;
    } else {
#if GAS_HAVE_IBVERBS
        g->vb = &gas_vb_ibv_ops;
#else
        if (*dev) /* asked for by name: say why it is not used */
            gas_log_warn("rdma", "GAS_RDMA_DEVICE=%s: libgas was built without libibverbs; "
                         "this rank goes on without rdma (udp)", dev);
        st = GAS_ERR_UNSUPPORTED;
        goto err_release;
#endif
    }
    const gas_vb_ops_t *vb = g->vb;
    if ((st = vb->open(dev, g->cfg.port, &g->ctx, &g->dev)) != GAS_OK)
        goto err_release;
    if (g->dev.active_mtu < g->cfg.path_mtu)
        g->cfg.path_mtu = g->dev.active_mtu;
    switch (gas_rt_config_enum(GAS_CFG_RDMA_ATOMICS)) {
    case 1: g->cfg.nic_atomics = 1; break;
    case 2: g->cfg.nic_atomics = 0; break;
    default: g->cfg.nic_atomics = g->dev.atomics_coherent; break;
    }
    if ((st = vb->alloc_pd(g->ctx, &g->pd)) != GAS_OK || (st = mbox_create(g)) != GAS_OK)
        goto err_release;
    unsigned remote = GAS_VB_ACCESS_LOCAL_WRITE | GAS_VB_ACCESS_REMOTE_WRITE |
                      GAS_VB_ACCESS_REMOTE_READ | GAS_VB_ACCESS_REMOTE_ATOMIC;
    uint32_t lk;
    if ((st = vb->reg_mr(g->pd, env->seg_base, env->seg_size, env->seg_fd, remote, &g->seg_mr,
                         &g->seg_lkey, &g->seg_rkey)) != GAS_OK ||
        (st = vb->reg_mr(g->pd, g->mbox, g->mbox_len, g->mbox_fd, remote, &g->mbox_mr, &lk,
                         &g->mbox_rkey)) != GAS_OK ||
        (st = vb->create_cq(g->ctx, CQ_DEPTH, 0, &g->scq)) != GAS_OK ||
        (st = vb->create_cq(g->ctx, CQ_DEPTH, 1, &g->rcq)) != GAS_OK)
        goto err_release;
    g->peers = calloc((size_t)env->nranks, sizeof *g->peers);
    if (g->peers == NULL) {
        st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the rdma peer table");
        goto err_release;
    }
    gas_udp_ctrl_set_handler(gas_rdma_ctrl_in);
    g->ready = 1;
    /* Signals that arrive while this rank computes are applied by udp's progress. */
    if ((st = gas_udp_set_event_source(vb->cq_event_fd(g->rcq), gas_rdma_recv_events)) != GAS_OK)
        goto err_release;
    gas_log_info("rdma", "device %s (%s back end), path MTU %u, atomics on the %s, DQPLB %s",
                 g->dev.name, vb->name, g->cfg.path_mtu,
                 g->cfg.nic_atomics ? "NIC" : "target CPU (udp)", g->cfg.dqplb ? "on" : "off");
    return GAS_OK;

err_release:
    release();
    return st;
}

static void rdma_fini(void)
{
    if (!gas_rdma_g.ready)
        return;
    /* Complete what is in flight (the last barrier's signals, requests the
     * sim holds back) before the QPs go: the peers may still wait for them. */
    gas_rdma_g.finalizing = 1;
    (void)gas_rdma_quiet_all(1, "gas_finalize", NULL);
    release();
}

/* gas_init's traffic is over: from now on a peer's operations count towards its upgrade. */
static void rdma_init_done(void)
{
    atomic_store(&gas_rdma_g.program_ops, 1);
}

static gas_status_t rdma_addr_pack(void *buf, size_t cap, size_t *len_p)
{
    unsigned char *p = buf;
    if (cap < GAS_RDMA_ADDR_LEN)
        return GAS_ERR_INTERNAL;
    memset(p, 0, GAS_RDMA_ADDR_LEN);
    p[0] = gas_rdma_g.vb == &gas_vb_sim_ops ? 1 : 2;
    gas_boot_put_u64(p + 8, gas_rdma_g.dev.fabric);
    *len_p = GAS_RDMA_ADDR_LEN;
    return GAS_OK;
}

/* Both ends have a device of the same kind on one fabric (the sim: one host). */
static int rdma_reachable(const void *addr, size_t len)
{
    unsigned char mine[GAS_RDMA_ADDR_LEN];
    size_t n;
    const unsigned char *a = addr;
    if (len != GAS_RDMA_ADDR_LEN || rdma_addr_pack(mine, sizeof mine, &n) != GAS_OK)
        return 0;
    return a[0] == mine[0] && gas_boot_get_u64(a + 8) == gas_rdma_g.dev.fabric;
}

static gas_status_t rdma_connect(int rank, const void *addr, size_t len, gas_tl_peer_t **peer_p)
{
    unsigned char ua[GAS_TL_MAX_ADDR];
    size_t ulen = 0;
    gas_tl_peer_t *udp;
    gas_status_t st = gas_tl_peer_addr(rank, GAS_TL_UDP, ua, sizeof ua, &ulen);
    if (st != GAS_OK)
        return gas_rt_error(GAS_ERR_PEER, "connect", "rank %d published no udp address (rdma needs udp)",
                            rank);
    if ((st = gas_udp_ops.connect(rank, ua, ulen, &udp)) != GAS_OK)
        return st;
    if (rank == gas_rdma_g.env.rank) { /* this rank's own route: udp applies it in place */
        *peer_p = udp;
        return GAS_OK;
    }
    gas_rdma_peer_t *p = gas_rdma_peer_get(rank);
    if (p == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "connect", "no memory for rdma state of rank %d", rank);
    pthread_mutex_lock(&p->lock);
    p->udp = udp;
    p->base.size = udp->size;
    p->near = ulen >= 24 && gas_boot_get_u64(ua + 16) == gas_rdma_g.env.node_id;
    pthread_mutex_unlock(&p->lock);
    *peer_p = &p->base;
    return GAS_OK;
}

static void rdma_disconnect(gas_tl_peer_t *peer)
{
    /* Peer state lives until fini: the handshake handler may still use it. */
}

static const char *const state_names[] = {"udp", "connecting", "rc", "fallback", "failed", "udp"};

static gas_status_t rdma_stats(gas_tl_peer_t *peer, gas_peer_stats_t *out)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (peer == NULL) {
        out->rdma_work_requests += __atomic_load_n(&g->n_wr, __ATOMIC_RELAXED);
        out->rdma_bytes += __atomic_load_n(&g->n_bytes, __ATOMIC_RELAXED);
        out->rdma_errors += __atomic_load_n(&g->n_err, __ATOMIC_RELAXED);
        out->rdma_signals += __atomic_load_n(&g->n_signals, __ATOMIC_RELAXED);
        out->rdma_redone += __atomic_load_n(&g->n_redone, __ATOMIC_RELAXED);
        out->upgraded_peers += atomic_load(&g->upgraded);
        return GAS_OK;
    }
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    gas_status_t st = p->udp ? gas_udp_ops.stats(p->udp, out) : GAS_OK;
    snprintf(out->transport, sizeof out->transport, "rdma");
    pthread_mutex_lock(&p->lock);
    snprintf(out->route, sizeof out->route, "%s", state_names[atomic_load(&p->state)]);
    out->rdma_work_requests = p->n_wr;
    out->rdma_bytes = p->n_bytes;
    out->rdma_errors = p->n_err;
    out->rdma_signals = p->n_signals;
    out->rdma_redone = p->n_redone;
    out->upgraded_peers = atomic_load(&p->state) == RC_READY;
    pthread_mutex_unlock(&p->lock);
    return st;
}

const struct gas_tl_ops gas_rdma_ops = {
    .name = "rdma",
    .id = GAS_TL_RDMA,
    .init = rdma_init,
    .addr_pack = rdma_addr_pack,
    .reachable = rdma_reachable,
    .connect = rdma_connect,
    .put = gas_rdma_put,
    .get = gas_rdma_get,
    .amo = gas_rdma_amo,
    .put_signal = gas_rdma_put_signal,
    .fence = gas_rdma_fence,
    .quiet = gas_rdma_quiet,
    .forget = gas_rdma_forget,
    .init_done = rdma_init_done,
    .progress = gas_rdma_progress,
    .stats = rdma_stats,
    .disconnect = rdma_disconnect,
    .fini = rdma_fini,
};
