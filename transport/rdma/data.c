/*
 * data.c - the rdma data path: put/get/atomics/signalled puts over RC (or
 * over the peer's udp route until it is upgraded, and after a fallback),
 * completion processing, quiet and progress.
 *
 * Posting: a transfer is cut into stripe-sized work requests spread round-
 * robin over the peer's QPs, each QP holding at most qp_max outstanding and
 * the peer at most peer_max.  Puts up to GAS_RDMA_INLINE bytes go inline;
 * larger ones and reads go through the QP's registered staging slot of the
 * request (so the caller's buffer is free on return and needs no
 * registration).  Signalling is selective: a request asks for a completion
 * when an operation waits for it, every signal_every requests, and when its
 * QP or peer reaches the limit; a signalled completion completes every
 * earlier request of its QP (RC executes them in order).  quiet posts a
 * zero-length signalled "marker" where a QP ends unsignalled.
 *
 * Ordering: QPs of one peer are not ordered with each other, so a get, an
 * atomic or a signalled put waits first for the peer's outstanding plain
 * writes; switching a peer between udp and RC drains the path left.
 * Signalled puts use DQPLB (imm.h): pieces and a signal descriptor are
 * WRITE_WITH_IMM with sequence numbers; the target applies the signal from
 * its progress once every earlier piece arrived.  With GAS_RDMA_DQPLB=n the
 * initiator waits for the payload's completion and then writes the signal.
 */
#include "transport/rdma/rdma.h"
#include "alloc/segment.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/local.h"
#include "transport/udp/ctrl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER_BIT (1ull << 63)
#define POLL_BATCH 32

extern const struct gas_tl_ops gas_udp_ops;

static const char *op_name(unsigned opcode)
{
    static const char *const n[] = {"WRITE", "WRITE_WITH_IMM", "READ", "ATOMIC_FETCH_ADD",
                                    "ATOMIC_CMP_SWP"};
    return opcode < 5 ? n[opcode] : "?";
}

static uint64_t wr_id(const gas_rdma_peer_t *p, unsigned qi, uint32_t index)
{
    return (uint64_t)p->rank << 40 | (uint64_t)qi << 32 | index;
}

/* ---- operations and their completion ---- */

static struct gas_rdma_op *op_new(gas_tl_comp_t *comp)
{
    struct gas_rdma_op *op = calloc(1, sizeof *op);
    if (op) {
        op->comp = comp;
        op->remaining = 1; /* the poster's reference, dropped by op_release */
    }
    return op;
}

static void op_finish(gas_rdma_peer_t *p, struct gas_rdma_op *op)
{
    if (op->comp) {
        if (op->status != GAS_OK)
            gas_tl_comp_fail(op->comp, (gas_status_t)op->status, p->rank);
        atomic_fetch_sub_explicit(&op->comp->pending, 1, memory_order_release);
        free(op);
    } else {
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE); /* a synchronous waiter frees it */
    }
}

/* Drop a reference (peer locked). */
static void op_release(gas_rdma_peer_t *p, struct gas_rdma_op *op, int status)
{
    if (op == NULL)
        return;
    if (status != GAS_OK && op->status == GAS_OK)
        op->status = status;
    if (--op->remaining == 0)
        op_finish(p, op);
}

static void peer_note_error(gas_rdma_peer_t *p, gas_status_t st, const char *msg)
{
    if (p->err_status == GAS_OK) {
        p->err_status = st;
        snprintf(p->err_msg, sizeof p->err_msg, "%s", msg);
    }
}

/* A work request completed (peer locked). */
static void wr_done(gas_rdma_peer_t *p, struct gas_rdma_qp *q, uint32_t index, int status)
{
    uint32_t slot = index % p->qp_max;
    struct gas_rdma_wr *w = &q->wrs[slot];
    if (status == GAS_OK && w->dst)
        memcpy(w->dst, q->stage + (size_t)slot * p->stripe, w->len);
    op_release(p, w->op, status);
    *w = (struct gas_rdma_wr){0};
    q->done++;
    if (atomic_fetch_sub(&p->outstanding, 1) == 1)
        p->plain_writes = 0;
}

/* ---- failures ---- */

static gas_status_t wc_to_status(enum gas_vb_wc_status s)
{
    return s == GAS_VB_WC_REM_ACCESS_ERR ? GAS_ERR_BOUNDS : GAS_ERR_PEER;
}

/* The peer's RC path failed (peer locked): report once, fall back or fail. */
static void peer_fail(gas_rdma_peer_t *p, unsigned qi, const char *what, enum gas_vb_wc_status s)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (atomic_load(&p->state) != RC_READY)
        return;
    int fb = g->cfg.fallback;
    atomic_store(&p->state, fb ? RC_FALLBACK : RC_FAILED);
    atomic_fetch_sub(&g->upgraded, 1);
    char msg[200];
    snprintf(msg, sizeof msg, "RDMA %s to rank %d failed on QP %u: %s; %s", what, p->rank,
             p->qp[qi].qpn, gas_vb_wc_status_str(s),
             fb ? "operations in flight failed, later ones go over udp"
                : "GAS_RDMA_FALLBACK=n: every operation to it fails");
    gas_log_error("rdma", "%s", msg);
    peer_note_error(p, wc_to_status(s), msg);
    /* The other QPs stop too: what they hold is flushed. */
    gas_vb_qp_attr_t err = {.qp_state = GAS_VB_QPS_ERR};
    for (unsigned i = 0; i < p->nqp; i++)
        g->vb->modify_qp(p->qp[i].qp, &err, GAS_VB_QP_STATE);
}

static gas_status_t peer_down_error(gas_rdma_peer_t *p, const char *call)
{
    return gas_rt_error(p->err_status ? (gas_status_t)p->err_status : GAS_ERR_PEER, call,
                        "rank %d: its RDMA path failed (%s)", p->rank,
                        p->err_msg[0] ? p->err_msg : "queue pair in error");
}

/* ---- completions ---- */

static void send_wc(const gas_vb_wc_t *wc)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    int rank = (int)(wc->wr_id >> 40 & 0xfffff);
    unsigned qi = (unsigned)(wc->wr_id >> 32 & 0xff);
    uint32_t index = (uint32_t)wc->wr_id;
    if (rank >= g->env.nranks || qi >= GAS_RDMA_MAX_QPS)
        return;
    gas_rdma_peer_t *p = atomic_load(&g->peers[rank]);
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    struct gas_rdma_qp *q = &p->qp[qi];
    if (wc->wr_id & MARKER_BIT) {
        /* Everything before the marker has completed (failures reported their own). */
        q->marker = 0;
        while (q->done != index)
            wr_done(p, q, q->done, GAS_OK);
    } else {
        /* RC completes in order: what precedes a completion succeeded. */
        while (q->done != index && q->posted - q->done > index - q->done)
            wr_done(p, q, q->done, GAS_OK);
        if (q->done == index) {
            int st = GAS_OK;
            if (wc->status != GAS_VB_WC_SUCCESS) {
                enum gas_vb_opcode oc = (enum gas_vb_opcode)q->wrs[index % p->qp_max].opcode;
                st = wc_to_status(wc->status);
                p->n_err++;
                __atomic_fetch_add(&g->n_err, 1, __ATOMIC_RELAXED);
                peer_fail(p, qi, op_name(oc), wc->status);
                if (p->err_status == GAS_OK)
                    peer_note_error(p, st, "RDMA work request flushed");
            }
            wr_done(p, q, index, st);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Apply the signal descriptor of a DQPLB notify (target side). */
static void apply_notify(gas_rdma_peer_t *p, uint32_t seq)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    const unsigned char *d =
        (const unsigned char *)gas_rdma_mbox_slot(g->mbox, g->env.nranks, p->rank, seq);
    uint64_t off, value;
    uint32_t op, tag;
    memcpy(&off, d, 8);
    memcpy(&value, d + 8, 8);
    memcpy(&op, d + 16, 4);
    memcpy(&tag, d + 20, 4);
    if (tag != seq || off % 8 || off < GAS_AL_HEADER_BYTES || off > g->env.seg_size - 8) {
        gas_log_warn("rdma", "rank %d sent a bad signal descriptor (seq %u, offset %llu)", p->rank,
                     seq, (unsigned long long)off);
        return;
    }
    gas_tl_signal_apply(g->env.seg_base + off, value, op == GAS_SIGNAL_ADD ? GAS_SIGNAL_ADD
                                                                           : GAS_SIGNAL_SET);
    gas_rt_doorbell_ring(&gas_al_seg_hdr(g->env.seg_base)->doorbell, off, 8);
}

static void recv_wc(const gas_vb_wc_t *wc)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    int rank = (int)(wc->wr_id >> 8);
    unsigned qi = (unsigned)(wc->wr_id & 0xff);
    if (wc->status != GAS_VB_WC_SUCCESS || rank >= g->env.nranks || qi >= GAS_RDMA_MAX_QPS)
        return;
    gas_rdma_peer_t *p = atomic_load(&g->peers[rank]);
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
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

int gas_rdma_progress(void)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (!g->ready || pthread_mutex_trylock(&g->poll_lock) != 0)
        return 0;
    gas_vb_wc_t wc[POLL_BATCH];
    int n, total = 0;
    while ((n = g->vb->poll_cq(g->scq, POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++)
            send_wc(&wc[i]);
        total += n;
    }
    while ((n = g->vb->poll_cq(g->rcq, POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++)
            recv_wc(&wc[i]);
        total += n;
    }
    pthread_mutex_unlock(&g->poll_lock);
    return total;
}

/* ---- posting ---- */

struct req {
    enum gas_vb_opcode opcode;
    uint64_t raddr;     /* absolute remote address */
    uint32_t rkey;
    const void *src;
    void *dst;
    uint32_t len, imm;
    uint64_t cmp_add, swap;
    struct gas_rdma_op *op;
    int signal;
};

struct room_arg {
    gas_rdma_peer_t *p;
    struct gas_rdma_qp *q;
};

static int room_ready(void *arg)
{
    const struct room_arg *a = arg;
    const struct gas_rdma_state *g = &gas_rdma_g;
    if (atomic_load(&a->p->state) != RC_READY)
        return 1;
    uint32_t posted = __atomic_load_n(&a->q->posted, __ATOMIC_RELAXED);
    uint32_t done = __atomic_load_n(&a->q->done, __ATOMIC_RELAXED);
    return posted - done < a->p->qp_max && atomic_load(&a->p->outstanding) < g->cfg.peer_max;
}

/* Post one work request on QP qi (peer locked; may unlock while waiting for room). */
static gas_status_t post(gas_rdma_peer_t *p, unsigned qi, const struct req *r, const char *call)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    struct gas_rdma_qp *q = &p->qp[qi];
    struct room_arg ra = {p, q};
    while (!room_ready(&ra)) {
        char what[64];
        snprintf(what, sizeof what, "RDMA completions from rank %d", p->rank);
        pthread_mutex_unlock(&p->lock);
        gas_status_t st = gas_rt_wait(room_ready, &ra, NULL, call, what);
        pthread_mutex_lock(&p->lock);
        if (st != GAS_OK)
            return st;
    }
    if (atomic_load(&p->state) != RC_READY)
        return peer_down_error(p, call);
    uint32_t slot = q->posted % p->qp_max;
    char *stage = q->stage + (size_t)slot * p->stripe;
    gas_vb_send_wr_t wr = {
        .wr_id = wr_id(p, qi, q->posted),
        .opcode = r->opcode,
        .length = r->len,
        .lkey = p->stage_lkey,
        .remote_addr = r->raddr,
        .rkey = r->rkey,
        .imm = r->imm,
        .compare_add = r->cmp_add,
        .swap = r->swap,
        .local = stage,
    };
    if (r->opcode == GAS_VB_WR_RDMA_WRITE || r->opcode == GAS_VB_WR_RDMA_WRITE_WITH_IMM) {
        if (r->len <= g->cfg.inline_max) {
            wr.flags |= GAS_VB_SEND_INLINE;
            wr.local = (void *)r->src;
        } else {
            memcpy(stage, r->src, r->len);
        }
    }
    uint32_t out = q->posted - q->done + 1;
    if (r->signal || q->since_signal + 1 >= g->cfg.signal_every || out >= p->qp_max ||
        atomic_load(&p->outstanding) + 1 >= g->cfg.peer_max)
        wr.flags |= GAS_VB_SEND_SIGNALED;
    q->wrs[slot] = (struct gas_rdma_wr){.op = r->op, .dst = r->dst,
                                        .len = r->opcode >= GAS_VB_WR_ATOMIC_FETCH_ADD ? 8 : r->len,
                                        .opcode = (uint8_t)r->opcode};
    if (r->op)
        r->op->remaining++;
    atomic_fetch_add(&p->outstanding, 1);
    q->posted++;
    int rc = g->vb->post_send(q->qp, &wr);
    if (rc != 0) {
        q->posted--;
        atomic_fetch_sub(&p->outstanding, 1);
        if (r->op)
            r->op->remaining--;
        q->wrs[slot] = (struct gas_rdma_wr){0};
        peer_fail(p, qi, op_name(r->opcode), GAS_VB_WC_OTHER_ERR);
        return peer_down_error(p, call);
    }
    q->since_signal = wr.flags & GAS_VB_SEND_SIGNALED ? 0 : q->since_signal + 1;
    if (r->opcode == GAS_VB_WR_RDMA_WRITE)
        p->plain_writes = 1;
    p->n_wr++;
    p->n_bytes += r->len;
    __atomic_fetch_add(&g->n_wr, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g->n_bytes, r->len, __ATOMIC_RELAXED);
    return GAS_OK;
}

/* Make every QP of the peer report its tail: a zero-length signalled marker
 * where the last request was unsignalled or the QP failed (peer locked). */
static void post_markers(gas_rdma_peer_t *p)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    int up = atomic_load(&p->state) == RC_READY;
    for (unsigned i = 0; i < p->nqp; i++) {
        struct gas_rdma_qp *q = &p->qp[i];
        if (q->marker || q->posted == q->done || (up && q->since_signal == 0))
            continue;
        gas_vb_send_wr_t wr = {.wr_id = wr_id(p, i, q->posted) | MARKER_BIT,
                               .opcode = GAS_VB_WR_RDMA_WRITE, .flags = GAS_VB_SEND_SIGNALED,
                               .remote_addr = p->seg_base, .rkey = p->seg_rkey};
        if (g->vb->post_send(q->qp, &wr) == 0) {
            q->marker = 1;
            q->since_signal = 0;
        }
    }
}

struct drain_arg {
    gas_rdma_peer_t *p;
};

static int drained(void *arg)
{
    return atomic_load(&((struct drain_arg *)arg)->p->outstanding) == 0;
}

/* Wait until every request posted to the peer completed (call unlocked). */
static gas_status_t rc_drain(gas_rdma_peer_t *p, const char *call)
{
    if (atomic_load(&p->outstanding) == 0)
        return GAS_OK;
    pthread_mutex_lock(&p->lock);
    post_markers(p);
    pthread_mutex_unlock(&p->lock);
    struct drain_arg d = {p};
    char what[64];
    snprintf(what, sizeof what, "RDMA completions from rank %d", p->rank);
    return gas_rt_wait(drained, &d, NULL, call, what);
}

/* Wait for a synchronous operation (call unlocked); frees it; its status. */
static int op_done(void *arg)
{
    gas_rdma_progress();
    return __atomic_load_n(&((struct gas_rdma_op *)arg)->done, __ATOMIC_ACQUIRE);
}

static gas_status_t op_wait(gas_rdma_peer_t *p, struct gas_rdma_op *op, const char *call)
{
    char what[64];
    snprintf(what, sizeof what, "an RDMA completion from rank %d", p->rank);
    gas_status_t st = gas_rt_wait(op_done, op, NULL, call, what);
    if (st == GAS_OK && op->status != GAS_OK)
        st = peer_down_error(p, call);
    if (st == GAS_OK || op->done)
        free(op);
    /* else: a timeout; the completion may still come and touch it: leak it */
    return st;
}

/* ---- routing between udp and RC ---- */

static gas_status_t route(gas_rdma_peer_t *p, const char *call, int *rc_p)
{
    gas_rdma_maybe_upgrade(p);
    int s = atomic_load(&p->state);
    if (s == RC_FAILED)
        return peer_down_error(p, call);
    int want = s == RC_READY ? PATH_RC : PATH_UDP;
    gas_status_t st = GAS_OK;
    if (p->path != want) {
        st = p->path == PATH_UDP ? gas_udp_drain(p->rank, call) : rc_drain(p, call);
        p->path = want;
    }
    *rc_p = want == PATH_RC;
    return st;
}

/* Earlier plain writes on other QPs must land before what follows (call unlocked). */
static gas_status_t after_writes(gas_rdma_peer_t *p, const char *call)
{
    return p->plain_writes ? rc_drain(p, call) : GAS_OK;
}

/* ---- put and get ---- */

static gas_status_t rc_xfer(gas_rdma_peer_t *p, int write, uint64_t off, char *buf, size_t n,
                            gas_tl_comp_t *comp, const char *call)
{
    struct gas_rdma_op *op = NULL;
    if (comp && (op = op_new(comp)) == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for rdma operation state");
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&p->lock);
    for (size_t k = 0; k < n && st == GAS_OK;) {
        uint32_t len = (uint32_t)(n - k < p->stripe ? n - k : p->stripe);
        struct req r = {.opcode = write ? GAS_VB_WR_RDMA_WRITE : GAS_VB_WR_RDMA_READ,
                        .raddr = p->seg_base + off + k, .rkey = p->seg_rkey,
                        .src = write ? buf + k : NULL, .dst = write ? NULL : buf + k, .len = len,
                        .op = op, .signal = op != NULL}; /* its completion: every QP it used */
        st = post(p, p->next_qp++ % p->nqp, &r, call);
        k += len;
    }
    if (st != GAS_OK && op)
        op->comp = NULL; /* the caller handles comp on an error */
    op_release(p, op, GAS_OK);
    pthread_mutex_unlock(&p->lock);
    return st == GAS_OK ? GAS_INPROGRESS : st;
}

gas_status_t gas_rdma_put(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                          gas_tl_comp_t *comp)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    int rc;
    gas_status_t st = route(p, "put", &rc);
    if (st != GAS_OK)
        return st;
    if (!rc)
        return gas_udp_ops.put(p->udp, off, src, n, comp);
    return rc_xfer(p, 1, off, (char *)src, n, comp, "put");
}

gas_status_t gas_rdma_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                          gas_tl_comp_t *comp)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    int rc;
    gas_status_t st = route(p, "get", &rc);
    if (st != GAS_OK)
        return st;
    if (!rc)
        return gas_udp_ops.get(p->udp, dst, off, n, comp);
    if ((st = after_writes(p, "get")) != GAS_OK)
        return st;
    return rc_xfer(p, 0, off, dst, n, comp, "get");
}

/* ---- atomics ---- */

/* One NIC atomic on the 64-bit word at off, synchronously; *old its value before. */
static gas_status_t nic_word(gas_rdma_peer_t *p, enum gas_vb_opcode opc, uint64_t off,
                             uint64_t cmp_add, uint64_t swap, uint64_t *old)
{
    struct gas_rdma_op *op = op_new(NULL);
    if (op == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "atomic", "no memory for rdma operation state");
    pthread_mutex_lock(&p->lock);
    struct req r = {.opcode = opc, .raddr = p->seg_base + off, .rkey = p->seg_rkey, .dst = old,
                    .len = 8, .cmp_add = cmp_add, .swap = swap, .op = op, .signal = 1};
    gas_status_t st = post(p, p->next_qp++ % p->nqp, &r, "atomic");
    op_release(p, op, st);
    pthread_mutex_unlock(&p->lock);
    gas_status_t wst = op_wait(p, op, "atomic");
    return st != GAS_OK ? st : wst;
}

/*
 * Every atomic to an RC peer runs on its NIC: 64-bit fetch-add and
 * compare-swap natively, every other op and width by a compare-swap loop
 * on the naturally aligned 64-bit word that holds it.
 */
static gas_status_t nic_amo(gas_rdma_peer_t *p, const gas_tl_amo_t *a, uint64_t *result)
{
    gas_status_t st;
    if (a->width == 8 && (a->op == GAS_AMO_ADD || a->op == GAS_AMO_FETCH_ADD))
        return nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, a->offset, a->operand, 0, result);
    if (a->width == 8 && a->op == GAS_AMO_CSWAP)
        return nic_word(p, GAS_VB_WR_ATOMIC_CMP_SWP, a->offset, a->compare, a->operand, result);
    uint64_t word = a->offset & ~7ull, cur;
    if ((st = nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, word, 0, 0, &cur)) != GAS_OK)
        return st;
    for (;;) {
        uint64_t next = cur, seen;
        uint64_t old = gas_tl_amo_apply((char *)&next + (a->offset - word), a->op, a->width,
                                        a->operand, a->compare);
        if (next == cur) { /* nothing to write (a fetch, a failed compare) */
            *result = old;
            return GAS_OK;
        }
        if ((st = nic_word(p, GAS_VB_WR_ATOMIC_CMP_SWP, word, cur, next, &seen)) != GAS_OK)
            return st;
        if (seen == cur) {
            *result = old;
            return GAS_OK;
        }
        cur = seen;
    }
}

gas_status_t gas_rdma_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    int rc;
    gas_status_t st;
    if (!gas_rdma_g.cfg.nic_atomics) { /* the target's CPU applies them (see docs/rdma.md) */
        gas_rdma_maybe_upgrade(p);
        if (p->path == PATH_RC && (st = rc_drain(p, "atomic")) != GAS_OK)
            return st;
        p->path = PATH_UDP;
        return gas_udp_ops.amo(p->udp, a, comp);
    }
    if ((st = route(p, "atomic", &rc)) != GAS_OK)
        return st;
    if (!rc)
        return gas_udp_ops.amo(p->udp, a, comp);
    if ((st = after_writes(p, "atomic")) != GAS_OK)
        return st;
    uint64_t old = 0;
    if ((st = nic_amo(p, a, &old)) != GAS_OK)
        return st;
    if (a->result && gas_amo_fetches(a->op))
        *a->result = old;
    return GAS_OK;
}

/* ---- signalled puts ---- */

/* Refresh how far the target consumed our descriptor slots (an RDMA READ). */
static gas_status_t read_consumed(gas_rdma_peer_t *p)
{
    uint64_t v = 0;
    struct gas_rdma_op *op = op_new(NULL);
    if (op == NULL)
        return GAS_ERR_NOMEM;
    struct req r = {.opcode = GAS_VB_WR_RDMA_READ,
                    .raddr = p->mbox_base + (uint64_t)gas_rdma_g.env.rank * 8,
                    .rkey = p->mbox_rkey, .dst = &v, .len = 8, .op = op, .signal = 1};
    gas_status_t st = post(p, p->next_qp++ % p->nqp, &r, "put_signal");
    op_release(p, op, st);
    pthread_mutex_unlock(&p->lock);
    gas_status_t wst = op_wait(p, op, "put_signal");
    pthread_mutex_lock(&p->lock);
    if (st == GAS_OK && wst == GAS_OK)
        p->tx_consumed = (uint32_t)v & GAS_RDMA_SEQ_MASK;
    return st != GAS_OK ? st : wst;
}

static gas_status_t dqplb_put_signal(gas_rdma_peer_t *p, uint64_t off, const char *src, size_t n,
                                     uint64_t sig_off, uint64_t value, gas_signal_op_t sop,
                                     gas_tl_comp_t *comp)
{
    const gas_tl_env_t *e = &gas_rdma_g.env;
    uint32_t pieces = (uint32_t)((n + p->stripe - 1) / p->stripe) + 1;
    struct gas_rdma_op *op = comp ? op_new(comp) : NULL;
    if (comp && op == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "put_signal", "no memory for rdma operation state");
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&p->lock);
    while (st == GAS_OK &&
           gas_rdma_seq_dist(p->tx_consumed, p->tx_seq + pieces) > GAS_RDMA_MBOX_SLOTS)
        st = read_consumed(p);
    for (size_t k = 0; k < n && st == GAS_OK;) {
        uint32_t len = (uint32_t)(n - k < p->stripe ? n - k : p->stripe);
        struct req r = {.opcode = GAS_VB_WR_RDMA_WRITE_WITH_IMM, .raddr = p->seg_base + off + k,
                        .rkey = p->seg_rkey, .src = src + k, .len = len,
                        .imm = gas_rdma_imm_encode(p->tx_seq, 0), .op = op};
        if ((st = post(p, p->next_qp++ % p->nqp, &r, "put_signal")) == GAS_OK)
            p->tx_seq = (p->tx_seq + 1) & GAS_RDMA_SEQ_MASK;
        k += len;
    }
    if (st == GAS_OK) {
        unsigned char d[GAS_RDMA_MBOX_SLOT_LEN] = {0};
        uint32_t sopv = (uint32_t)sop, tag = p->tx_seq;
        memcpy(d, &sig_off, 8);
        memcpy(d + 8, &value, 8);
        memcpy(d + 16, &sopv, 4);
        memcpy(d + 20, &tag, 4);
        char *slot = gas_rdma_mbox_slot((char *)(uintptr_t)p->mbox_base, e->nranks, e->rank,
                                        p->tx_seq);
        struct req r = {.opcode = GAS_VB_WR_RDMA_WRITE_WITH_IMM,
                        .raddr = (uint64_t)(uintptr_t)slot, .rkey = p->mbox_rkey, .src = d,
                        .len = 24, .imm = gas_rdma_imm_encode(p->tx_seq, 1), .op = op,
                        .signal = op != NULL};
        if ((st = post(p, p->next_qp++ % p->nqp, &r, "put_signal")) == GAS_OK)
            p->tx_seq = (p->tx_seq + 1) & GAS_RDMA_SEQ_MASK;
    }
    if (st != GAS_OK && op)
        op->comp = NULL;
    op_release(p, op, GAS_OK);
    pthread_mutex_unlock(&p->lock);
    return st == GAS_OK ? GAS_INPROGRESS : st;
}

gas_status_t gas_rdma_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                 uint64_t sig_off, uint64_t value, gas_signal_op_t sop,
                                 gas_tl_comp_t *comp)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    int rc;
    gas_status_t st = route(p, "put_signal", &rc);
    if (st != GAS_OK)
        return st;
    if (!rc)
        return gas_udp_ops.put_signal(p->udp, off, src, n, sig_off, value, sop, comp);
    if ((st = after_writes(p, "put_signal")) != GAS_OK)
        return st;
    if (gas_rdma_g.cfg.dqplb && n / p->stripe + 2 < GAS_RDMA_MBOX_SLOTS / 2)
        return dqplb_put_signal(p, off, src, n, sig_off, value, sop, comp);
    /* Without DQPLB: the payload completes, then the signal is written. */
    st = rc_xfer(p, 1, off, (char *)src, n, NULL, "put_signal");
    if (st == GAS_INPROGRESS)
        st = rc_drain(p, "put_signal");
    if (st != GAS_OK && st != GAS_INPROGRESS && st != GAS_ERR_PEER && st != GAS_ERR_BOUNDS)
        return st;
    if (atomic_load(&p->state) == RC_FALLBACK) {
        /* The payload may not have landed and no signal was sent: doing it
         * all again over udp is safe (the failure is still raised by quiet). */
        p->path = PATH_UDP;
        return gas_udp_ops.put_signal(p->udp, off, src, n, sig_off, value, sop, comp);
    }
    if (st != GAS_OK)
        return st;
    if (!gas_rdma_g.cfg.nic_atomics) { /* signal words take CPU atomics only: via udp */
        p->path = PATH_UDP;
        gas_tl_amo_t a = {.op = sop == GAS_SIGNAL_ADD ? GAS_AMO_ADD : GAS_AMO_SET, .width = 8,
                          .offset = sig_off, .operand = value};
        return gas_udp_ops.amo(p->udp, &a, comp);
    }
    if (sop == GAS_SIGNAL_ADD) {
        uint64_t old;
        return nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, sig_off, value, 0, &old);
    }
    return rc_xfer(p, 1, sig_off, (char *)&value, 8, comp, "put_signal");
}

/* ---- ordering ---- */

gas_status_t gas_rdma_quiet(void)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    gas_status_t st = GAS_OK;
    if (!g->ready)
        return GAS_OK;
    for (int r = 0; r < g->env.nranks; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL)
            continue;
        gas_status_t s = rc_drain(p, "gas_quiet");
        if (st == GAS_OK)
            st = s;
    }
    for (int r = 0; r < g->env.nranks && st == GAS_OK; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL)
            continue;
        char msg[sizeof p->err_msg];
        pthread_mutex_lock(&p->lock);
        gas_status_t err = (gas_status_t)p->err_status;
        snprintf(msg, sizeof msg, "%s", p->err_msg);
        p->err_status = GAS_OK;
        pthread_mutex_unlock(&p->lock);
        if (err != GAS_OK)
            st = gas_rt_error(err, "gas_quiet", "%s", msg);
    }
    return st;
}

gas_status_t gas_rdma_fence(void)
{
    /* The QPs of a peer are not ordered with each other: fence completes them. */
    return gas_rdma_quiet();
}
