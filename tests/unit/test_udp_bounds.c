/*
 * The target's range check on offsets and lengths from the wire: no
 * combination near 2^64 may pass by overflowing, the header page is never
 * reachable, and atomic words must be aligned and of width 4 or 8.
 */
#include "transport/udp/bounds.h"
#include "unit.h"

#include <stdint.h>

int main(void)
{
    const uint64_t lo = 4096, size = 1ull << 30, M = UINT64_MAX;
    UCHECK(gas_udp_range_ok(lo, 1, lo, size), "first usable byte");
    UCHECK(gas_udp_range_ok(lo, size - lo, lo, size), "everything usable");
    UCHECK(gas_udp_range_ok(size - 1, 1, lo, size), "last byte");
    UCHECK(gas_udp_range_ok(size, 0, lo, size), "empty range at the end");
    UCHECK(!gas_udp_range_ok(size - 1, 2, lo, size), "one past the end");
    UCHECK(!gas_udp_range_ok(size, 1, lo, size), "at the end");
    UCHECK(!gas_udp_range_ok(lo - 1, 1, lo, size), "header page");
    UCHECK(!gas_udp_range_ok(0, 8, lo, size), "offset 0");
    /* Sums that wrap past 2^64 must not look small. */
    UCHECK(!gas_udp_range_ok(M, 1, lo, size), "M + 1 wraps to 0");
    UCHECK(!gas_udp_range_ok(lo, M, lo, size), "len M");
    UCHECK(!gas_udp_range_ok(lo + 8, M - 7, lo, size), "off + len wraps to lo");
    UCHECK(!gas_udp_range_ok(1ull << 63, 1ull << 63, lo, size), "2^63 + 2^63 wraps to 0");
    UCHECK(!gas_udp_range_ok(M - 15, 32, lo, size), "near 2^64, wrapping");
    UCHECK(!gas_udp_range_ok(M, 0, lo, M - 1), "off above size, len 0");
    UCHECK(gas_udp_range_ok(M - 8, 8, lo, M), "a segment reaching 2^64 - 1");
    UCHECK(!gas_udp_range_ok(M - 8, 9, lo, M), "one past such a segment");
    unsigned long long s = 7;
    for (int i = 0; i < 100000; i++) {
        uint64_t off = unit_rand(&s), len = unit_rand(&s) >> (unit_rand(&s) % 64);
        int ok = gas_udp_range_ok(off, len, lo, size);
        /* The same question in 128-bit arithmetic. */
        unsigned __int128 end = (unsigned __int128)off + len;
        int want = off >= lo && end <= size;
        UCHECK(ok == want, "off %#llx len %#llx: %d, want %d", (unsigned long long)off,
               (unsigned long long)len, ok, want);
    }
    UCHECK(gas_udp_word_ok(lo, 8, lo, size) && gas_udp_word_ok(lo + 4, 4, lo, size), "aligned words");
    UCHECK(!gas_udp_word_ok(lo + 4, 8, lo, size), "misaligned 8");
    UCHECK(!gas_udp_word_ok(lo + 2, 4, lo, size), "misaligned 4");
    UCHECK(!gas_udp_word_ok(lo, 2, lo, size) && !gas_udp_word_ok(lo, 16, lo, size), "bad widths");
    UCHECK(!gas_udp_word_ok(size - 4, 8, lo, size), "straddles the end");
    UCHECK(!gas_udp_word_ok(M - 7, 8, lo, size), "near 2^64");
    return unit_finish("test_udp_bounds");
}
