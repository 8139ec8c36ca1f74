/*
 * imm.h - DQPLB immediate data and its reassembly (after the NCCLX paper's
 * "DQPLB": several QPs per peer, order restored at the target).
 *
 * Every piece of a signalled put is a WRITE_WITH_IMM whose 32-bit immediate
 * carries a per-(initiator, target) sequence number in bits 0..30 and, in
 * bit 31, the notify flag of the piece that ends the put.  The pieces go
 * over different QPs and may complete at the target in any order; the
 * target marks each arrival in a window and releases them in sequence, so a
 * notify is acted on only once every earlier piece, over any QP, arrived.
 * Sequence numbers wrap at 2^31 (serial-number arithmetic).
 */
#ifndef GAS_RDMA_IMM_H
#define GAS_RDMA_IMM_H

#include <stdint.h>
#include <string.h>

#define GAS_RDMA_SEQ_MASK 0x7fffffffu
#define GAS_RDMA_IMM_NOTIFY 0x80000000u
#define GAS_RDMA_REASM_WIN 1024u /* pieces a target can hold out of order, per initiator */

static inline uint32_t gas_rdma_imm_encode(uint32_t seq, int notify)
{
    return (seq & GAS_RDMA_SEQ_MASK) | (notify ? GAS_RDMA_IMM_NOTIFY : 0);
}
static inline uint32_t gas_rdma_imm_seq(uint32_t imm) { return imm & GAS_RDMA_SEQ_MASK; }
static inline int gas_rdma_imm_notify(uint32_t imm) { return (imm & GAS_RDMA_IMM_NOTIFY) != 0; }
/* b - a in sequence space (the distance from a forward to b). */
static inline uint32_t gas_rdma_seq_dist(uint32_t a, uint32_t b) { return (b - a) & GAS_RDMA_SEQ_MASK; }

typedef struct gas_rdma_reasm {
    uint32_t next;                               /* the next sequence number to release */
    uint64_t have[GAS_RDMA_REASM_WIN / 64];      /* arrived, by seq % WIN */
    uint64_t notify[GAS_RDMA_REASM_WIN / 64];
} gas_rdma_reasm_t;

static inline void gas_rdma_reasm_init(gas_rdma_reasm_t *r, uint32_t first)
{
    memset(r, 0, sizeof *r);
    r->next = first & GAS_RDMA_SEQ_MASK;
}

/* Record an arrival: 0, or -1 when it lies outside the window or arrived twice. */
static inline int gas_rdma_reasm_arrive(gas_rdma_reasm_t *r, uint32_t imm)
{
    uint32_t seq = gas_rdma_imm_seq(imm);
    if (gas_rdma_seq_dist(r->next, seq) >= GAS_RDMA_REASM_WIN)
        return -1;
    uint32_t i = seq % GAS_RDMA_REASM_WIN;
    uint64_t bit = 1ull << (i % 64);
    if (r->have[i / 64] & bit)
        return -1;
    r->have[i / 64] |= bit;
    if (gas_rdma_imm_notify(imm))
        r->notify[i / 64] |= bit;
    return 0;
}

/* Release the next piece in order: 1 with its seq and notify flag, 0 when it has not arrived. */
static inline int gas_rdma_reasm_pop(gas_rdma_reasm_t *r, uint32_t *seq_p, int *notify_p)
{
    uint32_t i = r->next % GAS_RDMA_REASM_WIN;
    uint64_t bit = 1ull << (i % 64);
    if (!(r->have[i / 64] & bit))
        return 0;
    *seq_p = r->next;
    *notify_p = (r->notify[i / 64] & bit) != 0;
    r->have[i / 64] &= ~bit;
    r->notify[i / 64] &= ~bit;
    r->next = (r->next + 1) & GAS_RDMA_SEQ_MASK;
    return 1;
}

#endif
