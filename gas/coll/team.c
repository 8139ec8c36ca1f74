/*
 * team.c - teams: the world team, splits (strided, color/key, node), rank
 * translation and destroy.
 *
 * Scratch: every member of a team keeps a slot for it in its segment (see
 * chan.c for the layout), about GAS_COLL_SCRATCH bytes, backed when used.
 * The world team's slot comes from the symmetric heap at gas_init (the same
 * offset everywhere).  A split's members take theirs from the gas_alloc
 * arenas, zero its counters, and only then publish its offset to the other
 * members (a second gather over the parent), so nothing can arrive in a
 * slot before it is clean.  gas_team_destroy frees the slot after a barrier
 * that ends all traffic of the team.
 */
#include "coll.h"
#include "alloc/arena_fast.h"
#include "runtime/config.h"
#include "runtime/node.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GAS_EXPORT gas_team_t gas_team_world_;
gas_team_t *gas_co_live;
size_t gas_co_nlive;
/* Readers: gas_co_progress_all, from any thread's wait.  Writers (the one
 * thread making this rank's collective calls): adding a team, and removing
 * one before it is freed, so no reader still holds it.  Reader-preferring
 * (glibc's default), so a reader's nested wait may read-lock again. */
pthread_rwlock_t gas_co_live_lock = PTHREAD_RWLOCK_INITIALIZER;
static size_t live_cap;
/* The pending list (coll.h): room for live_cap teams, so adding never fails.
 * Under pending_lock; npending is also read unlocked (gas_co_pending_none). */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static gas_team_t *pending;
static size_t npending;
uint64_t gas_co_scratch, gas_co_zcopy_min, gas_co_test_pump_delay, gas_co_test_note_delay;

gas_status_t gas_co_team_check(const char *call, gas_team_t team)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if (team == GAS_TEAM_NULL)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "the team is GAS_TEAM_NULL (this rank is not in that team)");
    if (!gas_co_team_live(team))
        return gas_rt_error(GAS_ERR_INVALID, call, "the team is not a live team of this rank "
                                                   "(destroyed?)");
    return GAS_OK;
}

gas_status_t gas_co_call_enter(const char *call, gas_team_t t)
{
    gas_status_t st = gas_co_team_check(call, t);
    if (st != GAS_OK)
        return st;
    if (__atomic_exchange_n(&t->in_call, 1, __ATOMIC_ACQUIRE) == 0)
        return GAS_OK;
    char team[64] = "the world team";
    if (t != gas_team_world_)
        snprintf(team, sizeof team, "a team of %d (this rank is its rank %d)", t->size, t->rank);
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "another thread of this rank is inside a collective call on %s; the "
                        "collective calls of a team must be made by one thread per rank, one at "
                        "a time (this call did nothing)", team);
}

gas_status_t gas_co_call_leave(gas_team_t t, gas_status_t st)
{
    __atomic_store_n(&t->in_call, 0, __ATOMIC_RELEASE);
    return st;
}

gas_status_t gas_co_peer(gas_team_t t, int r, gas_tl_peer_t **peer_p, const char *call)
{
    if (t->peers[r]) {
        *peer_p = t->peers[r];
        return GAS_OK;
    }
    gas_status_t st = gas_tl_peer_for(call, t->world[r], peer_p);
    if (st == GAS_OK)
        t->peers[r] = *peer_p;
    return st;
}

/* This rank's node, as collectives group ranks (GAS_TEST_NODE_SIZE can pretend). */
static uint64_t my_node(void)
{
    uint64_t fake = gas_rt_config_size(GAS_CFG_TEST_NODE_SIZE);
    if (fake)
        return 0x6e6f6465ull << 32 | (uint64_t)gas_gs.rank / fake;
    return gas_rt_node_id();
}

static void team_free(gas_team_t t)
{
    if (t == NULL)
        return;
    __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);   /* dead to checks from here on */
    if (t->mem)
        gas_al_arena_free(t->mem);
    free(t->poff);
    free(t->world);
    free(t->inv);
    free(t->sent);
    free(t->peers);
    free(t->held_send);
    free(t->node_of);
    free(t->node_members);
    free(t->node_start);
    free(t->leaders);
    free(t->relay_owed);
    gas_co_team_dispose(t);
}

/* Group the members by node (node ids in team order). */
static gas_status_t set_nodes(gas_team_t t, const uint64_t *node_ids)
{
    int P = t->size, nn = 0;
    int *first = malloc((size_t)P * sizeof *first);
    int *count = calloc((size_t)P, sizeof *count);
    free(t->node_of);
    free(t->node_members);
    free(t->node_start);
    free(t->leaders);
    t->node_of = malloc((size_t)P * sizeof *t->node_of);
    t->node_members = malloc((size_t)P * sizeof *t->node_members);
    t->node_start = malloc(((size_t)P + 1) * sizeof *t->node_start);
    t->leaders = malloc((size_t)P * sizeof *t->leaders);
    if (!first || !count || !t->node_of || !t->node_members || !t->node_start || !t->leaders) {
        free(first);
        free(count);
        return GAS_ERR_NOMEM;
    }
    for (int r = 0; r < P; r++) {
        int n = 0;
        while (n < nn && node_ids[first[n]] != node_ids[r])
            n++;
        if (n == nn)
            first[nn++] = r;
        t->node_of[r] = n;
        count[n]++;
    }
    t->nnodes = nn;
    t->node_start[0] = 0;
    for (int n = 0; n < nn; n++) {
        t->node_start[n + 1] = t->node_start[n] + count[n];
        t->leaders[n] = first[n];
        count[n] = t->node_start[n];
    }
    for (int r = 0; r < P; r++)
        t->node_members[count[t->node_of[r]]++] = r;
    free(first);
    free(count);
    return GAS_OK;
}

/* Take pending[i] out of the pending list (pending_lock held). */
static void pending_drop(size_t i)
{
    pending[i]->pending = 0;
    size_t n = npending - 1;
    pending[i] = pending[n];
    __atomic_store_n(&npending, n, __ATOMIC_RELAXED);
}

void gas_co_pending_add(gas_team_t t)
{
    pthread_mutex_lock(&pending_lock);
    if (!t->pending) {
        t->pending = 1;
        pending[npending] = t;   /* room: t is live (live_add) */
        __atomic_store_n(&npending, npending + 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&pending_lock);
}

gas_team_t gas_co_pending_at(size_t i)
{
    gas_team_t t = NULL;
    if (i >= __atomic_load_n(&npending, __ATOMIC_RELAXED))
        return NULL;   /* the end of the walk, without the lock (a late add: the next look) */
    pthread_mutex_lock(&pending_lock);
    while (i < npending && __atomic_load_n(&pending[i]->qhead, __ATOMIC_ACQUIRE) == NULL)
        pending_drop(i);
    if (i < npending)
        t = pending[i];
    pthread_mutex_unlock(&pending_lock);
    return t;
}

int gas_co_pending_none(void)
{
    return __atomic_load_n(&npending, __ATOMIC_RELAXED) == 0;
}

/* Room for one more live team in both lists (the write lock held). */
static gas_status_t live_reserve(void)
{
    if (gas_co_nlive < live_cap)
        return GAS_OK;
    size_t ncap = live_cap ? 2 * live_cap : 16;
    gas_team_t *n = realloc(gas_co_live, ncap * sizeof *n);
    if (n == NULL)
        return GAS_ERR_NOMEM;
    gas_co_live = n;
    pthread_mutex_lock(&pending_lock);   /* gas_co_pending_at reads it under this lock */
    n = realloc(pending, ncap * sizeof *n);
    if (n != NULL)
        pending = n;
    pthread_mutex_unlock(&pending_lock);
    if (n == NULL)
        return GAS_ERR_NOMEM;
    live_cap = ncap;
    return GAS_OK;
}

static gas_status_t live_add(gas_team_t t)
{
    pthread_rwlock_wrlock(&gas_co_live_lock); /* the list may move */
    gas_status_t st = live_reserve();
    if (st == GAS_OK) {
        t->live_idx = gas_co_nlive;
        gas_co_live[gas_co_nlive++] = t;
    }
    pthread_rwlock_unlock(&gas_co_live_lock);
    return st;
}

/* Once this returns, no other thread's progress holds t: it may be freed.
 * O(1): the last live team takes t's place. */
static void live_remove(gas_team_t t)
{
    pthread_rwlock_wrlock(&gas_co_live_lock);
    size_t i = t->live_idx;
    if (i < gas_co_nlive && gas_co_live[i] == t) {
        gas_co_live[i] = gas_co_live[--gas_co_nlive];
        gas_co_live[i]->live_idx = i;
    }
    pthread_mutex_lock(&pending_lock);
    for (size_t k = 0; t->pending && k < npending; k++)
        if (pending[k] == t)
            pending_drop(k);
    pthread_mutex_unlock(&pending_lock);
    pthread_rwlock_unlock(&gas_co_live_lock);
}

/* A team struct for n members (world ranks), me my index; no slot yet. */
static gas_status_t team_alloc(const char *call, const int *members, int n, int me, int world,
                               gas_team_t *team_p)
{
    const char *why = "";
    gas_team_t t = gas_co_team_new(&why);
    if (t == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a team: %s", why);
    t->size = n;
    t->rank = me;
    t->left_from = -1;
    t->world = malloc((size_t)n * sizeof *t->world);
    t->poff = calloc((size_t)n, sizeof *t->poff);
    t->sent = calloc(5 * (size_t)n, sizeof *t->sent);
    t->peers = calloc((size_t)n, sizeof *t->peers);
    t->held_send = calloc(2 * (size_t)n, sizeof *t->held_send);
    if (!world)
        t->inv = malloc((size_t)gas_gs.nranks * sizeof *t->inv);
    if (!t->world || !t->poff || !t->sent || !t->peers || !t->held_send || (!world && !t->inv)) {
        team_free(t);
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a team of %d ranks", n);
    }
    t->recvd = t->sent + n;
    t->owed = t->sent + 2 * (size_t)n;
    t->msent = t->sent + 3 * (size_t)n;
    t->mrecvd = t->sent + 4 * (size_t)n;
    t->held_recv = t->held_send + n;
    memcpy(t->world, members, (size_t)n * sizeof *members);
    if (t->inv) {
        for (int w = 0; w < gas_gs.nranks; w++)
            t->inv[w] = -1;
        for (int r = 0; r < n; r++)
            t->inv[members[r]] = r;
    }
    *team_p = t;
    return GAS_OK;
}

/* Take a slot for t from the arenas and clean its counters; NULL when there is no room. */
static char *slot_alloc(gas_team_t t, uint64_t *off_p)
{
    uint64_t bytes = gas_co_chan_geometry(t);
    int why = 0;
    void *m = gas_al_arena_alloc(bytes + 64, &why);
    if (m == NULL)
        return NULL;
    char *base = (char *)(((uintptr_t)m + 63) & ~(uintptr_t)63);
    memset(base, 0, t->data_off);
    t->mem = m;
    t->base = base;
    *off_p = (uint64_t)(base - gas_gs.seg.base);
    return base;
}

/*
 * Which world ranks share their CPUs with more ranks of the job than those
 * CPUs number (gas_co_start_nodes; NULL before), and the team's cpus_shared
 * from it: 1 when any member does, or as GAS_COLL_CPUS forces.  Every member
 * has the same table, so all choose the same tuning-table rows.
 */
static uint8_t *world_cpus_shared;

static void set_cpus_shared(gas_team_t t)
{
    int forced = gas_rt_config_enum(GAS_CFG_COLL_CPUS); /* 0 auto, 1 own, 2 shared */
    t->cpus_shared = forced == 2;
    for (int r = 0; forced == 0 && world_cpus_shared && r < t->size; r++)
        t->cpus_shared |= world_cpus_shared[t->world[r]];
}

/* The team is complete: go live. */
static gas_status_t team_live(const char *call, gas_team_t t, const uint64_t *node_ids)
{
    gas_co_chan_attach(t);
    set_cpus_shared(t);
    if ((node_ids && set_nodes(t, node_ids) != GAS_OK) || live_add(t) != GAS_OK) {
        team_free(t);
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a team's tables");
    }
    gas_co_team_went_live(t);
    return GAS_OK;
}

gas_status_t gas_co_start(void)
{
    gas_co_scratch = gas_rt_config_size(GAS_CFG_COLL_SCRATCH);
    gas_co_zcopy_min = gas_rt_config_size(GAS_CFG_COLL_ZCOPY_MIN);
    gas_co_test_pump_delay = gas_rt_config_ns(GAS_CFG_TEST_COLL_PUMP_DELAY);
    gas_co_test_note_delay = gas_rt_config_ns(GAS_CFG_TEST_COLL_NOTE_DELAY);
    gas_status_t st = gas_co_select_init();
    if (st != GAS_OK)
        return st;
    int n = gas_gs.nranks;
    int *members = malloc((size_t)n * sizeof *members);
    if (members == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the world team");
    for (int r = 0; r < n; r++)
        members[r] = r;
    gas_team_t w = NULL;
    st = team_alloc("gas_init", members, n, gas_gs.rank, 1, &w);
    free(members);
    if (st != GAS_OK)
        return st;
    /* The world's slot: the same offset everywhere, from the symmetric heap. */
    uint64_t off = 0;
    st = gas_gs_sym_alloc("gas_init (the world team's scratch, GAS_COLL_SCRATCH)",
                          gas_co_chan_geometry(w), "GAS_COLL_SCRATCH", &off);
    if (st != GAS_OK) {
        team_free(w);
        return st;
    }
    for (int r = 0; r < n; r++)
        w->poff[r] = off;
    w->base = gas_gs.seg.base + off;
    if ((st = team_live("gas_init", w, NULL)) != GAS_OK)
        return st;
    gas_team_world_ = w;
    gas_rt_progress_register(gas_co_progress_all, GAS_RT_HOOK_ISSUES);
    return GAS_OK;
}

/* Defined in api.c: a byte allgather with the table's algorithm. */
gas_status_t gas_co_allgather_bytes(const char *call, gas_team_t t, void *dst, const void *src,
                                    size_t bytes);

/* Orders (CPU key, rank) pairs by key. */
static int by_cpu_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

gas_status_t gas_co_start_nodes(int *cpu_sharers_p, int *shares_p)
{
    gas_team_t w = gas_team_world_;
    int P = w->size;
    uint64_t me[3] = {my_node(), gas_rt_cpu_key(), (uint64_t)gas_rt_usable_cpus()};
    uint64_t *ids = malloc((size_t)P * sizeof me);
    uint64_t (*keys)[2] = malloc((size_t)P * sizeof *keys);   /* (CPU key, rank) */
    free(world_cpus_shared);
    world_cpus_shared = calloc((size_t)P, 1);
    if (ids == NULL || keys == NULL || world_cpus_shared == NULL) {
        free(ids);
        free(keys);
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the node table");
    }
    gas_status_t st = gas_co_allgather_bytes("gas_init", w, ids, me, sizeof me);
    /* Triples (node, CPU key, usable CPUs) by rank.  A rank shares its CPUs
     * when more ranks have its key (same machine boot and affinity) than it
     * has CPUs: each run of equal keys, once sorted, is one such group. */
    int sharers = 0, shares = 0;
    for (int r = 0; st == GAS_OK && r < P; r++) {
        keys[r][0] = ids[3 * r + 1];
        keys[r][1] = (uint64_t)r;
    }
    if (st == GAS_OK)
        qsort(keys, (size_t)P, sizeof *keys, by_cpu_key);
    for (int i = 0, j; st == GAS_OK && i < P; i = j) {
        for (j = i + 1; j < P && keys[j][0] == keys[i][0]; j++)
            ;
        for (int k = i; k < j; k++) {
            int r = (int)keys[k][1];
            world_cpus_shared[r] = (uint64_t)(j - i) > ids[3 * r + 2];
            if (r == w->rank) {
                sharers = j - i;
                shares = world_cpus_shared[r];
            }
        }
    }
    free(keys);
    /* The node ids packed to the front in place. */
    for (int r = 0; st == GAS_OK && r < P; r++)
        ids[r] = ids[3 * r];
    if (st == GAS_OK && set_nodes(w, ids) != GAS_OK)
        st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the node table");
    set_cpus_shared(w);
    *cpu_sharers_p = sharers > 0 ? sharers : 1;
    *shares_p = shares;
    free(ids);
    return st;
}

gas_status_t gas_co_check_ends(const char *call)
{
    gas_status_t first = GAS_OK;
    for (size_t i = 0; i < gas_co_nlive; i++) {
        gas_status_t st = gas_co_chan_leftover(gas_co_live[i], call);
        if (first == GAS_OK)
            first = st;
    }
    return first;
}

void gas_co_stop(void)
{
    /* The arenas go away with the segment: only the bookkeeping is freed. */
    pthread_rwlock_wrlock(&gas_co_live_lock);
    for (size_t i = 0; i < gas_co_nlive; i++) {
        gas_co_live[i]->mem = NULL;
        team_free(gas_co_live[i]);
    }
    free(gas_co_live);
    gas_co_live = NULL;
    gas_co_nlive = live_cap = 0;
    free(world_cpus_shared);
    world_cpus_shared = NULL;
    pthread_mutex_lock(&pending_lock);
    free(pending);
    pending = NULL;
    __atomic_store_n(&npending, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&pending_lock);
    pthread_rwlock_unlock(&gas_co_live_lock);
    gas_team_world_ = GAS_TEAM_NULL;
    gas_co_select_fini();
}

/* ------------------------------------------------------------------------ */
/* Splits                                                                    */
/* ------------------------------------------------------------------------ */

enum split_kind { SPLIT_STRIDED, SPLIT_COLOR, SPLIT_NODE };

struct split_rec {
    int32_t color, key;
    uint64_t hash;     /* of the arguments that must agree */
    uint64_t node;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static const int *sort_keys_;   /* key of each parent rank, for the qsort below */
static int by_key(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int kx = sort_keys_[x], ky = sort_keys_[y];
    return kx != ky ? (kx > ky) - (kx < ky) : (x > y) - (x < y);
}

static gas_status_t split_in(const char *call, gas_team_t parent, enum split_kind kind, int a,
                             int b, int c, gas_team_t *team_p)
{
    gas_status_t st = GAS_OK;
    int P = parent->size;
    const char *why = NULL;
    if (kind == SPLIT_STRIDED) {
        if (b < 1)
            why = "stride is below 1";
        else if (c < 1)
            why = "size is below 1";
        else if (a < 0 || a >= P)
            why = "start is not a rank of the parent team";
        else if ((int64_t)a + (int64_t)(c - 1) * b >= P)
            why = "the last member (start + (size-1) * stride) is not a rank of the parent team";
    } else if (kind == SPLIT_COLOR && a < 0 && a != GAS_COLOR_UNDEFINED) {
        why = "color is negative but not GAS_COLOR_UNDEFINED";
    }
    struct split_rec me = {
        .color = a, .key = b, .node = my_node(),
        .hash = kind == SPLIT_STRIDED ? mix(mix(mix(0x7374726964ull, (uint64_t)a), (uint64_t)b),
                                            (uint64_t)c)
                                      : mix(0x636f6c6f72ull, (uint64_t)kind),
    };
    /* A member with bad arguments (a NULL team_p, a bad color) fails here, so
     * the others must not go on to make a team without it. */
    me.hash = mix(mix(me.hash, team_p == NULL), why != NULL);
    struct split_rec *all = malloc((size_t)P * sizeof *all);
    int *members = malloc((size_t)P * sizeof *members);
    int *order = malloc((size_t)P * sizeof *order);
    int *keys = malloc((size_t)P * sizeof *keys);
    uint64_t *nodes = malloc((size_t)P * sizeof *nodes);
    if (!all || !members || !order || !keys || !nodes) {
        st = gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a split of %d ranks", P);
        goto out;
    }
    /* Every member takes part, valid arguments or not, so nobody hangs. */
    if ((st = gas_co_allgather_bytes(call, parent, all, &me, sizeof me)) != GAS_OK)
        goto out;
    int agree = 1;
    for (int r = 0; r < P; r++)
        agree &= all[r].hash == me.hash;
    if (team_p == NULL) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "team_p is NULL");
        goto out;
    }
    if (why && kind == SPLIT_STRIDED) {
        /* a stride or size below 1 is not a rank question; the rest is */
        st = gas_rt_error(b < 1 || c < 1 ? GAS_ERR_INVALID : GAS_ERR_RANK, call,
                          "%s (start %d, stride %d, size %d, parent size %d)", why, a, b, c, P);
        goto out;
    }
    if (why) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "%s (color %d)", why, a);
        goto out;
    }
    if (!agree) {
        if (kind == SPLIT_STRIDED)
            st = gas_rt_error(GAS_ERR_INVALID, call,
                              "the members of the parent team passed different arguments (this "
                              "rank: gas_team_split_strided, start %d, stride %d, size %d), or "
                              "one passed bad ones; all must pass the same", a, b, c);
        else
            st = gas_rt_error(GAS_ERR_INVALID, call,
                              "the members of the parent team made different calls or passed "
                              "bad arguments (this rank: %s); all must make the same split "
                              "with valid arguments", call);
        goto out;
    }
    int n = 0, mine = -1;
    if (kind == SPLIT_STRIDED) {
        for (int i = 0; i < c; i++)
            order[n++] = a + i * b;
    } else {
        int32_t color = a;
        for (int r = 0; r < P; r++) {
            if (kind == SPLIT_NODE) {  /* the color of a node: its first member */
                int f = 0;
                while (all[f].node != all[r].node)
                    f++;
                all[r].color = f;
                if (r == parent->rank)
                    color = f;
            }
        }
        for (int r = 0; r < P; r++) {
            keys[r] = kind == SPLIT_NODE ? 0 : all[r].key;
            if (color != GAS_COLOR_UNDEFINED && all[r].color == color)
                order[n++] = r;
        }
        sort_keys_ = keys;
        qsort(order, (size_t)n, sizeof *order, by_key);
    }
    for (int i = 0; i < n; i++) {
        members[i] = parent->world[order[i]];
        nodes[i] = all[order[i]].node;
        if (order[i] == parent->rank)
            mine = i;
    }
    /* My slot, then everyone's offsets (UINT64_MAX: no room; 0: in no team). */
    gas_team_t t = NULL;
    uint64_t my_off = 0;
    if (mine >= 0) {
        if ((st = team_alloc(call, members, n, mine, 0, &t)) != GAS_OK)
            my_off = UINT64_MAX;   /* still take part below */
        else if (slot_alloc(t, &my_off) == NULL)
            my_off = UINT64_MAX;
    }
    uint64_t *offs = malloc((size_t)P * sizeof *offs);
    gas_status_t st2 = offs ? gas_co_allgather_bytes(call, parent, offs, &my_off, sizeof my_off)
                            : gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a split");
    if (st2 != GAS_OK || mine < 0) {
        team_free(t);
        free(offs);
        if (st == GAS_OK)
            st = st2;
        if (st == GAS_OK)
            *team_p = GAS_TEAM_NULL;
        goto out;
    }
    int short_of = -1;
    for (int i = 0; i < n; i++) {
        if (offs[order[i]] == UINT64_MAX && short_of < 0)
            short_of = members[i];
        if (t)
            t->poff[i] = offs[order[i]];
    }
    free(offs);
    if (st == GAS_OK && short_of >= 0) {
        char hint[400];
        st = gas_rt_error(GAS_ERR_NOSPACE, call,
                          "rank %d has no room for the new team's %llu bytes of scratch "
                          "(GAS_COLL_SCRATCH); %s", short_of,
                          (unsigned long long)gas_co_chan_geometry(t), gas_gs_raise_hint(hint, sizeof hint));
    }
    if (st != GAS_OK) {
        team_free(t);
        goto out;
    }
    /* Call #0 is the split that made it, as gas_init's exchange is the world
     * team's: on every team the first collective call is #1 (gas.h). */
    t->seq = 1;
    if ((st = team_live(call, t, nodes)) == GAS_OK)
        *team_p = t;
out:    free(all);
    free(members);
    free(order);
    free(keys);
    free(nodes);
    return st;
}

/* A split is a collective call on the parent (gas_co_call_enter); its two
 * allgathers (and their transports' waits) within one GAS_TIMEOUT. */
static gas_status_t split(const char *call, gas_team_t parent, enum split_kind kind, int a,
                          int b, int c, gas_team_t *team_p)
{
    gas_status_t st = gas_co_call_enter(call, parent);
    if (st != GAS_OK)
        return st;
    int began = gas_rt_call_begin();
    st = split_in(call, parent, kind, a, b, c, team_p);
    gas_rt_call_end(began);
    return gas_co_call_leave(parent, st);
}

static gas_status_t api_team_split_strided(gas_team_t parent, int start, int stride,
                                           int size, gas_team_t *team_p)
{
    return split("gas_team_split_strided", parent, SPLIT_STRIDED, start, stride, size, team_p);
}

GAS_EXPORT gas_status_t gas_team_split_strided(gas_team_t parent, int start, int stride,
                                               int size, gas_team_t *team_p)
{
    GAS_GS_GATED("gas_team_split_strided",
                 api_team_split_strided(parent, start, stride, size, team_p));
}

static gas_status_t api_team_split_color(gas_team_t parent, int color, int key,
                                         gas_team_t *team_p)
{
    return split("gas_team_split_color", parent, SPLIT_COLOR, color, key, 0, team_p);
}

GAS_EXPORT gas_status_t gas_team_split_color(gas_team_t parent, int color, int key,
                                             gas_team_t *team_p)
{
    GAS_GS_GATED("gas_team_split_color", api_team_split_color(parent, color, key, team_p));
}

static gas_status_t api_team_split_node(gas_team_t parent, gas_team_t *team_p)
{
    return split("gas_team_split_node", parent, SPLIT_NODE, 0, 0, 0, team_p);
}

GAS_EXPORT gas_status_t gas_team_split_node(gas_team_t parent, gas_team_t *team_p)
{
    GAS_GS_GATED("gas_team_split_node", api_team_split_node(parent, team_p));
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

static int live(gas_team_t t)
{
    return gas_gs_phase() == GAS_GS_UP && gas_co_team_live(t);
}

/* gas_team_rank and gas_team_size read the team inside the API gate (internal.h). */
GAS_EXPORT int gas_team_rank(gas_team_t team)
{
    struct gas_rt_gate_thr *g = gas_rt_gate_enter();
    if (__builtin_expect(g == NULL, 0))
        return -1;
    int rank = live(team) ? team->rank : -1;
    gas_rt_gate_leave(g);
    return rank;
}

GAS_EXPORT int gas_team_size(gas_team_t team)
{
    struct gas_rt_gate_thr *g = gas_rt_gate_enter();
    if (__builtin_expect(g == NULL, 0))
        return 0;
    int size = live(team) ? team->size : 0;
    gas_rt_gate_leave(g);
    return size;
}

static gas_status_t api_team_translate(gas_team_t from, int rank, gas_team_t to, int *rank_p)
{
    const char *call = "gas_team_translate";
    gas_status_t st = gas_co_team_check(call, from);
    if (st == GAS_OK)
        st = gas_co_team_check(call, to);
    if (st != GAS_OK)
        return st;
    if (rank_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "rank_p is NULL");
    if (rank < 0 || rank >= from->size)
        return gas_rt_error(GAS_ERR_RANK, call, "rank %d is not in 0 .. %d (the source team's "
                                                "size is %d)", rank, from->size - 1, from->size);
    int w = from->world[rank];
    *rank_p = to->inv ? to->inv[w] : w;
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_team_translate(gas_team_t from, int rank, gas_team_t to, int *rank_p)
{
    GAS_GS_GATED("gas_team_translate", api_team_translate(from, rank, to, rank_p));
}

/* ------------------------------------------------------------------------ */
/* Destroy                                                                   */
/* ------------------------------------------------------------------------ */

struct quiesce_wait {
    const uint64_t *word;
    gas_team_t team;
    int from;          /* world rank of the signal's sender */
    int lost;          /* the member given up on that ended the wait, or -1 */
    uint64_t probe_at; /* when to probe `from` next */
    uint64_t *note_at; /* when to write the destroy's wait notes (the whole barrier's) */
    int *noted;        /* they are written */
    const char *call;
    gas_status_t mismatch; /* a member made another call where this one is (its failure note) */
    uint64_t failnotes_seen; /* the team's failure-note count when they were last read */
};

/*
 * As the world barrier's round_arrived (gas/sync.c), for the team's last
 * barrier; once it has waited GAS_TL_PROBE_AFTER_NS, every member gets the
 * destroy's wait note, so one waiting in a collective or in a world call
 * meanwhile fails, and a member's failure note standing for this call ends
 * the wait (w->mismatch).
 */
static int quiesce_arrived(void *arg)
{
    struct quiesce_wait *w = arg;
    if (__atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= 1)
        return 1;
    if (!*w->noted && gas_tl_probe_due(w->note_at)) {
        *w->noted = 1;
        gas_co_chan_destroy_note(w->team, 0);
    }
    if (*w->noted &&
        (w->mismatch = gas_co_chan_destroy_check(w->team, &w->failnotes_seen, w->call)) != GAS_OK)
        return 1;
    w->lost = gas_tl_signal_missing(&w->probe_at, w->from, w->team->world, w->team->size);
    return w->lost >= 0;
}

/* gas_team_destroy's dissemination barrier on the quiesce counters (*noted: its wait notes went out). */
static gas_status_t last_barrier(gas_team_t team, const char *call, int *noted)
{
    int P = team->size, me = team->rank;
    uint64_t note_at = 0;
    for (int k = 0, dist = 1; dist < P; k++, dist <<= 1) {
        int to = (me + dist) % P, from = team->world[(me - dist % P + P) % P];
        gas_tl_peer_t *peer;
        gas_status_t st = gas_co_peer(team, to, &peer, call);
        if (st != GAS_OK)
            return st;
        gas_tl_amo_t a = {.op = GAS_AMO_ADD, .width = 8, .operand = 1,
                          .offset = team->poff[to] + 8 * (2 * (uint64_t)P + (uint64_t)k)};
        if (!(team->quiesce_sent & 1u << k)) {   /* (sent by an earlier, failed call) */
            st = gas_tl_amo_rt(peer, &a, call);
            if (st < 0)
                return st;
            team->quiesce_sent |= 1u << k;
        }
        struct quiesce_wait w = {&team->quiesce[k], team, from, -1, 0, &note_at, noted, call,
                                 GAS_OK, UINT64_MAX};
        char what[96];
        snprintf(what, sizeof what, "round %d of the team's last barrier (from rank %d)", k,
                 from);
        if ((st = gas_rt_wait(quiesce_arrived, &w, w.word, call, what)) != GAS_OK)
            return st;
        if (w.mismatch != GAS_OK) {
            /* the members that stood in for it count this call as their failed
             * call #seq: so does this rank (a later destroy is #seq + 1) */
            gas_co_chan_failed(team, team->seq++);   /* (the team's end check knows it) */
            return w.mismatch;
        }
        if (w.lost >= 0)
            return gas_co_lost_error(team, call, "the team's last barrier");
    }
    return GAS_OK;
}

int gas_co_lost_member(gas_team_t t)
{
    return gas_tl_first_lost(t->world, t->size);
}

gas_status_t gas_co_lost_error(gas_team_t t, const char *call, const char *what)
{
    char whole[160];
    snprintf(whole, sizeof whole, "%s cannot complete", what);
    return gas_gs_lost_error(call, gas_co_lost_member(t), whole);
}

static gas_status_t destroy(gas_team_t team)
{
    const char *call = "gas_team_destroy";
    gas_status_t st = gas_co_call_enter(call, team);
    if (st != GAS_OK)
        return st;
    if (team == gas_team_world_)
        return gas_co_call_leave(team, gas_rt_error(GAS_ERR_INVALID, call,
                                                    "the world team cannot be destroyed"));
    /* A queued collective that failed does not keep the members from the
     * barrier below (they would wait for this rank until GAS_TIMEOUT); its
     * status is returned after it.  One that timed out, or any left queued,
     * leaves the team as it is. */
    gas_status_t queued = gas_co_drain(team);
    if (queued == GAS_ERR_TIMEOUT || team->qtail != NULL)
        return gas_co_call_leave(team, queued);   /* schedules still refer to the team: it stays */
    /* Every message of the team is complete before any member's signal below. */
    if ((st = gas_gs_sync_quiet(call)) != GAS_OK)   /* an earlier failure: raised at the end */
        return gas_co_call_leave(team, st);
    int noted = 0;
    if ((st = last_barrier(team, call, &noted)) != GAS_OK) {
        if (noted)   /* the team stays: members must not take the old note for a wait */
            gas_co_chan_destroy_note(team, 1);
        return gas_co_call_leave(team, st);
    }
    st = gas_gs_sync_quiet(call);
    /* Every member's messages have arrived: one never received shows a mismatch. */
    if (st == GAS_OK)
        st = gas_co_chan_leftover(team, call);
    /* Nothing of this team can arrive any more: the slot goes back to the arena. */
    gas_co_call_leave(team, GAS_OK);
    live_remove(team);
    team_free(team);
    return gas_gs_sync_report(call, "the team was destroyed", queued != GAS_OK ? queued : st);
}

/* Its waits (the queue's drain, the quiets, the last barrier) within one GAS_TIMEOUT. */
static gas_status_t api_team_destroy(gas_team_t team)
{
    if (team == GAS_TEAM_NULL)
        return gas_gs_check("gas_team_destroy");
    int began = gas_rt_call_begin();
    gas_status_t st = destroy(team);
    gas_rt_call_end(began);
    return st;
}

GAS_EXPORT gas_status_t gas_team_destroy(gas_team_t team)
{
    GAS_GS_GATED("gas_team_destroy", api_team_destroy(team));
}
