/* rxwin.c - receive-window bookkeeping (see rxwin.h). */
#include "rxwin.h"
#include "seq.h"

#include <stdlib.h>

static int bit_get(const struct gas_udp_rxwin *w, uint32_t seq)
{
    uint32_t i = seq & (w->size - 1);
    return (int)(w->bits[i / 64] >> (i % 64) & 1);
}

static void bit_put(struct gas_udp_rxwin *w, uint32_t seq, int on)
{
    uint32_t i = seq & (w->size - 1);
    if (on)
        w->bits[i / 64] |= 1ull << (i % 64);
    else
        w->bits[i / 64] &= ~(1ull << (i % 64));
}

int gas_udp_rxwin_init(struct gas_udp_rxwin *w, uint32_t isn, uint32_t size)
{
    uint32_t s = 64;
    while (s < size && s < (1u << 20))
        s <<= 1;
    w->next = isn;
    w->size = s;
    w->bits = calloc(s / 64, sizeof *w->bits);
    return w->bits ? 0 : -1;
}

void gas_udp_rxwin_fini(struct gas_udp_rxwin *w)
{
    free(w->bits);
    w->bits = NULL;
}

enum gas_udp_rx_verdict gas_udp_rxwin_classify(const struct gas_udp_rxwin *w, uint32_t seq)
{
    if (gas_udp_seq_lt(seq, w->next))
        return GAS_UDP_RX_DUP;
    uint32_t d = seq - w->next;
    if (d >= w->size)
        return GAS_UDP_RX_BEYOND;
    if (d == 0)
        return GAS_UDP_RX_NEXT;
    return bit_get(w, seq) ? GAS_UDP_RX_DUP : GAS_UDP_RX_AHEAD;
}

void gas_udp_rxwin_hold(struct gas_udp_rxwin *w, uint32_t seq)
{
    bit_put(w, seq, 1);
}

int gas_udp_rxwin_pop(struct gas_udp_rxwin *w, uint32_t *seq_p)
{
    if (!bit_get(w, w->next))
        return 0;
    bit_put(w, w->next, 0);
    *seq_p = w->next;
    return 1;
}

uint64_t gas_udp_rxwin_sack(const struct gas_udp_rxwin *w)
{
    uint64_t sack = 0;
    uint32_t n = w->size - 1 < 64 ? w->size - 1 : 64;
    for (uint32_t i = 0; i < n; i++)
        if (bit_get(w, w->next + 1 + i))
            sack |= 1ull << i;
    return sack;
}
