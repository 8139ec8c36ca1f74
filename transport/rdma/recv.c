/*
 * recv.c - the target side of DQPLB and the progress hook.
 *
 * Every piece of a DQPLB signalled put arrives as a receive completion
 * carrying its immediate (imm.h).  The pieces of one initiator are released
 * in sequence order over all its QPs; a notify is applied (the signal
 * descriptor in our mailbox slot) only once every earlier piece arrived, and
 * the point reached is published in the mailbox for the initiator to read.
 *
 * One-sidedness: the receive CQ has a completion channel, and udp's progress
 * thread sleeps on its descriptor beside the socket (gas_udp_set_event_source),
 * so signals are applied while the application computes and never calls the
 * library.  The thread serves it with gas_rdma_recv_events: consume the
 * events, poll, re-arm, poll again (what arrived before the arm raised no
 * event).  Application threads waiting in the library poll it themselves
 * (gas_rdma_progress); while they do (udp's socket lease), the CQ is left
 * unarmed, so arrivals do not wake the progress thread for nothing, and it
 * is armed again within the lease (200 us) after they stop.
 */
#include "transport/rdma/rdma.h"
#include "alloc/segment.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/local.h"

#include <string.h>

/* Apply the signal descriptor of a DQPLB notify (peer locked). */
static void apply_notify(gas_rdma_peer_t *p, uint32_t seq)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    const unsigned char *d =
        (const unsigned char *)gas_rdma_mbox_slot(g->mbox, g->env.nranks, p->rank, seq);
    uint64_t off, value;
    uint32_t op, tag, ack;
    memcpy(&off, d, 8);
    memcpy(&value, d + 8, 8);
    memcpy(&op, d + 16, 4);
    memcpy(&tag, d + 20, 4);
    memcpy(&ack, d + 24, 4);
    /* How far the peer applied our signals: forward only, never past what we sent. */
    uint32_t a = ack & GAS_RDMA_SEQ_MASK;
    if ((ack & GAS_RDMA_IMM_NOTIFY) &&
        gas_rdma_seq_dist(p->tx_consumed, a) <= gas_rdma_seq_dist(p->tx_consumed, p->tx_seq))
        p->tx_consumed = a;
    if (tag != seq || off % 8 || off < GAS_AL_HEADER_BYTES || off > g->env.seg_size - 8) {
        gas_log_warn("rdma", "rank %d sent a bad signal descriptor (seq %u, offset %llu)", p->rank,
                     seq, (unsigned long long)off);
        return;
    }
    gas_tl_signal_apply(g->env.seg_base + off, value, op == GAS_SIGNAL_ADD ? GAS_SIGNAL_ADD
                                                                           : GAS_SIGNAL_SET);
    p->n_signals++;
    __atomic_fetch_add(&g->n_signals, 1, __ATOMIC_RELAXED);
    gas_rt_doorbell_ring(&gas_al_seg_hdr(g->env.seg_base)->doorbell, off, 8);
}

static void recv_wc(const gas_vb_wc_t *wc)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    int rank = (int)(wc->wr_id >> 8);
    unsigned qi = (unsigned)(wc->wr_id & 0xff);
    if (wc->status != GAS_VB_WC_SUCCESS || rank >= g->env.nranks || qi >= GAS_RDMA_MAX_QPS)
        return; /* flushed receives of a QP in error */
    gas_rdma_peer_t *p = atomic_load(&g->peers[rank]);
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    if (p->rx_cut) { /* the peer left RC and redoes what we had not applied */
        pthread_mutex_unlock(&p->lock);
        return;
    }
    if (gas_rdma_reasm_arrive(&p->rx, wc->imm) != 0)
        gas_log_warn("rdma", "rank %d: piece %u outside the reassembly window (at %u)", rank,
                     gas_rdma_imm_seq(wc->imm), p->rx.next);
    if (p->qp[qi].qp)
        g->vb->post_recv(p->qp[qi].qp, wc->wr_id, 1);
    uint32_t seq;
    int notify;
    while (gas_rdma_reasm_pop(&p->rx, &seq, &notify))
        if (notify)
            apply_notify(p, seq);
    /* Tell the initiator how far its descriptor slots are free (it reads this). */
    __atomic_store_n((uint64_t *)(void *)(g->mbox + (uint64_t)rank * 8), p->rx.next,
                     __ATOMIC_RELEASE);
    pthread_mutex_unlock(&p->lock);
}

int gas_rdma_poll_recv(void)
{
    return gas_rdma_drain_cq(gas_rdma_g.rcq, recv_wc);
}

int gas_rdma_recv_events(int polled)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (!g->ready)
        return 0;
    int ev = g->vb->get_cq_events(g->rcq);
    if (ev)
        __atomic_store_n(&g->rcq_armed, 0, __ATOMIC_RELAXED);
    /* An application thread polls the CQ now: leave the CQ unarmed (no wake-up
     * for each arrival); we are called again when it stops. */
    if (polled || __atomic_load_n(&g->rcq_armed, __ATOMIC_RELAXED))
        return ev;
    int total = 0, n;
    pthread_mutex_lock(&g->poll_lock); /* block: the application may not come back */
    do {
        total += gas_rdma_poll_recv();
        g->vb->req_notify_cq(g->rcq);
        __atomic_store_n(&g->rcq_armed, 1, __ATOMIC_RELAXED);
        total += n = gas_rdma_poll_recv(); /* arrived before the arm: no event for those */
    } while (n > 0);
    pthread_mutex_unlock(&g->poll_lock);
    return total + ev;
}

uint32_t gas_rdma_recv_cut(gas_rdma_peer_t *p)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    pthread_mutex_lock(&g->poll_lock);
    gas_rdma_poll_recv(); /* take what arrived first */
    pthread_mutex_lock(&p->lock);
    p->rx_cut = 1;
    uint32_t next = p->rx.next;
    if (atomic_load(&p->state) == RC_READY) {
        /* Its QPs are in ERR: ours would only find out by a retry timeout. */
        atomic_store(&p->state, g->cfg.fallback ? RC_FALLBACK : RC_FAILED);
        atomic_fetch_sub(&g->upgraded, 1);
        gas_vb_qp_attr_t err = {.qp_state = GAS_VB_QPS_ERR};
        for (unsigned i = 0; i < p->nqp; i++)
            g->vb->modify_qp(p->qp[i].qp, &err, GAS_VB_QP_STATE);
        if (g->cfg.fallback)
            atomic_store(&g->switch_due, 1);
        gas_log_warn("rdma", "rank %d left RC after a failure: it is reached over udp from now on",
                     p->rank);
    }
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&g->poll_lock);
    return next;
}

int gas_rdma_progress(void)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (!g->ready)
        return 0;
    int total = 0;
    if (pthread_mutex_trylock(&g->poll_lock) == 0) {
        total = gas_rdma_poll_send() + gas_rdma_poll_recv();
        pthread_mutex_unlock(&g->poll_lock);
    }
    if (atomic_load_explicit(&g->switch_due, memory_order_relaxed))
        gas_rdma_switch_due();
    return total;
}
