/*
 * team.c - teams: the world team, splits (strided, color/key, node), rank
 * translation and destroy.
 *
 * Scratch: at gas_init every rank carves the same area from the symmetric
 * heap (GAS_COLL_TEAMS slots of GAS_COLL_SCRATCH bytes).  A team uses one
 * slot, the same on all its members: a split first gathers, over the parent,
 * every member's mask of slots in use, and takes the lowest slot free on all
 * of them.  A slot's counters are zeroed when its team is destroyed, after a
 * barrier that ends all traffic of the team, so a new team finds them clean.
 */
#include "coll.h"
#include "runtime/config.h"
#include "runtime/node.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GAS_EXPORT gas_team_t gas_team_world_;
gas_team_t gas_co_teams[GAS_CO_MAX_TEAMS];
uint64_t gas_co_area_off, gas_co_slot_bytes, gas_co_zcopy_min;
static unsigned nslots;
static uint64_t used_mask;   /* slots used by teams of this rank */

gas_status_t gas_co_team_check(const char *call, gas_team_t team)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if (team == GAS_TEAM_NULL)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "the team is GAS_TEAM_NULL (this rank is not in that team)");
    if ((unsigned)team->slot >= GAS_CO_MAX_TEAMS || gas_co_teams[team->slot] != team)
        return gas_rt_error(GAS_ERR_INVALID, call, "the team is not a live team of this rank "
                                                   "(destroyed?)");
    return GAS_OK;
}

gas_status_t gas_co_peer(gas_team_t t, int r, gas_tl_peer_t **peer_p)
{
    if (t->peers[r]) {
        *peer_p = t->peers[r];
        return GAS_OK;
    }
    gas_status_t st = gas_tl_peer(t->world[r], peer_p);
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
    free(t->world);
    free(t->inv);
    free(t->sent);
    free(t->peers);
    free(t->held_send);
    free(t->node_of);
    free(t->node_members);
    free(t->node_start);
    free(t->leaders);
    free(t);
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

/* A team of the given world ranks on `slot`; me is my index in members. */
static gas_status_t team_new(const char *call, const int *members, int n, int me, int slot,
                             const uint64_t *node_ids, gas_team_t *team_p)
{
    gas_team_t t = calloc(1, sizeof *t);
    if (t == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a team");
    t->size = n;
    t->rank = me;
    t->slot = slot;
    t->off = gas_co_area_off + (uint64_t)slot * gas_co_slot_bytes;
    t->base = gas_gs.seg.base + t->off;
    t->world = malloc((size_t)n * sizeof *t->world);
    t->sent = calloc(5 * (size_t)n, sizeof *t->sent);
    t->peers = calloc((size_t)n, sizeof *t->peers);
    t->held_send = calloc(2 * (size_t)n, sizeof *t->held_send);
    if (slot != 0)
        t->inv = malloc((size_t)gas_gs.nranks * sizeof *t->inv);
    if (!t->world || !t->sent || !t->peers || !t->held_send || (slot != 0 && !t->inv)) {
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
    gas_status_t st = gas_co_chan_setup(call, t);
    if (st == GAS_OK && node_ids && set_nodes(t, node_ids) != GAS_OK)
        st = gas_rt_error(GAS_ERR_NOMEM, call, "no memory for a team's node table");
    if (st != GAS_OK) {
        team_free(t);
        return st;
    }
    if (!node_ids)
        t->nnodes = 0;   /* filled by gas_co_start_nodes */
    gas_co_teams[slot] = t;
    used_mask |= 1ull << slot;
    *team_p = t;
    return GAS_OK;
}

gas_status_t gas_co_start(void)
{
    gas_co_slot_bytes = (gas_rt_config_size(GAS_CFG_COLL_SCRATCH) + 4095) / 4096 * 4096;
    gas_co_zcopy_min = gas_rt_config_size(GAS_CFG_COLL_ZCOPY_MIN);
    nslots = (unsigned)gas_rt_config_size(GAS_CFG_COLL_TEAMS);
    if (nslots < 1 || nslots > GAS_CO_MAX_TEAMS)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init", "GAS_COLL_TEAMS=%u is not in 1 .. %d",
                            nslots, GAS_CO_MAX_TEAMS);
    uint64_t want = gas_co_slot_bytes * nslots;
    gas_status_t st = gas_al_heap_alloc(&gas_gs.heap, want, 4096, &gas_co_area_off);
    if (st != GAS_OK)
        return gas_rt_error(GAS_ERR_NOSPACE, "gas_init",
                            "no room for the collectives' scratch (%u teams x %llu bytes); raise "
                            "GAS_SEGMENT_SIZE or lower GAS_COLL_SCRATCH / GAS_COLL_TEAMS",
                            nslots, (unsigned long long)gas_co_slot_bytes);
    if ((st = gas_co_select_init()) != GAS_OK)
        return st;
    int n = gas_gs.nranks;
    int *members = malloc((size_t)n * sizeof *members);
    if (members == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the world team");
    for (int r = 0; r < n; r++)
        members[r] = r;
    used_mask = 0;
    st = team_new("gas_init", members, n, gas_gs.rank, 0, NULL, &gas_team_world_);
    free(members);
    if (st == GAS_OK)
        gas_rt_progress_register(gas_co_progress_all);
    return st;
}

/* Defined in api.c: a byte allgather with the table's algorithm. */
gas_status_t gas_co_allgather_bytes(const char *call, gas_team_t t, void *dst, const void *src,
                                    size_t bytes);

gas_status_t gas_co_start_nodes(void)
{
    gas_team_t w = gas_team_world_;
    uint64_t me = my_node();
    uint64_t *ids = malloc((size_t)w->size * sizeof *ids);
    if (ids == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the node table");
    gas_status_t st = gas_co_allgather_bytes("gas_init", w, ids, &me, sizeof me);
    if (st == GAS_OK && set_nodes(w, ids) != GAS_OK)
        st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the node table");
    free(ids);
    return st;
}

void gas_co_stop(void)
{
    for (int s = 0; s < GAS_CO_MAX_TEAMS; s++) {
        team_free(gas_co_teams[s]);
        gas_co_teams[s] = NULL;
    }
    gas_team_world_ = GAS_TEAM_NULL;
    used_mask = 0;
    gas_co_select_fini();
}

/* ------------------------------------------------------------------------ */
/* Splits                                                                    */
/* ------------------------------------------------------------------------ */

enum split_kind { SPLIT_STRIDED, SPLIT_COLOR, SPLIT_NODE };

struct split_rec {
    int32_t color, key;
    uint64_t hash;     /* of the arguments that must agree */
    uint64_t used;     /* slots in use */
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

static gas_status_t split(const char *call, gas_team_t parent, enum split_kind kind, int a,
                          int b, int c, gas_team_t *team_p)
{
    gas_status_t st = gas_co_team_check(call, parent);
    if (st != GAS_OK)
        return st;
    if (team_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "team_p is NULL");
    int P = parent->size;
    const char *why = NULL;
    if (kind == SPLIT_STRIDED) {
        if (a < 0 || a >= P)
            why = "start is not a rank of the parent team";
        else if (b < 1)
            why = "stride is below 1";
        else if (c < 1)
            why = "size is below 1";
        else if ((int64_t)a + (int64_t)(c - 1) * b >= P)
            why = "the last member (start + (size-1) * stride) is not a rank of the parent team";
    } else if (kind == SPLIT_COLOR && a < 0 && a != GAS_COLOR_UNDEFINED) {
        why = "color is negative but not GAS_COLOR_UNDEFINED";
    }
    struct split_rec me = {
        .color = a, .key = b, .used = used_mask, .node = my_node(),
        .hash = kind == SPLIT_STRIDED ? mix(mix(mix(0x7374726964ull, (uint64_t)a), (uint64_t)b),
                                            (uint64_t)c)
                                      : mix(0x636f6c6f72ull, (uint64_t)kind),
    };
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
    uint64_t used = 0;
    int agree = 1;
    for (int r = 0; r < P; r++) {
        used |= all[r].used;
        agree &= all[r].hash == me.hash;
    }
    if (!agree) {
        st = gas_rt_error(GAS_ERR_INVALID, call,
                          "the members of the parent team passed different arguments (this "
                          "rank: start %d, stride %d, size %d); all must pass the same", a, b, c);
        goto out;
    }
    if (why && kind == SPLIT_STRIDED) {
        st = gas_rt_error(GAS_ERR_RANK, call, "%s (start %d, stride %d, size %d, parent size %d)",
                          why, a, b, c, P);
        goto out;
    }
    if (why) {
        st = gas_rt_error(GAS_ERR_INVALID, call, "%s (color %d)", why, a);
        goto out;
    }
    int slot = 0;
    while ((unsigned)slot < nslots && (used >> slot & 1))
        slot++;
    if ((unsigned)slot == nslots) {
        st = gas_rt_error(GAS_ERR_NOSPACE, call,
                          "no team slot is free on every member of the parent team (%u in use "
                          "somewhere); destroy teams or raise GAS_COLL_TEAMS", nslots);
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
    if (mine < 0) {
        *team_p = GAS_TEAM_NULL;
        st = GAS_OK;
        goto out;
    }
    st = team_new(call, members, n, mine, slot, nodes, team_p);
out:
    free(all);
    free(members);
    free(order);
    free(keys);
    free(nodes);
    return st;
}

GAS_EXPORT gas_status_t gas_team_split_strided(gas_team_t parent, int start, int stride,
                                               int size, gas_team_t *team_p)
{
    return split("gas_team_split_strided", parent, SPLIT_STRIDED, start, stride, size, team_p);
}

GAS_EXPORT gas_status_t gas_team_split_color(gas_team_t parent, int color, int key,
                                             gas_team_t *team_p)
{
    return split("gas_team_split_color", parent, SPLIT_COLOR, color, key, 0, team_p);
}

GAS_EXPORT gas_status_t gas_team_split_node(gas_team_t parent, gas_team_t *team_p)
{
    return split("gas_team_split_node", parent, SPLIT_NODE, 0, 0, 0, team_p);
}

/* ------------------------------------------------------------------------ */
/* Queries                                                                   */
/* ------------------------------------------------------------------------ */

static int live(gas_team_t t)
{
    return gas_gs.phase == GAS_GS_UP && t != GAS_TEAM_NULL &&
           (unsigned)t->slot < GAS_CO_MAX_TEAMS && gas_co_teams[t->slot] == t;
}

GAS_EXPORT int gas_team_rank(gas_team_t team)
{
    return live(team) ? team->rank : -1;
}

GAS_EXPORT int gas_team_size(gas_team_t team)
{
    return live(team) ? team->size : 0;
}

GAS_EXPORT gas_status_t gas_team_translate(gas_team_t from, int rank, gas_team_t to, int *rank_p)
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

/* ------------------------------------------------------------------------ */
/* Destroy                                                                   */
/* ------------------------------------------------------------------------ */

struct quiesce_wait {
    const uint64_t *word;
};

static int quiesce_arrived(void *arg)
{
    return __atomic_load_n(((struct quiesce_wait *)arg)->word, __ATOMIC_ACQUIRE) >= 1;
}

GAS_EXPORT gas_status_t gas_team_destroy(gas_team_t team)
{
    const char *call = "gas_team_destroy";
    if (team == GAS_TEAM_NULL)
        return gas_gs_check(call);
    gas_status_t st = gas_co_team_check(call, team);
    if (st != GAS_OK)
        return st;
    if (team == gas_team_world_)
        return gas_rt_error(GAS_ERR_INVALID, call, "the world team cannot be destroyed");
    if ((st = gas_co_drain(team, call)) != GAS_OK)
        return st;
    /* Every message of the team is complete before any member's signal below. */
    if ((st = gas_tl_quiet_all()) != GAS_OK)
        return st;
    int P = team->size, me = team->rank;
    for (int k = 0, dist = 1; dist < P; k++, dist <<= 1) {
        int to = (me + dist) % P;
        gas_tl_peer_t *peer;
        if ((st = gas_co_peer(team, to, &peer)) != GAS_OK)
            return st;
        gas_tl_amo_t a = {.op = GAS_AMO_ADD, .width = 8, .operand = 1,
                          .offset = team->off + 8 * (2 * (uint64_t)P + (uint64_t)k)};
        st = gas_tl_amo(peer, &a, NULL);
        if (st < 0)
            return st;
        struct quiesce_wait w = {&team->quiesce[k]};
        char what[96];
        snprintf(what, sizeof what, "round %d of the team's last barrier (from rank %d)", k,
                 team->world[(me - dist % P + P) % P]);
        if ((st = gas_rt_wait(quiesce_arrived, &w, w.word, call, what)) != GAS_OK)
            return st;
    }
    if ((st = gas_tl_quiet_all()) != GAS_OK)
        return st;
    /*
     * Nothing of this team can arrive any more: leave the slot clean, as far
     * as the counters of any later team reach (a larger team's counters
     * cover what were this team's mailboxes).
     */
    uint64_t clean = 48 * (uint64_t)gas_gs.nranks + 8 * GAS_CO_QUIESCE_ROUNDS + 64;
    memset(team->base, 0, clean < gas_co_slot_bytes ? clean : gas_co_slot_bytes);
    used_mask &= ~(1ull << team->slot);
    gas_co_teams[team->slot] = NULL;
    team_free(team);
    return GAS_OK;
}
