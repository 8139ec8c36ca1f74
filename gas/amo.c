/* amo.c - remote atomics: validation and dispatch to the owner's route. */
#include "internal.h"
#include "runtime/wait.h"

/*
 * The name errors give a call: the op and width ride along, since most callers
 * reach gas_amo through a typed wrapper (gas_atomic_fetch_add_u64 names
 * itself as "gas_amo (fetch_add, 64-bit)").  Bad op or width: the bare name.
 */
#define AMO_WIDTHS(call, op) {call " (" op ", 32-bit)", call " (" op ", 64-bit)"}
#define AMO_NAMES(call)                                                       \
    {AMO_WIDTHS(call, "fetch"), AMO_WIDTHS(call, "set"),                      \
     AMO_WIDTHS(call, "swap"), AMO_WIDTHS(call, "cswap"),                     \
     AMO_WIDTHS(call, "add"), AMO_WIDTHS(call, "fetch_add"),                  \
     AMO_WIDTHS(call, "and"), AMO_WIDTHS(call, "fetch_and"),                  \
     AMO_WIDTHS(call, "or"), AMO_WIDTHS(call, "fetch_or"),                    \
     AMO_WIDTHS(call, "xor"), AMO_WIDTHS(call, "fetch_xor")}

_Static_assert(GAS_AMO_OP_COUNT == 12, "AMO_NAMES names every gas_amo_op_t, in order");

static const char *amo_call(int nbi, gas_amo_op_t op, unsigned width)
{
    static const char *const names[2][GAS_AMO_OP_COUNT][2] = {AMO_NAMES("gas_amo"),
                                                              AMO_NAMES("gas_amo_nbi")};
    if ((unsigned)op >= GAS_AMO_OP_COUNT || (width != 4 && width != 8))
        return nbi ? "gas_amo_nbi" : "gas_amo";
    return names[nbi][op][width == 8];
}

/* Validate an atomic and find its owner; raises the error for `call`. */
static gas_status_t prepare(const char *call, gas_amo_op_t op, unsigned width, gas_ptr_t p,
                            uint64_t operand, uint64_t compare, uint64_t *result_p,
                            gas_tl_amo_t *a, gas_tl_peer_t **peer_p)
{
    gas_status_t st = gas_gs_check(call);
    if (st != GAS_OK)
        return st;
    if ((unsigned)op >= GAS_AMO_OP_COUNT)
        return gas_rt_error(GAS_ERR_INVALID, call, "unknown atomic operation %d", (int)op);
    if (width != 4 && width != 8)
        return gas_rt_error(GAS_ERR_INVALID, call, "width %u is not 4 or 8 bytes", width);
    if (gas_amo_fetches(op) && result_p == NULL)
        return gas_rt_error(GAS_ERR_INVALID, call, "a fetching atomic needs a result pointer");
    if ((st = gas_gs_check_align(call, "target", p, width)) != GAS_OK)
        return st;
    struct gas_gs_span sp;
    st = gas_gs_resolve(call, "target", p, width, &sp);
    if (st != GAS_OK)
        return st;
    struct gas_gs_piece pc = gas_gs_piece_at(&sp, sp.idx, width);
    if (pc.len != width)
        return gas_rt_error(GAS_ERR_ALIGN, call,
                            "the %u-byte target spans two owners (its first %llu bytes are at "
                            "rank %d offset %llu): the array's layout splits it; an atomic must "
                            "lie within one rank's block",
                            width, (unsigned long long)pc.len, pc.rank, (unsigned long long)pc.off);
    /* Operands travel in 64 bits; a 32-bit atomic uses the low half only. */
    uint64_t mask = width == 4 ? UINT32_MAX : UINT64_MAX;
    *a = (gas_tl_amo_t){.op = op, .width = width, .offset = pc.off, .operand = operand & mask,
                        .compare = compare & mask, .result = result_p};
    return gas_gs_peer(call, pc.rank, peer_p);
}

static gas_status_t api_amo(gas_amo_op_t op, unsigned width, gas_ptr_t p, uint64_t operand,
                            uint64_t compare, uint64_t *result_p)
{
    gas_tl_amo_t a;
    gas_tl_peer_t *peer;
    const char *call = amo_call(0, op, width);
    gas_status_t st = prepare(call, op, width, p, operand, compare, result_p, &a, &peer);
    if (st != GAS_OK)
        return st;
    gas_tl_comp_t comp = {.pending = 1};
    int began = gas_rt_call_begin();   /* issuing (rdma: several work requests) and completing */
    st = gas_tl_amo(peer, &a, &comp, call);
    if (st == GAS_INPROGRESS)
        st = gas_gs_comp_finish(&comp, call);
    else
        gas_rt_tick();
    gas_rt_call_end(began);
    return st;
}

GAS_EXPORT gas_status_t gas_amo(gas_amo_op_t op, unsigned width, gas_ptr_t p, uint64_t operand,
                                uint64_t compare, uint64_t *result_p)
{
    GAS_GS_GATED("gas_amo", api_amo(op, width, p, operand, compare, result_p));
}

static gas_status_t api_amo_nbi(gas_amo_op_t op, unsigned width, gas_ptr_t p,
                                uint64_t operand, uint64_t compare, uint64_t *result_p)
{
    gas_tl_amo_t a;
    gas_tl_peer_t *peer;
    const char *call = amo_call(1, op, width);
    gas_status_t st = prepare(call, op, width, p, operand, compare, result_p, &a, &peer);
    if (st != GAS_OK)
        return st;
    int began = gas_rt_call_begin();
    st = gas_tl_amo(peer, &a, NULL, call);
    gas_rt_call_end(began);
    gas_rt_tick();
    return st == GAS_INPROGRESS ? GAS_OK : st;
}

GAS_EXPORT gas_status_t gas_amo_nbi(gas_amo_op_t op, unsigned width, gas_ptr_t p,
                                    uint64_t operand, uint64_t compare, uint64_t *result_p)
{
    GAS_GS_GATED("gas_amo_nbi", api_amo_nbi(op, width, p, operand, compare, result_p));
}
