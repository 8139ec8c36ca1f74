/*
 * alg_hier.c - hierarchical algorithms for teams that span several nodes:
 * a node-local stage (over shared memory), then one rank per node across
 * the network, then node-local again.  Each stage picks its own algorithm
 * from the tuning table for its group's shape (a node: one node; the
 * leaders: several).
 *
 *  barrier     members report to their node's leader, leaders run a
 *              barrier, leaders release their members
 *  broadcast   root's leader group broadcast, then one per node
 *  reduce      reduce to each node's leader, then over the leaders to root
 *  allreduce   reduce to each node's leader, allreduce over the leaders,
 *              broadcast in each node
 *
 * A node's leader is its first member in team order, except on the root's
 * node in rooted collectives, where the root leads.
 */
#include "coll.h"

struct hier {
    struct gas_co_grp node;     /* my node's members */
    struct gas_co_grp leaders;  /* one per node; me = my node's index if I lead it */
    int local_root;             /* index in node of my node's leader */
    int root_node;              /* node of the root (rooted collectives) */
};

/* Groups for team t; root is a team rank, or -1 for unrooted collectives. */
static gas_status_t groups(struct gas_co_sched *s, int root, struct hier *h)
{
    gas_team_t t = s->team;
    int node = t->node_of[t->rank];
    int *lead = gas_co_tmp(s, (size_t)t->nnodes * sizeof *lead);
    if (lead == NULL)
        return s->status;
    for (int i = 0; i < t->nnodes; i++)
        lead[i] = t->leaders[i];
    h->root_node = root >= 0 ? t->node_of[root] : -1;
    if (root >= 0)
        lead[h->root_node] = root;
    const int *mem = t->node_members + t->node_start[node];
    int cnt = t->node_start[node + 1] - t->node_start[node];
    h->node = (struct gas_co_grp){.n = cnt, .me = -1, .map = mem};
    h->local_root = 0;
    for (int i = 0; i < cnt; i++) {
        if (mem[i] == t->rank)
            h->node.me = i;
        if (mem[i] == lead[node])
            h->local_root = i;
    }
    h->leaders = (struct gas_co_grp){.n = t->nnodes, .me = lead[node] == t->rank ? node : -1,
                                     .map = lead};
    return GAS_OK;
}

/* The groups, the message's bytes and a copy of the arguments to adjust per stage. */
static gas_status_t stage_args(struct gas_co_sched *s, int root, const struct gas_co_args *a,
                               struct hier *h, struct gas_co_args *b, size_t *bytes_p)
{
    *b = *a;
    *bytes_p = a->count * a->es;
    return groups(s, root, h);
}

gas_status_t gas_co_barrier_hier(struct gas_co_sched *s, const struct gas_co_grp *g,
                                 const struct gas_co_args *a)
{
    struct hier h;
    if (groups(s, -1, &h) != GAS_OK)
        return s->status;
    s->quiet_first = 1;
    int leader = h.node.map[h.local_root];
    if (h.leaders.me < 0) {
        gas_co_send(s, leader, NULL, 0);
        gas_co_round(s);
        gas_co_recv(s, leader, NULL, 0);
        gas_co_round(s);
        return GAS_OK;
    }
    for (int i = 0; i < h.node.n; i++)
        if (i != h.node.me)
            gas_co_recv(s, h.node.map[i], NULL, 0);
    gas_co_round(s);
    gas_status_t st = gas_co_build_sub(s, GAS_COLL_BARRIER, &h.leaders, a, 0, 1);
    for (int i = 0; i < h.node.n; i++)
        if (i != h.node.me)
            gas_co_send(s, h.node.map[i], NULL, 0);
    gas_co_round(s);
    return st;
}

gas_status_t gas_co_bcast_hier(struct gas_co_sched *s, const struct gas_co_grp *g,
                               const struct gas_co_args *a)
{
    struct hier h;
    struct gas_co_args b;
    size_t bytes;
    if (stage_args(s, a->root, a, &h, &b, &bytes) != GAS_OK)
        return s->status;
    gas_status_t st = GAS_OK;
    if (h.leaders.me >= 0) {
        b.root = h.root_node;
        st = gas_co_build_sub(s, GAS_COLL_BROADCAST, &h.leaders, &b, bytes, 1);
        gas_co_round(s);
    }
    b.root = h.local_root;
    if (st == GAS_OK)
        st = gas_co_build_sub(s, GAS_COLL_BROADCAST, &h.node, &b, bytes, 0);
    return st;
}

gas_status_t gas_co_reduce_hier(struct gas_co_sched *s, const struct gas_co_grp *g,
                                const struct gas_co_args *a)
{
    struct hier h;
    struct gas_co_args b;
    size_t bytes;
    if (stage_args(s, a->root, a, &h, &b, &bytes) != GAS_OK)
        return s->status;
    int is_root = s->team->rank == a->root;
    /* node stage: into dst at the root, a temporary at the other leaders */
    if (h.leaders.me >= 0 && !is_root && (b.dst = gas_co_tmp(s, bytes)) == NULL)
        return s->status;
    b.root = h.local_root;
    gas_status_t st = gas_co_build_sub(s, GAS_COLL_REDUCE, &h.node, &b, bytes, 0);
    if (st == GAS_OK && h.leaders.me >= 0) {
        gas_co_round(s);
        b.src = b.dst;
        b.dst = is_root ? a->dst : NULL;
        b.root = h.root_node;
        st = gas_co_build_sub(s, GAS_COLL_REDUCE, &h.leaders, &b, bytes, 1);
    }
    return st;
}

gas_status_t gas_co_allreduce_hier(struct gas_co_sched *s, const struct gas_co_grp *g,
                                   const struct gas_co_args *a)
{
    struct hier h;
    struct gas_co_args b;
    size_t bytes;
    if (stage_args(s, -1, a, &h, &b, &bytes) != GAS_OK)
        return s->status;
    b.root = h.local_root;
    gas_status_t st = gas_co_build_sub(s, GAS_COLL_REDUCE, &h.node, &b, bytes, 0);
    gas_co_round(s);
    if (st == GAS_OK && h.leaders.me >= 0) {
        b.src = a->dst;
        st = gas_co_build_sub(s, GAS_COLL_ALLREDUCE, &h.leaders, &b, bytes, 1);
        gas_co_round(s);
    }
    b.root = h.local_root;
    if (st == GAS_OK)
        st = gas_co_build_sub(s, GAS_COLL_BROADCAST, &h.node, &b, bytes, 0);
    return st;
}
