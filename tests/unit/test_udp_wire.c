/*
 * The udp wire format (version 3): every record type, continuation records
 * included, round-trips through encode and decode; a good datagram passes
 * the checks; truncated datagrams, bad version, reserved flags, wrong key,
 * a datagram meant for another rank, unknown ranks, malformed records
 * (continuations that continue nothing, or carry flags they may not, or run
 * past the end) and every single-bit corruption are rejected.  The
 * continuation state resolves offsets in stream order and saturates rather
 * than wrapping.  The warnings about such datagrams are rate-limited: the
 * limiter lets one line through per interval and counts the rest.
 */
#include "runtime/log.h"
#include "transport/udp/wire.h"
#include "unit.h"

#include <string.h>

#define KEY 0x0123456789abcdefull
#define NRANKS 4

/* The first record is a CONT: it continues a record of an earlier datagram,
 * which only delivery can check, so the datagram is well formed. */
static const struct gas_udp_rec recs[] = {
    {.type = GAS_UDP_R_CONT, .dlen = 2},
    {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 5, .op = 9, .off = 4096},
    {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_WHOLE, .dlen = 5, .op = 10, .off = 20000,
     .total = 12},
    {.type = GAS_UDP_R_CONT, .dlen = 4},
    {.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL, .dlen = 3, .a = 4104,
     .b = 99},
    {.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL | GAS_UDP_RF_SIG_ADD,
     .dlen = 3, .op = 0, .off = 8192, .a = 12288, .b = 42},
    {.type = GAS_UDP_R_GET, .op = 0x10002, .off = 1ull << 40, .a = 65536, .b = 131072,
     .total = 5ull << 32},
    {.type = GAS_UDP_R_AMO, .op = 3, .off = 4104, .a = ~0ull, .b = 17, .amo_op = 3, .amo_width = 8},
    {.type = GAS_UDP_R_GET_REPLY, .dlen = 4, .op = 5, .off = 1408},
    {.type = GAS_UDP_R_CONT, .dlen = 5},
    {.type = GAS_UDP_R_AMO_REPLY, .op = 6, .a = 0xdeadbeefcafef00dull},
    {.type = GAS_UDP_R_DONE, .op = 7},
    {.type = GAS_UDP_R_ERR, .flags = GAS_UDP_RF_FINAL, .op = 8, .off = 99,
     .a = (uint64_t)(int64_t)-3, .b = 77ull << 32},
    {.type = GAS_UDP_R_BYE},
};
#define NRECS (int)(sizeof recs / sizeof recs[0])

/* A datagram to rank dst holding the n given records (data bytes 1, 2, ...). */
static size_t build_recs(unsigned char *b, uint32_t src, uint32_t dst, uint64_t key,
                         const struct gas_udp_rec *r, int n)
{
    static const unsigned char data[5] = {1, 2, 3, 4, 5};
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .dsack = 3, .key = key, .src = src,
                            .seq = 0xfffffff0u, .ack = 7, .cack = 6};
    gas_udp_hdr_write(b, &h);
    size_t len = GAS_UDP_HDR_LEN;
    for (int i = 0; i < n; i++) {
        unsigned char *d = gas_udp_rec_write(b + len, &r[i]);
        memcpy(d, data, r[i].dlen);
        len = (size_t)(d - b) + r[i].dlen;
    }
    gas_udp_dgram_sum_set(b, len, dst);
    return len;
}

static size_t build(unsigned char *b, uint32_t src, uint32_t dst, uint64_t key)
{
    return build_recs(b, src, dst, key, recs, NRECS);
}

static size_t build_ack(unsigned char *b, uint32_t src, uint32_t dst)
{
    struct gas_udp_hdr h = {.version = GAS_UDP_VERSION, .flags = GAS_UDP_F_NOSEQ, .dsack = 2,
                            .key = KEY, .src = src, .seq = 11, .ack = 12,
                            .sack = 0x8000000000000005ull, .cack = 12};
    gas_udp_hdr_write(b, &h);
    gas_udp_dgram_sum_set(b, GAS_UDP_ACK_LEN, dst);
    return GAS_UDP_ACK_LEN;
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
    size_t len = build(b, 1, 2, KEY);
    struct gas_udp_hdr h;
    const char *why = "";
    UCHECK(gas_udp_dgram_check(b, len, KEY, 2, NRANKS, &h, &why) == 0, "good datagram: %s", why);
    UCHECK(h.version == GAS_UDP_VERSION && h.flags == 0 && h.dsack == 3 && h.key == KEY && h.src == 1 &&
           h.seq == 0xfffffff0u && h.ack == 7 && h.sack == 0 && h.cack == 6, "header fields");
    size_t pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    int n = 0;
    while (gas_udp_rec_next(b, len, &pos, &r)) {
        switch (n++) {
        case 0: UCHECK(r.type == GAS_UDP_R_CONT && r.dlen == 2 && r.flags == 0 && r.op == 0 &&
                       r.off == 0 && r.data == b + GAS_UDP_HDR_LEN + GAS_UDP_CONT_LEN,
                       "leading continuation"); break;
        case 1: UCHECK(r.type == GAS_UDP_R_PUT && r.dlen == 5 && r.op == 9 && r.off == 4096 &&
                       r.flags == GAS_UDP_RF_FINAL && r.data[4] == 5, "put"); break;
        case 2: UCHECK(r.type == GAS_UDP_R_PUT && r.flags == GAS_UDP_RF_WHOLE && r.op == 10 &&
                       r.pos == 0 && r.total == 12 && r.data[0] == 1, "first piece, the put's range");
                break;
        case 3: UCHECK(r.type == GAS_UDP_R_CONT && r.dlen == 4 && r.data[3] == 4, "piece 2"); break;
        case 4: UCHECK(r.type == GAS_UDP_R_CONT && r.a == 4104 && r.b == 99 && r.dlen == 3 &&
                       r.flags == (GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL), "last piece + signal"); break;
        case 5: UCHECK(r.type == GAS_UDP_R_PUT && r.a == 12288 && r.b == 42 && r.dlen == 3 &&
                       (r.flags & GAS_UDP_RF_SIG_ADD), "put+signal"); break;
        case 6: UCHECK(r.type == GAS_UDP_R_GET && r.op == 0x10002 && r.off == 1ull << 40 &&
                       r.a == 65536 && r.b == 131072 && r.pos == 131072 && r.total == 5ull << 32,
                       "get"); break;
        case 7: UCHECK(r.type == GAS_UDP_R_AMO && r.a == ~0ull && r.b == 17 && r.amo_op == 3 &&
                       r.amo_width == 8 && r.off == 4104, "amo"); break;
        case 8: UCHECK(r.type == GAS_UDP_R_GET_REPLY && r.dlen == 4 && r.off == 1408 &&
                       r.data[0] == 1, "get reply"); break;
        case 9: UCHECK(r.type == GAS_UDP_R_CONT && r.dlen == 5, "get reply piece 2"); break;
        case 10: UCHECK(r.type == GAS_UDP_R_AMO_REPLY && r.a == 0xdeadbeefcafef00dull, "amo reply"); break;
        case 11: UCHECK(r.type == GAS_UDP_R_DONE && r.op == 7, "done"); break;
        case 12: UCHECK(r.type == GAS_UDP_R_ERR && (int64_t)r.a == -3 && r.b == 77ull << 32 &&
                        r.off == 99,
                        "err"); break;
        case 13: UCHECK(r.type == GAS_UDP_R_BYE, "bye"); break;
        }
    }
    UCHECK(n == NRECS && pos == len, "%d records, all bytes used (%d, %zu/%zu)", NRECS, n, pos, len);
    /* Refreshing the per-transmission fields keeps it valid once summed again. */
    gas_udp_hdr_refresh(b, GAS_UDP_F_RETX | GAS_UDP_F_ACKREQ, 0, 123);
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(gas_udp_dgram_check(b, len, KEY, 2, NRANKS, &h, &why) == 0 && h.ack == 123 &&
           h.flags == (GAS_UDP_F_RETX | GAS_UDP_F_ACKREQ) && h.cack == 6 && h.dsack == 0,
           "refreshed: %s", why);
    unsigned char a[64];
    size_t alen = build_ack(a, 3, 2);
    UCHECK(alen == 40 && gas_udp_dgram_check(a, alen, KEY, 2, NRANKS, &h, &why) == 0,
           "standalone ack: %s", why);
    UCHECK(h.flags == GAS_UDP_F_NOSEQ && h.sack == 0x8000000000000005ull && h.seq == 11 &&
           h.ack == 12 && h.cack == 12 && h.dsack == 2, "standalone ack fields");
    a[1] |= GAS_UDP_F_DEAD; /* a DEAD notice: the same 40 bytes, sack = who declared */
    gas_udp_dgram_sum_set(a, alen, 2);
    UCHECK(gas_udp_dgram_check(a, alen, KEY, 2, NRANKS, &h, &why) == 0 &&
           h.flags == (GAS_UDP_F_NOSEQ | GAS_UDP_F_DEAD), "DEAD notice: %s", why);
}

/* The continuation state: offsets follow in stream order, what ends a put
 * ends its continuation, and nothing wraps past 2^64. */
static void continuation(void)
{
    struct gas_udp_cont c = {0};
    struct gas_udp_rec r = {.type = GAS_UDP_R_CONT, .dlen = 10};
    UCHECK(gas_udp_cont_step(&c, &r) == 0, "a continuation of nothing");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_WHOLE, .dlen = 100,
                             .op = 4, .off = 5000, .total = 157};
    UCHECK(gas_udp_cont_step(&c, &r) && c.type == GAS_UDP_R_PUT && c.off == 5100 && c.op == 4 &&
           c.pos == 100 && c.total == 157, "a first piece opens");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .dlen = 50};
    UCHECK(gas_udp_cont_step(&c, &r) && r.type == GAS_UDP_R_PUT && r.off == 5100 && r.op == 4 &&
           r.pos == 100 && r.total == 157 && c.off == 5150 && c.pos == 150,
           "the second piece follows the first, in the same put");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 7};
    UCHECK(gas_udp_cont_step(&c, &r) && r.off == 5150 && c.type == 0, "FINAL ends it");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .dlen = 1};
    UCHECK(gas_udp_cont_step(&c, &r) == 0, "nothing after FINAL");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .dlen = 1, .off = 1};
    gas_udp_cont_step(&c, &r);
    r = (struct gas_udp_rec){.type = GAS_UDP_R_DONE, .op = 3};
    UCHECK(gas_udp_cont_step(&c, &r) && c.type == 0, "any other record ends it");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_GET_REPLY, .dlen = 1400, .op = 8, .off = 2800};
    gas_udp_cont_step(&c, &r);
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .dlen = 1400};
    UCHECK(gas_udp_cont_step(&c, &r) && r.type == GAS_UDP_R_GET_REPLY && r.off == 4200 && r.op == 8,
           "a reply's second piece");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 1};
    UCHECK(gas_udp_cont_step(&c, &r) == 0 && c.type == 0, "no flags on a reply's piece");
    r = (struct gas_udp_rec){.type = GAS_UDP_R_PUT, .dlen = 9, .off = UINT64_MAX - 4};
    gas_udp_cont_step(&c, &r);
    UCHECK(c.off == UINT64_MAX, "the offset after a piece saturates (%llu)",
           (unsigned long long)c.off);
    r = (struct gas_udp_rec){.type = GAS_UDP_R_CONT, .dlen = 9};
    UCHECK(gas_udp_cont_step(&c, &r) && r.off == UINT64_MAX && c.off == UINT64_MAX,
           "and stays there, where no range check passes");
}

static void rejects(void)
{
    unsigned char g[2048], b[2048];
    const char *why;
    size_t len = build(g, 1, 2, KEY);
    /* Every truncation: caught by the checksum; and when the checksum is
     * made to match, by the record checks, except at a record boundary
     * (then it is a valid, shorter datagram). */
    size_t bounds[32], nb = 0, pos = GAS_UDP_HDR_LEN;
    struct gas_udp_rec r;
    while (gas_udp_rec_next(g, len, &pos, &r))
        bounds[nb++] = pos;
    for (size_t l = 0; l < len; l++) {
        UCHECK(check(g, l, &why) != 0, "truncated to %zu accepted", l);
        memcpy(b, g, len);
        gas_udp_dgram_sum_set(b, l < GAS_UDP_HDR_LEN ? GAS_UDP_HDR_LEN : l, 2);
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
        {UINT32_MAX, 2, KEY, "source -1"}, {2, 2, KEY, "this rank's own"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        size_t l = build(b, wrong[i].src, wrong[i].dst, wrong[i].key);
        UCHECK(check(b, l, &why) != 0, "%s accepted", wrong[i].what);
        struct gas_udp_hdr h;
        gas_udp_dgram_check(b, l, KEY, 2, NRANKS, &h, &why);
        UCHECK(h.src == wrong[i].src, "the named source is reported for counting");
    }
    size_t l = build_ack(b, 1, 3);
    UCHECK(check(b, l, &why) != 0 && strstr(why, "another rank"), "an ack for rank 3: %s", why);
    /* Bad version, reserved flag bits: each with a correct checksum. */
    memcpy(b, g, len);
    b[0] = 1;
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "version"), "version 1: %s", why);
    memcpy(b, g, len);
    b[0] = GAS_UDP_VERSION + 1;
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "version"), "bad version: %s", why);
    memcpy(b, g, len);
    b[1] |= 0x80;
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0, "reserved flag accepted");
    memcpy(b, g, len);
    b[1] |= GAS_UDP_F_DEAD; /* a DEAD notice is a NOSEQ datagram */
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0, "DEAD on a numbered datagram accepted");
    /* Malformed records with a correct checksum. */
    memcpy(b, g, len);
    b[GAS_UDP_HDR_LEN] = GAS_UDP_R_COUNT; /* unknown type */
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0 && strstr(why, "record"), "unknown record type: %s", why);
    memcpy(b, g, len);
    gas_udp_st16(b + GAS_UDP_HDR_LEN + 2, 60000); /* data longer than the datagram */
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0, "overlong record accepted");
    struct gas_udp_rec d = {.type = GAS_UDP_R_DONE, .dlen = 2, .op = 1};
    l = build_recs(b, 1, 2, KEY, &d, 1);
    UCHECK(check(b, l, &why) != 0, "data on a record without data accepted");
    l = build_recs(b, 1, 2, KEY, NULL, 0);
    UCHECK(check(b, l, &why) != 0, "numbered datagram without records accepted");
    memcpy(b, g, len);
    b[1] |= GAS_UDP_F_NOSEQ;
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(check(b, len, &why) != 0, "acknowledgement with records accepted");
    l = build_ack(b, 1, 2);
    gas_udp_dgram_sum_set(b, GAS_UDP_HDR_LEN, 2);
    UCHECK(check(b, GAS_UDP_HDR_LEN, &why) != 0, "acknowledgement without its sack accepted");
    /* Continuations that cannot stand where they are. */
    static const struct { struct gas_udp_rec r[2]; const char *what; } bad[] = {
        {{{.type = GAS_UDP_R_PUT, .flags = GAS_UDP_RF_FINAL, .dlen = 3, .off = 4096},
          {.type = GAS_UDP_R_CONT, .dlen = 3}}, "a continuation after a FINAL piece"},
        {{{.type = GAS_UDP_R_DONE, .op = 1}, {.type = GAS_UDP_R_CONT, .dlen = 3}},
         "a continuation after DONE"},
        {{{.type = GAS_UDP_R_GET, .op = 1, .off = 4096, .a = 8}, {.type = GAS_UDP_R_CONT, .dlen = 3}},
         "a continuation after GET"},
        {{{.type = GAS_UDP_R_GET_REPLY, .dlen = 3, .op = 1},
          {.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 3}},
         "a reply's continuation with FINAL"},
        {{{.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL, .dlen = 3},
          {.type = GAS_UDP_R_CONT, .dlen = 3}}, "a continuation after a FINAL continuation"},
        {{{.type = GAS_UDP_R_CONT, .flags = 0x40, .dlen = 3}, {.type = GAS_UDP_R_BYE}},
         "a continuation with a reserved flag"},
        {{{.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_WHOLE, .dlen = 3}, {.type = GAS_UDP_R_BYE}},
         "a continuation that names a range"},
        {{{.type = GAS_UDP_R_PUT, .dlen = 3, .off = 4096}, {.type = GAS_UDP_R_BYE}},
         "a put's first piece that does not name the put's range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        l = build_recs(b, 1, 2, KEY, bad[i].r, 2);
        UCHECK(check(b, l, &why) != 0 && strstr(why, "record"), "%s: %s", bad[i].what, why);
    }
    /* A continuation with a signal whose fixed part runs past the end. */
    struct gas_udp_rec cs = {.type = GAS_UDP_R_CONT, .flags = GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL,
                             .a = 4096, .b = 1};
    l = build_recs(b, 1, 2, KEY, &cs, 1);
    for (size_t cut = 1; cut <= 16; cut++) {
        gas_udp_dgram_sum_set(b, l - cut, 2);
        UCHECK(check(b, l - cut, &why) != 0, "signal cut by %zu accepted", cut);
    }
    gas_udp_dgram_sum_set(b, l, 2);
    UCHECK(check(b, l, &why) == 0, "the whole one: %s", why);
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

/* GAS_UDP_F_HSUM: the sum covers the header, the length and the receiving
 * rank; the records are still checked; a payload byte is not covered. */
static void header_sum(void)
{
    unsigned char g[2048], b[2048];
    const char *why;
    size_t len = build(g, 1, 2, KEY);
    memcpy(b, g, len);
    gas_udp_dgram_hsum_set(b, len, 2);
    UCHECK(check(b, len, &why) == 0, "a header-only sum: %s", why);
    UCHECK(gas_udp_hsum32(b, len, 2) != gas_udp_sum32(b, len, 2), "differs from the full sum");
    for (size_t i = 0; i < GAS_UDP_HDR_LEN * 8; i++) {
        unsigned char c[2048];
        memcpy(c, b, len);
        c[i / 8] ^= (unsigned char)(1u << (i % 8));
        UCHECK(check(c, len, &why) != 0, "header bit %zu flipped accepted", i);
    }
    UCHECK(gas_udp_dgram_check(b, len, KEY, 3, NRANKS, &(struct gas_udp_hdr){0}, &why) != 0,
           "taken by another rank than the one it was sent to");
    size_t pos = GAS_UDP_HDR_LEN, cut = 0;
    struct gas_udp_rec r;
    while (gas_udp_rec_next(b, len, &pos, &r))
        if (pos < len)
            cut = pos;
    UCHECK(cut > GAS_UDP_HDR_LEN && check(b, cut, &why) != 0,
           "cut at a record boundary (%zu of %zu bytes) accepted", cut, len);
    unsigned char c[2048];
    memcpy(c, b, len);
    c[len - 1] ^= 0x5a; /* the last record's data */
    UCHECK(check(c, len, &why) == 0, "a payload byte is not covered: %s", why);
    gas_udp_dgram_sum_set(b, len, 2);
    UCHECK(!(b[1] & GAS_UDP_F_HSUM) && check(b, len, &why) == 0, "a full sum again clears HSUM");
}

int main(void)
{
    ratelimit();
    roundtrip();
    continuation();
    rejects();
    header_sum();
    unsigned char z[64] = {0};
    UCHECK(gas_udp_sum32(z, 48, 0) != gas_udp_sum32(z, 56, 0), "the length counts");
    UCHECK(gas_udp_sum32(z, 48, 0) != gas_udp_sum32(z, 48, 1), "the destination counts");
    return unit_finish("test_udp_wire");
}
