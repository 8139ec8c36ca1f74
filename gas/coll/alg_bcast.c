/*
 * alg_bcast.c - barrier and broadcast algorithms (schedule builders).
 *
 *  dissemination        ceil(log2 n) rounds; in round k member i sends an
 *                       empty message to i + 2^k and waits for one from i - 2^k
 *  binomial             broadcast down a binomial tree rooted at root:
 *                       ceil(log2 n) steps, the whole message per step
 *  scatter_allgather    (van de Geijn) the message cut into n blocks,
 *                       scattered down the binomial tree, then a ring
 *                       allgather: ~2x the message per rank however large n
 *
 * Member indices are relative to the root (vr = (i - root) mod n) for the
 * tree algorithms; every algorithm handles any n.
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))
#define REL(g, a, v) PEER((g), ((v) + (a)->root) % (g)->n)   /* relative index -> team rank */

gas_status_t gas_co_barrier_dissemination(struct gas_co_sched *s, const struct gas_co_grp *g,
                                          const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    s->quiet_first = 1;
    for (int dist = 1; dist < n; dist <<= 1) {
        gas_co_send(s, PEER(g, (me + dist) % n), NULL, 0);
        gas_co_recv(s, PEER(g, (me - dist % n + n) % n), NULL, 0);
        gas_co_round(s);
    }
    return GAS_OK;
}

gas_status_t gas_co_bcast_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n;
    size_t len = a->count * a->es;
    int mask = gas_co_low_bit(vr, n);
    if (vr != 0) {
        gas_co_recv(s, REL(g, a, vr - mask), a->dst, len);
        gas_co_round(s);
    }
    for (int m = mask >> 1; m > 0; m >>= 1)
        if (vr + m < n)
            gas_co_send(s, REL(g, a, vr + m), a->dst, len);
    gas_co_round(s);
    return GAS_OK;
}

gas_status_t gas_co_bcast_scatter_allgather(struct gas_co_sched *s, const struct gas_co_grp *g,
                                            const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n;
    size_t es = a->es;
    char *buf = a->dst;
#define LO(j) (gas_co_blk_lo(a->count, n, (j)) * es)
    /* scatter: member vr gets blocks [vr, vr + subtree) from its parent */
    int mask = gas_co_low_bit(vr, n);
    if (vr != 0) {
        int sub = mask < n - vr ? mask : n - vr;
        gas_co_recv(s, REL(g, a, vr - mask), buf + LO(vr), LO(vr + sub) - LO(vr));
        gas_co_round(s);
    }
    for (int m = mask >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        int c = m < n - vr - m ? m : n - vr - m;
        gas_co_send(s, REL(g, a, vr + m), buf + LO(vr + m), LO(vr + m + c) - LO(vr + m));
    }
    gas_co_round(s);
    /* ring allgather of the blocks, in relative order */
    int next = REL(g, a, (vr + 1) % n), prev = REL(g, a, (vr - 1 + n) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = (vr - k + n) % n, rb = (vr - k - 1 + n) % n;
        gas_co_send(s, next, buf + LO(sb), LO(sb + 1) - LO(sb));
        gas_co_recv(s, prev, buf + LO(rb), LO(rb + 1) - LO(rb));
        gas_co_round(s);
    }
#undef LO
    return GAS_OK;
}

/* ------------------------------------------------------------------------ */
/* gather and scatter                                                        */
/* ------------------------------------------------------------------------ */

/*
 *  binomial   up (gather) or down (scatter) a binomial tree: log2 n steps,
 *             subtrees' blocks travel together (a temporary buffer in
 *             relative order on inner members and at a root other than 0)
 *  linear     the root exchanges with every member directly, all at once
 */
/* Blocks of members in relative order <-> team order: the two copies of a rotation by root. */
static void rotate(struct gas_co_sched *s, char *dst, const char *src, int n, int root,
                   size_t blk, int to_team_order)
{
    size_t head = (size_t)(n - root) * blk, rest = (size_t)root * blk;
    if (to_team_order) {
        gas_co_copy(s, dst + rest, src, head);
        gas_co_copy(s, dst, src + head, rest);
    } else {
        gas_co_copy(s, dst, src + rest, head);
        gas_co_copy(s, dst + head, src, rest);
    }
}

gas_status_t gas_co_gather_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                    const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n, mask;
    size_t blk = a->count * a->es;
    int sub = gas_co_subtree(vr, n, &mask);
    char *buf;
    if (sub == 1)
        buf = (char *)a->src;
    else if (vr == 0 && a->root == 0)
        buf = a->dst;
    else if ((buf = gas_co_tmp(s, (size_t)sub * blk)) == NULL)
        return s->status;
    gas_co_copy(s, buf, a->src, blk);
    for (int m = 1; m < mask && vr + m < n; m <<= 1) {
        int c = m < n - vr - m ? m : n - vr - m;
        gas_co_recv(s, REL(g, a, vr + m), buf + (size_t)m * blk, (size_t)c * blk);
    }
    gas_co_round(s);
    if (vr != 0) {
        gas_co_send(s, REL(g, a, vr - mask), buf, (size_t)sub * blk);
        gas_co_round(s);
    } else if (buf != a->dst) {
        rotate(s, a->dst, buf, n, a->root, blk, 1);
    }
    return GAS_OK;
}

gas_status_t gas_co_gather_linear(struct gas_co_sched *s, const struct gas_co_grp *g,
                                  const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t blk = a->count * a->es;
    if (me != a->root) {
        gas_co_send(s, PEER(g, a->root), a->src, blk);
    } else {
        gas_co_copy(s, a->dst + (size_t)me * blk, a->src, blk);
        for (int i = 0; i < n; i++)
            if (i != me)
                gas_co_recv(s, PEER(g, i), a->dst + (size_t)i * blk, blk);
    }
    gas_co_round(s);
    return GAS_OK;
}

gas_status_t gas_co_scatter_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                     const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n, mask;
    size_t blk = a->count * a->es;
    int sub = gas_co_subtree(vr, n, &mask);
    const char *buf;
    if (vr == 0) {
        if (a->root == 0) {
            buf = a->src;
        } else {
            char *t = gas_co_tmp(s, (size_t)n * blk);
            if (t == NULL)
                return s->status;
            rotate(s, t, a->src, n, a->root, blk, 0);
            buf = t;
        }
    } else {
        /* a leaf receives into dst, which may be NULL when count is 0 */
        char *t = sub == 1 ? a->dst : gas_co_tmp(s, (size_t)sub * blk);
        if (sub != 1 && t == NULL)
            return s->status;
        gas_co_recv(s, REL(g, a, vr - mask), t, (size_t)sub * blk);
        gas_co_round(s);
        buf = t;
    }
    for (int m = mask >> 1; m > 0; m >>= 1) {
        if (vr + m >= n)
            continue;
        int c = m < n - vr - m ? m : n - vr - m;
        gas_co_send(s, REL(g, a, vr + m), buf + (size_t)m * blk, (size_t)c * blk);
    }
    gas_co_round(s);
    gas_co_copy(s, a->dst, buf, blk);
    return GAS_OK;
}

gas_status_t gas_co_scatter_linear(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t blk = a->count * a->es;
    if (me != a->root) {
        gas_co_recv(s, PEER(g, a->root), a->dst, blk);
    } else {
        for (int k = 1; k < n; k++) {
            int i = (me + k) % n;
            gas_co_send(s, PEER(g, i), a->src + (size_t)i * blk, blk);
        }
        gas_co_round(s);
        gas_co_copy(s, a->dst, a->src + (size_t)me * blk, blk);
    }
    gas_co_round(s);
    return GAS_OK;
}
