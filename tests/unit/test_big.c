/*
 * The book-keeping of big gas_alloc blocks (alloc/big.h), against a model:
 *  - free ranges: a page map of a 64 MiB region says which pages are free;
 *    the region, given back in pieces in random order, must become one range;
 *    after random gives and takes, the ranges must be sorted, never touch
 *    (every give merged with its neighbours), cover exactly the free pages,
 *    and a take must return free, aligned pages from the tightest range;
 *  - live blocks: thousands of offsets tracked and untracked at random
 *    (many colliding in the table) must always be found with their length,
 *    and untracked ones never.
 */
#include "alloc/big.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096ull
#define NPAGES 16384   /* 64 MiB */

static unsigned char page_free[NPAGES];

/* The ranges agree with the page map, are sorted and never touch. */
static void check_ranges(const struct gas_al_big *b, const char *when)
{
    static unsigned char seen[NPAGES];
    memset(seen, 0, sizeof seen);
    for (size_t i = 0; i < b->nfree; i++) {
        const struct gas_al_range *r = &b->free[i];
        UCHECK(r->len > 0 && r->off % PAGE == 0 && r->len % PAGE == 0, "%s: range %zu malformed", when, i);
        if (i + 1 < b->nfree)
            UCHECK(r->off + r->len < b->free[i + 1].off, "%s: ranges %zu and %zu touch or overlap", when,
                   i, i + 1);
        for (uint64_t p = r->off / PAGE; p < (r->off + r->len) / PAGE && p < NPAGES; p++)
            seen[p] = 1;
    }
    UCHECK(memcmp(seen, page_free, sizeof seen) == 0, "%s: the ranges differ from the free pages", when);
}

/* The tightest free run (in the page map) that can hold len at align: its length, or 0. */
static uint64_t tightest(uint64_t len, uint64_t align)
{
    uint64_t best = 0;
    for (uint64_t p = 0; p < NPAGES;) {
        if (!page_free[p]) {
            p++;
            continue;
        }
        uint64_t q = p;
        while (q < NPAGES && page_free[q])
            q++;
        uint64_t lo = p * PAGE, hi = q * PAGE, at = (lo + align - 1) & ~(align - 1);
        if (at + len <= hi && (best == 0 || hi - lo < best))
            best = hi - lo;
        p = q;
    }
    return best;
}

static void ranges(void)
{
    struct gas_al_big b;
    memset(&b, 0, sizeof b);
    unsigned long long seed = 7;
    /* Start with the region free in pieces given in random order (they must merge into one). */
    enum { PIECES = 64 };
    int order[PIECES];
    for (int i = 0; i < PIECES; i++)
        order[i] = i;
    for (int i = PIECES - 1; i > 0; i--) {
        int j = (int)(unit_rand(&seed) % (unsigned long long)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint64_t piece = NPAGES / PIECES * PAGE, off;
    for (int i = 0; i < PIECES; i++) {
        UCHECK(gas_al_big_give(&b, order[i] * piece, piece) == 0, "give");
        memset(page_free + order[i] * (NPAGES / PIECES), 1, NPAGES / PIECES);
        check_ranges(&b, "giving pieces");
    }
    UCHECK(b.nfree == 1 && b.free[0].off == 0 && b.free[0].len == NPAGES * PAGE,
           "%zu ranges after giving adjacent pieces", b.nfree);
    check_ranges(&b, "start");

    /* Random takes and gives. */
    enum { MAXLIVE = 512 };
    uint64_t live_off[MAXLIVE], live_len[MAXLIVE];
    int nlive = 0;
    for (int step = 0; step < 20000; step++) {
        if (nlive < MAXLIVE && (nlive == 0 || unit_rand(&seed) % 100 < 55)) {
            uint64_t len = (1 + unit_rand(&seed) % (unit_rand(&seed) % 8 == 0 ? 512 : 16)) * PAGE;
            uint64_t align = unit_rand(&seed) % 10 == 0 ? (PAGE << (unit_rand(&seed) % 6)) : PAGE;
            uint64_t want = tightest(len, align);
            if (gas_al_big_take(&b, len, align, NULL, NULL, &off) != 0) {
                UCHECK(want == 0, "step %d: take(%llu, %llu) failed though a run of %llu is free", step,
                       (unsigned long long)len, (unsigned long long)align, (unsigned long long)want);
                continue;
            }
            UCHECK(off % align == 0 && off + len <= NPAGES * PAGE, "step %d: bad offset", step);
            for (uint64_t p = off / PAGE; p < (off + len) / PAGE; p++) {
                UCHECK(page_free[p], "step %d: page %llu handed out twice", step, (unsigned long long)p);
                page_free[p] = 0;
            }
            /* Best fit: the run it came from was as tight as any that fits. */
            uint64_t lo = off, hi = off + len;
            while (lo > 0 && page_free[lo / PAGE - 1])
                lo -= PAGE;
            while (hi < NPAGES * PAGE && page_free[hi / PAGE])
                hi += PAGE;
            UCHECK(hi - lo == want, "step %d: took from a run of %llu, the tightest is %llu", step,
                   (unsigned long long)(hi - lo), (unsigned long long)want);
            live_off[nlive] = off;
            live_len[nlive++] = len;
        } else {
            int k = (int)(unit_rand(&seed) % (unsigned long long)nlive);
            UCHECK(gas_al_big_give(&b, live_off[k], live_len[k]) == 0, "give");
            memset(page_free + live_off[k] / PAGE, 1, live_len[k] / PAGE);
            live_off[k] = live_off[--nlive];
            live_len[k] = live_len[nlive];
        }
        if (step % 97 == 0)
            check_ranges(&b, "random steps");
    }
    while (nlive > 0) {
        nlive--;
        UCHECK(gas_al_big_give(&b, live_off[nlive], live_len[nlive]) == 0, "give");
        memset(page_free + live_off[nlive] / PAGE, 1, live_len[nlive] / PAGE);
    }
    check_ranges(&b, "end");
    UCHECK(b.nfree == 1, "%zu ranges once everything was given back", b.nfree);
    gas_al_big_clear(&b);
}

static void live_blocks(void)
{
    struct gas_al_big b;
    memset(&b, 0, sizeof b);
    enum { N = 6000 };
    static uint64_t off[N], len[N];
    static unsigned char in[N];
    unsigned long long seed = 11;
    for (int i = 0; i < N; i++) {
        off[i] = ((uint64_t)(i + 1) + (i % 3 == 0 ? 2 * N : 0)) * PAGE;   /* unique, some far apart */
        len[i] = (1 + unit_rand(&seed) % 100) * PAGE;
    }
    uint64_t bytes = 0;
    size_t count = 0;
    for (int step = 0; step < 60000; step++) {
        int i = (int)(unit_rand(&seed) % N);
        uint64_t got = 0;
        if (!in[i]) {
            UCHECK(gas_al_big_length(&b, off[i]) == 0, "step %d: %d found before it was tracked", step, i);
            UCHECK(gas_al_big_track(&b, off[i], len[i]) == 0, "track");
            in[i] = 1;
            bytes += len[i];
            count++;
        } else {
            UCHECK(gas_al_big_untrack(&b, off[i], &got) == 0 && got == len[i],
                   "step %d: untrack %d gave %llu", step, i, (unsigned long long)got);
            UCHECK(gas_al_big_untrack(&b, off[i], &got) != 0, "step %d: %d untracked twice", step, i);
            in[i] = 0;
            bytes -= len[i];
            count--;
        }
        if (step % 1000 == 0)
            for (int k = 0; k < N; k++)
                UCHECK(gas_al_big_length(&b, off[k]) == (in[k] ? len[k] : 0),
                       "step %d: block %d %s", step, k, in[k] ? "lost" : "still found");
        UCHECK(b.live_bytes == bytes && b.nlive == count, "step %d: counts", step);
    }
    UCHECK(gas_al_big_length(&b, 0) == 0 && gas_al_big_length(&b, 12345) == 0, "strangers found");
    gas_al_big_clear(&b);
    UCHECK(gas_al_big_length(&b, off[0]) == 0, "found after clear");
}

int main(void)
{
    ranges();
    live_blocks();
    return unit_finish("test_big");
}
