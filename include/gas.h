/*
 * gas.h - the whole public API of libgas.
 *
 * libgas gives the ranks (processes) of a job one 64-bit global address space.
 * Collective gas_malloc() returns a distributed array; any rank reads and writes
 * any byte of it with one-sided put/get and remote atomics, and synchronises with
 * fence/quiet, signals, gas_wait_until() and gas_barrier().  Start a job with
 * `gasrun -n N ./prog`; a program started without gasrun is a job of one rank.
 *
 * Completion and ordering (OpenSHMEM-like):
 *  - A blocking put returns when the source buffer may be reused; a blocking get
 *    returns when the data is in the destination.  Blocking atomics return when
 *    the operation has been performed at the target.
 *  - An _nb call returns a gas_handle_t; gas_wait()/gas_test() complete it.  A
 *    completed put handle means the data is at the target (remote completion);
 *    a completed get handle means the data is in the destination.
 *  - An _nbi call returns at once; gas_quiet() completes it (puts and atomics are
 *    complete at their targets, gets are in their destinations, fetched atomic
 *    results are written).  Source buffers of _nbi puts may be reused at return.
 *  - gas_quiet(): every put, atomic and signal issued by the calling rank is
 *    complete at its target and visible to every rank.
 *  - gas_fence(): puts, atomics and signals issued by the calling rank before the
 *    fence are delivered to each target before those issued after it, to the
 *    same target.  (It orders; it does not wait.)
 *  - gas_barrier() implies gas_quiet() on every rank before any rank leaves it.
 *  - Atomics on one location are atomic with respect to each other, whichever
 *    rank and path issues them.  Plain puts racing with atomics on one location
 *    are not atomic with respect to them.
 *  - A put-with-signal makes the signal visible at the target only after the
 *    whole payload is visible there.
 *
 * Errors: every call returns a gas_status_t.  On an error the call has changed
 * nothing (no memory written, no peer disturbed) unless stated otherwise, a
 * message naming the call, the rank and the cause is logged and kept for
 * gas_last_error(), and, when GAS_ERRORS=abort (the default), the job is
 * aborted instead of returning.  Set GAS_ERRORS=return to handle errors.
 *
 * Threads: RMA, atomics, quiet/fence and waits may be called from several
 * threads of a rank at once.  The collective calls (gas_init, gas_finalize,
 * gas_malloc, gas_malloc_dist, gas_free, gas_barrier) must be called by one thread per rank,
 * in the same order on all ranks, and the allocation calls must not run while
 * another thread of the same rank is inside an RMA or atomic call.
 */
#ifndef GAS_H
#define GAS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GAS_EXPORT __attribute__((visibility("default")))
#else
#define GAS_EXPORT
#endif

#define GAS_VERSION_MAJOR 0
#define GAS_VERSION_MINOR 1
#define GAS_VERSION_PATCH 0
#define GAS_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/*
 * GAS_OK is 0.  Errors are negative and grouped so that a caller can tell a
 * bug in its own arguments (-1 .. -19) from a resource limit or back-pressure
 * (-20 .. -39) from a lost peer or system failure (-40 .. -59).
 */
typedef enum gas_status {
    GAS_OK = 0,
    GAS_INPROGRESS = 1,          /* not an error: the operation is still running */

    /* usage errors: the arguments are wrong */
    GAS_ERR_INVALID = -1,        /* invalid argument (null pointer, bad enum, mismatch) */
    GAS_ERR_RANK = -2,           /* rank out of range for the job */
    GAS_ERR_BOUNDS = -3,         /* pointer/range outside any allocation or segment */
    GAS_ERR_ALIGN = -4,          /* misaligned atomic or signal word */
    GAS_ERR_NOT_INIT = -5,       /* called before gas_init or after gas_finalize */
    GAS_ERR_UNSUPPORTED = -6,    /* the path or build does not provide this */
    GAS_ERR_OVERFLOW = -7,       /* a size computation would overflow */

    /* resource limits and back-pressure */
    GAS_ERR_NOMEM = -20,         /* process memory (malloc, mmap) exhausted */
    GAS_ERR_NOSPACE = -21,       /* the symmetric heap / segment is full */
    GAS_ERR_AGAIN = -22,         /* temporarily out of resources; retry */

    /* peers and the system */
    GAS_ERR_TIMEOUT = -40,       /* a wait passed its deadline (GAS_TIMEOUT) */
    GAS_ERR_PEER = -41,          /* a peer is dead or unreachable */
    GAS_ERR_IO = -42,            /* a system call failed */
    GAS_ERR_BOOTSTRAP = -43,     /* the launcher/rendezvous failed */
    GAS_ERR_INTERNAL = -59       /* a bug in libgas */
} gas_status_t;

#define GAS_STATUS_IS_USAGE(s)    ((s) <= -1 && (s) >= -19)
#define GAS_STATUS_IS_RESOURCE(s) ((s) <= -20 && (s) >= -39)
#define GAS_STATUS_IS_PEER(s)     ((s) <= -40 && (s) >= -59)

/* A short constant description of a status ("bounds error", ...). */
GAS_EXPORT const char *gas_strerror(gas_status_t status);

/* The full message of the last error raised in the calling thread ("" if none). */
GAS_EXPORT const char *gas_last_error(void);

/* ------------------------------------------------------------------------ */
/* Start and stop                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Join the job.  Collective: every rank calls it once.  Reads the GAS_*
 * configuration, maps this rank's segment and meets the other ranks through
 * the launcher.  Calling it twice returns GAS_ERR_INVALID; after gas_finalize
 * the library cannot be initialised again in the same process.
 */
GAS_EXPORT gas_status_t gas_init(void);

/*
 * Leave the job.  Collective: implies gas_barrier(); afterwards every call
 * other than gas_strerror/gas_last_error/gas_initialized returns
 * GAS_ERR_NOT_INIT.
 */
GAS_EXPORT gas_status_t gas_finalize(void);

/* 1 between gas_init and gas_finalize, else 0. */
GAS_EXPORT int gas_initialized(void);

/* This rank (0 .. nranks-1) and the job size; -1 / 0 when not initialised. */
GAS_EXPORT int gas_rank(void);
GAS_EXPORT int gas_nranks(void);

/* Abort the whole job from any rank: prints msg, every rank exits with code. */
GAS_EXPORT void gas_abort(int code, const char *msg) __attribute__((noreturn));

/* ------------------------------------------------------------------------ */
/* Global pointers                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A gas_ptr_t names one byte of the global address space: the owning rank in
 * the high bits, the byte offset into that rank's segment in the low bits.
 * The split is fixed at gas_init from the job size: rank_bits is the fewest
 * bits that count nranks but at least 64 - GAS_PTR_MAX_OFFSET_BITS, the rest
 * are offset bits, so small jobs get the largest windows and a job of 2^20
 * ranks still spans 2^64 bytes.  Offset 0 of every segment is reserved, so
 * GAS_NULL (0) is never a valid pointer.
 *
 * gas_ptr_t values are not byte addresses: adding n to one moves n bytes
 * within the owner's segment.  To step through a distributed array, use
 * gas_ptr_add()/gas_ptr_index() or the O(1) gas_layout_ptr().
 */
typedef uint64_t gas_ptr_t;
#define GAS_NULL ((gas_ptr_t)0)
#define GAS_PTR_MAX_OFFSET_BITS 57   /* the largest window a Linux process can map */

/* The split in force (read-only; filled by gas_init). */
typedef struct gas_ptr_split {
    unsigned offset_bits;      /* low bits: byte offset */
    unsigned rank_bits;        /* high bits: rank */
    uint64_t offset_mask;      /* (1 << offset_bits) - 1 */
    int rank;                  /* this rank */
    char *local_base;          /* where this rank's own segment is mapped */
    uint64_t segment_size;     /* bytes of each segment that are usable */
} gas_ptr_split_t;
GAS_EXPORT extern gas_ptr_split_t gas_ptr_split_;

/* Owner rank of p. */
static inline int gas_ptr_rank(gas_ptr_t p)
{
    return (int)(p >> gas_ptr_split_.offset_bits);
}

/* Offset of p in its owner's segment. */
static inline uint64_t gas_ptr_offset(gas_ptr_t p)
{
    return p & gas_ptr_split_.offset_mask;
}

/* The pointer to byte `offset` of rank's segment. */
static inline gas_ptr_t gas_ptr_make(int rank, uint64_t offset)
{
    return ((gas_ptr_t)(uint64_t)rank << gas_ptr_split_.offset_bits) |
           (offset & gas_ptr_split_.offset_mask);
}

/*
 * The pointer on `rank` to the same place that local address `addr` has in
 * this rank's own segment (symmetric addressing).  addr must lie in this
 * rank's segment, e.g. come from gas_ptr_local() of a pointer it owns.
 */
static inline gas_ptr_t gas_ptr_from_local(int rank, const void *addr)
{
    return gas_ptr_make(rank, (uint64_t)((const char *)addr - gas_ptr_split_.local_base));
}

/*
 * The local address of p when this process can load/store it directly (its
 * own segment, or a peer's segment mapped through shared memory), else NULL.
 * NULL for GAS_NULL and for pointers outside the owner's segment.
 */
GAS_EXPORT void *gas_ptr_local(gas_ptr_t p);

/*
 * The pointer nbytes further along the distributed array that p points into,
 * following the array's layout across owners.  Returns GAS_ERR_BOUNDS when p
 * is not in an allocation or the result would leave it (one past the end is
 * allowed).
 */
GAS_EXPORT gas_status_t gas_ptr_add(gas_ptr_t p, uint64_t nbytes, gas_ptr_t *result_p);

/* Element i (of elem_size bytes) of the array that starts at `array`. */
static inline gas_status_t gas_ptr_index(gas_ptr_t array, size_t elem_size,
                                         uint64_t i, gas_ptr_t *result_p)
{
    return gas_ptr_add(array, (uint64_t)elem_size * i, result_p);
}

/* ------------------------------------------------------------------------ */
/* Distributed arrays                                                        */
/* ------------------------------------------------------------------------ */

/*
 * How an array's bytes are spread over its ranks: the array is cut into
 * chunks of `block` bytes dealt round-robin to the ranks (chunk c goes to rank
 * c % nranks, at local offset (c / nranks) * block).  GAS_DIST_BLOCK deals one
 * chunk per rank, GAS_DIST_CYCLIC one element per chunk.
 */
typedef enum gas_dist {
    GAS_DIST_BLOCK = 0,        /* one contiguous block per rank */
    GAS_DIST_CYCLIC = 1,       /* element i on rank i % nranks */
    GAS_DIST_BLOCK_CYCLIC = 2  /* blocks of block_elems elements, round-robin */
} gas_dist_t;

/* An allocation's layout: every rank holds it; index with gas_layout_ptr(). */
typedef struct gas_layout {
    gas_ptr_t base;            /* the array's first byte (rank 0) */
    uint64_t nbytes;           /* total size of the array */
    uint64_t block;            /* bytes per chunk */
    uint64_t local_offset;     /* segment offset of the array on every rank */
    uint64_t local_bytes;      /* bytes reserved on each rank */
    int nranks;                /* ranks the array is spread over (0 .. nranks-1) */
    gas_dist_t dist;
} gas_layout_t;

/* The pointer to byte i of the array described by l (O(1), no communication). */
static inline gas_ptr_t gas_layout_ptr(const gas_layout_t *l, uint64_t i)
{
    uint64_t chunk = i / l->block;
    uint64_t owner = chunk % (uint64_t)l->nranks;
    uint64_t off = l->local_offset + (chunk / (uint64_t)l->nranks) * l->block + i % l->block;
    return gas_ptr_make((int)owner, off);
}

/*
 * Collective over all ranks: allocate an nbytes array block-distributed over
 * all ranks; *array_p is the same on every rank.  Each rank's block is
 * ceil(nbytes / nranks) rounded up to 8 bytes, so aligned 8-byte words never
 * straddle two owners.  Contents are unspecified (fresh pages read as zero).
 * nbytes == 0 gives GAS_NULL.  All ranks must pass the same arguments: a
 * mismatch is detected and returns GAS_ERR_INVALID on every rank.  When the
 * symmetric heap is full: GAS_ERR_NOSPACE (raise GAS_SEGMENT_SIZE).
 * Implies a barrier at entry.
 */
GAS_EXPORT gas_status_t gas_malloc(size_t nbytes, gas_ptr_t *array_p);

/*
 * Collective: allocate nelems elements of elem_size bytes with the given
 * distribution (block_elems is used by GAS_DIST_BLOCK_CYCLIC only).
 */
GAS_EXPORT gas_status_t gas_malloc_dist(uint64_t nelems, size_t elem_size, gas_dist_t dist,
                                        uint64_t block_elems, gas_ptr_t *array_p);

/* Collective: free an array returned by gas_malloc*; GAS_NULL is a no-op. */
GAS_EXPORT gas_status_t gas_free(gas_ptr_t array);

/* The layout of the allocation that p points into (GAS_ERR_BOUNDS if none). */
GAS_EXPORT gas_status_t gas_layout(gas_ptr_t p, gas_layout_t *layout_p);

/* ------------------------------------------------------------------------ */
/* Put and get                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Every transfer names a range of a distributed array: dst/src plus nbytes
 * may span several owners; the runtime splits it along the layout.  The range
 * must lie inside one allocation (else GAS_ERR_BOUNDS, nothing transferred).
 * nbytes == 0 is a no-op that succeeds without looking at the pointers.
 */

typedef struct gas_op *gas_handle_t;     /* an explicit-handle operation */
#define GAS_HANDLE_NULL ((gas_handle_t)0) /* an operation already complete */

GAS_EXPORT gas_status_t gas_put(gas_ptr_t dst, const void *src, size_t nbytes);
GAS_EXPORT gas_status_t gas_get(void *dst, gas_ptr_t src, size_t nbytes);

/* Explicit handle: *handle_p is GAS_HANDLE_NULL when already complete. */
GAS_EXPORT gas_status_t gas_put_nb(gas_ptr_t dst, const void *src, size_t nbytes,
                                   gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_get_nb(void *dst, gas_ptr_t src, size_t nbytes,
                                   gas_handle_t *handle_p);

/* Implicit: completed by gas_quiet() (or a barrier). */
GAS_EXPORT gas_status_t gas_put_nbi(gas_ptr_t dst, const void *src, size_t nbytes);
GAS_EXPORT gas_status_t gas_get_nbi(void *dst, gas_ptr_t src, size_t nbytes);

/* Complete a handle (and free it); GAS_HANDLE_NULL returns GAS_OK at once. */
GAS_EXPORT gas_status_t gas_wait(gas_handle_t handle);
/* *done_p = 1 and the handle freed when complete, else 0; never blocks. */
GAS_EXPORT gas_status_t gas_test(gas_handle_t handle, int *done_p);

/*
 * Strided transfers of nelems elements of elem_size bytes: element k moves
 * between dst + k*dst_stride*elem_size and src + k*src_stride*elem_size
 * (strides in elements, >= 1, like OpenSHMEM iput/iget).
 */
GAS_EXPORT gas_status_t gas_iput(gas_ptr_t dst, const void *src, size_t dst_stride,
                                 size_t src_stride, size_t elem_size, size_t nelems);
GAS_EXPORT gas_status_t gas_iget(void *dst, gas_ptr_t src, size_t dst_stride,
                                 size_t src_stride, size_t elem_size, size_t nelems);

/* ------------------------------------------------------------------------ */
/* Ordering                                                                  */
/* ------------------------------------------------------------------------ */

GAS_EXPORT gas_status_t gas_fence(void);
GAS_EXPORT gas_status_t gas_quiet(void);

/* ------------------------------------------------------------------------ */
/* Atomics                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Remote atomics on naturally aligned 32- and 64-bit integers (misaligned:
 * GAS_ERR_ALIGN).  The generic call carries operands in 64 bits; the typed
 * wrappers below are what most programs use.  Fetching forms return the
 * value before the operation.
 */
typedef enum gas_amo_op {
    GAS_AMO_FETCH,       /* result = *p */
    GAS_AMO_SET,         /* *p = operand */
    GAS_AMO_SWAP,        /* result = *p, *p = operand */
    GAS_AMO_CSWAP,       /* result = *p, if (*p == compare) *p = operand */
    GAS_AMO_ADD,         /* *p += operand */
    GAS_AMO_FETCH_ADD,   /* result = *p, *p += operand */
    GAS_AMO_AND,
    GAS_AMO_FETCH_AND,
    GAS_AMO_OR,
    GAS_AMO_FETCH_OR,
    GAS_AMO_XOR,
    GAS_AMO_FETCH_XOR,
    GAS_AMO_OP_COUNT
} gas_amo_op_t;

/* True for the ops that produce a result. */
static inline int gas_amo_fetches(gas_amo_op_t op)
{
    return op == GAS_AMO_FETCH || op == GAS_AMO_SWAP || op == GAS_AMO_CSWAP ||
           op == GAS_AMO_FETCH_ADD || op == GAS_AMO_FETCH_AND ||
           op == GAS_AMO_FETCH_OR || op == GAS_AMO_FETCH_XOR;
}

/*
 * Perform op on the width-byte (4 or 8) integer at p.  For fetching ops
 * result_p must not be NULL and receives the old value (zero-extended for
 * width 4); for the others it is ignored.
 */
GAS_EXPORT gas_status_t gas_amo(gas_amo_op_t op, unsigned width, gas_ptr_t p,
                                uint64_t operand, uint64_t compare, uint64_t *result_p);

/* As gas_amo, completed by gas_quiet(); *result_p is written by then. */
GAS_EXPORT gas_status_t gas_amo_nbi(gas_amo_op_t op, unsigned width, gas_ptr_t p,
                                    uint64_t operand, uint64_t compare, uint64_t *result_p);

/* Typed wrappers: gas_atomic_<op>_<type>, e.g. gas_atomic_fetch_add_u64(p, 1, &old). */
#define GAS_DEFINE_ATOMICS_(T, S, W)                                                  \
static inline gas_status_t gas_atomic_fetch_##S(gas_ptr_t p, T *old_p)               \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH, W, p, 0, 0, &r);               \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_set_##S(gas_ptr_t p, T v)                      \
{ return gas_amo(GAS_AMO_SET, W, p, (uint64_t)v, 0, NULL); }                         \
static inline gas_status_t gas_atomic_swap_##S(gas_ptr_t p, T v, T *old_p)           \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_SWAP, W, p, (uint64_t)v, 0, &r);      \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_cswap_##S(gas_ptr_t p, T cmp, T v, T *old_p)   \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_CSWAP, W, p, (uint64_t)v,             \
                                       (uint64_t)cmp, &r);                          \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_add_##S(gas_ptr_t p, T v)                      \
{ return gas_amo(GAS_AMO_ADD, W, p, (uint64_t)v, 0, NULL); }                         \
static inline gas_status_t gas_atomic_fetch_add_##S(gas_ptr_t p, T v, T *old_p)      \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH_ADD, W, p, (uint64_t)v, 0, &r); \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_and_##S(gas_ptr_t p, T v)                      \
{ return gas_amo(GAS_AMO_AND, W, p, (uint64_t)v, 0, NULL); }                         \
static inline gas_status_t gas_atomic_fetch_and_##S(gas_ptr_t p, T v, T *old_p)      \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH_AND, W, p, (uint64_t)v, 0, &r); \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_or_##S(gas_ptr_t p, T v)                       \
{ return gas_amo(GAS_AMO_OR, W, p, (uint64_t)v, 0, NULL); }                          \
static inline gas_status_t gas_atomic_fetch_or_##S(gas_ptr_t p, T v, T *old_p)       \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH_OR, W, p, (uint64_t)v, 0, &r);  \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }                                        \
static inline gas_status_t gas_atomic_xor_##S(gas_ptr_t p, T v)                      \
{ return gas_amo(GAS_AMO_XOR, W, p, (uint64_t)v, 0, NULL); }                         \
static inline gas_status_t gas_atomic_fetch_xor_##S(gas_ptr_t p, T v, T *old_p)      \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH_XOR, W, p, (uint64_t)v, 0, &r); \
  if (s == GAS_OK) { *old_p = (T)r; } return s; }

GAS_DEFINE_ATOMICS_(uint32_t, u32, 4)
GAS_DEFINE_ATOMICS_(int32_t, i32, 4)
GAS_DEFINE_ATOMICS_(uint64_t, u64, 8)
GAS_DEFINE_ATOMICS_(int64_t, i64, 8)

/* ------------------------------------------------------------------------ */
/* Signals and waiting                                                       */
/* ------------------------------------------------------------------------ */

typedef enum gas_signal_op {
    GAS_SIGNAL_SET = 0,  /* *sig = value */
    GAS_SIGNAL_ADD = 1   /* *sig += value */
} gas_signal_op_t;

/*
 * Put nbytes to dst, then update the 8-byte-aligned 64-bit signal word at sig.
 * The signal becomes visible at its owner only after the whole payload is
 * visible at every owner of dst.  Returns when src may be reused.
 */
GAS_EXPORT gas_status_t gas_put_signal(gas_ptr_t dst, const void *src, size_t nbytes,
                                       gas_ptr_t sig, uint64_t value, gas_signal_op_t op);
/* As gas_put_signal, completed at the target by gas_quiet(). */
GAS_EXPORT gas_status_t gas_put_signal_nbi(gas_ptr_t dst, const void *src, size_t nbytes,
                                           gas_ptr_t sig, uint64_t value, gas_signal_op_t op);

typedef enum gas_cmp {
    GAS_CMP_EQ, GAS_CMP_NE, GAS_CMP_GT, GAS_CMP_GE, GAS_CMP_LT, GAS_CMP_LE
} gas_cmp_t;

/*
 * Wait until (*ivar cmp value) holds, where ivar is local memory (normally in
 * this rank's segment, updated by other ranks' puts, atomics or signals).
 * Spins briefly, then sleeps in the kernel; keeps the runtime progressing.
 * Returns GAS_ERR_TIMEOUT after GAS_TIMEOUT seconds (when set).  Reads after
 * a successful return see every write the satisfying writer made before it.
 */
GAS_EXPORT gas_status_t gas_wait_until_i32(const int32_t *ivar, gas_cmp_t cmp, int32_t value);
GAS_EXPORT gas_status_t gas_wait_until_u32(const uint32_t *ivar, gas_cmp_t cmp, uint32_t value);
GAS_EXPORT gas_status_t gas_wait_until_i64(const int64_t *ivar, gas_cmp_t cmp, int64_t value);
GAS_EXPORT gas_status_t gas_wait_until_u64(const uint64_t *ivar, gas_cmp_t cmp, uint64_t value);

/* ------------------------------------------------------------------------ */
/* Synchronisation                                                           */
/* ------------------------------------------------------------------------ */

/* All ranks: implies gas_quiet(), returns when every rank has entered it. */
GAS_EXPORT gas_status_t gas_barrier(void);

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Counters of the path to one peer since gas_init.  For rank == gas_rank()
 * they are this rank's totals over all peers (for udp: every datagram its
 * socket sent or received, bad ones from unknown senders included) and
 * `endpoint` is this rank's own udp address.  Paths without datagrams (shm)
 * report zeros.  Asking about a peer makes its route if none exists yet.
 * Setting GAS_STATS=y makes every rank print these, one line per peer, at
 * gas_finalize.
 */
typedef struct gas_peer_stats {
    char transport[8];         /* the path: "shm", "udp", "rdma" */
    char endpoint[48];         /* udp: "a.b.c.d:port" of the peer (own rank: its own) */
    uint64_t datagrams_sent;   /* every datagram, standalone acks included */
    uint64_t datagrams_received;
    uint64_t bytes_sent;       /* udp payload bytes of those datagrams */
    uint64_t bytes_received;
    uint64_t retransmits;      /* datagrams sent again after a loss or timeout */
    uint64_t duplicates;       /* datagrams that arrived again and were dropped */
    uint64_t acks_sent;        /* standalone acknowledgements */
    uint64_t acks_received;
    uint64_t bad_datagrams;    /* dropped: malformed, wrong key/version/rank, bad checksum */
    uint64_t rejected;         /* requests refused (out of the segment); an error went back */
    uint64_t srtt_ns;          /* smoothed round-trip time, 0 before the first sample */
    uint64_t rto_ns;           /* retransmission timeout in force */
    /* rdma peers (the udp counters above are those of the udp channel under it) */
    char route[12];            /* "udp" (not upgraded), "connecting", "rc", "fallback", "failed" */
    uint64_t rdma_work_requests; /* work requests posted */
    uint64_t rdma_bytes;       /* bytes written, read or updated over RC */
    uint64_t rdma_errors;      /* work requests that completed in error */
    uint32_t upgraded_peers;   /* peers now reached over RC (this rank's totals; 0/1 per peer) */
} gas_peer_stats_t;

/* Fill *stats_p for rank (GAS_ERR_RANK when out of range). */
GAS_EXPORT gas_status_t gas_peer_stats(int rank, gas_peer_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif /* GAS_H */
