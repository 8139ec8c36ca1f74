/* heap.c - deterministic first-fit offset allocator with coalescing (see heap.h). */
#include "heap.h"

#include <stdlib.h>
#include <string.h>

static int grow(struct gas_al_range **arr, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    struct gas_al_range *n = realloc(*arr, ncap * sizeof **arr);
    if (n == NULL)
        return -1;
    *arr = n;
    *cap = ncap;
    return 0;
}

static void insert_at(struct gas_al_range *arr, size_t *n, size_t i, struct gas_al_range r)
{
    memmove(arr + i + 1, arr + i, (*n - i) * sizeof *arr);
    arr[i] = r;
    (*n)++;
}

static void remove_at(struct gas_al_range *arr, size_t *n, size_t i)
{
    memmove(arr + i, arr + i + 1, (*n - i - 1) * sizeof *arr);
    (*n)--;
}

gas_status_t gas_al_heap_init(struct gas_al_heap *h, uint64_t start, uint64_t end)
{
    memset(h, 0, sizeof *h);
    h->start = start;
    h->end = end;
    if (end <= start)
        return GAS_OK;
    if (grow(&h->free, &h->free_cap, 1) != 0)
        return GAS_ERR_NOMEM;
    h->free[0] = (struct gas_al_range){start, end - start};
    h->nfree = 1;
    return GAS_OK;
}

void gas_al_heap_fini(struct gas_al_heap *h)
{
    free(h->free);
    free(h->used);
    memset(h, 0, sizeof *h);
}

gas_status_t gas_al_heap_alloc(struct gas_al_heap *h, uint64_t len, uint64_t align,
                               uint64_t *off_p)
{
    if (len == 0 || align == 0 || (align & (align - 1)) != 0)
        return GAS_ERR_INVALID;
    for (size_t i = 0; i < h->nfree; i++) {
        struct gas_al_range f = h->free[i];
        uint64_t a = (f.off + align - 1) & ~(align - 1);
        if (a < f.off || a - f.off > f.len || f.len - (a - f.off) < len)
            continue;
        /* Reserve room for the bookkeeping before changing anything. */
        if (grow(&h->used, &h->used_cap, h->nused + 1) != 0 ||
            grow(&h->free, &h->free_cap, h->nfree + 1) != 0)
            return GAS_ERR_NOMEM;
        uint64_t head = a - f.off, tail = f.len - head - len;
        size_t j = i;
        remove_at(h->free, &h->nfree, i);
        if (head)
            insert_at(h->free, &h->nfree, j++, (struct gas_al_range){f.off, head});
        if (tail)
            insert_at(h->free, &h->nfree, j, (struct gas_al_range){a + len, tail});
        size_t k = h->nused;
        while (k > 0 && h->used[k - 1].off > a)
            k--;
        insert_at(h->used, &h->nused, k, (struct gas_al_range){a, len});
        *off_p = a;
        return GAS_OK;
    }
    return GAS_ERR_NOSPACE;
}

gas_status_t gas_al_heap_free(struct gas_al_heap *h, uint64_t off)
{
    size_t lo = 0, hi = h->nused;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->used[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == h->nused || h->used[lo].off != off)
        return GAS_ERR_INVALID;
    if (grow(&h->free, &h->free_cap, h->nfree + 1) != 0)
        return GAS_ERR_NOMEM;
    struct gas_al_range r = h->used[lo];
    remove_at(h->used, &h->nused, lo);
    size_t i = 0;
    while (i < h->nfree && h->free[i].off < r.off)
        i++;
    /* Merge with the neighbour after, then the one before. */
    if (i < h->nfree && r.off + r.len == h->free[i].off) {
        r.len += h->free[i].len;
        remove_at(h->free, &h->nfree, i);
    }
    if (i > 0 && h->free[i - 1].off + h->free[i - 1].len == r.off) {
        h->free[i - 1].len += r.len;
        return GAS_OK;
    }
    insert_at(h->free, &h->nfree, i, r);
    return GAS_OK;
}

/* The free range that ends at h->end, or NULL. */
static struct gas_al_range *top_free(const struct gas_al_heap *h)
{
    if (h->nfree == 0)
        return NULL;
    struct gas_al_range *f = &h->free[h->nfree - 1];
    return f->off + f->len == h->end ? f : NULL;
}

gas_status_t gas_al_heap_need_end(const struct gas_al_heap *h, uint64_t len, uint64_t align,
                                  uint64_t *end_p)
{
    if (len == 0 || align == 0 || (align & (align - 1)) != 0)
        return GAS_ERR_INVALID;
    const struct gas_al_range *f = top_free(h);
    uint64_t from = f ? f->off : h->end;
    if (from > UINT64_MAX - (align - 1))
        return GAS_ERR_OVERFLOW;
    uint64_t a = (from + align - 1) & ~(align - 1);
    if (a > UINT64_MAX - len)
        return GAS_ERR_OVERFLOW;
    *end_p = a + len > h->end ? a + len : h->end;
    return GAS_OK;
}

gas_status_t gas_al_heap_set_end(struct gas_al_heap *h, uint64_t new_end)
{
    if (new_end < h->start)
        return GAS_ERR_INVALID;
    struct gas_al_range *f = top_free(h);
    if (new_end >= h->end) {
        if (new_end == h->end)
            return GAS_OK;
        if (f) {
            f->len += new_end - h->end;
        } else {
            if (grow(&h->free, &h->free_cap, h->nfree + 1) != 0)
                return GAS_ERR_NOMEM;
            h->free[h->nfree++] = (struct gas_al_range){h->end, new_end - h->end};
        }
        h->end = new_end;
        return GAS_OK;
    }
    if (f == NULL || f->off > new_end)
        return GAS_ERR_INVALID;
    f->len = new_end - f->off;
    if (f->len == 0)
        h->nfree--;
    h->end = new_end;
    return GAS_OK;
}

uint64_t gas_al_heap_top(const struct gas_al_heap *h)
{
    /* used[] is sorted by offset and disjoint: the last one ends highest. */
    return h->nused ? h->used[h->nused - 1].off + h->used[h->nused - 1].len : h->start;
}

void gas_al_heap_stats(const struct gas_al_heap *h, uint64_t *free_p, uint64_t *largest_p,
                       uint64_t *used_p)
{
    uint64_t fr = 0, largest = 0, used = 0;
    for (size_t i = 0; i < h->nfree; i++) {
        fr += h->free[i].len;
        if (h->free[i].len > largest)
            largest = h->free[i].len;
    }
    for (size_t i = 0; i < h->nused; i++)
        used += h->used[i].len;
    if (free_p)
        *free_p = fr;
    if (largest_p)
        *largest_p = largest;
    if (used_p)
        *used_p = used;
}
