/*
 * test_alloc_full - gas_alloc/gas_dealloc from two threads with two arenas
 * (run with GAS_ARENAS=2) in a segment small enough that it fills up again
 * and again: every NOSPACE purges the arenas, whose extents go back to the
 * shared free ranges and come out again for the other arena.  jemalloc once
 * merged an extent of one arena with a piece of the other there (alloc/held.h),
 * and both then handed out the same memory (a crash in dallocx, or blocks
 * that overlap).
 *
 * Each thread keeps up to SLOTS blocks of 4 KiB .. 1.2 MiB (jemalloc's small
 * and large classes and big blocks), fills each with its own byte, checks the
 * byte on free, and gives a third of its blocks to the other thread to free.
 * Under one lock (so the check sees a consistent picture), every new block is
 * compared with every live one: no two may overlap.  The segment must have
 * filled at least once, or the test did not test the path.
 */
#include "check.h"

#include <pthread.h>

enum { THREADS = 2, SLOTS = 48, ITERS = 12000, HANDOFF = 64 };

struct block {
    gas_ptr_t p;
    uint64_t size;
    unsigned char tag;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block live[THREADS][SLOTS];
static struct block handoff[HANDOFF];       /* blocks given to the other thread to free */
static int nhandoff;
static long nospace, overlaps, corrupted, bad_status;
static char first[300];

static void note_first(const char *fmt, uint64_t a, uint64_t b)
{
    if (first[0] == '\0')
        snprintf(first, sizeof first, fmt, (unsigned long long)a, (unsigned long long)b);
}

/* Check the block's bytes and free it (lock held). */
static void release(struct block *b)
{
    const unsigned char *m = gas_ptr_local(b->p);
    for (uint64_t i = 0; i < b->size; i += 509)
        if (m[i] != b->tag) {
            corrupted++;
            note_first("a block of %llu bytes was overwritten at byte %llu", b->size, i);
            break;
        }
    if (gas_dealloc(b->p) != GAS_OK) {
        bad_status++;
        note_first("gas_dealloc of a live block of %llu bytes failed (%llu)", b->size, 0);
    }
    b->p = GAS_NULL;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1) ^ test_seed;
    for (int it = 0; it < ITERS; it++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        int k = (int)(s % SLOTS);
        pthread_mutex_lock(&lock);
        struct block *b = &live[t][k];
        if (b->p != GAS_NULL) {
            if ((s >> 8) % 3 == 0 && nhandoff < HANDOFF) {
                handoff[nhandoff++] = *b;       /* the other thread frees it */
                b->p = GAS_NULL;
            } else {
                release(b);
            }
        } else if (nhandoff > 0 && (s >> 8) % 2 == 0) {
            release(&handoff[--nhandoff]);
        } else {
            uint64_t size = 4096 + (s >> 20) % (1200u << 10);
            gas_status_t st = gas_alloc(size, &b->p);
            if (st == GAS_ERR_NOSPACE) {
                nospace++;
                b->p = GAS_NULL;
            } else if (st != GAS_OK) {
                bad_status++;
                note_first("gas_alloc of %llu bytes failed with status %llu", size,
                           (uint64_t)-st);
                b->p = GAS_NULL;
            } else {
                uint64_t off = gas_ptr_offset(b->p);
                for (int u = 0; u < THREADS; u++)
                    for (int j = 0; j < SLOTS; j++) {
                        const struct block *o = &live[u][j];
                        if (o == b || o->p == GAS_NULL)
                            continue;
                        uint64_t oo = gas_ptr_offset(o->p);
                        if (off < oo + o->size && oo < off + size) {
                            overlaps++;
                            note_first("a new block at offset %llu overlaps a live one at %llu",
                                       off, oo);
                        }
                    }
                b->size = size;
                b->tag = (unsigned char)(0x11 + t * 0x40 + it % 61);
                memset(gas_ptr_local(b->p), b->tag, size);
            }
        }
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    test_begin("alloc_full");
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t) != 0)
            test_die("pthread_create");
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++)
        for (int k = 0; k < SLOTS; k++)
            if (live[t][k].p != GAS_NULL)
                release(&live[t][k]);
    while (nhandoff > 0)
        release(&handoff[--nhandoff]);
    CHECK(overlaps == 0 && corrupted == 0 && bad_status == 0,
          "%ld overlapping blocks, %ld overwritten, %ld failed calls; first: %s", overlaps,
          corrupted, bad_status, first);
    CHECK(nospace > 0, "the segment never filled up: set GAS_SEGMENT_SIZE small (48m)");
    gas_mem_stats_t st;
    if (CHECK_OK(gas_memory_stats(&st)))
        test_note("arenas %d, %ld NOSPACE answers, %" PRIu64 " bytes held at the top", st.arenas,
                  nospace, st.arena_reserved);
    return test_end();
}
