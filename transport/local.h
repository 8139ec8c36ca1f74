/*
 * local.h - operations on memory this process can load and store (its own
 * segment or a mapped node peer's): the one definition of how an atomic or a
 * signal is applied, shared by shm (the initiator applies it) and by udp (the
 * target applies what arrives), so atomics on a location are the same CPU
 * atomics whichever path issued them.
 */
#ifndef GAS_TL_LOCAL_H
#define GAS_TL_LOCAL_H

#include <gas.h>
#include <stdatomic.h>
#include <stdint.h>

#define GAS_TL_AMO_APPLY_(T, addr, op, operand, compare, old)                              \
    do {                                                                                  \
        T *x_ = (T *)(void *)(addr);                                                      \
        T v_ = (T)(operand);                                                              \
        switch (op) {                                                                     \
        case GAS_AMO_FETCH: old = __atomic_load_n(x_, __ATOMIC_SEQ_CST); break;            \
        case GAS_AMO_SET: __atomic_store_n(x_, v_, __ATOMIC_SEQ_CST); old = 0; break;      \
        case GAS_AMO_SWAP: old = __atomic_exchange_n(x_, v_, __ATOMIC_SEQ_CST); break;     \
        case GAS_AMO_CSWAP: {                                                             \
            T c_ = (T)(compare);                                                          \
            __atomic_compare_exchange_n(x_, &c_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            old = c_;                                                                     \
            break;                                                                        \
        }                                                                                 \
        case GAS_AMO_ADD:                                                                 \
        case GAS_AMO_FETCH_ADD: old = __atomic_fetch_add(x_, v_, __ATOMIC_SEQ_CST); break; \
        case GAS_AMO_AND:                                                                 \
        case GAS_AMO_FETCH_AND: old = __atomic_fetch_and(x_, v_, __ATOMIC_SEQ_CST); break; \
        case GAS_AMO_OR:                                                                  \
        case GAS_AMO_FETCH_OR: old = __atomic_fetch_or(x_, v_, __ATOMIC_SEQ_CST); break;   \
        case GAS_AMO_XOR:                                                                 \
        case GAS_AMO_FETCH_XOR: old = __atomic_fetch_xor(x_, v_, __ATOMIC_SEQ_CST); break; \
        default: old = 0; break;                                                          \
        }                                                                                 \
    } while (0)

/* Apply one atomic to the naturally aligned width-byte word at addr; the old value. */
static inline uint64_t gas_tl_amo_apply(char *addr, gas_amo_op_t op, unsigned width,
                                        uint64_t operand, uint64_t compare)
{
    if (width == 4) {
        uint32_t o;
        GAS_TL_AMO_APPLY_(uint32_t, addr, op, operand, compare, o);
        return o;
    }
    uint64_t o;
    GAS_TL_AMO_APPLY_(uint64_t, addr, op, operand, compare, o);
    return o;
}

/*
 * Update the 64-bit signal word at sig after a payload was stored: the full
 * fence also orders the non-temporal stores a large memcpy may have used.
 */
static inline void gas_tl_signal_apply(char *sig, uint64_t value, gas_signal_op_t op)
{
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t *w = (uint64_t *)(void *)sig;
    if (op == GAS_SIGNAL_ADD)
        __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
    else
        __atomic_store_n(w, value, __ATOMIC_SEQ_CST);
}

#endif
