/*
 * big.c - free ranges and live big blocks (see big.h).
 */
#include "big.h"
#include "vec.h"

#include <stdlib.h>
#include <string.h>

/* First free range whose offset is >= off (binary search). */
static size_t range_at_or_after(const struct gas_al_big *b, uint64_t off)
{
    size_t lo = 0, hi = b->nfree;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->free[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int insert_range(struct gas_al_big *b, size_t at, uint64_t off, uint64_t len)
{
    struct gas_al_range r = {off, len};
    return gas_al_vec_insert(&b->free, &b->nfree, &b->capfree, 16, sizeof r, at, &r);
}

static void remove_range(struct gas_al_big *b, size_t at)
{
    gas_al_vec_remove(b->free, &b->nfree, sizeof *b->free, at);
}

int gas_al_big_take(struct gas_al_big *b, uint64_t len, uint64_t align,
                    int (*top_ok)(uint64_t end, void *arg), void *arg, uint64_t *off_p)
{
    size_t best = b->nfree;
    uint64_t best_waste = UINT64_MAX, best_at = 0;
    for (size_t i = 0; i < b->nfree; i++) {
        const struct gas_al_range *r = &b->free[i];
        uint64_t at = (r->off + align - 1) & ~(align - 1);
        if (at < r->off || at - r->off > r->len || r->len - (at - r->off) < len)
            continue;
        if (top_ok != NULL && r->len - (at - r->off) == len && !top_ok(at + len, arg))
            continue;
        uint64_t waste = r->len - len;
        if (waste < best_waste) {
            best = i;
            best_waste = waste;
            best_at = at;
            if (waste == 0)
                break;
        }
    }
    if (best == b->nfree)
        return -1;
    struct gas_al_range r = b->free[best];
    uint64_t head = best_at - r.off, tail = r.off + r.len - (best_at + len);
    if (head == 0 && tail == 0) {
        remove_range(b, best);
    } else if (head == 0) {
        b->free[best] = (struct gas_al_range){best_at + len, tail};
    } else {
        b->free[best].len = head;
        if (tail != 0)
            (void)insert_range(b, best + 1, best_at + len, tail);   /* no memory: the tail is lost */
    }
    *off_p = best_at;
    return 0;
}

int gas_al_big_give(struct gas_al_big *b, uint64_t off, uint64_t len)
{
    size_t at = range_at_or_after(b, off);
    int join_prev = at > 0 && b->free[at - 1].off + b->free[at - 1].len == off;
    int join_next = at < b->nfree && off + len == b->free[at].off;
    if (join_prev && join_next) {
        b->free[at - 1].len += len + b->free[at].len;
        remove_range(b, at);
    } else if (join_prev) {
        b->free[at - 1].len += len;
    } else if (join_next) {
        b->free[at].off = off;
        b->free[at].len += len;
    } else if (insert_range(b, at, off, len) != 0) {
        return -1;
    }
    return 0;
}

static size_t slot_of(const struct gas_al_big *b, uint64_t off)
{
    uint64_t h = (off >> 12) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & (b->cap - 1);
}

static int grow_map(struct gas_al_big *b)
{
    size_t cap = b->cap ? 2 * b->cap : 64;
    uint64_t *key = calloc(cap, sizeof *key), *val = calloc(cap, sizeof *val);
    if (key == NULL || val == NULL) {
        free(key);
        free(val);
        return -1;
    }
    struct gas_al_big nb = *b;
    nb.key = key;
    nb.val = val;
    nb.cap = cap;
    for (size_t i = 0; i < b->cap; i++) {
        if (b->key[i] == 0)
            continue;
        size_t s = slot_of(&nb, b->key[i]);
        while (key[s] != 0)
            s = (s + 1) & (cap - 1);
        key[s] = b->key[i];
        val[s] = b->val[i];
    }
    free(b->key);
    free(b->val);
    b->key = key;
    b->val = val;
    b->cap = cap;
    return 0;
}

int gas_al_big_track(struct gas_al_big *b, uint64_t off, uint64_t len)
{
    if ((b->nlive + 1) * 2 > b->cap && grow_map(b) != 0)
        return -1;
    size_t s = slot_of(b, off);
    while (b->key[s] != 0)
        s = (s + 1) & (b->cap - 1);
    b->key[s] = off;
    b->val[s] = len;
    b->nlive++;
    b->live_bytes += len;
    return 0;
}

static size_t find(const struct gas_al_big *b, uint64_t off)
{
    if (b->cap == 0 || off == 0)
        return SIZE_MAX;
    for (size_t s = slot_of(b, off); b->key[s] != 0; s = (s + 1) & (b->cap - 1))
        if (b->key[s] == off)
            return s;
    return SIZE_MAX;
}

int gas_al_big_untrack(struct gas_al_big *b, uint64_t off, uint64_t *len_p)
{
    size_t s = find(b, off);
    if (s == SIZE_MAX)
        return -1;
    *len_p = b->val[s];
    b->live_bytes -= b->val[s];
    b->nlive--;
    /* Backward-shift deletion: move later members of the probe run into the hole. */
    size_t hole = s;
    for (size_t j = (s + 1) & (b->cap - 1); b->key[j] != 0; j = (j + 1) & (b->cap - 1)) {
        size_t home = slot_of(b, b->key[j]);
        /* j may move to the hole unless its home lies cyclically in (hole, j]. */
        int stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!stays) {
            b->key[hole] = b->key[j];
            b->val[hole] = b->val[j];
            hole = j;
        }
    }
    b->key[hole] = 0;
    b->val[hole] = 0;
    return 0;
}

uint64_t gas_al_big_length(const struct gas_al_big *b, uint64_t off)
{
    size_t s = find(b, off);
    return s == SIZE_MAX ? 0 : b->val[s];
}

void gas_al_big_clear(struct gas_al_big *b)
{
    free(b->free);
    free(b->key);
    free(b->val);
    memset(b, 0, sizeof *b);
}
