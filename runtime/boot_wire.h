/*
 * boot_wire.h - the rendezvous protocol between a rank and gasrun.
 *
 * gasrun hands every rank one end of a stream socket (env GASRUN_BOOT_FD for a
 * forked rank); a rank it started on another host connects to it over TCP
 * instead (env GASRUN_BOOT_ADDR, boot_tcp.h).  Each message is a fixed header
 * followed by `len` payload bytes; all integers are little-endian.  The rank
 * speaks first (HELLO, with the job key); a connection whose first message is
 * not a HELLO with the job's key is closed without a reply.  Requests are
 * answered in order.
 *
 *   rank -> gasrun               payload                       reply
 *   HELLO      version u32, key u64, rank u32, pid u32        HELLO_OK: nranks u32
 *   KV_PUT     key (NUL-terminated), value bytes              none
 *   KV_GET     rank u32, key (NUL-terminated)                 KV_VALUE value | KV_MISSING
 *   BARRIER    none                                           BARRIER_DONE (once all ranks sent it)
 *   ABORT      code i32, message bytes                        none (gasrun ends the job)
 *   FINI       none                                           none (a clean exit follows)
 *   RESUME     as HELLO                                       RESUME_OK: nranks u32,
 *                                                             barriers_done u64, in_barrier u32
 *
 * RESUME is the first message of a TCP connection that replaces a rank's
 * connection which the kernel gave up on (a network outage: timed out or
 * reset; boot_gasrun.c).  gasrun accepts it from a rank that said HELLO, with
 * the same pid, closes the old connection if it still has it, and answers how
 * many boot barriers have completed and whether the rank is counted in the
 * current one, so that the rank knows whether to send its BARRIER again.  The
 * rank then sends again its KV_PUTs (a put replaces the same key's value) and
 * the request that failed.
 *
 * KV keys are per rank: KV_GET names the rank whose value it wants.  Every
 * KV_PUT a rank sent before its BARRIER is visible to every KV_GET sent after
 * the matching BARRIER_DONE (so BARRIER doubles as the fence).
 *
 * KV_GET of GAS_BOOT_KEY_JOINED (of any rank) is answered by gasrun itself:
 * KV_VALUE with the ranks that have said HELLO so far, a bitmap of
 * (nranks + 7) / 8 bytes, rank r in bit r % 8 of byte r / 8.  gas_init polls
 * it to wait for the other ranks with a deadline and to name the missing
 * ones.  A gasrun that predates it answers KV_MISSING (ranks never put it).
 *
 * Used by runtime/boot_gasrun.c (rank side) and tools/gasrun/rendezvous.c (launcher side).
 */
#ifndef GAS_BOOT_WIRE_H
#define GAS_BOOT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define GAS_BOOT_WIRE_VERSION 1u
#define GAS_BOOT_WIRE_MAGIC 0x67617362u /* "gasb" */
#define GAS_BOOT_MAX_PAYLOAD (1u << 20)

enum gas_boot_msg {
    GAS_BOOT_HELLO = 1,
    GAS_BOOT_HELLO_OK,
    GAS_BOOT_KV_PUT,
    GAS_BOOT_KV_GET,
    GAS_BOOT_KV_VALUE,
    GAS_BOOT_KV_MISSING,
    GAS_BOOT_BARRIER,
    GAS_BOOT_BARRIER_DONE,
    GAS_BOOT_ABORT,
    GAS_BOOT_FINI,
    GAS_BOOT_RESUME,
    GAS_BOOT_RESUME_OK
};

#define GAS_BOOT_HELLO_LEN 20u      /* HELLO's (and RESUME's) payload */
#define GAS_BOOT_RESUME_OK_LEN 16u

struct gas_boot_hdr {
    uint32_t magic;
    uint16_t type;      /* enum gas_boot_msg */
    uint16_t reserved;
    uint32_t len;       /* payload bytes that follow */
};

/* Write one whole message (header + payload); 0 or -errno (-EPIPE, never
 * SIGPIPE, when the peer is gone). Retries EINTR. */
int gas_boot_wire_send(int fd, unsigned type, const void *payload, size_t len);

/*
 * Read one whole message; *payload_p is malloc'ed (NUL-terminated for
 * convenience, not counted in *len_p) and owned by the caller.  Returns 0,
 * -EPROTO on a bad header or oversize payload, -ECONNRESET on EOF, or -errno.
 */
int gas_boot_wire_recv(int fd, unsigned *type_p, void **payload_p, size_t *len_p);

#define GAS_BOOT_KEY_JOINED "gasrun.joined"

/*
 * A rank whose gas_finalize failed (it is still initialised) puts
 * GAS_BOOT_KEY_FINI_FAILED once (value: the status, i32), so that gasrun,
 * seeing it exit 0 without FINI, says that its gas_finalize failed rather
 * than that it never called it.  Only gasrun reads it.
 */
#define GAS_BOOT_KEY_FINI_FAILED "gasrun.fini_failed"

/*
 * Write the ranks below nranks whose bit in `bits` (as GAS_BOOT_KEY_JOINED's)
 * equals `set` as "1, 4-7, 9" into buf (NUL-terminated; ends in "..." when it
 * does not fit, size >= 8); returns how many there are.
 */
uint32_t gas_boot_format_ranks(const unsigned char *bits, uint32_t nranks, int set, char *buf,
                               size_t size);

/* Little-endian field helpers for payloads. */
void gas_boot_put_u32(unsigned char *p, uint32_t v);
void gas_boot_put_u64(unsigned char *p, uint64_t v);
uint32_t gas_boot_get_u32(const unsigned char *p);
uint64_t gas_boot_get_u64(const unsigned char *p);

#endif
