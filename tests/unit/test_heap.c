/*
 * Symmetric heap: random alloc/free sequences checked against a byte-map
 * model (no overlap, inside bounds, aligned), exhaustion, coalescing,
 * determinism (two heaps fed the same sequence hand out the same offsets),
 * and the movable end (growing on demand, shrinking after frees at the top).
 */
#include "alloc/heap.h"
#include "unit.h"

#include <string.h>

#define SPACE 65536u
#define START 4096u

static unsigned char owner[START + SPACE]; /* 0 = free, else allocation id */

static void check_invariants(const struct gas_al_heap *h)
{
    uint64_t fr = 0, largest = 0, used = 0;
    gas_al_heap_stats(h, &fr, &largest, &used);
    UCHECK(fr + used == SPACE, "free %llu + used %llu != %u", (unsigned long long)fr,
           (unsigned long long)used, SPACE);
    for (size_t i = 1; i < h->nfree; i++)
        UCHECK(h->free[i - 1].off + h->free[i - 1].len < h->free[i].off,
               "free ranges %zu and %zu touch or overlap (not coalesced)", i - 1, i);
}

/* An empty heap that grows on demand, as gas_malloc drives it, and shrinks back. */
static void check_movable_end(void)
{
    struct gas_al_heap h;
    uint64_t off, end;
    gas_al_heap_init(&h, START, START);
    UCHECK(gas_al_heap_alloc(&h, 100, 64, &off) == GAS_ERR_NOSPACE, "an empty heap is full");
    UCHECK(gas_al_heap_need_end(&h, 100, 64, &end) == GAS_OK && end == START + 100,
           "need_end of an empty heap: %llu", (unsigned long long)end);
    UCHECK(gas_al_heap_set_end(&h, end) == GAS_OK, "grow");
    UCHECK(gas_al_heap_alloc(&h, 100, 64, &off) == GAS_OK && off == START, "alloc after growing");
    /* Full again; the next block needs alignment past the top. */
    UCHECK(gas_al_heap_need_end(&h, 64, 64, &end) == GAS_OK && end == START + 128 + 64,
           "need_end with alignment: %llu", (unsigned long long)end);
    UCHECK(gas_al_heap_set_end(&h, START + 8192) == GAS_OK, "grow more");
    uint64_t a, b;
    UCHECK(gas_al_heap_alloc(&h, 1000, 64, &a) == GAS_OK && gas_al_heap_alloc(&h, 1000, 64, &b) == GAS_OK,
           "two blocks");
    UCHECK(gas_al_heap_top(&h) == b + 1000, "top is the end of the last block");
    /* A free range at the top is counted by need_end. */
    UCHECK(gas_al_heap_need_end(&h, 8192, 64, &end) == GAS_OK && end == ((b + 1000 + 63) & ~63ull) + 8192,
           "need_end uses the free range at the top: %llu", (unsigned long long)end);
    /* Shrinking needs the space above the new end to be free. */
    UCHECK(gas_al_heap_set_end(&h, b + 500) == GAS_ERR_INVALID, "shrink into a live block");
    UCHECK(h.end == START + 8192, "a refused shrink changed the end");
    UCHECK(gas_al_heap_set_end(&h, b + 1000) == GAS_OK && h.end == b + 1000, "shrink to the top");
    UCHECK(gas_al_heap_alloc(&h, 64, 64, &off) == GAS_ERR_NOSPACE, "full after shrinking to the top");
    gas_al_heap_free(&h, b);
    UCHECK(gas_al_heap_top(&h) == a + 1000, "top after freeing the last block");
    UCHECK(gas_al_heap_set_end(&h, a + 1000) == GAS_OK && h.nfree <= 1, "shrink after a free");
    gas_al_heap_free(&h, a);
    gas_al_heap_free(&h, START);
    UCHECK(gas_al_heap_top(&h) == START, "top of an empty heap");
    UCHECK(gas_al_heap_set_end(&h, START) == GAS_OK && h.nfree == 0, "back to empty");
    UCHECK(gas_al_heap_set_end(&h, START - 1) == GAS_ERR_INVALID, "end below start");
    UCHECK(gas_al_heap_need_end(&h, UINT64_MAX, 64, &end) == GAS_ERR_OVERFLOW, "overflow");
    gas_al_heap_fini(&h);
}

int main(void)
{
    struct gas_al_heap h, twin;
    gas_al_heap_init(&h, START, START + SPACE);
    gas_al_heap_init(&twin, START, START + SPACE);
    struct { uint64_t off, len; int live; } allocs[512];
    int n = 0;
    unsigned long long seed = 12345;
    for (int step = 0; step < 20000; step++) {
        int live = 0;
        for (int i = 0; i < n; i++)
            live += allocs[i].live;
        if (n < 512 && (unit_rand(&seed) % 3 != 0 || live == 0)) {
            uint64_t len = 1 + unit_rand(&seed) % 3000;
            uint64_t align = 1ull << (unit_rand(&seed) % 8);
            uint64_t off = 0, off2 = 0;
            gas_status_t st = gas_al_heap_alloc(&h, len, align, &off);
            gas_status_t st2 = gas_al_heap_alloc(&twin, len, align, &off2);
            UCHECK(st == st2 && (st != GAS_OK || off == off2), "heaps diverged at step %d", step);
            if (st == GAS_OK) {
                UCHECK(off % align == 0, "offset %llu not aligned to %llu", (unsigned long long)off,
                       (unsigned long long)align);
                UCHECK(off >= START && off + len <= START + SPACE, "allocation out of bounds");
                for (uint64_t b = off; b < off + len; b++) {
                    UCHECK(owner[b] == 0, "byte %llu handed out twice", (unsigned long long)b);
                    owner[b] = 1;
                }
                allocs[n].off = off;
                allocs[n].len = len;
                allocs[n++].live = 1;
            } else {
                /* Exhaustion: the model must agree no aligned hole of len exists. */
                UCHECK(st == GAS_ERR_NOSPACE, "unexpected status %d", st);
                for (uint64_t b = START; b + len <= START + SPACE; b += align) {
                    if (b % align)
                        continue;
                    int fits = 1;
                    for (uint64_t k = b; k < b + len && fits; k++)
                        fits = owner[k] == 0;
                    UCHECK(!fits, "heap said full but %llu bytes at %llu are free",
                           (unsigned long long)len, (unsigned long long)b);
                    if (fits)
                        break;
                }
            }
        } else {
            int i = (int)(unit_rand(&seed) % (unsigned)n);
            if (!allocs[i].live)
                continue;
            UCHECK(gas_al_heap_free(&h, allocs[i].off) == GAS_OK, "free failed");
            UCHECK(gas_al_heap_free(&twin, allocs[i].off) == GAS_OK, "twin free failed");
            memset(owner + allocs[i].off, 0, allocs[i].len);
            allocs[i].live = 0;
            allocs[i] = allocs[--n];
        }
        check_invariants(&h);
    }
    /* Freeing an unknown offset is refused and changes nothing. */
    UCHECK(gas_al_heap_free(&h, START + SPACE + 8) == GAS_ERR_INVALID, "free of a bogus offset");
    /* Free everything: the heap coalesces back into one range. */
    for (int i = 0; i < n; i++)
        gas_al_heap_free(&h, allocs[i].off);
    check_invariants(&h);
    UCHECK(h.nfree == 1 && h.free[0].off == START && h.free[0].len == SPACE,
           "not one range after freeing everything (%zu ranges)", h.nfree);
    /* Exactly full, then one byte more fails. */
    uint64_t off;
    UCHECK(gas_al_heap_alloc(&h, SPACE, 1, &off) == GAS_OK && off == START, "whole-heap alloc");
    UCHECK(gas_al_heap_alloc(&h, 1, 1, &off) == GAS_ERR_NOSPACE, "alloc from a full heap");
    UCHECK(gas_al_heap_alloc(&h, 0, 1, &off) == GAS_ERR_INVALID, "zero-length alloc");
    gas_al_heap_fini(&h);
    gas_al_heap_fini(&twin);
    check_movable_end();
    return unit_finish("test_heap");
}
