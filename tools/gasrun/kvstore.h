/*
 * kvstore.h - the rendezvous key-value store: (rank, key) -> value bytes.
 *
 * A put of an existing (rank, key) replaces the old value and frees it, so the
 * store holds exactly the latest value of every key the ranks put.
 */
#ifndef GR_KVSTORE_H
#define GR_KVSTORE_H

#include <stddef.h>
#include <stdint.h>

struct gr_kv;

struct gr_kv *gr_kv_create(void);
void gr_kv_destroy(struct gr_kv *kv);

/* 0 or -ENOMEM (the old value, if any, is kept then). */
int gr_kv_put(struct gr_kv *kv, uint32_t rank, const char *key, size_t klen,
              const void *val, size_t vlen);

/* The stored value (valid until the next put of that key), or NULL. */
const void *gr_kv_get(const struct gr_kv *kv, uint32_t rank, const char *key, size_t klen,
                      size_t *vlen_p);

/* Entries and bytes (keys + values) held. */
size_t gr_kv_count(const struct gr_kv *kv);
size_t gr_kv_bytes(const struct gr_kv *kv);

#endif
