/*
 * alg_alltoall.c - alltoall and alltoallv algorithms.
 *
 *  pairwise    n-1 steps; in step k member i sends to i + k and receives
 *              from i - k (one pair per step: no hot spot)
 *  scattered   every send and receive in one round (fewest latencies,
 *              most contention)
 *  bruck       (alltoall only) ceil(log2 n) steps of about half the data
 *              each, through temporaries: for small blocks on many ranks
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))

static size_t soff(const struct gas_co_args *a, int i)
{
    return (a->scounts ? a->sdispls[i] : (size_t)i * a->count) * a->es;
}
static size_t slen(const struct gas_co_args *a, int i)
{
    return (a->scounts ? a->scounts[i] : a->count) * a->es;
}
static size_t roff(const struct gas_co_args *a, int i)
{
    return (a->counts ? a->displs[i] : (size_t)i * a->count) * a->es;
}
static size_t rlen(const struct gas_co_args *a, int i)
{
    return (a->counts ? a->counts[i] : a->count) * a->es;
}

static void exchange(struct gas_co_sched *s, const struct gas_co_grp *g,
                     const struct gas_co_args *a, int rounds)
{
    int n = g->n, me = g->me;
    gas_co_copy(s, a->dst + roff(a, me), a->src + soff(a, me), rlen(a, me));
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        gas_co_send(s, PEER(g, to), a->src + soff(a, to), slen(a, to));
        gas_co_recv(s, PEER(g, from), a->dst + roff(a, from), rlen(a, from));
        if (rounds)
            gas_co_round(s);
    }
    gas_co_round(s);
}

gas_status_t gas_co_alltoall_pairwise(struct gas_co_sched *s, const struct gas_co_grp *g,
                                      const struct gas_co_args *a)
{
    exchange(s, g, a, 1);
    return GAS_OK;
}

gas_status_t gas_co_alltoall_scattered(struct gas_co_sched *s, const struct gas_co_grp *g,
                                       const struct gas_co_args *a)
{
    exchange(s, g, a, 0);
    return GAS_OK;
}

gas_status_t gas_co_alltoall_bruck(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t blk = a->count * a->es;
    char *tmp = gas_co_tmp(s, (size_t)n * blk);
    char *out = gas_co_tmp(s, ((size_t)n / 2 + 1) * blk);
    char *in = gas_co_tmp(s, ((size_t)n / 2 + 1) * blk);
    if (tmp == NULL || out == NULL || in == NULL)
        return s->status;
    /* tmp[i] = the block for member me + i: it has i steps forward to go */
    size_t head = (size_t)(n - me) * blk;
    gas_co_copy(s, tmp, a->src + (size_t)me * blk, head);
    gas_co_copy(s, tmp + head, a->src, (size_t)me * blk);
    for (int dist = 1; dist < n; dist <<= 1) {
        size_t m = 0;
        for (int i = 0; i < n; i++)
            if (i & dist)
                gas_co_copy(s, out + blk * m++, tmp + (size_t)i * blk, blk);
        gas_co_send(s, PEER(g, (me + dist) % n), out, m * blk);
        gas_co_recv(s, PEER(g, (me - dist + n) % n), in, m * blk);
        gas_co_round(s);
        m = 0;
        for (int i = 0; i < n; i++)
            if (i & dist)
                gas_co_copy(s, tmp + (size_t)i * blk, in + blk * m++, blk);
    }
    /* tmp[i] came from member me - i */
    for (int i = 0; i < n; i++)
        gas_co_copy(s, a->dst + (size_t)((me - i + n) % n) * blk, tmp + (size_t)i * blk, blk);
    gas_co_round(s);
    return GAS_OK;
}
