/*
 * api.c - the public collective calls: check the arguments (before anything
 * is sent), pick the algorithm, build its schedule and run it.  Each public
 * call holds its team (gas_co_call_enter) from entry to return, so a second
 * thread's call on the same team fails instead of interleaving with it.
 */
#include "coll.h"

#include <stdio.h>
#include <string.h>

/* What one call brings; filled by the public functions below. */
struct call {
    const char *name;
    gas_team_t team;
    gas_coll_t coll;
    gas_dtype_t type;
    gas_redop_t op;
    int reduces;            /* op is used */
    int rooted;             /* root is used */
    int root;               /* team rank (rooted collectives), else -1 */
    uint64_t hashcount;     /* what must agree across ranks */
    size_t bytes;           /* for the algorithm choice */
    struct gas_co_args a;
    int team_ok;            /* the team is a live team of this rank */
    int nb;                 /* the non-blocking form: handle_p must not be NULL */
};

/*
 * A call that fails its argument checks on a live team still counts as the
 * team's next collective, and tells the members so (gas_co_refused): the
 * ones in the same call fail instead of waiting for this rank.
 */
static gas_status_t refuse(struct call *c, gas_status_t st)
{
    if (st != GAS_OK && c->team_ok)
        gas_co_refused(c->team, c->coll, c->type, st, c->name);
    return st;
}

/*
 * GAS_ERR_INVALID raised for a known type and op that do not go together
 * (gas_co_op_valid false), naming the call, the op, the type and the rule.
 */
static gas_status_t op_refused(const struct call *c)
{
    const char *op = gas_co_op_name(c->op), *type = gas_co_type_name(c->type);
    if (c->op == GAS_OP_MINLOC || c->op == GAS_OP_MAXLOC)
        return gas_rt_error(GAS_ERR_INVALID, c->name,
                            "%s is a value-index op, for the pair types only (2int32, "
                            "float_int32, 2int64, double_int64; this call passes %s)", op, type);
    if (gas_co_type_is_pair(c->type))
        return gas_rt_error(GAS_ERR_INVALID, c->name,
                            "%s is a value-index pair type, for minloc and maxloc only (this "
                            "call passes %s)", type, op);
    return gas_rt_error(GAS_ERR_INVALID, c->name,
                        "%s is a bitwise op, for integer types only (this call passes %s)", op,
                        type);
}

static gas_status_t check_args(struct call *c)
{
    gas_status_t st = gas_co_team_check(c->name, c->team);
    if (st != GAS_OK)
        return st;
    c->team_ok = 1;
    if ((unsigned)c->type >= GAS_DTYPE_COUNT)
        return gas_rt_error(GAS_ERR_INVALID, c->name, "unknown type %d", (int)c->type);
    if (c->reduces) {
        if ((unsigned)c->op >= GAS_OP_COUNT)
            return gas_rt_error(GAS_ERR_INVALID, c->name, "unknown reduction op %d", (int)c->op);
        if (!gas_co_op_valid(c->type, c->op))
            return op_refused(c);
    }
    if (c->rooted && (c->root < 0 || c->root >= c->team->size))
        return gas_rt_error(GAS_ERR_RANK, c->name, "root %d is not a rank of the team (0 .. %d)",
                            c->root, c->team->size - 1);
    c->a.es = gas_dtype_size(c->type);
    return GAS_OK;
}

/* The checks every collective makes (a failure on a live team is refused). */
static gas_status_t check_common(struct call *c)
{
    return refuse(c, check_args(c));
}

/* n * es * mult bytes, or GAS_ERR_OVERFLOW raised for the call. */
static gas_status_t bytes_of(struct call *c, size_t n, size_t mult, size_t *bytes_p)
{
    size_t es = gas_dtype_size(c->type);
    if (n > SIZE_MAX / es / (mult ? mult : 1))
        return refuse(c, gas_rt_error(GAS_ERR_OVERFLOW, c->name,
                                      "count %zu x %zu-byte elements x %zu overflows", n, es,
                                      mult));
    *bytes_p = n * es * mult;
    return GAS_OK;
}

/* check_common, then the bytes of one block (c->bytes) and of one per member (*all_p). */
static gas_status_t check_blocks(struct call *c, size_t count, size_t *all_p)
{
    gas_status_t st = check_common(c);
    if (st == GAS_OK)
        st = bytes_of(c, count, 1, &c->bytes);
    if (st == GAS_OK)
        st = bytes_of(c, count, (size_t)c->team->size, all_p);
    return st;
}

static gas_status_t need(struct call *c, const void *p, size_t bytes, const char *what)
{
    if (bytes > 0 && p == NULL)
        return refuse(c, gas_rt_error(GAS_ERR_INVALID, c->name, "%s is NULL (%zu bytes)", what,
                                      bytes));
    return GAS_OK;
}

static int hierarchical_ok(gas_coll_t c)
{
    return c == GAS_COLL_BARRIER || c == GAS_COLL_BROADCAST || c == GAS_COLL_REDUCE ||
           c == GAS_COLL_ALLREDUCE;
}

/* An _nb form's *handle_p is GAS_HANDLE_NULL until it starts, so a call that
 * fails leaves a handle that gas_wait/gas_test complete at once (gas.h). */
static void handle_clear(gas_handle_t *handle_p)
{
    if (handle_p != NULL)
        *handle_p = GAS_HANDLE_NULL;
}

/* Build the call's schedule and run it, or start it into *handle_p (the _nb forms). */
static gas_status_t launch(struct call *c, gas_handle_t *handle_p)
{
    if (c->nb && handle_p == NULL)
        return refuse(c, gas_rt_error(GAS_ERR_INVALID, c->name, "handle_p is NULL"));
    gas_team_t t = c->team;
    int alg = gas_co_select(c->coll, c->bytes, t->size, t->nnodes, t->cpus_shared,
                            hierarchical_ok(c->coll));
    struct gas_co_sched *s = gas_co_sched_new(c->name, t, c->coll, alg, c->type,
                                              c->reduces ? c->op : 0, c->hashcount, c->root);
    if (s == NULL)
        return refuse(c, GAS_ERR_NOMEM);
    struct gas_co_grp g = {.n = t->size, .me = t->rank, .map = NULL};
    if (c->root >= 0)
        c->a.root = c->root;
    gas_co_builder(c->coll, alg)(s, &g, &c->a);
    return handle_p ? gas_co_start_nb(s, handle_p) : gas_co_run(s);
}

/* Run s, built by the caller, or start it into *handle_p (the _nb forms; a NULL
 * handle_p there is refused and s freed). */
static gas_status_t run_built(struct call *c, struct gas_co_sched *s, gas_handle_t *handle_p)
{
    if (c->nb && handle_p == NULL) {
        gas_co_sched_free(s);
        return refuse(c, gas_rt_error(GAS_ERR_INVALID, c->name, "handle_p is NULL"));
    }
    return c->nb ? gas_co_start_nb(s, handle_p) : gas_co_run(s);
}

/* ------------------------------------------------------------------------ */

static gas_status_t barrier_in(const char *name, gas_team_t team, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = GAS_COLL_BARRIER, .type = GAS_UINT8,
                     .root = -1, .nb = nb};
    gas_status_t st = check_common(&c);
    return st != GAS_OK ? st : launch(&c, handle_p);
}

static gas_status_t barrier(const char *name, gas_team_t team, int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p); /* before any check: a failed call leaves GAS_HANDLE_NULL */
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st : gas_co_call_leave(team, barrier_in(name, team, nb, handle_p));
}

/* On the world team this is gas_barrier (gas.h): the same world barrier, which
 * either call on the other ranks meets; elsewhere a team collective. */
static gas_status_t api_team_barrier(gas_team_t team)
{
    if (team != GAS_TEAM_NULL && team == gas_team_world_)
        return gas_gs_barrier("gas_team_barrier", GAS_GS_CALL_TEAM_BARRIER);
    return barrier("gas_team_barrier", team, 0, NULL);
}

GAS_EXPORT gas_status_t gas_team_barrier(gas_team_t team)
{
    GAS_GS_GATED("gas_team_barrier", api_team_barrier(team));
}

static gas_status_t api_team_barrier_nb(gas_team_t team, gas_handle_t *handle_p)
{
    return barrier("gas_team_barrier_nb", team, 1, handle_p);
}

GAS_EXPORT gas_status_t gas_team_barrier_nb(gas_team_t team, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_team_barrier_nb", api_team_barrier_nb(team, handle_p));
}

static gas_status_t broadcast_in(const char *name, gas_team_t team, void *buf, size_t count,
                                 gas_dtype_t type, int root, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = GAS_COLL_BROADCAST, .type = type,
                     .rooted = 1, .root = root, .hashcount = count, .nb = nb};
    gas_status_t st = check_common(&c);
    if (st == GAS_OK)
        st = bytes_of(&c, count, 1, &c.bytes);
    if (st == GAS_OK)
        st = need(&c, buf, c.bytes, "buf");
    if (st != GAS_OK)
        return st;
    c.a.dst = buf;
    c.a.src = buf;
    c.a.count = count;
    return launch(&c, handle_p);
}

static gas_status_t broadcast(const char *name, gas_team_t team, void *buf, size_t count,
                              gas_dtype_t type, int root, int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p); /* before any check: a failed call leaves GAS_HANDLE_NULL */
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, broadcast_in(name, team, buf, count, type, root,
                                                               nb, handle_p));
}

static gas_status_t api_broadcast(gas_team_t team, void *buf, size_t count, gas_dtype_t type,
                                  int root)
{
    return broadcast("gas_broadcast", team, buf, count, type, root, 0, NULL);
}

GAS_EXPORT gas_status_t gas_broadcast(gas_team_t team, void *buf, size_t count, gas_dtype_t type,
                                      int root)
{
    GAS_GS_GATED("gas_broadcast", api_broadcast(team, buf, count, type, root));
}

static gas_status_t api_broadcast_nb(gas_team_t team, void *buf, size_t count,
                                     gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    return broadcast("gas_broadcast_nb", team, buf, count, type, root, 1, handle_p);
}

GAS_EXPORT gas_status_t gas_broadcast_nb(gas_team_t team, void *buf, size_t count,
                                         gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_broadcast_nb", api_broadcast_nb(team, buf, count, type, root, handle_p));
}

static gas_status_t reduction_in(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                                 const void *src, size_t count, gas_dtype_t type, gas_redop_t op,
                                 int root, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = coll, .type = type, .op = op,
                     .reduces = 1, .rooted = coll == GAS_COLL_REDUCE, .root = root,
                     .hashcount = count, .nb = nb};
    gas_status_t st = check_common(&c);
    if (st == GAS_OK)
        st = bytes_of(&c, count, 1, &c.bytes);
    if (st != GAS_OK)
        return st;
    int has_dst = root < 0 || team->rank == root;
    if (src == GAS_IN_PLACE) {
        if (!has_dst)
            return refuse(&c, gas_rt_error(GAS_ERR_INVALID, name, "GAS_IN_PLACE is for the "
                                                                 "root only (it has the only dst)"));
        src = dst;
    }
    if ((st = need(&c, src, c.bytes, "src")) != GAS_OK ||
        (has_dst && (st = need(&c, dst, c.bytes, "dst")) != GAS_OK))
        return st;
    c.a.dst = has_dst ? dst : NULL;
    c.a.src = src;
    c.a.count = count;
    return launch(&c, handle_p);
}

static gas_status_t reduction(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                              const void *src, size_t count, gas_dtype_t type, gas_redop_t op,
                              int root, int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p); /* before any check: a failed call leaves GAS_HANDLE_NULL */
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, reduction_in(name, coll, team, dst, src, count,
                                                               type, op, root, nb, handle_p));
}

static gas_status_t api_reduce(gas_team_t team, void *dst, const void *src, size_t count,
                               gas_dtype_t type, gas_redop_t op, int root)
{
    return reduction("gas_reduce", GAS_COLL_REDUCE, team, dst, src, count, type, op, root, 0,
                     NULL);
}

GAS_EXPORT gas_status_t gas_reduce(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, gas_redop_t op, int root)
{
    GAS_GS_GATED("gas_reduce", api_reduce(team, dst, src, count, type, op, root));
}

static gas_status_t api_reduce_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                  gas_dtype_t type, gas_redop_t op, int root,
                                  gas_handle_t *handle_p)
{
    return reduction("gas_reduce_nb", GAS_COLL_REDUCE, team, dst, src, count, type, op, root, 1,
                     handle_p);
}

GAS_EXPORT gas_status_t gas_reduce_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op, int root,
                                      gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_reduce_nb", api_reduce_nb(team, dst, src, count, type, op, root, handle_p));
}

static gas_status_t api_allreduce(gas_team_t team, void *dst, const void *src, size_t count,
                                  gas_dtype_t type, gas_redop_t op)
{
    return reduction("gas_allreduce", GAS_COLL_ALLREDUCE, team, dst, src, count, type, op, -1, 0,
                     NULL);
}

GAS_EXPORT gas_status_t gas_allreduce(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op)
{
    GAS_GS_GATED("gas_allreduce", api_allreduce(team, dst, src, count, type, op));
}

static gas_status_t api_allreduce_nb(gas_team_t team, void *dst, const void *src,
                                     size_t count, gas_dtype_t type, gas_redop_t op,
                                     gas_handle_t *handle_p)
{
    return reduction("gas_allreduce_nb", GAS_COLL_ALLREDUCE, team, dst, src, count, type, op, -1,
                     1, handle_p);
}

GAS_EXPORT gas_status_t gas_allreduce_nb(gas_team_t team, void *dst, const void *src,
                                         size_t count, gas_dtype_t type, gas_redop_t op,
                                         gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_allreduce_nb", api_allreduce_nb(team, dst, src, count, type, op, handle_p));
}

static gas_status_t reduce_scatter_in(const char *name, gas_team_t team, void *dst,
                                      const void *src, size_t count, gas_dtype_t type,
                                      gas_redop_t op, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = GAS_COLL_REDUCE_SCATTER, .type = type,
                     .op = op, .reduces = 1, .root = -1, .hashcount = count, .nb = nb};
    size_t all = 0;
    gas_status_t st = check_blocks(&c, count, &all);
    if (st != GAS_OK)
        return st;
    if (src == GAS_IN_PLACE)
        src = dst;   /* dst holds all the input */
    if ((st = need(&c, src, all, "src")) != GAS_OK ||
        (st = need(&c, dst, c.bytes, "dst")) != GAS_OK)
        return st;
    c.a = (struct gas_co_args){.dst = dst, .src = src, .count = count, .es = c.a.es};
    return launch(&c, handle_p);
}

static gas_status_t reduce_scatter(const char *name, gas_team_t team, void *dst, const void *src,
                                   size_t count, gas_dtype_t type, gas_redop_t op, int nb,
                                   gas_handle_t *handle_p)
{
    handle_clear(handle_p);
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, reduce_scatter_in(name, team, dst, src, count,
                                                                    type, op, nb, handle_p));
}

static gas_status_t api_reduce_scatter(gas_team_t team, void *dst, const void *src,
                                       size_t count, gas_dtype_t type, gas_redop_t op)
{
    return reduce_scatter("gas_reduce_scatter", team, dst, src, count, type, op, 0, NULL);
}

GAS_EXPORT gas_status_t gas_reduce_scatter(gas_team_t team, void *dst, const void *src,
                                           size_t count, gas_dtype_t type, gas_redop_t op)
{
    GAS_GS_GATED("gas_reduce_scatter", api_reduce_scatter(team, dst, src, count, type, op));
}

static gas_status_t api_reduce_scatter_nb(gas_team_t team, void *dst, const void *src,
                                          size_t count, gas_dtype_t type, gas_redop_t op,
                                          gas_handle_t *handle_p)
{
    return reduce_scatter("gas_reduce_scatter_nb", team, dst, src, count, type, op, 1, handle_p);
}

GAS_EXPORT gas_status_t gas_reduce_scatter_nb(gas_team_t team, void *dst, const void *src,
                                              size_t count, gas_dtype_t type, gas_redop_t op,
                                              gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_reduce_scatter_nb",
                 api_reduce_scatter_nb(team, dst, src, count, type, op, handle_p));
}

/* scan and exscan: the checks and in-place forms of allreduce (reduction_in). */
GAS_EXPORT gas_status_t gas_scan(gas_team_t team, void *dst, const void *src, size_t count,
                                 gas_dtype_t type, gas_redop_t op)
{
    GAS_GS_GATED("gas_scan", reduction("gas_scan", GAS_COLL_SCAN, team, dst, src, count, type,
                                       op, -1, 0, NULL));
}

GAS_EXPORT gas_status_t gas_scan_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                    gas_dtype_t type, gas_redop_t op, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_scan_nb", reduction("gas_scan_nb", GAS_COLL_SCAN, team, dst, src, count,
                                          type, op, -1, 1, handle_p));
}

GAS_EXPORT gas_status_t gas_exscan(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, gas_redop_t op)
{
    GAS_GS_GATED("gas_exscan", reduction("gas_exscan", GAS_COLL_EXSCAN, team, dst, src, count,
                                         type, op, -1, 0, NULL));
}

GAS_EXPORT gas_status_t gas_exscan_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_exscan_nb", reduction("gas_exscan_nb", GAS_COLL_EXSCAN, team, dst, src,
                                            count, type, op, -1, 1, handle_p));
}

/* allgather, gather (root >= 0), alltoall, scatter: blocks of count elements. */
static gas_status_t blocked_in(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                               const void *src, size_t count, gas_dtype_t type, int rooted,
                               int root, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = coll, .type = type, .rooted = rooted,
                     .root = rooted ? root : -1, .hashcount = count, .nb = nb};
    size_t all = 0;
    gas_status_t st = check_blocks(&c, count, &all);
    if (st != GAS_OK)
        return st;
    int me = team->rank, is_root = !rooted || me == root;
    size_t dst_bytes = coll == GAS_COLL_SCATTER ? c.bytes : is_root ? all : 0;
    size_t src_bytes = coll == GAS_COLL_ALLTOALL || (coll == GAS_COLL_SCATTER && is_root)
                           ? all : coll == GAS_COLL_SCATTER ? 0 : c.bytes;
    if (src == GAS_IN_PLACE) {
        if (coll == GAS_COLL_SCATTER || (coll == GAS_COLL_GATHER && !is_root))
            return refuse(&c, gas_rt_error(GAS_ERR_INVALID, name,
                                           "GAS_IN_PLACE is not allowed here (%s)",
                                           coll == GAS_COLL_SCATTER
                                               ? "scatter has no in-place form"
                                               : "only the root of a gather has a dst"));
        src = (const char *)dst + (coll == GAS_COLL_ALLTOALL ? 0 : (size_t)me * c.bytes);
    }
    if ((st = need(&c, dst, dst_bytes, "dst")) != GAS_OK ||
        (st = need(&c, src, src_bytes, "src")) != GAS_OK)
        return st;
    c.a.dst = dst;
    c.a.src = src;
    c.a.count = count;
    if (coll == GAS_COLL_ALLTOALL && src == dst && all > 0) {
        /* in place: the input is copied aside first */
        int alg = gas_co_select(coll, c.bytes, team->size, team->nnodes, team->cpus_shared, 0);
        struct gas_co_sched *s = gas_co_sched_new(name, team, coll, alg, type, 0, count, -1);
        if (s == NULL)
            return refuse(&c, GAS_ERR_NOMEM);
        char *copy = gas_co_tmp(s, all);
        if (copy) {
            memcpy(copy, dst, all);
            c.a.src = copy;
        }
        struct gas_co_grp g = {.n = team->size, .me = me, .map = NULL};
        gas_co_builder(coll, alg)(s, &g, &c.a);
        return run_built(&c, s, handle_p);
    }
    return launch(&c, handle_p);
}

static gas_status_t blocked(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                            const void *src, size_t count, gas_dtype_t type, int rooted, int root,
                            int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p);
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, blocked_in(name, coll, team, dst, src, count,
                                                             type, rooted, root, nb, handle_p));
}

static gas_status_t api_allgather(gas_team_t team, void *dst, const void *src, size_t count,
                                  gas_dtype_t type)
{
    return blocked("gas_allgather", GAS_COLL_ALLGATHER, team, dst, src, count, type, 0, 0, 0, NULL);
}

GAS_EXPORT gas_status_t gas_allgather(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type)
{
    GAS_GS_GATED("gas_allgather", api_allgather(team, dst, src, count, type));
}

GAS_EXPORT gas_status_t gas_allgather_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                         gas_dtype_t type, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_allgather_nb",
                 blocked("gas_allgather_nb", GAS_COLL_ALLGATHER, team, dst, src, count, type, 0,
                         0, 1, handle_p));
}

static gas_status_t api_alltoall(gas_team_t team, void *dst, const void *src, size_t count,
                                 gas_dtype_t type)
{
    return blocked("gas_alltoall", GAS_COLL_ALLTOALL, team, dst, src, count, type, 0, 0, 0, NULL);
}

GAS_EXPORT gas_status_t gas_alltoall(gas_team_t team, void *dst, const void *src, size_t count,
                                     gas_dtype_t type)
{
    GAS_GS_GATED("gas_alltoall", api_alltoall(team, dst, src, count, type));
}

GAS_EXPORT gas_status_t gas_alltoall_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                        gas_dtype_t type, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_alltoall_nb",
                 blocked("gas_alltoall_nb", GAS_COLL_ALLTOALL, team, dst, src, count, type, 0,
                         0, 1, handle_p));
}

static gas_status_t api_gather(gas_team_t team, void *dst, const void *src, size_t count,
                               gas_dtype_t type, int root)
{
    return blocked("gas_gather", GAS_COLL_GATHER, team, dst, src, count, type, 1, root, 0, NULL);
}

GAS_EXPORT gas_status_t gas_gather(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, int root)
{
    GAS_GS_GATED("gas_gather", api_gather(team, dst, src, count, type, root));
}

GAS_EXPORT gas_status_t gas_gather_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_gather_nb",
                 blocked("gas_gather_nb", GAS_COLL_GATHER, team, dst, src, count, type, 1,
                         root, 1, handle_p));
}

static gas_status_t api_scatter(gas_team_t team, void *dst, const void *src, size_t count,
                                gas_dtype_t type, int root)
{
    return blocked("gas_scatter", GAS_COLL_SCATTER, team, dst, src, count, type, 1, root, 0, NULL);
}

GAS_EXPORT gas_status_t gas_scatter(gas_team_t team, void *dst, const void *src, size_t count,
                                    gas_dtype_t type, int root)
{
    GAS_GS_GATED("gas_scatter", api_scatter(team, dst, src, count, type, root));
}

GAS_EXPORT gas_status_t gas_scatter_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                       gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_scatter_nb",
                 blocked("gas_scatter_nb", GAS_COLL_SCATTER, team, dst, src, count, type, 1,
                         root, 1, handle_p));
}

/* Sum of counts[i] * es and packed displacements when displs is NULL. */
static gas_status_t vector(struct call *c, const size_t *counts, const size_t *displs,
                           const char *what, size_t **displs_p, size_t *total_p,
                           struct gas_co_sched *s)
{
    int n = c->team->size;
    size_t es = gas_dtype_size(c->type), end = 0;
    const char *sp = what[0] ? " " : "";
    if (counts == NULL)
        return gas_rt_error(GAS_ERR_INVALID, c->name, "%s%scounts is NULL", what, sp);
    size_t *d = (size_t *)displs;
    if (d == NULL && (d = gas_co_tmp(s, (size_t)n * sizeof *d)) == NULL)
        return s->status;
    size_t packed = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > SIZE_MAX / es || packed > SIZE_MAX - counts[i])
            return gas_rt_error(GAS_ERR_OVERFLOW, c->name, "%s%scounts overflow", what, sp);
        if (displs == NULL)
            d[i] = packed;
        packed += counts[i];
        if (d[i] > SIZE_MAX / es - counts[i]) {
            if (displs == NULL)   /* (packed: the blocks' running sum) */
                return gas_rt_error(GAS_ERR_OVERFLOW, c->name, "%s%scounts overflow (their "
                                    "sum times the element size, displs being NULL)", what, sp);
            return gas_rt_error(GAS_ERR_OVERFLOW, c->name, "%s%sdispls[%d] + counts overflow",
                                what, sp, i);
        }
        if (d[i] + counts[i] > end)
            end = d[i] + counts[i];
    }
    *displs_p = d;
    *total_p = end * es;
    return GAS_OK;
}

/*
 * The signature's stand-in for the count of a call whose counts vector is
 * the same on every member (allgatherv, gatherv, scatterv): a hash of it, so
 * a member with other counts is a mismatch even where blocks travel merged.
 */
static uint64_t counts_hash(const size_t *counts, int n)
{
    uint64_t hc = 0x616c6c6761746876ull;
    for (int i = 0; i < n; i++)
        hc = (hc ^ counts[i]) * 0x100000001b3ull;
    return hc;
}

/* The largest of n counts (the algorithm is chosen on it: the same on every member). */
static size_t counts_max(const size_t *counts, int n)
{
    size_t largest = 0;
    for (int i = 0; i < n; i++)
        largest = counts[i] > largest ? counts[i] : largest;
    return largest;
}

/*
 * The start of a call with a count per member (allgatherv, gatherv,
 * scatterv): the common checks, counts, the algorithm chosen on the
 * largest block (the same on every member) into *alg_p, and the call's
 * schedule; NULL with *st_p when the call is refused.
 */
static struct gas_co_sched *counted_sched(struct call *c, const size_t *counts, int *alg_p,
                                          gas_status_t *st_p)
{
    gas_team_t team = c->team;
    if ((*st_p = check_common(c)) != GAS_OK)
        return NULL;
    if (counts == NULL) {
        *st_p = refuse(c, gas_rt_error(GAS_ERR_INVALID, c->name, "counts is NULL"));
        return NULL;
    }
    if ((*st_p = bytes_of(c, counts_max(counts, team->size), 1, &c->bytes)) != GAS_OK)
        return NULL;
    *alg_p = gas_co_select(c->coll, c->bytes, team->size, team->nnodes, team->cpus_shared, 0);
    struct gas_co_sched *s = gas_co_sched_new(c->name, team, c->coll, *alg_p, c->type, 0,
                                              counts_hash(counts, team->size), c->root);
    if (s == NULL)
        *st_p = refuse(c, GAS_ERR_NOMEM);
    return s;
}

static gas_status_t allgatherv_in(const char *name, gas_team_t team, void *dst,
                                  const void *src, const size_t *counts, const size_t *displs,
                                  gas_dtype_t type, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = GAS_COLL_ALLGATHERV, .type = type,
                     .root = -1, .nb = nb};
    int alg;
    gas_status_t st;
    struct gas_co_sched *s = counted_sched(&c, counts, &alg, &st);
    if (s == NULL)
        return st;
    size_t *d = NULL, total = 0, es = c.a.es, mine = counts[team->rank] * es;
    st = refuse(&c, vector(&c, counts, displs, "", &d, &total, s));
    if (st == GAS_OK && src == GAS_IN_PLACE)
        src = (char *)dst + d[team->rank] * es;
    if (st == GAS_OK && (st = need(&c, dst, total, "dst")) == GAS_OK)
        st = need(&c, src, mine, "src");
    if (st != GAS_OK) {
        gas_co_sched_free(s);
        return st;
    }
    c.a = (struct gas_co_args){.dst = dst, .src = src, .es = es, .counts = counts, .displs = d};
    struct gas_co_grp g = {.n = team->size, .me = team->rank, .map = NULL};
    gas_co_builder(c.coll, alg)(s, &g, &c.a);
    return run_built(&c, s, handle_p);
}

static gas_status_t allgatherv(const char *name, gas_team_t team, void *dst, const void *src,
                               const size_t *counts, const size_t *displs, gas_dtype_t type,
                               int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p);
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, allgatherv_in(name, team, dst, src, counts,
                                                                displs, type, nb, handle_p));
}

static gas_status_t api_allgatherv(gas_team_t team, void *dst, const void *src,
                                   const size_t *counts, const size_t *displs,
                                   gas_dtype_t type)
{
    return allgatherv("gas_allgatherv", team, dst, src, counts, displs, type, 0, NULL);
}

GAS_EXPORT gas_status_t gas_allgatherv(gas_team_t team, void *dst, const void *src,
                                       const size_t *counts, const size_t *displs,
                                       gas_dtype_t type)
{
    GAS_GS_GATED("gas_allgatherv", api_allgatherv(team, dst, src, counts, displs, type));
}

static gas_status_t api_allgatherv_nb(gas_team_t team, void *dst, const void *src,
                                      const size_t *counts, const size_t *displs,
                                      gas_dtype_t type, gas_handle_t *handle_p)
{
    return allgatherv("gas_allgatherv_nb", team, dst, src, counts, displs, type, 1, handle_p);
}

GAS_EXPORT gas_status_t gas_allgatherv_nb(gas_team_t team, void *dst, const void *src,
                                          const size_t *counts, const size_t *displs,
                                          gas_dtype_t type, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_allgatherv_nb",
                 api_allgatherv_nb(team, dst, src, counts, displs, type, handle_p));
}

/* gatherv (GAS_COLL_GATHERV) and scatterv: variable blocks to or from the root. */
static gas_status_t rootedv_in(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                               const void *src, const size_t *counts, const size_t *displs,
                               gas_dtype_t type, int root, int nb, gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = coll, .type = type, .rooted = 1,
                     .root = root, .nb = nb};
    int alg;
    gas_status_t st;
    struct gas_co_sched *s = counted_sched(&c, counts, &alg, &st);
    if (s == NULL)
        return st;
    int me = team->rank, is_root = me == root, gathers = coll == GAS_COLL_GATHERV;
    size_t *d = NULL, total = 0, es = c.a.es, mine = counts[me] * es;
    /* displs is the root's alone: elsewhere the vector is checked as packed, so a sum of
     * counts that overflows is refused on every member, the root's displs only there */
    st = refuse(&c, vector(&c, counts, is_root ? displs : NULL, "", &d, &total, s));
    int in_place = st == GAS_OK && src == GAS_IN_PLACE;
    if (in_place && !is_root)
        st = refuse(&c, gas_rt_error(GAS_ERR_INVALID, name, "GAS_IN_PLACE is for the root only "
                                     "(only it has the whole vector)"));
    else if (in_place)   /* the root's block stays where it is, in dst at displs[root] */
        src = gathers ? (char *)dst + d[me] * es : dst;
    if (st == GAS_OK && gathers && is_root)
        st = need(&c, dst, total, "dst");
    else if (st == GAS_OK && !gathers)
        st = need(&c, dst, in_place ? total : mine, "dst");
    if (st == GAS_OK && (gathers || is_root))
        st = need(&c, src, gathers ? mine : total, "src");
    if (st != GAS_OK) {
        gas_co_sched_free(s);
        return st;
    }
    c.a = (struct gas_co_args){.dst = dst, .src = src, .es = es, .root = root, .counts = counts,
                               .displs = d};
    if (in_place && !gathers)
        c.a.dst = (char *)dst + d[me] * es;   /* scatterv: the root's own copy is then none */
    struct gas_co_grp g = {.n = team->size, .me = me, .map = NULL};
    gas_co_builder(coll, alg)(s, &g, &c.a);
    return run_built(&c, s, handle_p);
}

static gas_status_t rootedv(const char *name, gas_coll_t coll, gas_team_t team, void *dst,
                            const void *src, const size_t *counts, const size_t *displs,
                            gas_dtype_t type, int root, int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p);
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, rootedv_in(name, coll, team, dst, src, counts,
                                                             displs, type, root, nb, handle_p));
}

GAS_EXPORT gas_status_t gas_gatherv(gas_team_t team, void *dst, const void *src,
                                    const size_t *counts, const size_t *displs,
                                    gas_dtype_t type, int root)
{
    GAS_GS_GATED("gas_gatherv", rootedv("gas_gatherv", GAS_COLL_GATHERV, team, dst, src, counts,
                                        displs, type, root, 0, NULL));
}

GAS_EXPORT gas_status_t gas_gatherv_nb(gas_team_t team, void *dst, const void *src,
                                       const size_t *counts, const size_t *displs,
                                       gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_gatherv_nb", rootedv("gas_gatherv_nb", GAS_COLL_GATHERV, team, dst, src,
                                           counts, displs, type, root, 1, handle_p));
}

GAS_EXPORT gas_status_t gas_scatterv(gas_team_t team, void *dst, const void *src,
                                     const size_t *counts, const size_t *displs,
                                     gas_dtype_t type, int root)
{
    GAS_GS_GATED("gas_scatterv", rootedv("gas_scatterv", GAS_COLL_SCATTERV, team, dst, src,
                                         counts, displs, type, root, 0, NULL));
}

GAS_EXPORT gas_status_t gas_scatterv_nb(gas_team_t team, void *dst, const void *src,
                                        const size_t *counts, const size_t *displs,
                                        gas_dtype_t type, int root, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_scatterv_nb", rootedv("gas_scatterv_nb", GAS_COLL_SCATTERV, team, dst, src,
                                            counts, displs, type, root, 1, handle_p));
}

static gas_status_t alltoallv_in(const char *name, gas_team_t team, void *dst,
                                 const size_t *dst_counts, const size_t *dst_displs,
                                 const void *src, const size_t *src_counts,
                                 const size_t *src_displs, gas_dtype_t type, int nb,
                                 gas_handle_t *handle_p)
{
    struct call c = {.name = name, .team = team, .coll = GAS_COLL_ALLTOALLV, .type = type,
                     .root = -1, .nb = nb};
    gas_status_t st = check_common(&c);
    if (st != GAS_OK)
        return st;
    /* counts differ per rank: the table is consulted for size 0 so all agree */
    int alg = gas_co_select(c.coll, 0, team->size, team->nnodes, team->cpus_shared, 0);
    struct gas_co_sched *s = gas_co_sched_new(c.name, team, c.coll, alg, type, 0, 0, -1);
    if (s == NULL)
        return refuse(&c, GAS_ERR_NOMEM);
    size_t *rd = NULL, *sd = NULL, rtotal = 0, stotal = 0;
    st = vector(&c, dst_counts, dst_displs, "dst", &rd, &rtotal, s);
    if (st == GAS_OK)
        st = vector(&c, src_counts, src_displs, "src", &sd, &stotal, s);
    if (st == GAS_OK && src == GAS_IN_PLACE)
        st = gas_rt_error(GAS_ERR_INVALID, c.name, "%s has no in-place form", c.name);
    st = refuse(&c, st);
    if (st == GAS_OK && (st = need(&c, dst, rtotal, "dst")) == GAS_OK)
        st = need(&c, src, stotal, "src");
    if (st != GAS_OK) {
        gas_co_sched_free(s);
        return st;
    }
    c.a = (struct gas_co_args){.dst = dst, .src = src, .es = c.a.es, .counts = dst_counts,
                               .displs = rd, .scounts = src_counts, .sdispls = sd};
    struct gas_co_grp g = {.n = team->size, .me = team->rank, .map = NULL};
    gas_co_builder(c.coll, alg)(s, &g, &c.a);
    return run_built(&c, s, handle_p);
}

static gas_status_t alltoallv(const char *name, gas_team_t team, void *dst,
                              const size_t *dst_counts, const size_t *dst_displs, const void *src,
                              const size_t *src_counts, const size_t *src_displs,
                              gas_dtype_t type, int nb, gas_handle_t *handle_p)
{
    handle_clear(handle_p);
    gas_status_t st = gas_co_call_enter(name, team);
    return st != GAS_OK ? st
                        : gas_co_call_leave(team, alltoallv_in(name, team, dst, dst_counts,
                                                               dst_displs, src, src_counts,
                                                               src_displs, type, nb, handle_p));
}

static gas_status_t api_alltoallv(gas_team_t team, void *dst, const size_t *dst_counts,
                                  const size_t *dst_displs, const void *src,
                                  const size_t *src_counts, const size_t *src_displs,
                                  gas_dtype_t type)
{
    return alltoallv("gas_alltoallv", team, dst, dst_counts, dst_displs, src, src_counts,
                     src_displs, type, 0, NULL);
}

GAS_EXPORT gas_status_t gas_alltoallv(gas_team_t team, void *dst, const size_t *dst_counts,
                                      const size_t *dst_displs, const void *src,
                                      const size_t *src_counts, const size_t *src_displs,
                                      gas_dtype_t type)
{
    GAS_GS_GATED("gas_alltoallv",
                 api_alltoallv(team, dst, dst_counts, dst_displs, src, src_counts, src_displs, type));
}

static gas_status_t api_alltoallv_nb(gas_team_t team, void *dst, const size_t *dst_counts,
                                     const size_t *dst_displs, const void *src,
                                     const size_t *src_counts, const size_t *src_displs,
                                     gas_dtype_t type, gas_handle_t *handle_p)
{
    return alltoallv("gas_alltoallv_nb", team, dst, dst_counts, dst_displs, src, src_counts,
                     src_displs, type, 1, handle_p);
}

GAS_EXPORT gas_status_t gas_alltoallv_nb(gas_team_t team, void *dst, const size_t *dst_counts,
                                         const size_t *dst_displs, const void *src,
                                         const size_t *src_counts, const size_t *src_displs,
                                         gas_dtype_t type, gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_alltoallv_nb", api_alltoallv_nb(team, dst, dst_counts, dst_displs, src,
                                                      src_counts, src_displs, type, handle_p));
}

/* For team creation: an allgather of `bytes` bytes per rank. */
gas_status_t gas_co_allgather_bytes(const char *call, gas_team_t t, void *dst, const void *src,
                                    size_t bytes)
{
    struct call c = {.name = call, .team = t, .coll = GAS_COLL_ALLGATHER, .type = GAS_UINT8,
                     .root = -1, .hashcount = bytes, .bytes = bytes};
    c.a = (struct gas_co_args){.dst = dst, .src = src, .count = bytes, .es = 1};
    return launch(&c, NULL);
}
