/*
 * barrier_late.c - which ranks have not entered a world barrier, for the
 * message of a barrier wait that timed out (gas/sync.c).
 *
 * Every rank keeps the number of the last world barrier it entered in a
 * word of its segment's barrier scratch.  On this rare path the rank whose
 * wait timed out reads that word of every other rank: a load for a peer it
 * maps (shm), a get otherwise, all gets issued at once and waited for at
 * most LATE_ANSWER_NS (a rank that does not answer by then, or that a
 * transport has given up on, is named as such).  It runs as a wait's
 * explainer (runtime/wait.h): waits inside it do not wait, so a get that
 * would wait for room fails quietly.
 */
#include "internal.h"
#include "runtime/boot_wire.h"
#include "runtime/clock.h"
#include "runtime/wait.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define LATE_ANSWER_NS 500000000ull   /* how long the gets may take, all together */
#define SILENT_WHY "dead, unreachable, or outside libgas calls with GAS_PROGRESS=poll"

enum late_state { LATE_ENTERED = 0, LATE_NOT_ENTERED, LATE_ASKED, LATE_SILENT };

struct late_ask {
    uint64_t entered;     /* the rank's word, once read */
    gas_tl_comp_t comp;   /* its get, when one was issued */
    enum late_state state;
};

/* Read rank p's word: at once (a load, or a get done within the slot), or asked (a get
 * under way), or silent (lost, no route, or the get failed). */
static void ask(struct late_ask *a, int p, uint64_t word_off, const char *call)
{
    gas_tl_peer_t *peer;
    if (gas_tl_first_lost(&p, 1) >= 0 || gas_tl_peer_for(call, p, &peer) != GAS_OK) {
        a->state = LATE_SILENT;
        return;
    }
    if (peer->direct_base) {
        a->entered = __atomic_load_n((uint64_t *)(void *)(peer->direct_base + word_off),
                                     __ATOMIC_ACQUIRE);
        a->state = LATE_ENTERED;   /* (compared with the epoch by the caller) */
        return;
    }
    atomic_store_explicit(&a->comp.pending, 1, memory_order_relaxed);
    gas_status_t st = gas_tl_get(peer, &a->entered, word_off, sizeof a->entered, &a->comp, call);
    if (st == GAS_INPROGRESS) {
        a->state = LATE_ASKED;
        return;
    }
    atomic_store_explicit(&a->comp.pending, 0, memory_order_relaxed);
    a->state = st == GAS_OK ? LATE_ENTERED : LATE_SILENT;
}

/* Drive progress until every get of asks is answered or LATE_ANSWER_NS passed; the
 * ones still out are given up on (forgotten) and count as silent. */
static void collect(struct late_ask *asks, int n)
{
    uint64_t end = gas_rt_now_ns() + LATE_ANSWER_NS;
    for (int p = 0; p < n; p++) {
        struct late_ask *a = &asks[p];
        if (a->state != LATE_ASKED)
            continue;
        while (atomic_load_explicit(&a->comp.pending, memory_order_acquire) != 0 &&
               gas_rt_now_ns() < end) {
            if (!gas_rt_progress())
                sched_yield();
        }
        if (atomic_load_explicit(&a->comp.pending, memory_order_acquire) != 0) {
            gas_tl_forget(&a->comp);
            a->state = LATE_SILENT;
        } else {
            a->state = atomic_load(&a->comp.status) == GAS_OK ? LATE_ENTERED : LATE_SILENT;
        }
    }
}

/* The ranks in `state` as a bitmap (boot_wire.h's layout), counted into *count_p. */
static unsigned char *ranks_in(const struct late_ask *asks, int n, enum late_state state,
                               uint32_t *count_p)
{
    unsigned char *bits = calloc((size_t)n / 8 + 1, 1);
    uint32_t count = 0;
    for (int p = 0; bits && p < n; p++)
        if (asks[p].state == state) {
            bits[p / 8] |= (unsigned char)(1u << (p % 8));
            count++;
        }
    *count_p = count;
    return bits;
}

/* Write the finding: the ranks not entered first, then those that did not answer
 * (nothing when there is no memory for the lists). */
static void describe(const struct late_ask *asks, int n, uint64_t epoch, char *buf, size_t cap)
{
    uint32_t late, silent;
    unsigned char *lb = ranks_in(asks, n, LATE_NOT_ENTERED, &late);
    unsigned char *sb = ranks_in(asks, n, LATE_SILENT, &silent);
    unsigned long long e = (unsigned long long)epoch;
    if (lb && sb) {
        char lr[160], sr[120];
        gas_boot_format_ranks(lb, (uint32_t)n, 1, lr, sizeof lr);
        gas_boot_format_ranks(sb, (uint32_t)n, 1, sr, sizeof sr);
        const char *ls = late == 1 ? "" : "s", *ss = silent == 1 ? "" : "s";
        if (late && silent)
            snprintf(buf, cap, "rank%s %s %s not entered world barrier %llu; rank%s %s did not "
                     "answer when asked (%s)", ls, lr, late == 1 ? "has" : "have", e, ss, sr,
                     SILENT_WHY);
        else if (late)
            snprintf(buf, cap, "rank%s %s %s not entered world barrier %llu (every other rank "
                     "has)", ls, lr, late == 1 ? "has" : "have", e);
        else if (silent)
            snprintf(buf, cap, "rank%s %s did not answer when asked whether %s entered world "
                     "barrier %llu (%s); every other rank has entered it", ss, sr,
                     silent == 1 ? "it has" : "they have", e, SILENT_WHY);
        else
            snprintf(buf, cap, "every rank has entered world barrier %llu, so one is stuck in "
                     "it or its signal is late", e);
    }
    free(lb);
    free(sb);
}

void gas_gs_barrier_late(const char *call, uint64_t epoch, uint64_t word_off, char *buf,
                         size_t cap)
{
    int n = gas_gs.nranks;
    buf[0] = '\0';
    struct late_ask *asks = calloc((size_t)n, sizeof *asks);
    if (asks == NULL)
        return;
    for (int p = 0; p < n; p++)
        if (p == gas_gs.rank)
            asks[p].entered = epoch;
        else
            ask(&asks[p], p, word_off, call);
    collect(asks, n);
    for (int p = 0; p < n; p++)
        if (asks[p].state == LATE_ENTERED && asks[p].entered < epoch)
            asks[p].state = LATE_NOT_ENTERED;
    describe(asks, n, epoch, buf, cap);
    free(asks);
}
