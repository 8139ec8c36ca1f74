/*
 * data.c - put/get/atomics/signalled puts: over RC when the peer is up,
 * over its udp route otherwise (route.c decides and switches).
 *
 * Each operation enters the peer's route, issues what it can on that path
 * and leaves.  If the peer leaves RC under it (GAS_RDMA_REROUTE), it enters
 * again and issues the rest over udp after the switch redid what had
 * failed.  The caller's comp counts the operation once: an RC part holds
 * that count through its gas_rdma_op; a udp part (the rest after a reroute)
 * adds one of its own.
 *
 * Ordering: QPs of one peer are not ordered with each other, so a get, an
 * atomic or a signalled put waits first for the peer's plain writes posted
 * so far.  Signalled puts use DQPLB (imm.h): the pieces and a signal
 * descriptor are WRITE_WITH_IMM with sequence numbers; the target applies
 * the signal once every earlier piece arrived (recv.c).  Without DQPLB the
 * initiator waits for the payload's completion and then writes the signal
 * with the NIC (or the target's CPU applies it, GAS_RDMA_ATOMICS=cpu).
 */
#include "transport/rdma/rdma.h"
#include "runtime/error.h"
#include "transport/local.h"

#include <stdlib.h>
#include <string.h>

extern const struct gas_tl_ops gas_udp_ops;

/* The udp part of an operation whose RC part (op) holds the caller's count. */
static gas_status_t udp_part(gas_rdma_peer_t *p, struct gas_rdma_op *op, gas_status_t st)
{
    if (op && op->comp && st != GAS_INPROGRESS) {
        if (st < 0)
            gas_tl_comp_fail(op->comp, st, p->rank);
        atomic_fetch_sub_explicit(&op->comp->pending, 1, memory_order_release);
    }
    return st;
}

static void udp_part_begin(struct gas_rdma_op *op)
{
    if (op && op->comp)
        atomic_fetch_add_explicit(&op->comp->pending, 1, memory_order_relaxed);
}

/*
 * End an operation: drop the poster's reference of its RC part, which holds
 * the caller's count.  An error is returned as such only when nothing of
 * the RC part is left in flight (the caller then handles comp itself);
 * otherwise it goes into comp and the caller waits for it.
 */
static gas_status_t op_end(gas_rdma_peer_t *p, struct gas_rdma_op *op, gas_status_t st)
{
    if (op == NULL)
        return st;
    pthread_mutex_lock(&p->lock);
    if (st < 0 && op->remaining > 1) {
        gas_tl_comp_fail(op->comp, st, p->rank);
        st = GAS_INPROGRESS;
    } else if (st < 0) {
        op->comp = NULL;
    }
    gas_rdma_op_release(p, op, GAS_OK);
    pthread_mutex_unlock(&p->lock);
    return st < 0 ? st : GAS_INPROGRESS;
}

/* Post a transfer in stripes (route held); *done_p: bytes posted.  Signalled
 * when an operation waits for it, or when asked (signal). */
static gas_status_t rc_xfer(gas_rdma_peer_t *p, int write, uint64_t off, char *buf, size_t n,
                            struct gas_rdma_op *op, int signal, const char *call, size_t *done_p)
{
    gas_status_t st = GAS_OK;
    size_t k = 0;
    pthread_mutex_lock(&p->lock);
    while (k < n && st == GAS_OK) {
        uint32_t len = (uint32_t)(n - k < p->stripe ? n - k : p->stripe);
        struct gas_rdma_req r = {.opcode = write ? GAS_VB_WR_RDMA_WRITE : GAS_VB_WR_RDMA_READ,
                                 .raddr = p->seg_base + off + k, .rkey = p->seg_rkey,
                                 .src = write ? buf + k : NULL, .dst = write ? NULL : buf + k,
                                 .len = len, .op = op, .signal = signal || op != NULL,
                                 .redo = write ? REDO_PUT : REDO_GET, .roff = off + k};
        if ((st = gas_rdma_post(p, &r, call, 0)) == GAS_OK)
            k += len;
    }
    pthread_mutex_unlock(&p->lock);
    *done_p = k;
    return st;
}

/* Earlier writes on other QPs must land before what follows (route held). */
static gas_status_t after_writes(gas_rdma_peer_t *p, const char *call)
{
    return __atomic_load_n(&p->plain_writes, __ATOMIC_RELAXED) ? gas_rdma_drain_posted(p, call)
                                                               : GAS_OK;
}

/* ---- put and get ---- */

static gas_status_t xfer(gas_rdma_peer_t *p, int write, uint64_t off, char *buf, size_t n,
                         gas_tl_comp_t *comp, const char *call)
{
    struct gas_rdma_op *op = NULL;
    size_t k = 0;
    gas_status_t st;
    for (;;) {
        int rc;
        if ((st = gas_rdma_route_enter(p, call, 1, &rc)) != GAS_OK)
            break;
        if (!rc) {
            udp_part_begin(op);
            gas_tl_comp_t *c = op ? op->comp : comp;
            st = write ? gas_udp_ops.put(p->udp, off + k, buf + k, n - k, c, call)
                       : gas_udp_ops.get(p->udp, buf + k, off + k, n - k, c, call);
            st = udp_part(p, op, st);
            gas_rdma_route_leave(p);
            break;
        }
        if (!write && (st = after_writes(p, call)) != GAS_OK) {
            gas_rdma_route_leave(p);
            break;
        }
        if (comp && op == NULL && (op = gas_rdma_op_new(comp)) == NULL) {
            gas_rdma_route_leave(p);
            return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for rdma operation state");
        }
        size_t done;
        st = rc_xfer(p, write, off + k, buf + k, n - k, op, 0, call, &done);
        gas_rdma_route_leave(p);
        k += done;
        if (st != GAS_RDMA_REROUTE)
            break;
    }
    if (st == GAS_OK)
        st = GAS_INPROGRESS;
    return op_end(p, op, st);
}

gas_status_t gas_rdma_put(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                          gas_tl_comp_t *comp, const char *call)
{
    return xfer((gas_rdma_peer_t *)peer, 1, off, (char *)src, n, comp, call);
}

gas_status_t gas_rdma_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                          gas_tl_comp_t *comp, const char *call)
{
    return xfer((gas_rdma_peer_t *)peer, 0, off, dst, n, comp, call);
}

/* ---- atomics ---- */

/* One NIC atomic on the 64-bit word at off, synchronously; *old its value before.
 * *posted_p: whether it reached the NIC (then it may have run even if it failed).
 * Errors are raised for `call`, the API call it serves. */
static gas_status_t nic_word(gas_rdma_peer_t *p, enum gas_vb_opcode opc, uint64_t off,
                             uint64_t cmp_add, uint64_t swap, uint64_t *old, int *posted_p,
                             const char *call)
{
    struct gas_rdma_op *op = gas_rdma_op_new(NULL);
    if (op == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for rdma operation state");
    pthread_mutex_lock(&p->lock);
    struct gas_rdma_req r = {.opcode = opc, .raddr = p->seg_base + off, .rkey = p->seg_rkey,
                             .dst = old, .len = 8, .cmp_add = cmp_add, .swap = swap, .op = op,
                             .signal = 1};
    gas_status_t st = gas_rdma_post(p, &r, call, 0);
    gas_rdma_op_release(p, op, st);
    pthread_mutex_unlock(&p->lock);
    if (st != GAS_OK) {
        free(op);
        return st;
    }
    *posted_p = 1;
    st = gas_rdma_op_wait(p, op, call);
    if (st == GAS_ERR_PEER)
        st = gas_rt_error(st, call,
                          "rank %d: an RDMA atomic at offset %llu failed (it may or may not have "
                          "been applied: not retried)", p->rank, (unsigned long long)off);
    return st;
}

/*
 * Every atomic to an RC peer runs on its NIC: 64-bit fetch-add and
 * compare-swap natively, every other op and width by a compare-swap loop
 * on the naturally aligned 64-bit word that holds it.  GAS_RDMA_REROUTE
 * only while nothing reached the NIC.
 */
static gas_status_t nic_amo(gas_rdma_peer_t *p, const gas_tl_amo_t *a, uint64_t *result,
                            const char *call)
{
    gas_status_t st;
    int posted = 0;
    if (a->width == 8 && (a->op == GAS_AMO_ADD || a->op == GAS_AMO_FETCH_ADD))
        return nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, a->offset, a->operand, 0, result, &posted,
                        call);
    if (a->width == 8 && a->op == GAS_AMO_CSWAP)
        return nic_word(p, GAS_VB_WR_ATOMIC_CMP_SWP, a->offset, a->compare, a->operand, result,
                        &posted, call);
    uint64_t word = a->offset & ~7ull, cur;
    if ((st = nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, word, 0, 0, &cur, &posted, call)) != GAS_OK)
        return st;
    for (;;) {
        uint64_t next = cur, seen;
        uint64_t old = gas_tl_amo_apply((char *)&next + (a->offset - word), a->op, a->width,
                                        a->operand, a->compare);
        if (next == cur) { /* nothing to write (a fetch, a failed compare) */
            *result = old;
            return GAS_OK;
        }
        st = nic_word(p, GAS_VB_WR_ATOMIC_CMP_SWP, word, cur, next, &seen, &posted, call);
        if (st == GAS_RDMA_REROUTE) /* the fetch ran, the swap never did: start again */
            return st;
        if (st != GAS_OK)
            return st;
        if (seen == cur) {
            *result = old;
            return GAS_OK;
        }
        cur = seen;
    }
}

gas_status_t gas_rdma_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp,
                          const char *call)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    /* GAS_RDMA_ATOMICS=cpu: the target's CPU applies them (see docs/rdma.md). */
    int want_rc = gas_rdma_g.cfg.nic_atomics;
    for (;;) {
        int rc;
        gas_status_t st = gas_rdma_route_enter(p, call, want_rc, &rc);
        if (st != GAS_OK)
            return st;
        if (!rc) {
            st = gas_udp_ops.amo(p->udp, a, comp, call);
            gas_rdma_route_leave(p);
            return st;
        }
        uint64_t old = 0;
        if ((st = after_writes(p, call)) == GAS_OK)
            st = nic_amo(p, a, &old, call);
        gas_rdma_route_leave(p);
        if (st == GAS_RDMA_REROUTE)
            continue;
        if (st == GAS_OK && a->result && gas_amo_fetches(a->op))
            *a->result = old;
        return st;
    }
}

/* ---- signalled puts ---- */

/* Refresh how far the target consumed our descriptor slots (peer locked). */
static gas_status_t read_consumed(gas_rdma_peer_t *p, const char *call)
{
    uint64_t v = 0;
    struct gas_rdma_op *op = gas_rdma_op_new(NULL);
    if (op == NULL)
        return GAS_ERR_NOMEM;
    struct gas_rdma_req r = {.opcode = GAS_VB_WR_RDMA_READ,
                             .raddr = p->mbox_base + (uint64_t)gas_rdma_g.env.rank * 8,
                             .rkey = p->mbox_rkey, .dst = &v, .len = 8, .op = op, .signal = 1};
    gas_status_t st = gas_rdma_post(p, &r, call, 0);
    gas_rdma_op_release(p, op, st);
    if (st != GAS_OK) {
        free(op);
        return st;
    }
    pthread_mutex_unlock(&p->lock);
    st = gas_rdma_op_wait(p, op, call);
    pthread_mutex_lock(&p->lock);
    if (st == GAS_OK)
        p->tx_consumed = (uint32_t)v & GAS_RDMA_SEQ_MASK;
    else if (st != GAS_ERR_TIMEOUT)
        st = atomic_load(&p->state) == RC_FALLBACK ? GAS_RDMA_REROUTE
                                                    : gas_rdma_down_error(p, call);
    return st;
}

/*
 * Post the descriptor and log the signal (peer locked).  The descriptor
 * also tells the peer how far we applied its own signals to us (bit 31:
 * present), which spares it an RDMA READ of our mailbox in its next quiet.
 */
static gas_status_t post_notify(gas_rdma_peer_t *p, uint64_t sig_off, uint64_t value,
                                gas_signal_op_t sop, struct gas_rdma_op *op, const char *call)
{
    const gas_tl_env_t *e = &gas_rdma_g.env;
    unsigned char d[GAS_RDMA_MBOX_SLOT_LEN] = {0};
    uint32_t sopv = (uint32_t)sop, seq = p->tx_seq, ack = p->rx.next | GAS_RDMA_IMM_NOTIFY;
    memcpy(d, &sig_off, 8);
    memcpy(d + 8, &value, 8);
    memcpy(d + 16, &sopv, 4);
    memcpy(d + 20, &seq, 4);
    if (!p->rx_cut)
        memcpy(d + 24, &ack, 4);
    char *slot = gas_rdma_mbox_slot((char *)(uintptr_t)p->mbox_base, e->nranks, e->rank, seq);
    struct gas_rdma_req r = {.opcode = GAS_VB_WR_RDMA_WRITE_WITH_IMM,
                             .raddr = (uint64_t)(uintptr_t)slot, .rkey = p->mbox_rkey, .src = d,
                             .len = 28, .imm = gas_rdma_imm_encode(seq, 1), .op = op,
                             .signal = 1, .redo = REDO_SIG};
    gas_status_t st = gas_rdma_post(p, &r, call, 0);
    if (st == GAS_OK) {
        p->sig_log[seq % GAS_RDMA_MBOX_SLOTS] = (struct gas_rdma_sig){
            .off = sig_off, .value = value, .seq = seq, .op = (uint8_t)sop, .valid = 1};
        p->tx_seq = (seq + 1) & GAS_RDMA_SEQ_MASK;
    }
    return st;
}

/*
 * Payload pieces from *k_p, then the notify (peer locked, dqplb_lock held).
 * The last piece on each QP is signalled, so no QP is left with an
 * unsignalled tail (a drain then needs no marker; at finalize the target's
 * QPs may be gone).
 */
static gas_status_t dqplb(gas_rdma_peer_t *p, uint64_t off, const char *src, size_t n,
                          size_t *k_p, uint64_t sig_off, uint64_t value, gas_signal_op_t sop,
                          struct gas_rdma_op *op, const char *call)
{
    uint32_t pieces = (uint32_t)((n - *k_p + p->stripe - 1) / p->stripe) + 1, i = 0;
    gas_status_t st = GAS_OK;
    while (st == GAS_OK &&
           gas_rdma_seq_dist(p->tx_consumed, p->tx_seq + pieces) > GAS_RDMA_MBOX_SLOTS)
        st = read_consumed(p, call);
    while (*k_p < n && st == GAS_OK) {
        size_t k = *k_p;
        uint32_t len = (uint32_t)(n - k < p->stripe ? n - k : p->stripe);
        struct gas_rdma_req r = {.opcode = GAS_VB_WR_RDMA_WRITE_WITH_IMM,
                                 .raddr = p->seg_base + off + k, .rkey = p->seg_rkey,
                                 .src = src + k, .len = len,
                                 .imm = gas_rdma_imm_encode(p->tx_seq, 0), .op = op,
                                 .signal = ++i + p->nqp > pieces, .redo = REDO_PUT, .roff = off + k};
        if ((st = gas_rdma_post(p, &r, call, 0)) == GAS_OK) {
            p->tx_seq = (p->tx_seq + 1) & GAS_RDMA_SEQ_MASK;
            *k_p += len;
        }
    }
    return st == GAS_OK ? post_notify(p, sig_off, value, sop, op, call) : st;
}

/*
 * Without DQPLB: the payload completes, then the NIC writes the signal
 * (route held).  GAS_RDMA_REROUTE with *cpu_p set: the payload is done and
 * the signal goes as an atomic over udp (GAS_RDMA_ATOMICS=cpu).
 */
static gas_status_t payload_then_signal(gas_rdma_peer_t *p, uint64_t off, const char *src,
                                        size_t n, size_t *k_p, uint64_t sig_off, uint64_t value,
                                        gas_signal_op_t sop, struct gas_rdma_op *op, int *sig_p,
                                        int *cpu_p, const char *call)
{
    size_t done;
    gas_status_t st = rc_xfer(p, 1, off + *k_p, (char *)src + *k_p, n - *k_p, NULL, 0, call,
                              &done);
    *k_p += done;
    if (st == GAS_OK)
        st = gas_rdma_drain_posted(p, call);
    if (st == GAS_OK && atomic_load(&p->state) != RC_READY)
        st = GAS_RDMA_REROUTE; /* the switch redoes the payload, then the signal follows */
    if (st != GAS_OK)
        return st;
    if (!gas_rdma_g.cfg.nic_atomics) {
        *cpu_p = 1;
        return GAS_RDMA_REROUTE;
    }
    int posted = 0;
    if (sop == GAS_SIGNAL_ADD) {
        uint64_t old;
        st = nic_word(p, GAS_VB_WR_ATOMIC_FETCH_ADD, sig_off, value, 0, &old, &posted, call);
    } else {
        st = rc_xfer(p, 1, sig_off, (char *)&value, 8, op, 1, call, &done);
        posted = done == 8;
    }
    *sig_p = st == GAS_OK || posted;
    return st;
}

gas_status_t gas_rdma_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                 uint64_t sig_off, uint64_t value, gas_signal_op_t sop,
                                 gas_tl_comp_t *comp, const char *call)
{
    gas_rdma_peer_t *p = (gas_rdma_peer_t *)peer;
    const struct gas_rdma_cfg *c = &gas_rdma_g.cfg;
    struct gas_rdma_op *op = NULL;
    size_t k = 0;   /* payload bytes issued */
    int sig = 0;    /* the signal was issued */
    int cpu = 0;    /* only the signal is left, for the target's CPU */
    gas_status_t st;
    for (;;) {
        int rc;
        if ((st = gas_rdma_route_enter(p, call, !cpu, &rc)) != GAS_OK)
            break;
        if (!rc) {
            udp_part_begin(op);
            gas_tl_comp_t *cc = op ? op->comp : comp;
            if (k < n) {
                st = gas_udp_ops.put_signal(p->udp, off + k, (const char *)src + k, n - k,
                                            sig_off, value, sop, cc, call);
            } else {
                gas_tl_amo_t a = {.op = sop == GAS_SIGNAL_ADD ? GAS_AMO_ADD : GAS_AMO_SET,
                                  .width = 8, .offset = sig_off, .operand = value};
                st = gas_udp_ops.amo(p->udp, &a, cc, call);
            }
            st = udp_part(p, op, st);
            gas_rdma_route_leave(p);
            break;
        }
        if ((st = after_writes(p, call)) == GAS_OK && comp && op == NULL &&
            (op = gas_rdma_op_new(comp)) == NULL)
            st = gas_rt_error(GAS_ERR_NOMEM, call, "no memory for rdma operation state");
        if (st == GAS_OK && c->dqplb && n / p->stripe + 2 < GAS_RDMA_MBOX_SLOTS / 2) {
            pthread_mutex_lock(&p->dqplb_lock);
            pthread_mutex_lock(&p->lock);
            st = dqplb(p, off, src, n, &k, sig_off, value, sop, op, call);
            pthread_mutex_unlock(&p->lock);
            pthread_mutex_unlock(&p->dqplb_lock);
            sig = st == GAS_OK;
        } else if (st == GAS_OK) {
            st = payload_then_signal(p, off, src, n, &k, sig_off, value, sop, op, &sig, &cpu, call);
        }
        gas_rdma_route_leave(p);
        if (st != GAS_RDMA_REROUTE || sig)
            break;
    }
    if (st == GAS_RDMA_REROUTE) /* a signal write that failed is redone by the switch */
        st = GAS_OK;
    if (st == GAS_OK)
        st = GAS_INPROGRESS;
    return op_end(p, op, st);
}
