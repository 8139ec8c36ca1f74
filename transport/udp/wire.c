/* wire.c - encoding, decoding and checking of udp datagrams (see wire.h). */
#include "wire.h"

size_t gas_udp_rec_fixed(unsigned type, unsigned flags)
{
    switch (type) {
    case GAS_UDP_R_PUT:
        return GAS_UDP_REC_LEN + (flags & GAS_UDP_RF_WHOLE ? 16 : 0) +
               (flags & GAS_UDP_RF_SIGNAL ? 16 : 0);
    case GAS_UDP_R_CONT: return GAS_UDP_CONT_LEN + (flags & GAS_UDP_RF_SIGNAL ? 16 : 0);
    case GAS_UDP_R_GET: return GAS_UDP_REC_LEN + 24;
    case GAS_UDP_R_AMO: return GAS_UDP_REC_LEN + 24;
    case GAS_UDP_R_AMO_REPLY: return GAS_UDP_REC_LEN + 8;
    case GAS_UDP_R_ERR: return GAS_UDP_REC_LEN + 16;
    default: return GAS_UDP_REC_LEN;
    }
}

void gas_udp_hdr_write(unsigned char *b, const struct gas_udp_hdr *h)
{
    b[0] = h->version;
    b[1] = h->flags;
    gas_udp_st16(b + 2, h->dsack);
    gas_udp_st32(b + 4, h->src);
    gas_udp_st64(b + 8, h->key);
    gas_udp_st32(b + 16, h->seq);
    gas_udp_st32(b + 20, h->ack);
    gas_udp_st32(b + 24, h->cack);
    gas_udp_st32(b + 28, 0);
    if (h->flags & GAS_UDP_F_NOSEQ)
        gas_udp_st64(b + 32, h->sack);
}

void gas_udp_hdr_refresh(unsigned char *b, uint8_t flags, uint16_t dsack, uint32_t ack)
{
    b[1] = flags;
    gas_udp_st16(b + 2, dsack);
    gas_udp_st32(b + 20, ack);
}

unsigned char *gas_udp_rec_write(unsigned char *p, const struct gas_udp_rec *r)
{
    p[0] = r->type;
    p[1] = r->flags;
    gas_udp_st16(p + 2, r->dlen);
    if (r->type == GAS_UDP_R_CONT) {
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            gas_udp_st64(p + GAS_UDP_CONT_LEN, r->a);
            gas_udp_st64(p + GAS_UDP_CONT_LEN + 8, r->b);
        }
        return p + gas_udp_rec_fixed(r->type, r->flags);
    }
    gas_udp_st32(p + 4, r->op);
    gas_udp_st64(p + 8, r->off);
    unsigned char *f = p + GAS_UDP_REC_LEN;
    switch (r->type) {
    case GAS_UDP_R_PUT:
        if (r->flags & GAS_UDP_RF_WHOLE) {
            gas_udp_st64(f, r->pos);
            gas_udp_st64(f + 8, r->total);
            f += 16;
        }
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            gas_udp_st64(f, r->a);
            gas_udp_st64(f + 8, r->b);
        }
        break;
    case GAS_UDP_R_GET:
        gas_udp_st32(f, (uint32_t)r->a);
        gas_udp_st32(f + 4, 0);
        gas_udp_st64(f + 8, r->b);
        gas_udp_st64(f + 16, r->total);
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
        gas_udp_st32(f + 4, 0);
        gas_udp_st64(f + 8, r->b);
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
    if (len - pos < GAS_UDP_CONT_LEN)
        return 0;
    const unsigned char *p = buf + pos;
    r->type = p[0];
    r->flags = p[1];
    r->dlen = gas_udp_ld16(p + 2);
    r->op = 0;
    r->off = 0;
    r->pos = r->total = 0;
    if (r->type == 0 || r->type >= GAS_UDP_R_COUNT)
        return 0;
    if (r->type == GAS_UDP_R_CONT &&
        (r->flags & ~(GAS_UDP_RF_FINAL | GAS_UDP_RF_SIGNAL | GAS_UDP_RF_SIG_ADD)))
        return 0;
    if (r->type == GAS_UDP_R_PUT && !(r->flags & (GAS_UDP_RF_FINAL | GAS_UDP_RF_WHOLE)))
        return 0; /* a piece that is not its whole put names the put's range */
    size_t fixed = gas_udp_rec_fixed(r->type, r->flags);
    if (len - pos < fixed || len - pos - fixed < r->dlen)
        return 0;
    int has_data = r->type == GAS_UDP_R_PUT || r->type == GAS_UDP_R_GET_REPLY ||
                   r->type == GAS_UDP_R_CTRL || r->type == GAS_UDP_R_CONT;
    if (!has_data && r->dlen != 0)
        return 0;
    r->a = r->b = 0;
    r->amo_op = r->amo_width = 0;
    r->data = p + fixed;
    *end_p = pos + fixed + r->dlen;
    if (r->type == GAS_UDP_R_CONT) {
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            r->a = gas_udp_ld64(p + GAS_UDP_CONT_LEN);
            r->b = gas_udp_ld64(p + GAS_UDP_CONT_LEN + 8);
        }
        return 1;
    }
    r->op = gas_udp_ld32(p + 4);
    r->off = gas_udp_ld64(p + 8);
    const unsigned char *f = p + GAS_UDP_REC_LEN;
    switch (r->type) {
    case GAS_UDP_R_PUT:
        r->total = r->dlen;
        if (r->flags & GAS_UDP_RF_WHOLE) {
            r->pos = gas_udp_ld64(f);
            r->total = gas_udp_ld64(f + 8);
            f += 16;
        }
        if (r->flags & GAS_UDP_RF_SIGNAL) {
            r->a = gas_udp_ld64(f);
            r->b = gas_udp_ld64(f + 8);
        }
        break;
    case GAS_UDP_R_GET:
        r->a = gas_udp_ld32(f);
        r->b = r->pos = gas_udp_ld64(f + 8);
        r->total = gas_udp_ld64(f + 16);
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
        r->b = gas_udp_ld64(f + 8);
        break;
    default:
        break;
    }
    return 1;
}

int gas_udp_cont_step(struct gas_udp_cont *c, struct gas_udp_rec *r)
{
    if (r->type == GAS_UDP_R_CONT) {
        if (c->type == 0 || (c->type == GAS_UDP_R_GET_REPLY && r->flags != 0)) {
            c->type = 0;
            return 0;
        }
        r->type = c->type;
        r->op = c->op;
        r->off = c->off;
        r->pos = c->pos;
        r->total = c->total;
    }
    if ((r->type == GAS_UDP_R_PUT && !(r->flags & GAS_UDP_RF_FINAL)) ||
        r->type == GAS_UDP_R_GET_REPLY) {
        c->type = r->type;
        c->op = r->op;
        c->off = r->off <= UINT64_MAX - r->dlen ? r->off + r->dlen : UINT64_MAX;
        c->pos = r->pos <= UINT64_MAX - r->dlen ? r->pos + r->dlen : UINT64_MAX;
        c->total = r->total;
    } else {
        c->type = 0;
    }
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

/* The hash of the first n bytes of p (n >= GAS_UDP_HDR_LEN) with len and dst in its seed. */
static uint32_t sum_of(const unsigned char *p, size_t n, size_t len, uint32_t dst)
{
    /* Four independent lanes keep the multiplies in flight; the header's
     * sum field (the high half of word 3) is masked out.  The destination
     * rank seeds a lane, like UDP's pseudo-header: a datagram that reaches
     * another rank than the one it was sent to does not check. */
    uint64_t a = 0x243f6a8885a308d3ull ^ len, b = 0x13198a2e03707344ull ^ dst,
             c = 0xa4093822299f31d0ull, d = 0x082efa98ec4e6c89ull;
    a = mix(a, ld64u(p));
    b = mix(b, ld64u(p + 8));
    c = mix(c, ld64u(p + 16));
    d = mix(d, ld64u(p + 24) & 0xffffffffull);
    size_t words = n / 8, i = 4;
    for (; i + 4 <= words; i += 4) {
        a = mix(a, ld64u(p + 8 * i));
        b = mix(b, ld64u(p + 8 * i + 8));
        c = mix(c, ld64u(p + 8 * i + 16));
        d = mix(d, ld64u(p + 8 * i + 24));
    }
    for (; i < words; i++)
        c = mix(c, ld64u(p + 8 * i));
    if (n % 8) {
        uint64_t t = 0;
        for (size_t k = 0; k < n % 8; k++)
            t |= (uint64_t)p[8 * words + k] << 8 * k;
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

uint32_t gas_udp_sum32(const unsigned char *p, size_t len, uint32_t dst)
{
    return sum_of(p, len, len, dst);
}

uint32_t gas_udp_hsum32(const unsigned char *p, size_t len, uint32_t dst)
{
    return sum_of(p, GAS_UDP_HDR_LEN, len, dst);
}

void gas_udp_dgram_sum_set(unsigned char *buf, size_t len, uint32_t dst)
{
    buf[1] &= (unsigned char)~GAS_UDP_F_HSUM;
    gas_udp_st32(buf + 28, gas_udp_sum32(buf, len, dst));
}

void gas_udp_dgram_hsum_set(unsigned char *buf, size_t len, uint32_t dst)
{
    buf[1] |= GAS_UDP_F_HSUM;
    gas_udp_st32(buf + 28, gas_udp_hsum32(buf, len, dst));
}

/*
 * Within one datagram, what a CONT may continue: a PUT piece without FINAL
 * (CONT flags allowed), a GET_REPLY (no flags), either (the datagram's first
 * records may continue one of an earlier datagram: gas_udp_cont_step checks
 * that on delivery), or nothing.  Returns the state after r; *ok = 0 when r
 * is a CONT that may not stand there.
 */
enum follow { F_NONE, F_PUT, F_REPLY, F_ANY };

static enum follow follow_next(enum follow f, const struct gas_udp_rec *r, int *ok)
{
    if (r->type != GAS_UDP_R_CONT)
        return r->type == GAS_UDP_R_PUT && !(r->flags & GAS_UDP_RF_FINAL) ? F_PUT
               : r->type == GAS_UDP_R_GET_REPLY                           ? F_REPLY
                                                                          : F_NONE;
    if (f == F_NONE || (f == F_REPLY && r->flags != 0)) {
        *ok = 0;
        return F_NONE;
    }
    if (f == F_REPLY)
        return F_REPLY;
    if (r->flags & GAS_UDP_RF_FINAL)
        return F_NONE;
    return f == F_ANY && r->flags == 0 ? F_ANY : F_PUT;
}

int gas_udp_dgram_check(const unsigned char *b, size_t len, uint64_t key, uint32_t me,
                        uint32_t nranks, struct gas_udp_hdr *h, const char **why_p)
{
    h->src = UINT32_MAX;
    if (len < GAS_UDP_HDR_LEN) {
        *why_p = "shorter than a header";
        return -1;
    }
    h->src = gas_udp_ld32(b + 4);
    h->version = b[0];
    h->flags = b[1];
    if (h->version != GAS_UDP_VERSION) {
        *why_p = "unknown wire version";
        return -1;
    }
    if ((h->flags & ~(GAS_UDP_F_NOSEQ | GAS_UDP_F_ACKREQ | GAS_UDP_F_RETX | GAS_UDP_F_DEAD |
                      GAS_UDP_F_HSUM)) ||
        (h->flags & (GAS_UDP_F_DEAD | GAS_UDP_F_NOSEQ)) == GAS_UDP_F_DEAD) {
        *why_p = "reserved header bits set";
        return -1;
    }
    h->dsack = gas_udp_ld16(b + 2);
    h->key = gas_udp_ld64(b + 8);
    h->seq = gas_udp_ld32(b + 16);
    h->ack = gas_udp_ld32(b + 20);
    h->cack = gas_udp_ld32(b + 24);
    h->sum = gas_udp_ld32(b + 28);
    h->sack = 0;
    /* A header-only sum is taken from a rank on this host alone: the caller
     * checks that (rx.c), since the source's host is not known here. */
    if (h->sum != ((h->flags & GAS_UDP_F_HSUM) ? gas_udp_hsum32(b, len, me)
                                               : gas_udp_sum32(b, len, me))) {
        *why_p = "checksum mismatch (corrupted, or sent to another rank)";
        return -1;
    }
    if (h->key != key) {
        *why_p = "wrong job key (another job, or a stranger)";
        return -1;
    }
    if (h->src >= nranks || h->src == me) {
        *why_p = "source rank outside the job, or this rank's own";
        return -1;
    }
    if (h->flags & GAS_UDP_F_NOSEQ) {
        if (len != GAS_UDP_ACK_LEN) {
            *why_p = "an acknowledgement of the wrong length (records?)";
            return -1;
        }
        h->sack = gas_udp_ld64(b + 32);
        return 0;
    }
    size_t pos = GAS_UDP_HDR_LEN, end;
    struct gas_udp_rec r;
    enum follow f = F_ANY;
    int ok = 1;
    while (pos < len) {
        if (!rec_decode(b, len, pos, &r, &end) || (f = follow_next(f, &r, &ok), !ok)) {
            *why_p = "malformed record";
            return -1;
        }
        pos = end;
    }
    if (len == GAS_UDP_HDR_LEN) {
        *why_p = "a numbered datagram without records";
        return -1;
    }
    return 0;
}
