/*
 * alg_allgather.c - allgather and allgatherv algorithms.  Block i (member
 * i's contribution) lives at its final place in dst from the start, so no
 * algorithm needs a temporary buffer; runs of blocks that are adjacent in
 * dst travel as one message.
 *
 *  recursive_doubling   log2 n exchanges, each doubling what a member
 *                       holds (non-powers of two: the fold of alg_reduce.c)
 *  bruck                ceil(log2 n) steps for any n: in step k member i
 *                       sends what it holds to i - 2^k
 *  ring                 n-1 steps, one block to the next member per step
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))

static size_t boff(const struct gas_co_args *a, int i)
{
    return (a->counts ? a->displs[i] : (size_t)i * a->count) * a->es;
}

static size_t blen(const struct gas_co_args *a, int i)
{
    return (a->counts ? a->counts[i] : a->count) * a->es;
}

/* Send (or receive) blocks [first, first + cnt) mod n, adjacent ones merged. */
static void blocks(struct gas_co_sched *s, const struct gas_co_args *a, int n, int peer,
                   int first, int cnt, int recv)
{
    int i = 0;
    while (i < cnt) {
        int b = (first + i) % n;
        size_t off = boff(a, b), len = blen(a, b);
        i++;
        while (i < cnt && (first + i) % n != 0 && boff(a, (first + i) % n) == off + len) {
            len += blen(a, (first + i) % n);
            i++;
        }
        if (recv)
            gas_co_recv(s, peer, a->dst + off, len);
        else
            gas_co_send(s, peer, a->dst + off, len);
    }
}

static void own_block(struct gas_co_sched *s, const struct gas_co_grp *g,
                      const struct gas_co_args *a)
{
    gas_co_copy(s, a->dst + boff(a, g->me), a->src, blen(a, g->me));
}

gas_status_t gas_co_allgather_ring(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    int next = PEER(g, (me + 1) % n), prev = PEER(g, (me - 1 + n) % n);
    own_block(s, g, a);
    for (int k = 0; k < n - 1; k++) {
        blocks(s, a, n, next, (me - k + n) % n, 1, 0);
        blocks(s, a, n, prev, (me - k - 1 + n) % n, 1, 1);
        gas_co_round(s);
    }
    return GAS_OK;
}

gas_status_t gas_co_allgather_bruck(struct gas_co_sched *s, const struct gas_co_grp *g,
                                    const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    own_block(s, g, a);
    for (int dist = 1; dist < n; dist <<= 1) {
        int c = dist < n - dist ? dist : n - dist;
        blocks(s, a, n, PEER(g, (me - dist + n) % n), me, c, 0);
        blocks(s, a, n, PEER(g, (me + dist) % n), (me + dist) % n, c, 1);
        gas_co_round(s);
    }
    return GAS_OK;
}

static int pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

gas_status_t gas_co_allgather_rd(struct gas_co_sched *s, const struct gas_co_grp *g,
                                 const struct gas_co_args *a)
{
    int n = g->n, me = g->me, p2 = pow2_floor(n), r = n - p2;
#define FIRST(j) ((j) < r ? 2 * (j) : (j) + r)
#define REAL(j) ((j) < r ? 2 * (j) + 1 : (j) + r)
    own_block(s, g, a);
    int nr = me >= 2 * r ? me - r : (me % 2 ? me / 2 : -1);
    if (me < 2 * r) {
        if (nr < 0)
            blocks(s, a, n, PEER(g, me + 1), me, 1, 0);
        else
            blocks(s, a, n, PEER(g, me - 1), me - 1, 1, 1);
        gas_co_round(s);
    }
    if (nr >= 0) {
        for (int mask = 1; mask < p2; mask <<= 1) {
            int pn = nr ^ mask, peer = PEER(g, REAL(pn));
            int mine = nr & ~(mask - 1), theirs = pn & ~(mask - 1);
            int mf = FIRST(mine), tf = FIRST(theirs);
            int ml = (mine + mask < p2 ? FIRST(mine + mask) : n) - mf;
            int tl = (theirs + mask < p2 ? FIRST(theirs + mask) : n) - tf;
            blocks(s, a, n, peer, mf, ml, 0);
            blocks(s, a, n, peer, tf, tl, 1);
            gas_co_round(s);
        }
    }
    if (me < 2 * r) {   /* the partner hands everything but my own block over */
        int other = nr < 0 ? me + 1 : me - 1;
        int skip = nr < 0 ? me : me - 1;
        blocks(s, a, n, PEER(g, other), (skip + 1) % n, n - 1, nr < 0);
        gas_co_round(s);
    }
#undef FIRST
#undef REAL
    return GAS_OK;
}
