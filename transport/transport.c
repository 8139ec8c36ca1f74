/*
 * transport.c - the explicit list of transports, address publication, and the
 * per-peer route table (a pointer per rank, filled on first contact).
 */
#include "transport.h"
#include "runtime/boot.h"
#include "runtime/error.h"
#include "runtime/log.h"
#include "runtime/clock.h"
#include "runtime/wait.h"
#include "transport/udp/ctrl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct gas_tl_ops gas_shm_ops;
extern const struct gas_tl_ops gas_udp_ops;
extern const struct gas_tl_ops gas_rdma_ops;

/*
 * Registration order is preference order for routes; rdma is started after
 * udp, which carries its peers until they are upgraded (and its handshakes).
 */
static const struct gas_tl_ops *const registry[] = {
    &gas_shm_ops,
    &gas_rdma_ops,
    &gas_udp_ops,
};
/* Order of start-up: indexes into registry. */
static const size_t init_order[] = {0, 2, 1};
#define NREG (sizeof registry / sizeof registry[0])

static int active[NREG];
static const struct gas_rt_boot *boot;
static int my_rank, job_size, forced_id;
static int multi_node;   /* the job has ranks on other nodes (so udp is up) */
static _Atomic int nexited; /* peers whose process was seen to end (gas_tl_mark_exited) */
static _Atomic unsigned char *exited_tab; /* per rank: 1 once marked */
/* Per rank, for gas_tl_look_gone: whether its process can be looked at from
 * here (a node-mate, by a transport with ops->gone_addr), once known.  Same
 * node_id is taken to mean the same pid namespace, as shm's connect does. */
enum { GONE_UNKNOWN = 0, GONE_LOOKABLE, GONE_NOT_LOOKABLE };
static _Atomic unsigned char *gone_kind;
static unsigned char **gone_entry;   /* per rank: its entry, when GONE_LOOKABLE (gone_learn) */
static pthread_mutex_t gone_lock = PTHREAD_MUTEX_INITIALIZER;
#define GONE_BATCH 8   /* ranks looked at per due probe */

/* How every message about such a rank says it (after "rank R is gone: "). */
#define EXITED_WHAT \
    "its process on this node has ended (it exited without calling gas_finalize, or was killed)"

/* Whether rank's process was seen to end (gas_tl_mark_exited). */
static int peer_exited(int rank)
{
    return exited_tab != NULL && rank >= 0 && rank < job_size &&
           atomic_load_explicit(&exited_tab[rank], memory_order_relaxed);
}
static pthread_mutex_t connect_lock = PTHREAD_MUTEX_INITIALIZER;
_Atomic(gas_tl_peer_t *) *gas_tl_peers_;

const char *gas_tl_compiled_name(int i)
{
    return i >= 0 && (size_t)i < NREG ? registry[i]->name : NULL;
}

gas_status_t gas_tl_no_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                  uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                  gas_tl_comp_t *comp, const char *call)
{
    return GAS_ERR_UNSUPPORTED;
}

gas_status_t gas_tl_no_fence(void)
{
    return GAS_OK;
}

int gas_tl_no_progress(void)
{
    return 0;
}

gas_status_t gas_tl_no_stats(gas_tl_peer_t *peer, gas_peer_stats_t *out)
{
    if (peer)
        snprintf(out->transport, sizeof out->transport, "%s", peer->ops->name);
    return GAS_OK;
}

gas_status_t gas_tl_init(const struct gas_rt_boot *b, const gas_tl_env_t *env, int forced)
{
    boot = b;
    my_rank = env->rank;
    job_size = env->nranks;
    forced_id = forced;
    multi_node = env->local_size > 0 && env->local_size < env->nranks;
    gas_tl_peers_ = calloc((size_t)env->nranks, sizeof *gas_tl_peers_);
    exited_tab = calloc((size_t)env->nranks, sizeof *exited_tab);
    gone_kind = calloc((size_t)env->nranks, sizeof *gone_kind);
    gone_entry = calloc((size_t)env->nranks, sizeof *gone_entry);
    atomic_store(&nexited, 0);
    if (gas_tl_peers_ == NULL || exited_tab == NULL || gone_kind == NULL || gone_entry == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, "gas_init", "no memory for the %d-entry route table",
                            env->nranks);
    /* Address record: entries of [version u8][transport id u8][len u16 LE][blob]. */
    unsigned char rec[NREG * (4 + GAS_TL_MAX_ADDR)];
    size_t used = 0;
    int usable = 0;
    for (size_t k = 0; k < NREG; k++) {
        size_t i = init_order[k];
        const struct gas_tl_ops *t = registry[i];
        /* rdma needs udp under it */
        if (forced && (int)t->id != forced && !(forced == GAS_TL_RDMA && t->id == GAS_TL_UDP))
            continue;
        gas_status_t st = t->init(env);
        if (st == GAS_ERR_UNSUPPORTED) {
            gas_log_info("transport", "%s is not available here", t->name);
            continue;
        }
        if (st != GAS_OK)
            return st;
        size_t len = 0;
        st = t->addr_pack(rec + used + 4, GAS_TL_MAX_ADDR, &len);
        if (st != GAS_OK)
            return st;
        rec[used] = GAS_TL_ADDR_VERSION;
        rec[used + 1] = (unsigned char)t->id;
        rec[used + 2] = (unsigned char)len;
        rec[used + 3] = (unsigned char)(len >> 8);
        used += 4 + len;
        active[i] = 1;
        usable++;
        if (t->progress != gas_tl_no_progress)
            gas_rt_progress_register(t->progress, GAS_RT_HOOK_POLL);
    }
    if (usable == 0)
        return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                            "no transport can run here (GAS_TRANSPORT forces one that is not built or not available)");
    return b->kv_put("tl", rec, used);
}

void gas_tl_fini(void)
{
    if (gas_tl_peers_) {
        for (int r = 0; r < job_size; r++) {
            gas_tl_peer_t *p = atomic_load(&gas_tl_peers_[r]);
            if (p)
                p->ops->disconnect(p);
        }
        free(gas_tl_peers_);
        free((void *)exited_tab);
        exited_tab = NULL;
        for (int r = 0; gone_entry && r < job_size; r++)
            free(gone_entry[r]);
        free(gone_entry);
        gone_entry = NULL;
        free((void *)gone_kind);
        gone_kind = NULL;
        gas_tl_peers_ = NULL;
    }
    for (size_t k = NREG; k-- > 0;) {
        size_t i = init_order[k];
        if (active[i])
            registry[i]->fini();
        active[i] = 0;
    }
}

/* Find the entry for transport `id` in a peer's address record. */
static const unsigned char *find_entry(const unsigned char *rec, size_t len, int id,
                                       size_t *elen_p, int *bad_version_p)
{
    size_t pos = 0;
    while (pos + 4 <= len) {
        size_t elen = rec[pos + 2] | (size_t)rec[pos + 3] << 8;
        if (pos + 4 + elen > len)
            break;
        if (rec[pos] != GAS_TL_ADDR_VERSION)
            *bad_version_p = rec[pos];
        else if (rec[pos + 1] == id) {
            *elen_p = elen;
            return rec + pos + 4;
        }
        pos += 4 + elen;
    }
    return NULL;
}

/* Transport i's entry in rank's address record rec, when i is active and the
 * entry reaches this rank (*bad_version_p as find_entry). */
static const unsigned char *usable_entry(size_t i, const unsigned char *rec, size_t len,
                                         size_t *elen_p, int *bad_version_p)
{
    if (!active[i])
        return NULL;
    const unsigned char *e = find_entry(rec, len, (int)registry[i]->id, elen_p, bad_version_p);
    return e && registry[i]->reachable(e, *elen_p) ? e : NULL;
}

gas_status_t gas_tl_peer_slow(const char *call, int rank, gas_tl_peer_t **peer_p)
{
    if (peer_exited(rank))
        return gas_rt_error(GAS_ERR_PEER, call, "rank %d is gone: " EXITED_WHAT, rank);
    pthread_mutex_lock(&connect_lock);
    gas_tl_peer_t *p = atomic_load(&gas_tl_peers_[rank]);
    if (p != NULL) {
        pthread_mutex_unlock(&connect_lock);
        *peer_p = p;
        return GAS_OK;
    }
    void *rec = NULL;
    size_t len = 0;
    gas_status_t st = boot->kv_get(rank, "tl", &rec, &len);
    if (st != GAS_OK) {
        pthread_mutex_unlock(&connect_lock);
        return gas_rt_error(GAS_ERR_PEER, call, "rank %d published no address", rank);
    }
    int bad_version = 0;
    st = GAS_ERR_PEER;
    for (size_t i = 0; i < NREG && st == GAS_ERR_PEER && !peer_exited(rank); i++) {
        size_t elen = 0;
        const unsigned char *e = usable_entry(i, rec, len, &elen, &bad_version);
        if (e) {
            st = registry[i]->connect(rank, e, elen, &p);
            if (st == GAS_OK)
                atomic_store_explicit(&gas_tl_peers_[rank], p, memory_order_release);
        }
    }
    free(rec);
    pthread_mutex_unlock(&connect_lock);
    if (st == GAS_ERR_PEER && p == NULL) {
        if (peer_exited(rank)) /* a transport found its process gone */
            return gas_rt_error(GAS_ERR_PEER, call, "rank %d is gone: " EXITED_WHAT, rank);
        if (bad_version)
            return gas_rt_error(GAS_ERR_PEER, call,
                                "rank %d runs a libgas with address format %d (this one: %d); rebuild both alike",
                                rank, bad_version, GAS_TL_ADDR_VERSION);
        return gas_rt_error(GAS_ERR_PEER, call,
                            "no transport reaches rank %d (it published no address this rank can use%s)",
                            rank, forced_id ? "; GAS_TRANSPORT restricts the choice" : "");
    }
    *peer_p = p;
    return st;
}

gas_status_t gas_tl_fence_all(void)
{
    for (size_t i = 0; i < NREG; i++) {
        if (active[i]) {
            gas_status_t st = registry[i]->fence();
            if (st != GAS_OK)
                return st;
        }
    }
    return GAS_OK;
}

gas_status_t gas_tl_quiet_sync(const char *call, gas_tl_report_t *rep)
{
    for (size_t i = 0; i < NREG; i++) {
        if (active[i]) {
            gas_status_t st = registry[i]->quiet(call, rep);
            if (st != GAS_OK)
                return st;
        }
    }
    return GAS_OK;
}

gas_status_t gas_tl_take_stored(pthread_mutex_t *lock, int *status, const char *msg,
                                const char *call, gas_tl_report_t *rep)
{
    char copy[sizeof rep->msg];
    pthread_mutex_lock(lock);
    gas_status_t err = (gas_status_t)*status;
    int deferred = rep != NULL && GAS_STATUS_IS_USAGE(err);
    if (err == GAS_OK || (deferred && rep->status != GAS_OK)) {
        pthread_mutex_unlock(lock);
        return GAS_OK;
    }
    snprintf(copy, sizeof copy, "%s", msg);
    *status = GAS_OK;
    pthread_mutex_unlock(lock);
    if (!deferred)
        return gas_rt_error(err, call, "%s", copy);
    rep->status = err;
    snprintf(rep->msg, sizeof rep->msg, "%s", copy);
    return GAS_OK;
}

gas_status_t gas_tl_quiet_all(const char *call)
{
    gas_tl_report_t rep = {.status = GAS_OK};
    gas_status_t st = gas_tl_quiet_sync(call, &rep);
    if (st == GAS_OK && rep.status != GAS_OK)
        st = gas_rt_error(rep.status, call, "%s", rep.msg);
    return st;
}

void gas_tl_forget(gas_tl_comp_t *comp)
{
    for (size_t i = 0; i < NREG; i++)
        if (active[i] && registry[i]->forget)
            registry[i]->forget(comp);
}

void gas_tl_cpu_sharers(int ranks)
{
    for (size_t i = 0; i < NREG; i++)
        if (active[i] && registry[i]->cpu_sharers)
            registry[i]->cpu_sharers(ranks);
}

void gas_tl_init_done(void)
{
    for (size_t i = 0; i < NREG; i++)
        if (active[i] && registry[i]->init_done)
            registry[i]->init_done();
}

_Thread_local int gas_tl_rt_ops_;

void gas_tl_mark_exited(int rank)
{
    unsigned char was = 0;
    if (exited_tab == NULL || rank < 0 || rank >= job_size || rank == my_rank ||
        !atomic_compare_exchange_strong(&exited_tab[rank], &was, 1))
        return;
    atomic_fetch_add(&nexited, 1);
    gas_udp_lost_set(rank, my_rank);
    gas_log_warn("transport", "rank %d is gone: " EXITED_WHAT "; waits for it fail", rank);
}

int gas_tl_first_lost(const int *ranks, int n)
{
    if (gas_udp_dead_count() == 0 && atomic_load_explicit(&nexited, memory_order_relaxed) == 0)
        return -1;
    if (gas_udp_self_lost() >= 0)
        return my_rank;
    for (int i = 0; i < n; i++) {
        int r = ranks ? ranks[i] : i;
        if (gas_udp_peer_lost(r) || (r != my_rank && peer_exited(r))) {
            /* the caller fails on a death udp declared and may end the
             * process next: first tell the other ranks (udp does so when its
             * timers run, which may be too late).  A node-mate found ended
             * is left to udp's timers: the other node-mates find it
             * themselves, naming its cause. */
            if (r != my_rank && !peer_exited(r))
                gas_udp_announce();
            return r;
        }
    }
    return -1;
}

void gas_tl_lost_what(int rank, char *buf, size_t cap)
{
    int by = rank == my_rank ? gas_udp_self_lost() : -1;
    char why[320];
    if (by >= 0) {
        gas_udp_self_lost_why(why, sizeof why);
        snprintf(buf, cap, "this rank (%d) was declared dead by rank %d (%s); the other ranks "
                 "go on without it", rank, by, why);
    } else if (rank != my_rank &&
             (peer_exited(rank) || (gas_udp_lost_by_report(rank) && gas_tl_look_gone(rank, 1))))
        /* a node-mate another rank reported: its own cause, if its process is gone */
        snprintf(buf, cap, "rank %d is gone: " EXITED_WHAT " while this rank waited for it", rank);
    else
        snprintf(buf, cap, "rank %d is dead or unreachable (%s%s)", rank,
                 gas_udp_lost_by_report(rank)
                     ? "another rank's udp gave up on it and said so"
                     : gas_udp_lost_refused(rank)
                     ? "its udp address refuses datagrams: nothing listens there; its process "
                       "has ended, a firewall on its host rejects this rank's datagrams, or "
                       "this host cannot reach it at the address it published"
                     : "udp gave up on it after GAS_UDP_PEER_TIMEOUT",
                 gas_udp_lost_refused(rank) ? "" : gas_udp_poll_hint());
}

int gas_tl_probe_due(uint64_t *at)
{
    uint64_t now = gas_rt_now_ns();
    if (*at == 0) {
        *at = now + GAS_TL_PROBE_AFTER_NS;
        return 0;
    }
    if (now < *at)
        return 0;
    *at = now + GAS_TL_PROBE_AFTER_NS / 4;
    return 1;
}

/*
 * A node-mate whose process has ended (gas_tl_look_gone: it exited without
 * gas_finalize, status 0, which gasrun lets the job go on after, or was
 * killed) is lost at once, like a peer udp gave up on: every wait that
 * needs it fails naming it, on one node too, where nothing else would end
 * the wait.  A peer over shm is also probed over udp when the job spans
 * nodes: a node-mate that hangs (alive, silent) is then declared dead like
 * a peer off the node, after GAS_UDP_PEER_TIMEOUT.  Otherwise a
 * hierarchical collective whose node-local stage waited for it hung:
 * nobody else sends it anything.
 */
void gas_tl_probe(int rank)
{
    gas_tl_peer_t *p;
    if (peer_exited(rank) || gas_tl_peer(rank, &p) != GAS_OK)
        return;
    (void)gas_tl_look_gone(rank, 0);
    if (p->ops->id != GAS_TL_SHM || multi_node)
        gas_udp_probe(rank);
}

/*
 * rank's address entry of the first active transport that reaches it and can
 * tell from it whether its process has ended (ops->gone_addr), copied into
 * gone_entry[rank] as [registry index][len u16 LE][entry]; kept in gone_kind.
 * Asks the bootstrap store once per rank; sends the rank nothing.
 */
static void gone_learn(int rank)
{
    void *rec = NULL;
    size_t len = 0;
    unsigned char *copy = NULL;
    if (boot->kv_get(rank, "tl", &rec, &len) == GAS_OK) {
        for (size_t i = 0; i < NREG && copy == NULL; i++) {
            size_t elen = 0;
            int bad = 0;
            const unsigned char *e =
                registry[i]->gone_addr ? usable_entry(i, rec, len, &elen, &bad) : NULL;
            if (e == NULL || (copy = malloc(3 + elen)) == NULL)
                continue;
            copy[0] = (unsigned char)i;
            copy[1] = (unsigned char)elen;
            copy[2] = (unsigned char)(elen >> 8);
            memcpy(copy + 3, e, elen);
        }
        free(rec);
    }
    pthread_mutex_lock(&gone_lock);
    if (atomic_load_explicit(&gone_kind[rank], memory_order_relaxed) == GONE_UNKNOWN) {
        gone_entry[rank] = copy;
        copy = NULL;
        atomic_store_explicit(&gone_kind[rank], gone_entry[rank] ? GONE_LOOKABLE : GONE_NOT_LOOKABLE,
                              memory_order_release);
    }
    pthread_mutex_unlock(&gone_lock);
    free(copy);   /* another thread learnt it first */
}

int gas_tl_look_gone(int rank, int thorough)
{
    if (gone_kind == NULL || rank < 0 || rank >= job_size || rank == my_rank || peer_exited(rank))
        return peer_exited(rank);
    if (atomic_load_explicit(&gone_kind[rank], memory_order_acquire) == GONE_UNKNOWN)
        gone_learn(rank);
    if (atomic_load_explicit(&gone_kind[rank], memory_order_acquire) != GONE_LOOKABLE)
        return 0;
    const unsigned char *e = gone_entry[rank];
    if (registry[e[0]]->gone_addr(e + 3, (size_t)e[1] | (size_t)e[2] << 8, thorough))
        gas_tl_mark_exited(rank);
    return peer_exited(rank);
}

void gas_tl_probe_gone_some(int *cursor)
{
    if (job_size <= 1 || gone_kind == NULL)
        return;
    for (int k = 0; k < GONE_BATCH && k < job_size - 1; k++) {
        int r = *cursor >= 0 && *cursor < job_size ? *cursor : 0;
        if (r == my_rank)
            r = (r + 1) % job_size;
        *cursor = (r + 1) % job_size;
        (void)gas_tl_look_gone(r, 0);
    }
    gas_udp_knock_some();
}

int gas_tl_signal_missing(uint64_t *probe_at, int from, const int *ranks, int n)
{
    if (gas_tl_probe_due(probe_at))
        gas_tl_probe(from);
    return gas_tl_first_lost(ranks, n);
}

gas_status_t gas_tl_peer_addr(int rank, enum gas_tl_id id, void *buf, size_t cap, size_t *len_p)
{
    void *rec = NULL;
    size_t len = 0, elen = 0;
    int bad_version = 0;
    if (rank < 0 || rank >= job_size || boot->kv_get(rank, "tl", &rec, &len) != GAS_OK)
        return GAS_ERR_PEER;
    const unsigned char *e = find_entry(rec, len, (int)id, &elen, &bad_version);
    gas_status_t st = GAS_ERR_PEER;
    if (e && elen <= cap) {
        memcpy(buf, e, elen);
        *len_p = elen;
        st = GAS_OK;
    }
    free(rec);
    return st;
}

gas_status_t gas_tl_stats(int rank, gas_peer_stats_t *out)
{
    memset(out, 0, sizeof *out);
    gas_tl_peer_t *p;
    gas_status_t st = gas_tl_peer(rank, &p);
    if (st != GAS_OK)
        return st;
    if (rank != my_rank)
        return p->ops->stats(p, out);
    snprintf(out->transport, sizeof out->transport, "%s", p->ops->name);
    for (size_t i = 0; i < NREG && st == GAS_OK; i++)
        if (active[i])
            st = registry[i]->stats(NULL, out);
    return st;
}

/* One peer's counters (or the rank's totals, who "total"); path: the transport(s) counted. */
static void print_stats_line(const char *who, const char *path, const gas_peer_stats_t *s)
{
    char rtt[64] = "";   /* a round trip is a peer's: not on the totals */
    if (strcmp(who, "total") != 0)
        snprintf(rtt, sizeof rtt, ", srtt %.1f us, rto %.1f us", (double)s->srtt_ns / 1e3,
                 (double)s->rto_ns / 1e3);
    fprintf(stderr,
            "[gas r%d] stats: %s %s%s%s: sent %llu datagrams %llu B, received %llu datagrams %llu B, "
            "retransmits %llu, duplicates %llu, acks sent %llu received %llu, bad %llu, "
            "rejected %llu%s\n",
            my_rank, who, path, s->endpoint[0] ? " " : "", s->endpoint,
            (unsigned long long)s->datagrams_sent, (unsigned long long)s->bytes_sent,
            (unsigned long long)s->datagrams_received, (unsigned long long)s->bytes_received,
            (unsigned long long)s->retransmits, (unsigned long long)s->duplicates,
            (unsigned long long)s->acks_sent, (unsigned long long)s->acks_received,
            (unsigned long long)s->bad_datagrams, (unsigned long long)s->rejected, rtt);
    if (s->route[0] || s->upgraded_peers || s->rdma_work_requests)
        fprintf(stderr,
                "[gas r%d] stats: %s rdma: route %s, upgraded peers %u, work requests %llu, "
                "%llu B, errors %llu, signals applied %llu, redone over udp %llu\n",
                my_rank, who, s->route[0] ? s->route : "-", s->upgraded_peers,
                (unsigned long long)s->rdma_work_requests, (unsigned long long)s->rdma_bytes,
                (unsigned long long)s->rdma_errors, (unsigned long long)s->rdma_signals,
                (unsigned long long)s->rdma_redone);
}

/*
 * GAS_STATS=y at gas_finalize: a line per peer, then the rank's totals.  A
 * peer on a path that keeps no counters (its stats slot is the stub: shm,
 * plain loads and stores) gets a line saying so instead of zeros; the totals
 * are those of the active transports that count (the udp socket, rdma), named
 * as such, and are left out when none is active.
 */
void gas_tl_stats_print(void)
{
    gas_peer_stats_t s;
    gas_tl_peer_t *p;
    char who[32], path[32] = "";
    for (int r = 0; r < job_size; r++) {
        if (r == my_rank || atomic_load(&gas_tl_peers_[r]) == NULL || gas_tl_peer(r, &p) != GAS_OK)
            continue;
        snprintf(who, sizeof who, "peer %d", r);
        if (p->ops->stats == gas_tl_no_stats)
            fprintf(stderr, "[gas r%d] stats: %s %s: no counters (shared memory: nothing is "
                    "sent)\n", my_rank, who, p->ops->name);
        else if (gas_tl_stats(r, &s) == GAS_OK)
            print_stats_line(who, s.transport, &s);
    }
    for (size_t i = 0, n = 0; i < NREG; i++)
        if (active[i] && registry[i]->stats != gas_tl_no_stats)
            n += (size_t)snprintf(path + n, n < sizeof path ? sizeof path - n : 0, "%s%s",
                                  n ? "+" : "", registry[i]->name);
    if (path[0] && gas_tl_stats(my_rank, &s) == GAS_OK)
        print_stats_line("total", path, &s);
    fflush(stderr);
}
