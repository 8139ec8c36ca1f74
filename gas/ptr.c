/* ptr.c - the pointer split, local addresses and layout-aware pointer arithmetic. */
#include "internal.h"

GAS_EXPORT gas_ptr_split_t gas_ptr_split_ = {.offset_bits = 57, .rank_bits = 7,
                                              .offset_mask = (1ull << 57) - 1, .rank = -1};

void gas_gs_split_compute(uint64_t nranks, unsigned *rank_bits_p, unsigned *offset_bits_p)
{
    unsigned bits = 0;
    while (bits < 64 && (1ull << bits) < nranks)
        bits++;
    if (bits < 64 - GAS_PTR_MAX_OFFSET_BITS)
        bits = 64 - GAS_PTR_MAX_OFFSET_BITS;
    *rank_bits_p = bits;
    *offset_bits_p = 64 - bits;
}

static void *api_ptr_local(gas_ptr_t p)
{
    if (gas_gs_phase() != GAS_GS_UP || p == GAS_NULL)
        return NULL;
    int rank = gas_ptr_rank(p);
    uint64_t off = gas_ptr_offset(p);
    if (rank < 0 || rank >= gas_gs.nranks)
        return NULL;
    if (rank == gas_gs.rank)
        return off < gas_gs.seg.size ? gas_gs.seg.base + off : NULL;
    gas_tl_peer_t *peer;
    if (gas_tl_peer_for("gas_ptr_local", rank, &peer) != GAS_OK || peer->direct_base == NULL ||
        off >= peer->size)
        return NULL;
    return peer->direct_base + off;
}

/* Inside the API gate (internal.h): NULL once gas_finalize has begun. */
GAS_EXPORT void *gas_ptr_local(gas_ptr_t p)
{
    struct gas_rt_gate_thr *g = gas_rt_gate_enter();
    if (__builtin_expect(g == NULL, 0))
        return NULL;
    void *local = api_ptr_local(p);
    gas_rt_gate_leave(g);
    return local;
}

static gas_status_t api_ptr_add(gas_ptr_t p, uint64_t nbytes, gas_ptr_t *result_p)
{
    gas_status_t st = gas_gs_check("gas_ptr_add");
    struct gas_gs_span sp;
    if (st == GAS_OK && result_p == NULL)
        st = gas_rt_error(GAS_ERR_INVALID, "gas_ptr_add", "result_p is NULL");
    if (st == GAS_OK)
        st = gas_gs_resolve("gas_ptr_add", "pointer", p, 0, &sp);
    if (st != GAS_OK)
        return st;
    if (sp.l == NULL) {
        /* Raw bytes of one segment (gas_alloc memory): plain offsets; one past the end is allowed. */
        uint64_t size = gas_gs_segment_size(sp.rank);
        if (nbytes > size - sp.idx)
            return gas_rt_error(GAS_ERR_BOUNDS, "gas_ptr_add",
                                "moving %llu bytes from offset %llu leaves rank %d's %llu-byte "
                                "segment",
                                (unsigned long long)nbytes, (unsigned long long)sp.idx, sp.rank,
                                (unsigned long long)size);
        *result_p = p + nbytes;
        return GAS_OK;
    }
    const gas_layout_t *l = sp.l;
    uint64_t idx = sp.idx;
    if (nbytes > l->nbytes - idx)
        return gas_rt_error(GAS_ERR_BOUNDS, "gas_ptr_add",
                            "moving %llu bytes from byte %llu leaves the %llu-byte array",
                            (unsigned long long)nbytes, (unsigned long long)idx,
                            (unsigned long long)l->nbytes);
    *result_p = gas_layout_ptr(l, idx + nbytes);
    return GAS_OK;
}

GAS_EXPORT gas_status_t gas_ptr_add(gas_ptr_t p, uint64_t nbytes, gas_ptr_t *result_p)
{
    GAS_GS_GATED("gas_ptr_add", api_ptr_add(p, nbytes, result_p));
}
