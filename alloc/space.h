/*
 * space.h - how a segment is shared between the symmetric heap and the
 * gas_alloc arenas.
 *
 *   0          64 KiB            heap_end        floor            size
 *   | header + |  symmetric heap  |   unclaimed    |  arena extents  |
 *   | scratch  |  (grows up)  --> |                | <-- (grow down) |
 *
 * The symmetric heap covers [GAS_AL_RESERVED_BYTES, heap_end); heap_end is
 * the same on every rank, because gas_malloc must hand out the same offsets
 * everywhere.  The arenas take extents from the top down; `floor` is the
 * lowest byte they hold, and differs between ranks.  Neither side may cross
 * `limit`, which is heap_end except while a growth of the heap is being
 * agreed (then it is the proposed new end, so that no arena takes the space
 * that the heap is about to claim).
 *
 * Growing the heap (gas/array.c): every rank calls gas_al_space_reserve with
 * the same proposed end and gets its floor back; the ranks combine the
 * floors (a min over a barrier); when the smallest floor is at or above the
 * proposal every rank commits it with gas_al_space_settle, otherwise every
 * rank settles back to the old end.  Arena extents never return to the heap:
 * jemalloc keeps the extents it is given for reuse (it never gets to purge or
 * unmap them), so floor only goes down.
 *
 * Thread-safe: arena extent hooks run in any thread.
 */
#ifndef GAS_AL_SPACE_H
#define GAS_AL_SPACE_H

#include <pthread.h>
#include <stdint.h>

struct gas_al_space {
    pthread_mutex_t lock;
    uint64_t size;           /* the segment's size */
    uint64_t heap_end;       /* the symmetric heap's end, same on every rank */
    uint64_t limit;          /* arenas stay at or above it */
    uint64_t floor;          /* lowest byte held by the arenas (size when none) */
    uint64_t *published;     /* where peers read the floor (the segment header), or NULL */
    uint64_t *published_top; /* where this rank's transports read limit, or NULL */
};

/* Copy limit (which the heap's end never passes) to *top whenever it moves:
 * a transport that is a target (udp) refuses ranges in [limit, floor). */
void gas_al_space_publish_top(struct gas_al_space *s, uint64_t *top);

/* published: a word the floor is copied to whenever it moves (peers check ranges against it). */
void gas_al_space_init(struct gas_al_space *s, uint64_t heap_end, uint64_t size,
                       uint64_t *published);
void gas_al_space_fini(struct gas_al_space *s);

/*
 * Arena side: carve len bytes aligned to align just below the floor.
 * 0 with *off_p (and the floor before, *prev_p) set, or -1 when that would
 * cross the limit.
 */
int gas_al_space_take(struct gas_al_space *s, uint64_t len, uint64_t align, uint64_t *off_p,
                      uint64_t *prev_p);

/* Undo a take whose backing failed, if nothing was taken below it since. */
void gas_al_space_untake(struct gas_al_space *s, uint64_t off, uint64_t old_floor);

/*
 * Heap side: propose new_end.  Returns this rank's floor; when it is at or
 * above new_end, the arenas are kept above new_end until the next settle.
 */
uint64_t gas_al_space_reserve(struct gas_al_space *s, uint64_t new_end);

/* Heap side: the heap now ends at heap_end (a committed growth, a rollback or a shrink). */
void gas_al_space_settle(struct gas_al_space *s, uint64_t heap_end);

/* A consistent snapshot: heap_end, floor (either pointer may be NULL). */
void gas_al_space_get(struct gas_al_space *s, uint64_t *heap_end_p, uint64_t *floor_p);

#endif
