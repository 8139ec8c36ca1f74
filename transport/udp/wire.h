/*
 * wire.h - the udp transport's datagram format, version 1 (docs/udp-wire.md).
 *
 * A datagram is a 48-byte header and zero or more records; integers are
 * little-endian.  The header carries the job key, both ranks, this stream's
 * sequence number, the acknowledgement of the reverse stream and a checksum
 * over the whole datagram.  A datagram with UDP_F_NOSEQ is a standalone
 * acknowledgement: it consumes no sequence number and carries no records.
 *
 *   off size header field
 *     0   4  magic      "GASU" (0x55534147)
 *     4   1  version    1
 *     5   1  flags      NOSEQ 1, ACKREQ 2 (acknowledge at once), RETX 4
 *     6   2  dsack      0, or d: number ack - d arrived twice (a retransmission
 *                       that was not needed: the sender's timeout was spurious)
 *     8   8  key        the job key
 *    16   4  src        sending rank
 *    20   4  dst        receiving rank
 *    24   4  seq        this datagram's number (NOSEQ: the next one to be used)
 *    28   4  ack        next number expected from dst (all before it delivered)
 *    32   8  sack       bit i: number ack + 1 + i arrived early and is held
 *    40   4  cack       completion point: dst's numbers before it are applied
 *                       and their replies are in this stream before this point
 *    44   4  sum        checksum of the datagram with this field zero
 *
 *   record: type u8, flags u8, dlen u16 (data bytes at the end), op u32,
 *           off u64, then a fixed part by type, then dlen data bytes.
 */
#ifndef GAS_UDP_WIRE_H
#define GAS_UDP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GAS_UDP_MAGIC 0x55534147u
#define GAS_UDP_VERSION 1
#define GAS_UDP_HDR_LEN 48
#define GAS_UDP_REC_LEN 16
#define GAS_UDP_IP_UDP_OVERHEAD 28   /* IPv4 + UDP headers, subtracted from the MTU */
#define GAS_UDP_MAX_DGRAM 65507

enum {
    GAS_UDP_F_NOSEQ = 1,   /* standalone acknowledgement */
    GAS_UDP_F_ACKREQ = 2,  /* the sender waits: acknowledge without delay */
    GAS_UDP_F_RETX = 4     /* a retransmission (informational) */
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
    GAS_UDP_R_COUNT
};

enum {
    GAS_UDP_RF_FINAL = 1,   /* last record of its operation: answer DONE/ERR if op != 0 */
    GAS_UDP_RF_SIGNAL = 2,  /* PUT: a signal update follows the data */
    GAS_UDP_RF_SIG_ADD = 4  /* PUT: the signal is added, else set */
};

struct gas_udp_hdr {
    uint8_t version, flags;
    uint16_t dsack;
    uint64_t key;
    uint32_t src, dst, seq, ack, cack, sum;
    uint64_t sack;
};

/* A decoded record; which of a/b/c/d are used depends on the type. */
struct gas_udp_rec {
    uint8_t type, flags;
    uint16_t dlen;
    uint32_t op;
    uint64_t off;
    uint64_t a;   /* PUT+SIGNAL: signal offset; GET: length; AMO: operand; AMO_REPLY: value; ERR: status */
    uint64_t b;   /* PUT+SIGNAL: signal value; GET: byte of the get this asks for; AMO: compare; ERR: length */
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

/* Write a header (sum 0; set it with gas_udp_dgram_sum_set once complete). */
void gas_udp_hdr_write(unsigned char *buf, const struct gas_udp_hdr *h);
/* Rewrite the fields that change on every transmission. */
void gas_udp_hdr_refresh(unsigned char *buf, uint8_t flags, uint16_t dsack, uint32_t ack,
                         uint64_t sack);

/*
 * Write a record at p (data not copied: the caller copies r->dlen bytes to
 * the returned pointer).  The caller has checked that it fits.
 */
unsigned char *gas_udp_rec_write(unsigned char *p, const struct gas_udp_rec *r);

/* Walk the records of a checked datagram: 1 and *r filled, or 0 at the end. */
int gas_udp_rec_next(const unsigned char *buf, size_t len, size_t *pos_p, struct gas_udp_rec *r);

/* The 32-bit checksum of a datagram of len >= GAS_UDP_HDR_LEN bytes (sum field excluded). */
uint32_t gas_udp_sum32(const unsigned char *buf, size_t len);
void gas_udp_dgram_sum_set(unsigned char *buf, size_t len);

/*
 * Check a received datagram: length, magic, version, key, ranks, checksum
 * and the shape of every record.  0 and *h filled; else -1 with *why_p a
 * constant reason (h->src is filled whenever the header is long enough,
 * so the caller can count the bad datagram against the rank it names).
 */
int gas_udp_dgram_check(const unsigned char *buf, size_t len, uint64_t key, uint32_t me,
                        uint32_t nranks, struct gas_udp_hdr *h, const char **why_p);

#endif
