/* space.c - the boundary between the symmetric heap and the arenas (see space.h). */
#include "space.h"

/* Under s->lock (or before any thread runs); gas_dealloc reads floor without it. */
static void set_floor(struct gas_al_space *s, uint64_t floor)
{
    __atomic_store_n(&s->floor, floor, __ATOMIC_RELAXED);
    if (s->published)
        __atomic_store_n(s->published, floor, __ATOMIC_RELEASE);
}

/* Under s->lock (or before any thread runs). */
static void set_limit(struct gas_al_space *s, uint64_t limit)
{
    s->limit = limit;
    if (s->published_top)
        __atomic_store_n(s->published_top, limit, __ATOMIC_RELEASE);
}

void gas_al_space_publish_top(struct gas_al_space *s, uint64_t *top)
{
    pthread_mutex_lock(&s->lock);
    s->published_top = top;
    set_limit(s, s->limit);
    pthread_mutex_unlock(&s->lock);
}

void gas_al_space_init(struct gas_al_space *s, uint64_t heap_end, uint64_t size,
                       uint64_t *published)
{
    pthread_mutex_init(&s->lock, NULL);
    s->size = size;
    s->heap_end = heap_end;
    s->limit = heap_end;
    s->published = published;
    s->published_top = NULL;
    set_floor(s, size);
}

void gas_al_space_fini(struct gas_al_space *s)
{
    pthread_mutex_destroy(&s->lock);
}

int gas_al_space_take(struct gas_al_space *s, uint64_t len, uint64_t align, uint64_t *off_p,
                      uint64_t *prev_p)
{
    int rc = -1;
    pthread_mutex_lock(&s->lock);
    if (align != 0 && (align & (align - 1)) == 0 && len <= s->floor) {
        uint64_t off = (s->floor - len) & ~(align - 1);
        if (off >= s->limit) {
            *prev_p = s->floor;
            set_floor(s, off);
            *off_p = off;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void gas_al_space_untake(struct gas_al_space *s, uint64_t off, uint64_t old_floor)
{
    pthread_mutex_lock(&s->lock);
    if (s->floor == off)
        set_floor(s, old_floor);
    pthread_mutex_unlock(&s->lock);
}

uint64_t gas_al_space_reserve(struct gas_al_space *s, uint64_t new_end)
{
    pthread_mutex_lock(&s->lock);
    uint64_t floor = s->floor;
    if (floor >= new_end && new_end > s->limit)
        set_limit(s, new_end);
    pthread_mutex_unlock(&s->lock);
    return floor;
}

void gas_al_space_settle(struct gas_al_space *s, uint64_t heap_end)
{
    pthread_mutex_lock(&s->lock);
    s->heap_end = heap_end;
    set_limit(s, heap_end);
    pthread_mutex_unlock(&s->lock);
}

void gas_al_space_get(struct gas_al_space *s, uint64_t *heap_end_p, uint64_t *floor_p)
{
    pthread_mutex_lock(&s->lock);
    if (heap_end_p)
        *heap_end_p = s->heap_end;
    if (floor_p)
        *floor_p = s->floor;
    pthread_mutex_unlock(&s->lock);
}
