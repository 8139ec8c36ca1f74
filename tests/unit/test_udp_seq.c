/*
 * udp sequence numbers and the receive window: serial-number comparisons
 * across the 2^32 wrap, and a receive window that holds early datagrams,
 * drops duplicates and delivers a shuffled, duplicated stream exactly once
 * and in order, with selective-ack bits that match what it holds, while the
 * numbers wrap.
 */
#include "transport/udp/rxwin.h"
#include "transport/udp/seq.h"
#include "unit.h"

#include <stdint.h>
#include <string.h>

static void serial_arithmetic(void)
{
    UCHECK(gas_udp_seq_lt(1, 2) && !gas_udp_seq_lt(2, 1) && !gas_udp_seq_lt(5, 5), "plain lt");
    UCHECK(gas_udp_seq_lt(0xffffffffu, 0), "0xffffffff precedes 0 (wrap)");
    UCHECK(gas_udp_seq_lt(0xfffff000u, 5), "ISN precedes 5");
    UCHECK(!gas_udp_seq_lt(5, 0xfffff000u), "5 follows ISN");
    UCHECK(gas_udp_seq_gt(3, 0xfffffffeu) && gas_udp_seq_ge(3, 3) && gas_udp_seq_le(0xfffffffeu, 3),
           "gt/ge/le across the wrap");
    UCHECK(gas_udp_seq_diff(2, 0xffffffffu) == 3, "diff across the wrap: %d", gas_udp_seq_diff(2, 0xffffffffu));
    UCHECK(gas_udp_seq_diff(0xffffffffu, 2) == -3, "negative diff across the wrap");
    UCHECK(gas_udp_seq_lt(0, 0x7fffffffu) && gas_udp_seq_lt(0x80000001u, 0), "half-range edges");
    UCHECK(GAS_UDP_SEQ_ISN + 4096u == 0, "streams start 4096 before the wrap");
    for (uint32_t base = 0xffffff00u, i = 0; i < 512; i++) {
        uint32_t a = base + i, b = a + 1 + i;
        UCHECK(gas_udp_seq_lt(a, b) && gas_udp_seq_gt(b, a), "a=%u b=%u", a, b);
    }
}

static void window_basics(void)
{
    struct gas_udp_rxwin w;
    UCHECK(gas_udp_rxwin_init(&w, 0xfffffffeu, 64) == 0, "init");
    UCHECK(w.size == 64, "size %u", w.size);
    UCHECK(gas_udp_rxwin_classify(&w, 0xfffffffeu) == GAS_UDP_RX_NEXT, "next");
    UCHECK(gas_udp_rxwin_classify(&w, 0xfffffffdu) == GAS_UDP_RX_DUP, "before next: dup");
    UCHECK(gas_udp_rxwin_classify(&w, 0) == GAS_UDP_RX_AHEAD, "0 is ahead across the wrap");
    UCHECK(gas_udp_rxwin_classify(&w, 0xfffffffeu + 64) == GAS_UDP_RX_BEYOND, "window edge");
    UCHECK(gas_udp_rxwin_classify(&w, 0xfffffffeu + 63) == GAS_UDP_RX_AHEAD, "last in window");
    gas_udp_rxwin_hold(&w, 0);
    gas_udp_rxwin_hold(&w, 1);
    UCHECK(gas_udp_rxwin_classify(&w, 0) == GAS_UDP_RX_DUP, "held twice: dup");
    /* next = fffffffe; 0 = next + 2 (bit 1), 1 = next + 3 (bit 2) */
    UCHECK(gas_udp_rxwin_sack(&w) == 0x6, "sack %#llx", (unsigned long long)gas_udp_rxwin_sack(&w));
    uint32_t s;
    UCHECK(!gas_udp_rxwin_pop(&w, &s), "nothing to pop before the gap fills");
    gas_udp_rxwin_step(&w); /* deliver fffffffe */
    UCHECK(w.next == 0xffffffffu && !gas_udp_rxwin_pop(&w, &s), "gap at ffffffff");
    UCHECK(gas_udp_rxwin_sack(&w) == 0x3, "sack after step %#llx", (unsigned long long)gas_udp_rxwin_sack(&w));
    UCHECK(gas_udp_rxwin_classify(&w, 0xffffffffu) == GAS_UDP_RX_NEXT, "gap is next");
    gas_udp_rxwin_step(&w);
    /* A popped number stays `next` while it is delivered, until the step. */
    UCHECK(gas_udp_rxwin_pop(&w, &s) && s == 0 && w.next == 0, "pop 0 (next %u)", w.next);
    gas_udp_rxwin_step(&w);
    UCHECK(gas_udp_rxwin_pop(&w, &s) && s == 1 && w.next == 1, "pop 1 (next %u)", w.next);
    gas_udp_rxwin_step(&w);
    UCHECK(!gas_udp_rxwin_pop(&w, &s) && w.next == 2, "next is 2 (%u)", w.next);
    UCHECK(gas_udp_rxwin_sack(&w) == 0, "nothing held");
    UCHECK(gas_udp_rxwin_classify(&w, 0xffffffffu) == GAS_UDP_RX_DUP, "old: dup");
    UCHECK(gas_udp_rxwin_classify(&w, 1) == GAS_UDP_RX_DUP, "delivered: dup");
    gas_udp_rxwin_fini(&w);
    UCHECK(gas_udp_rxwin_init(&w, 0, 1000) == 0 && w.size == 1024, "rounded to a power of two");
    gas_udp_rxwin_fini(&w);
}

/* A sender's stream, shuffled within the window and duplicated, delivered
 * through the window must come out whole, once and in order. */
static void window_stream(uint32_t isn, uint32_t size, uint32_t count, unsigned long long seed)
{
    struct gas_udp_rxwin w;
    UCHECK(gas_udp_rxwin_init(&w, isn, size) == 0, "init");
    uint32_t *order = malloc(sizeof *order * count * 2);
    uint32_t n = 0;
    /* Arrivals: in blocks of size/2, shuffled, with 10% sent again later. */
    for (uint32_t b = 0; b < count; b += size / 2) {
        uint32_t len = count - b < size / 2 ? count - b : size / 2;
        uint32_t first = n;
        for (uint32_t i = 0; i < len; i++)
            order[n++] = b + i;
        for (uint32_t i = len; i > 1; i--) {
            uint32_t j = (uint32_t)(unit_rand(&seed) % i);
            uint32_t t = order[first + i - 1];
            order[first + i - 1] = order[first + j];
            order[first + j] = t;
        }
        for (uint32_t i = 0; i < len / 10; i++)
            order[n++] = order[first + (uint32_t)(unit_rand(&seed) % len)];
    }
    uint32_t delivered = 0, dups = 0, beyond = 0, bad_order = 0, bad_sack = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t seq = isn + order[k];
        switch (gas_udp_rxwin_classify(&w, seq)) {
        case GAS_UDP_RX_NEXT: {
            bad_order += seq != isn + delivered;
            delivered++;
            gas_udp_rxwin_step(&w);
            uint32_t s;
            while (gas_udp_rxwin_pop(&w, &s)) {
                bad_order += s != isn + delivered || w.next != s;
                delivered++;
                gas_udp_rxwin_step(&w);
            }
            break;
        }
        case GAS_UDP_RX_AHEAD:
            gas_udp_rxwin_hold(&w, seq);
            break;
        case GAS_UDP_RX_DUP: dups++; break;
        case GAS_UDP_RX_BEYOND: beyond++; break;
        }
        uint64_t sack = gas_udp_rxwin_sack(&w);
        for (unsigned i = 0; i < 64 && i + 1 < w.size; i++) {
            enum gas_udp_rx_verdict v = gas_udp_rxwin_classify(&w, w.next + 1 + i);
            bad_sack += ((sack >> i) & 1) != (v == GAS_UDP_RX_DUP);
        }
    }
    UCHECK(delivered == count, "delivered %u of %u (isn %#x)", delivered, count, isn);
    UCHECK(bad_order == 0, "%u out of order", bad_order);
    UCHECK(bad_sack == 0, "%u sack bits wrong", bad_sack);
    UCHECK(dups == n - count, "dups %u, expected %u", dups, n - count);
    UCHECK(beyond == 0, "%u beyond the window", beyond);
    UCHECK(w.next == isn + count, "next %#x", w.next);
    free(order);
    gas_udp_rxwin_fini(&w);
}

int main(void)
{
    serial_arithmetic();
    window_basics();
    window_stream(GAS_UDP_SEQ_ISN, 64, 20000, 1);
    window_stream(0xffffff80u, 1024, 50000, 2);
    window_stream(0x7fffff00u, 256, 10000, 3);
    return unit_finish("test_udp_seq");
}
