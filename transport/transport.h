/*
 * transport.h - the one ops table every transport fills, and the peer routes.
 *
 * A transport is a process-wide singleton.  Each peer rank gets a route on
 * first contact: the first registered transport that can reach the peer's
 * published address (shm on the same node, then rdma, then udp), unless
 * GAS_TRANSPORT forces one.  The gas/ layer has already validated every
 * offset and length against the target's allocations before calling a slot;
 * transports that receive offsets from a wire re-check them against the
 * segment.
 *
 * `call` (put, get, amo, put_signal, quiet): the API call the operation is
 * part of ("gas_put_signal", "gas_allreduce", ...), which the errors a slot
 * raises name (gas.h: errors name the user's call).
 *
 * Completion (`comp` may be NULL):
 *  - A slot returns GAS_OK when the operation is complete: for put, the data
 *    is at the target and visible; for get and fetching atomics, the result
 *    is in place.
 *  - It returns GAS_INPROGRESS when completion comes later.  If comp is not
 *    NULL the transport then decrements comp->pending exactly once when it
 *    completes (storing a failure first with gas_tl_comp_fail(), which also
 *    names the peer); the caller must keep comp alive and drive
 *    gas_rt_progress() until pending drops, then raise any failure on its
 *    own thread.  Whether or not comp is given, gas_tl_quiet_all() completes
 *    it; failures of operations without comp are raised by quiet.
 *  - Any put-like slot may return before completion only after it no longer
 *    needs the source buffer.
 *  - A negative status means nothing was done at the target.
 */
#ifndef GAS_TL_TRANSPORT_H
#define GAS_TL_TRANSPORT_H

#include <gas.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define GAS_TL_ADDR_VERSION 1
#define GAS_TL_MAX_ADDR 256

enum gas_tl_id { GAS_TL_SHM = 1, GAS_TL_UDP = 2, GAS_TL_RDMA = 3 };

typedef struct gas_tl_comp {
    atomic_int pending;
    atomic_int status;   /* first failure, else GAS_OK */
    atomic_int err_rank; /* the peer of that failure */
    uint64_t err_off, err_len; /* the range that peer refused (err_len 0: not known); read
                                  once pending is 0 */
    atomic_int who;      /* where its operations went, for a wait's messages: 1 + the
                            rank, 0 nowhere yet, -1 several ranks */
} gas_tl_comp_t;

/* Note that an operation counted in c (may be NULL) goes to rank. */
static inline void gas_tl_comp_to(gas_tl_comp_t *c, int rank)
{
    if (c == NULL)
        return;
    int w = atomic_load_explicit(&c->who, memory_order_relaxed);
    if (w == 0)
        atomic_store_explicit(&c->who, rank + 1, memory_order_relaxed);
    else if (w != rank + 1 && w != -1)
        atomic_store_explicit(&c->who, -1, memory_order_relaxed);
}

/* Record a failure (the first one wins) of an operation on rank's path; len > 0: the
 * target refused [off, off + len) at its offset off. */
static inline void gas_tl_comp_refused(gas_tl_comp_t *c, gas_status_t st, int rank, uint64_t off,
                                       uint64_t len)
{
    int ok = GAS_OK;
    atomic_store_explicit(&c->err_rank, rank, memory_order_relaxed);
    if (atomic_compare_exchange_strong(&c->status, &ok, (int)st)) {
        c->err_off = off;
        c->err_len = len;
    }
}

/* A failure whose range is not known. */
static inline void gas_tl_comp_fail(gas_tl_comp_t *c, gas_status_t st, int rank)
{
    gas_tl_comp_refused(c, st, rank, 0, 0);
}

/*
 * A failure of an earlier operation that a quiet found and did not raise
 * (see the quiet slot): status GAS_OK while empty; msg names the peer and
 * the cause ("rank 1 refused a request at its offset ...").
 */
typedef struct gas_tl_report {
    gas_status_t status;
    char msg[320];
} gas_tl_report_t;

typedef struct gas_tl_amo {
    gas_amo_op_t op;
    unsigned width;      /* 4 or 8 */
    uint64_t offset;     /* naturally aligned offset in the target segment */
    uint64_t operand, compare;
    uint64_t *result;    /* for fetching ops */
} gas_tl_amo_t;

struct gas_tl_ops;

/* Every transport's peer state starts with this. */
typedef struct gas_tl_peer {
    const struct gas_tl_ops *ops;
    int rank;
    char *direct_base;   /* non-NULL when this process can load/store the segment */
    uint64_t size;       /* the peer's segment size */
} gas_tl_peer_t;

/* What a transport is told at init. */
typedef struct gas_tl_env {
    int rank, nranks;
    int local_rank;      /* among the ranks on this node */
    int local_size;      /* ranks on this node */
    uint64_t job_key;    /* the job's secret (from the bootstrap; 0 for a lone process) */
    uint64_t node_id;
    char *seg_base;      /* this rank's segment */
    uint64_t seg_size;
    int seg_fd;
} gas_tl_env_t;

struct gas_tl_ops {
    const char *name;
    enum gas_tl_id id;

    /* Set up; GAS_ERR_UNSUPPORTED when this machine cannot use it (then skipped). */
    gas_status_t (*init)(const gas_tl_env_t *env);
    /* This rank's address blob for the transport (payload after the common prefix). */
    gas_status_t (*addr_pack)(void *buf, size_t cap, size_t *len_p);
    /* Can this transport reach a peer that published `addr`? */
    int (*reachable)(const void *addr, size_t len);
    /* Create peer state for rank from its address (rank may be this rank). */
    gas_status_t (*connect)(int rank, const void *addr, size_t len, gas_tl_peer_t **peer_p);

    /* Copy n bytes from src to the peer's segment at off. */
    gas_status_t (*put)(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                        gas_tl_comp_t *comp, const char *call);
    /* Copy n bytes from the peer's segment at off to dst. */
    gas_status_t (*get)(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                        gas_tl_comp_t *comp, const char *call);
    /* One atomic; all atomics on a location go through the same path. */
    gas_status_t (*amo)(gas_tl_peer_t *peer, const gas_tl_amo_t *amo, gas_tl_comp_t *comp,
                        const char *call);
    /*
     * Put, then update the 64-bit signal word at sig_off so that it becomes
     * visible only after this payload and every earlier put to this peer.
     * A signal word that the target refuses (where a transport checks the
     * offsets it takes from the wire) fails the operation with nothing of
     * the payload written.
     */
    gas_status_t (*put_signal)(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                               uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                               gas_tl_comp_t *comp, const char *call);
    /* Order: what was issued before reaches each peer before what follows. */
    gas_status_t (*fence)(void);
    /*
     * Complete every operation issued so far (see the completion rules
     * above); failures are raised for `call`, the API call that quiets
     * (gas_quiet, gas_barrier, a collective...).  A failure of an earlier
     * operation without a completion that its target refused (a usage
     * status, GAS_STATUS_IS_USAGE: bounds, alignment) is a deferred report,
     * not a failure of the quiet: with rep given, it is not raised but
     * stored in *rep if rep is still empty (else kept for the next quiet),
     * and the quiet goes on.  Its own failures (a lost peer, GAS_TIMEOUT,
     * memory) are never usage statuses and are always raised.
     */
    gas_status_t (*quiet)(const char *call, gas_tl_report_t *rep);
    /*
     * The caller gives up on the operations counted in comp (its wait for
     * them failed, e.g. GAS_TIMEOUT) and is about to return: once this
     * returns, the transport writes neither comp nor those operations'
     * buffers (a get's destination, a fetching atomic's result).  The
     * operations themselves may still take effect at their targets.  NULL
     * when every operation completes within its call.
     */
    void (*forget)(gas_tl_comp_t *comp);
    /*
     * Told once, at the end of gas_init: how many ranks of the job (this one
     * included) compete for this rank's CPUs (gas_rt_cpu_key: same kernel,
     * same affinity mask; more than env->local_size where network namespaces
     * or containers share a machine).  NULL where it does not matter.
     */
    void (*cpu_sharers)(int ranks);
    /*
     * Told once, when gas_init has finished its own traffic (the address
     * agreement, the teams' set-up): every operation after this is the
     * program's (its RMA, barriers, collectives).  NULL where it does not
     * matter.
     */
    void (*init_done)(void);
    /*
     * 1 when the process of the rank that published addr (this transport's
     * entry) is known to have ended (shm: a node-mate's pid is gone), 0 when
     * alive or it cannot tell; no connection needed.  Asked only by waits
     * that have waited long (gas_tl_look_gone); NULL where the transport
     * cannot tell.  `thorough` (error paths, not periodic probes) counts
     * an ended process not yet reaped (shm: a zombie) as ended too.
     */
    int (*gone_addr)(const void *addr, size_t len, int thorough);
    /* Drive outstanding work; returns how many events were handled. */
    int (*progress)(void);
    /*
     * Fill the counters of the path to peer (see gas_peer_stats in gas.h);
     * with peer NULL, add this transport's totals for the whole rank.
     */
    gas_status_t (*stats)(gas_tl_peer_t *peer, gas_peer_stats_t *out);
    void (*disconnect)(gas_tl_peer_t *peer);
    void (*fini)(void);
};

/* Every active transport's forget(comp) (see the ops table). */
void gas_tl_forget(gas_tl_comp_t *comp);
/* Every active transport's cpu_sharers(ranks) (see the ops table). */
void gas_tl_cpu_sharers(int ranks);
/* Every active transport's init_done() (see the ops table). */
void gas_tl_init_done(void);
/*
 * rank's process is known to have ended (a node-mate: ops->gone_addr, or its
 * segment could not be opened because its process is gone): it is lost
 * from now on, like a peer udp gave up on (gas_tl_first_lost names it, udp
 * tells the other ranks), and connecting to it fails at once.  Says so once.
 */
void gas_tl_mark_exited(int rank);

/* Bring up the transports; publishes this rank's addresses through the bootstrap. */
struct gas_rt_boot;
gas_status_t gas_tl_init(const struct gas_rt_boot *boot, const gas_tl_env_t *env,
                         int forced /* GAS_TRANSPORT choice: 0 = auto, else enum gas_tl_id */);
void gas_tl_fini(void);

/*
 * The route to rank (0 <= rank < nranks), connecting on first contact.  A
 * failed connect is raised for `call`, the API call that needed the route
 * ("rank 0: gas_allreduce: rank 3 is gone: ..."); gas_tl_peer, for the
 * runtime's own needs outside any one call, names it "connect".
 */
gas_status_t gas_tl_peer_slow(const char *call, int rank, gas_tl_peer_t **peer_p);
extern _Atomic(gas_tl_peer_t *) *gas_tl_peers_;

static inline gas_status_t gas_tl_peer_for(const char *call, int rank, gas_tl_peer_t **peer_p)
{
    gas_tl_peer_t *p = atomic_load_explicit(&gas_tl_peers_[rank], memory_order_acquire);
    if (p != NULL) {
        *peer_p = p;
        return GAS_OK;
    }
    return gas_tl_peer_slow(call, rank, peer_p);
}

static inline gas_status_t gas_tl_peer(int rank, gas_tl_peer_t **peer_p)
{
    return gas_tl_peer_for("connect", rank, peer_p);
}

/*
 * The runtime's own traffic (barrier and collective signals and data, sent
 * without a completion) is issued through the _rt forms below, which mark
 * the issuing thread while the slot runs (gas_tl_rt_ops_ > 0).  A transport
 * that keeps failures of operations without a completion for the next
 * quiet keeps only those of unmarked (the caller's own) operations: the
 * call that sent runtime traffic reports a lost peer itself, and a later
 * gas_quiet must not raise it again for operations the caller never issued.
 */
extern _Thread_local int gas_tl_rt_ops_;
static inline int gas_tl_rt_issuing(void)
{
    return gas_tl_rt_ops_ > 0;
}

/* One-line dispatch, no checks. */
static inline gas_status_t gas_tl_put(gas_tl_peer_t *p, uint64_t off, const void *src, size_t n,
                                      gas_tl_comp_t *c, const char *call)
{
    gas_tl_comp_to(c, p->rank);
    return p->ops->put(p, off, src, n, c, call);
}
static inline gas_status_t gas_tl_get(gas_tl_peer_t *p, void *dst, uint64_t off, size_t n,
                                      gas_tl_comp_t *c, const char *call)
{
    gas_tl_comp_to(c, p->rank);
    return p->ops->get(p, dst, off, n, c, call);
}
static inline gas_status_t gas_tl_amo(gas_tl_peer_t *p, const gas_tl_amo_t *a, gas_tl_comp_t *c,
                                      const char *call)
{
    gas_tl_comp_to(c, p->rank);
    return p->ops->amo(p, a, c, call);
}
static inline gas_status_t gas_tl_put_signal(gas_tl_peer_t *p, uint64_t off, const void *src,
                                             size_t n, uint64_t sig_off, uint64_t value,
                                             gas_signal_op_t op, gas_tl_comp_t *c,
                                             const char *call)
{
    gas_tl_comp_to(c, p->rank);
    return p->ops->put_signal(p, off, src, n, sig_off, value, op, c, call);
}

static inline gas_status_t gas_tl_put_rt(gas_tl_peer_t *p, uint64_t off, const void *src,
                                         size_t n, const char *call)
{
    gas_tl_rt_ops_++;
    gas_status_t st = p->ops->put(p, off, src, n, NULL, call);
    gas_tl_rt_ops_--;
    return st;
}
static inline gas_status_t gas_tl_amo_rt(gas_tl_peer_t *p, const gas_tl_amo_t *a,
                                         const char *call)
{
    gas_tl_rt_ops_++;
    gas_status_t st = p->ops->amo(p, a, NULL, call);
    gas_tl_rt_ops_--;
    return st;
}
static inline gas_status_t gas_tl_put_signal_rt(gas_tl_peer_t *p, uint64_t off, const void *src,
                                                size_t n, uint64_t sig_off, uint64_t value,
                                                gas_signal_op_t op, const char *call)
{
    gas_tl_rt_ops_++;
    gas_status_t st = p->ops->put_signal(p, off, src, n, sig_off, value, op, NULL, call);
    gas_tl_rt_ops_--;
    return st;
}

/* Across every active transport. */
gas_status_t gas_tl_fence_all(void);
/* Every transport's quiet; a deferred report is raised like any failure. */
gas_status_t gas_tl_quiet_all(const char *call);
/*
 * Every transport's quiet, each one run even after another found a
 * deferred report (the first is stored in *rep, which the caller empties:
 * status GAS_OK); returns only the quiets' own failures, raised.
 */
gas_status_t gas_tl_quiet_sync(const char *call, gas_tl_report_t *rep);
/*
 * A quiet's take of a failure a transport stored for it (an operation that
 * had no completion of its own: *status and msg, under lock): a target's
 * refusal (a usage status) goes into *rep when rep is given and empty, and
 * stays stored while rep is full; any other failure is raised for call.
 * What is taken is cleared.  GAS_OK unless a failure was raised.
 */
gas_status_t gas_tl_take_stored(pthread_mutex_t *lock, int *status, const char *msg, const char *call,
                                gas_tl_report_t *rep);

/*
 * Peers given up on: udp declares a peer dead when nothing is acknowledged
 * for GAS_UDP_PEER_TIMEOUT, or learns that another rank did (rdma peers share
 * the verdict: their control path is udp).  gas_tl_first_lost(ranks, n): the
 * first of n world ranks (NULL: 0..n-1) that is lost, or -1 (one atomic load
 * while none is: for wait conditions); this rank, whatever the list, once a
 * peer told it that it was itself declared dead (it is out of the job).  Waits that need a peer no transport
 * tracks an operation for (barriers, collectives, gas_wait_until) use it to
 * fail instead of hanging.
 */
int gas_tl_first_lost(const int *ranks, int n);
/*
 * What an error says of a lost rank, into buf: "rank R is dead or
 * unreachable (how it was lost)", or, for this rank when it was itself
 * declared dead (then gas_tl_first_lost names it for any list of ranks),
 * "this rank (R) was declared dead by rank N (...)".
 */
void gas_tl_lost_what(int rank, char *buf, size_t cap);
/*
 * A wait that has waited GAS_TL_PROBE_AFTER_NS for a signal from a rank (and
 * sends it nothing) probes it, so that a silent peer is declared dead
 * rather than waited for forever (gas_udp_probe; a peer over shm only when
 * the job spans nodes: on one node gasrun sees deaths).  gas_tl_probe_due(&at),
 * called on each poll of the wait with at = 0 at its start: whether to probe now (after
 * GAS_TL_PROBE_AFTER_NS, then every quarter of it).
 */
#define GAS_TL_PROBE_AFTER_NS 200000000ull
int gas_tl_probe_due(uint64_t *at);
void gas_tl_probe(int rank);
/*
 * For a wait that no one rank owes (gas_wait_until on this rank's own
 * words), called when gas_tl_probe_due says so: looks whether the processes
 * of the next few ranks (*cursor, in turn) have ended, where a transport can
 * tell from the address the rank published, without connecting or sending
 * anything (a node-mate that shm reaches: ops->gone_addr), and
 * marks those lost (gas_tl_mark_exited).  A writer that exited without
 * gas_finalize then fails the wait (GAS_ERR_PEER) instead of hanging it.
 * Ranks reached over udp are not probed (a probe wants an answer, and a
 * rank computing outside libgas with GAS_PROGRESS=poll would be declared
 * dead for not giving one): those this rank has talked to are knocked at
 * instead (gas_udp_knock_some), which finds them only where their port
 * refuses datagrams.  Called from the waiting thread only.
 */
void gas_tl_probe_gone_some(int *cursor);
/* The same look at one rank's process (sends nothing); thorough: see
 * ops->gone_addr.  Whether the rank is now known to have ended. */
int gas_tl_look_gone(int rank, int thorough);
/*
 * One poll of a wait for a signal from `from` that has not come: probe
 * `from` when due (probe_at as for gas_tl_probe_due), then the first lost
 * rank of ranks (gas_tl_first_lost), or -1 to go on waiting.
 */
int gas_tl_signal_missing(uint64_t *probe_at, int from, const int *ranks, int n);

/*
 * The address blob that rank published for transport id (copied into buf of
 * cap bytes).  For transports that must answer a peer before any route to
 * it was made (udp replies to a rank that contacted it first).
 */
gas_status_t gas_tl_peer_addr(int rank, enum gas_tl_id id, void *buf, size_t cap, size_t *len_p);

/* Counters of the route to rank; this rank's totals when rank is this rank. */
gas_status_t gas_tl_stats(int rank, gas_peer_stats_t *out);
/* One line per peer with a route (and one of totals) to stderr, for GAS_STATS. */
void gas_tl_stats_print(void);
/*
 * GAS_STATS_FILE (stats_file.c): the same counters as name=value lines in
 * the file pattern names ("%r": the rank; without it ".RANK" is added), for
 * gas-info --stats.  A file that cannot be written is a warning.
 */
void gas_tl_stats_save(const char *pattern, int rank, int nranks);

/* Names of the transports compiled in, for gas-info ("shm" ...). */
const char *gas_tl_compiled_name(int i);

/* Typed stubs for slots a transport does not provide. */
gas_status_t gas_tl_no_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                  uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                  gas_tl_comp_t *comp, const char *call);
gas_status_t gas_tl_no_fence(void);
int gas_tl_no_progress(void);
gas_status_t gas_tl_no_stats(gas_tl_peer_t *peer, gas_peer_stats_t *out);

#endif
