/*
 * route.c - which path a peer's operations take, and switching it safely
 * while several threads drive the same peer.
 *
 * A peer's `path` (udp or RC) is what operations are issued on.  An
 * operation holds the peer's route_lock shared from the moment it reads the
 * path until it has issued everything; a switch holds it exclusive, so no
 * operation is half-issued on the old path while the switch drains it.
 * The lock prefers writers, so a stream of operations cannot starve a
 * switch.  A switch:
 *  - udp -> RC (the peer was upgraded): waits until the peer applied all
 *    that went over udp;
 *  - RC -> udp while the peer is up (atomics routed to the target's CPU):
 *    waits for every completion and for the target to apply the DQPLB
 *    signals sent (it reads the target's consumed point);
 *  - RC -> udp after a failure (fallback): waits for every completion (the
 *    QPs are in ERR: what they held is flushed), asks the target over udp
 *    to cut our DQPLB stream and to say how far it applied it, then redoes
 *    over udp, in this order, every request that failed (puts, gets: their
 *    bytes or destinations were kept) and every signal the target did not
 *    apply (from the signal log).  Only then do later operations go over udp,
 *    so nothing is redone after a later operation to the same bytes.
 * An operation that finds the path gone under it (GAS_RDMA_REROUTE) leaves
 * the route and enters it again, which switches; what it had posted is
 * completed or redone by the switch.  Failures found by completions alone
 * (non-blocking puts, a get waited for) are switched by the next operation
 * to the peer, the next quiet, or the next progress call outside a route.
 * A wait under a route (either hold) runs only the transports' progress
 * hooks, never the collective schedules: an operation they issued to the
 * same peer would take the route lock again on this thread.
 */
#include "transport/rdma/rdma.h"
#include "runtime/clock.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/wait.h"
#include "transport/udp/ctrl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

extern const struct gas_tl_ops gas_udp_ops;

/* Route locks this thread holds: a progress call inside a route never switches. */
static _Thread_local int route_depth;

/*
 * This thread now holds a route lock (shared or exclusive) and may wait
 * under it.  The waits' progress then runs only the transports' polling,
 * not the collective schedules: those issue operations, and one to this
 * peer would take the route lock again on this thread (rdlock under our own
 * wrlock fails with EDEADLK, and its unlock then releases our write hold;
 * a switch under our own read hold never gets the write lock).
 */
static void route_held(void)
{
    route_depth++;
    gas_rt_progress_hold();
}

/* The matching release of route_held (before the lock is unlocked). */
static void route_released(void)
{
    gas_rt_progress_unhold();
    route_depth--;
}

/* A thread inside a route never enters one again (route_held keeps issuing
 * progress out of its waits): were it the same peer's, it would deadlock on
 * itself or corrupt the lock.  Say so instead. */
static gas_status_t nested_route(gas_rdma_peer_t *p, const char *call)
{
    return gas_rt_error(GAS_ERR_INTERNAL, call,
                        "an operation to rank %d was issued from inside another operation's "
                        "route (a progress call under the route lock)", p->rank);
}

static int want_path(gas_rdma_peer_t *p, int want_rc)
{
    return want_rc && atomic_load(&p->state) == RC_READY ? PATH_RC : PATH_UDP;
}

/* ---- the consumed point of DQPLB signals (RC up) ---- */

struct consumed_wait {
    gas_rdma_peer_t *p;
    uint32_t target;            /* every notify before it applied */
    struct gas_rdma_op *op;     /* a READ of the consumed word in flight, into *val */
    uint64_t *val;
    int lost;
    const char *call;
};

static int reached(const gas_rdma_peer_t *p, uint32_t target)
{
    return gas_rdma_seq_dist(target, p->tx_consumed) <= gas_rdma_seq_dist(target, p->tx_seq);
}

/* Poll the consumed word with RDMA READs, one in flight at a time. */
static int consumed_cond(void *arg)
{
    struct consumed_wait *w = arg;
    gas_rdma_peer_t *p = w->p;
    gas_rdma_progress();
    pthread_mutex_lock(&p->lock);
    if (w->op && __atomic_load_n(&w->op->done, __ATOMIC_ACQUIRE)) {
        if (w->op->status == GAS_OK)
            p->tx_consumed = (uint32_t)*w->val & GAS_RDMA_SEQ_MASK;
        else
            w->lost = 1;
        free(w->op);
        w->op = NULL;
    }
    int done = w->lost || reached(p, w->target) || atomic_load(&p->state) != RC_READY;
    if (!done && w->op == NULL && (w->op = gas_rdma_op_new(NULL)) != NULL) {
        struct gas_rdma_req r = {.opcode = GAS_VB_WR_RDMA_READ,
                                 .raddr = p->mbox_base + (uint64_t)gas_rdma_g.env.rank * 8,
                                 .rkey = p->mbox_rkey, .dst = w->val, .len = 8, .op = w->op,
                                 .signal = 1};
        gas_status_t st = gas_rdma_post(p, &r, w->call, 1);
        gas_rdma_op_release(p, w->op, st);
        if (st != GAS_OK) {
            free(w->op); /* never posted: nothing refers to it */
            w->op = NULL;
            w->lost = st != GAS_ERR_AGAIN;
            done = w->lost;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return done && w->op == NULL;
}

/* Wait until the target applied every DQPLB signal sent before now (call unlocked). */
static gas_status_t wait_consumed(gas_rdma_peer_t *p, const char *call)
{
    struct consumed_wait w = {.p = p, .call = call};
    pthread_mutex_lock(&p->lock);
    w.target = p->tx_seq;
    int done = p->tx_consumed == w.target;
    pthread_mutex_unlock(&p->lock);
    if (done)
        return GAS_OK;
    if ((w.val = malloc(sizeof *w.val)) == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for an RDMA read");
    char what[80];
    snprintf(what, sizeof what, "rank %d to apply RDMA signals (its progress)", p->rank);
    gas_status_t st = gas_rt_wait(consumed_cond, &w, NULL, call, what);
    if (w.op == NULL)
        free(w.val); /* else a timeout with the read in flight: it may still write there */
    return st;
}

/* ---- redo after a fallback ---- */

static void count_redone(gas_rdma_peer_t *p, unsigned n)
{
    pthread_mutex_lock(&p->lock);
    p->n_redone += n;
    pthread_mutex_unlock(&p->lock);
    __atomic_fetch_add(&gas_rdma_g.n_redone, n, __ATOMIC_RELAXED);
}

/* Issue one udp operation for comp on behalf of an RC request. */
static gas_status_t udp_for(gas_rdma_peer_t *p, gas_tl_comp_t *comp, gas_status_t st)
{
    if (st != GAS_INPROGRESS && comp) {
        if (st < 0)
            gas_tl_comp_fail(comp, st, p->rank);
        atomic_fetch_sub_explicit(&comp->pending, 1, memory_order_release);
    }
    return st;
}

static void redo_requests(gas_rdma_peer_t *p, const char *call)
{
    pthread_mutex_lock(&p->lock);
    struct gas_rdma_redo *e = p->redo;
    p->redo = NULL;
    p->redo_tail = &p->redo;
    pthread_mutex_unlock(&p->lock);
    unsigned n = 0;
    while (e) {
        struct gas_rdma_redo *next = e->next;
        pthread_mutex_lock(&p->lock); /* the operation's poster may still be at its end */
        gas_tl_comp_t *comp = e->op ? e->op->comp : NULL;
        void *dst = e->dst;   /* NULL once its caller gave up on it (gas_rdma_forget) */
        if (comp)
            atomic_fetch_add_explicit(&comp->pending, 1, memory_order_relaxed);
        atomic_fetch_add(&p->redoing, 1);   /* a forget now waits until it is issued */
        pthread_mutex_unlock(&p->lock);
        gas_status_t st = GAS_OK;
        if (e->kind == REDO_PUT)
            st = gas_udp_ops.put(p->udp, e->off, e->data, e->len, comp, call);
        else if (dst)
            st = gas_udp_ops.get(p->udp, dst, e->off, e->len, comp, call);
        udp_for(p, comp, st);
        atomic_fetch_sub(&p->redoing, 1);
        pthread_mutex_lock(&p->lock);
        if (st < 0 && comp == NULL && p->err_status == GAS_OK) {
            p->err_status = st;
            snprintf(p->err_msg, sizeof p->err_msg,
                     "a put to rank %d that failed over RC could not be redone over udp (%s)",
                     p->rank, gas_strerror(st));
        }
        gas_rdma_op_release(p, e->op, GAS_OK);
        pthread_mutex_unlock(&p->lock);
        free(e);
        e = next;
        n++;
    }
    if (n) {
        count_redone(p, n);
        gas_log_info("rdma", "rank %d: %u requests that failed over RC redone over udp", p->rank, n);
    }
}

static int cut_answered(void *arg)
{
    gas_rdma_peer_t *p = arg;
    return atomic_load(&p->cut_done) || gas_udp_peer_dead(p->rank);
}

/* Redo the signals the target did not apply, in order (after the requests).
 * A peer that does not answer the cut gets none redone (quiet reports it). */
static gas_status_t redo_signals(gas_rdma_peer_t *p, const char *call)
{
    gas_status_t st = GAS_OK;
    if (p->qps_up) {
        atomic_store(&p->cut_done, 0);
        if ((st = gas_rdma_send_cut(p)) == GAS_OK) {
            char what[64];
            snprintf(what, sizeof what, "rank %d to cut its RDMA signals", p->rank);
            st = gas_rt_wait(cut_answered, p, NULL, call, what);
        }
        if (st == GAS_OK && !atomic_load(&p->cut_done))
            st = GAS_ERR_PEER;
    }
    pthread_mutex_lock(&p->lock);
    uint32_t from = atomic_load(&p->cut_done) ? p->cut_next : p->tx_seq, end = p->tx_seq;
    struct gas_rdma_sig todo[GAS_RDMA_MBOX_SLOTS];
    unsigned n = 0;
    for (uint32_t s = from; s != end && n < GAS_RDMA_MBOX_SLOTS; s = (s + 1) & GAS_RDMA_SEQ_MASK) {
        struct gas_rdma_sig *e = &p->sig_log[s % GAS_RDMA_MBOX_SLOTS];
        if (e->valid && e->seq == s)
            todo[n++] = *e;
    }
    for (unsigned i = 0; i < GAS_RDMA_MBOX_SLOTS; i++)
        p->sig_log[i].valid = 0;
    p->tx_consumed = p->tx_seq;
    if (st != GAS_OK && p->err_status == GAS_OK) {
        /* the peer is unreachable over udp too: udp reports that; quiet says this */
        p->err_status = st;
        snprintf(p->err_msg, sizeof p->err_msg,
                 "rank %d did not answer the RC cut: signals of puts before the failure may be lost",
                 p->rank);
    }
    pthread_mutex_unlock(&p->lock);
    st = GAS_OK;
    for (unsigned i = 0; i < n && st == GAS_OK; i++) {
        gas_tl_amo_t a = {.op = todo[i].op == GAS_SIGNAL_ADD ? GAS_AMO_ADD : GAS_AMO_SET,
                          .width = 8, .offset = todo[i].off, .operand = todo[i].value};
        gas_status_t s = gas_udp_ops.amo(p->udp, &a, NULL, call);
        if (s < 0)
            st = s;
    }
    if (n) {
        count_redone(p, n);
        gas_log_info("rdma", "rank %d: %u signals redone over udp", p->rank, n);
    }
    return st;
}

/* ---- switching ---- */

/* RC -> udp (route held exclusive). */
static gas_status_t rc_to_udp(gas_rdma_peer_t *p, const char *call)
{
    gas_status_t st;
    for (;;) {
        if ((st = gas_rdma_drain_all(p, call)) != GAS_OK)
            return st;
        if (atomic_load(&p->state) != RC_READY)
            break;
        if ((st = wait_consumed(p, call)) != GAS_OK)
            return st;
        if (atomic_load(&p->state) == RC_READY)
            break;
    }
    if (atomic_load(&p->state) == RC_FALLBACK) {
        redo_requests(p, call);
        st = redo_signals(p, call);
    }
    return st;
}

/* Make the peer's path what operations now want (takes the route exclusive). */
static gas_status_t path_switch(gas_rdma_peer_t *p, int want_rc, const char *call)
{
    gas_status_t st = GAS_OK;
    if (route_depth)
        return nested_route(p, call);
    pthread_rwlock_wrlock(&p->route_lock);
    route_held();
    int want = want_path(p, want_rc), path = atomic_load(&p->path);
    if (path != want) {
        st = path == PATH_RC ? rc_to_udp(p, call) : gas_udp_drain(p->rank, call);
        if (st == GAS_OK)
            atomic_store(&p->path, want);
    }
    route_released();
    pthread_rwlock_unlock(&p->route_lock);
    return st;
}

gas_status_t gas_rdma_route_enter(gas_rdma_peer_t *p, const char *call, int want_rc, int *rc_p)
{
    if (route_depth)
        return nested_route(p, call);
    gas_rdma_maybe_upgrade(p);
    for (;;) {
        if (atomic_load(&p->state) == RC_FAILED)
            return gas_rdma_down_error(p, call);
        pthread_rwlock_rdlock(&p->route_lock);
        int path = atomic_load(&p->path);
        if (path == want_path(p, want_rc)) {
            route_held();
            *rc_p = path == PATH_RC;
            return GAS_OK;
        }
        pthread_rwlock_unlock(&p->route_lock);
        gas_status_t st = path_switch(p, want_rc, call);
        if (st != GAS_OK)
            return st;
    }
}

void gas_rdma_route_leave(gas_rdma_peer_t *p)
{
    route_released();
    pthread_rwlock_unlock(&p->route_lock);
}

void gas_rdma_switch_due(void)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    if (route_depth || !atomic_exchange(&g->switch_due, 0))
        return;
    for (int r = 0; r < g->env.nranks; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL || atomic_load(&p->state) != RC_FALLBACK || atomic_load(&p->path) != PATH_RC)
            continue;
        if (pthread_rwlock_trywrlock(&p->route_lock) != 0) {
            atomic_store(&g->switch_due, 1); /* in use: later */
            continue;
        }
        route_held();
        if (atomic_load(&p->path) == PATH_RC && rc_to_udp(p, "progress") == GAS_OK)
            atomic_store(&p->path, PATH_UDP);
        route_released();
        pthread_rwlock_unlock(&p->route_lock);
    }
}

/* ---- ordering ---- */

gas_status_t gas_rdma_quiet_all(int fin, const char *call, gas_tl_report_t *rep)
{
    struct gas_rdma_state *g = &gas_rdma_g;
    gas_status_t st = GAS_OK;
    if (!g->ready)
        return GAS_OK;
    for (int r = 0; r < g->env.nranks; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL)
            continue;
        gas_status_t s = gas_rdma_drain_posted(p, call);
        /* The signals sent are applied too (at finalize the target may be gone). */
        if (s == GAS_OK && !fin && atomic_load(&p->state) == RC_READY)
            s = wait_consumed(p, call);
        if (st == GAS_OK)
            st = s;
    }
    for (int r = 0; r < g->env.nranks && !fin; r++) {
        gas_rdma_peer_t *p = atomic_load(&g->peers[r]);
        if (p == NULL)
            continue;
        if (atomic_load(&p->state) == RC_FALLBACK && atomic_load(&p->path) == PATH_RC) {
            gas_status_t s = path_switch(p, 0, call);
            if (st == GAS_OK)
                st = s;
        }
        if (st == GAS_OK)
            st = gas_tl_take_stored(&p->lock, &p->err_status, p->err_msg, call, rep);
    }
    return st;
}

gas_status_t gas_rdma_quiet(const char *call, gas_tl_report_t *rep)
{
    return gas_rdma_quiet_all(0, call, rep);
}

gas_status_t gas_rdma_fence(void)
{
    /* The QPs of a peer are not ordered with each other: fence completes them. */
    return gas_rdma_quiet_all(0, "gas_fence", NULL);
}
