/* kvstore.c - chained hash table of (rank, key) -> value (see kvstore.h). */
#include "kvstore.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct kv_ent {
    struct kv_ent *next;
    uint64_t hash;
    uint32_t rank;
    size_t klen, vlen;
    char data[];        /* key bytes, then value bytes */
};

struct gr_kv {
    struct kv_ent **tab;
    size_t nbuckets;    /* a power of two */
    size_t count;
    size_t bytes;
};

static uint64_t kv_hash(uint32_t rank, const char *key, size_t klen)
{
    uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)rank * 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < klen; i++) {
        h ^= (unsigned char)key[i];
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

struct gr_kv *gr_kv_create(void)
{
    struct gr_kv *kv = calloc(1, sizeof *kv);
    if (kv == NULL)
        return NULL;
    kv->nbuckets = 64;
    kv->tab = calloc(kv->nbuckets, sizeof *kv->tab);
    if (kv->tab == NULL) {
        free(kv);
        return NULL;
    }
    return kv;
}

void gr_kv_destroy(struct gr_kv *kv)
{
    if (kv == NULL)
        return;
    for (size_t b = 0; b < kv->nbuckets; b++) {
        struct kv_ent *e = kv->tab[b];
        while (e != NULL) {
            struct kv_ent *next = e->next;
            free(e);
            e = next;
        }
    }
    free(kv->tab);
    free(kv);
}

static struct kv_ent **kv_slot(const struct gr_kv *kv, uint64_t h, uint32_t rank,
                               const char *key, size_t klen)
{
    struct kv_ent **pp = &kv->tab[h & (kv->nbuckets - 1)];
    for (; *pp != NULL; pp = &(*pp)->next) {
        const struct kv_ent *e = *pp;
        if (e->hash == h && e->rank == rank && e->klen == klen &&
            memcmp(e->data, key, klen) == 0)
            break;
    }
    return pp;
}

/* Double the table when it is fuller than one entry per bucket; best effort. */
static void kv_grow(struct gr_kv *kv)
{
    if (kv->count < kv->nbuckets)
        return;
    size_t n = kv->nbuckets * 2;
    struct kv_ent **tab = calloc(n, sizeof *tab);
    if (tab == NULL)
        return;
    for (size_t b = 0; b < kv->nbuckets; b++) {
        struct kv_ent *e = kv->tab[b];
        while (e != NULL) {
            struct kv_ent *next = e->next;
            e->next = tab[e->hash & (n - 1)];
            tab[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(kv->tab);
    kv->tab = tab;
    kv->nbuckets = n;
}

int gr_kv_put(struct gr_kv *kv, uint32_t rank, const char *key, size_t klen,
              const void *val, size_t vlen)
{
    uint64_t h = kv_hash(rank, key, klen);
    struct kv_ent *e = malloc(sizeof *e + klen + vlen);
    if (e == NULL)
        return -ENOMEM;
    e->hash = h;
    e->rank = rank;
    e->klen = klen;
    e->vlen = vlen;
    memcpy(e->data, key, klen);
    if (vlen > 0)
        memcpy(e->data + klen, val, vlen);

    struct kv_ent **pp = kv_slot(kv, h, rank, key, klen);
    struct kv_ent *old = *pp;
    if (old != NULL) {
        e->next = old->next;
        *pp = e;
        kv->bytes -= old->klen + old->vlen;
        free(old);
    } else {
        e->next = NULL;
        *pp = e;
        kv->count++;
    }
    kv->bytes += klen + vlen;
    kv_grow(kv);
    return 0;
}

const void *gr_kv_get(const struct gr_kv *kv, uint32_t rank, const char *key, size_t klen,
                      size_t *vlen_p)
{
    const struct kv_ent *e = *kv_slot(kv, kv_hash(rank, key, klen), rank, key, klen);
    if (e == NULL)
        return NULL;
    *vlen_p = e->vlen;
    return e->data + e->klen;
}

size_t gr_kv_count(const struct gr_kv *kv)
{
    return kv->count;
}

size_t gr_kv_bytes(const struct gr_kv *kv)
{
    return kv->bytes;
}
