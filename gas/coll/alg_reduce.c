/*
 * alg_reduce.c - reduce, allreduce and reduce-scatter algorithms.
 *
 *  reduce binomial           up a binomial tree, combining on the way: log2 n steps
 *  reduce_scatter_gather     ring reduce-scatter, then each block to the root
 *  allreduce recursive_doubling   log2 n exchanges of the whole vector
 *  allreduce rabenseifner    recursive-halving reduce-scatter, then
 *                            recursive-doubling allgather: 2 log2 n steps, ~2x the vector
 *  allreduce ring            ring reduce-scatter + ring allgather: 2(n-1)
 *                            steps, ~2x the vector, every link busy
 *  allreduce one_shot        every member sends everyone its vector and reduces
 *                            all n: 1 step, (n-1)x the vector, small vectors
 *  allreduce two_shot        direct reduce-scatter + direct allgather: 2 steps
 *                            whatever n, ~2x the vector, n-1 messages a step
 *  reduce_scatter recursive_halving / ring   the first halves of the above
 *
 * Sizes that are not a power of two (recursive algorithms): with p2 the
 * largest power of two <= n and r = n - p2, the members 0 .. 2r-1 pair up
 * first: each even one hands its vector to the next odd one and sits out,
 * the p2 remaining members run the power-of-two algorithm ("new ranks"), and
 * the even ones get their result from their partner at the end.
 *
 * Floating-point sums: each result element is a sum of n terms in an order
 * that depends on the algorithm, so results may differ from a sequential sum
 * by up to (n-1) units of rounding times the sum of magnitudes.
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))

static int pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    return p;
}

/* The member that plays new rank j (fold of the first 2r members). */
static int real_rank(int j, int r)
{
    return j < r ? 2 * j + 1 : j + r;
}

/* First member index covered by new rank j (its range is [first(j), first(j+1))). */
static int first_of(int j, int r)
{
    return j < r ? 2 * j : j + r;
}

/* A buffer that starts as a copy of src (dst when given, else a temporary). */
static char *acc_from(struct gas_co_sched *s, char *dst, const char *src, size_t len)
{
    char *acc = dst ? dst : gas_co_tmp(s, len);
    if (acc)
        gas_co_copy(s, acc, src, len);
    return acc;
}

/* ------------------------------------------------------------------------ */
/* reduce                                                                    */
/* ------------------------------------------------------------------------ */

gas_status_t gas_co_reduce_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                    const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n;
    size_t len = a->count * a->es;
    int mask = 1;
    while (mask < n && !(vr & mask))
        mask <<= 1;
    int leaf = vr + 1 >= n || (vr & 1);
    const char *acc = a->src;
    if (vr == 0 || !leaf) {
        char *w = acc_from(s, vr == 0 ? a->dst : NULL, a->src, len);
        if (w == NULL)
            return s->status;
        for (int m = 1; m < mask && vr + m < n; m <<= 1)
            gas_co_recv_reduce(s, PEER(g, (vr + m + a->root) % n), w, len);
        gas_co_round(s);
        acc = w;
    }
    if (vr != 0) {
        gas_co_send(s, PEER(g, (vr - mask + a->root) % n), acc, len);
        gas_co_round(s);
    }
    return GAS_OK;
}

/* Byte bounds of n blocks: count split evenly (blk == 0) or blk bytes each. */
static size_t *block_bounds(struct gas_co_sched *s, int n, size_t count, size_t es, size_t blk)
{
    size_t *b = gas_co_tmp(s, ((size_t)n + 1) * sizeof *b);
    if (b)
        for (int j = 0; j <= n; j++)
            b[j] = blk ? (size_t)j * blk : gas_co_blk_lo(count, n, j) * es;
    return b;
}

/* Ring reduce-scatter of acc over n blocks; member me ends with block me complete. */
static void ring_rs(struct gas_co_sched *s, const struct gas_co_grp *g, char *acc,
                    const size_t *b)
{
    int n = g->n, me = g->me;
    int next = PEER(g, (me + 1) % n), prev = PEER(g, (me - 1 + n) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k - 1 + 2 * n) % n, rb = (me - k - 2 + 2 * n) % n;
        gas_co_send(s, next, acc + b[sb], b[sb + 1] - b[sb]);
        gas_co_recv_reduce(s, prev, acc + b[rb], b[rb + 1] - b[rb]);
        gas_co_round(s);
    }
}

gas_status_t gas_co_reduce_rs_gather(struct gas_co_sched *s, const struct gas_co_grp *g,
                                     const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t es = a->es, len = a->count * es;
    char *acc = acc_from(s, me == a->root ? a->dst : NULL, a->src, len);
    size_t *b = block_bounds(s, n, a->count, es, 0);
    if (acc == NULL || b == NULL)
        return s->status;
    ring_rs(s, g, acc, b);
    if (me != a->root) {
        gas_co_send(s, PEER(g, a->root), acc + b[me], b[me + 1] - b[me]);
    } else {
        for (int i = 0; i < n; i++)
            if (i != me)
                gas_co_recv(s, PEER(g, i), acc + b[i], b[i + 1] - b[i]);
    }
    gas_co_round(s);
    return GAS_OK;
}

/* ------------------------------------------------------------------------ */
/* allreduce                                                                 */
/* ------------------------------------------------------------------------ */

/* Fold the first 2r members; returns my new rank or -1 (then I wait for the result). */
static int fold_in(struct gas_co_sched *s, const struct gas_co_grp *g, char *acc, size_t len,
                   int r)
{
    int me = g->me;
    if (me >= 2 * r)
        return me - r;
    if (me % 2 == 0) {
        gas_co_send(s, PEER(g, me + 1), acc, len);
        gas_co_round(s);
        return -1;
    }
    gas_co_recv_reduce(s, PEER(g, me - 1), acc, len);
    gas_co_round(s);
    return me / 2;
}

static void fold_out(struct gas_co_sched *s, const struct gas_co_grp *g, char *acc, size_t len,
                     int r)
{
    int me = g->me;
    if (me >= 2 * r)
        return;
    if (me % 2)
        gas_co_send(s, PEER(g, me - 1), acc, len);
    else
        gas_co_recv(s, PEER(g, me + 1), acc, len);
    gas_co_round(s);
}

gas_status_t gas_co_allreduce_rd(struct gas_co_sched *s, const struct gas_co_grp *g,
                                 const struct gas_co_args *a)
{
    int n = g->n, p2 = pow2_floor(n), r = n - p2;
    size_t len = a->count * a->es;
    char *acc = acc_from(s, a->dst, a->src, len);
    char *in = n > 1 ? gas_co_tmp(s, len) : NULL;
    if (acc == NULL || (n > 1 && in == NULL))
        return s->status;
    int nr = fold_in(s, g, acc, len, r);
    if (nr >= 0) {
        for (int mask = 1; mask < p2; mask <<= 1) {
            int peer = PEER(g, real_rank(nr ^ mask, r));
            gas_co_send(s, peer, acc, len);
            gas_co_recv(s, peer, in, len);
            gas_co_round(s);
            gas_co_reduce_local(s, acc, in, len);
        }
    }
    fold_out(s, g, acc, len, r);
    return GAS_OK;
}

/*
 * Recursive halving over the p2 new ranks: bounds(j) is where new rank j's
 * part of acc starts (bytes; bounds(p2) is the end).  New rank nr ends with
 * its part fully reduced.
 */
static void halving(struct gas_co_sched *s, const struct gas_co_grp *g, char *acc, int nr, int p2,
                    int r, const size_t *bounds)
{
    int lo = 0, hi = p2;
    for (int mask = p2 / 2; mask >= 1; mask >>= 1) {
        int peer = PEER(g, real_rank(nr ^ mask, r)), mid = lo + mask;
        if (nr & mask) {
            gas_co_send(s, peer, acc + bounds[lo], bounds[mid] - bounds[lo]);
            gas_co_recv_reduce(s, peer, acc + bounds[mid], bounds[hi] - bounds[mid]);
            lo = mid;
        } else {
            gas_co_send(s, peer, acc + bounds[mid], bounds[hi] - bounds[mid]);
            gas_co_recv_reduce(s, peer, acc + bounds[lo], bounds[mid] - bounds[lo]);
            hi = mid;
        }
        gas_co_round(s);
    }
}

gas_status_t gas_co_allreduce_rabenseifner(struct gas_co_sched *s, const struct gas_co_grp *g,
                                           const struct gas_co_args *a)
{
    int n = g->n, p2 = pow2_floor(n), r = n - p2;
    size_t es = a->es, len = a->count * es;
    char *acc = acc_from(s, a->dst, a->src, len);
    size_t *bounds = gas_co_tmp(s, ((size_t)p2 + 1) * sizeof *bounds);
    if (acc == NULL || bounds == NULL)
        return s->status;
    for (int j = 0; j <= p2; j++)
        bounds[j] = gas_co_blk_lo(a->count, p2, j) * es;
    int nr = fold_in(s, g, acc, len, r);
    if (nr >= 0) {
        halving(s, g, acc, nr, p2, r, bounds);
        for (int mask = 1; mask < p2; mask <<= 1) {
            int pn = nr ^ mask, peer = PEER(g, real_rank(pn, r));
            int mine = nr & ~(mask - 1), theirs = pn & ~(mask - 1);
            gas_co_send(s, peer, acc + bounds[mine], bounds[mine + mask] - bounds[mine]);
            gas_co_recv(s, peer, acc + bounds[theirs], bounds[theirs + mask] - bounds[theirs]);
            gas_co_round(s);
        }
    }
    fold_out(s, g, acc, len, r);
    return GAS_OK;
}

/* An allreduce's accumulator (*acc_p: dst, a copy of src) and the bounds of its
 * n blocks, or NULL (s->status says why). */
static size_t *vector_blocks(struct gas_co_sched *s, const struct gas_co_grp *g,
                             const struct gas_co_args *a, char **acc_p)
{
    *acc_p = acc_from(s, a->dst, a->src, a->count * a->es);
    size_t *b = block_bounds(s, g->n, a->count, a->es, 0);
    return *acc_p != NULL ? b : NULL;
}

gas_status_t gas_co_allreduce_ring(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    char *acc;
    size_t *b = vector_blocks(s, g, a, &acc);
    if (b == NULL)
        return s->status;
    ring_rs(s, g, acc, b);
    /* now block me is complete here: ring allgather */
    int next = PEER(g, (me + 1) % n), prev = PEER(g, (me - 1 + n) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        gas_co_send(s, next, acc + b[sb], b[sb + 1] - b[sb]);
        gas_co_recv(s, prev, acc + b[rb], b[rb + 1] - b[rb]);
        gas_co_round(s);
    }
    return GAS_OK;
}

/*
 * One-shot: every member sends its whole vector to every other member at
 * once, then reduces all n vectors in member order 0, 1, ..., n-1, so all
 * members compute the same bits.  One step whatever n, at n - 1 times the
 * bytes of the others: for small vectors, where each step's wait is the cost.
 * The n vectors wait in a temporary (n times the vector).
 */
gas_status_t gas_co_allreduce_one_shot(struct gas_co_sched *s, const struct gas_co_grp *g,
                                       const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t len = a->count * a->es;
    char *all = gas_co_tmp(s, (size_t)n * len);
    if (all == NULL)
        return s->status;
    char *own = all + (size_t)me * len;   /* a copy: src may be dst */
    gas_co_copy(s, own, a->src, len);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        gas_co_send(s, PEER(g, to), own, len);
        gas_co_recv(s, PEER(g, from), all + (size_t)from * len, len);
    }
    if (n > 1)
        gas_co_round(s);
    gas_co_copy(s, a->dst, all, len);
    for (int j = 1; j < n; j++)
        gas_co_reduce_local(s, a->dst, all + (size_t)j * len, len);
    return GAS_OK;
}

/*
 * Two-shot: every member sends each other member that member's block of the
 * vector at once and reduces the n - 1 blocks it gets into its own, then
 * sends its reduced block to everyone.  Two steps for any n, where the
 * others take log2 n or more: the waits, not the bytes, dominate mid-sized
 * vectors on a node (above all with more ranks than cores).  Each block is
 * reduced on one member, in a fixed order (its own part, then members
 * me - 1, me - 2, ...), so all members get the same bits and a run repeats
 * them; the received blocks wait in a temporary for that ((n-1)/n of the
 * vector).
 */
gas_status_t gas_co_allreduce_two_shot(struct gas_co_sched *s, const struct gas_co_grp *g,
                                       const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    char *acc;
    size_t *b = vector_blocks(s, g, a, &acc);
    if (b == NULL)
        return s->status;
    if (n == 1)
        return GAS_OK;
    size_t mine = b[me + 1] - b[me];
    char *in = gas_co_tmp(s, (size_t)(n - 1) * mine);
    if (in == NULL)
        return s->status;
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        gas_co_send(s, PEER(g, to), acc + b[to], b[to + 1] - b[to]);
        gas_co_recv(s, PEER(g, from), in + (size_t)(k - 1) * mine, mine);
    }
    gas_co_round(s);
    for (int k = 1; k < n; k++)
        gas_co_reduce_local(s, acc + b[me], in + (size_t)(k - 1) * mine, mine);
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n, from = (me - k + n) % n;
        gas_co_send(s, PEER(g, to), acc + b[me], mine);
        gas_co_recv(s, PEER(g, from), acc + b[from], b[from + 1] - b[from]);
    }
    gas_co_round(s);
    return GAS_OK;
}

/* ------------------------------------------------------------------------ */
/* reduce-scatter: src holds n blocks of count; member i gets block i        */
/* ------------------------------------------------------------------------ */

gas_status_t gas_co_rs_halving(struct gas_co_sched *s, const struct gas_co_grp *g,
                               const struct gas_co_args *a)
{
    int n = g->n, me = g->me, p2 = pow2_floor(n), r = n - p2;
    size_t blk = a->count * a->es, len = blk * (size_t)n;
    char *acc = acc_from(s, a->src == a->dst ? a->dst : NULL, a->src, len);
    size_t *bounds = gas_co_tmp(s, ((size_t)p2 + 1) * sizeof *bounds);
    if (acc == NULL || bounds == NULL)
        return s->status;
    for (int j = 0; j < p2; j++)
        bounds[j] = (size_t)first_of(j, r) * blk;
    bounds[p2] = len;
    int nr = fold_in(s, g, acc, len, r);
    if (nr >= 0) {
        halving(s, g, acc, nr, p2, r, bounds);
        if (nr < r)   /* I hold the blocks of me - 1 and me */
            gas_co_send(s, PEER(g, me - 1), acc + (size_t)(me - 1) * blk, blk);
        gas_co_round(s);
        gas_co_copy(s, a->dst, acc + (size_t)me * blk, blk);
    } else {
        gas_co_recv(s, PEER(g, me + 1), a->dst, blk);
        gas_co_round(s);
    }
    return GAS_OK;
}

gas_status_t gas_co_rs_ring(struct gas_co_sched *s, const struct gas_co_grp *g,
                            const struct gas_co_args *a)
{
    int me = g->me, n = g->n;
    size_t blk = a->count * a->es;
    char *acc = acc_from(s, a->src == a->dst ? a->dst : NULL, a->src, blk * (size_t)n);
    size_t *b = block_bounds(s, n, 0, 0, blk ? blk : 1);
    if (acc == NULL || b == NULL)
        return s->status;
    if (blk == 0)
        for (int j = 0; j <= n; j++)
            b[j] = 0;
    ring_rs(s, g, acc, b);
    gas_co_copy(s, a->dst, acc + (size_t)me * blk, blk);
    return GAS_OK;
}
