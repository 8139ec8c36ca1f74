/*
 * chan.c - per-pair channels inside the members' scratch slots.
 *
 * Each member of a team has a slot in its segment (at an offset every
 * member knows: t->poff[rank]); the layout is the same in all of them
 * (P = team size):
 *   [0, 8P)          arrived[src]: chunks that team rank src has put here
 *   [8P, 16P)        credit[dst]: chunks of mine that team rank dst consumed
 *   [16P, 16P+256)   quiesce[32]: the counters of gas_team_destroy's barrier
 *   then             cts[dst]: where team rank dst wants my next message to it
 *   then             notes[2 src]: the call team rank src waits in (struct gas_co_note),
 *                    notes[2 src + 1]: the last of its calls that failed (its own
 *                    failure, or one it failed by and passes on: see relay_arm)
 *   then             failnotes: how many failure notes were written here (each
 *                    writer adds 1 after its note, with put_signal)
 *   data_off ...     one mailbox of mbox_bytes per source rank, cut into
 *                    nchunks chunks of chunk_bytes (a 40-byte header, then
 *                    payload: whole elements of the call's type)
 *
 * A message from s to d is cut into chunks; chunk number k of the pair goes
 * to chunk k % nchunks of s's mailbox at d, and is made visible by adding 1
 * to d's arrived[s] after the payload (put_signal).  d consumes chunks in
 * order and gives the space back by adding to s's credit[d]; s never has
 * more than nchunks chunks unconsumed at d.  Counters only grow and are
 * zeroed when the team is destroyed (when nothing can be in flight).
 *
 * Zero-copy: when a receive's destination lies in the receiver's segment
 * and the message is at least GAS_COLL_ZCOPY_MIN bytes, the receiver writes
 * (message key, offset, length, call identity) into the sender's
 * cts[receiver] as it starts the receive; the key is the call's sequence
 * number and the message's number within the call (next_msg_key).  A sender
 * that finds the entry for the message it is sending, posted by the same
 * call, puts the rest of the message straight to that offset, then one
 * header chunk with GAS_CO_ZCOPY (ordered after the data) that completes it.
 * A sender that has not seen the entry yet keeps using the mailbox, so
 * neither side ever waits for the other's choice.  The receiver cannot post
 * the entry for message m + 1 before message m has arrived, so one entry per
 * pair suffices and a sender never reads a half-written one.  An entry left
 * by a failed or mismatched call (whose members may have counted different
 * messages) names that call, so no later call's message is put into that
 * call's destination.
 *
 * A sender claims the entry before its first put into the destination: a
 * compare-and-swap of the key to key | GAS_CO_CTS_TAKEN (a CPU atomic: the
 * entry is in its own slot).  A receive whose call fails takes the entry
 * back with a fetching compare-and-swap of the key to 0 through the
 * transport (gas_co_chan_revoke_cts); one of the two wins.  Where the
 * sender won, its put may be under way: the failed call does not end
 * until the message's zero-copy header (ordered after the data) arrives,
 * the sender's failure note covers the call, or the sender is lost
 * (gas_co_chan_revoke_over), so nothing lands in the caller's buffer after
 * the call returned.  (The swaps are atomic with each other where remote
 * atomics on the slot are CPU atomics: shm, udp, and rdma unless
 * GAS_RDMA_ATOMICS=nic is forced on a device whose atomics are not
 * coherent with the CPU's.)
 *
 * Every header names the call (team sequence number, collective, algorithm,
 * type, op, a hash of count and root) and the message's length and offset,
 * so a receiver that finds another call's chunk, or a message of another
 * length, reports a mismatch instead of writing past its buffer.
 */
#include "coll.h"
#include "runtime/log.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STAGE_BYTES 512   /* payloads up to this size go in one put with the header */

uint64_t gas_co_chan_geometry(gas_team_t t)
{
    uint64_t P = (uint64_t)t->size;
    uint64_t ctl = 16 * P + 8 * GAS_CO_QUIESCE_ROUNDS + P * sizeof(struct gas_co_cts) +
                   2 * P * sizeof(struct gas_co_note) + 8;
    uint64_t data_off = (ctl + 63) / 64 * 64;
    uint64_t room = gas_co_scratch > data_off ? gas_co_scratch - data_off : 0;
    uint64_t mbox = room / P / 64 * 64;
    if (mbox < 256)
        mbox = 256;   /* at least two chunks of 128 bytes per member */
    unsigned k = mbox >= 16384 ? 4 : 2;
    t->data_off = data_off;
    t->mbox_bytes = mbox;
    t->nchunks = k;
    t->chunk_bytes = mbox / k / 64 * 64;
    return data_off + P * mbox;
}

void gas_co_chan_attach(gas_team_t t)
{
    uint64_t P = (uint64_t)t->size;
    t->arrived = (uint64_t *)(void *)t->base;
    t->credit = t->arrived + P;
    t->quiesce = t->credit + P;
    t->cts = (struct gas_co_cts *)(void *)(t->quiesce + GAS_CO_QUIESCE_ROUNDS);
    t->notes = (struct gas_co_note *)(void *)(t->cts + P);
    t->failnotes = (uint64_t *)(void *)(t->notes + 2 * P);
}

static uint64_t mbox_off(gas_team_t t, int src, uint64_t k)
{
    return t->data_off + (uint64_t)src * t->mbox_bytes + (k % t->nchunks) * t->chunk_bytes;
}

/*
 * The key of the message of call `seq` that follows the one keyed `last`
 * (per pair and direction): the call's sequence number in the high half, the
 * message's number within that call (from 1) in the low half; never 0.  Two
 * members making the same call number its messages alike, whatever an
 * earlier failed or mismatched call left counted, so a zero-copy entry is
 * only ever taken for the message it was posted for.
 */
static uint64_t next_msg_key(uint64_t last, uint32_t seq)
{
    return last != 0 && last >> 32 == seq ? last + 1 : (uint64_t)seq << 32 | 1;
}

/* What a zero-copy entry says of the call that posted it (what must agree across members). */
static uint64_t call_ident(const struct gas_co_call *c)
{
    uint64_t v = ((uint64_t)c->coll << 24 | (uint64_t)c->alg << 16 | (uint64_t)c->type << 8 |
                  c->op) << 32 | c->arghash;
    return v * 0x9e3779b97f4a7c15ull ^ v >> 29;
}

/*
 * Whether the zero-copy entry cts (in this rank's slot, written by the
 * receiver) is the one for message `key` of a call like c of `len` bytes,
 * and this rank claimed it (GAS_CO_CTS_TAKEN); its offset in *off.  The key
 * is read again after the fields, so an entry rewritten meanwhile (the
 * receiver revokes an entry before it can post another one for this pair)
 * is not taken half old, half new, and the claim fails on an entry the
 * receiver took back.  Called only when the message's zero-copy header
 * chunk can follow the data at once (a credit is free).
 */
static int cts_for(struct gas_co_cts *cts, uint64_t key, const struct gas_co_call *c,
                   size_t len, uint64_t *off)
{
    if (__atomic_load_n(&cts->seq, __ATOMIC_ACQUIRE) != key)
        return 0;
    uint64_t o = __atomic_load_n(&cts->off, __ATOMIC_RELAXED);
    uint64_t l = __atomic_load_n(&cts->len, __ATOMIC_RELAXED);
    uint64_t id = __atomic_load_n(&cts->ident, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&cts->seq, __ATOMIC_RELAXED) != key || l != len || id != call_ident(c))
        return 0;
    /* the claim: from here the receiver waits for this message's end if its call fails */
    uint64_t want = key;
    if (!__atomic_compare_exchange_n(&cts->seq, &want, key | GAS_CO_CTS_TAKEN, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;   /* taken back meanwhile: the message goes through the mailbox */
    *off = o;
    return 1;
}

uint8_t gas_co_api_of(const char *callname)
{
    static const char split[] = "gas_team_split_";
    size_t n = strlen(callname);
    if (n > 3 && strcmp(callname + n - 3, "_nb") == 0)
        return GAS_CO_API_NB;
    if (strncmp(callname, split, sizeof split - 1) == 0)
        switch (callname[sizeof split - 1]) {
        case 's':
            return GAS_CO_API_SPLIT_STRIDED;
        case 'c':
            return GAS_CO_API_SPLIT_COLOR;
        default:
            return GAS_CO_API_SPLIT_NODE;
        }
    return strcmp(callname, "gas_init") == 0 ? GAS_CO_API_INIT : GAS_CO_API_CALL;
}

const char *gas_co_api_name(int coll, int api, char *buf, size_t cap)
{
    static const char *const fixed[] = {
        [GAS_CO_API_SPLIT_STRIDED] = "gas_team_split_strided",
        [GAS_CO_API_SPLIT_COLOR] = "gas_team_split_color",
        [GAS_CO_API_SPLIT_NODE] = "gas_team_split_node",
        [GAS_CO_API_INIT] = "gas_init",
    };
    if (api > GAS_CO_API_NB && api <= GAS_CO_API_INIT)
        return fixed[api];
    const char *c = gas_coll_name((gas_coll_t)coll);
    snprintf(buf, cap, "gas_%s%s%s", coll == GAS_COLL_BARRIER ? "team_" : "", c ? c : "?",
             api == GAS_CO_API_NB ? "_nb" : "");
    return buf;
}

/* Describe a call for an error message. */
static void describe(char *buf, size_t cap, uint32_t seq, int coll, int alg, int type, int op,
                     int api)
{
    if (coll == GAS_CO_DESTROY) {
        snprintf(buf, cap, "gas_team_destroy (as the team's call #%u)", seq);
        return;
    }
    if (coll == GAS_CO_FINALIZE || coll == GAS_CO_WORLD) {
        snprintf(buf, cap, "%s (where the team's call #%u would be)",
                 coll == GAS_CO_FINALIZE ? "gas_finalize"
                                         : gas_gs_call_name((enum gas_gs_call_kind)type), seq);
        return;
    }
    char name[48];
    const char *a = gas_co_alg_name((gas_coll_t)coll, alg);
    int reduces = coll == GAS_COLL_REDUCE || coll == GAS_COLL_ALLREDUCE ||
                  coll == GAS_COLL_REDUCE_SCATTER || coll == GAS_COLL_SCAN ||
                  coll == GAS_COLL_EXSCAN;
    /* (a barrier has no type; a split's or gas_init's exchange moves bytes of its own) */
    int typed = coll != GAS_COLL_BARRIER && api <= GAS_CO_API_NB;
    snprintf(buf, cap, "collective #%u, %s (%s%s%s%s%s)", seq,
             gas_co_api_name(coll, api, name, sizeof name), a ? a : "?", typed ? ", " : "",
             typed ? gas_co_type_name((gas_dtype_t)type) : "", reduces ? ", " : "",
             reduces ? gas_co_op_name((gas_redop_t)op) : "");
}

static gas_status_t mismatch_as(struct gas_co_sched *s, int peer, const struct gas_co_hdr *h,
                                const char *did, const char *why)
{
    char theirs[160], mine[160];
    if (s->differs == 0)
        s->differs = peer + 1;   /* for this rank's failure note */
    describe(theirs, sizeof theirs, h->seq, h->coll, h->alg, h->type, h->op, h->api);
    describe(mine, sizeof mine, s->call.seq, s->call.coll, s->call.alg, s->call.type,
             s->call.op, s->call.api);
    return gas_rt_error(GAS_ERR_INVALID, s->callname,
                        "collective mismatch on a team of %d: rank %d %s its %s "
                        "while this rank is in its %s%s; every member must call the same "
                        "collectives in the same order with the same count, type, op and root "
                        "(and the same algorithm)",
                        s->team->size, s->team->world[peer], did, theirs, mine, why);
}

static gas_status_t mismatch(struct gas_co_sched *s, int peer, const struct gas_co_hdr *h,
                             const char *why)
{
    return mismatch_as(s, peer, h, "sent a message of", why);
}

/* How a header's call differs from the call s runs ("" for another call), or NULL. */
static const char *differs(const struct gas_co_sched *s, const struct gas_co_hdr *h)
{
    const struct gas_co_call *c = &s->call;
    if (h->seq != c->seq || h->coll != c->coll)
        return "";
    /* (different counts may also have chosen different algorithms: they are the cause) */
    if (h->type != c->type || h->op != c->op || h->arghash != c->arghash)
        return " (with different count, type, op or root)";
    if (h->alg != c->alg)
        return " (the ranks chose different algorithms: check GAS_COLL_* and "
               "gas_coll_set_algorithm on every rank)";
    return NULL;
}

/* A note's check word: a hash of its other fields, never 0. */
static uint32_t note_check(const struct gas_co_note *n)
{
    uint64_t v = ((uint64_t)n->seq << 32 | (uint64_t)n->coll << 24 | (uint64_t)n->alg << 16 |
                  (uint64_t)n->type << 8 | n->op) * 0x9e3779b97f4a7c15ull ^
                 ((uint64_t)n->arghash << 32 | (uint32_t)n->status) * 0xc2b2ae3d27d4eb4full ^
                 ((uint64_t)n->span << 16 | n->refused) ^
                 ((uint64_t)n->world << 24 | (uint64_t)n->api << 16 | n->blocked) *
                     0x94d049bb133111ebull ^
                 (uint64_t)n->relay << 40 ^ (uint64_t)n->earlier_refused << 56 ^
                 (uint64_t)n->before * 0x8cb92ba72f3d8dd7ull;
    uint64_t e;
    memcpy(&e, n->earlier, sizeof e);
    v ^= e * 0xd6e8feb86659fd93ull;
    v ^= v >> 29;
    v *= 0xbf58476d1ce4e5b9ull;
    v ^= v >> 32;
    return (uint32_t)v | 1u;
}

/* The team rank whose call note i of t's slot (n, read from it) is about: for a failure note
 * that member i / 2 passes on, the member that wrote it first. */
static int note_writer(gas_team_t t, int i, const struct gas_co_note *n)
{
    int origin = (int)n->relay - 1;
    return i % 2 && n->relay && origin < t->size && origin != t->rank ? origin : i / 2;
}

/* Copy note i of t's slot (member i / 2's): 1 when it is whole and not this rank's own. */
static int read_note(gas_team_t t, int i, struct gas_co_note *n)
{
    memcpy(n, &t->notes[i], sizeof *n);
    return i / 2 != t->rank && n->check != 0 && n->check == note_check(n);
}

static void fail(struct gas_co_sched *s, gas_status_t st)
{
    if (s->status == GAS_OK)
        s->status = st;
}

/* Put w bytes (header and maybe payload) at off, then add 1 to the arrival counter sig
 * (errors raised for `call`, the collective's API call). */
static gas_status_t put_chunk(gas_tl_peer_t *peer, uint64_t off, const void *what, size_t w,
                              uint64_t sig, const char *call)
{
    gas_status_t st = gas_tl_put_signal_rt(peer, off, what, w, sig, 1, GAS_SIGNAL_ADD, call);
    if (st == GAS_ERR_UNSUPPORTED) {
        gas_tl_amo_t a = {.op = GAS_AMO_ADD, .width = 8, .offset = sig, .operand = 1};
        st = gas_tl_put_rt(peer, off, what, w, call);
        if (st >= 0)
            st = peer->ops->fence();
        if (st >= 0)
            st = gas_tl_amo_rt(peer, &a, call);
    }
    return st;
}

static void put_note(gas_team_t t, int p, struct gas_co_note *n, const char *call);

/*
 * Pass the failure note this rank failed by (t->relay_note) to member d if
 * d is still owed it.  Called before this rank sends d a chunk of a later
 * call: d may not have the note yet (its writer puts it to the members one
 * after another), and without it d, still in the failed call, would take
 * this rank's chunk for a mismatch.  Only members this rank sends to get
 * it, so a failure costs O(sends), not a note from every member to every
 * member.
 */
static void relay_to(gas_team_t t, int d, const char *call)
{
    uint64_t bit = 1ull << (d % 64);
    if (!(t->relay_owed[d / 64] & bit))
        return;
    t->relay_owed[d / 64] &= ~bit;
    t->relay_pending--;
    put_note(t, d, &t->relay_note, call);
}

/*
 * Member p's failure note n failed this rank's call: keep it to pass on
 * (relay_to), owed to every member but this rank and the note's first
 * writer.  A later note of this rank's own replaces it (note_failed_all).
 */
static void relay_arm(gas_team_t t, int p, const struct gas_co_note *n)
{
    size_t words = ((size_t)t->size + 63) / 64;
    if (t->relay_owed == NULL && (t->relay_owed = calloc(words, 8)) == NULL)
        return;   /* (only a diagnosis: without it a member may report a mismatch instead) */
    t->relay_note = *n;
    if (n->relay == 0)
        t->relay_note.relay = (uint32_t)p + 1;
    int origin = (int)t->relay_note.relay - 1;
    t->relay_pending = 0;
    for (int q = 0; q < t->size; q++) {
        uint64_t bit = 1ull << (q % 64);
        if (q == t->rank || q == origin) {
            t->relay_owed[q / 64] &= ~bit;
        } else {
            t->relay_owed[q / 64] |= bit;
            t->relay_pending++;
        }
    }
}

/*
 * The payload bytes of one mailbox chunk for elements of es bytes: whole
 * elements only, so a receive-and-reduce can combine each chunk as it
 * arrives.  The room (chunk_bytes - the 40-byte header) is a multiple of 8
 * but not of 16, which the 16-byte pair types need; every message is a
 * whole number of elements, so chunks start on element bounds too.
 */
static size_t chunk_room(gas_team_t t, size_t es)
{
    size_t room = t->chunk_bytes - GAS_CO_HDR_BYTES;
    return es > 1 ? room - room % es : room;
}

int gas_co_chan_send(struct gas_co_sched *s, struct gas_co_op *o)
{
    gas_team_t t = s->team;
    int d = o->peer;
    uint64_t k = t->sent[d];
    if (k - __atomic_load_n(&t->credit[d], __ATOMIC_ACQUIRE) >= t->nchunks)
        return 0;
    gas_tl_peer_t *peer;
    gas_status_t st = gas_co_peer(t, d, &peer, s->callname);
    if (st != GAS_OK) {
        fail(s, st);
        return 1;
    }
    size_t room = chunk_room(t, s->es);
    size_t n = o->len - o->done < room ? o->len - o->done : room;
    struct gas_co_hdr h = {
        .seq = s->call.seq, .coll = s->call.coll, .alg = s->call.alg, .type = s->call.type,
        .op = s->call.op, .arghash = s->call.arghash, .api = s->call.api, .msg_len = o->len,
        .msg_off = o->done,
    };
    uint64_t off = t->poff[d] + mbox_off(t, t->rank, k);
    uint64_t sig = t->poff[d] + 8 * (uint64_t)t->rank;
    struct gas_co_cts *cts = &t->cts[d];
    union {
        unsigned char b[GAS_CO_HDR_BYTES + STAGE_BYTES];
        uint64_t align;
    } stage;
    const void *what = &h;
    size_t wlen = GAS_CO_HDR_BYTES;
    uint64_t key = next_msg_key(t->msent[d], s->call.seq), zoff;
    if (o->done < o->len && cts_for(cts, key, &s->call, o->len, &zoff)) {
        /* zero-copy: the rest of the message straight into the receiver's buffer */
        n = o->len - o->done;
        h.flags = GAS_CO_ZCOPY;
        st = gas_tl_put_rt(peer, zoff + o->done, o->src + o->done, n, s->callname);
    } else if (n <= STAGE_BYTES) {
        memcpy(stage.b, &h, GAS_CO_HDR_BYTES);
        if (n)
            memcpy(stage.b + GAS_CO_HDR_BYTES, o->src + o->done, n);
        what = stage.b;
        wlen = GAS_CO_HDR_BYTES + n;
    } else {
        st = gas_tl_put_rt(peer, off + GAS_CO_HDR_BYTES, o->src + o->done, n, s->callname);
    }
    h.chunk_len = n;
    if (what == stage.b)
        memcpy(stage.b, &h, GAS_CO_HDR_BYTES);
    if (st >= 0 && t->relay_pending)
        relay_to(t, d, s->callname);   /* (ahead of the chunk: a peer's channel is in order) */
    if (st >= 0)
        st = put_chunk(peer, off, what, wlen, sig, s->callname);
    if (st < 0) {
        fail(s, st);
        return 1;
    }
    t->sent[d] = k + 1;
    o->done += n;
    o->started = 1;
    if (o->done == o->len)
        t->msent[d] = key;
    return 1;
}

/* Tell the sender of o where its next message to me (the next of this call) may go. */
static void post_cts(struct gas_co_sched *s, struct gas_co_op *o)
{
    gas_team_t t = s->team;
    const char *seg = gas_gs.seg.base;
    o->cts_posted = 1;
    gas_tl_peer_t *peer;
    gas_status_t st = gas_co_peer(t, o->peer, &peer, s->callname);
    uint64_t key = o->cts_key = next_msg_key(t->mrecvd[o->peer], s->call.seq);
    uint64_t entry[3] = {(uint64_t)(o->dst - seg), o->len, call_ident(&s->call)};
    uint64_t at = t->poff[o->peer] + (uint64_t)((char *)&t->cts[t->rank] - t->base);
    if (st == GAS_OK)
        st = gas_tl_put_signal_rt(peer, at + 8, entry, sizeof entry, at, key, GAS_SIGNAL_SET,
                                  s->callname);
    if (st == GAS_ERR_UNSUPPORTED) {
        gas_tl_amo_t a = {.op = GAS_AMO_SET, .width = 8, .offset = at, .operand = key};
        st = gas_tl_put_rt(peer, at + 8, entry, sizeof entry, s->callname);
        if (st >= 0)
            st = peer->ops->fence();
        if (st >= 0)
            st = gas_tl_amo_rt(peer, &a, s->callname);
    }
    if (st < 0)
        fail(s, st);
}

static int zcopy_ok(const struct gas_co_op *o)
{
    const char *seg = gas_gs.seg.base;
    return gas_co_zcopy_min && o->kind == GAS_CO_RECV && o->len >= gas_co_zcopy_min &&
           o->dst >= seg + GAS_AL_RESERVED_BYTES && o->dst < seg + gas_gs.seg.size &&
           o->len <= (size_t)(seg + gas_gs.seg.size - o->dst);
}

/* Give back the chunks consumed from src. */
static void credit_back(struct gas_co_sched *s, int src)
{
    gas_team_t t = s->team;
    gas_tl_peer_t *peer;
    gas_status_t st = gas_co_peer(t, src, &peer, s->callname);
    if (st == GAS_OK) {
        gas_tl_amo_t a = {.op = GAS_AMO_ADD, .width = 8, .operand = t->owed[src],
                          .offset = t->poff[src] + 8 * ((uint64_t)t->size + (uint64_t)t->rank)};
        st = gas_tl_amo_rt(peer, &a, s->callname);
    }
    if (st < 0)
        fail(s, st);
    t->owed[src] = 0;
}

void gas_co_chan_failed(gas_team_t t, uint32_t seq)
{
    t->failed_seq[t->nfailed++ % 8] = seq;
}

/* Did collective seq fail (or was it refused) here? */
static int failed_here(gas_team_t t, uint32_t seq)
{
    unsigned n = t->nfailed < 8 ? t->nfailed : 8;
    for (unsigned i = 0; i < n; i++)
        if (t->failed_seq[i] == seq)
            return 1;
    return 0;
}

/*
 * Is h a chunk that no call of this rank will take: one of an earlier call
 * than `current` (calls run in order, so that call has ended here: it
 * failed, or it completed without taking it, a mismatch), or of a failed
 * one?  Later calls throw such chunks away, so one mismatch does not fail
 * every later call on the team.
 */
static int stale(gas_team_t t, const struct gas_co_hdr *h, uint32_t current)
{
    if (h->seq == current)
        return 0;
    return (int32_t)(h->seq - current) < 0 || failed_here(t, h->seq);
}

/* Consume chunk t->recvd[src] without delivering it. */
static void discard(struct gas_co_sched *s, int src)
{
    gas_team_t t = s->team;
    t->recvd[src]++;
    if (++t->owed[src] >= (t->nchunks + 1) / 2)
        credit_back(s, src);
}

int gas_co_chan_recv(struct gas_co_sched *s, struct gas_co_op *o)
{
    gas_team_t t = s->team;
    int src = o->peer;
    uint64_t k = t->recvd[src];
    if (o->done == 0 && !o->cts_posted && zcopy_ok(o))
        post_cts(s, o);
    if (__atomic_load_n(&t->arrived[src], __ATOMIC_ACQUIRE) <= k)
        return 0;
    const char *chunk = t->base + mbox_off(t, src, k);
    struct gas_co_hdr h;
    memcpy(&h, chunk, sizeof h);
    if (stale(t, &h, s->call.seq)) {
        if (t->left_from < 0 && !failed_here(t, h.seq)) {   /* kept for the team's end check */
            t->left = h;
            t->left_from = t->world[src];
        }
        discard(s, src);
        return 1;
    }
    const char *why = differs(s, &h);
    if (why && gas_co_chan_check_notes(s))
        return 1;   /* a member's failure explains the odd chunk: that is the report */
    gas_status_t st = why ? mismatch(s, src, &h, why) : GAS_OK;
    int zc = (h.flags & GAS_CO_ZCOPY) != 0;
    if (st == GAS_OK && (h.msg_len != o->len || h.msg_off != o->done ||
                         h.chunk_len > o->len - o->done || (zc && !o->cts_posted) ||
                         (!zc && h.chunk_len > t->chunk_bytes - GAS_CO_HDR_BYTES)))
        st = gas_rt_error(GAS_ERR_INVALID, s->callname,
                          "rank %d sent %llu bytes where this rank expects %zu from it (%s on a "
                          "team of %d); the ranks passed different counts",
                          t->world[src], (unsigned long long)h.msg_len, o->len,
                          gas_coll_name((gas_coll_t)s->call.coll), t->size);
    if (st != GAS_OK) {
        fail(s, st);
        return 1;
    }
    if (h.chunk_len && !zc) {
        if (o->kind == GAS_CO_RECV_REDUCE)
            gas_co_reduce(o->dst + o->done, chunk + GAS_CO_HDR_BYTES, h.chunk_len / s->es,
                          s->type, s->redop);
        else
            memcpy(o->dst + o->done, chunk + GAS_CO_HDR_BYTES, h.chunk_len);
    }
    o->done += h.chunk_len;
    o->started = 1;
    if (o->done == o->len)
        t->mrecvd[src] = next_msg_key(t->mrecvd[src], s->call.seq);
    t->recvd[src] = k + 1;
    if (++t->owed[src] >= (t->nchunks + 1) / 2)
        credit_back(s, src);
    return 1;
}

void gas_co_chan_flush_credits(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    struct gas_co_op *ops = s->ops;
    size_t lo = s->cur ? s->round_end[s->cur - 1] : 0, hi = s->round_end[s->cur];
    for (size_t i = lo; i < hi; i++)
        if ((ops[i].kind == GAS_CO_RECV || ops[i].kind == GAS_CO_RECV_REDUCE) &&
            t->owed[ops[i].peer])
            credit_back(s, ops[i].peer);
}

/* Has team rank p (not me) a chunk here that this rank has not received?  Its header in *h. */
static int unread_chunk(gas_team_t t, int p, struct gas_co_hdr *h)
{
    uint64_t k = t->recvd[p];
    if (p == t->rank || __atomic_load_n(&t->arrived[p], __ATOMIC_ACQUIRE) <= k)
        return 0;
    memcpy(h, t->base + mbox_off(t, p, k), sizeof *h);
    return 1;
}

/* The end check's report: rank `from` sent this rank chunk h of a call no call of this rank took. */
static gas_status_t found_at_end(gas_team_t t, const char *call, const struct gas_co_hdr *h,
                                 int from)
{
    char theirs[160];
    describe(theirs, sizeof theirs, h->seq, h->coll, h->alg, h->type, h->op, h->api);
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "collective mismatch on a team of %d found at its end: rank %d sent "
                        "this rank a message of its %s that no call of this rank took; the "
                        "members' calls differed (another root, another collective, or a "
                        "call this rank did not make), so results of the team's last "
                        "collectives may be wrong",
                        t->size, from, theirs);
}

/*
 * Whether failure note n says only that its writer gave up waiting
 * (GAS_ERR_TIMEOUT, for its call and the earlier ones it covers), not that
 * a call was refused or differed: a member whose call of it completed had
 * every message it needed, each whole, so its result is right.
 */
static int timed_out_only(const struct gas_co_note *n)
{
    if (n->status != GAS_ERR_TIMEOUT || n->refused || n->earlier_refused)
        return 0;
    unsigned k = n->span < sizeof n->earlier ? n->span : sizeof n->earlier;
    for (unsigned i = 0; i < k; i++)
        if (n->earlier[i] != 0 && n->earlier[i] != GAS_ERR_TIMEOUT)
            return 0;
    return 1;
}

gas_status_t gas_co_chan_leftover(gas_team_t t, const char *call)
{
    if (t->qhead != NULL || t->nfailed != 0)   /* a failure here was the report */
        return GAS_OK;
    struct gas_co_hdr h;
    for (int p = 0; p < t->size; p++)
        if (unread_chunk(t, p, &h))
            return found_at_end(t, call, &h, t->world[p]);
    if (t->left_from >= 0)   /* one that a later call threw away */
        return found_at_end(t, call, &t->left, t->left_from);
    /* No chunk shows it, but a member's part of a call failed after this rank's completed. */
    for (int p = 0; p < t->size; p++) {
        struct gas_co_note n;
        if (!read_note(t, 2 * p + 1, &n) || n.status == GAS_OK)
            continue;
        char theirs[160];
        describe(theirs, sizeof theirs, n.seq, n.coll, n.alg, n.type, n.op, n.api);
        if ((int32_t)(n.seq - t->seq) >= 0)   /* a call this rank never made */
            return gas_rt_error(GAS_ERR_INVALID, call,
                                "collective mismatch on a team of %d found at its end: rank %d "
                                "made its %s, which failed there (%s), and this rank never made "
                                "it; every member must call the same collectives in the same "
                                "order", t->size, t->world[note_writer(t, 2 * p + 1, &n)], theirs,
                                gas_strerror((gas_status_t)n.status));
        if (timed_out_only(&n)) {   /* it gave up waiting; this rank's call had it all */
            gas_log_warn("coll", "%s: rank %d's part of its %s on a team of %d timed out "
                         "(GAS_TIMEOUT; that rank reported it) while this rank's call completed "
                         "with every message it needed: its result here stands", call,
                         t->world[note_writer(t, 2 * p + 1, &n)], theirs, t->size);
            continue;
        }
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "rank %d's part of its %s on a team of %d failed (%s; that rank "
                            "reported the cause) while this rank's call completed, so this "
                            "rank's results of it may be wrong",
                            t->world[note_writer(t, 2 * p + 1, &n)], theirs, t->size,
                            gas_strerror((gas_status_t)n.status));
    }
    return GAS_OK;
}

static void put_note(gas_team_t t, int p, struct gas_co_note *n, const char *call)
{
    gas_tl_peer_t *peer;
    if (p == t->rank || gas_tl_first_lost(&t->world[p], 1) >= 0 ||
        gas_co_peer(t, p, &peer, call) != GAS_OK)
        return;   /* a put to a lost peer would raise an error of its own */
    n->check = note_check(n);
    struct gas_co_note *slot = &t->notes[2 * t->rank + (n->status != GAS_OK)];
    uint64_t at = t->poff[p] + (uint64_t)((char *)slot - t->base);
    /* best effort: only a diagnosis; a failure note also counts itself there */
    if (n->status == GAS_OK)
        (void)gas_tl_put_rt(peer, at, n, sizeof *n, call);
    else
        (void)gas_tl_put_signal_rt(peer, at, n, sizeof *n,
                                   t->poff[p] + (uint64_t)((char *)t->failnotes - t->base), 1,
                                   GAS_SIGNAL_ADD, call);
}

/*
 * Send failure note n to every member.  It covers the calls that failed
 * just before it with the same status (the last note's span, and that
 * note's call), so a member late by several calls still finds its own.
 */
static void note_failed_all(gas_team_t t, struct gas_co_note *n, const char *call)
{
    const struct gas_co_note *l = &t->last_fail;
    if (l->check != 0 && n->seq == l->seq + 1 && l->span < UINT16_MAX) {
        n->span = (uint16_t)(l->span + 1);
        n->earlier[0] = (int8_t)l->status;
        memcpy(n->earlier + 1, l->earlier, sizeof n->earlier - 1);
        n->earlier_refused = (uint8_t)(l->earlier_refused << 1 | (l->refused != 0));
    }
    t->relay_pending = 0;   /* this note replaces a relayed one in every member's slot */
    for (int p = 0, put = 0; p < t->size; p++) {
        if (p == t->rank)
            continue;
        if (put++ && gas_co_test_note_delay)
            gas_co_test_sleep(gas_co_test_note_delay);
        put_note(t, p, n, call);
    }
    n->check = note_check(n);
    t->last_fail = *n;
}

uint32_t gas_co_chan_number(gas_team_t t, uint32_t *before_p)
{
    (void)gas_co_chan_adopt(t, gas_gs_world_epoch());   /* (numbered as the members do) */
    *before_p = (uint32_t)gas_gs_next_world_epoch();
    return t->seq++;
}

void gas_co_refused(gas_team_t t, gas_coll_t coll, gas_dtype_t type, gas_status_t status,
                    const char *call)
{
    gas_co_team_lock(t);   /* the executor also writes the failure state */
    struct gas_co_note n = {.coll = (uint8_t)coll, .type = (uint8_t)type, .status = status,
                            .refused = 1, .api = gas_co_api_of(call)};
    n.seq = gas_co_chan_number(t, &n.before);
    gas_co_chan_failed(t, n.seq);
    note_failed_all(t, &n, call);
    gas_co_team_unlock(t);
}

/* s's call as a note (check not set). */
static struct gas_co_note call_note(const struct gas_co_sched *s, gas_status_t status)
{
    return (struct gas_co_note){.seq = s->call.seq, .coll = s->call.coll, .alg = s->call.alg,
                                .type = s->call.type, .op = s->call.op,
                                .arghash = s->call.arghash, .status = status,
                                .api = s->call.api, .before = s->before};
}

void gas_co_chan_note(struct gas_co_sched *s, int p, int blocked)
{
    struct gas_co_note n = call_note(s, GAS_OK);
    n.world = (uint32_t)gas_gs_world_epoch();
    n.blocked = (uint16_t)(blocked != 0);
    put_note(s->team, p, &n, s->callname);
}

void gas_co_chan_note_failed(struct gas_co_sched *s)
{
    gas_co_chan_failed(s->team, s->call.seq);
    if (s->failed_by_note)
        return;   /* a relay: the failed member told everyone */
    struct gas_co_note n = call_note(s, s->status);
    if (s->status == GAS_ERR_PEER) {
        int lost = gas_co_lost_member(s->team);
        n.lost = lost >= 0 ? (uint32_t)lost + 1 : 0;
    } else if (s->status == GAS_ERR_INVALID) {
        n.differs = (uint32_t)s->differs;
    }
    note_failed_all(s->team, &n, s->callname);
}

/* Tell every member of t that this rank is in (left: left) `call`, a special note kind coll. */
static void note_all(gas_team_t t, uint8_t coll, int left, const char *call)
{
    struct gas_co_note n = {.seq = t->seq, .coll = coll, .refused = left ? GAS_CO_LEFT : 0};
    for (int p = 0; p < t->size; p++)
        put_note(t, p, &n, call);
}

void gas_co_chan_destroy_note(gas_team_t t, int left)
{
    struct gas_co_note n = {.seq = t->seq, .coll = GAS_CO_DESTROY,
                            .refused = left ? GAS_CO_LEFT : 0};
    if (!left) {   /* blocked in its last barrier, not in the world barrier of this epoch */
        n.world = (uint32_t)gas_gs_world_epoch();
        n.blocked = 1;
    }
    for (int p = 0; p < t->size; p++)
        put_note(t, p, &n, "gas_team_destroy");
}

gas_status_t gas_co_chan_destroy_check(gas_team_t t, uint64_t *seen, const char *call)
{
    uint64_t c = __atomic_load_n(t->failnotes, __ATOMIC_ACQUIRE);
    if (c == *seen)
        return GAS_OK;   /* no failure note came since the last look */
    *seen = c;
    for (int p = 0; p < t->size; p++) {
        struct gas_co_note f;
        /* (a member whose collective failed on this destroy's wait note comes to
         * its own destroy next; one whose world call stood in for it does not) */
        if (!read_note(t, 2 * p + 1, &f) || f.status == GAS_OK || f.seq - t->seq > f.span ||
            (f.coll != GAS_CO_WORLD && f.coll != GAS_CO_FINALIZE))
            continue;
        char what[96];
        describe(what, sizeof what, f.seq, f.coll, f.alg, f.type, f.op, f.api);
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "collective mismatch on a team of %d: where this rank is in "
                            "gas_team_destroy (as the team's call #%u), rank %d made %s instead "
                            "and failed in it; every member must make the same collective calls "
                            "in the same order (the team was not destroyed)",
                            t->size, t->seq, t->world[p], what);
    }
    return GAS_OK;
}

void gas_co_chan_revoke_cts(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    if (s->cur >= s->nrounds)
        return;
    size_t lo = s->cur ? s->round_end[s->cur - 1] : 0, hi = s->round_end[s->cur];
    for (size_t i = lo; i < hi; i++) {
        const struct gas_co_op *o = &s->ops[i];
        gas_tl_peer_t *peer;
        if (o->kind != GAS_CO_RECV || !o->cts_posted || o->done == o->len ||
            gas_tl_first_lost(&t->world[o->peer], 1) >= 0 ||
            gas_co_peer(t, o->peer, &peer, s->callname) != GAS_OK)
            continue;
        if (s->revokes == NULL && (s->revokes = calloc(hi - lo, sizeof *s->revokes)) == NULL) {
            gas_log_warn("coll", "%s: no memory to take back a zero-copy entry: rank %d may "
                         "still write into this call's destination after it returned",
                         s->callname, t->world[o->peer]);
            return;
        }
        struct gas_co_revoke *r = &s->revokes[s->nrevokes++];
        *r = (struct gas_co_revoke){.peer = o->peer, .len = o->len,
                                    .key = o->cts_key};
        atomic_init(&r->comp.pending, 1);
        uint64_t at = t->poff[o->peer] + (uint64_t)((char *)&t->cts[t->rank] - t->base);
        gas_tl_amo_t a = {.op = GAS_AMO_CSWAP, .width = 8, .offset = at, .operand = 0,
                          .compare = r->key, .result = &r->old};
        /* (the entry's post, a put_signal, reaches the sender before the swap) */
        gas_status_t st = peer->ops->fence();
        if (st >= 0)
            st = gas_tl_amo(peer, &a, &r->comp, s->callname);
        if (st != GAS_INPROGRESS)
            atomic_store_explicit(&r->comp.pending, 0, memory_order_release);
        if (st < 0) {
            r->over = 1;   /* not swapped (raised by the transport) */
            if (gas_tl_first_lost(&t->world[o->peer], 1) < 0)
                gas_log_warn("coll", "%s: could not take back rank %d's zero-copy entry "
                             "(the fence or the swap failed: %s): that rank may still write "
                             "into this failed call's destination after it returned",
                             s->callname, t->world[o->peer], gas_strerror(st));
        }
    }
}

/* Whether sender p's zero-copy header chunk of s's call, for a message of len bytes, has
 * arrived (unconsumed: a failed call consumes nothing more). */
static int zcopy_header_in(gas_team_t t, int p, const struct gas_co_sched *s, size_t len)
{
    uint64_t a = __atomic_load_n(&t->arrived[p], __ATOMIC_ACQUIRE);
    for (uint64_t k = t->recvd[p]; k < a && k - t->recvd[p] < t->nchunks; k++) {
        struct gas_co_hdr h;
        memcpy(&h, t->base + mbox_off(t, p, k), sizeof h);
        if (h.seq == s->call.seq && (h.flags & GAS_CO_ZCOPY) && h.msg_len == len)
            return 1;
    }
    return 0;
}

/* Whether member p's call of s's number is over there: its failure note here covers it. */
static int sender_failed(gas_team_t t, int p, uint32_t seq)
{
    struct gas_co_note n;
    return read_note(t, 2 * p + 1, &n) && n.status != GAS_OK && n.seq - seq <= n.span;
}

/* Whether revoke r of s has nothing more to land (see gas_co_chan_revoke_over). */
static int revoke_done(struct gas_co_sched *s, struct gas_co_revoke *r)
{
    gas_team_t t = s->team;
    if (r->over)
        return 1;
    int lost = gas_tl_first_lost(&t->world[r->peer], 1) >= 0;
    if (atomic_load_explicit(&r->comp.pending, memory_order_acquire) != 0)
        return r->over = lost;
    if (atomic_load_explicit(&r->comp.status, memory_order_relaxed) != GAS_OK ||
        r->old != (r->key | GAS_CO_CTS_TAKEN))
        return r->over = 1;   /* taken back before the sender claimed it (or not swapped) */
    return r->over = lost || zcopy_header_in(t, r->peer, s, r->len) ||
                     sender_failed(t, r->peer, s->call.seq);
}

int gas_co_chan_revoke_over(struct gas_co_sched *s)
{
    int over = 1, probe = -1;
    for (int i = 0; i < s->nrevokes; i++)
        if (!revoke_done(s, &s->revokes[i])) {
            over = 0;
            probe = s->revokes[i].peer;
        }
    if (!over && gas_tl_probe_due(&s->probe_at))
        gas_tl_probe(s->team->world[probe]);   /* a silent sender is declared dead */
    return over;
}

void gas_co_chan_revoke_waited(const struct gas_co_sched *s, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0, n = 0; i < s->nrevokes && len < cap; i++)
        if (!s->revokes[i].over)
            len += (size_t)snprintf(buf + len, cap - len, "%s%d", n++ ? ", " : "",
                                    s->team->world[s->revokes[i].peer]);
}

void gas_co_chan_revoke_forget(struct gas_co_sched *s)
{
    for (int i = 0; i < s->nrevokes; i++)
        if (atomic_load_explicit(&s->revokes[i].comp.pending, memory_order_acquire) != 0)
            gas_tl_forget(&s->revokes[i].comp);
    free(s->revokes);
    s->revokes = NULL;
    s->nrevokes = 0;
}

/* The error for s when member p's failure note n covers s's call (passed on by member
 * `via`, or via == p). */
static gas_status_t relayed_failure(const struct gas_co_sched *s, int p, int via,
                                    const struct gas_co_note *n)
{
    gas_team_t t = s->team;
    const char *did = "failed in its", *how = "";
    if (n->refused) {
        did = "refused its";
        how = " for its arguments";
    } else if (n->status == GAS_ERR_TIMEOUT) {
        did = "gave up on its";
        how = " after waiting GAS_TIMEOUT for the other members";
    }
    char name[48] = "";
    char coll[40];
    const char *c = n->coll == GAS_CO_DESTROY    ? "gas_team_destroy"
                    : n->coll == GAS_CO_FINALIZE ? "gas_finalize"
                    : n->coll == GAS_CO_WORLD    ? gas_gs_call_name((enum gas_gs_call_kind)n->type)
                                                 : gas_co_api_name(n->coll, n->api, coll,
                                                                   sizeof coll);
    if (n->seq == s->call.seq)   /* (a note covering s by its span names a later call) */
        snprintf(name, sizeof name, " (%s)", c);
    char lost[224] = "";
    if (n->status == GAS_ERR_PEER && n->lost != 0) {
        /* The failed member names the rank it lost; this rank's own transport
         * may not have given up on it yet (it says so when it has). */
        int r = (int)(n->lost - 1);
        char what[192];
        (void)gas_tl_look_gone(r, 1);   /* a node-mate's ended process: seen here, with its cause */
        if (gas_tl_first_lost(&r, 1) == r)
            gas_tl_lost_what(r, what, sizeof what);
        else   /* (the note names the rank, not how it was lost) */
            snprintf(what, sizeof what,
                     "rank %d is dead or unreachable (rank %d's failure note says so; its "
                     "error says how it was lost)", r, t->world[p]);
        snprintf(lost, sizeof lost, ": %s", what);
    }
    char relay[64] = "";
    if (via != p)
        snprintf(relay, sizeof relay, "; rank %d passed its note on", t->world[via]);
    int other = (int)n->differs - 1;
    if (!n->refused && n->status == GAS_ERR_INVALID && other >= 0 && other < t->size &&
        other != p) {
        char whose[32] = "this rank's";
        if (other != t->rank)
            snprintf(whose, sizeof whose, "rank %d's", t->world[other]);
        return gas_rt_error(GAS_ERR_INVALID, s->callname,
                            "collective mismatch on a team of %d: rank %d found that its "
                            "collective #%u%s and %s differ (that rank's error says why%s), so "
                            "this rank's part cannot complete; every member must call the same "
                            "collectives in the same order with the same arguments",
                            t->size, t->world[p], s->call.seq, name, whose, relay);
    }
    return gas_rt_error((gas_status_t)n->status, s->callname,
                        "rank %d %s collective #%u%s on a team of %d%s (%s%s; that rank's error "
                        "says why%s), so this rank's part cannot complete",
                        t->world[p], did, s->call.seq, name, t->size, how,
                        gas_strerror((gas_status_t)n->status), lost, relay);
}

int gas_co_chan_check_notes(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    for (int i = 0; i < 2 * t->size; i++) {
        int p = i / 2;
        struct gas_co_note n;
        if (!read_note(t, i, &n))
            continue;   /* empty or torn */
        if (i % 2 == 0 && (n.coll == GAS_CO_DESTROY || n.coll == GAS_CO_FINALIZE)) {
            /* A member in gas_team_destroy or gas_finalize numbered with this call
             * or an earlier one (this rank made calls it did not): it waits for
             * this rank there. */
            if (n.refused == GAS_CO_LEFT || (int32_t)(s->call.seq - n.seq) < 0)
                continue;
            struct gas_co_hdr h = {.seq = n.seq, .coll = n.coll};
            fail(s, mismatch_as(s, p, &h, "waits for this rank in",
                                n.seq == s->call.seq ? ""
                                                     : " (this rank made collective calls on "
                                                       "the team that it did not make)"));
            return 1;
        }
        if (n.seq - s->call.seq > n.span)
            continue;   /* another call (an old note, or a later call) */
        struct gas_co_note as_written = n;   /* (passed on as it is) */
        uint32_t back = n.seq - s->call.seq;
        unsigned k = back > 8 ? 7 : back - 1;
        if (back > 0 && n.earlier[k] != 0) {
            /* covered by a later call's note that failed otherwise: this call's own story */
            n.status = n.earlier[k];
            n.refused = (uint16_t)(n.earlier_refused >> k & 1);
            n.lost = 0;
        }
        int from = note_writer(t, i, &n);
        struct gas_co_hdr h = {.seq = n.seq, .coll = n.coll, .alg = n.alg, .type = n.type,
                               .op = n.op, .arghash = n.arghash, .api = n.api};
        /* (a refused call's note has no algorithm or argument hash to compare,
         * and one that covers s's call by its span describes a later call) */
        const char *why = n.refused || n.seq != s->call.seq ? NULL : differs(s, &h);
        gas_status_t st;
        if (why != NULL) {
            /* found here first hand: this rank's failure notes go out too */
            st = mismatch_as(s, from, &h, n.status == GAS_OK ? "waits for this rank in"
                                                             : "failed in", why);
        } else if (n.status < 0 && n.status >= GAS_ERR_INTERNAL) {
            st = relayed_failure(s, from, p, &n);
            s->failed_by_note = 1;   /* a relay: the failed rank told everyone, */
            relay_arm(t, p, &as_written);   /* and this rank tells those it sends to next */
        } else {
            continue;   /* the same call, waiting: no news */
        }
        fail(s, st);
        return 1;
    }
    return 0;
}

int gas_co_chan_adopt(gas_team_t t, uint64_t entered)
{
    uint64_t c = __atomic_load_n(t->failnotes, __ATOMIC_ACQUIRE);
    if (t->adopt_seen == c + 1 && (!t->adopt_later || t->adopt_entered == entered))
        return -1;   /* no failure note since the last look, nor one it left for now */
    t->adopt_seen = c + 1;
    t->adopt_entered = entered;
    t->adopt_later = 0;
    uint32_t was = t->seq;   /* (notes are read in any order: each against the calls made) */
    int standin = -1;
    for (int p = 0; p < t->size; p++) {
        struct gas_co_note n;
        if (!read_note(t, 2 * p + 1, &n) || n.status == GAS_OK || (int32_t)(n.seq - was) < 0)
            continue;   /* (one this rank has numbered too: its own call meets it) */
        if ((int32_t)(n.before - (uint32_t)entered) > 0) {
            t->adopt_later = 1;   /* made after a barrier this rank has not reached */
            continue;
        }
        if ((n.coll == GAS_CO_WORLD || n.coll == GAS_CO_FINALIZE) && n.before == (uint32_t)entered)
            standin = note_writer(t, 2 * p + 1, &n);
        if ((int32_t)(n.seq - t->seq) < 0)
            continue;   /* (adopted already, by another member's note) */
        uint32_t from = n.seq - t->seq > 7 ? n.seq - 7 : t->seq;
        for (uint32_t k = from; (int32_t)(n.seq - k) >= 0; k++)
            gas_co_chan_failed(t, k);
        t->seq = n.seq + 1;
    }
    return standin;
}

/* (The walks over the live teams below hold gas_co_live_lock for reading: another
 * thread's team split or destroy, on another team, may move the list or free a team.) */
void gas_co_flush_relays(const char *call)
{
    pthread_rwlock_rdlock(&gas_co_live_lock);
    for (size_t i = 0; i < gas_co_nlive; i++) {
        gas_team_t t = gas_co_live[i];
        gas_co_team_lock(t);
        for (int d = 0; t->relay_pending && d < t->size; d++)
            relay_to(t, d, call);
        gas_co_team_unlock(t);
    }
    pthread_rwlock_unlock(&gas_co_live_lock);
}

void gas_co_world_adopt(uint64_t epoch)
{
    pthread_rwlock_rdlock(&gas_co_live_lock);
    for (size_t i = 0; i < gas_co_nlive; i++) {
        gas_team_t t = gas_co_live[i];
        gas_co_team_lock(t);
        (void)gas_co_chan_adopt(t, epoch);
        gas_co_team_unlock(t);
    }
    pthread_rwlock_unlock(&gas_co_live_lock);
}

/* Whether a failure note here names a call after `seq` (it may cover a later call). */
static int failure_note_ahead(gas_team_t t, uint32_t seq)
{
    for (int p = 0; p < t->size; p++) {
        struct gas_co_note n;
        if (read_note(t, 2 * p + 1, &n) && (int32_t)(n.seq - seq) > 0)
            return 1;
    }
    return 0;
}

int gas_co_chan_check_failures(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    uint64_t c = __atomic_load_n(t->failnotes, __ATOMIC_ACQUIRE);
    if (c == t->failnotes_seen && !t->failnotes_ahead)
        return 0;   /* no failure note came since the last look, and none was for later */
    t->failnotes_seen = c;
    t->failnotes_ahead = failure_note_ahead(t, s->call.seq);
    return gas_co_chan_check_notes(s);
}

int gas_co_chan_probe(struct gas_co_sched *s)
{
    gas_team_t t = s->team;
    struct gas_co_hdr h;
    for (int p = 0; p < t->size; p++) {
        if (!unread_chunk(t, p, &h) || stale(t, &h, s->call.seq))
            continue;   /* (a stale chunk, an earlier call's included, is thrown away by the
                           receive that meets it) */
        const char *why = h.seq == s->call.seq ? differs(s, &h) : NULL;
        if (why == NULL)
            continue;   /* a later call's chunk, or this call's: no news */
        if (!gas_co_chan_check_notes(s))   /* a member's failure explains it, or: */
            fail(s, mismatch(s, p, &h, why));
        return 1;
    }
    return 0;
}

/* Member p's note n (wait or failure) names a collective on t that this rank never made. */
static int ahead_of_me(const gas_team_t t, const struct gas_co_note *n, int failure)
{
    if (n->coll >= GAS_COLL_COUNT || (failure ? n->status == GAS_OK : n->status != GAS_OK))
        return 0;   /* a destroy, finalize or world call's note, or a wait note's stale kind */
    return (int32_t)(n->seq - t->seq) >= 0;
}

/* A member's failure note here covers t's call seq: that call is over for every member. */
static int failed_by_some(gas_team_t t, uint32_t seq)
{
    for (int p = 0; p < t->size; p++) {
        struct gas_co_note f;
        if (read_note(t, 2 * p + 1, &f) && f.status != GAS_OK && f.seq - seq <= f.span)
            return 1;
    }
    return 0;
}

/*
 * For a world call of another kind than gas_finalize in world barrier
 * `epoch`: wait note n says that its writer is blocked in a collective on t
 * that this rank has not made, and had not entered that barrier when it
 * wrote it.  Then neither can go on: the writer waits for this rank's call,
 * this rank's barrier for the writer.  (A writer that had entered the
 * barrier is past it: this rank makes that call once its barrier is over.
 * A note for a call that a member's failure note covers is old news: the
 * writer's call fails, or failed, on it, and the writer goes on.)
 */
static int blocked_before(const gas_team_t t, const struct gas_co_note *n, uint64_t epoch)
{
    return n->blocked && (int32_t)(n->world - (uint32_t)epoch) < 0 && ahead_of_me(t, n, 0) &&
           !failed_by_some(t, n->seq);
}

/*
 * Wait note n says that its writer is in gas_team_destroy on t, numbered
 * with this rank's next call on t or a later one (this rank has not made
 * it), and for a world call other than gas_finalize had not entered world
 * barrier `epoch` when it wrote the note: the writer waits for this rank
 * in its last barrier, this rank for the writer in the world's.
 */
static int destroy_waits(const gas_team_t t, const struct gas_co_note *n,
                         enum gas_gs_call_kind kind, uint64_t epoch)
{
    if (n->coll != GAS_CO_DESTROY || n->refused == GAS_CO_LEFT || !n->blocked ||
        (int32_t)(n->seq - t->seq) < 0 || failed_by_some(t, n->seq))
        return 0;
    return kind == GAS_GS_CALL_FINALIZE || (int32_t)(n->world - (uint32_t)epoch) < 0;
}

/*
 * This rank's world call (gas_finalize, or `kind`) stands in for t's calls
 * t->seq .. last, which members made and this rank has not: they count as
 * failed here, and a failure note (spanning them all) tells the members, so
 * those still waiting in them fail instead of waiting for this rank.
 */
static void world_stands_in(gas_team_t t, const struct gas_co_note *blocked, int blocked_by,
                            enum gas_gs_call_kind kind, uint64_t epoch, const char *call)
{
    gas_co_team_lock(t);   /* the executor also writes the failure state */
    uint32_t last = blocked->seq, span = last - t->seq;
    /* (alg, api and arghash name the member's call it stands in for: stood_in_by) */
    struct gas_co_note f = {.seq = last, .status = GAS_ERR_INVALID,
                            .coll = kind == GAS_GS_CALL_FINALIZE ? GAS_CO_FINALIZE : GAS_CO_WORLD,
                            .type = kind == GAS_GS_CALL_FINALIZE ? 0 : (uint8_t)kind,
                            .span = span < UINT16_MAX ? (uint16_t)span : UINT16_MAX,
                            .before = (uint32_t)epoch, .alg = blocked->coll,
                            .api = blocked->api, .arghash = (uint32_t)blocked_by + 1};
    for (uint32_t k = 0; k <= span && k < 8; k++)
        gas_co_chan_failed(t, last - k);
    t->seq = last + 1;
    note_failed_all(t, &f, call);
    gas_co_team_unlock(t);
}

/* The world check's error for `call`: member `who` waits in (or failed in) note n's call on t. */
static gas_status_t world_mismatch(gas_team_t t, const char *call, enum gas_gs_call_kind kind,
                                   int who, int failed, const struct gas_co_note *n)
{
    char name[48];
    const char *c = n->coll == GAS_CO_DESTROY ? "gas_team_destroy"
                                              : gas_co_api_name(n->coll, n->api, name, sizeof name);
    char team[64] = "the world team";
    if (t != gas_team_world_)
        snprintf(team, sizeof team, "a team of %d", t->size);
    if (kind == GAS_GS_CALL_FINALIZE)
        return gas_rt_error(GAS_ERR_INVALID, call,
                            "collective mismatch: rank %d %s its collective #%u (%s) on %s, a "
                            "call this rank never made (it called gas_finalize instead); every "
                            "rank must make the same collective calls in the same order (this "
                            "rank is not finalized: call gas_finalize again)",
                            who, failed ? "failed in" : "waits for this rank in", n->seq,
                            c, team);
    const char *me = call;
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "collective mismatch: rank %d waits for this rank in its collective #%u "
                        "(%s) on %s, a call this rank has not made: this rank called %s "
                        "first, whose world barrier rank %d has not reached; every rank must make "
                        "the same collective calls in the same order (this %s did not complete, "
                        "and that collective counts as failed here)",
                        who, n->seq, c, team, me, who, me);
}

/*
 * The error for this rank's world call (`call`, of `kind`) when member
 * `writer`'s call in the same world barrier stood in for t's calls first..last,
 * which this rank never made either: they count as failed here too, and this
 * world call fails as the writer's did, so that every rank in that barrier
 * makes its call again (not only the writer, whom the others would wait for).
 */
static gas_status_t stood_in_by(gas_team_t t, const char *call, enum gas_gs_call_kind kind,
                                int writer, uint32_t first, uint32_t last)
{
    char team[64] = "the world team", calls[160], name[48] = "a member in ";
    if (t != gas_team_world_)
        snprintf(team, sizeof team, "a team of %d", t->size);
    struct gas_co_note n;   /* the writer's note names the member's call */
    int in = read_note(t, 2 * writer + 1, &n) && n.seq == last ? (int)n.arghash - 1 : -1;
    if (in >= 0 && in < t->size)
        snprintf(name, sizeof name, "rank %d in its ", t->world[in]);
    const char *c = in < 0 ? "" : n.alg == GAS_CO_DESTROY ? "gas_team_destroy"
                                : gas_co_api_name(n.alg, n.api, calls, sizeof calls);
    char what[96];
    snprintf(what, sizeof what, "%s%s%s", c[0] ? " (" : "", c, c[0] ? ")" : "");
    if (first == last)
        snprintf(calls, sizeof calls, "%scollective #%u%s", name, last, what);
    else
        snprintf(calls, sizeof calls, "%scollectives #%u to #%u%s", name, first, last, what);
    const char *again = kind == GAS_GS_CALL_FINALIZE ? "this rank is not finalized: call "
                                                       "gas_finalize again"
                                                     : "call it again, as every rank whose "
                                                       "world call failed does";
    return gas_rt_error(GAS_ERR_INVALID, call,
                        "collective mismatch: rank %d found %s on %s, which this "
                        "rank never made either, while both were in this world call's barrier; "
                        "%s as failed on every rank, and this %s did not complete (%s)",
                        t->world[writer], calls, team,
                        first == last ? "it counts" : "they count", call, again);
}

gas_status_t gas_co_world_check(const char *call, enum gas_gs_call_kind kind, uint64_t epoch)
{
    gas_status_t first = GAS_OK;
    pthread_rwlock_rdlock(&gas_co_live_lock);
    for (size_t i = 0; i < gas_co_nlive; i++) {
        gas_team_t t = gas_co_live[i];
        int who = -1, failed = 0;   /* who: the member's team rank */
        struct gas_co_note last = {0};
        for (int j = 0; j < 2 * t->size; j++) {
            struct gas_co_note n;
            if (!read_note(t, j, &n))
                continue;
            if (!(j % 2 == 0 && destroy_waits(t, &n, kind, epoch)) &&
                (kind == GAS_GS_CALL_FINALIZE ? !ahead_of_me(t, &n, j % 2)
                                              : j % 2 || !blocked_before(t, &n, epoch)))
                continue;
            /* (the latest call; of one call, the failure note: it ends the wait) */
            if (who < 0 || (int32_t)(n.seq - last.seq) > 0 || (n.seq == last.seq && j % 2)) {
                last = n;
                who = j / 2;
                failed = j % 2;
            }
        }
        if (who < 0) {
            /* none seen here; a member in this world barrier may have stood in already */
            gas_co_team_lock(t);
            uint32_t was = t->seq;
            int standin = gas_co_chan_adopt(t, epoch);
            gas_co_team_unlock(t);
            if (standin >= 0 && first == GAS_OK)
                first = stood_in_by(t, call, kind, standin, was, t->seq - 1);
            continue;
        }
        if (first == GAS_OK)
            first = world_mismatch(t, call, kind, t->world[who], failed, &last);
        world_stands_in(t, &last, who, kind, epoch, call);
    }
    pthread_rwlock_unlock(&gas_co_live_lock);
    return first;
}

void gas_co_finalize_note(int left)
{
    pthread_rwlock_rdlock(&gas_co_live_lock);
    for (size_t i = 0; i < gas_co_nlive; i++)
        note_all(gas_co_live[i], GAS_CO_FINALIZE, left, "gas_finalize");
    pthread_rwlock_unlock(&gas_co_live_lock);
}
