/*
 * coll.h - teams and collectives: what the files of gas/coll/ share.
 *
 * Layers inside gas/coll/:
 *   team.c      teams: world, splits, node teams, translation, destroy; the
 *               per-team scratch slots carved from the symmetric heap at init
 *   team_slots.c  where team structs live: never-reused handles, checked
 *               by address before their magic is read
 *   chan.c      per-pair channels in a team's scratch: chunks put with a
 *               signal into the receiver's mailbox, credits flowing back,
 *               a header on every chunk that carries the call's signature
 *   sched.c     schedules: an algorithm is a list of rounds of sends,
 *               receives and local copies/reductions; one executor runs them
 *               blocking or, behind a gas_handle_t, non-blocking
 *   select.c    the tuning table and the GAS_COLL_<NAME> overrides
 *   reduce_ops.c  the type x op kernels
 *   alg_*.c     the algorithms (schedule builders), by family
 *   api.c       the public calls: argument checks, then build and run
 */
#ifndef GAS_CO_COLL_H
#define GAS_CO_COLL_H

#include "gas/internal.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define GAS_CO_QUIESCE_ROUNDS 32
#define GAS_CO_TEAM_MAGIC 0x7465616d636f6c6cull

/* ------------------------------------------------------------------------ */
/* Channels (chan.c)                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Every chunk in a mailbox starts with this header; the signal that makes it
 * visible is the sender's arrival counter at the receiver (ADD 1).
 */
struct gas_co_hdr {
    uint32_t seq;        /* the team's collective number */
    uint8_t coll, alg, type, op;
    uint32_t arghash;    /* count, root (what must agree across ranks) */
    uint16_t flags;      /* GAS_CO_ZCOPY: the payload went straight to the destination */
    uint8_t api;         /* the API call that made it (enum gas_co_api), for messages */
    uint8_t pad;
    uint64_t chunk_len;  /* payload bytes of this chunk */
    uint64_t msg_len;    /* bytes of the whole message */
    uint64_t msg_off;    /* where this chunk starts in the message */
};
#define GAS_CO_HDR_BYTES 40
#define GAS_CO_ZCOPY 1u

/*
 * Zero-copy: a receiver whose destination lies in its segment tells the
 * sender where (one entry per pair, in the sender's slot); the sender puts
 * the rest of that message there directly and sends only a header.
 */
struct gas_co_cts {
    uint64_t seq;        /* the message's key (chan.c next_msg_key; 0: none): the signal;
                            | GAS_CO_CTS_TAKEN once the sender claimed it (chan.c claim) */
    uint64_t off, len;   /* the destination in the receiver's segment */
    uint64_t ident;      /* the receiver's call (chan.c call_ident): only that call's sender uses it */
};
/*
 * The claim bit of a zero-copy entry's key: bit 31 of its low half (the
 * message's number within its call, which never comes near 2^31).  A sender
 * sets it with a compare-and-swap before its first put into the receiver's
 * destination; a receiver whose call failed takes the entry back with a
 * compare-and-swap of the key to 0, and when it finds the bit set waits for
 * the message's end (gas_co_chan_revoke_over) before its call returns.
 */
#define GAS_CO_CTS_TAKEN (1ull << 31)
_Static_assert(sizeof(struct gas_co_hdr) == GAS_CO_HDR_BYTES, "chunk header size");

/*
 * A wait note: a member that has waited GAS_TL_PROBE_AFTER_NS in a call
 * writes the call's identity into the slot of each member it waits for
 * (notes[2 * its team rank] there); a member whose call failed writes it,
 * with the failure, into every member's slot (notes[2 * rank + 1], which
 * its later waits do not overwrite).  A member in the same call with
 * other arguments (a reduce with another root, a gather against a scatter)
 * then reports the mismatch, and one in the same call waiting for the
 * failed member fails too, instead of both waiting until GAS_TIMEOUT.
 * A failure note also covers the writer's failed calls just before it
 * (span), so a member that is late by several calls (the writer timed out
 * in each) still learns of the one it is in.
 * check (a hash of the rest, never 0) tells a whole note from a torn or
 * empty one.
 */
struct gas_co_note {
    uint32_t seq;         /* the writer's call number on the team (for destroy: t->seq) */
    uint8_t coll, alg, type, op; /* a stand-in's note (coll GAS_CO_WORLD or GAS_CO_FINALIZE):
                                    alg is the collective it stands in for, type the world
                                    call's kind (chan.c world_stands_in, stood_in_by) */
    uint32_t arghash;    /* a stand-in's: 1 + the team rank that was in that collective */
    int32_t status;      /* GAS_OK: waiting; else how the writer's call failed */
    uint32_t check;
    uint16_t refused;    /* the writer's call was refused before it started (its arguments) */
    uint16_t span;       /* failed: so did its calls seq - span .. seq - 1 (how: earlier) */
    union {
        uint32_t world;  /* wait: the world barriers the writer had entered (gas/sync.c's
                            epoch, low bits), so a member in the world barrier tells a
                            writer that is past it from one that has not reached it */
        uint32_t lost;   /* failed with GAS_ERR_PEER: 1 + the world rank whose loss failed
                            it (0: not known), so a member that learns of the failure
                            before its own transport gives up on that rank can name it */
        uint32_t differs; /* failed with GAS_ERR_INVALID by a mismatch the writer found:
                            1 + the team rank whose call differed from the writer's (0:
                            not one), so the other members name both ranks */
    };
    uint16_t blocked;    /* wait: the writer's thread is blocked in the wait (not gas_test) */
    uint8_t api;         /* the writer's API call (enum gas_co_api), for messages */
    uint8_t earlier_refused; /* failed: bit k set when call seq - 1 - k was refused */
    uint32_t relay;      /* failed: 1 + the team rank whose failure note this one passes on
                            (the writer failed by that note; its other fields are that
                            note's), 0: the writer's own failure */
    int8_t earlier[8];   /* failed, span > 0: the status of call seq - 1 - k (0: as this
                            call's), so a writer that fails calls in a row for different
                            reasons has each told (its members may still wait in any of
                            them); covered calls further back than 8 are told as earlier[7] */
    uint32_t before;     /* failed: the first world barrier (gas/sync.c's epoch, low bits)
                            the writer entered after numbering call seq (a world call that
                            stands in: its own), so a member that passed that barrier
                            without making the call counts it as over (gas_co_chan_adopt) */
};
_Static_assert(sizeof(struct gas_co_note) == 48, "note size");

/*
 * A wait note's coll for gas_team_destroy (not a gas_coll_t): a member
 * whose destroy has waited GAS_TL_PROBE_AFTER_NS writes it, numbered with
 * the team's next call, into every member's slot; refused = GAS_CO_LEFT
 * when that destroy returned without ending the team.
 */
#define GAS_CO_DESTROY 0xff
#define GAS_CO_LEFT 2
/*
 * A note's coll for gas_finalize: a member whose finalize has waited
 * GAS_TL_PROBE_AFTER_NS writes it, numbered with each team's next call,
 * into every member's slot of every live team (refused = GAS_CO_LEFT once
 * that finalize returned without finalizing); a member whose finalize
 * found a member in a call it never made writes it as a failure note
 * standing in for that call (gas_co_finalize_check).
 */
#define GAS_CO_FINALIZE 0xfe
/*
 * A failure note's coll for gas_barrier, gas_malloc(_dist) or gas_free
 * (type: the enum gas_gs_call_kind): a member whose call's world barrier
 * found a member blocked in a collective that this rank has not made, and
 * that member not yet in that barrier, stands in for that collective with
 * it (gas_co_world_check).
 */
#define GAS_CO_WORLD 0xfd

/*
 * Which API call made a collective, so that messages name the call a member
 * made (gas_team_barrier_nb, gas_team_split_strided) rather than the
 * collective under it; it never takes part in matching (a gas_allreduce
 * meets a gas_allreduce_nb).
 */
enum gas_co_api {
    GAS_CO_API_CALL,          /* the collective's own blocking call (gas_team_barrier, gas_<name>) */
    GAS_CO_API_NB,            /* its _nb form */
    GAS_CO_API_SPLIT_STRIDED, /* the exchanges of the splits, of gas_init */
    GAS_CO_API_SPLIT_COLOR,
    GAS_CO_API_SPLIT_NODE,
    GAS_CO_API_INIT,
};
/* The api of the call named callname (a public name, or "gas_init"). */
uint8_t gas_co_api_of(const char *callname);
/* The name of the API call (coll, api): "gas_team_barrier_nb", "gas_allreduce", ... */
const char *gas_co_api_name(int coll, int api, char *buf, size_t cap);

/* The identity of one collective call, carried in every header. */
struct gas_co_call {
    uint32_t seq;
    uint8_t coll, alg, type, op;
    uint32_t arghash;
    uint8_t api;              /* for messages only (enum gas_co_api) */
};

/* ------------------------------------------------------------------------ */
/* Teams (team.c)                                                            */
/* ------------------------------------------------------------------------ */

/* A view of some members of a team: index i is team rank map[i] (NULL: i). */
struct gas_co_grp {
    int n, me;           /* me = -1 when this rank is not in the group */
    const int *map;
};

static inline int gas_co_grp_rank(const struct gas_co_grp *g, int i)
{
    return g->map ? g->map[i] : i;
}

struct gas_co_sched;

struct gas_team {
    uint64_t magic;           /* GAS_CO_TEAM_MAGIC while the team lives */
    int size, rank;           /* team size, my team rank */
    int *world;               /* team rank -> world rank */
    int *inv;                 /* world rank -> team rank or -1 (NULL for world) */
    uint64_t *poff;           /* team rank -> segment offset of that member's slot */
    char *base;               /* my slot */
    void *mem;                /* what to free for it (NULL: the world's, from the heap) */
    /* channel geometry (see chan.c) */
    uint64_t data_off, mbox_bytes, chunk_bytes;
    unsigned nchunks;
    /* local channel state, per peer team rank */
    uint64_t *sent, *recvd, *owed;
    uint64_t *msent, *mrecvd;     /* key of the last message (not chunk) sent to / received
                                     from a peer: its call's seq << 32 | its number in the call */
    uint32_t *held_send, *held_recv; /* == pass: an earlier op of the round holds the pair */
    uint32_t pass;
    uint64_t *arrived, *credit;   /* in the slot: written by peers */
    uint32_t failed_seq[8];       /* the last collectives that failed or were refused here, */
    uint32_t nfailed;             /* whose late chunks later calls throw away (any: the team's
                                     end check says nothing) */
    struct gas_co_note last_fail; /* the last failure note this rank wrote (check 0: none) */
    struct gas_co_note relay_note; /* the failure note this rank failed by, to pass on */
    uint64_t *relay_owed;         /* bit per team rank: owed relay_note before its next chunk */
    int relay_pending;            /* members still owed it (0: none) */
    struct gas_co_hdr left;       /* the first chunk thrown away of a call that ended here */
    int left_from;                /* without taking it, and its sender's world rank (-1:
                                     none): evidence for the team's end check */
    uint64_t *quiesce;
    uint32_t quiesce_sent;        /* bit k: this rank's add of round k of gas_team_destroy's
                                     barrier went out (a destroy that failed and is called
                                     again must not count twice at that peer) */
    struct gas_co_cts *cts;       /* in the slot: where peers want my next message */
    struct gas_co_note *notes;    /* in the slot: 2 per team rank: the call it waits in, its last failed one */
    uint64_t *failnotes;          /* in the slot: failure notes written there (peers add 1 each) */
    uint64_t failnotes_seen;      /* *failnotes at the last look (gas_co_chan_check_failures) */
    int failnotes_ahead;          /* a failure note seen then named a later call */
    uint64_t adopt_seen;          /* *failnotes at the last gas_co_chan_adopt (+ 1; 0: never) */
    uint64_t adopt_entered;       /* its world barrier */
    int adopt_later;              /* it left a note for a later world barrier */
    gas_tl_peer_t **peers;
    uint32_t seq;             /* collectives started on this team */
    /* node structure: node index of each member, nodes listed by first member */
    int nnodes;
    int cpus_shared;          /* a member shares its CPUs with more ranks than they hold
                                 (team.c; the tuning table's cpus field), alike on all members */
    int *node_of;             /* team rank -> node index */
    int *node_members;        /* team ranks, grouped by node in team order */
    int *node_start;          /* node i: node_members[node_start[i] .. node_start[i+1]) */
    int *leaders;             /* first member of each node */
    /* non-blocking collectives in call order */
    struct gas_co_sched *qhead, *qtail;
    int busy;                 /* the executor is inside this team */
    int pending;              /* in the pending list (under its lock; team.c) */
    size_t live_idx;          /* its index in gas_co_live */
    int in_call;              /* a thread of this rank is inside a collective call on the
                                 team (gas_co_call_enter) */
};

extern uint64_t gas_co_scratch;        /* GAS_COLL_SCRATCH */
extern uint64_t gas_co_zcopy_min;      /* GAS_COLL_ZCOPY_MIN (0: never) */
extern uint64_t gas_co_test_pump_delay; /* GAS_TEST_COLL_PUMP_DELAY, ns (0: none) */
extern uint64_t gas_co_test_note_delay; /* GAS_TEST_COLL_NOTE_DELAY, ns (0: none) */
/* Sleep ns nanoseconds (the GAS_TEST_COLL_* delays). */
void gas_co_test_sleep(uint64_t ns);

/* The live teams of this rank (the finalize checks walk them; progress walks
 * only the pending list below).  Changed only by the thread making collective
 * calls, under gas_co_live_lock's write side; other threads read the teams
 * under its read side (gas_co_progress_all). */
extern gas_team_t *gas_co_live;
extern size_t gas_co_nlive;
extern pthread_rwlock_t gas_co_live_lock;

/*
 * The pending list: the live teams whose queue may hold schedules, so that
 * progress costs nothing per idle team (a rank may hold thousands).  After
 * appending to t's queue (t->qhead set), the appender calls
 * gas_co_pending_add(t); it never fails (team.c keeps room for every live
 * team).  gas_co_pending_at(i), under gas_co_live_lock's read side, is the
 * i-th listed team, or NULL past the end; it drops the teams whose queue it
 * finds empty on the way, under the list's lock, so a team appended to
 * meanwhile is listed again by its appender.  Another thread's drop may make
 * a walk skip a team once (the next look pumps it).  gas_co_pending_none()
 * is an unlocked hint: no team is listed.
 */
void gas_co_pending_add(gas_team_t t);
gas_team_t gas_co_pending_at(size_t i);
int gas_co_pending_none(void);

/*
 * Team structs (team_slots.c): each in a slot of one reserved range, handed
 * out once per process, so a destroyed team's handle never names another.
 * gas_co_team_new: a zeroed struct, not live yet (NULL and *why_p when none
 * can be had).  gas_co_team_went_live: it is live.  gas_co_team_dispose: it
 * is dead for good (its inner tables are freed by the caller); its page goes
 * back to the kernel once every slot on it is dead.  gas_co_team_live: t is
 * a live team of this rank; any other value (GAS_TEAM_NULL, a destroyed
 * team, a pointer that is no team) gives 0 without reading outside the range.
 */
struct gas_team *gas_co_team_new(const char **why_p);
void gas_co_team_went_live(struct gas_team *t);
void gas_co_team_dispose(struct gas_team *t);
int gas_co_team_live(gas_team_t t);

/* Check a team argument for `call`: initialised and a live team of this rank. */
gas_status_t gas_co_team_check(const char *call, gas_team_t team);

/* The route to team rank r (cached). */
gas_status_t gas_co_peer(gas_team_t t, int r, gas_tl_peer_t **peer_p, const char *call);
/* The first member (world rank) a transport gave up on, or -1 (gas_tl_first_lost). */
int gas_co_lost_member(gas_team_t t);
/* GAS_ERR_PEER for call: a member is lost, so `what` cannot complete. */
gas_status_t gas_co_lost_error(gas_team_t t, const char *call, const char *what);

/* A team's channel geometry (size must be set) and the bytes of its slot. */
uint64_t gas_co_chan_geometry(gas_team_t t);
/* Point the channel state at the slot (t->base set). */
void gas_co_chan_attach(gas_team_t t);

/* ------------------------------------------------------------------------ */
/* Schedules (sched.c)                                                       */
/* ------------------------------------------------------------------------ */

enum gas_co_op_kind { GAS_CO_SEND, GAS_CO_RECV, GAS_CO_RECV_REDUCE, GAS_CO_COPY, GAS_CO_REDUCE };

struct gas_co_op {
    uint8_t kind;
    int peer;                 /* team rank, for sends and receives */
    char *dst;
    const char *src;
    size_t len;               /* bytes */
    size_t done;              /* bytes moved so far */
    int started;              /* a zero-byte message went */
    int cts_posted;           /* receive: the sender was told to write to dst directly */
    uint64_t cts_key;         /* ... under this key (what a failed call takes back) */
    int noted;                /* the peer was sent this call's wait note */
    char *rdst;               /* a large receive-and-reduce: dst is a segment temporary the
                                 message lands in (zero-copy), combined into rdst at round end */
};

/*
 * A zero-copy entry that a failed call takes back from its sender
 * (gas_co_chan_revoke_cts): a fetching compare-and-swap of the entry's key
 * to 0 in the sender's slot, and what it found there.
 */
struct gas_co_revoke {
    int peer;                 /* the sender (team rank) */
    size_t len;               /* the message's length */
    uint64_t key;             /* the key the receive posted */
    uint64_t old;             /* the key found (valid once comp.pending is 0) */
    int over;                 /* nothing of the message can land any more */
    gas_tl_comp_t comp;       /* the swap's completion */
};

/* A segment temporary a whole message is received in, reused from round to round. */
struct gas_co_whole {
    char *p;
    size_t len;
    size_t round;             /* the last round that receives into it */
};

struct gas_co_sched {
    struct gas_op op;         /* first: a gas_handle_t points here */
    const char *callname;
    gas_team_t team;
    struct gas_co_call call;
    gas_dtype_t type;
    gas_redop_t redop;
    size_t es;                /* element size */
    int quiet_first;          /* barrier: gas_quiet() before the first round */
    struct gas_co_op *ops;
    size_t nops, cap;
    size_t *round_end;        /* ops [round_end[i-1], round_end[i]) form round i */
    size_t nrounds, rcap;
    size_t cur;               /* current round */
    int round_started;
    void **tmps;
    size_t ntmps, tcap;
    struct gas_co_whole wholes[2]; /* temporaries of large receive-and-reduce ops */
    int nwholes;
    gas_status_t status;      /* first failure */
    int done;
    struct gas_co_sched *next; /* in the team's queue */
    int queued, nonblocking;
    int failed_by_note;       /* a peer's note failed it: no notes of its failure go out */
    int ending;               /* failed: its zero-copy entries were taken back and its
                                 failure note went out; done once no sender that claimed an
                                 entry can still write (gas_co_chan_revoke_over) */
    struct gas_co_revoke *revokes; /* those entries (freed with s) */
    int nrevokes;
    int differs;              /* 1 + the team rank whose call was found to differ (0: none) */
    uint64_t noted_as;        /* the world epoch and blocked flag its wait notes said, + 1 */
    uint32_t before;          /* the first world barrier this rank enters after numbering it */
    unsigned polls;           /* waits and tests so far (a probe every PROBE_EVERY) */
    uint64_t probe_at;        /* when to probe the members waited for (gas_tl_probe_due) */
};

/* A new schedule for one call on team t (NULL when out of memory: raised). */
struct gas_co_sched *gas_co_sched_new(const char *callname, gas_team_t t, gas_coll_t coll,
                                      int alg, gas_dtype_t type, gas_redop_t op, uint64_t count,
                                      int root);
void gas_co_sched_free(struct gas_co_sched *s);

/* Building (errors are kept in s->status and reported by the run). */
void gas_co_send(struct gas_co_sched *s, int peer, const void *src, size_t len);
void gas_co_recv(struct gas_co_sched *s, int peer, void *dst, size_t len);
void gas_co_recv_reduce(struct gas_co_sched *s, int peer, void *dst, size_t len);
void gas_co_copy(struct gas_co_sched *s, void *dst, const void *src, size_t len);
void gas_co_reduce_local(struct gas_co_sched *s, void *dst, const void *src, size_t len);
void gas_co_round(struct gas_co_sched *s);
void *gas_co_tmp(struct gas_co_sched *s, size_t len);

/*
 * Take t's executor for this thread, spinning (with sched_yield) while
 * another thread runs it: any thread that waits in the library pumps the
 * team's queue (gas_co_progress_all), so the calling thread changes the
 * queue, and the failure state that the executor also writes, only while
 * it holds the executor.  The holder never waits for the caller.  Not on a
 * thread that holds it already (the progress hook only tries it).
 */
void gas_co_team_lock(gas_team_t t);
void gas_co_team_unlock(gas_team_t t);

/* Run to completion; frees s.  Returns the schedule's status. */
gas_status_t gas_co_run(struct gas_co_sched *s);
/* Start non-blocking: *handle_p is the schedule, or GAS_HANDLE_NULL when done at once. */
gas_status_t gas_co_start_nb(struct gas_co_sched *s, gas_handle_t *handle_p);

/* Progress every team's queued non-blocking collectives (a runtime progress hook). */
int gas_co_progress_all(void);
/*
 * Complete every queued collective of a team (destroy): the first failed
 * one's status once all are done; GAS_ERR_TIMEOUT, or a failure that left
 * schedules queued (t->qtail set), when they cannot all be ended.
 */
gas_status_t gas_co_drain(gas_team_t t);

/* Channel steps used by the executor (chan.c): 1 when a chunk moved, 0 when it must wait. */
int gas_co_chan_send(struct gas_co_sched *s, struct gas_co_op *o);
int gas_co_chan_recv(struct gas_co_sched *s, struct gas_co_op *o);
void gas_co_chan_flush_credits(struct gas_co_sched *s);
/* Look at what peers sent ahead for a call this rank is not in (mismatch detection). */
int gas_co_chan_probe(struct gas_co_sched *s);
/* Collective seq failed (or was refused) on this rank: its late chunks are thrown away. */
void gas_co_chan_failed(gas_team_t t, uint32_t seq);
/* Write s's wait note into team rank p's slot: s waits for p (blocked: this rank's
 * thread is blocked in the wait, not testing). */
void gas_co_chan_note(struct gas_co_sched *s, int p, int blocked);
/*
 * s failed here (s->status): its late chunks are thrown away from now on,
 * and, unless a peer's note failed it, every member gets its failure note.
 */
void gas_co_chan_note_failed(struct gas_co_sched *s);
/*
 * gas_team_destroy on t waits for the other members: write its wait note
 * into every member's slot (left = 0), or say that it returned with the
 * team still live (left = 1), so a member waiting in a collective meanwhile
 * reports the mismatch instead of waiting until GAS_TIMEOUT.
 */
void gas_co_chan_destroy_note(gas_team_t t, int left);
/*
 * For gas_team_destroy on t, waiting in its last barrier: GAS_ERR_INVALID
 * (naming the member and its call) when a member's world call (gas_barrier,
 * gas_malloc, gas_free, gas_finalize) stood in for the destroy's number
 * (t->seq) and its failure note says so (gas_co_world_check); else GAS_OK.
 * The notes are read only when t's failure-note count differs from *seen
 * (updated; UINT64_MAX: read them).
 */
gas_status_t gas_co_chan_destroy_check(gas_team_t t, uint64_t *seen, const char *call);
/*
 * s failed: take back the zero-copy entries that its current round's
 * unfinished receives posted (a fetching compare-and-swap of each key to 0
 * in the sender's slot, issued here, completed later), so that no sender
 * starts putting into their destinations.  Called once per failed schedule,
 * with the team locked.
 */
void gas_co_chan_revoke_cts(struct gas_co_sched *s);
/*
 * Whether nothing of s's revoked entries' messages can land any more: each
 * swap found its key unclaimed, or found it claimed (GAS_CO_CTS_TAKEN: the
 * sender may be putting into the destination) and then the message's
 * zero-copy header chunk arrived (it is ordered after the data), the
 * sender's failure note covers s's call, or the sender is lost.  Probes the
 * senders still waited for when due.  Team locked.
 */
int gas_co_chan_revoke_over(struct gas_co_sched *s);
/* The senders that s's end still waits for, as world ranks, into buf (for a timeout's message). */
void gas_co_chan_revoke_waited(const struct gas_co_sched *s, char *buf, size_t cap);
/* Before s is freed: the transports forget revoke swaps still in flight (gas_tl_forget). */
void gas_co_chan_revoke_forget(struct gas_co_sched *s);

/*
 * Members made and failed t's calls up to some number that this rank has
 * not made, and each had done so before a world barrier that this rank has
 * entered (epoch `entered`, or earlier): those calls can never be made
 * with them, so they count as failed here and this rank's next call is
 * numbered after them, as on the members (a failure note's `before`).
 * Without it, a rank that passed a world call while the others consumed a
 * call by failing it (one of them stood in for it with that world call)
 * stayed a call behind: its later calls met the others' next ones and
 * returned GAS_OK with mixed data.  Returns the team rank whose world call
 * stood in for a call adopted in world barrier `entered` itself (-1: none).
 * Called with the team locked; cheap when no failure note came since the
 * last look.
 */
int gas_co_chan_adopt(gas_team_t t, uint64_t entered);
/*
 * Number this rank's next call on t (returned), after the calls the members
 * consumed that it must adopt first; *before_p: the first world barrier this
 * rank enters after it (its failure note's `before`).  Team locked.
 */
uint32_t gas_co_chan_number(gas_team_t t, uint32_t *before_p);
/*
 * This rank's call of collective coll on t was refused before it started
 * (status: its arguments): it still counts as the team's next collective,
 * and every member gets a note, so members waiting for this rank in it fail
 * with a message saying so instead of waiting until GAS_TIMEOUT.
 */
void gas_co_refused(gas_team_t t, gas_coll_t coll, gas_dtype_t type, gas_status_t status,
                    const char *call);
/*
 * Compare the notes peers wrote here with s's call: a peer in the same call
 * with other arguments, or in gas_team_destroy numbered with s's call or an
 * earlier one, fails s with GAS_ERR_INVALID (a mismatch), a peer whose same
 * call failed (or timed out) fails s with that peer's status.
 * 1 when s failed.
 */
int gas_co_chan_check_notes(struct gas_co_sched *s);
/*
 * The same at the start of s, where only failure notes matter (a member
 * already failed, refused or gave up on s's call): O(1) unless a failure
 * note came since the last look, or one seen then named a later call.
 */
int gas_co_chan_check_failures(struct gas_co_sched *s);
/*
 * After a barrier that every member of t entered with its collectives on t
 * complete (gas_team_destroy's last one, gas_finalize's): a chunk that
 * arrived and was never received proves that a member's call differed from
 * this rank's in a way no wait could see (a broadcast with another root,
 * a scatter against a gather); so does a member's failure note for a call
 * that completed here.  GAS_ERR_INVALID describing it, else GAS_OK
 * (also while t has non-blocking collectives queued: those may still take
 * it, and once a collective on t failed on this rank: that was the report).
 */
gas_status_t gas_co_chan_leftover(gas_team_t t, const char *call);

/* ------------------------------------------------------------------------ */
/* Algorithms and selection                                                  */
/* ------------------------------------------------------------------------ */

/* Arguments of one collective, as the builders see them. */
struct gas_co_args {
    char *dst;
    const char *src;          /* never GAS_IN_PLACE here: resolved by api.c */
    size_t count;             /* elements (per block for the blocked collectives) */
    size_t es;
    int root;                 /* group index */
    const size_t *counts, *displs;   /* allgatherv, gatherv, scatterv (elements; displs: the
                                        root's for those two) / alltoallv receive side */
    const size_t *scounts, *sdispls; /* alltoallv send side */
};

typedef gas_status_t (*gas_co_build_fn)(struct gas_co_sched *s, const struct gas_co_grp *g,
                                        const struct gas_co_args *a);

/* Algorithm ids are indices into the GAS_COLL_<NAME> config row's choices (0: auto). */
const char *gas_co_alg_name(gas_coll_t c, int alg);
int gas_co_alg_count(gas_coll_t c);
int gas_co_alg_is_hier(gas_coll_t c, int alg);
gas_co_build_fn gas_co_builder(gas_coll_t c, int alg);

/*
 * The algorithm for a call: forced > GAS_COLL_<NAME> > tuning table.
 * n ranks in nnodes nodes; shared: the team's ranks share CPUs (the team's
 * cpus_shared); hier: a hierarchical algorithm is allowed.
 */
int gas_co_select(gas_coll_t c, size_t bytes, int n, int nnodes, int shared, int hier);
gas_status_t gas_co_select_init(void);
void gas_co_select_fini(void);
/*
 * Check a tuning table's text (docs/collectives.md) without installing it:
 * 0 when every line is good, else the number of the first bad line, with why
 * (cap bytes) saying what is wrong.  For tools (gas-bench --tune).
 */
int gas_co_table_check(const char *text, size_t len, char *why, size_t cap);

/* Sub-group builders used by the hierarchical algorithms: select and build. */
gas_status_t gas_co_build_sub(struct gas_co_sched *s, gas_coll_t c, const struct gas_co_grp *g,
                              const struct gas_co_args *a, size_t bytes, int multinode);

/*
 * Binomial trees over relative ranks (vr = (me - root) mod n, parent vr -
 * mask): the lowest set bit of vr within n (n rounded up to a power of two
 * for vr == 0), and the size of the subtree under vr (n for the root).
 */
static inline int gas_co_low_bit(int vr, int n)
{
    int mask = 1;
    while (mask < n && !(vr & mask))
        mask <<= 1;
    return mask;
}

static inline int gas_co_subtree(int vr, int n, int *mask_p)
{
    int mask = gas_co_low_bit(vr, n);
    *mask_p = mask;
    return vr == 0 ? n : (mask < n - vr ? mask : n - vr);
}

/* Elements in block i of n elements split into p blocks, and where it starts. */
static inline size_t gas_co_blk_lo(size_t n, int p, int i)
{
    size_t q = n / (size_t)p, r = n % (size_t)p;
    return (size_t)i * q + ((size_t)i < r ? (size_t)i : r);
}

/* Kernels (reduce_ops.c): dst[i] = dst[i] op src[i] for n elements. */
void gas_co_reduce(void *dst, const void *src, size_t n, gas_dtype_t type, gas_redop_t op);
int gas_co_op_valid(gas_dtype_t type, gas_redop_t op);
/* dst[i] = the identity of op for n elements (x op identity == x; for minloc /
 * maxloc, every x whose value is a number): exscan's member 0. */
void gas_co_identity(void *dst, size_t n, gas_dtype_t type, gas_redop_t op);
/* type is one of the value-index pair types (minloc / maxloc only). */
int gas_co_type_is_pair(gas_dtype_t type);
const char *gas_co_type_name(gas_dtype_t type);
const char *gas_co_op_name(gas_redop_t op);

#endif
