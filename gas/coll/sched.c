/*
 * sched.c - schedules and their executor.
 *
 * An algorithm builds a schedule: rounds of operations.  A round first runs
 * its local operations (copies, reductions) in order, then progresses all of
 * its sends and receives together, chunk by chunk, until every one is
 * complete; then the next round starts.  Sends and receives of one round
 * must not touch the same bytes.  Because every round's communication
 * progresses concurrently and each pair's channel is FIFO, algorithms that
 * are safe with MPI's Isend/Irecv/Waitall per step are safe here.
 *
 * Blocking collectives run their schedule to the end.  Non-blocking ones are
 * queued on their team: only the oldest schedule of a team runs (so chunks
 * of different calls on one team stay in call order), from gas_test/gas_wait
 * and from a runtime progress hook that every libgas wait drives.
 */
#include "coll.h"
#include "alloc/arena_fast.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_EVERY 64   /* polls between two looks for mismatched calls */

/*
 * A schedule's done and queued flags are read by its owner while another
 * thread's wait may be pumping it: the pumper stores them with release, so
 * an owner that sees it done and out of the queue (acquire) may free it.
 */
static inline int sched_done(const struct gas_co_sched *s)
{
    return __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
}
static inline void sched_set_done(struct gas_co_sched *s)
{
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}
static inline int sched_queued(const struct gas_co_sched *s)
{
    return __atomic_load_n(&s->queued, __ATOMIC_ACQUIRE);
}

static uint32_t mix32(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return (uint32_t)v;
}

static gas_status_t complete_handle(struct gas_op *op, int block, int *done_p);

struct gas_co_sched *gas_co_sched_new(const char *callname, gas_team_t t, gas_coll_t coll,
                                      int alg, gas_dtype_t type, gas_redop_t op, uint64_t count,
                                      int root)
{
    struct gas_co_sched *s = calloc(1, sizeof *s);
    if (s == NULL) {
        gas_rt_error(GAS_ERR_NOMEM, callname, "no memory for a collective's schedule");
        return NULL;
    }
    s->op.complete = complete_handle;
    s->callname = callname;
    s->team = t;
    s->type = type;
    s->redop = op;
    s->es = gas_dtype_size(type);
    s->call = (struct gas_co_call){
        .coll = (uint8_t)coll, .alg = (uint8_t)alg, .type = (uint8_t)type,
        .op = (uint8_t)op, .arghash = mix32(count * 0x9e3779b97f4a7c15ull ^ (uint64_t)(root + 1)),
        .api = gas_co_api_of(callname),
    };
    return s;
}

static void tmp_free(void *p)
{
    const char *seg = gas_gs.seg.base;
    if ((const char *)p >= seg && (const char *)p < seg + gas_gs.seg.size)
        gas_al_arena_free(p);
    else
        free(p);
}

void gas_co_sched_free(struct gas_co_sched *s)
{
    if (s == NULL)
        return;
    gas_co_chan_revoke_forget(s);
    for (size_t i = 0; i < s->ntmps; i++)
        tmp_free(s->tmps[i]);
    free(s->tmps);
    free(s->ops);
    free(s->round_end);
    free(s);
}

static void nomem(struct gas_co_sched *s)
{
    if (s->status == GAS_OK)
        s->status = gas_rt_error(GAS_ERR_NOMEM, s->callname, "no memory for a schedule");
}

static int is_comm(const struct gas_co_op *o)
{
    return o->kind == GAS_CO_SEND || o->kind == GAS_CO_RECV || o->kind == GAS_CO_RECV_REDUCE;
}

void gas_co_round(struct gas_co_sched *s)
{
    size_t start = s->nrounds ? s->round_end[s->nrounds - 1] : 0;
    if (s->nops == start)
        return;   /* nothing in the open round */
    if (s->nrounds == s->rcap) {
        size_t ncap = s->rcap ? 2 * s->rcap : 16;
        size_t *n = realloc(s->round_end, ncap * sizeof *n);
        if (n == NULL) {
            nomem(s);
            return;
        }
        s->round_end = n;
        s->rcap = ncap;
    }
    s->round_end[s->nrounds++] = s->nops;
}

static void add(struct gas_co_sched *s, struct gas_co_op o)
{
    if (!is_comm(&o) && s->nops > 0) {
        /* local operations open a round: close one that already communicates */
        size_t start = s->nrounds ? s->round_end[s->nrounds - 1] : 0;
        if (s->nops > start && is_comm(&s->ops[s->nops - 1]))
            gas_co_round(s);
    }
    if (s->nops == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 16;
        struct gas_co_op *n = realloc(s->ops, ncap * sizeof *n);
        if (n == NULL) {
            nomem(s);
            return;
        }
        s->ops = n;
        s->cap = ncap;
    }
    s->ops[s->nops++] = o;
}

void gas_co_send(struct gas_co_sched *s, int peer, const void *src, size_t len)
{
    add(s, (struct gas_co_op){.kind = GAS_CO_SEND, .peer = peer, .src = src, .len = len});
}

void gas_co_recv(struct gas_co_sched *s, int peer, void *dst, size_t len)
{
    add(s, (struct gas_co_op){.kind = GAS_CO_RECV, .peer = peer, .dst = dst, .len = len});
}

static void *tmp_alloc(struct gas_co_sched *s, size_t len, int seg_only);

/*
 * A segment temporary of len bytes for a whole message received in the round
 * being built, or NULL: one that an earlier round used (its reduction is done
 * by the time this round starts), else a new one; at most two per schedule,
 * so a call never holds more than twice its largest message this way.
 */
static char *whole_tmp(struct gas_co_sched *s, size_t len)
{
    size_t round = s->nrounds;
    for (int i = 0; i < s->nwholes; i++)
        if (s->wholes[i].round != round && s->wholes[i].len >= len) {
            s->wholes[i].round = round;
            return s->wholes[i].p;
        }
    if (s->nwholes == (int)(sizeof s->wholes / sizeof s->wholes[0]))
        return NULL;
    char *p = tmp_alloc(s, len, 1);
    if (p)
        s->wholes[s->nwholes++] = (struct gas_co_whole){.p = p, .len = len, .round = round};
    return p;
}

/*
 * Receive len bytes from peer and combine them into dst.  A message that
 * fits the team's mailbox from peer is reduced chunk by chunk as it arrives
 * (the sender's copy and this rank's reduction overlap).  A larger one
 * (and at least GAS_COLL_ZCOPY_MIN bytes) would stall the sender on a
 * credit from this rank for every refill: it lands whole in a temporary in
 * the segment instead (the sender writes it there directly, one hand-shake)
 * and is reduced into dst when the round ends.  Without a temporary
 * (whole_tmp) it goes chunk by chunk.
 */
void gas_co_recv_reduce(struct gas_co_sched *s, int peer, void *dst, size_t len)
{
    int whole = gas_co_zcopy_min && len >= gas_co_zcopy_min && len > s->team->mbox_bytes;
    char *tmp = whole ? whole_tmp(s, len) : NULL;
    if (tmp)
        add(s, (struct gas_co_op){.kind = GAS_CO_RECV, .peer = peer, .dst = tmp, .len = len,
                                  .rdst = dst});
    else
        add(s, (struct gas_co_op){.kind = GAS_CO_RECV_REDUCE, .peer = peer, .dst = dst,
                                  .len = len});
}

void gas_co_copy(struct gas_co_sched *s, void *dst, const void *src, size_t len)
{
    if (len > 0 && dst != src)
        add(s, (struct gas_co_op){.kind = GAS_CO_COPY, .dst = dst, .src = src, .len = len});
}

void gas_co_reduce_local(struct gas_co_sched *s, void *dst, const void *src, size_t len)
{
    if (len > 0)
        add(s, (struct gas_co_op){.kind = GAS_CO_REDUCE, .dst = dst, .src = src, .len = len});
}

void *gas_co_tmp(struct gas_co_sched *s, size_t len)
{
    return tmp_alloc(s, len, 0);
}

/* A temporary freed with s; in the segment when large (seg_only: there or NULL, not raised). */
static void *tmp_alloc(struct gas_co_sched *s, size_t len, int seg_only)
{
    if (s->ntmps == s->tcap) {
        size_t ncap = s->tcap ? 2 * s->tcap : 4;
        void **n = realloc(s->tmps, ncap * sizeof *n);
        if (n == NULL) {
            nomem(s);
            return NULL;
        }
        s->tmps = n;
        s->tcap = ncap;
    }
    /* Large temporaries live in the segment, so messages into them can go zero-copy. */
    int why = 0;
    void *p = gas_co_zcopy_min && len >= gas_co_zcopy_min ? gas_al_arena_alloc(len, &why) : NULL;
    if (p == NULL && seg_only)
        return NULL;
    if (p == NULL)
        p = malloc(len ? len : 1);
    if (p == NULL) {
        nomem(s);
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

/* ------------------------------------------------------------------------ */
/* Executor                                                                  */
/* ------------------------------------------------------------------------ */

static int op_done(const struct gas_co_op *o)
{
    return o->done == o->len && (o->len > 0 || o->started);
}

/*
 * End s, which failed (s->status): it moves nothing more, the zero-copy
 * entries it posted are taken back, and the members still waiting in this
 * call learn of it (gas_co_chan_check_notes), all on the first call.  s is
 * done once no sender that claimed one of those entries before can still
 * write into its buffers (gas_co_chan_revoke_over): until then it stays at
 * its team's queue's head, and the call's owner waits for it (release).
 * Returns 1 when it did something (a first call, or s became done).
 */
static int end_failed(struct gas_co_sched *s)
{
    int first = !s->ending;
    if (first) {
        s->ending = 1;
        s->probe_at = 0;   /* (gas_co_chan_revoke_over probes silent senders) */
        gas_co_chan_revoke_cts(s);
        gas_co_chan_note_failed(s);
    }
    if (!gas_co_chan_revoke_over(s))
        return first;
    sched_set_done(s);
    return 1;
}

/* Advance s as far as it goes now; returns how many steps were made. */
static int sched_step(struct gas_co_sched *s)
{
    int moved = 0;
    while (!sched_done(s)) {
        if (s->status != GAS_OK)
            return moved + end_failed(s);
        if (s->cur == s->nrounds) {
            sched_set_done(s);
            return moved + 1;
        }
        size_t lo = s->cur ? s->round_end[s->cur - 1] : 0, hi = s->round_end[s->cur];
        if (!s->round_started) {
            /* a member that already failed, refused or gave up on this call fails it here */
            if (s->cur == 0 && gas_co_chan_check_failures(s))
                continue;
            if (s->cur == 0 && s->quiet_first) {
                /* an earlier operation's failure is held: the barrier goes on */
                gas_status_t st = gas_gs_sync_quiet(s->callname);
                if (st != GAS_OK) {
                    s->status = st;
                    continue;
                }
            }
            for (size_t i = lo; i < hi && !is_comm(&s->ops[i]); i++) {
                struct gas_co_op *o = &s->ops[i];
                if (o->kind == GAS_CO_COPY)
                    memmove(o->dst, o->src, o->len);
                else
                    gas_co_reduce(o->dst, o->src, o->len / s->es, s->type, s->redop);
                o->done = o->len;
            }
            s->round_started = 1;
            moved++;
        }
        /*
         * Messages between two ranks must go in op order: an op that is not
         * done holds its (peer, direction) against later ops of the round.
         */
        int all = 1;
        gas_team_t t = s->team;
        uint32_t pass = ++t->pass;
        for (size_t i = lo; i < hi && s->status == GAS_OK; i++) {
            struct gas_co_op *o = &s->ops[i];
            if (!is_comm(o) || op_done(o))
                continue;
            uint32_t *held = o->kind == GAS_CO_SEND ? &t->held_send[o->peer]
                                                    : &t->held_recv[o->peer];
            if (*held != pass)
                while (!op_done(o) && s->status == GAS_OK &&
                       (o->kind == GAS_CO_SEND ? gas_co_chan_send(s, o) : gas_co_chan_recv(s, o)))
                    moved++;
            if (!op_done(o)) {
                *held = pass;
                all = 0;
            }
        }
        if (s->status != GAS_OK)
            continue;
        if (!all)
            return moved;
        for (size_t i = lo; i < hi; i++)
            if (s->ops[i].rdst)
                gas_co_reduce(s->ops[i].rdst, s->ops[i].dst, s->ops[i].len / s->es, s->type,
                              s->redop);
        gas_co_chan_flush_credits(s);
        s->cur++;
        s->round_started = 0;
    }
    return moved;
}

void gas_co_test_sleep(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* Run the team's queue as far as it goes; completed schedules leave it. */
static int team_pump(gas_team_t t)
{
    if (__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    int moved = 0;
    while (t->qhead) {
        struct gas_co_sched *s = t->qhead;
        moved += sched_step(s);
        if (!sched_done(s))
            break;
        __atomic_store_n(&t->qhead, s->next, __ATOMIC_RELEASE); /* read unlocked: gas_co_progress_all */
        if (t->qhead == NULL && gas_co_test_pump_delay)
            gas_co_test_sleep(gas_co_test_pump_delay);   /* between emptying and clearing */
        if (t->qhead == NULL)
            t->qtail = NULL;
        __atomic_store_n(&s->queued, 0, __ATOMIC_RELEASE); /* its owner may free it now */
    }
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
    return moved;
}

void gas_co_team_lock(gas_team_t t)
{
    while (__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

/* gas_co_team_lock without waiting: 1 when taken. */
static int team_trylock(gas_team_t t)
{
    return !__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE);
}

void gas_co_team_unlock(gas_team_t t)
{
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* Take s out of its team's queue, wherever it is (the executor held). */
static void unlink_sched(gas_team_t t, struct gas_co_sched *s)
{
    struct gas_co_sched **pp = &t->qhead, *prev = NULL;
    while (*pp != s) {
        prev = *pp;
        pp = &prev->next;
    }
    *pp = s->next;
    if (t->qtail == s)
        t->qtail = prev;
    s->queued = 0;
}

/* Start or go on ending s (a struct gas_co_sched *), which failed, if its team's
 * executor is free: 1 when s is done.  (A wait's condition, as it is.) */
static int try_end(void *arg)
{
    struct gas_co_sched *s = arg;
    if (sched_done(s))
        return 1;
    gas_team_t t = s->team;
    if (!team_trylock(t))
        return 0;   /* another thread runs the executor: it ends s, or we look again */
    if (!sched_done(s))
        (void)end_failed(s);
    gas_co_team_unlock(t);
    return sched_done(s);
}

/*
 * Wait until s, which failed and is queued, has ended: no sender that
 * claimed one of its zero-copy entries can still write into its buffers.
 * At GAS_TIMEOUT of its own it gives up with a warning naming the senders,
 * whose data may then still land; or when gas_finalize closes the gate.  Its
 * own deadline even inside a bracket (gas_team_split, gas_team_destroy): the
 * call's may have passed already, and the caller frees the buffers next.
 */
static void wait_ended(struct gas_co_sched *s)
{
    /* (out of the bracket from the first try_end on: the fence and swap that
     * take the entries back wait in the transports, and must not find the
     * call's deadline passed) */
    struct gas_rt_call_saved bracket = gas_rt_call_suspend();
    gas_status_t st = GAS_OK;
    if (!try_end(s)) {
        char what[160];
        snprintf(what, sizeof what, "the end of the zero-copy transfers into the destination "
                 "of its failed collective #%u (%s) on a team of %d", s->call.seq,
                 s->callname, s->team->size);
        /* (no watched word: the revoke swaps' completions lie outside the segment) */
        st = gas_rt_wait(try_end, s, NULL, s->callname, what);
    }
    gas_rt_call_resume(bracket);
    if (st == GAS_OK)
        return;
    gas_team_t t = s->team;
    gas_co_team_lock(t);
    if (!sched_done(s)) {
        char who[96];
        gas_co_chan_revoke_waited(s, who, sizeof who);
        gas_log_warn("coll", "%s: gave up waiting to learn whether rank(s) %s, told to put "
                     "this failed call's data straight into its destination, still do so: it "
                     "may be written after the call returned", s->callname, who);
        sched_set_done(s);
    }
    gas_co_team_unlock(t);
}

/*
 * The call that owns s returns (s done, or failed): free s.  A failed
 * schedule still queued ends first and leaves the queue: mid-way at its
 * head, or behind earlier schedules (then it never started).  Either way it
 * touches no buffer of the call after this (a sender that had claimed a
 * zero-copy entry of it has finished writing: wait_ended), and its members
 * are told.
 */
static void release(struct gas_co_sched *s)
{
    if (sched_queued(s)) { /* (out of the queue its team may be gone) */
        gas_team_t t = s->team;
        wait_ended(s);
        gas_co_team_lock(t);
        if (s->queued)
            unlink_sched(t, s);
        gas_co_team_unlock(t);
    }
    gas_co_sched_free(s);
}

/*
 * Append s to its team's queue.  The executor is held meanwhile: any thread
 * that waits in the library pumps the queue (gas_co_progress_all), and one
 * that ended the last schedule between our look at qtail and our append
 * would clear qtail after it, losing s (its call then never ran).
 */
static void enqueue(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    gas_co_round(s);   /* close the last round */
    gas_co_team_lock(t);
    s->call.seq = gas_co_chan_number(t, &s->before);
    s->next = NULL;
    s->queued = 1;
    if (t->qtail)
        t->qtail->next = s;
    else
        __atomic_store_n(&t->qhead, s, __ATOMIC_RELEASE);
    t->qtail = s;
    gas_co_team_unlock(t);
    gas_co_pending_add(t);   /* after qhead is set: see coll.h */
}

/* Pumps the teams of the pending list only: its cost does not grow with the
 * number of live teams, only with those that have collectives queued. */
int gas_co_progress_all(void)
{
    int moved = 0;
    if (gas_co_pending_none())
        return 0;
    /* Any thread's wait comes here, while the collective thread may add or
     * free a team (team.c): its teams are read under the lock. */
    pthread_rwlock_rdlock(&gas_co_live_lock);
    gas_team_t t;
    for (size_t i = 0; (t = gas_co_pending_at(i)) != NULL; i++)
        moved += team_pump(t);
    pthread_rwlock_unlock(&gas_co_live_lock);
    return moved;
}

/* Probe the members whose messages or credits the team's running schedule
 * still waits for in its current round (gas_tl_probe): a silent one off this
 * node is then declared dead, and the wait fails instead of hanging.  Each
 * of them also gets the call's wait note (once per operation, and again when
 * what the note says of this rank changed: the world barriers it entered,
 * whether its thread is blocked in the wait), and the notes of members
 * waiting for this rank are compared with its call: a member in the same
 * call with other arguments is a mismatch, not a wait. */
static void probe_waited(gas_team_t t, int blocked)
{
    struct gas_co_sched *h = t->qhead;
    if (h == NULL || h->cur >= h->nrounds)
        return;
    size_t lo = h->cur ? h->round_end[h->cur - 1] : 0, hi = h->round_end[h->cur];
    uint64_t as = (gas_gs_world_epoch() << 1 | (blocked != 0)) + 1;
    int renote = h->noted_as != as;
    h->noted_as = as;
    for (size_t i = lo; i < hi; i++) {
        struct gas_co_op *o = &h->ops[i];
        if (!is_comm(o) || op_done(o))
            continue;
        gas_tl_probe(t->world[o->peer]);
        if (!o->noted || renote) {
            o->noted = 1;
            gas_co_chan_note(h, o->peer, blocked);
        }
    }
    gas_co_chan_check_notes(h);
}

/*
 * One look at s for a wait (blocked) or a test: run its team's queue, and
 * learn of what keeps s from completing (a member's call that differs, seen
 * ahead; a member's note that it failed, refused or gave up on this call; a
 * lost member), which fails s.  The polling state stays in s across gas_test
 * calls.  1 when s is done or failed.
 */
static int poll_sched(struct gas_co_sched *s, int blocked)
{
    if (!sched_queued(s) && sched_done(s))
        return 1;   /* out of its team's queue: the team may be gone (destroyed) */
    gas_team_t t = s->team;
    team_pump(t);
    /* What follows reads and fails s, which another thread may be pumping:
     * only while this thread holds the executor (else: look next time). */
    if (__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    if (!sched_done(s)) {
        if (++s->polls % PROBE_EVERY == 0 && t->qhead == s)
            gas_co_chan_probe(s);
        if (gas_tl_probe_due(&s->probe_at))
            probe_waited(t, blocked);
        if (s->status == GAS_OK && gas_co_lost_member(t) >= 0) {
            char what[64];
            snprintf(what, sizeof what, "its collective #%u (%s)", s->call.seq, s->callname);
            s->status = gas_co_lost_error(t, s->callname, what);
        }
    }
    int over = sched_done(s) || s->status != GAS_OK;
    gas_co_team_unlock(t);
    return over;
}

static int run_cond(void *arg)
{
    return poll_sched(arg, 1);
}

/* Append the world ranks of the members that op kind `kind` of s's current round still
 * waits for to buf (at most 4, then how many more); returns how many there are. */
static int list_waited(const struct gas_co_sched *s, int send, char *buf, size_t cap)
{
    gas_team_t t = s->team;
    size_t lo = s->cur ? s->round_end[s->cur - 1] : 0, hi = s->round_end[s->cur];
    int n = 0, last = -1;
    size_t len = strlen(buf);
    for (size_t i = lo; i < hi; i++) {
        const struct gas_co_op *o = &s->ops[i];
        if (!is_comm(o) || op_done(o) || (o->kind == GAS_CO_SEND) != send || o->peer == last)
            continue;
        last = o->peer;
        if (n++ < 4 && len < cap)
            len += (size_t)snprintf(buf + len, cap - len, "%s%d", n > 1 ? ", " : "",
                                    t->world[o->peer]);
    }
    if (n > 4 && len < cap)
        snprintf(buf + len, cap - len, " and %d more", n - 4);
    return n;
}

/*
 * The timeout explainer of a collective's wait (gas_rt_explain_fn): which
 * members the team's running schedule (s, or an earlier non-blocking call
 * queued before it) waits for in its current round, as world ranks: those
 * whose part has not arrived (not in the call yet, in another, or waiting
 * in it for others in turn) and those that have not taken this rank's
 * (the mailbox there is full).
 * Says nothing when another thread holds the team.
 */
static void explain_stuck(void *arg, char *buf, size_t cap)
{
    struct gas_co_sched *s = arg;
    gas_team_t t = s->team;
    buf[0] = '\0';
    if (!team_trylock(t))
        return;
    const struct gas_co_sched *r = t->qhead ? t->qhead : s;
    if (r->status == GAS_OK && r->cur < r->nrounds) {
        char from[96] = "", to[96] = "";
        int nf = list_waited(r, 0, from, sizeof from), nt = list_waited(r, 1, to, sizeof to);
        char call[64] = "";
        if (r != s)
            snprintf(call, sizeof call, " in its earlier collective #%u (%s)", r->call.seq,
                     r->callname);
        size_t len = 0;
        if (nf)
            len = (size_t)snprintf(buf, cap, "this rank waits%s for the part of rank%s %s, "
                                   "which has not arrived (%s not made that call yet, made "
                                   "another, or %s in it for another member)", call,
                                   nf > 1 ? "s" : "", from, nf > 1 ? "they have" : "it has",
                                   nf > 1 ? "wait" : "waits");
        if (nt && len < cap)
            snprintf(buf + len, cap - len, "%s%s for rank%s %s to take this rank's part (%s "
                     "not reached that call yet)", nf ? ", and" : "this rank waits",
                     nf ? "" : call, nt > 1 ? "s" : "", to, nt > 1 ? "they have" : "it has");
    }
    gas_co_team_unlock(t);
}

/* Wait until s is done or failed (it stays allocated); GAS_ERR_TIMEOUT when it is neither. */
static gas_status_t wait_done(struct gas_co_sched *s)
{
    if (poll_sched(s, 1))
        return GAS_OK;
    gas_team_t t = s->team;
    char what[160];
    snprintf(what, sizeof what, "collective #%u (%s, %s) on a team of %d: the other members",
             s->call.seq, s->callname, gas_co_alg_name((gas_coll_t)s->call.coll, s->call.alg),
             t->size);
    gas_status_t st = gas_rt_wait_explained(run_cond, s, GAS_RT_WATCH_SEGMENT, s->callname,
                                            what, explain_stuck, s);
    if (st != GAS_OK && s->status == GAS_OK)
        return st;
    return GAS_OK;
}

/*
 * The status of s, which ended.  A barrier's quiet held an earlier
 * operation's failure (gas_gs_sync_quiet) instead of failing: raised now,
 * once the barrier completed.
 */
static gas_status_t ended_status(const struct gas_co_sched *s)
{
    if (!s->quiet_first)
        return s->status;
    return gas_gs_sync_report(s->callname, "the barrier completed", s->status);
}

gas_status_t gas_co_run(struct gas_co_sched *s)
{
    if (s->status != GAS_OK) {   /* building failed: it never started */
        gas_status_t st = s->status;
        gas_co_refused(s->team, (gas_coll_t)s->call.coll, s->type, st, s->callname);
        gas_co_sched_free(s);
        return st;
    }
    enqueue(s);
    int began = gas_rt_call_begin();   /* waits of the transports inside it too */
    gas_status_t st = wait_done(s);
    gas_rt_call_end(began);
    if (st != GAS_OK && s->status == GAS_OK)
        s->status = st;   /* timed out: the call fails here, and its members are told */
    st = ended_status(s);
    release(s);   /* (a failed call's end may wait: a GAS_TIMEOUT of its own, as in gas_wait) */
    return st;
}

gas_status_t gas_co_start_nb(struct gas_co_sched *s, gas_handle_t *handle_p)
{
    if (s->status != GAS_OK) {   /* building failed: it never started */
        gas_status_t st = s->status;
        gas_co_refused(s->team, (gas_coll_t)s->call.coll, s->type, st, s->callname);
        gas_co_sched_free(s);
        return st;
    }
    s->nonblocking = 1;
    enqueue(s);
    team_pump(s->team);
    if (!sched_queued(s) && sched_done(s)) {
        gas_status_t st = ended_status(s);
        gas_co_sched_free(s);
        *handle_p = GAS_HANDLE_NULL;
        return st;
    }
    *handle_p = &s->op;
    return GAS_OK;
}

static gas_status_t complete_handle(struct gas_op *op, int block, int *done_p)
{
    struct gas_co_sched *s = (struct gas_co_sched *)op;
    if (block) {
        gas_status_t st = wait_done(s);
        if (st == GAS_ERR_TIMEOUT)
            return st;   /* the handle stays valid: the collective goes on */
        if (st != GAS_OK && s->status == GAS_OK)
            s->status = st;
    } else if (sched_queued(s) || !sched_done(s)) {
        /* (a schedule out of the queue is not pumped: gas_team_destroy may
         * have completed it and freed its team before this wait/test) */
        gas_rt_progress();
        poll_sched(s, 0);
    }
    /* (a test does not wait for a failed call's end: a sender that claimed a zero-copy
     * entry of it may still be writing into its buffers, which stay the call's till then) */
    if (!sched_done(s) && (s->status == GAS_OK || (!block && !try_end(s)))) {
        *done_p = 0;
        return GAS_OK;
    }
    gas_status_t st = ended_status(s);
    release(s);
    *done_p = 1;
    return st;
}

gas_status_t gas_co_drain(gas_team_t t)
{
    gas_status_t first = GAS_OK;
    while (t->qtail) {
        struct gas_co_sched *last = t->qtail;
        gas_status_t st = wait_done(last);
        if (st != GAS_OK)
            return st;   /* timed out: the queue stays */
        if (last->status != GAS_OK && last->queued) {
            /* (ending it takes its zero-copy entries back through the transports,
             * which wait: not against gas_team_destroy's deadline, see wait_ended) */
            struct gas_rt_call_saved bracket = gas_rt_call_suspend();
            team_pump(t);   /* failed while waiting: ends it if nothing is queued before it */
            if (last->queued && t->qhead == last && last->ending) {
                wait_ended(last);   /* a sender may still write into its buffers */
                team_pump(t);
            }
            gas_rt_call_resume(bracket);
            if (last->queued)
                return last->status;   /* (a lost member failed it behind others) */
        }
        if (first == GAS_OK)
            first = last->status;
    }
    return first;
}
