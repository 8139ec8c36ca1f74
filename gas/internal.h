/*
 * internal.h - state and helpers shared by the files of the gas/ layer.
 * Not included from outside gas/ (runtime/init.c excepted: it starts the layer).
 */
#ifndef GAS_GS_INTERNAL_H
#define GAS_GS_INTERNAL_H

#include <gas.h>

#include "alloc/heap.h"
#include "alloc/limits.h"
#include "alloc/place.h"
#include "alloc/segment.h"
#include "alloc/space.h"
#include "runtime/error.h"
#include "runtime/gate.h"
#include "transport/transport.h"

/* GAS_GS_CHILD: this process is a child that fork() made of an initialised one. */
enum gas_gs_phase { GAS_GS_NEVER = 0, GAS_GS_UP = 1, GAS_GS_DOWN = 2, GAS_GS_CHILD = 3 };

struct gas_gs_state {
    int phase;
    int rank, nranks;
    struct gas_al_segment seg;
    uint64_t seg_min;         /* the smallest segment of any rank (agreed at init) */
    struct gas_al_heap heap;  /* [GAS_AL_RESERVED_BYTES, heap.end): same on every rank */
    uint64_t heap_used;       /* bytes in live arrays, for gas_memory_stats (atomic) */
    uint64_t heap_internal;   /* bytes of libgas's own blocks (gas_gs_sym_alloc; atomic) */
    struct gas_al_space space;/* where the heap ends and the arenas begin */
    struct gas_al_limits limits;
    struct gas_al_place place;
    int prefault;             /* GAS_PREFAULT */
    uint64_t barrier_epoch;   /* world barriers entered (atomic: wait notes read it) */
    gas_layout_t *allocs;     /* sorted by local_offset */
    size_t nallocs, allocs_cap;
};

extern struct gas_gs_state gas_gs;

/* The phase, from any thread: gas_finalize may change it meanwhile (writers store it atomically). */
static inline int gas_gs_phase(void)
{
    return __atomic_load_n(&gas_gs.phase, __ATOMIC_ACQUIRE);
}

static inline void gas_gs_set_phase(int phase)
{
    __atomic_store_n(&gas_gs.phase, phase, __ATOMIC_RELEASE);
}

/* Why libgas cannot be used now (phase not UP): "libgas is <this>". */
static inline const char *gas_gs_phase_why(void)
{
    int phase = gas_gs_phase();
    return phase == GAS_GS_NEVER ? "not initialised (call gas_init first)"
         : phase == GAS_GS_CHILD
             ? "not usable in a child that fork() made: it serves only the process that called "
               "gas_init (a child may exec or exit)"
             : "finalised (gas_finalize was called)";
}

/* GAS_OK when initialised, else the NOT_INIT error raised for `call`,
 * logged at the caller's file and line (the API function's), not this header's. */
static inline gas_status_t gas_gs_check_at(const char *file, int line, const char *call)
{
    if (__builtin_expect(gas_gs_phase() == GAS_GS_UP, 1))
        return GAS_OK;
    return gas_rt_error_at(file, line, GAS_ERR_NOT_INIT, call, "libgas is %s", gas_gs_phase_why());
}
#define gas_gs_check(call) gas_gs_check_at(__FILE__, __LINE__, (call))

/*
 * Every API call that another thread may overlap with gas_finalize (RMA,
 * atomics, signals, waits, quiet/fence, handles, pointers and layouts,
 * stats, and the collective calls too) is a GAS_EXPORT wrapper that runs
 * its body (api_<name>, static) between gas_rt_gate_enter and
 * gas_rt_gate_leave (runtime/gate.h); when the gate refuses, it returns
 * gas_gs_refused(call): GAS_ERR_NOT_INIT raised for call, saying that
 * gas_finalize was called by another thread of this rank (or by this
 * thread: the usual "finalised" message), or GAS_ERR_NOMEM when no record
 * could be made for the thread.
 */
gas_status_t gas_gs_refused(const char *call);
/*
 * The body of an exported call gated against gas_finalize (runtime/gate.h):
 * `expr` (a gas_status_t) runs between gas_rt_gate_enter and _leave, and
 * its status is returned; a refused call returns gas_gs_refused(call).
 */
#define GAS_GS_GATED(call, expr)                                                                  \
    do {                                                                                          \
        struct gas_rt_gate_thr *gate_ = gas_rt_gate_enter();                                      \
        if (__builtin_expect(gate_ == NULL, 0))                                                   \
            return gas_gs_refused(call);                                                          \
        gas_status_t gated_st_ = (expr);                                                          \
        gas_rt_gate_leave(gate_);                                                                 \
        return gated_st_;                                                                         \
    } while (0)

/* GAS_ERR_PEER for `call`: "<what gas_tl_lost_what says of rank>: <what>",
 * logged at the caller's file and line. */
static inline gas_status_t gas_gs_lost_error_at(const char *file, int line, const char *call,
                                                int rank, const char *what)
{
    char why[300];
    gas_tl_lost_what(rank, why, sizeof why);
    return gas_rt_error_at(file, line, GAS_ERR_PEER, call, "%s: %s", why, what);
}
#define gas_gs_lost_error(call, rank, what) gas_gs_lost_error_at(__FILE__, __LINE__, (call), (rank), (what))

/*
 * The route to rank for an operation of the caller's: like gas_tl_peer, but a
 * rank given up on (gas_tl_first_lost: udp declared it dead, another rank
 * reported it, or this rank was itself declared dead) fails at once with
 * GAS_ERR_PEER, over shm too, instead of reaching a rank the job left behind.
 */
gas_status_t gas_gs_peer(const char *call, int rank, gas_tl_peer_t **peer_p);

/* Compute the pointer split for a job of nranks (pure; unit-tested). */
void gas_gs_split_compute(uint64_t nranks, unsigned *rank_bits_p, unsigned *offset_bits_p);

/*
 * What a range [p, p + n) resolves to.  Below the symmetric heap's end a
 * pointer must lie in a gas_malloc'ed array, and indexes follow its layout;
 * at or above it (the gas_alloc arenas' side) a pointer names raw bytes of
 * its owner's segment, and the range must stay inside that segment.
 */
struct gas_gs_span {
    const gas_layout_t *l;   /* the array, or NULL for a raw range */
    uint64_t idx;            /* byte index of p in the array; for a raw range, p's offset */
    int rank;                /* a raw range's owner */
};

/*
 * Resolve [p, p + n).  Raises (for `call`, naming the pointer role `what`)
 * GAS_ERR_RANK, GAS_ERR_BOUNDS or GAS_ERR_OVERFLOW.  n may be 0 (p itself
 * must be inside).
 */
gas_status_t gas_gs_resolve(const char *call, const char *what, gas_ptr_t p, uint64_t n,
                            struct gas_gs_span *span_p);

/*
 * An atomic's target or a signal word (`what`) of width bytes must be
 * naturally aligned: GAS_ERR_ALIGN raised for `call` when p's offset is not.
 * Checked before gas_gs_resolve, so a misaligned word is GAS_ERR_ALIGN
 * whatever else is wrong with it (past an array's end, an unknown rank).
 * (The offset in p is the owner's segment offset, which is what the word's
 * alignment is about.)
 */
static inline gas_status_t gas_gs_check_align_at(const char *file, int line, const char *call,
                                                 const char *what, gas_ptr_t p, unsigned width)
{
    uint64_t off = gas_ptr_offset(p);
    if (__builtin_expect(off % width == 0, 1))
        return GAS_OK;
    return gas_rt_error_at(file, line, GAS_ERR_ALIGN, call,
                           "the %u-byte %s 0x%llx (rank %d, offset %llu) is not naturally aligned",
                           width, what, (unsigned long long)p, gas_ptr_rank(p),
                           (unsigned long long)off);
}
#define gas_gs_check_align(call, what, p, width) \
    gas_gs_check_align_at(__FILE__, __LINE__, (call), (what), (p), (width))

/* "raise GAS_SEGMENT_SIZE (now 4.0 GiB)", plus the tmpfs of GAS_SEGMENT_DIR when it bounds it. */
const char *gas_gs_raise_hint(char *buf, size_t cap);

/* Bytes in rank's segment (resolve has connected to it for any raw range). */
uint64_t gas_gs_segment_size(int rank);

/* The contiguous piece of a span starting at byte index idx, at most `left` bytes. */
struct gas_gs_piece {
    int rank;
    uint64_t off;
    uint64_t len;
};

static inline struct gas_gs_piece gas_gs_piece_at(const struct gas_gs_span *s, uint64_t idx,
                                                  uint64_t left)
{
    const gas_layout_t *l = s->l;
    if (l == NULL) {
        struct gas_gs_piece raw = {.rank = s->rank, .off = idx, .len = left};
        return raw;
    }
    uint64_t chunk = idx / l->block, within = idx % l->block;
    uint64_t room = l->block - within;
    struct gas_gs_piece pc = {
        .rank = (int)(chunk % (uint64_t)l->nranks),
        .off = l->local_offset + (chunk / (uint64_t)l->nranks) * l->block + within,
        .len = left < room ? left : room,
    };
    return pc;
}

/*
 * What a gas_handle_t points to.  RMA handles count their pieces in comp;
 * other operations (collectives) set `complete`, which gas_wait (block = 1)
 * and gas_test (block = 0) call: it makes progress, sets *done_p, and frees
 * the operation once it reports completion (except after GAS_ERR_TIMEOUT).
 */
struct gas_op {
    gas_tl_comp_t comp;
    gas_status_t (*complete)(struct gas_op *op, int block, int *done_p);
};

/* Wait until comp->pending is 0 and return its status (a failure is raised for call). */
gas_status_t gas_gs_comp_wait(gas_tl_comp_t *comp, const char *call);
/*
 * The same for a call that returns with comp (a blocking get, atomic or
 * strided transfer): when the wait fails with operations still pending
 * (GAS_TIMEOUT), the transports forget them, so nothing of the caller's
 * (comp, destinations, results) is written after it returns.
 */
gas_status_t gas_gs_comp_finish(gas_tl_comp_t *comp, const char *call);
/* The status of a completed comp, raising a failure the transport stored. */
gas_status_t gas_gs_comp_status(gas_tl_comp_t *comp, const char *call);

/*
 * The quiet of a call that synchronises (the world barrier and the calls
 * built on it, a team barrier, gas_team_destroy): its own failures (a lost
 * peer, GAS_TIMEOUT) are raised and returned, and then the call fails at
 * once; an earlier operation's failure that it finds (a deferred report,
 * transport.h: a refusal by the target) is held instead, so that the call
 * still does its part.  Any thread.
 */
gas_status_t gas_gs_sync_quiet(const char *call);
/*
 * st; or, when st is GAS_OK and a report is held, that report (taken, so it
 * is raised once) raised for `call`, which completed: `done` says what
 * ("the barrier completed").  A call that fails keeps the report held for
 * the next one that completes (gas_quiet included).
 */
gas_status_t gas_gs_sync_report(const char *call, const char *done, gas_status_t st);

/*
 * Dissemination barrier over all ranks that also finds the min and max of
 * `value` across ranks (either pointer may be NULL).  Implies quiet (an
 * earlier operation's failure is held: gas_gs_sync_quiet).
 */
gas_status_t gas_gs_barrier_minmax(const char *call, uint64_t value, uint64_t *min_p,
                                   uint64_t *max_p);

/* The collective calls that begin with the world barrier. */
enum gas_gs_call_kind {
    GAS_GS_CALL_BARRIER = 1,
    GAS_GS_CALL_FINALIZE,
    GAS_GS_CALL_MALLOC,   /* gas_malloc and gas_malloc_dist */
    GAS_GS_CALL_FREE,
    GAS_GS_CALL_TEAM_BARRIER,   /* gas_team_barrier(GAS_TEAM_WORLD): gas_barrier by another name */
};

/*
 * The world barrier at the start of a collective call of `kind` whose
 * arguments hash to args: every rank learns whether all made the same call.
 * A rank that made another call (gas_finalize where the others called
 * gas_malloc, say) makes every rank fail with GAS_ERR_INVALID, raised for
 * `call`, naming that other call; nothing else happens.  The same call with
 * other arguments sets *args_differ_p (NULL: arguments that cannot differ)
 * and returns GAS_OK: the caller says how they differ.
 */
gas_status_t gas_gs_barrier_call(const char *call, enum gas_gs_call_kind kind, uint64_t args,
                                 int *args_differ_p);
/* The API call of a kind ("gas_barrier", "gas_malloc or gas_malloc_dist", ...). */
const char *gas_gs_call_name(enum gas_gs_call_kind kind);
/*
 * gas_barrier, and gas_team_barrier on the world team (kind
 * GAS_GS_CALL_TEAM_BARRIER): the same world barrier, so either call on one
 * rank meets either on the others; errors are raised for `call`.
 */
gas_status_t gas_gs_barrier(const char *call, enum gas_gs_call_kind kind);
/* The world barriers this rank has entered, counting the one it is in (any thread). */
uint64_t gas_gs_world_epoch(void);
/* The world barrier this rank's next world call will be in (an interrupted one it resumes). */
uint64_t gas_gs_next_world_epoch(void);
/* Before a world barrier's first signal: pass on the failure notes this rank owes members
 * (gas/coll/chan.c relay_to), so they hold them before the barrier can complete there. */
void gas_co_flush_relays(const char *call);
/* A world barrier completed (epoch): adopt the calls members consumed before it. */
void gas_co_world_adopt(uint64_t epoch);
/*
 * For the message of a world barrier wait that timed out (gas/barrier_late.c):
 * into buf, the ranks that have not entered world barrier `epoch` (the word
 * at word_off of each rank's segment holds the last one it entered), and
 * those that did not answer within half a second (gets issued for `call`);
 * "" when there is no memory to tell.  Call it only from a wait's explainer
 * (runtime/wait.h), where waits do not wait: a get that would wait for room
 * fails quietly and its rank counts as not answering (ranks already given up
 * on are not asked; a get the transport cannot issue at all, out of memory,
 * is still raised by the transport).
 */
void gas_gs_barrier_late(const char *call, uint64_t epoch, uint64_t word_off, char *buf,
                         size_t cap);

/*
 * Plan the layout of nelems x elem bytes over nranks ranks whose segments
 * are seg_size bytes (pure; unit-tested at full scale).  GAS_OK, or a usage
 * status (or GAS_ERR_NOSPACE) with *why_p set.
 */
gas_status_t gas_gs_plan(uint64_t nranks, uint64_t seg_size, uint64_t nelems, size_t elem,
                         gas_dist_t dist, uint64_t block_elems, gas_layout_t *l,
                         const char **why_p);

/* Set up / tear down the layer (called by runtime/init.c only). */
gas_status_t gas_gs_start(int rank, int nranks, const struct gas_al_segment *seg,
                          const struct gas_al_limits *limits, const struct gas_al_place *place,
                          int prefault);
/* Collective, after the bootstrap barrier: agree on seg_min. */
gas_status_t gas_gs_agree(void);
void gas_gs_stop(void);

/*
 * Collective: len bytes at the same offset of every rank's segment, from the
 * symmetric heap (growing it when needed, like gas_malloc; not an array).
 * Raises GAS_ERR_NOSPACE for `call` when it does not fit, advising to lower
 * the setting `sized_by` (or NULL) or to raise GAS_SEGMENT_SIZE.
 */
gas_status_t gas_gs_sym_alloc(const char *call, uint64_t len, const char *sized_by,
                              uint64_t *off_p);

/*
 * Teams (gas/coll/): the team scratch slots and the world team, then the
 * world team's node table (both collective: runtime/init.c calls them once
 * the transports reach every rank), and teardown (from gas_gs_stop).
 */
gas_status_t gas_co_start(void);
/* The node table's allgather also carries each rank's gas_rt_cpu_key() and
 * usable CPUs; *cpu_sharers_p: how many ranks (this one included) have the
 * same key; *shares_p: whether they outnumber this rank's CPUs (the rule the
 * teams' cpus_shared and gas_init's waits both follow). */
gas_status_t gas_co_start_nodes(int *cpu_sharers_p, int *shares_p);
void gas_co_stop(void);
/* At gas_finalize, after its barrier: gas_co_chan_leftover on every live team (the first error). */
gas_status_t gas_co_check_ends(const char *call);
/*
 * A collective call on team t begins on this thread (gas_barrier,
 * gas_malloc, gas_malloc_dist and gas_free are calls on the world team):
 * GAS_OK, the team check's error, or GAS_ERR_INVALID when another thread
 * of this rank is inside a collective call on t (gas.h allows one thread
 * per rank; two at once would interleave their calls' messages and give
 * wrong results).  After an error nothing was done and the call must
 * return it without gas_co_call_leave.  One uncontended atomic exchange.
 */
gas_status_t gas_co_call_enter(const char *call, gas_team_t t);
/* The end of a call that entered t: releases it, returns st. */
gas_status_t gas_co_call_leave(gas_team_t t, gas_status_t st);
/*
 * A world call of `kind` (its world barrier is number `epoch`) against
 * collectives: GAS_ERR_INVALID (raised for call) when a member of a live
 * team is in a collective on it that this rank has not made (its call
 * number is this rank's next one or later) and so cannot reach that
 * barrier: for gas_finalize, a member that waits in or failed in such a
 * call (this rank never makes it); for gas_barrier, gas_malloc(_dist) and
 * gas_free, a member blocked in such a call that had not entered world
 * barrier `epoch` when it said so (it waits for this rank's call, this
 * rank's barrier waits for it).  This rank's call then stands in for that
 * collective: it counts as failed here, and the members get a failure note
 * naming this call, so those waiting in it fail too.  Else GAS_OK.  Reads
 * the wait notes in this rank's slots; sends nothing unless it fails.
 */
gas_status_t gas_co_world_check(const char *call, enum gas_gs_call_kind kind, uint64_t epoch);
/*
 * gas_finalize has waited long in its barrier: tell every member of every
 * live team (a wait note), so that one waiting in a collective meanwhile
 * reports the mismatch; left = 1 when it returned without finalizing.
 */
void gas_co_finalize_note(int left);

#endif
