/*
 * conn.c - lazy upgrade of a peer from udp to RC.
 *
 * The program's first operation to a peer (or its GAS_RDMA_UPGRADE_AFTER-th;
 * gas_init's own traffic does not count, so no pair is connected just because
 * the job started: init_done in init.c opens the count) creates
 * this side's QPs, brings them to INIT and sends a REQ over the udp channel
 * with everything the peer needs: QPNs and PSNs, LID/GID, MTU, the rkeys
 * and bases of the segment and the signal mailbox.  The peer's handler (on
 * its udp receive path: no application thread involved) creates its QPs if
 * it has none, takes them to RTR and RTS against ours and answers a REP with
 * the same fields; our side then does the same and the peer is READY.  Both
 * sides may ask at once: QPs are made once per peer, connected once (on the
 * first REQ or REP that arrives), and only a REP makes a side READY (the
 * other side's QPs are then at RTS), so the crossing case needs no tie-break.
 * A side that cannot make QPs answers NAK: the pair stays on udp.
 *
 * After an RC failure, the side that falls back sends CUT: the peer takes
 * the DQPLB pieces that arrived, stops taking more, falls back too, and
 * answers CUT_ACK with how far it applied them (route.c redoes the rest).
 */
#include "transport/rdma/rdma.h"
#include "runtime/boot_wire.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "transport/udp/ctrl.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MSG_REQ = 1, MSG_REP = 2, MSG_NAK = 3, MSG_CUT = 4, MSG_CUT_ACK = 5 };
#define MSG_FIXED 64
#define MSG_QP 8

/* ---- bring-up: INIT, RTR, RTS (one attribute struct each) ---- */

int gas_rdma_qp_init(struct gas_vb_qp *qp)
{
    const struct gas_rdma_cfg *c = &gas_rdma_g.cfg;
    gas_vb_qp_attr_t attr = {
        .qp_state = GAS_VB_QPS_INIT,
        .pkey_index = 0,
        .port_num = (uint8_t)(c->port ? c->port : 1),
        .qp_access_flags = GAS_VB_ACCESS_REMOTE_WRITE |
                           GAS_VB_ACCESS_REMOTE_READ |
                           GAS_VB_ACCESS_REMOTE_ATOMIC,
    };
    return gas_rdma_g.vb->modify_qp(qp, &attr,
                                    GAS_VB_QP_STATE |
                                    GAS_VB_QP_PKEY_INDEX |
                                    GAS_VB_QP_PORT |
                                    GAS_VB_QP_ACCESS_FLAGS);
}

int gas_rdma_qp_rtr(struct gas_vb_qp *qp, uint32_t dest_qpn, uint32_t rq_psn,
                    const gas_vb_port_addr_t *dest)
{
    const struct gas_rdma_cfg *c = &gas_rdma_g.cfg;
    static const uint8_t zero[16];
    gas_vb_qp_attr_t attr = {
        .qp_state = GAS_VB_QPS_RTR,
        .path_mtu = c->path_mtu ? c->path_mtu : 1024,
        .dest_qp_num = dest_qpn,
        .rq_psn = rq_psn,
        .max_dest_rd_atomic = (uint8_t)c->rd_atomic,
        .min_rnr_timer = (uint8_t)c->min_rnr_timer,
        .port_num = (uint8_t)(c->port ? c->port : 1),
        .ah = {
            .dest = *dest,
            .is_global = memcmp(dest->gid, zero, 16) != 0,
            .sgid_index = (uint8_t)c->gid_index,
            .hop_limit = (uint8_t)c->hop_limit,
            .sl = (uint8_t)c->sl,
        },
    };
    return gas_rdma_g.vb->modify_qp(qp, &attr,
                                    GAS_VB_QP_STATE |
                                    GAS_VB_QP_AV |
                                    GAS_VB_QP_PATH_MTU |
                                    GAS_VB_QP_DEST_QPN |
                                    GAS_VB_QP_RQ_PSN |
                                    GAS_VB_QP_MAX_DEST_RD_ATOMIC |
                                    GAS_VB_QP_MIN_RNR_TIMER);
}

int gas_rdma_qp_rts(struct gas_vb_qp *qp, uint32_t sq_psn)
{
    const struct gas_rdma_cfg *c = &gas_rdma_g.cfg;
    gas_vb_qp_attr_t attr = {
        .qp_state = GAS_VB_QPS_RTS,
        .timeout = (uint8_t)c->timeout,
        .retry_cnt = (uint8_t)c->retry_cnt,
        .rnr_retry = (uint8_t)c->rnr_retry,
        .sq_psn = sq_psn,
        .max_rd_atomic = (uint8_t)c->rd_atomic,
    };
    return gas_rdma_g.vb->modify_qp(qp, &attr,
                                    GAS_VB_QP_STATE |
                                    GAS_VB_QP_TIMEOUT |
                                    GAS_VB_QP_RETRY_CNT |
                                    GAS_VB_QP_RNR_RETRY |
                                    GAS_VB_QP_SQ_PSN |
                                    GAS_VB_QP_MAX_QP_RD_ATOMIC);
}

/* ---- peer state ---- */

gas_rdma_peer_t *gas_rdma_peer_get(int rank)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    gas_rdma_peer_t *p = atomic_load_explicit(&g->peers[rank], memory_order_acquire);
    if (p)
        return p;
    pthread_mutex_lock(&g->peers_lock);
    p = atomic_load(&g->peers[rank]);
    if (p == NULL && (p = calloc(1, sizeof *p)) != NULL) {
        p->base = (gas_tl_peer_t){.ops = &gas_rdma_ops, .rank = rank};
        p->rank = rank;
        pthread_rwlockattr_t ra;
        pthread_rwlockattr_init(&ra);
        pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
        pthread_rwlock_init(&p->route_lock, &ra);
        pthread_rwlockattr_destroy(&ra);
        pthread_mutex_init(&p->dqplb_lock, NULL);
        pthread_mutex_init(&p->lock, NULL);
        p->redo_tail = &p->redo;
        gas_rdma_reasm_init(&p->rx, 0);
        atomic_store_explicit(&g->peers[rank], p, memory_order_release);
    }
    pthread_mutex_unlock(&g->peers_lock);
    return p;
}

void gas_rdma_peer_free(gas_rdma_peer_t *p)
{
    const gas_vb_ops_t *vb = gas_rdma_g.vb;
    for (unsigned i = 0; i < GAS_RDMA_MAX_QPS; i++) {
        if (p->qp[i].qp)
            vb->destroy_qp(p->qp[i].qp);
        free(p->qp[i].wrs);
    }
    if (p->stage_mr)
        vb->dereg_mr(p->stage_mr);
    free(p->stage);
    while (p->redo) {
        struct gas_rdma_redo *e = p->redo;
        p->redo = e->next;
        free(e);
    }
    pthread_rwlock_destroy(&p->route_lock);
    pthread_mutex_destroy(&p->dqplb_lock);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Make this side's QPs (INIT) and staging memory; peer locked.  0 or -1. */
static int make_qps(gas_rdma_peer_t *p, int near)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    const struct gas_rdma_cfg *c = &g->cfg;
    if (p->nqp)
        return 0;
    int k = near ? 0 : 1;
    p->near = near;
    p->qp_max = c->qp_max[k];
    p->stripe = c->stripe[k];
    unsigned nqp = c->qps[k];
    size_t stage_len = (size_t)nqp * p->qp_max * p->stripe;
    if ((p->stage = malloc(stage_len)) == NULL ||
        g->vb->reg_mr(g->pd, p->stage, stage_len, -1, GAS_VB_ACCESS_LOCAL_WRITE, &p->stage_mr,
                      &p->stage_lkey, &(uint32_t){0}) != GAS_OK)
        goto err;
    gas_vb_qp_caps_t caps = {.max_send_wr = p->qp_max + 1, /* + a marker (data.c) */ .max_recv_wr = c->recv_depth,
                             .max_inline = c->inline_max};
    for (unsigned i = 0; i < nqp; i++) {
        struct gas_rdma_qp *q = &p->qp[i];
        q->wrs = calloc(p->qp_max, sizeof *q->wrs);
        q->stage = p->stage + (size_t)i * p->qp_max * p->stripe;
        q->psn = (uint32_t)(gas_rt_now_ns() * 2654435761u + i) & 0xffffff;
        if (q->wrs == NULL ||
            g->vb->create_qp(g->pd, g->scq, g->rcq, &caps, &q->qp, &q->qpn) != GAS_OK)
            goto err;
        if (gas_rdma_qp_init(q->qp) != 0) {
            gas_log_error("rdma", "rank %d: QP %u: RESET->INIT refused", p->rank, q->qpn);
            goto err;
        }
        p->nqp = i + 1;
    }
    return 0;
err:
    gas_log_warn("rdma", "cannot make queue pairs for rank %d: it stays on udp", p->rank);
    for (unsigned i = 0; i < GAS_RDMA_MAX_QPS; i++) {
        if (p->qp[i].qp)
            g->vb->destroy_qp(p->qp[i].qp);
        free(p->qp[i].wrs);
        memset(&p->qp[i], 0, sizeof p->qp[i]);
    }
    if (p->stage_mr)
        g->vb->dereg_mr(p->stage_mr);
    free(p->stage);
    p->stage = NULL;
    p->stage_mr = NULL;
    p->nqp = 0;
    return -1;
}

static size_t msg_build(gas_rdma_peer_t *p, int type, unsigned char *m)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    memset(m, 0, MSG_FIXED);
    m[0] = (unsigned char)type;
    m[1] = (unsigned char)p->nqp;
    m[2] = (unsigned char)g->dev.port.lid;
    m[3] = (unsigned char)(g->dev.port.lid >> 8);
    gas_boot_put_u32(m + 4, g->cfg.path_mtu);
    memcpy(m + 8, g->dev.port.gid, 16);
    gas_boot_put_u32(m + 24, g->seg_rkey);
    gas_boot_put_u32(m + 28, g->mbox_rkey);
    gas_boot_put_u64(m + 32, (uint64_t)(uintptr_t)g->env.seg_base);
    gas_boot_put_u64(m + 40, g->env.seg_size);
    gas_boot_put_u64(m + 48, (uint64_t)(uintptr_t)g->mbox);
    gas_boot_put_u64(m + 56, g->env.node_id);
    for (unsigned i = 0; i < p->nqp; i++) {
        gas_boot_put_u32(m + MSG_FIXED + i * MSG_QP, p->qp[i].qpn);
        gas_boot_put_u32(m + MSG_FIXED + i * MSG_QP + 4, p->qp[i].psn);
    }
    return type == MSG_NAK ? 8 : MSG_FIXED + p->nqp * MSG_QP;
}

/* Connect our QPs to those the message describes (RTR, RTS); peer locked. */
static int connect_qps(gas_rdma_peer_t *p, const unsigned char *m, size_t len)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    unsigned n = m[1];
    if (n == 0 || len < MSG_FIXED + n * MSG_QP)
        return -1;
    if (n < p->nqp)
        p->nqp = n; /* the peer has fewer: use as many as both have */
    gas_vb_port_addr_t dest = {.lid = (uint16_t)(m[2] | m[3] << 8)};
    memcpy(dest.gid, m + 8, 16);
    uint32_t mtu = gas_boot_get_u32(m + 4);
    if (mtu < g->cfg.path_mtu)
        g->cfg.path_mtu = mtu;
    p->seg_rkey = gas_boot_get_u32(m + 24);
    p->mbox_rkey = gas_boot_get_u32(m + 28);
    p->seg_base = gas_boot_get_u64(m + 32);
    p->seg_size = gas_boot_get_u64(m + 40);
    p->mbox_base = gas_boot_get_u64(m + 48);
    for (unsigned i = 0; i < p->nqp; i++) {
        struct gas_rdma_qp *q = &p->qp[i];
        uint32_t rqpn = gas_boot_get_u32(m + MSG_FIXED + i * MSG_QP);
        uint32_t rpsn = gas_boot_get_u32(m + MSG_FIXED + i * MSG_QP + 4);
        if (gas_rdma_qp_rtr(q->qp, rqpn, rpsn, &dest) != 0 || gas_rdma_qp_rts(q->qp, q->psn) != 0) {
            gas_log_error("rdma", "rank %d: QP %u: INIT->RTR->RTS refused", p->rank, q->qpn);
            return -1;
        }
        if (g->vb->post_recv(q->qp, (uint64_t)p->rank << 8 | i, g->cfg.recv_depth) != 0)
            return -1;
    }
    p->qps_up = 1;
    return 0;
}

void gas_rdma_maybe_upgrade(gas_rdma_peer_t *p)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (atomic_load_explicit(&p->state, memory_order_relaxed) != RC_IDLE ||
        !atomic_load_explicit(&g->program_ops, memory_order_relaxed) ||
        atomic_fetch_add(&p->nops, 1) + 1 < g->cfg.upgrade_after)
        return;
    unsigned char m[MSG_FIXED + GAS_RDMA_MAX_QPS * MSG_QP];
    size_t len = 0;
    pthread_mutex_lock(&p->lock);
    if (atomic_load(&p->state) == RC_IDLE) {
        if (make_qps(p, p->near) != 0) {
            atomic_store(&p->state, RC_NONE);
        } else {
            len = msg_build(p, MSG_REQ, m);
            atomic_store(&p->state, RC_REQ_SENT);
        }
    }
    pthread_mutex_unlock(&p->lock);
    if (len && gas_udp_ctrl_send(p->rank, m, len) != GAS_OK)
        atomic_store(&p->state, RC_NONE);
}

size_t gas_rdma_ctrl_in(int rank, const void *msg, size_t len, void *reply, size_t cap)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    const unsigned char *m = msg;
    if (!g->ready || len < 8 || rank < 0 || rank >= g->env.nranks)
        return 0;
    gas_rdma_peer_t *p = gas_rdma_peer_get(rank);
    if (p == NULL)
        return 0;
    if (m[0] == MSG_CUT) { /* takes the poll lock before the peer's */
        unsigned char *r = reply;
        memset(r, 0, 8);
        r[0] = MSG_CUT_ACK;
        gas_boot_put_u32(r + 4, gas_rdma_recv_cut(p));
        return 8;
    }
    size_t out = 0;
    pthread_mutex_lock(&p->lock);
    int st = atomic_load(&p->state);
    switch (m[0]) {
    case MSG_REQ: {
        int bad = st == RC_FALLBACK || st == RC_FAILED || st == RC_NONE || len < MSG_FIXED ||
                  cap < MSG_FIXED + GAS_RDMA_MAX_QPS * MSG_QP;
        if (!bad && !p->nqp)
            bad = make_qps(p, gas_boot_get_u64(m + 56) == g->env.node_id) != 0;
        if (!bad && !p->qps_up)
            bad = connect_qps(p, m, len) != 0;
        out = msg_build(p, bad ? MSG_NAK : MSG_REP, reply);
        if (bad && st != RC_FALLBACK && st != RC_FAILED)
            atomic_store(&p->state, RC_NONE);
        break;
    }
    case MSG_REP:
        if (st != RC_REQ_SENT)
            break;
        if (!p->qps_up && connect_qps(p, m, len) != 0) {
            atomic_store(&p->state, RC_NONE);
            break;
        }
        atomic_store(&p->state, RC_READY);
        atomic_fetch_add(&g->upgraded, 1);
        p->n_upgrades++;
        gas_log_info("rdma", "rank %d upgraded to RC (%u QPs)", rank, p->nqp);
        break;
    case MSG_NAK:
        if (st == RC_REQ_SENT)
            atomic_store(&p->state, RC_NONE);
        break;
    case MSG_CUT_ACK:
        p->cut_next = gas_boot_get_u32(m + 4) & GAS_RDMA_SEQ_MASK;
        atomic_store(&p->cut_done, 1);
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&p->lock);
    return out;
}

gas_status_t gas_rdma_send_cut(gas_rdma_peer_t *p)
{
    unsigned char m[8] = {MSG_CUT};
    return gas_udp_ctrl_send(p->rank, m, sizeof m);
}
