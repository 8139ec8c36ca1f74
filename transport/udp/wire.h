/*
 * wire.h - the udp transport's datagram format, version 4 (docs/udp-wire.md).
 *
 * A datagram is a 32-byte header and zero or more records; integers are
 * little-endian.  The header carries the job key, the source rank, this
 * stream's sequence number, the acknowledgement of the reverse stream and a
 * checksum over the whole datagram and the destination rank.  A datagram
 * with NOSEQ is a standalone acknowledgement: 40 bytes, the header and the
 * selective acknowledgement; it consumes no sequence number and carries no
 * records.  Only standalone acknowledgements carry selective acks.  A
 * NOSEQ datagram with DEAD is no acknowledgement but a notice: the sender
 * gave up on the receiver and drops what it sends; sack holds the rank that
 * declared the receiver dead, and seq, ack and cack are 0.
 *
 *   off size header field
 *     0   1  version    3
 *     1   1  flags      NOSEQ 1, ACKREQ 2 (acknowledge at once), RETX 4, DEAD 8 (NOSEQ only)
 *     2   2  dsack      0, or d: number ack - d arrived twice (a retransmission
 *                       that was not needed: the sender's timeout was spurious)
 *     4   4  src        sending rank
 *     8   8  key        the job key
 *    16   4  seq        this datagram's number (NOSEQ: the next one to be used)
 *    20   4  ack        next number expected from the receiver (all before it delivered)
 *    24   4  cack       completion point: the receiver's numbers before it are
 *                       applied and their replies are in this stream before this point
 *    28   4  sum        checksum of the datagram (this field zero) and the receiving rank
 *    32   8  sack       NOSEQ only: bit i, number ack + 1 + i arrived early and is held
 *
 *   record: type u8, flags u8, dlen u16 (data bytes at the end), op u32,
 *           off u64, then a fixed part by type, then dlen data bytes.  A PUT
 *           that is not its whole operation (WHOLE) and every GET name the
 *           operation's whole range: the piece's position in it and its
 *           total length, so the target decides on the whole operation.
 *   CONT record: type u8, flags u8, dlen u16, then (SIGNAL) the signal, then
 *           data: the next piece of the PUT or GET_REPLY just before it in
 *           the stream (same op, at the offset that follows it).
 */
#ifndef GAS_UDP_WIRE_H
#define GAS_UDP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GAS_UDP_VERSION 5   /* 5: header-only sums to ranks on the same host (HSUM); 4: WHOLE, GET total */
#define GAS_UDP_HDR_LEN 32           /* numbered datagrams: records follow */
#define GAS_UDP_ACK_LEN 40           /* a standalone acknowledgement (NOSEQ) */
#define GAS_UDP_REC_LEN 16
#define GAS_UDP_CONT_LEN 4           /* a continuation record before its fixed part */
#define GAS_UDP_IP_UDP_OVERHEAD 28   /* IPv4 + UDP headers, subtracted from the MTU */
#define GAS_UDP_AUTO_MTU 1500        /* GAS_UDP_MTU=auto towards other hosts */
#define GAS_UDP_MAX_DGRAM 65507
#define GAS_UDP_MIN_FRAG 256         /* a put is not cut into pieces smaller than this */
/* The smallest datagram (UDP payload) a rank sends or accepts: the header, the
 * largest fixed part of a record that carries data (PUT with WHOLE and a
 * signal, 48) and its smallest piece.  Plus IPv4 and UDP headers it is the
 * least GAS_UDP_MTU (GAS_RT_UDP_MTU_MIN, 364) and the least interface MTU. */
#define GAS_UDP_MIN_DGRAM (GAS_UDP_HDR_LEN + GAS_UDP_REC_LEN + 32 + GAS_UDP_MIN_FRAG)
#define GAS_UDP_MIN_MTU (GAS_UDP_MIN_DGRAM + GAS_UDP_IP_UDP_OVERHEAD)

enum {
    GAS_UDP_F_NOSEQ = 1,   /* standalone acknowledgement */
    GAS_UDP_F_ACKREQ = 2,  /* the sender waits: acknowledge without delay */
    GAS_UDP_F_RETX = 4,    /* a retransmission (informational) */
    GAS_UDP_F_DEAD = 8,    /* with NOSEQ: the sender gave up on the receiver (sack: who declared it) */
    GAS_UDP_F_HSUM = 16    /* sum covers the header and length only (to a rank on the sender's host) */
};

enum gas_udp_rec_type {
    GAS_UDP_R_PUT = 1,     /* write data at off; SIGNAL: then update a signal word */
    GAS_UDP_R_GET,         /* read len bytes at off; reply GET_REPLY records */
    GAS_UDP_R_AMO,         /* one atomic at off; reply AMO_REPLY (fetching) or DONE */
    GAS_UDP_R_GET_REPLY,   /* data for get `op` at byte off of that get */
    GAS_UDP_R_AMO_REPLY,   /* the old value for atomic `op` */
    GAS_UDP_R_DONE,        /* operation `op` was applied */
    GAS_UDP_R_ERR,         /* a request of operation `op` was refused */
    GAS_UDP_R_BYE,         /* the sender is finalising: nothing follows */
    GAS_UDP_R_CTRL,        /* a control message of another transport (rdma's QP handshake) */
    GAS_UDP_R_CONT,        /* the next piece of the PUT or GET_REPLY before it */
    GAS_UDP_R_COUNT
};

enum {
    GAS_UDP_RF_FINAL = 1,   /* last record of its operation: answer DONE/ERR if op != 0 */
    GAS_UDP_RF_SIGNAL = 2,  /* PUT: names a signal word, checked on every piece, applied
                             * after the data of the FINAL one */
    GAS_UDP_RF_SIG_ADD = 4, /* PUT: the signal is added, else set */
    GAS_UDP_RF_WHOLE = 8    /* PUT (not CONT): the fixed part starts with the whole
                             * operation's range (position u64, total u64); without
                             * it a PUT record is its whole operation */
};

struct gas_udp_hdr {
    uint8_t version, flags;
    uint16_t dsack;
    uint64_t key;
    uint32_t src, seq, ack, cack, sum;
    uint64_t sack;   /* NOSEQ only (0 in numbered datagrams) */
};

/* A decoded record; which of a/b are used depends on the type.  A CONT
 * record decodes with op, off, pos and total 0 until gas_udp_cont_step
 * resolves it. */
struct gas_udp_rec {
    uint8_t type, flags;
    uint16_t dlen;
    uint32_t op;
    uint64_t off;
    uint64_t a;   /* PUT+SIGNAL: signal offset; GET: length; AMO: operand; AMO_REPLY: value; ERR: status */
    uint64_t b;   /* PUT+SIGNAL: signal value; GET: byte of the get this asks for; AMO: compare; ERR: length */
    uint64_t pos, total; /* PUT, GET: where the piece starts in its operation, which
                          * spans [off - pos, off - pos + total) (a PUT without
                          * WHOLE: 0 and dlen) */
    uint8_t amo_op, amo_width;
    const unsigned char *data;
};

static inline void gas_udp_st16(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static inline void gas_udp_st32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i); }
static inline void gas_udp_st64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i); }
static inline uint16_t gas_udp_ld16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t gas_udp_ld32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t gas_udp_ld64(const unsigned char *p)
{
    return (uint64_t)gas_udp_ld32(p) | (uint64_t)gas_udp_ld32(p + 4) << 32;
}

/* Bytes of a record of this type and flags before its data. */
size_t gas_udp_rec_fixed(unsigned type, unsigned flags);

/*
 * Which record a CONT continues, on one side of one stream: the PUT piece
 * (without FINAL) or GET_REPLY that came last, its op, the offset right
 * after it, and (PUT) its operation's range: the position after it and the
 * total; type 0 when the last record was anything else.
 */
struct gas_udp_cont {
    uint8_t type;
    uint32_t op;
    uint64_t off, pos, total;
};

/*
 * Resolve a record in stream order: a CONT takes the type, op, offset and
 * operation range from *c (0 when it continues nothing, or has flags on a
 * GET_REPLY); then *c moves past the record.  The offset and position after
 * a piece saturate at UINT64_MAX, which no range check accepts.
 */
int gas_udp_cont_step(struct gas_udp_cont *c, struct gas_udp_rec *r);

/* Write a header: NOSEQ ones with their sack (sum 0; set it with
 * gas_udp_dgram_sum_set once the datagram is complete). */
void gas_udp_hdr_write(unsigned char *buf, const struct gas_udp_hdr *h);
/* Rewrite the fields of a numbered datagram that change on every transmission. */
void gas_udp_hdr_refresh(unsigned char *buf, uint8_t flags, uint16_t dsack, uint32_t ack);

/*
 * Write a record at p (data not copied: the caller copies r->dlen bytes to
 * the returned pointer).  The caller has checked that it fits.  A CONT
 * writes only type, flags, dlen and the signal.
 */
unsigned char *gas_udp_rec_write(unsigned char *p, const struct gas_udp_rec *r);

/* Walk the records of a checked datagram: 1 and *r filled, or 0 at the end. */
int gas_udp_rec_next(const unsigned char *buf, size_t len, size_t *pos_p, struct gas_udp_rec *r);

/* The 32-bit checksum of a datagram of len >= GAS_UDP_HDR_LEN bytes (sum
 * field excluded) sent to rank dst. */
uint32_t gas_udp_sum32(const unsigned char *buf, size_t len, uint32_t dst);
/* The header-only checksum (GAS_UDP_F_HSUM): the same hash over the header's
 * GAS_UDP_HDR_LEN bytes, with len, the datagram's length, in its seed. */
uint32_t gas_udp_hsum32(const unsigned char *buf, size_t len, uint32_t dst);
void gas_udp_dgram_sum_set(unsigned char *buf, size_t len, uint32_t dst);
/* Set GAS_UDP_F_HSUM and the header-only checksum: for a datagram to a rank
 * on this host and network namespace, which crosses only the loopback device
 * (the kernel copies it in memory; no wire can corrupt its payload). */
void gas_udp_dgram_hsum_set(unsigned char *buf, size_t len, uint32_t dst);

/*
 * Check a received datagram: length, version, flags, checksum (which covers
 * the destination rank me), key, source rank and the shape of every record
 * (a CONT must follow a record it can continue, or come first).  0 and *h
 * filled; else -1 with *why_p a constant reason (h->src is filled whenever
 * the header is long enough, so the caller can count the bad datagram
 * against the rank it names).
 */
int gas_udp_dgram_check(const unsigned char *buf, size_t len, uint64_t key, uint32_t me,
                        uint32_t nranks, struct gas_udp_hdr *h, const char **why_p);

#endif
