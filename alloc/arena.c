/*
 * arena.c - jemalloc arenas inside the segment (see arena.h).
 *
 * In front of jemalloc sits a small per-thread cache of freed small blocks
 * (up to GAS_AL_CACHE_MAX bytes), one stack of pointers per size class: mallocx and
 * dallocx with an explicit tcache take the generic, slower paths of
 * jemalloc, about three times the cost of malloc/free, and the cache brings
 * gas_alloc/gas_dealloc back near malloc/free (see gas-bench-mem).  The cache
 * keeps no data inside the blocks (a remote rank may still write into a
 * freed block), is bounded per class, and is emptied into jemalloc when its
 * thread exits.
 *
 * arena_used (gas_al_arena_allocated) counts live blocks exactly, at their
 * usable size: each thread adds what it hands out and subtracts what it
 * frees, in its own record (two plain moves on a line the fast path touches
 * anyway); a reader sums the records of all threads, those that exited, and
 * the big blocks.  jemalloc's own statistics would count every block that
 * sits in a cache (ours or a tcache's refill) as allocated.
 *
 * Entry and close: gas_alloc, gas_dealloc and gas_memory_stats may run in
 * other threads while gas_finalize stops the arenas and unmaps the segment.
 * Each brackets its work with gas_al_enter/gas_al_leave (arena_fast.h): a
 * flag in the thread's own record, then a load of gas_al_gate.  Stop clears
 * its open bit, runs membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (every
 * thread of the process passes a full fence: either stop sees a thread's
 * flag or that thread sees the bit cleared; the userspace-RCU pairing,
 * without a fence on the fast path) and waits until it has seen every
 * registered thread outside once; only then are the arenas destroyed.  A
 * thread's record outlives the arenas (its exit only unlinks and frees it).
 */
#include "arena_fast.h"

#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "big.h"
#include "held.h"
#include "live.h"
#include "runtime/gate.h"
#include "runtime/topo.h"

#define GROW_LIMIT (8u << 20)  /* largest extent jemalloc asks for ahead of need */
#define TC_NONE UINT32_MAX     /* tcache creation failed: go without */
#define CACHE_BYTES (16u << 10)/* per class, at most this much (and 4..64 blocks) */
#define TLS_IE __attribute__((tls_model("initial-exec")))
#define AUTO_PER_NODE_MAX 8    /* GAS_ARENAS=0: at most this many arenas per node */

void (*gas_al_arena_trace)(const struct gas_al_hook_event *ev);

struct arena {
    unsigned ind;            /* jemalloc's index (valid once ready) */
    int node;                /* kernel node its extents are bound to, or -1 */
    _Atomic int ready;       /* created; cleared by stop */
};

static struct gas_al_arena_cfg cfg;
static struct arena arenas[GAS_AL_MAX_ARENAS];
static int nslots;                    /* groups x arenas per group */
static _Atomic int narenas;           /* slots whose arena exists */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int creating = -1; /* slot this thread is creating: index not known yet */
static int slot_threads[GAS_AL_MAX_ARENAS]; /* threads using each slot (under create_lock) */

/* Big blocks (big.h): their free ranges and live blocks, under big_lock. */
static pthread_mutex_t big_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gas_al_big big;
static struct gas_al_held held;         /* what each arena holds (held.h), under big_lock */
_Atomic int gas_al_big_used;          /* a big block was made: gas_al_arena_free asks big.c */

/* Why this thread's last allocation failed. */
static _Thread_local int fail_why;
static _Thread_local char fail_text[400];

/* ---- per-thread state ---------------------------------------------------- */

/* Size classes of the cache: jemalloc's small classes up to GAS_AL_CACHE_MAX. */
uint8_t gas_al_class_of_size[GAS_AL_CACHE_MAX + 1];
uint8_t gas_al_class_of_usable[GAS_AL_CACHE_MAX / 8 + 1];
uint16_t gas_al_class_cap[GAS_AL_MAX_CLASSES];
static uint16_t class_size[GAS_AL_MAX_CLASSES];  /* usable bytes */
static int nclasses;

_Atomic int gas_al_gate;
static _Atomic int64_t used_gone;     /* usable bytes counted by records since gone, and
                                       * frees by threads that have no record */

_Atomic uint64_t gas_al_gen;
static struct gas_al_thr *threads;
static pthread_mutex_t thr_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t thr_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
_Thread_local struct gas_al_thr *gas_al_self TLS_IE;

static int tcache_flags(struct gas_al_thr *t, int s);
static int arena_ctl(unsigned ind, const char *name, void *val, size_t len);

/* Give the cached blocks back to jemalloc (drop them when the arenas are gone). */
static void flush_bins(struct gas_al_thr *t, int live)
{
    for (int c = 0; c < nclasses; c++) {
        struct gas_al_bin *b = &t->bins[c];
        while (live && b->n > 0)
            dallocx(b->stack[--b->n], tcache_flags(t, t->slot));
        b->n = 0;
    }
}

static void destroy_tcaches(struct gas_al_thr *t)
{
    for (int i = 0; i < GAS_AL_MAX_ARENAS; i++) {
        if (t->tc[i] != 0 && t->tc[i] != TC_NONE) {
            unsigned tc = t->tc[i] - 1;
            mallctl("tcache.destroy", NULL, NULL, &tc, sizeof tc);
        }
        t->tc[i] = 0;
    }
}

static void thr_exit(void *arg)
{
    struct gas_al_thr *t = arg;
    pthread_mutex_lock(&thr_lock);
    if (t->gen == atomic_load(&gas_al_gen)) {
        flush_bins(t, 1);
        destroy_tcaches(t);
        pthread_mutex_lock(&create_lock);
        slot_threads[t->slot]--;
        pthread_mutex_unlock(&create_lock);
    }
    atomic_fetch_add(&used_gone, atomic_load_explicit(&t->used, memory_order_relaxed));
    for (struct gas_al_thr **pp = &threads; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    pthread_mutex_unlock(&thr_lock);
    if (gas_al_self == t)
        gas_al_self = NULL;
    free(t->bins[0].stack);
    free(t);
}

static void make_key(void)
{
    pthread_key_create(&thr_key, thr_exit);
}

static int create_arena(int s);

/*
 * The slot a thread allocates from: in its node's group (the node of the CPU
 * it runs on now), the slot with the fewest threads, the lowest on a tie;
 * that arena is made now if it does not exist yet.  If making it fails the
 * thread shares the group's first arena (made at start).  Counted in
 * slot_threads until the thread exits or the arenas are recreated.
 */
static int choose_slot(void)
{
    int per = cfg.per_node, groups = nslots / per;
    int cpu = sched_getcpu();
    int node = gas_rt_topo()->nodes[gas_rt_topo_index_of_cpu(cpu)].id;
    int g = 0;
    for (int i = 0; i < groups; i++)
        if (arenas[i * per].node == node)
            g = i;
    pthread_mutex_lock(&create_lock);
    int s = g * per;
    for (int i = g * per + 1; i < (g + 1) * per; i++)
        if (slot_threads[i] < slot_threads[s])
            s = i;
    if (!atomic_load_explicit(&arenas[s].ready, memory_order_relaxed) && create_arena(s) != 0)
        s = g * per;
    slot_threads[s]++;
    pthread_mutex_unlock(&create_lock);
    return s;
}

/*
 * This thread's record, made and linked into `threads` now if it has none
 * (NULL: no memory).  Records live until their thread exits, across
 * gas_finalize; thr_setup makes one current for the arenas of now.
 */
__attribute__((noinline)) struct gas_al_thr *gas_al_thr_register(void)
{
    struct gas_al_thr *t = gas_al_self;
    if (t != NULL)
        return t;
    pthread_once(&key_once, make_key);
    size_t slots = 0;
    for (int c = 0; c < GAS_AL_MAX_CLASSES; c++)
        slots += 64;   /* the largest gas_al_class_cap */
    t = calloc(1, sizeof *t);
    void **stacks = calloc(slots, sizeof *stacks);
    if (t == NULL || stacks == NULL) {
        free(t);
        free(stacks);
        return NULL;
    }
    for (int c = 0; c < GAS_AL_MAX_CLASSES; c++)
        t->bins[c].stack = stacks + (size_t)c * 64;
    pthread_mutex_lock(&thr_lock);
    t->next = threads;
    threads = t;
    pthread_mutex_unlock(&thr_lock);
    pthread_setspecific(thr_key, t);
    gas_al_self = t;
    return t;
}

/* First use by this thread, or first since the arenas were recreated. */
static __attribute__((noinline)) struct gas_al_thr *thr_setup(void)
{
    uint64_t now = atomic_load_explicit(&gas_al_gen, memory_order_acquire);
    /* Stopped: the arenas are gone (a late internal free; gas_al_enter refuses the API's). */
    if (!gas_al_open())
        return NULL;
    struct gas_al_thr *t = gas_al_thr_register();
    if (t == NULL)
        return NULL;
    memset(t->tc, 0, sizeof t->tc);
    flush_bins(t, 0);
    for (int c = 0; c < nclasses; c++)
        t->bins[c].size = class_size[c];
    t->slot = choose_slot();
    t->gen = now;
    return t;
}

static inline struct gas_al_thr *thr_get(void)
{
    struct gas_al_thr *t = gas_al_thr_current();
    return t ? t : thr_setup();
}

/* This thread's tcache for arena slot s (MALLOCX flags). */
static int tcache_flags(struct gas_al_thr *t, int s)
{
    if (__builtin_expect(t->tc[s] == 0, 0)) {
        unsigned tc;
        size_t sz = sizeof tc;
        t->tc[s] = mallctl("tcache.create", &tc, &sz, NULL, 0) == 0 ? tc + 1 : TC_NONE;
    }
    return t->tc[s] == TC_NONE ? MALLOCX_TCACHE_NONE : MALLOCX_TCACHE(t->tc[s] - 1);
}

/* ---- extent hooks -------------------------------------------------------- */

static int slot_of_index(unsigned ind)
{
    if (creating >= 0)
        return creating;
    for (int i = 0; i < nslots; i++)
        if (atomic_load_explicit(&arenas[i].ready, memory_order_acquire) && arenas[i].ind == ind)
            return i;
    return -1;
}

static void trace(enum gas_al_hook hook, void *addr, size_t size, void *addr_b, size_t size_b,
                  unsigned ind, int refused)
{
    void (*fn)(const struct gas_al_hook_event *) = gas_al_arena_trace;
    if (fn) {
        struct gas_al_hook_event ev = {hook, addr, size, addr_b, size_b, ind, refused};
        fn(&ev);
    }
}

/* big_take's test for an extent of arena *arg: no other arena holds the page above its end. */
static int top_ok(uint64_t end, void *arg)
{
    int holder = gas_al_held_arena(&held, end);
    return holder < 0 || holder == *(const int *)arg;
}

/*
 * size bytes (a multiple of the page) aligned to align, bound to `node` (or
 * -1), zeroed if zero: from the free ranges of big blocks, else carved from
 * the segment's free middle (and backed when GAS_PREFAULT=y).  An extent for
 * jemalloc arena `ind` (-1: a big block) never ends right under memory that
 * another arena holds (held.h says why).  NULL with fail_why set when
 * neither has room or backing fails.
 */
/*
 * Neither the free ranges nor the middle alone hold size bytes aligned to
 * align, but the lowest free range starts at the floor (blocks freed at the
 * bottom of the arenas' space): carve the rest from the middle just below
 * it, so that the two merge into one range that does.  0 when that range is
 * now among the free ranges, -1 when it cannot be (fail_why set).
 */
static int grow_lowest_free(size_t size, size_t align)
{
    pthread_mutex_lock(&big_lock);
    struct gas_al_range low = big.nfree > 0 ? big.free[0] : (struct gas_al_range){0, 0};
    pthread_mutex_unlock(&big_lock);
    uint64_t floor = 0, off = 0, prev = 0, end = low.off + low.len;
    gas_al_space_get(cfg.space, NULL, &floor);
    fail_why = GAS_AL_ARENA_NOSPACE;
    if (low.len == 0 || low.off != floor || low.len >= size || end < size)
        return -1;
    uint64_t start = (end - size) & ~((uint64_t)align - 1);
    if (gas_al_space_take(cfg.space, low.off - start, align, &off, &prev) != 0)
        return -1;
    if (cfg.prefault &&
        gas_al_segment_back(cfg.seg, cfg.limits, off, prev - off, fail_text, sizeof fail_text) != 0) {
        gas_al_space_untake(cfg.space, off, prev);
        fail_why = GAS_AL_ARENA_NOBACKING;
        return -1;
    }
    /* Taken below whatever the floor is now (another thread may have moved
     * it): the range is the arenas' either way, and waits in the free ranges. */
    pthread_mutex_lock(&big_lock);
    int rc = gas_al_big_give(&big, off, prev - off);
    pthread_mutex_unlock(&big_lock);
    if (rc != 0)
        fail_why = GAS_AL_ARENA_NOMEM;
    return rc;
}

static void *take_extent(size_t size, size_t align, int node, int zero, int ind)
{
    uint64_t off = 0, prev = 0;
    pthread_mutex_lock(&big_lock);
    int reused = gas_al_big_take(&big, size, align, ind >= 0 ? top_ok : NULL, &ind, &off) == 0;
    pthread_mutex_unlock(&big_lock);
    if (!reused && gas_al_space_take(cfg.space, size, align, &off, &prev) != 0) {
        if (grow_lowest_free(size, align) != 0)
            return NULL;
        pthread_mutex_lock(&big_lock);
        reused = gas_al_big_take(&big, size, align, ind >= 0 ? top_ok : NULL, &ind, &off) == 0;
        pthread_mutex_unlock(&big_lock);
        if (!reused) {
            fail_why = GAS_AL_ARENA_NOSPACE;
            return NULL;
        }
    }
    char *addr = cfg.seg->base + off;
    if (node >= 0)
        gas_al_place_bind_node(addr, size, node);
    if (zero && !gas_al_segment_is_hole(cfg.seg, off, size))
        memset(addr, 0, size);
    if (!reused && cfg.prefault &&
        gas_al_segment_back(cfg.seg, cfg.limits, off, size, fail_text, sizeof fail_text) != 0) {
        gas_al_space_untake(cfg.space, off, prev);
        fail_why = GAS_AL_ARENA_NOBACKING;
        return NULL;
    }
    return addr;
}

static void *h_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t align, bool *zero,
                     bool *commit, unsigned ind)
{
    void *r = NULL;
    /* Extending in place (new_addr) is not possible: the space below belongs to someone else. */
    if (new_addr == NULL && size != 0) {
        int slot = slot_of_index(ind);
        r = take_extent(size, align < 4096 ? 4096 : align, slot >= 0 ? arenas[slot].node : -1,
                        *zero, (int)ind);
        if (r != NULL) {
            uint64_t off = (uint64_t)((char *)r - cfg.seg->base);
            pthread_mutex_lock(&big_lock);
            if (gas_al_held_add(&held, off, size, (int)ind) != 0) {
                (void)gas_al_big_give(&big, off, size);   /* unrecorded, it could not be kept apart */
                r = NULL;
            }
            pthread_mutex_unlock(&big_lock);
        }
        if (r != NULL)
            *commit = true;
    }
    trace(GAS_AL_HOOK_ALLOC, r, size, NULL, align, ind, r == NULL);
    return r;
}

/*
 * Accepted: the extent joins the free ranges of big blocks (big.h), where it
 * merges with its neighbours and serves big blocks and new extents of any
 * arena.  Its pages stay mapped and backed (a NIC may have them registered).
 * jemalloc only gives extents back when purged, which with decay off means
 * purge_arenas below.
 */
static bool h_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
    const char *lo = cfg.seg->base;
    int ok = (const char *)addr >= lo && size <= cfg.seg->size &&
             (uint64_t)((const char *)addr - lo) <= cfg.seg->size - size;
    if (ok) {
        pthread_mutex_lock(&big_lock);
        ok = gas_al_big_give(&big, (uint64_t)((char *)addr - lo), size) == 0;
        if (ok)
            gas_al_held_remove(&held, (uint64_t)((char *)addr - lo), size);
        pthread_mutex_unlock(&big_lock);
    }
    trace(GAS_AL_HOOK_DALLOC, addr, size, NULL, 0, ind, !ok);
    return !ok;
}

static void h_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed, unsigned ind)
{
    trace(GAS_AL_HOOK_DESTROY, addr, size, NULL, 0, ind, 0);
}

/* The hooks on a range of an extent: trace, then answer (true: "not done"). */
static bool range_hook(enum gas_al_hook hook, void *addr, size_t off, size_t len, unsigned ind,
                       bool refuse)
{
    trace(hook, (char *)addr + off, len, NULL, 0, ind, refuse);
    return refuse;
}

/* Segment memory is always committed. */
static bool h_commit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                     unsigned ind)
{
    return range_hook(GAS_AL_HOOK_COMMIT, addr, off, len, ind, false);
}

/* Refused, like both purges: pages stay as they are (a NIC may have them registered). */
static bool h_decommit(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                       unsigned ind)
{
    return range_hook(GAS_AL_HOOK_DECOMMIT, addr, off, len, ind, true);
}

static bool h_purge_lazy(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                         unsigned ind)
{
    return range_hook(GAS_AL_HOOK_PURGE_LAZY, addr, off, len, ind, true);
}

static bool h_purge_forced(extent_hooks_t *h, void *addr, size_t size, size_t off, size_t len,
                           unsigned ind)
{
    return range_hook(GAS_AL_HOOK_PURGE_FORCED, addr, off, len, ind, true);
}

static bool h_split(extent_hooks_t *h, void *addr, size_t size, size_t size_a, size_t size_b,
                    bool committed, unsigned ind)
{
    trace(GAS_AL_HOOK_SPLIT, addr, size_a, (char *)addr + size_a, size_b, ind, 0);
    return false;
}

static bool h_merge(extent_hooks_t *h, void *addr_a, size_t size_a, void *addr_b, size_t size_b,
                    bool committed, unsigned ind)
{
    /* Only neighbours inside the segment (always so for extents we handed out). */
    const char *lo = cfg.seg->base, *hi = lo + cfg.seg->size;
    int ok = (char *)addr_a + size_a == (char *)addr_b && (char *)addr_a >= lo &&
             (char *)addr_b + size_b <= hi;
    trace(GAS_AL_HOOK_MERGE, addr_a, size_a, addr_b, size_b, ind, !ok);
    return !ok;
}

static extent_hooks_t hooks = {
    .alloc = h_alloc,
    .dalloc = h_dalloc,
    .destroy = h_destroy,
    .commit = h_commit,
    .decommit = h_decommit,
    .purge_lazy = h_purge_lazy,
    .purge_forced = h_purge_forced,
    .split = h_split,
    .merge = h_merge,
};

/* ---- start and stop ------------------------------------------------------ */

static int arena_ctl(unsigned ind, const char *name, void *val, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "arena.%u.%s", ind, name);
    return mallctl(path, NULL, NULL, val, len);
}

/* The cache's size classes, from jemalloc's own (nallocx). */
static void build_classes(void)
{
    nclasses = 0;
    memset(gas_al_class_of_usable, 0xff, sizeof gas_al_class_of_usable);
    size_t last = 0;
    for (size_t n = 1; n <= GAS_AL_CACHE_MAX; n++) {
        size_t u = nallocx(n, 0);
        if (u == 0 || u > GAS_AL_CACHE_MAX || nclasses == GAS_AL_MAX_CLASSES) {
            gas_al_class_of_size[n] = 0xff;
            continue;
        }
        if (u != last) {
            uint32_t cap = CACHE_BYTES / (uint32_t)u;
            gas_al_class_cap[nclasses] = (uint16_t)(cap < 4 ? 4 : cap > 64 ? 64 : cap);
            class_size[nclasses] = (uint16_t)u;
            gas_al_class_of_usable[u / 8] = (uint8_t)nclasses++;
            last = u;
        }
        gas_al_class_of_size[n] = (uint8_t)(nclasses - 1);
    }
}

/*
 * Make slot s's arena (under create_lock, or before any thread allocates):
 * 0, or the reason (enum gas_al_arena_fail, or -1 for anything else).
 */
static int create_arena(int s)
{
    int groups = cfg.place->ngroups > 0 ? cfg.place->ngroups : 1;
    int g = s / cfg.per_node;
    arenas[s].node = cfg.place->bind_extents && g < groups ? cfg.place->group_node[g] : -1;
    extent_hooks_t *hp = &hooks;
    unsigned ind;
    size_t sz = sizeof ind;
    creating = s;
    fail_why = 0;
    int rc = mallctl("arenas.create", &ind, &sz, &hp, sizeof hp);
    creating = -1;
    if (rc != 0)
        return fail_why ? fail_why : -1;
    ssize_t never = -1;
    size_t grow = GROW_LIMIT;
    arena_ctl(ind, "dirty_decay_ms", &never, sizeof never);
    arena_ctl(ind, "muzzy_decay_ms", &never, sizeof never);
    arena_ctl(ind, "retain_grow_limit", &grow, sizeof grow);
    arenas[s].ind = ind;
    atomic_store_explicit(&arenas[s].ready, 1, memory_order_release);
    atomic_fetch_add(&narenas, 1);
    return 0;
}

/* Arenas per group for GAS_ARENAS=0: the most CPUs the rank may run on in one node (capped). */
static int auto_per_node(void)
{
    cpu_set_t set;
    int count[GAS_RT_TOPO_MAX_NODES] = {0}, most = 1;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &set))
            continue;
        int ni = gas_rt_topo_index_of_cpu(cpu);
        if (ni < 0 || ni >= GAS_RT_TOPO_MAX_NODES)
            ni = 0;
        if (++count[ni] > most)
            most = count[ni];
    }
    return most < AUTO_PER_NODE_MAX ? most : AUTO_PER_NODE_MAX;
}

static pthread_once_t mb_once = PTHREAD_ONCE_INIT;

/*
 * Once per process: the expedited private membarrier that close_arenas
 * relies on (runtime/gate.c); where it is refused, gas_al_enter fences.
 */
static void membarrier_setup(void)
{
    if (!gas_rt_membarrier_setup())
        atomic_fetch_or(&gas_al_gate, GAS_AL_GATE_FENCE);
}

/*
 * gas_al_enter's rare cases: this thread has no record yet (t NULL: made
 * here), the arenas are closed, or there is no membarrier and the ordering
 * takes a fence here.
 */
struct gas_al_thr *gas_al_enter_slow(struct gas_al_thr *t)
{
    if (t == NULL) {   /* no record is made for a call that is refused anyway */
        if (!gas_al_open() || (t = gas_al_thr_register()) == NULL)
            return NULL;
        atomic_store_explicit(&t->inside, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    }
    int gate = atomic_load_explicit(&gas_al_gate, memory_order_relaxed);
    if (gate & GAS_AL_GATE_FENCE) {
        atomic_thread_fence(memory_order_seq_cst);
        gate = atomic_load_explicit(&gas_al_gate, memory_order_relaxed);
    }
    if (gate & GAS_AL_GATE_OPEN)
        return t;
    atomic_store_explicit(&t->inside, 0, memory_order_release);
    return NULL;
}

/*
 * Close the arenas to gas_al_enter and wait until every call inside has
 * left: afterwards no thread touches the arenas, the live map or the
 * segment through gas_alloc/gas_dealloc/gas_memory_stats.  Each thread needs
 * to be seen outside once (it cannot come back in); the scan does not hold
 * thr_lock while it waits, because a thread inside may need it.
 */
static void close_arenas(void)
{
    int gate = atomic_fetch_and(&gas_al_gate, ~GAS_AL_GATE_OPEN);
    gas_rt_membarrier(gate & GAS_AL_GATE_FENCE);
    pthread_mutex_lock(&thr_lock);
    for (struct gas_al_thr *t = threads; t; t = t->next)
        t->seen_out = 0;
    pthread_mutex_unlock(&thr_lock);
    for (;;) {
        int waiting = 0;
        pthread_mutex_lock(&thr_lock);
        for (struct gas_al_thr *t = threads; t; t = t->next) {
            if (!t->seen_out && atomic_load_explicit(&t->inside, memory_order_acquire))
                waiting = 1;
            else
                t->seen_out = 1;
        }
        pthread_mutex_unlock(&thr_lock);
        if (!waiting)
            return;
        sched_yield();
    }
}

gas_status_t gas_al_arenas_start(const struct gas_al_arena_cfg *c)
{
    pthread_once(&key_once, make_key);
    pthread_once(&mb_once, membarrier_setup);
    build_classes();
    cfg = *c;
    int groups = c->place->ngroups > 0 ? c->place->ngroups : 1;
    if (cfg.per_node < 1)
        cfg.per_node = auto_per_node();
    if (groups * cfg.per_node > GAS_AL_MAX_ARENAS)
        cfg.per_node = GAS_AL_MAX_ARENAS / groups > 0 ? GAS_AL_MAX_ARENAS / groups : 1;
    nslots = groups * cfg.per_node;
    if (nslots > GAS_AL_MAX_ARENAS)
        nslots = GAS_AL_MAX_ARENAS;
    if (gas_al_live_start(c->seg->size) != GAS_OK)
        return GAS_ERR_NOMEM;
    atomic_fetch_add(&gas_al_gen, 1);
    atomic_store(&narenas, 0);
    for (int s = 0; s < nslots; s++) {
        atomic_store(&arenas[s].ready, 0);
        slot_threads[s] = 0;
    }
    /* Each group's first arena now, so a segment too small fails gas_init; the rest on first use. */
    for (int s = 0; s < nslots; s += cfg.per_node) {
        int why = create_arena(s);
        if (why != 0) {
            gas_al_arenas_stop();
            return why == GAS_AL_ARENA_NOSPACE ? GAS_ERR_NOSPACE
                 : why == GAS_AL_ARENA_NOBACKING ? GAS_ERR_NOMEM : GAS_ERR_INTERNAL;
        }
    }
    atomic_fetch_or(&gas_al_gate, GAS_AL_GATE_OPEN);
    return GAS_OK;
}

void gas_al_arenas_stop(void)
{
    close_arenas();
    pthread_mutex_lock(&thr_lock);
    uint64_t now = atomic_load(&gas_al_gen);
    for (struct gas_al_thr *t = threads; t; t = t->next) {
        /* The arenas are destroyed with everything in them: drop the cached blocks. */
        flush_bins(t, 0);
        if (t->gen == now)
            destroy_tcaches(t);
        t->gen = 0;
        atomic_store_explicit(&t->used, 0, memory_order_relaxed);
    }
    atomic_store(&used_gone, 0);
    pthread_mutex_unlock(&thr_lock);
    for (int s = 0; s < nslots; s++) {
        if (atomic_load(&arenas[s].ready))
            arena_ctl(arenas[s].ind, "destroy", NULL, 0);
        atomic_store(&arenas[s].ready, 0);
    }
    atomic_store(&narenas, 0);
    pthread_mutex_lock(&big_lock);
    gas_al_big_clear(&big);
    gas_al_held_clear(&held);
    atomic_store(&gas_al_big_used, 0);
    pthread_mutex_unlock(&big_lock);
    gas_al_live_stop();
}

/* ---- allocation ---------------------------------------------------------- */

const char *gas_al_arena_failure(void)
{
    return fail_text;
}

/*
 * The segment is full, but the arenas may hold free extents that are of no
 * use where they are: jemalloc keeps freed ones dirty (decay is off), does
 * not carve a block from one more than 64 times its size, and never merges
 * extents that it got from separate hook calls.  A purge hands the dirty
 * ones to h_dalloc, which merges them into the free ranges.
 */
static void purge_arenas(void)
{
    for (int s = 0; s < nslots; s++)
        if (atomic_load_explicit(&arenas[s].ready, memory_order_acquire))
            arena_ctl(arenas[s].ind, "purge", NULL, 0);
}

/* A big block (GAS_AL_BIG_MIN bytes or more) for a thread of `slot`, or NULL with fail_why set. */
static void *big_alloc(size_t nbytes, int slot)
{
    uint64_t len = ((uint64_t)nbytes + 4095) & ~(uint64_t)4095;
    char *p = take_extent(len, 4096, arenas[slot].node, 0, -1);
    if (p == NULL)
        return NULL;
    uint64_t off = (uint64_t)(p - cfg.seg->base);
    pthread_mutex_lock(&big_lock);
    int rc = gas_al_big_track(&big, off, len);
    if (rc != 0)
        (void)gas_al_big_give(&big, off, len);
    if (rc == 0)
        atomic_store_explicit(&gas_al_big_used, 1, memory_order_release);
    pthread_mutex_unlock(&big_lock);
    if (rc != 0) {
        fail_why = GAS_AL_ARENA_NOMEM;
        return NULL;
    }
    return p;
}

int gas_al_big_free(void *p)
{
    uint64_t off = (uint64_t)((char *)p - cfg.seg->base), len = 0;
    pthread_mutex_lock(&big_lock);
    int found = gas_al_big_untrack(&big, off, &len) == 0;
    if (found)
        (void)gas_al_big_give(&big, off, len);
    pthread_mutex_unlock(&big_lock);
    return found;
}

/* Everything but a hit in the thread's cache (arena_fast.h). */
void *gas_al_arena_alloc_slow(size_t nbytes, int *why_p)
{
    struct gas_al_thr *t = thr_get();
    if (__builtin_expect(t == NULL, 0)) {
        *why_p = GAS_AL_ARENA_NOMEM;
        return NULL;
    }
    /* The thread's cache has nothing of this class: the fast path found its bin empty,
     * or thr_get just set the thread up again with empty bins. */
    fail_why = 0;
    int purged = 0;   /* once per allocation: a second purge finds nothing new */
    if (nbytes >= GAS_AL_BIG_MIN) {
        void *p = big_alloc(nbytes, t->slot);
        if (p == NULL && fail_why == GAS_AL_ARENA_NOSPACE) {
            purge_arenas();
            purged = 1;
            fail_why = 0;
            p = big_alloc(nbytes, t->slot);
        }
        if (p != NULL)
            return p;
        if (fail_why != GAS_AL_ARENA_NOSPACE) {
            *why_p = fail_why ? fail_why : GAS_AL_ARENA_NOMEM;
            return NULL;
        }
        fail_why = 0;   /* the segment is full: jemalloc may still hold a free extent that fits */
    }
    int flags = MALLOCX_ARENA(arenas[t->slot].ind) | tcache_flags(t, t->slot);
    void *p = mallocx(nbytes, flags);
    if (__builtin_expect(p == NULL, 0) && fail_why == GAS_AL_ARENA_NOSPACE && !purged) {
        purge_arenas();
        fail_why = 0;
        p = mallocx(nbytes, flags);
    }
    if (__builtin_expect(p != NULL, 1)) {
        gas_al_count(t, (int64_t)nallocx(nbytes, 0));   /* its usable size, as sallocx */
        return p;
    }
    *why_p = fail_why ? fail_why : GAS_AL_ARENA_NOMEM;
    return NULL;
}

/*
 * Everything but a block that fits the thread's cache (arena_fast.h);
 * usable: its size when the fast path looked it up already, else 0.
 */
void gas_al_arena_free_slow(void *p, size_t usable)
{
    struct gas_al_thr *t = thr_get();
    if (__builtin_expect(t == NULL, 0)) {
        /* Stopped: the block went with its arena.  Else no record (no memory): straight back. */
        if (!gas_al_open())
            return;
        atomic_fetch_sub(&used_gone, (int64_t)(usable ? usable : sallocx(p, 0)));
        dallocx(p, MALLOCX_TCACHE_NONE);
        return;
    }
    /*
     * The block may belong to another arena (another thread's node): it goes
     * through this thread's cache anyway.  jemalloc returns it to its own
     * arena when the tcache flushes it; until then this thread may reuse it.
     * Finding the owner (arenas.lookup) would take jemalloc's ctl mutex.
     */
    int s = t->slot;
    size_t u = usable ? usable : sallocx(p, 0);
    gas_al_count(t, -(int64_t)u);
    if (u <= GAS_AL_CACHE_MAX && gas_al_class_of_usable[u / 8] != 0xff) {
        int c = gas_al_class_of_usable[u / 8];
        struct gas_al_bin *b = &t->bins[c];
        if (b->n == gas_al_class_cap[c]) {
            /* Full: give the older half back to jemalloc. */
            uint32_t half = b->n / 2;
            for (uint32_t i = 0; i < half; i++)
                dallocx(b->stack[i], tcache_flags(t, s));
            memmove(b->stack, b->stack + half, (b->n - half) * sizeof *b->stack);
            b->n -= half;
        }
        b->stack[b->n++] = p;
        return;
    }
    dallocx(p, tcache_flags(t, s));
}

int gas_al_arena_count(void)
{
    return atomic_load(&narenas);
}

/*
 * Exact while no other thread allocates or frees: the big blocks, plus what
 * every thread's record and the records gone have counted (arena.c's top).
 * A thread's record may be negative (it freed blocks other threads made).
 */
uint64_t gas_al_arena_allocated(void)
{
    pthread_mutex_lock(&big_lock);
    uint64_t big_bytes = big.live_bytes;
    pthread_mutex_unlock(&big_lock);
    pthread_mutex_lock(&thr_lock);
    int64_t sum = atomic_load(&used_gone);
    for (struct gas_al_thr *t = threads; t; t = t->next)
        sum += atomic_load_explicit(&t->used, memory_order_relaxed);
    pthread_mutex_unlock(&thr_lock);
    return big_bytes + (sum > 0 ? (uint64_t)sum : 0);
}
