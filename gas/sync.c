/*
 * sync.c - fence, quiet and the barrier.
 *
 * The barrier is a dissemination barrier built from put_signal into scratch
 * space at a fixed offset of every segment: in round k rank r sends to
 * (r + 2^k) mod P and waits for the signal from (r - 2^k) mod P.  Each round
 * counter only grows (barrier e waits for count >= e), so no reset is needed.
 * Every message also carries the min and max of a 64-bit value seen so far,
 * which lets collective calls check that all ranks passed the same arguments
 * at no extra cost (min/max are idempotent, so the overlap of dissemination
 * rounds does no harm).  Value slots alternate by barrier parity: a sender
 * cannot be two barriers ahead of its receiver.  A barrier whose wait timed
 * out (GAS_TIMEOUT) is remembered, and the next barrier call on this rank
 * finishes that one instead of starting a new one, so a retry after a late
 * peer keeps every rank's counters in step.  Each rank also keeps the last
 * barrier it entered in its scratch, so that a rank whose wait timed out can
 * name the ranks not in the barrier yet (gas/barrier_late.c).
 */
#include "internal.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#define GAS_GS_BARRIER_ROUNDS 32

struct barrier_area {
    uint64_t count[GAS_GS_BARRIER_ROUNDS];
    uint64_t vals[2][GAS_GS_BARRIER_ROUNDS][2]; /* [parity][round] = {min, max} */
    uint64_t entered;   /* the last world barrier this rank entered: a rank whose wait
                           timed out reads every rank's (gas_gs_barrier_late) */
};

_Static_assert(sizeof(struct barrier_area) <= GAS_AL_SCRATCH_BYTES, "barrier scratch too large");

#define BARRIER_OFF GAS_AL_SCRATCH_OFFSET
#define ENTERED_OFF (BARRIER_OFF + offsetof(struct barrier_area, entered))

static struct barrier_area *local_area(void)
{
    return (struct barrier_area *)(void *)(gas_gs.seg.base + BARRIER_OFF);
}

static gas_status_t api_fence(void)
{
    gas_rt_tick();
    gas_status_t st = gas_gs_check("gas_fence");
    return st != GAS_OK ? st : gas_tl_fence_all();
}

GAS_EXPORT gas_status_t gas_fence(void)
{
    GAS_GS_GATED("gas_fence", api_fence());
}

/* The earlier operation's failure that a synchronising call's quiet found
 * (gas_gs_sync_quiet), until a call that completes raises it. */
static struct {
    pthread_mutex_t lock;
    gas_tl_report_t rep;
} held = {.lock = PTHREAD_MUTEX_INITIALIZER};

gas_status_t gas_gs_sync_quiet(const char *call)
{
    gas_tl_report_t rep = {.status = GAS_OK};
    gas_status_t st = gas_tl_quiet_sync(call, &rep);
    if (rep.status == GAS_OK)
        return st;
    pthread_mutex_lock(&held.lock);
    int kept = held.rep.status == GAS_OK;
    if (kept)
        held.rep = rep;
    pthread_mutex_unlock(&held.lock);
    if (!kept)   /* one is raised per call: this one is only logged */
        gas_log_error("sync", "%s: an earlier operation failed too: %s", call, rep.msg);
    return st;
}

gas_status_t gas_gs_sync_report(const char *call, const char *done, gas_status_t st)
{
    if (st != GAS_OK)
        return st;
    pthread_mutex_lock(&held.lock);
    gas_tl_report_t rep = held.rep;
    held.rep.status = GAS_OK;
    pthread_mutex_unlock(&held.lock);
    if (rep.status == GAS_OK)
        return GAS_OK;
    return gas_rt_error(rep.status, call, "an earlier operation of this rank failed: %s "
                        "(reported here; %s)", rep.msg, done);
}

static gas_status_t api_quiet(void)
{
    gas_rt_tick();
    gas_status_t st = gas_gs_check("gas_quiet");
    if (st != GAS_OK)
        return st;
    int began = gas_rt_call_begin();   /* every transport's quiet within one GAS_TIMEOUT */
    st = gas_gs_sync_quiet("gas_quiet");
    gas_rt_call_end(began);
    return gas_gs_sync_report("gas_quiet", "every operation issued before is complete", st);
}

GAS_EXPORT gas_status_t gas_quiet(void)
{
    GAS_GS_GATED("gas_quiet", api_quiet());
}

static gas_status_t api_progress(void)
{
    gas_rt_tick();
    gas_status_t st = gas_gs_check("gas_progress");
    if (st != GAS_OK)
        return st;
    if (!gas_rt_progress())
        gas_rt_poll_idle();
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_progress(void)
{
    GAS_GS_GATED("gas_progress", api_progress());
}

/* A world call's barrier against members in collectives (gas_co_world_check). */
struct world_watch {
    const char *call;
    enum gas_gs_call_kind kind;
    uint64_t epoch;     /* the world barrier it is in */
    uint64_t carried;   /* the value this rank's rounds carry (an unfinished call's, resumed) */
    uint64_t check_at;  /* when to look at the members' wait notes next */
    int noted;          /* this rank's finalize notes went out */
    gas_status_t st;    /* a mismatch found */
};

struct round_wait {
    const uint64_t *count;
    uint64_t epoch;
    int from;         /* the rank whose signal it is */
    int lost;         /* the rank given up on that ended the wait, or -1 */
    uint64_t probe_at; /* when to probe `from` next (gas_tl_probe) */
    struct world_watch *ww;   /* a world call's barrier (gas_gs_barrier_call), else NULL */
    const char *call;
};

/*
 * The round's signal came, or a rank was given up on (then it never may).
 * Waiting long, it probes the sender, so that a silent one is given up on.
 * In a world call's barrier, once it has waited GAS_TL_PROBE_AFTER_NS, a
 * member in a collective that keeps it from this barrier (gas_co_world_check)
 * ends the wait (ww->st); gas_finalize's also tells every member of every
 * team first (a wait note).
 */
static int round_arrived(void *arg)
{
    struct round_wait *w = arg;
    if (__atomic_load_n(w->count, __ATOMIC_ACQUIRE) >= w->epoch)
        return 1;
    struct world_watch *f = w->ww;
    if (f && gas_tl_probe_due(&f->check_at)) {
        if (!f->noted && f->kind == GAS_GS_CALL_FINALIZE) {
            f->noted = 1;
            gas_co_finalize_note(0);
        }
        if ((f->st = gas_co_world_check(f->call, f->kind, f->epoch)) != GAS_OK)
            return 1;   /* (the wait asks no more once this held: runtime/wait.c gated_cond) */
    }
    w->lost = gas_tl_signal_missing(&w->probe_at, w->from, NULL, gas_gs.nranks);
    return w->lost >= 0;
}

/* A barrier whose wait timed out: the next call resumes it where it stopped. */
static struct {
    int active;
    uint64_t epoch;
    int round;        /* its signal was sent; its wait is what timed out */
    uint64_t mm[2];
    uint64_t value;   /* this rank's own value (a world call's kind and arguments) */
} interrupted;

/* Round k of barrier e: tell (me + 2^k) mod P, carrying what this rank knows. */
static gas_status_t send_round(const char *call, int to, int k, int parity, const uint64_t mm[2])
{
    gas_tl_peer_t *peer;
    gas_status_t st = gas_tl_peer_for(call, to, &peer);
    if (st != GAS_OK)
        return st;
    uint64_t voff = BARRIER_OFF + offsetof(struct barrier_area, vals) +
                    ((size_t)parity * GAS_GS_BARRIER_ROUNDS + (size_t)k) * 16;
    uint64_t coff = BARRIER_OFF + offsetof(struct barrier_area, count) + (size_t)k * 8;
    st = gas_tl_put_signal_rt(peer, voff, mm, 2 * sizeof *mm, coff, 1, GAS_SIGNAL_ADD, call);
    if (st == GAS_ERR_UNSUPPORTED) {
        gas_tl_amo_t a = {.op = GAS_AMO_ADD, .width = 8, .offset = coff, .operand = 1};
        st = gas_tl_put_rt(peer, voff, mm, 2 * sizeof *mm, call);
        if (st >= 0)
            st = peer->ops->fence();
        if (st >= 0)
            st = gas_tl_amo_rt(peer, &a, call);
    }
    return st < 0 ? st : GAS_OK;
}

static gas_status_t barrier_rounds(const char *call, uint64_t value, struct world_watch *ww,
                                   uint64_t *min_p, uint64_t *max_p);

/* gas_gs_barrier_minmax; ww: a world call's barrier (else NULL).  The quiet
 * and every round's wait within one GAS_TIMEOUT (a retry resumes the rounds). */
static gas_status_t barrier_minmax(const char *call, uint64_t value, struct world_watch *ww,
                                   uint64_t *min_p, uint64_t *max_p)
{
    int began = gas_rt_call_begin();
    gas_status_t st = barrier_rounds(call, value, ww, min_p, max_p);
    gas_rt_call_end(began);
    return st;
}

uint64_t gas_gs_world_epoch(void)
{
    return __atomic_load_n(&gas_gs.barrier_epoch, __ATOMIC_RELAXED);
}

/* (Any thread numbering a collective asks, while the world-call thread may be
 * interrupting or resuming a barrier: only `active` is read, atomically; an
 * interrupted barrier's epoch is the world epoch, which set_epoch stored.) */
uint64_t gas_gs_next_world_epoch(void)
{
    return gas_gs_world_epoch() + !__atomic_load_n(&interrupted.active, __ATOMIC_RELAXED);
}

/*
 * Barrier e counts as entered (gas_gs_world_epoch, which this rank's wait
 * notes carry, and the word of its segment that peers whose wait timed out
 * read) before its quiet, whose wait may write them; undone when it fails
 * before anything is sent.
 */
static void set_epoch(uint64_t e)
{
    __atomic_store_n(&gas_gs.barrier_epoch, e, __ATOMIC_RELAXED);
    __atomic_store_n(&local_area()->entered, e, __ATOMIC_RELEASE);
}

/* A round's wait timed out: the message names the ranks not in the barrier first. */
static void explain_late(void *arg, char *buf, size_t cap)
{
    const struct round_wait *w = arg;
    gas_gs_barrier_late(w->call, w->epoch, ENTERED_OFF, buf, cap);
}

static gas_status_t barrier_rounds(const char *call, uint64_t value, struct world_watch *ww,
                                   uint64_t *min_p, uint64_t *max_p)
{
    int resume = interrupted.active;
    uint64_t e = resume ? interrupted.epoch : gas_gs.barrier_epoch + 1;
    gas_status_t st;
    if (ww) {   /* a member in a collective that keeps it from this barrier: fail before sending */
        ww->epoch = e;
        ww->carried = resume ? interrupted.value : value;
        if ((st = gas_co_world_check(call, ww->kind, e)) != GAS_OK)
            return st;
    }
    if (!resume)
        set_epoch(e);
    if (ww)   /* (the quiet below delivers them before this rank's first signal) */
        gas_co_flush_relays(call);
    st = gas_gs_sync_quiet(call);   /* an earlier operation's failure: raised after the rounds */
    int P = gas_gs.nranks, me = gas_gs.rank;
    int lost = st == GAS_OK ? gas_tl_first_lost(NULL, P) : -1;
    if (lost >= 0)   /* its wait would fail on it: fail before sending anything */
        st = gas_gs_lost_error(call, lost, "the barrier cannot complete");
    if (st != GAS_OK) {
        if (!resume)
            set_epoch(e - 1);
        return st;
    }
    int first_round = 0;
    uint64_t mm[2] = {value, value};
    if (resume) {
        value = interrupted.value;   /* what its rounds sent out already */
        first_round = interrupted.round;
        mm[0] = interrupted.mm[0];
        mm[1] = interrupted.mm[1];
        __atomic_store_n(&interrupted.active, 0, __ATOMIC_RELAXED);
    }
    int parity = (int)(e & 1);
    struct barrier_area *area = local_area();
    for (int k = first_round, dist = 1 << first_round; dist < P; k++, dist <<= 1) {
        int to = (me + dist) % P, from = (me - dist % P + P) % P;
        if (!(resume && k == first_round) && (st = send_round(call, to, k, parity, mm)) != GAS_OK)
            return st;
        struct round_wait w = {&area->count[k], e, from, -1, 0, ww, call};
        char what[96];
        snprintf(what, sizeof what, "round %d of barrier %llu (a signal from rank %d)", k,
                 (unsigned long long)e, from);
        st = gas_rt_wait_explained(round_arrived, &w, w.count, call, what, explain_late, &w);
        if (st == GAS_OK && ww && ww->st != GAS_OK)
            st = ww->st;
        if (st == GAS_OK && w.lost >= 0)
            st = gas_gs_lost_error(call, w.lost, "the barrier cannot complete");
        if (st != GAS_OK) {
            interrupted.epoch = e;   /* (= the world epoch: set_epoch above) */
            __atomic_store_n(&interrupted.active, 1, __ATOMIC_RELAXED);
            interrupted.round = k;
            interrupted.mm[0] = mm[0];
            interrupted.mm[1] = mm[1];
            interrupted.value = value;
            return st;
        }
        const uint64_t *got = area->vals[parity][k];
        if (got[0] < mm[0])
            mm[0] = got[0];
        if (got[1] > mm[1])
            mm[1] = got[1];
    }
    if (min_p)
        *min_p = mm[0];
    if (max_p)
        *max_p = mm[1];
    return GAS_OK;
}

gas_status_t gas_gs_barrier_minmax(const char *call, uint64_t value, uint64_t *min_p,
                                   uint64_t *max_p)
{
    return barrier_minmax(call, value, NULL, min_p, max_p);
}

/*
 * A world call's barrier: a member in a collective that keeps it from this
 * barrier (gas_co_world_check) fails it at once (before anything is sent)
 * or while it waits, instead of both waiting for each other until
 * GAS_TIMEOUT (for ever by default).  A finalize that returns unfinalized
 * after its notes went out says so, so members do not take the old note
 * for a wait.
 */
static gas_status_t world_barrier(const char *call, enum gas_gs_call_kind kind, uint64_t value,
                                  uint64_t *carried_p, uint64_t *min_p, uint64_t *max_p)
{
    struct world_watch ww = {.call = call, .kind = kind, .carried = value};
    gas_status_t st = barrier_minmax(call, value, &ww, min_p, max_p);
    if (st != GAS_OK && ww.noted)
        gas_co_finalize_note(1);
    if (st == GAS_OK && kind != GAS_GS_CALL_FINALIZE)   /* (finalize's end check reports them) */
        gas_co_world_adopt(ww.epoch);
    *carried_p = ww.carried;
    return st;
}

/* The kind in the top byte, so that min and max tell which calls met. */
#define CALL_ARGS_MASK ((1ull << 56) - 1)
/* Bit 0 of a gas_barrier's arguments: it was called as gas_team_barrier(GAS_TEAM_WORLD). */
#define CALL_AS_TEAM_BARRIER 1ull

const char *gas_gs_call_name(enum gas_gs_call_kind kind)
{
    switch (kind) {
    case GAS_GS_CALL_BARRIER:
        return "gas_barrier";
    case GAS_GS_CALL_FINALIZE:
        return "gas_finalize";
    case GAS_GS_CALL_MALLOC:
        return "gas_malloc or gas_malloc_dist";
    case GAS_GS_CALL_FREE:
        return "gas_free";
    case GAS_GS_CALL_TEAM_BARRIER:
        return "gas_team_barrier";
    }
    return "another collective call";
}

/*
 * The value a call's world barrier carries.  gas_team_barrier(GAS_TEAM_WORLD)
 * carries gas_barrier's kind, so the two match each other; only a bit of its
 * arguments tells them apart, for messages.
 */
static uint64_t call_id(enum gas_gs_call_kind kind, uint64_t args)
{
    if (kind == GAS_GS_CALL_TEAM_BARRIER)
        return (uint64_t)GAS_GS_CALL_BARRIER << 56 | CALL_AS_TEAM_BARRIER;
    return (uint64_t)kind << 56 | (args & CALL_ARGS_MASK);
}

/* The API call that sent barrier value `id`. */
static const char *id_name(uint64_t id)
{
    enum gas_gs_call_kind kind = (enum gas_gs_call_kind)(id >> 56);
    if (kind == 0)
        return "gas_malloc's heap growth";
    if (kind == GAS_GS_CALL_BARRIER && (id & CALL_AS_TEAM_BARRIER))
        kind = GAS_GS_CALL_TEAM_BARRIER;
    return gas_gs_call_name(kind);
}

/* What a failed gas_finalize's message adds: how to finish (nothing for other calls). */
static const char *finalize_hint(enum gas_gs_call_kind kind)
{
    return kind == GAS_GS_CALL_FINALIZE
               ? "; this rank is not finalized: call gas_finalize again (it starts a new "
                 "world barrier, which the other ranks' next world call joins)"
               : "";
}

/*
 * This call resumed the world barrier of an earlier call of another kind
 * (`sent`: its value) that had failed after its rounds went out (a timeout,
 * a mismatch found while it waited): the rounds cannot be taken back, so
 * the other ranks met that call, not this one (it did nothing).
 */
static gas_status_t resumed_other(const char *call, enum gas_gs_call_kind kind, uint64_t sent,
                                  uint64_t mn, uint64_t mx)
{
    const char *mine = id_name(sent);
    uint64_t other = mn >> 56 != sent >> 56 ? mn : mx;
    if (other >> 56 == sent >> 56)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "this rank's %s, which failed earlier after its world barrier had "
                            "begun, was still this rank's part of that barrier, and every other "
                            "rank made that call there (so theirs completed); this call did "
                            "nothing", mine);
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "this rank's %s, which failed earlier after its world barrier had begun, "
                        "was still this rank's part of that barrier, and another rank called %s "
                        "there, so every rank reports this mismatch (nothing was done); the "
                        "next call starts a new barrier%s",
                        mine, id_name(other), finalize_hint(kind));
}

gas_status_t gas_gs_barrier_call(const char *call, enum gas_gs_call_kind kind, uint64_t args,
                                 int *args_differ_p)
{
    uint64_t id = call_id(kind, args), mn = 0, mx = 0, sent = id;
    gas_status_t st = world_barrier(call, kind, id, &sent, &mn, &mx);
    /* gas_finalize resumed an earlier call that every other rank made there: that
     * call is over everywhere, so the finalize's own barrier follows (the others'
     * next world call). */
    if (st == GAS_OK && kind == GAS_GS_CALL_FINALIZE && sent >> 56 != id >> 56 &&
        mn >> 56 == sent >> 56 && mx >> 56 == sent >> 56)
        st = world_barrier(call, kind, id, &sent, &mn, &mx);
    if (st != GAS_OK)
        return st;
    if (sent >> 56 != id >> 56)
        return resumed_other(call, kind, sent, mn, mx);
    if (args_differ_p)
        *args_differ_p = mn != mx;
    if ((mn >> 56) == (mx >> 56))
        return GAS_OK;
    uint64_t other = mn >> 56 != id >> 56 ? mn : mx;
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "another rank called %s at the same point; every rank must make the "
                        "same collective calls in the same order (nothing was done)%s",
                        id_name(other), finalize_hint(kind));
}

gas_status_t gas_gs_barrier(const char *call, enum gas_gs_call_kind kind)
{
    gas_status_t st = gas_gs_check(call);
    if (st == GAS_OK)
        st = gas_co_call_enter(call, gas_team_world_);
    if (st != GAS_OK)
        return st;
    st = gas_gs_barrier_call(call, kind, 0, NULL);
    return gas_co_call_leave(gas_team_world_,
                             gas_gs_sync_report(call, "the barrier completed", st));
}

static gas_status_t api_barrier(void)
{
    return gas_gs_barrier("gas_barrier", GAS_GS_CALL_BARRIER);
}

GAS_EXPORT gas_status_t gas_barrier(void)
{
    GAS_GS_GATED("gas_barrier", api_barrier());
}
