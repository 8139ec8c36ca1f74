/*
 * The udp wire format: every record type round-trips through encode and
 * decode; a good datagram passes the checks; truncated datagrams, bad
 * magic, bad version, reserved flags, wrong key, wrong or unknown ranks,
 * malformed records and every single-bit corruption are rejected.  The
 * warnings about such datagrams are rate-limited: the limiter lets one line
 * through per interval and counts the rest.
 */
#include "runtime/log.h"
#include "transport/udp/wire.h"
#include "unit.h"

#include <string.h>

#define KEY 0x0123456789abcdefull
#define NRANKS 4

static size_t build(unsigned char *b, uint32_t src, uint32_t dst, uint64_t key, uint8_t flags)
{
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = flags, .dsack = 3, .key = key,
                            .src = src, .dst = dst, .seq = 0xfffffff0u, .ack = 7,
                            .sack = 0x8000000000000005ull, .cack = 6};
    gas_udp_hdr_write(b, &h);
    size_t len = GAS_UDP_HDR_LEN;
    if (flags & GAS_UDP_F_NOSEQ) {
        gas_udp_dgram_sum_set(b, len);
        return len;
    }
    static const unsigned char data[5] = {1, 2, 3, 4, 5};
    struct gas_udp_rec recs[] = {
        {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 5, .op = 9, .off = 4096},
        {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL | GAS_UDP_RF_SIG_ADD,
         .dlen = 3, .op = 0, .off = 8192, .a = 12288, .b = 42},
        {.type = GAS_UDP_R_GET, .op = 0x10002, .off = 1ull << 40, .a = 65536, .b = 131072},
        {.type = GAS_UDP_R_AMO, .op = 3, .off = 4104, .a = ~0ull, .b = 17, .amo_op = 3, .amo_width = 8},
        {.type = GAS_UDP_R_GET_REPLY, .dlen = 4, .op = 5, .off = 1408},
        {.type = GAS_UDP_R_AMO_REPLY, .op = 6, .a = 0xdeadbeefcafef00dull},
        {.type = GAS_UDP_R_DONE, .op = 7},
        {.type = GAS_UDP_R_ERR, .flags = GAS_UDP_RF_FINAL, .op = 8, .off = 99, .a = (uint64_t)(int64_t)-3, .b = 77},
        {.type = GAS_UDP_R_BYE},
    };
    for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++) {
        unsigned char *d = gas_udp_rec_write(b + len, &recs[i]);
        memcpy(d, data, recs[i].dlen);
        len = (size_t)(d - b) + recs[i].dlen;
    }
    gas_udp_dgram_sum_set(b, len);
    return len;
}

static int check(const unsigned char *b, size_t len, const char **why)
{
    struct gas_udp_hdr h;
    *why = "";
    return gas_udp_dgram_check(b, len, KEY, 2, NRANKS, &h, why);
}

static void roundtrip(void)
{
    unsigned char b[2048];
    size_t len = build(b, 1, 2, KEY, GAS_UDP_F_ACKREQ);
    struct gas_udp_hdr h;
    const char *why = "";
    UCHECK(gas_udp_dgram_check(b, len, KEY, 2, NRANKS, &h, &why) == 0, "good datagram: %s", why);
    UCHECK(h.version == 1 && h.flags == GAS_UDP_F_ACKREQ && h.dsack == 3 && h.key == KEY &&
           h.src == 1 && h.dst == 2 && h.seq == 0xfffffff0u && h.ack == 7 &&
           h.sack == 0x8000000000000005ull && h.cack == 6, "header fields");
    size_t pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    int n = 0;
    while (gas_udp_rec_next(b, len, &pos, &r)) {
        switch (n++) {
        case 0: UCHECK(r.type == GAS_UDP_R_PUT && r.dlen == 5 && r.op == 9 && r.off == 4096 &&
                       r.flags == GAS_UDP_RF_FINAL && r.data[4] == 5, "put"); break;
        case 1: UCHECK(r.type == GAS_UDP_R_PUT && r.a == 12288 && r.b == 42 && r.dlen == 3 &&
                       (r.flags & GAS_UDP_RF_SIG_ADD), "put+signal"); break;
        case 2: UCHECK(r.type == GAS_UDP_R_GET && r.op == 0x10002 && r.off == 1ull << 40 &&
                       r.a == 65536 && r.b == 131072, "get"); break;
        case 3: UCHECK(r.type == GAS_UDP_R_AMO && r.a == ~0ull && r.b == 17 && r.amo_op == 3 &&
                       r.amo_width == 8 && r.off == 4104, "amo"); break;
        case 4: UCHECK(r.type == GAS_UDP_R_GET_REPLY && r.dlen == 4 && r.off == 1408 &&
                       r.data[0] == 1, "get reply"); break;
        case 5: UCHECK(r.type == GAS_UDP_R_AMO_REPLY && r.a == 0xdeadbeefcafef00dull, "amo reply"); break;
        case 6: UCHECK(r.type == GAS_UDP_R_DONE && r.op == 7, "done"); break;
        case 7: UCHECK(r.type == GAS_UDP_R_ERR && (int64_t)r.a == -3 && r.b == 77 && r.off == 99,
                       "err"); break;
        case 8: UCHECK(r.type == GAS_UDP_R_BYE, "bye"); break;
        }
    }
    UCHECK(n == 9 && pos == len, "9 records, all bytes used (%d, %zu/%zu)", n, pos, len);
    /* Refreshing the per-transmission fields keeps it valid once summed again. */
    gas_udp_hdr_refresh(b, GAS_UDP_F_RETX, 0, 123, 0);
    gas_udp_dgram_sum_set(b, len);
    UCHECK(gas_udp_dgram_check(b, len, KEY, 2, NRANKS, &h, &why) == 0 && h.ack == 123 &&
           h.flags == GAS_UDP_F_RETX, "refreshed: %s", why);
    unsigned char a[64];
    size_t alen = build(a, 3, 2, KEY, GAS_UDP_F_NOSEQ);
    UCHECK(check(a, alen, &why) == 0, "standalone ack: %s", why);
}

static void rejects(void)
{
    unsigned char g[2048], b[2048];
    const char *why;
    size_t len = build(g, 1, 2, KEY, 0);
    /* Every truncation: caught by the checksum; and when the checksum is
     * made to match, by the record checks, except at a record boundary
     * (then it is a valid, shorter datagram). */
    size_t bounds[16], nb = 0, pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    while (gas_udp_rec_next(g, len, &pos, &r))
        bounds[nb++] = pos;
    for (size_t l = 0; l < len; l++) {
        UCHECK(check(g, l, &why) != 0, "truncated to %zu accepted", l);
        memcpy(b, g, len);
        gas_udp_dgram_sum_set(b, l < GAS_UDP_HDR_LEN ? GAS_UDP_HDR_LEN : l);
        int boundary = 0;
        for (size_t k = 0; k < nb; k++)
            boundary |= bounds[k] == l;
        UCHECK((check(b, l, &why) == 0) == boundary, "truncated to %zu and re-summed: %s", l,
               boundary ? "rejected at a record boundary" : "accepted");
    }
    /* Every single-bit flip, anywhere (the checksum catches what the rest does not). */
    for (size_t i = 0; i < len * 8; i++) {
        memcpy(b, g, len);
        b[i / 8] ^= (unsigned char)(1u << (i % 8));
        UCHECK(check(b, len, &why) != 0, "bit %zu flipped accepted", i);
    }
    /* Two-byte corruptions at random places. */
    unsigned long long s = 11;
    for (int i = 0; i < 20000; i++) {
        memcpy(b, g, len);
        size_t p = (size_t)(unit_rand(&s) % len), q = (size_t)(unit_rand(&s) % len);
        b[p] ^= (unsigned char)(1 + unit_rand(&s) % 255);
        b[q] ^= (unsigned char)(1 + unit_rand(&s) % 255);
        if (memcmp(b, g, len) != 0)
            UCHECK(check(b, len, &why) != 0, "corruption at %zu, %zu accepted", p, q);
    }
    struct { uint32_t src, dst; uint64_t key; const char *what; } wrong[] = {
        {1, 2, KEY ^ 1, "wrong key"}, {1, 3, KEY, "another rank's"}, {4, 2, KEY, "source outside the job"},
        {UINT32_MAX, 2, KEY, "source -1"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        size_t l = build(b, wrong[i].src, wrong[i].dst, wrong[i].key, 0);
        UCHECK(check(b, l, &why) != 0, "%s accepted", wrong[i].what);
        struct gas_udp_hdr h;
        gas_udp_dgram_check(b, l, KEY, 2, NRANKS, &h, &why);
        UCHECK(h.src == wrong[i].src, "the named source is reported for counting");
    }
    /* Bad magic, bad version, reserved flag bits: each with a correct checksum. */
    memcpy(b, g, len);
    b[0] ^= 0x20;
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "magic"), "bad magic: %s", why);
    memcpy(b, g, len);
    b[4] = GAS_UDP_VERSION + 1;
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "version"), "bad version: %s", why);
    memcpy(b, g, len);
    b[5] |= 0x80;
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0, "reserved flag accepted");
    /* Malformed records with a correct checksum. */
    memcpy(b, g, len);
    b[GAS_UDP_HDR_LEN] = GAS_UDP_R_COUNT; /* unknown type */
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "record"), "unknown record type: %s", why);
    memcpy(b, g, len);
    gas_udp_st16(b + GAS_UDP_HDR_LEN + 2, 60000); /* data longer than the datagram */
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0, "overlong record accepted");
    memcpy(b, g, GAS_UDP_HDR_LEN);
    struct gas_udp_rec d = {.type = GAS_UDP_R_DONE, .dlen = 2, .op = 1};
    size_t l = (size_t)(gas_udp_rec_write(b + GAS_UDP_HDR_LEN, &d) - b) + 2;
    gas_udp_dgram_sum_set(b, l);
    UCHECK(check(b, l, &why) != 0, "data on a record without data accepted");
    memcpy(b, g, GAS_UDP_HDR_LEN);
    gas_udp_dgram_sum_set(b, GAS_UDP_HDR_LEN);
    UCHECK(check(b, GAS_UDP_HDR_LEN, &why) != 0, "numbered datagram without records accepted");
    memcpy(b, g, len);
    b[5] |= GAS_UDP_F_NOSEQ;
    gas_udp_dgram_sum_set(b, len);
    UCHECK(check(b, len, &why) != 0, "acknowledgement with records accepted");
}

static void ratelimit(void)
{
    struct gas_rt_ratelimit rl = {0};
    uint64_t held = 99;
    int passed = 0;
    for (int i = 0; i < 1000; i++)
        passed += gas_rt_ratelimit_pass(&rl, 60000000000ull, &held);
    UCHECK(passed == 1 && held == 0, "one line per minute: %d passed", passed);
    rl.next_ns = 0; /* the interval is over */
    UCHECK(gas_rt_ratelimit_pass(&rl, 60000000000ull, &held) && held == 999,
           "the next line says 999 were held back (%llu)", (unsigned long long)held);
}

int main(void)
{
    ratelimit();
    roundtrip();
    rejects();
    unsigned char z[64] = {0};
    UCHECK(gas_udp_sum32(z, 48) != gas_udp_sum32(z, 56), "the length counts");
    return unit_finish("test_udp_wire");
}
