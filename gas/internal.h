/*
 * internal.h - state and helpers shared by the files of the gas/ layer.
 * Not included from outside gas/ (runtime/init.c excepted: it starts the layer).
 */
#ifndef GAS_GS_INTERNAL_H
#define GAS_GS_INTERNAL_H

#include <gas.h>

#include "alloc/heap.h"
#include "alloc/segment.h"
#include "runtime/error.h"
#include "transport/transport.h"

enum gas_gs_phase { GAS_GS_NEVER = 0, GAS_GS_UP = 1, GAS_GS_DOWN = 2 };

struct gas_gs_state {
    int phase;
    int rank, nranks;
    struct gas_al_segment seg;
    struct gas_al_heap heap;
    uint64_t barrier_epoch;
    gas_layout_t *allocs;     /* sorted by local_offset */
    size_t nallocs, allocs_cap;
};

extern struct gas_gs_state gas_gs;

/* GAS_OK when initialised, else the NOT_INIT error raised for `call`. */
static inline gas_status_t gas_gs_check(const char *call)
{
    if (__builtin_expect(gas_gs.phase == GAS_GS_UP, 1))
        return GAS_OK;
    return gas_rt_error(GAS_ERR_NOT_INIT, call, "libgas is %s",
                        gas_gs.phase == GAS_GS_NEVER ? "not initialised (call gas_init first)"
                                                     : "finalised (gas_finalize was called)");
}

/* Compute the pointer split for a job of nranks (pure; unit-tested). */
void gas_gs_split_compute(uint64_t nranks, unsigned *rank_bits_p, unsigned *offset_bits_p);

/*
 * Resolve [p, p + n) to the allocation that holds it and the array index of p.
 * Raises (for `call`, naming the pointer role `what`) GAS_ERR_RANK,
 * GAS_ERR_BOUNDS or GAS_ERR_OVERFLOW.  n may be 0 (p itself must be inside).
 */
gas_status_t gas_gs_resolve(const char *call, const char *what, gas_ptr_t p, uint64_t n,
                            const gas_layout_t **layout_p, uint64_t *index_p);

/* The contiguous piece of an array starting at byte index idx, at most `left` bytes. */
struct gas_gs_piece {
    int rank;
    uint64_t off;
    uint64_t len;
};

static inline struct gas_gs_piece gas_gs_piece_at(const gas_layout_t *l, uint64_t idx,
                                                  uint64_t left)
{
    uint64_t chunk = idx / l->block, within = idx % l->block;
    uint64_t room = l->block - within;
    struct gas_gs_piece pc = {
        .rank = (int)(chunk % (uint64_t)l->nranks),
        .off = l->local_offset + (chunk / (uint64_t)l->nranks) * l->block + within,
        .len = left < room ? left : room,
    };
    return pc;
}

/*
 * What a gas_handle_t points to.  RMA handles count their pieces in comp;
 * other operations (collectives) set `complete`, which gas_wait (block = 1)
 * and gas_test (block = 0) call: it makes progress, sets *done_p, and frees
 * the operation once it reports completion (except after GAS_ERR_TIMEOUT).
 */
struct gas_op {
    gas_tl_comp_t comp;
    gas_status_t (*complete)(struct gas_op *op, int block, int *done_p);
};

/* Wait until comp->pending is 0 and return its status. */
gas_status_t gas_gs_comp_wait(gas_tl_comp_t *comp, const char *call);

/*
 * Dissemination barrier over all ranks that also finds the min and max of
 * `value` across ranks; *agree_p = (min == max).  Implies quiet.
 */
gas_status_t gas_gs_barrier_check(const char *call, uint64_t value, int *agree_p);

/* Set up / tear down the layer (called by runtime/init.c only). */
gas_status_t gas_gs_start(int rank, int nranks, const struct gas_al_segment *seg);
void gas_gs_stop(void);

/*
 * Teams (gas/coll/): the world team and the team scratch slots (from
 * gas_gs_start), the world team's node table (collective: runtime/init.c
 * calls it once the transports can reach every rank), and teardown.
 */
gas_status_t gas_co_start(void);
gas_status_t gas_co_start_nodes(void);
void gas_co_stop(void);

#endif
