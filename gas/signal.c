/* signal.c - put-with-signal (waiting on the signalled words: ivar.c). */
#include "internal.h"
#include "runtime/wait.h"

#include <stdio.h>

/*
 * Whether the signal word's owner takes it, asked before any of a payload
 * that does not travel with the signal is written.  Needed only for a raw
 * word (gas_alloc side) of an owner this process does not map: gas_gs_resolve
 * checked the others whole, but only the owner knows where its unclaimed
 * middle is (a udp owner refuses a word there).  One round trip (a fetch).
 */
static gas_status_t signal_probe(const char *call, const struct gas_gs_span *ss,
                                 gas_tl_peer_t *speer, uint64_t off)
{
    if (ss->l != NULL || speer->direct_base != NULL)
        return GAS_OK;
    uint64_t old;
    gas_tl_amo_t a = {.op = GAS_AMO_FETCH, .width = 8, .offset = off, .result = &old};
    gas_tl_comp_t comp = {.pending = 1};
    gas_status_t st = gas_tl_amo(speer, &a, &comp, call);
    if (st == GAS_INPROGRESS)
        st = gas_gs_comp_finish(&comp, call);
    return st;
}

/*
 * The payload first, then the signal, ordered so the signal is seen last:
 * one piece on the signal's owner goes as a single put_signal; otherwise the
 * pieces are put, ordered (fence when they all went to the signal's owner,
 * quiet when several owners are involved), and the signal follows as an atomic.
 */
static gas_status_t put_signal(const char *call, gas_ptr_t dst, const void *src, size_t n,
                               gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if (op != GAS_SIGNAL_SET && op != GAS_SIGNAL_ADD)
        return gas_rt_error(GAS_ERR_INVALID, call, "unknown signal operation %d", (int)op);
    if (n > 0 && src == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "the source buffer is NULL (%zu bytes)", n);
    struct gas_gs_span ss, ds = {0};
    if ((st = gas_gs_check_align(call, "signal word", sig, 8)) != GAS_OK)
        return st;
    st = gas_gs_resolve(call, "signal", sig, 8, &ss);
    if (st != GAS_OK)
        return st;
    struct gas_gs_piece sp = gas_gs_piece_at(&ss, ss.idx, 8);
    if (sp.len != 8)
        return gas_rt_error(GAS_ERR_ALIGN, call,
                            "the signal word at rank %d offset %llu spans two owners", sp.rank,
                            (unsigned long long)sp.off);
    if (n > 0 && (st = gas_gs_resolve(call, "destination", dst, n, &ds)) != GAS_OK)
        return st;
    uint64_t didx = ds.idx;
    gas_tl_peer_t *speer;
    if ((st = gas_gs_peer(call, sp.rank, &speer)) != GAS_OK)
        return st;
    if (n > 0) {
        struct gas_gs_piece first = gas_gs_piece_at(&ds, didx, n);
        if (first.len == n && first.rank == sp.rank) {
            st = gas_tl_put_signal(speer, first.off, src, n, sp.off, value, op, NULL, call);
            if (st != GAS_ERR_UNSUPPORTED)
                return st == GAS_INPROGRESS ? GAS_OK : st;
        }
        /* The signal goes apart from the payload: a signal word its owner
         * refuses must fail the call before the payload is written. */
        if ((st = signal_probe(call, &ss, speer, sp.off)) != GAS_OK)
            return st;
        int others = 0;
        const char *b = src;
        for (uint64_t left = n, i = didx; left > 0;) {
            struct gas_gs_piece pc = gas_gs_piece_at(&ds, i, left);
            gas_tl_peer_t *peer;
            if ((st = gas_gs_peer(call, pc.rank, &peer)) != GAS_OK)
                return st;
            st = gas_tl_put(peer, pc.off, b, pc.len, NULL, call);
            if (st < 0)
                return st;
            others |= pc.rank != sp.rank;
            b += pc.len;
            i += pc.len;
            left -= pc.len;
        }
        st = others ? gas_tl_quiet_all(call) : gas_tl_fence_all();
        if (st != GAS_OK)
            return st;
    }
    gas_tl_amo_t a = {.op = op == GAS_SIGNAL_ADD ? GAS_AMO_ADD : GAS_AMO_SET, .width = 8,
                      .offset = sp.off, .operand = value};
    st = gas_tl_amo(speer, &a, NULL, call);
    return st == GAS_INPROGRESS ? GAS_OK : st;
}

/* put_signal with every wait of the call (room, the probe, ordering) within one GAS_TIMEOUT. */
static gas_status_t put_signal_call(const char *call, gas_ptr_t dst, const void *src, size_t n,
                                    gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    int began = gas_rt_call_begin();
    gas_status_t st = put_signal(call, dst, src, n, sig, value, op);
    gas_rt_call_end(began);
    return st;
}

static gas_status_t api_put_signal(gas_ptr_t dst, const void *src, size_t nbytes,
                                   gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    return put_signal_call("gas_put_signal", dst, src, nbytes, sig, value, op);
}

GAS_EXPORT gas_status_t gas_put_signal(gas_ptr_t dst, const void *src, size_t nbytes,
                                       gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    GAS_GS_GATED("gas_put_signal", api_put_signal(dst, src, nbytes, sig, value, op));
}

static gas_status_t api_put_signal_nbi(gas_ptr_t dst, const void *src, size_t nbytes,
                                       gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    return put_signal_call("gas_put_signal_nbi", dst, src, nbytes, sig, value, op);
}

GAS_EXPORT gas_status_t gas_put_signal_nbi(gas_ptr_t dst, const void *src, size_t nbytes,
                                           gas_ptr_t sig, uint64_t value, gas_signal_op_t op)
{
    GAS_GS_GATED("gas_put_signal_nbi", api_put_signal_nbi(dst, src, nbytes, sig, value, op));
}
