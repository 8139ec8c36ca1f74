/* live.c - the live-block map's set-up and its leaves (see live.h). */
#include "live.h"

#include <stdlib.h>
#include <sys/mman.h>

struct gas_al_live gas_al_live;

gas_status_t gas_al_live_start(uint64_t size)
{
    uint64_t n = (size + ((uint64_t)1 << GAS_AL_LIVE_SPAN_SHIFT) - 1) >> GAS_AL_LIVE_SPAN_SHIFT;
    _Atomic(_Atomic uint64_t *) *leaves = calloc(n ? n : 1, sizeof *leaves);
    if (leaves == NULL)
        return GAS_ERR_NOMEM;
    gas_al_live = (struct gas_al_live){.leaves = leaves, .nleaves = n};
    return GAS_OK;
}

void gas_al_live_stop(void)
{
    if (gas_al_live.leaves == NULL)
        return;
    for (uint64_t i = 0; i < gas_al_live.nleaves; i++) {
        _Atomic uint64_t *leaf = atomic_load(&gas_al_live.leaves[i]);
        if (leaf != NULL)
            munmap((void *)leaf, GAS_AL_LIVE_LEAF_BYTES);
    }
    free(gas_al_live.leaves);
    gas_al_live = (struct gas_al_live){0};
}

/* Two threads may map the same leaf at once: the first one published wins. */
_Atomic uint64_t *gas_al_live_leaf_slow(uint64_t off)
{
    _Atomic(_Atomic uint64_t *) *slot = &gas_al_live.leaves[off >> GAS_AL_LIVE_SPAN_SHIFT];
    void *m = mmap(NULL, GAS_AL_LIVE_LEAF_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    _Atomic uint64_t *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expect, (_Atomic uint64_t *)m,
                                                memory_order_acq_rel, memory_order_acquire))
        return (_Atomic uint64_t *)m;
    munmap(m, GAS_AL_LIVE_LEAF_BYTES);
    return expect;
}
