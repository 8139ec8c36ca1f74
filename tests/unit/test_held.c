/*
 * What the arenas hold (alloc/held.h), against a page map: random adds of
 * free runs and removes of held runs (a remove may span several adds, as an
 * extent jemalloc merged does); after each step every page's holder must
 * be what the map says, and the ranges sorted and disjoint.
 */
#include "alloc/held.h"
#include "unit.h"

#include <string.h>

#define PAGE 4096ull
#define NPAGES 4096

static signed char owner[NPAGES];   /* -1: not held */

static void check(const struct gas_al_held *h, int step)
{
    for (size_t i = 1; i < h->n; i++)
        UCHECK(h->r[i - 1].off + h->r[i - 1].len <= h->r[i].off, "step %d: ranges %zu, %zu", step,
               i - 1, i);
    for (int p = 0; p < NPAGES; p++) {
        int got = gas_al_held_arena(h, (uint64_t)p * PAGE + 123);
        if (got != owner[p]) {
            UCHECK(0, "step %d: page %d held by %d, the map says %d", step, p, got, owner[p]);
            return;
        }
    }
}

int main(void)
{
    struct gas_al_held h = {0};
    memset(owner, -1, sizeof owner);
    uint64_t s = 42;
    for (int step = 0; step < 3000; step++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        int p = (int)(s % NPAGES), want = (int)((s >> 20) % 64) + 1;
        int held = owner[p] >= 0, n = 0;
        while (n < want && p + n < NPAGES && (owner[p + n] >= 0) == held)
            n++;
        if (!held) {
            int arena = (int)((s >> 40) % 3);
            UCHECK(gas_al_held_add(&h, (uint64_t)p * PAGE, (uint64_t)n * PAGE, arena) == 0, "add");
            memset(owner + p, arena, (size_t)n);
        } else {
            gas_al_held_remove(&h, (uint64_t)p * PAGE, (uint64_t)n * PAGE);
            memset(owner + p, -1, (size_t)n);
        }
        if (step % 50 == 0)
            check(&h, step);
    }
    /* one remove across everything */
    gas_al_held_remove(&h, 0, NPAGES * PAGE);
    memset(owner, -1, sizeof owner);
    check(&h, -1);
    UCHECK(h.n == 0, "%zu ranges left after removing all", h.n);
    gas_al_held_clear(&h);
    return unit_finish("test_held");
}
