/*
 * strided.c - element-strided put and get (OpenSHMEM iput/iget).  The whole
 * extent is validated before any element moves; each element then goes as
 * one or more pieces along the array's layout.
 */
#include "internal.h"
#include "runtime/wait.h"

enum { STRIDE_PUT, STRIDE_GET };

static gas_status_t strided(const char *call, int dir, gas_ptr_t gp, char *buf,
                            size_t remote_stride, size_t local_stride, size_t elem,
                            size_t nelems)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK || nelems == 0 || elem == 0)
        return st;
    if (buf == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "the local buffer is NULL");
    if (remote_stride == 0 || local_stride == 0)
        return gas_rt_error(GAS_ERR_INVALID, call, "strides must be at least 1 (got %zu and %zu)",
                            remote_stride, local_stride);
    uint64_t last = (uint64_t)nelems - 1;
    if (remote_stride > UINT64_MAX / elem || last > (UINT64_MAX - elem) / (remote_stride * elem) ||
        local_stride > UINT64_MAX / elem || last > (UINT64_MAX - elem) / (local_stride * elem))
        return gas_rt_error(GAS_ERR_OVERFLOW, call,
                            "%zu elements of %zu bytes at strides %zu/%zu overflow 64 bits",
                            nelems, elem, remote_stride, local_stride);
    uint64_t rstep = remote_stride * elem, lstep = local_stride * elem;
    struct gas_gs_span sp;
    st = gas_gs_resolve(call, dir == STRIDE_PUT ? "destination" : "source", gp,
                        last * rstep + elem, &sp);
    if (st != GAS_OK)
        return st;
    uint64_t idx = sp.idx;
    gas_tl_comp_t comp = {0};
    for (size_t k = 0; k < nelems && st == GAS_OK; k++) {
        uint64_t i = idx + k * rstep, left = elem;
        char *b = buf + k * lstep;
        while (left > 0 && st == GAS_OK) {
            struct gas_gs_piece pc = gas_gs_piece_at(&sp, i, left);
            gas_tl_peer_t *peer;
            st = gas_gs_peer(call, pc.rank, &peer);
            if (st != GAS_OK)
                break;
            atomic_fetch_add_explicit(&comp.pending, 1, memory_order_relaxed);
            st = dir == STRIDE_PUT ? gas_tl_put(peer, pc.off, b, pc.len, NULL, call)
                                   : gas_tl_get(peer, b, pc.off, pc.len, &comp, call);
            if (dir == STRIDE_PUT || st != GAS_INPROGRESS)
                atomic_fetch_sub_explicit(&comp.pending, 1, memory_order_release);
            if (st == GAS_INPROGRESS)
                st = GAS_OK;
            b += pc.len;
            i += pc.len;
            left -= pc.len;
        }
    }
    gas_status_t wst = gas_gs_comp_finish(&comp, call);
    return st != GAS_OK ? st : wst;
}

/* strided() with every wait of the call (room to send, then the answers) within one GAS_TIMEOUT. */
static gas_status_t strided_call(const char *call, int dir, gas_ptr_t gp, char *buf,
                                 size_t remote_stride, size_t local_stride, size_t elem,
                                 size_t nelems)
{
    int began = gas_rt_call_begin();
    gas_status_t st = strided(call, dir, gp, buf, remote_stride, local_stride, elem, nelems);
    gas_rt_call_end(began);
    return st;
}

static gas_status_t api_iput(gas_ptr_t dst, const void *src, size_t dst_stride,
                             size_t src_stride, size_t elem_size, size_t nelems)
{
    return strided_call("gas_iput", STRIDE_PUT, dst, (char *)src, dst_stride, src_stride,
                        elem_size, nelems);
}

GAS_EXPORT gas_status_t gas_iput(gas_ptr_t dst, const void *src, size_t dst_stride,
                                 size_t src_stride, size_t elem_size, size_t nelems)
{
    GAS_GS_GATED("gas_iput", api_iput(dst, src, dst_stride, src_stride, elem_size, nelems));
}

static gas_status_t api_iget(void *dst, gas_ptr_t src, size_t dst_stride, size_t src_stride,
                             size_t elem_size, size_t nelems)
{
    return strided_call("gas_iget", STRIDE_GET, src, dst, src_stride, dst_stride, elem_size,
                        nelems);
}

GAS_EXPORT gas_status_t gas_iget(void *dst, gas_ptr_t src, size_t dst_stride, size_t src_stride,
                                 size_t elem_size, size_t nelems)
{
    GAS_GS_GATED("gas_iget", api_iget(dst, src, dst_stride, src_stride, elem_size, nelems));
}
