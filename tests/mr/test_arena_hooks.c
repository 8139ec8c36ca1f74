/*
 * test_arena_hooks - the jemalloc extent hooks behind gas_alloc, checked by
 * interception (like jemalloc's own extent-hook tests): every hook call is
 * recorded through gas_al_arena_trace, from the arenas' creation in gas_init
 * to their destruction in gas_finalize.
 *
 *  - alloc: called (at least for the arena's metadata and for growth); every
 *    extent it returns lies inside this rank's segment, above the symmetric
 *    heap, page-aligned, and no two extents overlap;
 *  - every block gas_alloc returns lies inside an extent the hook returned,
 *    except big ones (alloc/big.h), which lie in the segment, page-aligned,
 *    and overlap no extent;
 *  - split and merge only ever name extents inside the segment;
 *  - forcing jemalloc to purge (arena.<i>.purge, arena.<i>.decay) calls
 *    decommit/purge hooks, which refuse, and dalloc, which takes back only
 *    extents inside the segment; the segment's backed bytes do not drop: no
 *    page is given back to the system;
 *  - what was freed and purged is reused: allocating the same blocks again
 *    takes at most an eighth more space from the segment (jemalloc keeps
 *    the unused ends of its extents, and the free ranges fragment);
 *  - destroy is called at gas_finalize and only for extents inside the
 *    segment.
 * Run as a job of one rank, and with GAS_ARENAS=2 (two arenas).
 */
#include "check.h"
#include "alloc/arena.h"
#include "alloc/big.h"

#include <jemalloc/jemalloc.h>
#include <pthread.h>

enum { MAXEV = 100000 };

static struct gas_al_hook_event ev[MAXEV];
static int nev;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const names[] = {"alloc", "dalloc", "destroy", "commit", "decommit",
                                    "purge_lazy", "purge_forced", "split", "merge"};

static void record(const struct gas_al_hook_event *e)
{
    pthread_mutex_lock(&lock);
    if (nev < MAXEV)
        ev[nev++] = *e;
    pthread_mutex_unlock(&lock);
}

static int count(enum gas_al_hook h, int refused)
{
    int c = 0;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nev; i++)
        c += ev[i].hook == h && (refused < 0 || ev[i].refused == refused);
    pthread_mutex_unlock(&lock);
    return c;
}

static char *seg_lo, *seg_hi;

static int inside(const void *p, size_t len)
{
    const char *c = p;
    return c >= seg_lo && c <= seg_hi && len <= (size_t)(seg_hi - c);
}

/* Does [p, p + len) overlap an extent the alloc hook handed out? */
static int overlaps_extent(const void *p, size_t len)
{
    const char *c = p;
    for (int i = 0; i < nev; i++)
        if (ev[i].hook == GAS_AL_HOOK_ALLOC && ev[i].addr && c < (char *)ev[i].addr + ev[i].size &&
            (char *)ev[i].addr < c + len)
            return 1;
    return 0;
}

/*
 * Does [p, p + len) lie within an extent the alloc hook handed out?  A big
 * block instead lies in the segment, page-aligned, outside every extent.
 */
static int in_extent(const void *p, size_t len)
{
    const char *c = p;
    if (len >= GAS_AL_BIG_MIN)
        return inside(p, len) && ((uintptr_t)p & 4095) == 0 && !overlaps_extent(p, len);
    for (int i = 0; i < nev; i++)
        if (ev[i].hook == GAS_AL_HOOK_ALLOC && ev[i].addr && c >= (char *)ev[i].addr &&
            c + len <= (char *)ev[i].addr + ev[i].size)
            return 1;
    return 0;
}

static int cmp_ev(const void *a, const void *b)
{
    const struct gas_al_hook_event *x = a, *y = b;
    return ((char *)x->addr > (char *)y->addr) - ((char *)x->addr < (char *)y->addr);
}

static void check_extents(uint64_t heap_end)
{
    static struct gas_al_hook_event ext[MAXEV];
    int m = 0;
    for (int i = 0; i < nev; i++) {
        if (ev[i].hook != GAS_AL_HOOK_ALLOC || ev[i].addr == NULL)
            continue;
        CHECK(inside(ev[i].addr, ev[i].size), "extent %p+%zu outside the segment", ev[i].addr,
              ev[i].size);
        CHECK((uint64_t)((char *)ev[i].addr - seg_lo) >= heap_end,
              "extent at offset %td is below the heap's end %" PRIu64, (char *)ev[i].addr - seg_lo,
              heap_end);
        CHECK(((uintptr_t)ev[i].addr & 4095) == 0, "extent %p not page-aligned", ev[i].addr);
        ext[m++] = ev[i];
    }
    qsort(ext, (size_t)m, sizeof ext[0], cmp_ev);
    for (int i = 0; i + 1 < m; i++)
        CHECK((char *)ext[i].addr + ext[i].size <= (char *)ext[i + 1].addr,
              "extents %p and %p overlap", ext[i].addr, ext[i + 1].addr);
}

static void force_purge(void)
{
    for (int i = 0; i < nev; i++) {
        if (ev[i].hook != GAS_AL_HOOK_ALLOC)
            continue;
        char name[64];
        snprintf(name, sizeof name, "arena.%u.purge", ev[i].arena);
        mallctl(name, NULL, NULL, NULL, 0);
        snprintf(name, sizeof name, "arena.%u.decay", ev[i].arena);
        mallctl(name, NULL, NULL, NULL, 0);
    }
}

int main(void)
{
    gas_al_arena_trace = record;
    test_begin("arena_hooks");
    gas_mem_stats_t st;
    MUST(gas_memory_stats(&st));
    seg_lo = gas_ptr_local(gas_ptr_make(t_rank, 1)) - 1;
    seg_hi = seg_lo + st.reserved;
    CHECK(count(GAS_AL_HOOK_ALLOC, 0) >= st.arenas, "gas_init made %d alloc calls for %d arenas",
          count(GAS_AL_HOOK_ALLOC, 0), st.arenas);

    /* Small, medium and large blocks; every one inside an extent. */
    enum { NB = 3000 };
    static gas_ptr_t b[NB];
    static size_t sz[NB];
    test_rng_t r = rng_make(0, 9);
    for (int i = 0; i < NB; i++) {
        sz[i] = i % 100 == 99 ? (size_t)rng_range(&r, 1 << 20, 24 << 20)
              : i % 10 == 9 ? (size_t)rng_range(&r, 4096, 256 << 10) : (size_t)rng_range(&r, 1, 512);
        MUST(gas_alloc(sz[i], &b[i]));
        char *p = gas_ptr_local(b[i]);
        memset(p, 0xab, sz[i]);
        CHECK(in_extent(p, sz[i]), "block %d (%zu bytes at %p) is not inside any extent", i, sz[i], p);
    }
    MUST(gas_memory_stats(&st));
    check_extents(st.heap_end);
    uint64_t backed_full = st.backed;

    /* Free everything and make jemalloc try to give memory back. */
    for (int i = 0; i < NB; i++)
        CHECK_OK(gas_dealloc(b[i]));
    force_purge();
    MUST(gas_memory_stats(&st));
    CHECK(st.backed >= backed_full, "backed bytes dropped from %" PRIu64 " to %" PRIu64
          " after a purge: pages were given back", backed_full, st.backed);
    CHECK(count(GAS_AL_HOOK_DECOMMIT, 0) == 0 && count(GAS_AL_HOOK_PURGE_LAZY, 0) == 0 &&
              count(GAS_AL_HOOK_PURGE_FORCED, 0) == 0,
          "a decommit or purge hook accepted");
    CHECK(count(GAS_AL_HOOK_DALLOC, 0) > 0, "the purge gave no extent back to the free ranges");
    CHECK(count(GAS_AL_HOOK_SPLIT, -1) > 0, "no split hook call");
    for (int i = 0; i < nev; i++) {
        if (ev[i].hook == GAS_AL_HOOK_SPLIT || ev[i].hook == GAS_AL_HOOK_MERGE)
            CHECK(inside(ev[i].addr, ev[i].size) && inside(ev[i].addr_b, ev[i].size_b),
                  "%s names memory outside the segment", names[ev[i].hook]);
        if (ev[i].hook == GAS_AL_HOOK_DALLOC || (ev[i].hook >= GAS_AL_HOOK_DECOMMIT &&
                                                 ev[i].hook <= GAS_AL_HOOK_PURGE_FORCED))
            CHECK(inside(ev[i].addr, ev[i].size), "%s outside the segment", names[ev[i].hook]);
    }
    /* Freed memory is reused: allocating the same again takes little new space. */
    uint64_t held = st.arena_reserved;
    for (int i = 0; i < NB; i++) {
        MUST(gas_alloc(sz[i], &b[i]));
        /* Big blocks may now lie where extents were before the purge gave them back. */
        CHECK(sz[i] >= GAS_AL_BIG_MIN ? inside(gas_ptr_local(b[i]), sz[i])
                                      : in_extent(gas_ptr_local(b[i]), sz[i]),
              "block %d is not inside any extent", i);
    }
    MUST(gas_memory_stats(&st));
    CHECK(st.arena_reserved <= held + held / 8, "reallocating what was freed grew the arenas "
          "from %" PRIu64 " to %" PRIu64 " bytes", held, st.arena_reserved);
    test_note("arenas hold %" PRIu64 " bytes, then %" PRIu64 " after reallocating", held,
              st.arena_reserved);
    for (int i = 0; i < NB; i++)
        CHECK_OK(gas_dealloc(b[i]));

    int before = nev;
    if (t_rank == 0) {
        char line[512];
        int k = snprintf(line, sizeof line, "hook calls:");
        for (int h = 0; h < GAS_AL_HOOK_COUNT; h++)
            k += snprintf(line + k, sizeof line - (size_t)k, " %s %d", names[h], count((enum gas_al_hook)h, -1));
        test_note("%s", line);
    }
    int rc = test_end();
    /* gas_finalize destroyed the arenas: destroy hooks, all inside the (then mapped) segment. */
    int destroys = 0;
    for (int i = before; i < nev; i++) {
        if (ev[i].hook == GAS_AL_HOOK_DESTROY) {
            destroys++;
            if (!inside(ev[i].addr, ev[i].size)) {
                fprintf(stderr, "destroy hook for memory outside the segment\n");
                rc = 1;
            }
        }
        if (ev[i].hook == GAS_AL_HOOK_DALLOC && !ev[i].refused && !inside(ev[i].addr, ev[i].size)) {
            fprintf(stderr, "dalloc accepted memory outside the segment at gas_finalize\n");
            rc = 1;
        }
    }
    if (destroys == 0) {
        fprintf(stderr, "gas_finalize called no destroy hook\n");
        rc = 1;
    }
    printf("destroy hooks at gas_finalize: %d\n", destroys);
    gas_al_arena_trace = NULL;
    return rc;
}
