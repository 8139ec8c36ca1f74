/* wire.c - encoding, decoding and checking of udp datagrams (see wire.h). */
#include "wire.h"

size_t gas_udp_rec_fixed(unsigned type, unsigned flags)
{
    switch (type) {
    case GAS_UDP_R_PUT: return GAS_UDP_REC_LEN + (flags & GAS_UDP_RF_SIGNAL ? 16 : 0);
    case GAS_UDP_R_GET: return GAS_UDP_REC_LEN + 16;
    case GAS_UDP_R_AMO: return GAS_UDP_REC_LEN + 24;
    case GAS_UDP_R_AMO_REPLY: return GAS_UDP_REC_LEN + 8;
    case GAS_UDP_R_ERR: return GAS_UDP_REC_LEN + 8;
    default: return GAS_UDP_REC_LEN;
    }
}

void gas_udp_hdr_write(unsigned char *b, const struct gas_udp_hdr *h)
{
    gas_udp_st32(b, GAS_UDP_MAGIC);
    b[4] = h->version;
    b[5] = h->flags;
    gas_udp_st16(b + 6, h->dsack);
    gas_udp_st64(b + 8, h->key);
    gas_udp_st32(b + 16, h->src);
    gas_udp_st32(b + 20, h->dst);
    gas_udp_st32(b + 24, h->seq);
    gas_udp_st32(b + 28, h->ack);
    gas_udp_st64(b + 32, h->sack);
    gas_udp_st32(b + 40, h->cack);
    gas_udp_st32(b + 44, 0);
}

void gas_udp_hdr_refresh(unsigned char *b, uint8_t flags, uint16_t dsack, uint32_t ack,
                         uint64_t sack)
{
    b[5] = flags;
    gas_udp_st16(b + 6, dsack);
    gas_udp_st32(b + 28, ack);
    gas_udp_st64(b + 32, sack);
}

unsigned char *gas_udp_rec_write(unsigned char *p, const struct gas_udp_rec *r)
{
    p[0] = r->type;
    p[1] = r->flags;
    gas_udp_st16(p + 2, r->dlen);
    gas_udp_st32(p + 4, r->op);
    gas_udp_st64(p + 8, r->off);
    unsigned char *f = p + GAS_UDP_REC_LEN;
    switch (r->type) {
    case GAS_UDP_R_PUT:
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            gas_udp_st64(f, r->a);
            gas_udp_st64(f + 8, r->b);
        }
        break;
    case GAS_UDP_R_GET:
        gas_udp_st32(f, (uint32_t)r->a);
        gas_udp_st32(f + 4, 0);
        gas_udp_st64(f + 8, r->b);
        break;
    case GAS_UDP_R_AMO:
        gas_udp_st64(f, r->a);
        gas_udp_st64(f + 8, r->b);
        memset(f + 16, 0, 8);
        f[16] = r->amo_op;
        f[17] = r->amo_width;
        break;
    case GAS_UDP_R_AMO_REPLY:
        gas_udp_st64(f, r->a);
        break;
    case GAS_UDP_R_ERR:
        gas_udp_st32(f, (uint32_t)(int32_t)(int64_t)r->a);
        gas_udp_st32(f + 4, (uint32_t)r->b);
        break;
    default:
        break;
    }
    return p + gas_udp_rec_fixed(r->type, r->flags);
}

/* Decode the record at pos if it fits in len; 0 when it is malformed. */
static int rec_decode(const unsigned char *buf, size_t len, size_t pos, struct gas_udp_rec *r,
                      size_t *end_p)
{
    if (len - pos < GAS_UDP_REC_LEN)
        return 0;
    const unsigned char *p = buf + pos;
    r->type = p[0];
    r->flags = p[1];
    r->dlen = gas_udp_ld16(p + 2);
    r->op = gas_udp_ld32(p + 4);
    r->off = gas_udp_ld64(p + 8);
    if (r->type == 0 || r->type >= GAS_UDP_R_COUNT)
        return 0;
    size_t fixed = gas_udp_rec_fixed(r->type, r->flags);
    if (len - pos < fixed || len - pos - fixed < r->dlen)
        return 0;
    int has_data = r->type == GAS_UDP_R_PUT || r->type == GAS_UDP_R_GET_REPLY ||
                   r->type == GAS_UDP_R_CTRL;
    if (!has_data && r->dlen != 0)
        return 0;
    const unsigned char *f = p + GAS_UDP_REC_LEN;
    r->a = r->b = 0;
    r->amo_op = r->amo_width = 0;
    switch (r->type) {
    case GAS_UDP_R_PUT:
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            r->a = gas_udp_ld64(f);
            r->b = gas_udp_ld64(f + 8);
        }
        break;
    case GAS_UDP_R_GET:
        r->a = gas_udp_ld32(f);
        r->b = gas_udp_ld64(f + 8);
        break;
    case GAS_UDP_R_AMO:
        r->a = gas_udp_ld64(f);
        r->b = gas_udp_ld64(f + 8);
        r->amo_op = f[16];
        r->amo_width = f[17];
        break;
    case GAS_UDP_R_AMO_REPLY:
        r->a = gas_udp_ld64(f);
        break;
    case GAS_UDP_R_ERR:
        r->a = (uint64_t)(int64_t)(int32_t)gas_udp_ld32(f);
        r->b = gas_udp_ld32(f + 4);
        break;
    default:
        break;
    }
    r->data = p + fixed;
    *end_p = pos + fixed + r->dlen;
    return 1;
}

int gas_udp_rec_next(const unsigned char *buf, size_t len, size_t *pos_p, struct gas_udp_rec *r)
{
    size_t end;
    if (*pos_p >= len || !rec_decode(buf, len, *pos_p, r, &end))
        return 0;
    *pos_p = end;
    return 1;
}

static inline uint64_t ld64u(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* One bijective step per word and lane: (h ^ w) * odd, then an xorshift. */
static inline uint64_t mix(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 32);
}

static inline uint64_t rotl(uint64_t v, unsigned r)
{
    return v << r | v >> (64 - r);
}

uint32_t gas_udp_sum32(const unsigned char *p, size_t len)
{
    /* Four independent lanes keep the multiplies in flight; the header's
     * sum field (the high half of word 5) is masked out. */
    uint64_t a = 0x243f6a8885a308d3ull ^ len, b = 0x13198a2e03707344ull,
             c = 0xa4093822299f31d0ull, d = 0x082efa98ec4e6c89ull;
    a = mix(a, ld64u(p));
    b = mix(b, ld64u(p + 8));
    c = mix(c, ld64u(p + 16));
    d = mix(d, ld64u(p + 24));
    a = mix(a, ld64u(p + 32));
    b = mix(b, ld64u(p + 40) & 0xffffffffull);
    size_t n = len / 8, i = 6;
    for (; i + 4 <= n; i += 4) {
        a = mix(a, ld64u(p + 8 * i));
        b = mix(b, ld64u(p + 8 * i + 8));
        c = mix(c, ld64u(p + 8 * i + 16));
        d = mix(d, ld64u(p + 8 * i + 24));
    }
    for (; i < n; i++)
        c = mix(c, ld64u(p + 8 * i));
    if (len % 8) {
        uint64_t t = 0;
        for (size_t k = 0; k < len % 8; k++)
            t |= (uint64_t)p[8 * n + k] << 8 * k;
        d = mix(d, t);
    }
    uint64_t h = a ^ rotl(b, 16) ^ rotl(c, 32) ^ rotl(d, 48);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return (uint32_t)h;
}

void gas_udp_dgram_sum_set(unsigned char *buf, size_t len)
{
    gas_udp_st32(buf + 44, gas_udp_sum32(buf, len));
}

int gas_udp_dgram_check(const unsigned char *b, size_t len, uint64_t key, uint32_t me,
                        uint32_t nranks, struct gas_udp_hdr *h, const char **why_p)
{
    h->src = UINT32_MAX;
    if (len < GAS_UDP_HDR_LEN) {
        *why_p = "shorter than a header";
        return -1;
    }
    h->src = gas_udp_ld32(b + 16);
    if (gas_udp_ld32(b) != GAS_UDP_MAGIC) {
        *why_p = "bad magic";
        return -1;
    }
    h->version = b[4];
    h->flags = b[5];
    if (h->version != GAS_UDP_VERSION) {
        *why_p = "unknown wire version";
        return -1;
    }
    h->dsack = gas_udp_ld16(b + 6);
    if (h->flags & ~(GAS_UDP_F_NOSEQ | GAS_UDP_F_ACKREQ | GAS_UDP_F_RETX)) {
        *why_p = "reserved header bits set";
        return -1;
    }
    h->key = gas_udp_ld64(b + 8);
    h->dst = gas_udp_ld32(b + 20);
    h->seq = gas_udp_ld32(b + 24);
    h->ack = gas_udp_ld32(b + 28);
    h->sack = gas_udp_ld64(b + 32);
    h->cack = gas_udp_ld32(b + 40);
    h->sum = gas_udp_ld32(b + 44);
    if (h->sum != gas_udp_sum32(b, len)) {
        *why_p = "checksum mismatch (corrupted)";
        return -1;
    }
    if (h->key != key) {
        *why_p = "wrong job key (another job, or a stranger)";
        return -1;
    }
    if (h->src >= nranks) {
        *why_p = "source rank outside the job";
        return -1;
    }
    if (h->dst != me) {
        *why_p = "addressed to another rank";
        return -1;
    }
    if ((h->flags & GAS_UDP_F_NOSEQ) && len != GAS_UDP_HDR_LEN) {
        *why_p = "an acknowledgement with records";
        return -1;
    }
    size_t pos = GAS_UDP_HDR_LEN, end;
    struct gas_udp_rec r;
    while (pos < len) {
        if (!rec_decode(b, len, pos, &r, &end)) {
            *why_p = "malformed record";
            return -1;
        }
        pos = end;
    }
    if (!(h->flags & GAS_UDP_F_NOSEQ) && len == GAS_UDP_HDR_LEN) {
        *why_p = "a numbered datagram without records";
        return -1;
    }
    return 0;
}
