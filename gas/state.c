/* state.c - the gas/ layer's process state, started and stopped by runtime/init.c. */
#include "internal.h"

#include "runtime/config.h"
#include "runtime/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gas_gs_state gas_gs = {.phase = GAS_GS_NEVER, .rank = -1, .seg = {.fd = -1}};

gas_status_t gas_gs_start(int rank, int nranks, const struct gas_al_segment *seg,
                          const struct gas_al_limits *limits, const struct gas_al_place *place,
                          int prefault)
{
    unsigned rbits, obits;
    gas_gs_split_compute((uint64_t)nranks, &rbits, &obits);
    if (obits < 64 && seg->size > (1ull << obits))
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_SEGMENT_SIZE=%llu exceeds the 2^%u-byte window of a %d-rank job; "
                            "lower GAS_SEGMENT_SIZE",
                            (unsigned long long)seg->size, obits, nranks);
    gas_gs.rank = rank;
    gas_gs.nranks = nranks;
    gas_gs.seg = *seg;
    gas_gs.seg_min = seg->size;
    gas_gs.limits = *limits;
    gas_gs.place = *place;
    gas_gs.prefault = prefault;
    gas_gs.barrier_epoch = 0;
    gas_gs.heap_used = 0;
    gas_gs.heap_internal = 0;
    /* The heap starts empty and grows on demand (see array.c and alloc/space.h). */
    gas_status_t st = gas_al_heap_init(&gas_gs.heap, GAS_AL_RESERVED_BYTES, GAS_AL_RESERVED_BYTES);
    if (st != GAS_OK)
        return gas_rt_error(st, "gas_init", "no memory for the symmetric heap's bookkeeping");
    gas_al_space_init(&gas_gs.space, GAS_AL_RESERVED_BYTES, seg->size,
                      &gas_al_seg_hdr(seg->base)->arena_floor);
    gas_al_space_publish_top(&gas_gs.space, &gas_al_seg_hdr(seg->base)->heap_top);
    gas_ptr_split_ = (gas_ptr_split_t){
        .offset_bits = obits, .rank_bits = rbits,
        .offset_mask = obits >= 64 ? UINT64_MAX : (1ull << obits) - 1,
        .rank = rank, .local_base = seg->base, .segment_size = seg->size,
    };
    gas_gs_set_phase(GAS_GS_UP);
    return GAS_OK;
}

const char *gas_gs_raise_hint(char *buf, size_t cap)
{
    char seg[32], fs[32];
    gas_rt_format_bytes(seg, sizeof seg, gas_gs.seg_min);
    if (gas_gs.limits.dir_kind != GAS_AL_DIR_TMPFS) {
        snprintf(buf, cap, "raise GAS_SEGMENT_SIZE (now %s)", seg);
        return buf;
    }
    gas_rt_format_bytes(fs, sizeof fs, gas_gs.limits.fs_size);
    snprintf(buf, cap,
             "raise GAS_SEGMENT_SIZE (now %s) and the size of the tmpfs at %.200s "
             "(GAS_SEGMENT_DIR, %s), which bounds it", seg, gas_gs.limits.dir, fs);
    return buf;
}

gas_status_t gas_gs_agree(void)
{
    /* Segments may differ between nodes (auto sizing): plans use the smallest. */
    uint64_t mn = gas_gs.seg.size;
    gas_status_t st = gas_gs_barrier_minmax("gas_init", gas_gs.seg.size, &mn, NULL);
    if (st != GAS_OK)
        return st;
    gas_gs.seg_min = mn;
    /* Every team's mailboxes are laid out from GAS_COLL_SCRATCH: ranks that
     * disagree would write where the others do not read (the first
     * collective failed on some ranks as a "mismatch" the user never made,
     * and others went on).  Every rank fails gas_init alike instead. */
    uint64_t mine = gas_rt_config_size(GAS_CFG_COLL_SCRATCH), lo = mine, hi = mine;
    st = gas_gs_barrier_minmax("gas_init", mine, &lo, &hi);
    if (st == GAS_OK && lo != hi)
        st = gas_rt_error(GAS_ERR_INVALID, "gas_init",
                          "GAS_COLL_SCRATCH differs between ranks (from %llu to %llu bytes; "
                          "%llu here, from %s): every rank must use the same value",
                          (unsigned long long)lo, (unsigned long long)hi,
                          (unsigned long long)mine, gas_rt_config_source(GAS_CFG_COLL_SCRATCH));
    return st;
}

void gas_gs_stop(void)
{
    gas_co_stop();
    gas_al_heap_fini(&gas_gs.heap);
    gas_al_space_fini(&gas_gs.space);
    free(gas_gs.allocs);
    gas_gs.allocs = NULL;
    gas_gs.nallocs = gas_gs.allocs_cap = 0;
    gas_gs_set_phase(GAS_GS_DOWN);
    gas_ptr_split_.rank = -1;
    gas_ptr_split_.local_base = NULL;
}

__attribute__((noinline, cold)) gas_status_t gas_gs_refused(const char *call)
{
    switch (gas_rt_gate_refusal()) {
    case GAS_RT_GATE_OTHER_THREAD:
        return gas_rt_error(GAS_ERR_NOT_INIT, call,
                            "libgas is %s: gas_finalize was called by another thread of this "
                            "rank; nothing was done",
                            gas_gs_phase() == GAS_GS_UP ? "being finalised" : "finalised");
    case GAS_RT_GATE_THIS_THREAD:
        return gas_rt_error(GAS_ERR_NOT_INIT, call, "libgas is %s", gas_gs_phase_why());
    case GAS_RT_GATE_NOMEM:
        break;
    }
    return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for this thread's record of libgas calls");
}

GAS_EXPORT int gas_initialized(void)
{
    return gas_gs_phase() == GAS_GS_UP;
}

GAS_EXPORT int gas_rank(void)
{
    return gas_gs_phase() == GAS_GS_UP ? gas_gs.rank : -1;
}

GAS_EXPORT int gas_nranks(void)
{
    return gas_gs_phase() == GAS_GS_UP ? gas_gs.nranks : 0;
}
