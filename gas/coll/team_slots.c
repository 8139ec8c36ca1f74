/*
 * team_slots.c - where team structs live, so that a team handle is never
 * reused and a stale or made-up one is told from a live one without
 * reading freed memory.
 *
 * A gas_team_t is the address of its struct.  The structs are carved, one
 * TEAM_SLOT each, by a bump allocator from one range of virtual memory
 * reserved at the first team (PROT_NONE, 64 GiB or what the OS grants) and
 * made readable GROW bytes at a time ahead of the bump.  An address is
 * handed out once per process, so a destroyed team's handle can never name
 * a later team.  A slot's first word is the team's magic: TEAM_BORN from
 * gas_co_team_new until the team goes live, GAS_CO_TEAM_MAGIC while it is
 * live, 0 once it is destroyed.  A page whose slots are all handed out and
 * all destroyed is given back to the kernel (MADV_DONTNEED) but stays
 * mapped: it reads as zeros, magic 0, "not live".  So memory follows the
 * live teams, the range only moves forward (a 1 KiB slot per team ever
 * made: 64 GiB is about 67 million splits), and a check needs only the
 * address (in the range, below the bump, on a slot boundary) before one
 * read of the magic.
 */
#include "coll.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TEAM_SLOT 1024u                    /* bytes per team struct */
#define TEAM_RANGE (64ull << 30)           /* reserved at most */
#define TEAM_RANGE_MIN (16ull << 20)       /* reserved at least (halving on failure) */
#define GROW (64u << 10)                   /* made writable at a time */
#define TEAM_BORN 0x7465616d626f726eull    /* handed out, not live yet */

_Static_assert(sizeof(struct gas_team) <= TEAM_SLOT, "a team struct outgrew its slot");
_Static_assert(offsetof(struct gas_team, magic) == 0, "the magic must be a slot's first word");

static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t range_lo, range_hi;   /* the reservation; set once, under slots_lock */
static uintptr_t writable;             /* [range_lo, writable) is readable and writable */
static uintptr_t bump;                 /* next slot; read unlocked by gas_co_team_live */
static size_t page;

/* Reserve the range (slots_lock held); 0, or -1 with errno. */
static int reserve(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    if (page < TEAM_SLOT || page % TEAM_SLOT)
        page = TEAM_SLOT;   /* no page is given back then; correct all the same */
    for (uint64_t len = TEAM_RANGE; len >= TEAM_RANGE_MIN; len /= 2) {
        void *m = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m != MAP_FAILED) {
            range_lo = writable = (uintptr_t)m;
            range_hi = range_lo + len;
            __atomic_store_n(&bump, range_lo, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return -1;
}

struct gas_team *gas_co_team_new(const char **why_p)
{
    struct gas_team *t = NULL;
    pthread_mutex_lock(&slots_lock);
    if (range_lo == 0 && reserve() != 0) {
        *why_p = "cannot reserve address space for team handles (mmap failed)";
        goto out;
    }
    uintptr_t at = bump;
    if (at + TEAM_SLOT > range_hi) {
        *why_p = "this process has made as many teams as its team-handle range holds "
                 "(a destroyed team's handle is never reused)";
        goto out;
    }
    if (at + TEAM_SLOT > writable) {
        size_t len = range_hi - writable < GROW ? range_hi - writable : GROW;
        if (mprotect((void *)writable, len, PROT_READ | PROT_WRITE) != 0) {
            *why_p = "cannot map memory for a team handle (mprotect failed)";
            goto out;
        }
        writable += len;
    }
    t = (struct gas_team *)at;
    memset(t, 0, TEAM_SLOT);   /* never used before: zeros already, but say so */
    t->magic = TEAM_BORN;
    /* The slot is initialised before the bump lets a check read it. */
    __atomic_store_n(&bump, at + TEAM_SLOT, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&slots_lock);
    return t;
}

/* Every slot of the page at p handed out and none born or live (slots_lock held). */
static int page_dead(uintptr_t p)
{
    if (p + page > bump)
        return 0;
    for (uintptr_t s = p; s < p + page; s += TEAM_SLOT)
        if (__atomic_load_n((uint64_t *)s, __ATOMIC_RELAXED) != 0)
            return 0;
    return 1;
}

void gas_co_team_dispose(struct gas_team *t)
{
    pthread_mutex_lock(&slots_lock);
    __atomic_store_n(&t->magic, 0, __ATOMIC_RELEASE);
    uintptr_t p = (uintptr_t)t & ~((uintptr_t)page - 1);
    if (page_dead(p))
        madvise((void *)p, page, MADV_DONTNEED);   /* reads as zeros from now on */
    pthread_mutex_unlock(&slots_lock);
}

int gas_co_team_live(gas_team_t t)
{
    uintptr_t a = (uintptr_t)t;
    uintptr_t top = __atomic_load_n(&bump, __ATOMIC_ACQUIRE);   /* range_lo is set before it */
    if (top == 0 || a < range_lo || a >= top || (a - range_lo) % TEAM_SLOT != 0)
        return 0;   /* not a team handle of this process: never read */
    return __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == GAS_CO_TEAM_MAGIC;
}

void gas_co_team_went_live(struct gas_team *t)
{
    __atomic_store_n(&t->magic, GAS_CO_TEAM_MAGIC, __ATOMIC_RELEASE);
}
