/* boot_single.c - bootstrap for a program started without a launcher (one rank). */
#include "boot.h"

#include <stdlib.h>
#include <string.h>

struct kv {
    struct kv *next;
    char *key;
    void *val;
    size_t len;
};

static struct kv *store;

static gas_status_t single_kv_put(const char *key, const void *val, size_t len)
{
    struct kv *e = calloc(1, sizeof *e);
    if (e == NULL || (e->key = strdup(key)) == NULL || (e->val = malloc(len ? len : 1)) == NULL) {
        if (e)
            free(e->key);
        free(e);
        return GAS_ERR_NOMEM;
    }
    memcpy(e->val, val, len);
    e->len = len;
    e->next = store;
    store = e;
    return GAS_OK;
}

static gas_status_t single_kv_get(int rank, const char *key, void **val_p, size_t *len_p)
{
    for (struct kv *e = store; e; e = e->next) {
        if (rank == 0 && strcmp(e->key, key) == 0) {
            void *copy = malloc(e->len ? e->len : 1);
            if (copy == NULL)
                return GAS_ERR_NOMEM;
            memcpy(copy, e->val, e->len);
            *val_p = copy;
            *len_p = e->len;
            return GAS_OK;
        }
    }
    return GAS_ERR_INVALID;
}

static gas_status_t single_barrier(void)
{
    return GAS_OK;
}

static void single_abort(int code, const char *msg)
{
    (void)code;
    (void)msg;
}

static void single_fini(void)
{
    while (store) {
        struct kv *e = store;
        store = e->next;
        free(e->key);
        free(e->val);
        free(e);
    }
}

gas_status_t gas_rt_boot_single_open(struct gas_rt_boot *b)
{
    *b = (struct gas_rt_boot){
        .name = "single",
        .rank = 0, .nranks = 1, .local_rank = 0, .local_size = 1,
        .kv_put = single_kv_put, .kv_get = single_kv_get, .barrier = single_barrier,
        .abort = single_abort, .fini = single_fini,
    };
    return GAS_OK;
}
