/* held.c - the parts of the segment the arenas hold (see held.h). */
#include "held.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

/* Index of the last range starting at or below off, or n when none does. */
static size_t last_at_or_below(const struct gas_al_held *h, uint64_t off)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->r[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? h->n : lo - 1;
}

static int insert_at(struct gas_al_held *h, size_t at, struct gas_al_held_range v)
{
    return gas_al_vec_insert(&h->r, &h->n, &h->cap, 32, sizeof v, at, &v);
}

int gas_al_held_add(struct gas_al_held *h, uint64_t off, uint64_t len, int arena)
{
    size_t i = last_at_or_below(h, off);
    return insert_at(h, i == h->n ? 0 : i + 1, (struct gas_al_held_range){off, len, arena});
}

void gas_al_held_remove(struct gas_al_held *h, uint64_t off, uint64_t len)
{
    uint64_t end = off + len;
    size_t i = last_at_or_below(h, off);
    if (i == h->n)
        i = 0;
    /* Every range that overlaps [off, end): an extent jemalloc merged may span several. */
    while (i < h->n && h->r[i].off < end) {
        struct gas_al_held_range *r = &h->r[i];
        uint64_t rend = r->off + r->len;
        if (rend <= off) {
            i++;
        } else if (r->off >= off && rend <= end) {
            gas_al_vec_remove(h->r, &h->n, sizeof *h->r, i);
        } else if (r->off >= off) {
            r->len = rend - end;
            r->off = end;
            i++;
        } else if (rend <= end) {
            r->len = off - r->off;
            i++;
        } else {
            /* Split in two; without memory for that the range stays whole (stricter, never looser). */
            struct gas_al_held_range upper = {end, rend - end, r->arena};
            if (insert_at(h, i + 1, upper) == 0)
                h->r[i].len = off - h->r[i].off;
            return;
        }
    }
}

int gas_al_held_arena(const struct gas_al_held *h, uint64_t off)
{
    size_t i = last_at_or_below(h, off);
    return i != h->n && off - h->r[i].off < h->r[i].len ? h->r[i].arena : -1;
}

void gas_al_held_clear(struct gas_al_held *h)
{
    free(h->r);
    memset(h, 0, sizeof *h);
}
