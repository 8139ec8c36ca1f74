/*
 * alg_gatherv.c - gatherv and scatterv algorithms: variable blocks to or
 * from a root.  counts is the same on every member, so every member knows
 * every block's size; displs (a->displs) is the root's and is read only
 * there.  Members are taken relative to the root (vr = (i - root) mod n),
 * as in alg_bcast.c's gather and scatter.
 *
 *  binomial   up (gatherv) or down (scatterv) a binomial tree: log2 n
 *             steps; a subtree's blocks travel as one message, packed in
 *             relative order (a temporary on inner members).  At the root
 *             a subtree whose non-empty blocks lie back to back in dst
 *             (src) is received into (sent from) the user's buffer
 *             directly; others go through a temporary
 *  linear     the root exchanges with every member directly, all at once,
 *             each block straight into (out of) its place in dst (src)
 *
 * Blocks of zero elements still travel (as empty messages), so every
 * member takes part in every step and a mismatch is seen as for gather.
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))
#define TEAM_IDX(g, a, v) (((v) + (a)->root) % (g)->n)       /* relative -> group index */

/* Bytes of the block of group index i. */
static size_t vlen(const struct gas_co_args *a, int i)
{
    return a->counts[i] * a->es;
}

/* Bytes of the blocks of relative members [v, v + k), packed. */
static size_t span(const struct gas_co_grp *g, const struct gas_co_args *a, int v, int k)
{
    size_t len = 0;
    for (int j = v; j < v + k; j++)
        len += vlen(a, TEAM_IDX(g, a, j));
    return len;
}

/*
 * Whether the non-empty blocks of relative members [v, v + k) lie back to
 * back at the root's displs; *off_p: the byte offset of the first (0 when
 * all are empty).
 */
static int contiguous(const struct gas_co_grp *g, const struct gas_co_args *a, int v, int k,
                      size_t *off_p)
{
    size_t next = 0;
    int seen = 0;
    *off_p = 0;
    for (int j = v; j < v + k; j++) {
        int i = TEAM_IDX(g, a, j);
        if (a->counts[i] == 0)
            continue;
        if (!seen)
            *off_p = a->displs[i] * a->es;
        else if (a->displs[i] * a->es != next)
            return 0;
        seen = 1;
        next = a->displs[i] * a->es + vlen(a, i);
    }
    return 1;
}

/*
 * Copy the blocks of relative members [v, v + k) between a packed buffer and
 * their places in the root's user buffer (to_user: packed -> user).
 */
static void unpack(struct gas_co_sched *s, const struct gas_co_grp *g, const struct gas_co_args *a,
                   char *user, char *packed, int v, int k, int to_user)
{
    size_t at = 0;
    for (int j = v; j < v + k; j++) {
        int i = TEAM_IDX(g, a, j);
        char *u = user + a->displs[i] * a->es;
        if (to_user)
            gas_co_copy(s, u, packed + at, vlen(a, i));
        else
            gas_co_copy(s, packed + at, u, vlen(a, i));
        at += vlen(a, i);
    }
}

/* Children of relative member vr, ascending: the size of child vr + m's subtree. */
static int child(int vr, int n, int m)
{
    return m < n - vr - m ? m : n - vr - m;
}

/* The root of a gatherv tree: each child's subtree into dst, or into a temporary first. */
static gas_status_t gatherv_root(struct gas_co_sched *s, const struct gas_co_grp *g,
                                 const struct gas_co_args *a)
{
    int n = g->n;
    char *tmp[32] = {0};
    gas_co_copy(s, a->dst + a->displs[g->me] * a->es, a->src, vlen(a, g->me));
    for (int m = 1, b = 0; m < n; m <<= 1, b++) {
        int c = child(0, n, m);
        size_t off, len = span(g, a, m, c);
        char *at;
        if (contiguous(g, a, m, c, &off)) {
            at = a->dst + off;
        } else if ((at = tmp[b] = gas_co_tmp(s, len)) == NULL) {
            return s->status;
        }
        gas_co_recv(s, PEER(g, TEAM_IDX(g, a, m)), len ? at : NULL, len);
    }
    gas_co_round(s);
    for (int m = 1, b = 0; m < n; m <<= 1, b++)
        if (tmp[b])
            unpack(s, g, a, a->dst, tmp[b], m, child(0, n, m), 1);
    return GAS_OK;
}

gas_status_t gas_co_gatherv_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                     const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n, mask, sub = gas_co_subtree(vr, n, &mask);
    if (vr == 0)
        return gatherv_root(s, g, a);
    size_t mine = vlen(a, g->me), all = span(g, a, vr, sub);
    const char *out = a->src;
    if (sub > 1) {
        char *buf = gas_co_tmp(s, all);
        if (buf == NULL)
            return s->status;
        gas_co_copy(s, buf, a->src, mine);
        for (int m = 1; m < mask && vr + m < n; m <<= 1)
            gas_co_recv(s, PEER(g, TEAM_IDX(g, a, vr + m)), buf + span(g, a, vr, m),
                        span(g, a, vr + m, child(vr, n, m)));
        gas_co_round(s);
        out = buf;
    }
    gas_co_send(s, PEER(g, TEAM_IDX(g, a, vr - mask)), out, all);
    gas_co_round(s);
    return GAS_OK;
}

gas_status_t gas_co_gatherv_linear(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    if (me != a->root) {
        gas_co_send(s, PEER(g, a->root), a->src, vlen(a, me));
    } else {
        gas_co_copy(s, a->dst + a->displs[me] * a->es, a->src, vlen(a, me));
        for (int i = 0; i < n; i++)
            if (i != me)
                gas_co_recv(s, PEER(g, i), a->dst + a->displs[i] * a->es, vlen(a, i));
    }
    gas_co_round(s);
    return GAS_OK;
}

/* The root of a scatterv tree: each child's subtree from src, or packed into a temporary. */
static gas_status_t scatterv_root(struct gas_co_sched *s, const struct gas_co_grp *g,
                                  const struct gas_co_args *a)
{
    int n = g->n;
    const char *from[32] = {0};
    char *src = (char *)a->src;   /* only read: unpack's user side */
    gas_co_copy(s, a->dst, a->src + a->displs[g->me] * a->es, vlen(a, g->me));
    for (int m = 1, b = 0; m < n; m <<= 1, b++) {
        int c = child(0, n, m);
        size_t off, len = span(g, a, m, c);
        char *t;
        if (contiguous(g, a, m, c, &off)) {
            from[b] = a->src + off;
        } else if ((t = gas_co_tmp(s, len)) == NULL) {
            return s->status;
        } else {
            unpack(s, g, a, src, t, m, c, 0);
            from[b] = t;
        }
    }
    int nchildren = 0;
    while ((1 << nchildren) < n)
        nchildren++;
    for (int b = nchildren - 1; b >= 0; b--) {   /* the largest subtree first */
        int m = 1 << b;
        size_t len = span(g, a, m, child(0, n, m));
        gas_co_send(s, PEER(g, TEAM_IDX(g, a, m)), len ? from[b] : NULL, len);
    }
    gas_co_round(s);
    return GAS_OK;
}

gas_status_t gas_co_scatterv_binomial(struct gas_co_sched *s, const struct gas_co_grp *g,
                                      const struct gas_co_args *a)
{
    int n = g->n, vr = (g->me - a->root + n) % n, mask, sub = gas_co_subtree(vr, n, &mask);
    if (vr == 0)
        return scatterv_root(s, g, a);
    size_t mine = vlen(a, g->me), all = span(g, a, vr, sub);
    int parent = PEER(g, TEAM_IDX(g, a, vr - mask));
    if (sub == 1) {   /* a leaf receives into dst, which may be NULL when its block is empty */
        gas_co_recv(s, parent, a->dst, mine);
        gas_co_round(s);
        return GAS_OK;
    }
    char *buf = gas_co_tmp(s, all);
    if (buf == NULL)
        return s->status;
    gas_co_recv(s, parent, buf, all);
    gas_co_round(s);
    gas_co_copy(s, a->dst, buf, mine);
    for (int m = mask >> 1; m > 0; m >>= 1)
        if (vr + m < n)
            gas_co_send(s, PEER(g, TEAM_IDX(g, a, vr + m)), buf + span(g, a, vr, m),
                        span(g, a, vr + m, child(vr, n, m)));
    gas_co_round(s);
    return GAS_OK;
}

gas_status_t gas_co_scatterv_linear(struct gas_co_sched *s, const struct gas_co_grp *g,
                                    const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    if (me != a->root) {
        gas_co_recv(s, PEER(g, a->root), a->dst, vlen(a, me));
    } else {
        for (int k = 1; k < n; k++) {
            int i = (me + k) % n;
            gas_co_send(s, PEER(g, i), a->src + a->displs[i] * a->es, vlen(a, i));
        }
        gas_co_round(s);
        gas_co_copy(s, a->dst, a->src + a->displs[me] * a->es, vlen(a, me));
    }
    gas_co_round(s);
    return GAS_OK;
}
