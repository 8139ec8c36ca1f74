/*
 * post.c - posting work requests and what comes back on the send CQ.
 *
 * A transfer is cut into stripe-sized work requests spread round-robin over
 * the peer's QPs, each QP holding at most qp_max outstanding and the peer at
 * most peer_max.  Every write goes through the QP's registered staging slot
 * of the request (inline ones too: the slot keeps the bytes until the
 * request completes, so an RC failure can redo it over udp), and reads land
 * there (one copy; the caller's buffers need no registration).  Signalling
 * is selective: a request asks for a completion when an operation waits for
 * it, every signal_every requests, and when its QP or peer reaches the
 * limit; a signalled completion completes every earlier request of its QP
 * (RC executes them in order).  A drain posts a zero-length signalled
 * "marker" where a QP ends unsignalled.
 *
 * A completion in error is logged once naming the peer, the operation, the
 * QP and the status; the peer's QPs go to ERR (what they hold is flushed)
 * and the peer falls back (or fails, GAS_RDMA_FALLBACK=n).  Each request
 * that failed is then handed to the redo list by its kind (route.c redoes
 * the list over udp) or fails its operation.
 */
#include "transport/rdma/rdma.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER_BIT (1ull << 63)
#define POLL_BATCH 32 /* completions taken per poll_cq (gas_rdma_drain_cq) */

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

struct gas_rdma_op *gas_rdma_op_new(gas_tl_comp_t *comp)
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
    } else if (op->orphan) {
        free(op);
    } else {
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE); /* a synchronous waiter frees it */
    }
}

void gas_rdma_op_release(gas_rdma_peer_t *p, struct gas_rdma_op *op, int status)
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

/*
 * What a completion in error means to the caller: the path to the peer
 * failed (GAS_ERR_PEER), whatever the status.  A remote access error too:
 * the origin checked the address against the target's segment and arrays
 * before posting, and one registration covers the whole segment, so it is
 * the target's registration or QP that failed, not the caller's address
 * (GAS_ERR_BOUNDS would say "outside any allocation" of a live one).
 */
static gas_status_t wc_to_status(enum gas_vb_wc_status s)
{
    (void)s;
    return GAS_ERR_PEER;
}

extern const struct gas_tl_ops gas_udp_ops;

/* One reference to op with its result destination *dst: dropped when op is comp's (or orphaned). */
static void forget_one(struct gas_rdma_op *op, gas_tl_comp_t *comp, void **dst)
{
    if (op == NULL || (op->comp != comp && !op->orphan))
        return;
    *dst = NULL;
    op->comp = NULL;
    op->orphan = 1;
}

/*
 * Forget comp's operations to p (peer locked): their results are dropped and
 * they end unseen.  An operation may hold several work requests: once one
 * of them made it an orphan, the others are dropped as such.
 */
static void forget_on(gas_rdma_peer_t *p, gas_tl_comp_t *comp)
{
    for (unsigned i = 0; i < p->nqp; i++)
        for (unsigned k = 0; p->qp[i].wrs && k < p->qp_max; k++)
            forget_one(p->qp[i].wrs[k].op, comp, &p->qp[i].wrs[k].dst);
    /* (every reference to an operation of comp is a work request or a redo entry) */
    for (struct gas_rdma_redo *e = p->redo; e; e = e->next)
        forget_one(e->op, comp, &e->dst);
}

void gas_rdma_forget(gas_tl_comp_t *comp)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    for (int r = 0; g->peers && r < g->env.nranks; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL)
            continue;
        pthread_mutex_lock(&p->lock);
        forget_on(p, comp);
        pthread_mutex_unlock(&p->lock);
        /* An entry redo_requests took before this is being issued over udp
         * with comp: once it is issued, udp's forget below reaches it. */
        while (atomic_load(&p->redoing))
            sched_yield();
    }
    gas_udp_ops.forget(comp);
}

/* Keep a failed request for its redo over udp (peer locked); 0, or -1 without memory. */
static int redo_keep(gas_rdma_peer_t *p, const struct gas_rdma_wr *w, const char *bytes)
{
    size_t extra = w->redo == REDO_PUT ? w->len : 0;
    struct gas_rdma_redo *e = malloc(sizeof *e + extra);
    if (e == NULL)
        return -1;
    *e = (struct gas_rdma_redo){.op = w->op, .dst = w->dst, .off = w->roff, .len = w->len,
                                .kind = w->redo};
    if (extra)
        memcpy(e->data, bytes, extra);
    *p->redo_tail = e;
    p->redo_tail = &e->next;
    return 0;
}

/* A work request completed (peer locked). */
static void wr_done(gas_rdma_peer_t *p, struct gas_rdma_qp *q, uint32_t index, int status)
{
    uint32_t slot = index % p->qp_max;
    struct gas_rdma_wr *w = &q->wrs[slot];
    const char *staged = q->stage + (size_t)slot * p->stripe;
    if (status == GAS_OK) {
        if (w->dst)
            memcpy(w->dst, staged, w->len);
        gas_rdma_op_release(p, w->op, GAS_OK);
    } else if (atomic_load(&p->state) == RC_FALLBACK &&
               (w->redo == REDO_PUT || w->redo == REDO_GET) && redo_keep(p, w, staged) == 0) {
        /* its operation completes when it is redone (route.c) */
    } else if (w->redo == REDO_SIG && atomic_load(&p->state) == RC_FALLBACK) {
        gas_rdma_op_release(p, w->op, GAS_OK); /* the signal log redoes the signal */
    } else {
        if (w->op == NULL || atomic_load(&p->state) == RC_FAILED) {
            char msg[120];
            snprintf(msg, sizeof msg, "an RDMA %s to rank %d failed and could not be redone",
                     op_name(w->opcode), p->rank);
            peer_note_error(p, (gas_status_t)status, p->err_msg[0] ? p->err_msg : msg);
        }
        gas_rdma_op_release(p, w->op, status);
    }
    *w = (struct gas_rdma_wr){0};
    __atomic_store_n(&q->done, q->done + 1, __ATOMIC_RELEASE);
    if (atomic_fetch_sub(&p->outstanding, 1) == 1)
        __atomic_store_n(&p->plain_writes, 0, __ATOMIC_RELAXED);
}

/* ---- failures ---- */

void gas_rdma_peer_fail(gas_rdma_peer_t *p, const char *what, uint32_t qpn, enum gas_vb_wc_status s)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (atomic_load(&p->state) != RC_READY)
        return;
    if (g->finalizing) { /* the peer may have closed its QPs after the last barrier */
        atomic_store(&p->state, RC_FAILED);
        gas_log_info("rdma", "finalize: RDMA %s to rank %d: %s", what, p->rank,
                     gas_vb_wc_status_str(s));
        return;
    }
    int fb = g->cfg.fallback;
    atomic_store(&p->state, fb ? RC_FALLBACK : RC_FAILED);
    atomic_fetch_sub(&g->upgraded, 1);
    char msg[200];
    snprintf(msg, sizeof msg, "RDMA %s to rank %d failed on QP %u: %s; %s", what, p->rank, qpn,
             gas_vb_wc_status_str(s),
             !fb ? "GAS_RDMA_FALLBACK=n: every operation to it fails"
             : strncmp(what, "ATOMIC", 6) == 0
                 ? "an atomic is not redone (it may have taken effect): its call fails; later "
                   "operations go over udp"
                 : "what failed is redone and later operations go over udp");
    if (fb) {
        gas_log_error("rdma", "%s", msg);
        atomic_store(&g->switch_due, 1);
    } else {
        /* The job fails cleanly: at once with GAS_ERRORS=abort (a wait for a
         * signal this path would have carried could not end otherwise), else
         * from the next operation to the peer or quiet. */
        peer_note_error(p, wc_to_status(s), msg);
        gas_rt_error(wc_to_status(s), "rdma", "%s", msg);
    }
    /* The other QPs stop too: what they hold is flushed. */
    gas_vb_qp_attr_t err = {.qp_state = GAS_VB_QPS_ERR};
    for (unsigned i = 0; i < p->nqp; i++)
        g->vb->modify_qp(p->qp[i].qp, &err, GAS_VB_QP_STATE);
}

gas_status_t gas_rdma_down_error(gas_rdma_peer_t *p, const char *call)
{
    return gas_rt_error(p->err_status ? (gas_status_t)p->err_status : GAS_ERR_PEER, call,
                        "rank %d: its RDMA path failed (%s)", p->rank,
                        p->err_msg[0] ? p->err_msg : "queue pair in error");
}

/* ---- send completions ---- */

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
        if (wc->status != GAS_VB_WC_SUCCESS && wc->status != GAS_VB_WC_FLUSH_ERR) {
            p->n_err++;
            __atomic_fetch_add(&g->n_err, 1, __ATOMIC_RELAXED);
            gas_rdma_peer_fail(p, "WRITE (completion marker)", q->qpn, wc->status);
        }
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
                gas_rdma_peer_fail(p, op_name(oc), q->qpn, wc->status);
            }
            wr_done(p, q, index, st);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

int gas_rdma_drain_cq(struct gas_vb_cq *cq, void (*fn)(const gas_vb_wc_t *wc))
{
    gas_vb_wc_t wc[POLL_BATCH];
    int n, total = 0;
    while ((n = gas_rdma_g.vb->poll_cq(cq, POLL_BATCH, wc)) > 0) {
        for (int i = 0; i < n; i++)
            fn(&wc[i]);
        total += n;
    }
    return total;
}

int gas_rdma_poll_send(void)
{
    return gas_rdma_drain_cq(gas_rdma_g.scq, send_wc);
}

/* ---- posting ---- */

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
    uint32_t done = __atomic_load_n(&a->q->done, __ATOMIC_ACQUIRE);
    return posted - done < a->p->qp_max && atomic_load(&a->p->outstanding) < g->cfg.peer_max;
}

/* Not on RC: route the operation again (fallback), or fail it. */
static gas_status_t not_ready(gas_rdma_peer_t *p, const char *call)
{
    int s = atomic_load(&p->state);
    return s == RC_FAILED ? gas_rdma_down_error(p, call) : GAS_RDMA_REROUTE;
}

gas_status_t gas_rdma_post(gas_rdma_peer_t *p, const struct gas_rdma_req *r, const char *call,
                           int nowait)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    unsigned qi = p->next_qp++ % p->nqp;
    struct gas_rdma_qp *q = &p->qp[qi];
    struct room_arg ra = {p, q};
    while (!room_ready(&ra)) {
        if (nowait)
            return GAS_ERR_AGAIN;
        char what[64];
        snprintf(what, sizeof what, "RDMA completions from rank %d", p->rank);
        pthread_mutex_unlock(&p->lock);
        gas_status_t st = gas_rt_wait(room_ready, &ra, NULL, call, what);
        pthread_mutex_lock(&p->lock);
        if (st != GAS_OK)
            return st;
    }
    if (atomic_load(&p->state) != RC_READY)
        return not_ready(p, call);
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
        memcpy(stage, r->src, r->len);
        if (r->len <= g->cfg.inline_max)
            wr.flags |= GAS_VB_SEND_INLINE;
    }
    uint32_t out = q->posted - q->done + 1;
    if (r->signal || q->since_signal + 1 >= g->cfg.signal_every || out >= p->qp_max ||
        atomic_load(&p->outstanding) + 1 >= g->cfg.peer_max)
        wr.flags |= GAS_VB_SEND_SIGNALED;
    q->wrs[slot] = (struct gas_rdma_wr){.op = r->op, .dst = r->dst, .roff = r->roff,
                                        .len = r->opcode >= GAS_VB_WR_ATOMIC_FETCH_ADD ? 8 : r->len,
                                        .opcode = (uint8_t)r->opcode, .redo = r->redo};
    if (r->op)
        r->op->remaining++;
    atomic_fetch_add(&p->outstanding, 1);
    __atomic_store_n(&q->posted, q->posted + 1, __ATOMIC_RELEASE);
    int rc = g->vb->post_send(q->qp, &wr);
    if (rc != 0) {
        __atomic_store_n(&q->posted, q->posted - 1, __ATOMIC_RELEASE);
        atomic_fetch_sub(&p->outstanding, 1);
        if (r->op)
            r->op->remaining--;
        q->wrs[slot] = (struct gas_rdma_wr){0};
        gas_rdma_peer_fail(p, op_name(r->opcode), q->qpn, GAS_VB_WC_OTHER_ERR);
        return not_ready(p, call);
    }
    q->since_signal = wr.flags & GAS_VB_SEND_SIGNALED ? 0 : q->since_signal + 1;
    if (r->opcode == GAS_VB_WR_RDMA_WRITE || r->opcode == GAS_VB_WR_RDMA_WRITE_WITH_IMM)
        __atomic_store_n(&p->plain_writes, 1, __ATOMIC_RELAXED);
    p->n_wr++;
    p->n_bytes += r->len;
    __atomic_fetch_add(&g->n_wr, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&g->n_bytes, r->len, __ATOMIC_RELAXED);
    return GAS_OK;
}

/* ---- drains ---- */

/* Make every QP of the peer report its tail: a zero-length signalled marker
 * where the last request was unsignalled or the QP failed (peer locked).
 * One marker per QP at a time: a drain's condition calls this again, so a
 * tail posted after a marker (another thread) gets its own marker later. */
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

struct snap {
    gas_rdma_peer_t *p;
    unsigned n;
    uint32_t posted[GAS_RDMA_MAX_QPS];
};

static void markers_again(gas_rdma_peer_t *p)
{
    pthread_mutex_lock(&p->lock);
    post_markers(p);
    pthread_mutex_unlock(&p->lock);
}

static int snap_done(void *arg)
{
    const struct snap *s = arg;
    gas_rdma_progress();
    for (unsigned i = 0; i < s->n; i++)
        if ((int32_t)(__atomic_load_n(&s->p->qp[i].done, __ATOMIC_ACQUIRE) - s->posted[i]) < 0) {
            markers_again(s->p);
            return 0;
        }
    return 1;
}

gas_status_t gas_rdma_drain_posted(gas_rdma_peer_t *p, const char *call)
{
    if (atomic_load(&p->outstanding) == 0)
        return GAS_OK;
    struct snap s = {.p = p};
    pthread_mutex_lock(&p->lock);
    post_markers(p);
    s.n = p->nqp;
    for (unsigned i = 0; i < s.n; i++)
        s.posted[i] = p->qp[i].posted;
    pthread_mutex_unlock(&p->lock);
    char what[64];
    snprintf(what, sizeof what, "RDMA completions from rank %d", p->rank);
    return gas_rt_wait(snap_done, &s, NULL, call, what);
}

static int drained(void *arg)
{
    gas_rdma_progress();
    if (atomic_load(&((gas_rdma_peer_t *)arg)->outstanding) == 0)
        return 1;
    markers_again(arg);
    return 0;
}

gas_status_t gas_rdma_drain_all(gas_rdma_peer_t *p, const char *call)
{
    if (atomic_load(&p->outstanding) == 0)
        return GAS_OK;
    pthread_mutex_lock(&p->lock);
    post_markers(p);
    pthread_mutex_unlock(&p->lock);
    char what[64];
    snprintf(what, sizeof what, "RDMA completions from rank %d", p->rank);
    return gas_rt_wait(drained, p, NULL, call, what);
}

static int op_done(void *arg)
{
    gas_rdma_progress();
    return __atomic_load_n(&((struct gas_rdma_op *)arg)->done, __ATOMIC_ACQUIRE);
}

gas_status_t gas_rdma_op_wait(gas_rdma_peer_t *p, struct gas_rdma_op *op, const char *call)
{
    char what[64];
    snprintf(what, sizeof what, "an RDMA completion from rank %d", p->rank);
    gas_status_t st = gas_rt_wait(op_done, op, NULL, call, what);
    if (st != GAS_OK)
        return st; /* a timeout: the completion may still come and touch op: leak it */
    st = (gas_status_t)op->status; /* not raised: the caller knows what failed */
    free(op);
    return st;
}
