/*
 * rendezvous.h - gasrun's server side of the boot protocol (runtime/boot_wire.h).
 *
 * The server knows nothing of processes or of how a connection arrived: a
 * connection is a stream fd that must start with HELLO (or RESUME: one that
 * replaces a rank's broken connection).  For a forked rank the
 * fd is gasrun's end of that rank's socketpair and `expected_rank` says whose
 * it is.  A connection accepted from the network (listen.c) has had its HELLO
 * read and checked already (key, rank): it comes with those bytes, which are
 * served as if read from the fd, and the rank they name as expected_rank.
 *
 * Requests of one connection are served in order.  A connection that has sent
 * BARRIER is not read further until the barrier completes, so its replies stay
 * in order and its later requests see every put made before the barrier.
 * Output to a slow reader is queued; past a high-water mark the connection's
 * input is paused until the queue drains, so memory stays bounded.
 *
 * Everything the job must act on is reported through struct gr_rdv_ops.
 */
#ifndef GR_RENDEZVOUS_H
#define GR_RENDEZVOUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gr_rdv_ops {
    void *ctx;
    /* The job must fail: a bad HELLO, a malformed request, out of memory.
     * `msg` names the connection/rank and the cause (no "gasrun:" prefix). */
    void (*fail)(void *ctx, const char *msg);
    /* A rank sent ABORT. */
    void (*abort)(void *ctx, uint32_t rank, int32_t code, const char *msg);
    /* A rank completed HELLO / sent FINI. */
    void (*hello)(void *ctx, uint32_t rank, uint32_t pid);
    void (*fini)(void *ctx, uint32_t rank);
    /* The connection of `rank` (bound, or expected) is closed: that rank can
     * send nothing more on it. */
    void (*closed)(void *ctx, uint32_t rank);
    /* `rank` connected again after its connection broke (RESUME): it has
     * one again. */
    void (*resumed)(void *ctx, uint32_t rank);
    /* A rank entered a barrier (gr_rdv_barrier_arrived() changed). */
    void (*barrier)(void *ctx);
};

struct gr_rdv;

struct gr_rdv *gr_rdv_create(uint32_t nranks, uint64_t key, const struct gr_rdv_ops *ops);
void gr_rdv_destroy(struct gr_rdv *s);

/* Serve fd (the server owns it from now on, also on failure), starting with
 * the `len` bytes at `pre` (NULL, 0: none) already read from it; 0 or -errno. */
int gr_rdv_add_conn(struct gr_rdv *s, int fd, int expected_rank, const void *pre, size_t len);

/* Ranks waiting in the current barrier, and whether `rank` is one of them. */
uint32_t gr_rdv_barrier_arrived(const struct gr_rdv *s);
bool gr_rdv_in_barrier(const struct gr_rdv *s, uint32_t rank);
bool gr_rdv_sent_fini(const struct gr_rdv *s, uint32_t rank);
/* Whether rank said that a gas_finalize of its failed (GAS_BOOT_KEY_FINI_FAILED). */
bool gr_rdv_fini_failed(const struct gr_rdv *s, uint32_t rank);
/* Whether rank said HELLO (it called gas_init). */
bool gr_rdv_helloed(const struct gr_rdv *s, uint32_t rank);

#endif
