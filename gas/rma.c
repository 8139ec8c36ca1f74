/*
 * rma.c - put and get in their blocking, explicit-handle and implicit forms.
 * A transfer is validated whole first (nothing moves on a bad range), then
 * cut into one piece per owner chunk along the array's layout.
 */
#include "internal.h"
#include "runtime/wait.h"

#include <stdio.h>
#include <stdlib.h>

enum xfer_kind { XFER_PUT, XFER_GET };

static int comp_done(void *arg)
{
    return atomic_load_explicit(&((gas_tl_comp_t *)arg)->pending, memory_order_acquire) == 0;
}

gas_status_t gas_gs_comp_status(gas_tl_comp_t *comp, const char *call)
{
    gas_status_t st = (gas_status_t)atomic_load(&comp->status);
    if (st == GAS_OK)
        return GAS_OK;
    int r = atomic_load(&comp->err_rank);
    if (st == GAS_ERR_PEER && r >= 0 && gas_tl_first_lost(&r, 1) >= 0)
        return gas_gs_lost_error(call, gas_tl_first_lost(&r, 1),
                                 "the operation failed on its path there");
    if (comp->err_len)
        return gas_rt_error(st, call, "rank %d refused the operation at its offset %llu (%llu "
                            "bytes): %s", r, (unsigned long long)comp->err_off,
                            (unsigned long long)comp->err_len, gas_strerror(st));
    return gas_rt_error(st, call, "the operation failed on its path to rank %d: %s", r,
                        gas_strerror(st));
}

gas_status_t gas_gs_comp_wait(gas_tl_comp_t *comp, const char *call)
{
    if (!comp_done(comp)) {   /* (the name of the wait is made only when it waits) */
        char what[64];
        int who = atomic_load_explicit(&comp->who, memory_order_relaxed);
        if (who > 0)
            snprintf(what, sizeof what, "completion of the operation on rank %d", who - 1);
        else
            snprintf(what, sizeof what, "completion of the operation%s",
                     who < 0 ? " on several ranks" : "");
        gas_status_t st = gas_rt_wait(comp_done, comp, NULL, call, what);
        if (st != GAS_OK)
            return st;
    }
    return gas_gs_comp_status(comp, call);
}

gas_status_t gas_gs_comp_finish(gas_tl_comp_t *comp, const char *call)
{
    gas_status_t st = gas_gs_comp_wait(comp, call);
    if (atomic_load_explicit(&comp->pending, memory_order_acquire) != 0)
        gas_tl_forget(comp);   /* gave up (GAS_TIMEOUT): nothing may land after the return */
    return st;
}

gas_status_t gas_gs_peer(const char *call, int rank, gas_tl_peer_t **peer_p)
{
    int lost = rank != gas_gs.rank ? gas_tl_first_lost(&rank, 1) : -1;
    if (lost >= 0) {   /* rank, or this rank when it was itself declared dead */
        char what[48];
        snprintf(what, sizeof what, "nothing was sent to rank %d", rank);
        return gas_gs_lost_error(call, lost, what);
    }
    return gas_tl_peer_for(call, rank, peer_p);
}

/* Validate and issue every piece; pieces that return INPROGRESS are counted in comp. */
static gas_status_t xfer(const char *call, enum xfer_kind kind, gas_ptr_t gp, void *buf,
                         size_t n, gas_tl_comp_t *comp)
{
    gas_rt_tick();
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK || n == 0)
        return st;
    if (buf == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "the %s buffer is NULL (%zu bytes)",
                            kind == XFER_PUT ? "source" : "destination", n);
    struct gas_gs_span sp;
    st = gas_gs_resolve(call, kind == XFER_PUT ? "destination" : "source", gp, n, &sp);
    if (st != GAS_OK)
        return st;
    uint64_t idx = sp.idx;
    char *b = buf;
    uint64_t left = n;
    while (left > 0) {
        struct gas_gs_piece pc = gas_gs_piece_at(&sp, idx, left);
        gas_tl_peer_t *peer;
        st = gas_gs_peer(call, pc.rank, &peer);
        if (st != GAS_OK)
            return st;
        if (comp)
            atomic_fetch_add_explicit(&comp->pending, 1, memory_order_relaxed);
        st = kind == XFER_PUT ? gas_tl_put(peer, pc.off, b, pc.len, comp, call)
                              : gas_tl_get(peer, b, pc.off, pc.len, comp, call);
        if (st != GAS_INPROGRESS && comp)
            atomic_fetch_sub_explicit(&comp->pending, 1, memory_order_release);
        if (st < 0)
            return st;
        b += pc.len;
        idx += pc.len;
        left -= pc.len;
    }
    return GAS_OK;
}

/* A put or an _nbi transfer: every wait of it (for room to send) within one GAS_TIMEOUT. */
static gas_status_t xfer_call(const char *call, enum xfer_kind kind, gas_ptr_t gp, void *buf,
                              size_t n)
{
    int began = gas_rt_call_begin();
    gas_status_t st = xfer(call, kind, gp, buf, n, NULL);
    gas_rt_call_end(began);
    return st;
}

static gas_status_t api_put(gas_ptr_t dst, const void *src, size_t nbytes)
{
    /* Returns once the source is reusable: every transport copies or sends it in-call. */
    return xfer_call("gas_put", XFER_PUT, dst, (void *)src, nbytes);
}

GAS_EXPORT gas_status_t gas_put(gas_ptr_t dst, const void *src, size_t nbytes)
{
    GAS_GS_GATED("gas_put", api_put(dst, src, nbytes));
}

static gas_status_t api_get(void *dst, gas_ptr_t src, size_t nbytes)
{
    gas_tl_comp_t comp = {0};
    int began = gas_rt_call_begin();   /* issuing and completing: one GAS_TIMEOUT */
    gas_status_t st = xfer("gas_get", XFER_GET, src, dst, nbytes, &comp);
    /* (pieces issued before a failing one are finished, or forgotten, first) */
    gas_status_t wst = gas_gs_comp_finish(&comp, "gas_get");
    gas_rt_call_end(began);
    return st != GAS_OK ? st : wst;
}

GAS_EXPORT gas_status_t gas_get(void *dst, gas_ptr_t src, size_t nbytes)
{
    GAS_GS_GATED("gas_get", api_get(dst, src, nbytes));
}

static gas_status_t api_put_nbi(gas_ptr_t dst, const void *src, size_t nbytes)
{
    return xfer_call("gas_put_nbi", XFER_PUT, dst, (void *)src, nbytes);
}

GAS_EXPORT gas_status_t gas_put_nbi(gas_ptr_t dst, const void *src, size_t nbytes)
{
    GAS_GS_GATED("gas_put_nbi", api_put_nbi(dst, src, nbytes));
}

static gas_status_t api_get_nbi(void *dst, gas_ptr_t src, size_t nbytes)
{
    return xfer_call("gas_get_nbi", XFER_GET, src, dst, nbytes);
}

GAS_EXPORT gas_status_t gas_get_nbi(void *dst, gas_ptr_t src, size_t nbytes)
{
    GAS_GS_GATED("gas_get_nbi", api_get_nbi(dst, src, nbytes));
}

/*
 * Start an explicit-handle transfer; a handle exists only while work is
 * pending.  *handle_p is GAS_HANDLE_NULL unless it returns GAS_OK with work
 * pending, so a failed call leaves a handle that gas_wait completes at once.
 */
static gas_status_t start_nb(const char *call, enum xfer_kind kind, gas_ptr_t gp, void *buf,
                             size_t n, gas_handle_t *handle_p)
{
    if (handle_p == NULL) {
        gas_status_t st = gas_gs_check(call);
        return st != GAS_OK ? st : gas_rt_error(GAS_ERR_INVALID, call, "handle_p is NULL");
    }
    *handle_p = GAS_HANDLE_NULL;
    struct gas_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return gas_rt_error(GAS_ERR_NOMEM, call, "no memory for an operation handle");
    gas_status_t st = xfer(call, kind, gp, buf, n, &op->comp);
    if (st != GAS_OK && atomic_load(&op->comp.pending) == 0) {
        free(op);
        return st;
    }
    if (st != GAS_OK) {
        /* Pieces already in flight: finish (or forget) them before reporting the error. */
        gas_gs_comp_finish(&op->comp, call);
        free(op);
        return st;
    }
    if (atomic_load_explicit(&op->comp.pending, memory_order_acquire) == 0) {
        st = gas_gs_comp_status(&op->comp, call);
        free(op);
        return st;
    }
    *handle_p = op;
    return GAS_OK;
}

static gas_status_t api_put_nb(gas_ptr_t dst, const void *src, size_t nbytes,
                               gas_handle_t *handle_p)
{
    int began = gas_rt_call_begin();
    gas_status_t st = start_nb("gas_put_nb", XFER_PUT, dst, (void *)src, nbytes, handle_p);
    gas_rt_call_end(began);
    return st;
}

GAS_EXPORT gas_status_t gas_put_nb(gas_ptr_t dst, const void *src, size_t nbytes,
                                   gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_put_nb", api_put_nb(dst, src, nbytes, handle_p));
}

static gas_status_t api_get_nb(void *dst, gas_ptr_t src, size_t nbytes,
                               gas_handle_t *handle_p)
{
    int began = gas_rt_call_begin();
    gas_status_t st = start_nb("gas_get_nb", XFER_GET, src, dst, nbytes, handle_p);
    gas_rt_call_end(began);
    return st;
}

GAS_EXPORT gas_status_t gas_get_nb(void *dst, gas_ptr_t src, size_t nbytes,
                                   gas_handle_t *handle_p)
{
    GAS_GS_GATED("gas_get_nb", api_get_nb(dst, src, nbytes, handle_p));
}

static gas_status_t api_wait(gas_handle_t handle)
{
    gas_status_t st = gas_gs_check("gas_wait");
    if (st != GAS_OK || handle == GAS_HANDLE_NULL)
        return st;
    if (handle->complete) {
        int done = 0;
        return handle->complete(handle, 1, &done);
    }
    st = gas_gs_comp_wait(&handle->comp, "gas_wait");
    if (st == GAS_ERR_TIMEOUT)
        return st; /* the handle stays valid: wait again or give up */
    free(handle);
    return st;
}

GAS_EXPORT gas_status_t gas_wait(gas_handle_t handle)
{
    GAS_GS_GATED("gas_wait", api_wait(handle));
}

static gas_status_t api_test(gas_handle_t handle, int *done_p)
{
    gas_status_t st = gas_gs_check("gas_test");
    if (st != GAS_OK)
        return st;
    if (done_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, "gas_test", "done_p is NULL");
    if (handle == GAS_HANDLE_NULL) {
        *done_p = 1;
        return GAS_OK;
    }
    if (handle->complete) {
        st = handle->complete(handle, 0, done_p);
        if (st == GAS_OK && !*done_p)
            gas_rt_poll_idle();
        return st;
    }
    gas_rt_progress();
    if (atomic_load_explicit(&handle->comp.pending, memory_order_acquire) != 0) {
        *done_p = 0;
        gas_rt_poll_idle();
        return GAS_OK;
    }
    st = gas_gs_comp_status(&handle->comp, "gas_test");
    free(handle);
    *done_p = 1;
    return st;
}

GAS_EXPORT gas_status_t gas_test(gas_handle_t handle, int *done_p)
{
    GAS_GS_GATED("gas_test", api_test(handle, done_p));
}
