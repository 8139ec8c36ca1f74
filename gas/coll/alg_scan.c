/*
 * alg_scan.c - scan and exscan (prefix reductions) algorithms.
 *
 *  recursive_doubling  Hillis-Steele: in round k member i sends its running
 *                      partial (members i - 2^k + 1 .. i) to i + 2^k and
 *                      combines the one of i - 2^k into its own; ceil(log2 n)
 *                      rounds of the whole vector, any n: small vectors
 *  chain               a pipelined chain: member i receives the prefix of
 *                      0 .. i-1 from i - 1 segment by segment, combines its
 *                      own part and forwards each segment to i + 1 while the
 *                      next one arrives: every member sends and receives the
 *                      vector once (bandwidth-optimal), n - 1 + segments
 *                      steps: large vectors
 *
 * Order of combination (floats): each member's combinations are fixed by
 * the algorithm, so a run repeats its bits.  The chain adds member i's part
 * to the prefix of 0 .. i-1 (a op b == b op a bit for bit for every op
 * here), so its results are the sequential left-to-right ones exactly;
 * recursive doubling combines adjacent ranges in a tree of depth
 * ceil(log2 n), within ceil(log2 n) units of rounding times the sum of
 * magnitudes of the sequential result.
 *
 * exscan: member 0's dst is the op's identity (gas_co_identity), written in
 * the last step, once its own input (which in place is dst) has been sent.
 */
#include "coll.h"

#define PEER(g, i) gas_co_grp_rank((g), (i))

/* A temporary holding the op's identity for len bytes, or NULL (s->status says why). */
static char *identity_tmp(struct gas_co_sched *s, size_t len)
{
    char *id = gas_co_tmp(s, len);
    if (id)
        gas_co_identity(id, len / s->es, s->type, s->redop);
    return id;
}

gas_status_t gas_co_scan_rd(struct gas_co_sched *s, const struct gas_co_grp *g,
                            const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t len = a->count * a->es;
    gas_co_copy(s, a->dst, a->src, len);
    if (n == 1)
        return GAS_OK;
    char *in = gas_co_tmp(s, len);
    if (in == NULL)
        return s->status;
    for (int d = 1; d < n; d <<= 1) {
        if (me + d < n)
            gas_co_send(s, PEER(g, me + d), a->dst, len);
        if (me - d >= 0)
            gas_co_recv(s, PEER(g, me - d), in, len);
        gas_co_round(s);
        if (me - d >= 0)
            gas_co_reduce_local(s, a->dst, in, len);
    }
    return GAS_OK;
}

/*
 * exscan by recursive doubling: part is the running partial sent on (a
 * copy: src may be dst); dst collects what arrives (members below this one
 * only), the first arrival copied, the later ones combined in.
 */
gas_status_t gas_co_exscan_rd(struct gas_co_sched *s, const struct gas_co_grp *g,
                              const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t len = a->count * a->es;
    char *id = me == 0 ? identity_tmp(s, len) : NULL;
    char *part = n > 1 ? gas_co_tmp(s, len) : NULL, *in = n > 1 ? gas_co_tmp(s, len) : NULL;
    if ((me == 0 && id == NULL) || (n > 1 && (part == NULL || in == NULL)))
        return s->status;
    if (n > 1)
        gas_co_copy(s, part, a->src, len);
    for (int d = 1; d < n; d <<= 1) {
        if (me + d < n)
            gas_co_send(s, PEER(g, me + d), part, len);
        if (me - d >= 0)
            gas_co_recv(s, PEER(g, me - d), in, len);
        gas_co_round(s);
        if (me - d < 0)
            continue;
        if (d == 1)
            gas_co_copy(s, a->dst, in, len);   /* every member but 0 receives at d = 1 */
        else
            gas_co_reduce_local(s, a->dst, in, len);
        if (me + 2 * d < n)   /* part is sent again */
            gas_co_reduce_local(s, part, in, len);
    }
    if (me == 0)
        gas_co_copy(s, a->dst, id, len);
    return GAS_OK;
}

/*
 * The chain's segment: half a mailbox's payload (two segments in flight per
 * pair), at least 4 KiB, whole elements.  Every member of the team computes
 * the same (the team's geometry), so their messages match.
 */
static size_t chain_segment(const struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    size_t pay = t->chunk_bytes > GAS_CO_HDR_BYTES ? t->chunk_bytes - GAS_CO_HDR_BYTES : 0;
    size_t seg = (size_t)(t->nchunks / 2 ? t->nchunks / 2 : 1) * pay;
    if (seg < 4096)
        seg = 4096;
    seg -= seg % s->es;
    return seg;
}

/* Segments of len bytes (at least one: a zero-byte call still sends its message). */
static size_t nsegments(size_t len, size_t seg)
{
    return len == 0 ? 1 : (len + seg - 1) / seg;
}

/* Bytes of segment k of len. */
static size_t seg_len(size_t len, size_t seg, size_t k)
{
    size_t lo = k * seg;
    return len - lo < seg ? len - lo : seg;
}

/*
 * The chain, for both: member me receives segment k of the prefix of
 * 0 .. me-1 in its step k and sends segment k - 1 of its own prefix on
 * (member 0: segment k, it receives nothing).  scan: the arrival is
 * combined into dst (a copy of src), which is what goes on.  exscan: it
 * lands in dst, and out (own input) is combined with it before it goes on.
 */
static void chain(struct gas_co_sched *s, const struct gas_co_grp *g, char *recv_at,
                  char *out, size_t len, int combine_out)
{
    int n = g->n, me = g->me;
    size_t seg = chain_segment(s), ns = nsegments(len, seg);
    int lag = me > 0;   /* a member that receives sends each segment one step later */
    for (size_t k = 0; k < ns + (size_t)lag; k++) {
        if (combine_out && lag && k >= 1 && me < n - 1)
            gas_co_reduce_local(s, out + (k - 1) * seg, recv_at + (k - 1) * seg,
                                seg_len(len, seg, k - 1));
        if (me > 0 && k < ns) {
            if (combine_out)
                gas_co_recv(s, PEER(g, me - 1), recv_at + k * seg, seg_len(len, seg, k));
            else
                gas_co_recv_reduce(s, PEER(g, me - 1), recv_at + k * seg, seg_len(len, seg, k));
        }
        size_t sk = k - (size_t)lag;
        if (me < n - 1 && k >= (size_t)lag && sk < ns)
            gas_co_send(s, PEER(g, me + 1), out + sk * seg, seg_len(len, seg, sk));
        gas_co_round(s);
    }
}

gas_status_t gas_co_scan_chain(struct gas_co_sched *s, const struct gas_co_grp *g,
                               const struct gas_co_args *a)
{
    size_t len = a->count * a->es;
    gas_co_copy(s, a->dst, a->src, len);
    if (g->n > 1)
        chain(s, g, a->dst, a->dst, len, 0);
    return GAS_OK;
}

gas_status_t gas_co_exscan_chain(struct gas_co_sched *s, const struct gas_co_grp *g,
                                 const struct gas_co_args *a)
{
    int n = g->n, me = g->me;
    size_t len = a->count * a->es;
    char *id = me == 0 ? identity_tmp(s, len) : NULL;
    /* what goes on: src itself from member 0 (its dst, which may be src, is written only
     * once everything went), else a copy combined with the arrivals (the last member
     * sends nothing) */
    char *out = me == 0 ? (char *)a->src : NULL;   /* (NULL when count is 0) */
    if (me > 0 && me < n - 1 && (out = gas_co_tmp(s, len)) == NULL)
        return s->status;
    if (me == 0 && id == NULL)
        return s->status;
    if (me < n - 1)
        gas_co_copy(s, out, a->src, len);
    if (n > 1)
        chain(s, g, a->dst, out, len, 1);
    if (me == 0)
        gas_co_copy(s, a->dst, id, len);
    return GAS_OK;
}
