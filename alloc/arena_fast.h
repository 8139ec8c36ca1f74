/*
 * arena_fast.h - the inline fast paths of gas_al_arena_alloc/free: a hit in
 * the calling thread's cache of freed small blocks (alloc/arena.c explains
 * the cache).  Everything else goes to the out-of-line slow paths.  Inlined
 * into gas_alloc/gas_dealloc, the cache hit costs no call besides jemalloc's
 * sallocx (the freed block's size class).
 *
 * Also inline: gas_al_enter/gas_al_leave, which bracket every call that a
 * thread may make while another runs gas_finalize (gas_alloc, gas_dealloc,
 * gas_memory_stats), so that gas_al_arenas_stop waits for those under way
 * and refuses those that come later (arena.c, "entry and close").
 */
#ifndef GAS_AL_ARENA_FAST_H
#define GAS_AL_ARENA_FAST_H

#include <jemalloc/jemalloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

#define GAS_AL_CACHE_MAX 4096   /* blocks up to this size are cached per thread */
#define GAS_AL_MAX_CLASSES 48

struct gas_al_bin {
    uint32_t n;
    uint32_t size;                          /* the class's usable bytes */
    void **stack;                           /* gas_al_class_cap[c] pointers */
};

struct gas_al_thr {
    struct gas_al_thr *next;
    uint64_t gen;                           /* == gas_al_gen while its tcaches are valid */
    int slot;                               /* the arena it allocates from */
    _Atomic int inside;                     /* between gas_al_enter and gas_al_leave */
    int seen_out;                           /* close: seen outside since (under thr_lock) */
    _Atomic int64_t used;                   /* usable bytes this thread allocated minus freed */
    uint32_t tc[GAS_AL_MAX_ARENAS];         /* explicit tcache + 1 per arena; 0 none yet */
    struct gas_al_bin bins[GAS_AL_MAX_CLASSES]; /* freed small blocks, by class */
};

/* gas_al_gate: the arenas serve calls (start to stop); gas_al_enter must fence (no membarrier). */
#define GAS_AL_GATE_OPEN 1
#define GAS_AL_GATE_FENCE 2

extern _Thread_local struct gas_al_thr *gas_al_self __attribute__((tls_model("initial-exec")));
extern _Atomic uint64_t gas_al_gen;                  /* bumped by every start */
extern _Atomic int gas_al_gate;                      /* GAS_AL_GATE_* */
extern uint8_t gas_al_class_of_size[GAS_AL_CACHE_MAX + 1];       /* request -> class */
extern uint8_t gas_al_class_of_usable[GAS_AL_CACHE_MAX / 8 + 1]; /* usable / 8 -> class, 0xff none */
extern uint16_t gas_al_class_cap[GAS_AL_MAX_CLASSES];

void *gas_al_arena_alloc_slow(size_t nbytes, int *why_p);
void gas_al_arena_free_slow(void *p, size_t usable);
struct gas_al_thr *gas_al_thr_register(void);
struct gas_al_thr *gas_al_enter_slow(struct gas_al_thr *t);

/* Big blocks (alloc/big.h): whether any was made; freeing one: 1, or 0 when p is not one. */
extern _Atomic int gas_al_big_used;
int gas_al_big_free(void *p);

/*
 * Enter a call that may overlap gas_finalize in another thread: this
 * thread's record, marked inside until gas_al_leave, or NULL when the arenas
 * are not open (never started, or gas_al_arenas_stop has begun: the call must
 * touch nothing of theirs nor the segment) or when no record could be made
 * for this thread (gas_al_open() tells the two apart).  While a thread is
 * inside, gas_al_arenas_stop waits.  Costs a store and a load: the
 * store-load ordering against the closing thread comes from its membarrier
 * (gas_al_enter_slow fences where there is none).
 */
static inline struct gas_al_thr *gas_al_enter(void)
{
    struct gas_al_thr *t = gas_al_self;
    if (__builtin_expect(t == NULL, 0))
        return gas_al_enter_slow(NULL);
    atomic_store_explicit(&t->inside, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&gas_al_gate, memory_order_relaxed) !=
                             GAS_AL_GATE_OPEN, 0))
        return gas_al_enter_slow(t);
    return t;
}

/* Leave what gas_al_enter entered (t from it; NULL: nothing to do). */
static inline void gas_al_leave(struct gas_al_thr *t)
{
    if (t != NULL)
        atomic_store_explicit(&t->inside, 0, memory_order_release);
}

/* Are the arenas open (gas_al_enter would let a call in)? */
static inline int gas_al_open(void)
{
    return (atomic_load_explicit(&gas_al_gate, memory_order_acquire) & GAS_AL_GATE_OPEN) != 0;
}

/* Count delta usable bytes allocated (freed: negative) by thread t (its own record). */
static inline void gas_al_count(struct gas_al_thr *t, int64_t delta)
{
    atomic_store_explicit(&t->used, atomic_load_explicit(&t->used, memory_order_relaxed) + delta,
                          memory_order_relaxed);
}

/* This thread's cache state while it is current, else NULL. */
static inline struct gas_al_thr *gas_al_thr_current(void)
{
    struct gas_al_thr *t = gas_al_self;
    if (__builtin_expect(t != NULL &&
                             t->gen == atomic_load_explicit(&gas_al_gen, memory_order_acquire), 1))
        return t;
    return NULL;
}

/* nbytes (> 0) from this thread's arena, or NULL with *why_p set. */
static inline void *gas_al_arena_alloc(size_t nbytes, int *why_p)
{
    struct gas_al_thr *t = gas_al_thr_current();
    if (__builtin_expect(t != NULL && nbytes <= GAS_AL_CACHE_MAX, 1)) {
        struct gas_al_bin *b = &t->bins[gas_al_class_of_size[nbytes]];
        if (__builtin_expect(b->n > 0, 1)) {
            gas_al_count(t, b->size);
            return b->stack[--b->n];
        }
    }
    return gas_al_arena_alloc_slow(nbytes, why_p);
}

/*
 * Free a live block gas_al_arena_alloc returned (any thread).  Nothing here
 * detects a double free: gas_dealloc asks the live-block map (alloc/live.h).
 */
static inline void gas_al_arena_free(void *p)
{
    /* Big blocks are page-aligned; jemalloc's sallocx must not see one. */
    if (__builtin_expect(((uintptr_t)p & 4095) == 0, 0) &&
        atomic_load_explicit(&gas_al_big_used, memory_order_acquire) != 0 &&
        gas_al_big_free(p))
        return;
    struct gas_al_thr *t = gas_al_thr_current();
    size_t u = 0;
    if (__builtin_expect(t != NULL, 1)) {
        u = sallocx(p, 0);
        if (u <= GAS_AL_CACHE_MAX) {
            unsigned c = gas_al_class_of_usable[u / 8];
            if (c != 0xff && t->bins[c].n < gas_al_class_cap[c]) {
                struct gas_al_bin *b = &t->bins[c];
                gas_al_count(t, -(int64_t)u);
                b->stack[b->n++] = p;
                return;
            }
        }
    }
    gas_al_arena_free_slow(p, u);
}

#endif
