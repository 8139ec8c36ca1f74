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
 *    a completed get handle means the data is in the destination.  The source
 *    buffer of an _nb put may be reused at return (it is copied before).
 *  - An _nbi call returns at once; gas_quiet() completes it (puts and atomics are
 *    complete at their targets, gets are in their destinations, fetched atomic
 *    results are written).  Source buffers of _nbi puts may be reused at return.
 *  - gas_quiet(): every put, atomic and signal issued by the calling rank is
 *    complete at its target and visible to every rank.
 *  - gas_fence(): puts, atomics and signals issued by the calling rank before the
 *    fence are delivered to each target before those issued after it, to the
 *    same target.  (It orders; it does not wait.)
 *  - gas_barrier() implies gas_quiet() on every rank before any rank leaves it.
 *  - Deferred failures: an operation without a completion of its own (gas_put
 *    and gas_put_nbi over udp, _nbi atomics, gas_put_signal's payload...) that
 *    its target refuses (GAS_ERR_BOUNDS, GAS_ERR_ALIGN: the target checks the
 *    offset) fails later, and the next quiet reports it: gas_quiet, or a call
 *    that implies one (gas_barrier, gas_team_barrier and its _nb form,
 *    gas_malloc, gas_malloc_dist, gas_free, gas_team_destroy, gas_finalize).
 *    Such a report is an earlier operation's failure, not the call's: the
 *    call still does its whole part (the barrier completes on every rank,
 *    the array is allocated or freed and *array_p written, the team is
 *    destroyed, the rank leaves the job) and only then returns that status,
 *    its message saying "an earlier operation of this rank failed: ...
 *    (reported here; the barrier completed)".  Failures that make the
 *    synchronisation itself impossible (GAS_ERR_PEER, GAS_ERR_TIMEOUT) still
 *    fail the call at once.  A call that fails for its own reason keeps such
 *    a report for the next of these calls that completes.
 *  - Atomics on one location are atomic with respect to each other, whichever
 *    rank and path issues them.  Plain puts racing with atomics on one location
 *    are not atomic with respect to them.
 *  - A put-with-signal makes the signal visible at the target only after the
 *    whole payload is visible there.
 *
 * Errors: every call returns a gas_status_t.  On an error the call has changed
 * nothing (no memory written, no peer disturbed) unless stated otherwise (a
 * deferred failure reported by a call that completed, above), a
 * message naming the call, the rank and the cause is logged and kept for
 * gas_last_error(), and, when GAS_ERRORS=abort (the default), the job is
 * aborted instead of returning.  Set GAS_ERRORS=return to handle errors.
 *
 * Threads: RMA, atomics, quiet/fence and waits may be called from several
 * threads of a rank at once.  The collective calls (gas_init, gas_finalize,
 * gas_malloc, gas_malloc_dist, gas_free, gas_barrier, teams and collectives)
 * must be called by one thread per rank,
 * in the same order on all ranks, and the allocation calls must not run while
 * another thread of the same rank is inside an RMA or atomic call.  A
 * collective call on a team made while another thread of the same rank is
 * inside one on that team (from entry to return; for an _nb call, its start)
 * fails with GAS_ERR_INVALID saying so and does nothing (it is not counted
 * as the team's next call); gas_barrier, gas_malloc, gas_malloc_dist,
 * gas_free and gas_finalize count as calls on GAS_TEAM_WORLD.
 * gas_alloc, gas_dealloc and gas_memory_stats may be called from any thread
 * at any time between gas_init and gas_finalize, and may overlap a
 * gas_finalize that another thread of the rank runs: each such call either
 * completes as usual (gas_finalize waits for it before it releases the
 * segment; a block it returned is gone with the segment) or fails with
 * GAS_ERR_NOT_INIT and does nothing (once gas_finalize has begun to release
 * the memory, or has returned).  Threads that used them may exit at any time,
 * before or after gas_finalize.
 * The same holds for every other call that another thread of the rank makes
 * while one thread runs gas_finalize (RMA, atomics, signals, gas_fence,
 * gas_quiet, gas_wait/gas_test, gas_wait_until, gas_peer_stats,
 * gas_ptr_add, gas_layout ...): it completes as usual, or returns
 * GAS_ERR_NOT_INIT saying "gas_finalize was called by another thread of
 * this rank" (gas_ptr_local returns NULL, gas_team_rank -1, gas_team_size
 * 0), and never touches released memory.  A thread blocked in a libgas
 * wait (gas_wait_until, a blocking get or atomic, gas_wait, gas_quiet) when
 * gas_finalize has passed its barrier is woken and returns GAS_ERR_NOT_INIT
 * (a call that stops so may have done part of its work, like one that
 * times out); gas_finalize waits for every such call to return before it
 * releases anything.  With GAS_ERRORS=abort that GAS_ERR_NOT_INIT ends the
 * job like any error: a program whose threads may be in libgas calls at
 * gas_finalize sets GAS_ERRORS=return, or stops them first.
 *
 * Memory: each rank's segment is a reservation of address space that is
 * backed page by page when first touched, so it can be far larger than the
 * machine's memory (GAS_SEGMENT_SIZE; by default sized from the address
 * space).  gas_malloc'ed arrays grow up from its bottom, gas_alloc blocks
 * down from its top, and either side can grow until they meet.  Pages go to
 * the rank's NUMA node (GAS_NUMA) with huge pages per GAS_HUGEPAGES.  Touching
 * a page that the system cannot back (memory, tmpfs or hugetlb pool
 * exhausted, overcommit refused) kills the rank with SIGBUS after a message
 * naming the limit; with GAS_PREFAULT=y allocations are backed when they are
 * made and fail with GAS_ERR_NOMEM instead.  docs/memory.md has the details.
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
    GAS_ERR_PEER = -41,          /* a peer is dead or unreachable (udp: nothing
                                  * acknowledged for GAS_UDP_PEER_TIMEOUT); then
                                  * barriers, collectives and gas_wait_until that
                                  * may need it fail with it too (docs/udp.md) */
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
 * the library cannot be initialised again in the same process (gas_init
 * returns GAS_ERR_INVALID, saying so).
 *
 * Under gasrun it waits for every rank of the job to call gas_init: it warns
 * after GAS_STALL_WARN and fails with GAS_ERR_TIMEOUT after GAS_TIMEOUT (0,
 * the default: waits for ever), naming the ranks not yet arrived.  A process
 * whose GASRUN_NRANKS says it is one rank of several but that has no boot
 * channel to gasrun (GASRUN_BOOT_FD / GASRUN_BOOT_ADDR unset) fails with
 * GAS_ERR_BOOTSTRAP rather than run as a job of one.
 *
 * fork(): libgas serves only the process that called gas_init.  A child
 * that fork() makes of it may exec another program or exit (system() and
 * popen() are fine); any libgas call in the child fails with
 * GAS_ERR_NOT_INIT (gas_init with GAS_ERR_INVALID), saying so, and with
 * GAS_ERRORS=abort that ends the child alone, not the job.
 */
GAS_EXPORT gas_status_t gas_init(void);

/*
 * Leave the job.  Collective: implies gas_barrier(); afterwards every call
 * other than gas_init (GAS_ERR_INVALID, above) and
 * gas_strerror/gas_last_error/gas_initialized returns GAS_ERR_NOT_INIT.
 * Other threads of the rank may be inside libgas calls meanwhile: once its
 * barrier has completed, gas_finalize refuses new calls (GAS_ERR_NOT_INIT),
 * wakes the threads blocked in libgas waits (their calls return
 * GAS_ERR_NOT_INIT), and waits for every call under way to return before it
 * unmaps or releases anything ("Threads" at the top).
 * When that barrier times out (GAS_TIMEOUT: ranks late or gone), it returns
 * GAS_ERR_TIMEOUT and the rank stays initialised: calling gas_finalize again
 * resumes the same barrier, as gas_barrier does.  An earlier operation's
 * failure that its quiet finds is returned after the rank has left the job
 * (see "Deferred failures" at the top): gas_initialized() then says 0.
 * gas_barrier (and gas_team_barrier(GAS_TEAM_WORLD), which is gas_barrier),
 * gas_finalize, gas_malloc, gas_malloc_dist and gas_free all
 * begin with the world barrier and check that every rank made the same call:
 * where another rank called one of the others at the same point, every rank
 * gets GAS_ERR_INVALID naming the other call, nothing is done (this rank
 * stays initialised: the message says to call gas_finalize again, which
 * starts a new world barrier), and the job may go on.  Collectives on teams (even
 * GAS_TEAM_WORLD) run apart from that barrier, but a member waiting in a
 * collective that this rank never made (numbered with this rank's next call
 * on that team or later) while this rank is in gas_finalize is a mismatch
 * too, found by the wait notes (docs/collectives.md) within about 0.2 s:
 * this gas_finalize returns GAS_ERR_INVALID naming the member and its
 * collective and leaves this rank initialised (it stands in for that call:
 * the call counts as failed here, and the members waiting in it fail with
 * GAS_ERR_INVALID naming gas_finalize), or, where that member already gave
 * up and finalized too, it finalizes and returns GAS_ERR_INVALID reporting
 * the mismatch found at the team's end.  Either way no rank waits until
 * GAS_TIMEOUT (for ever by default); call gas_finalize again to leave.
 * gas_barrier, gas_malloc, gas_malloc_dist and gas_free against a team
 * collective are found the same way (see gas_barrier).
 * A call that failed after its world barrier began (a timeout, a mismatch
 * found while it waited) leaves that barrier to this rank's next one of
 * these calls, which resumes it as the failed call: when it is another
 * call (gas_barrier after a failed gas_finalize), every rank reports that
 * mismatch once, this rank naming its own unfinished call; retry the same
 * call to avoid it.  gas_finalize is the exception where every other rank
 * made the failed call there (so it completed for them): the finalize then
 * goes on with a world barrier of its own and finalizes with theirs.  A
 * gas_finalize that returns with this rank still initialised tells gasrun,
 * so a rank that then exits is reported as "after its gas_finalize failed".
 */
GAS_EXPORT gas_status_t gas_finalize(void);

/* 1 between gas_init and gas_finalize, else 0. */
GAS_EXPORT int gas_initialized(void);

/* This rank (0 .. nranks-1) and the job size; -1 / 0 when not initialised. */
GAS_EXPORT int gas_rank(void);
GAS_EXPORT int gas_nranks(void);

/* Abort the whole job from any rank: prints msg, every rank exits with code's
 * low 8 bits (all an exit status holds), or 1 where those are 0 (256, 512). */
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
 * Which ranges are valid: below the symmetric heap's end (the same offset on
 * every rank) a pointer must lie in a gas_malloc'ed array, and a range must
 * stay in it (else GAS_ERR_BOUNDS).  Above it, a pointer into the part of its
 * owner's segment that the gas_alloc arenas hold names raw bytes there: a
 * range must stay inside that part of the segment, and nothing checks that
 * the block is still allocated (the owner's allocator state is not visible
 * to other ranks).  Anything in between is GAS_ERR_BOUNDS.  So a pointer
 * into a freed gas_malloc array is GAS_ERR_BOUNDS only while the heap has
 * not shrunk past it: once gas_free lowered the heap's end, the owner's
 * gas_alloc arenas may grow into that space, and a stale pointer then names
 * their bytes (a put through it lands in whatever block lives there, as a
 * write through a dangling pointer would).
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

/* Element i (of elem_size bytes) of the array that starts at `array`
 * (elem_size * i past 2^64 - 1 gives gas_ptr_add's GAS_ERR_BOUNDS). */
static inline gas_status_t gas_ptr_index(gas_ptr_t array, size_t elem_size,
                                         uint64_t i, gas_ptr_t *result_p)
{
    uint64_t n;
    if (__builtin_mul_overflow((uint64_t)elem_size, i, &n))
        n = UINT64_MAX;
    return gas_ptr_add(array, n, result_p);
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
    uint64_t local_bytes;      /* bytes reserved on each rank (the most any rank holds) */
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
 * mismatch (or a NULL array_p on some rank) is detected and returns
 * GAS_ERR_INVALID on every rank.  When the
 * symmetric heap cannot grow far enough on every rank (the segment is full,
 * up to the gas_alloc blocks at its top): GAS_ERR_NOSPACE (raise
 * GAS_SEGMENT_SIZE).  With GAS_PREFAULT=y each rank's share is backed before
 * the call returns; if any rank cannot back its share, every rank gets
 * GAS_ERR_NOMEM and nothing is allocated.
 * Implies a barrier at entry.
 */
GAS_EXPORT gas_status_t gas_malloc(size_t nbytes, gas_ptr_t *array_p);

/*
 * Collective: allocate nelems elements of elem_size bytes with the given
 * distribution (block_elems is used by GAS_DIST_BLOCK_CYCLIC only).  Every
 * rank reserves, at the same segment offset, as much as the rank holding the
 * most (rank 0): a block larger than the array reserves the array's size.
 */
GAS_EXPORT gas_status_t gas_malloc_dist(uint64_t nelems, size_t elem_size, gas_dist_t dist,
                                        uint64_t block_elems, gas_ptr_t *array_p);

/* Collective: free an array returned by gas_malloc*; GAS_NULL is a no-op. */
GAS_EXPORT gas_status_t gas_free(gas_ptr_t array);

/* The layout of the allocation that p points into (GAS_ERR_BOUNDS if none). */
GAS_EXPORT gas_status_t gas_layout(gas_ptr_t p, gas_layout_t *layout_p);

/* ------------------------------------------------------------------------ */
/* Non-collective allocation                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Allocate nbytes of remotely accessible memory in the calling rank's own
 * segment, without involving other ranks: *ptr_p is a pointer on this rank
 * that any rank may put/get/atomic once it has learned it (send it in a
 * put, a signal, an array).  Blocks are aligned to 16 bytes (8 for nbytes
 * under 16); contents are unspecified.  nbytes == 0 gives GAS_NULL.
 * Thread-safe.  GAS_ERR_NOSPACE when the segment is full (raise
 * GAS_SEGMENT_SIZE); GAS_ERR_NOMEM when GAS_PREFAULT=y could not back it.
 *
 * Implemented with jemalloc arenas (one group per NUMA node the rank uses,
 * one arena per concurrently allocating thread up to GAS_ARENAS) whose
 * extents are carved from the top of the segment; blocks of 1 MiB or more
 * are carved directly, page-aligned and rounded up to a page, and their
 * space is reused by any later block once freed.  Linking libgas brings in
 * libjemalloc (docs/memory.md says how it meets the program's own malloc).
 */
GAS_EXPORT gas_status_t gas_alloc(size_t nbytes, gas_ptr_t *ptr_p);

/*
 * Free a block from gas_alloc.  Only the rank that allocated it may free it
 * (another rank's pointer: GAS_ERR_INVALID), from any of its threads.  ptr
 * must be exactly what gas_alloc returned and not freed since: anything else
 * (a block freed twice, a pointer into a block or between blocks) is
 * GAS_ERR_INVALID ("not a live block from gas_alloc", nothing done), found
 * every time by a map of one bit per 8 bytes of the arenas' space (a 4 KiB
 * page of bits per 256 KiB that holds blocks; docs/memory.md).  GAS_NULL is a
 * no-op.  Other ranks must be done with the block.
 */
GAS_EXPORT gas_status_t gas_dealloc(gas_ptr_t ptr);

/* A rank's memory: what its segment reserves and what is backed. */
typedef struct gas_mem_stats {
    uint64_t reserved;        /* bytes of address space of this rank's segment */
    uint64_t backed;          /* bytes of it backed by memory now (touched by any rank) */
    uint64_t heap_end;        /* the symmetric heap covers offsets [64 KiB, heap_end) */
    uint64_t heap_used;       /* bytes of it reserved for live gas_malloc arrays (per array,
                               * its layout's local_bytes rounded up to 64; the same on
                               * every rank); 0 when the program has gas_malloc'ed nothing */
    uint64_t heap_internal;   /* bytes of it libgas keeps for itself (the world team's
                               * collective scratch, GAS_COLL_SCRATCH); not in heap_used */
    uint64_t arena_reserved;  /* bytes at the top of the segment held by the gas_alloc arenas */
    uint64_t arena_used;      /* bytes in live gas_alloc blocks, and in the collective
                               * scratch of teams split from others (taken from the arenas);
                               * each block counted at the size the allocator gave it
                               * (jemalloc's size class, e.g. 8 for 1 byte and 112 for 100;
                               * from 1 MiB, whole 4 KiB pages); freed blocks that a thread
                               * keeps cached for reuse are not counted.  Exact whenever no
                               * other thread of the rank allocates or frees meanwhile */
    uint64_t unclaimed;       /* bytes between the two, free for either to grow into */
    uint64_t peers_mapped;    /* bytes of node peers' segments this process maps */
    int numa_node;            /* the node the segment is bound to or prefers, -1 if none */
    int arenas;               /* gas_alloc arenas of this rank */
    char numa_policy[256];    /* e.g. "bound to node 0, the node of CPUs 0-3" */
    char hugepages[384];      /* e.g. "off (madvise NOHUGEPAGE; ...)" */
    char backing[128];        /* "memfd", "tmpfs /dev/shm", ... */
} gas_mem_stats_t;

/* Fill *stats_p with this rank's numbers (a snapshot; thread-safe). */
GAS_EXPORT gas_status_t gas_memory_stats(gas_mem_stats_t *stats_p);

/* ------------------------------------------------------------------------ */
/* Put and get                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Every transfer names a range of a distributed array: dst/src plus nbytes
 * may span several owners; the runtime splits it along the layout.  The range
 * must lie inside one allocation (else GAS_ERR_BOUNDS, nothing transferred),
 * or, for gas_alloc memory, inside its owner's segment (see Global pointers).
 * nbytes == 0 is a no-op that succeeds without looking at the pointers.
 *
 * GAS_TIMEOUT bounds each call as a whole: a call that waits several times
 * (for room to send its pieces, then for their answers; gas_iget, gas_iput,
 * the atomics, gas_put_signal, gas_quiet, a barrier's rounds, a blocking
 * collective, gas_malloc's barriers, gas_free, gas_finalize, a team split's
 * two allgathers, gas_team_destroy) returns GAS_ERR_TIMEOUT once GAS_TIMEOUT
 * has passed since it began to wait, not GAS_TIMEOUT per wait (one exception:
 * a failed collective's wait for puts into its buffers, under Collectives).  Time in
 * which the waiting rank itself did not run (stopped with SIGSTOP or ^Z,
 * held at a debugger's breakpoint, starved for more than about 0.2 s at a
 * time) is not counted: a rank resumed after such a stop goes on waiting
 * and reads what its peers sent meanwhile.
 * A blocking call that gives up waiting (GAS_ERR_TIMEOUT, GAS_TIMEOUT set and
 * a peer late or stopped) writes nothing of the caller's after it returns: a
 * late answer to gas_get, gas_iget or a fetching atomic (gas_amo and the
 * typed gas_atomic_fetch_* calls) is dropped.  The request itself may still
 * take effect at the target once the peer serves it (a put lands, an atomic
 * is applied; its fetched value is lost).  The buffers that _nbi and _nb
 * operations write (a get's destination, a fetching atomic's result) belong
 * to the runtime until a gas_quiet or gas_wait on them succeeds; a gas_wait
 * that times out leaves the handle valid.  The sources of _nbi and _nb puts
 * (and put-with-signal) are copied before the call returns and may be reused
 * at once.
 */

typedef struct gas_op *gas_handle_t;     /* an explicit-handle operation */
#define GAS_HANDLE_NULL ((gas_handle_t)0) /* an operation already complete */

GAS_EXPORT gas_status_t gas_put(gas_ptr_t dst, const void *src, size_t nbytes);
GAS_EXPORT gas_status_t gas_get(void *dst, gas_ptr_t src, size_t nbytes);

/*
 * Explicit handle: *handle_p is GAS_HANDLE_NULL when already complete, and
 * also when the call fails (whatever the error; unlike other outputs, the
 * handle is written on failure too), so gas_wait/gas_test on the handle of a
 * failed call return GAS_OK at once instead of using garbage.  The failure
 * itself is the call's return value.
 */
GAS_EXPORT gas_status_t gas_put_nb(gas_ptr_t dst, const void *src, size_t nbytes,
                                   gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_get_nb(void *dst, gas_ptr_t src, size_t nbytes,
                                   gas_handle_t *handle_p);

/* Implicit: completed by gas_quiet() (or a barrier). */
GAS_EXPORT gas_status_t gas_put_nbi(gas_ptr_t dst, const void *src, size_t nbytes);
GAS_EXPORT gas_status_t gas_get_nbi(void *dst, gas_ptr_t src, size_t nbytes);

/* Complete a handle (and free it); GAS_HANDLE_NULL returns GAS_OK at once. */
GAS_EXPORT gas_status_t gas_wait(gas_handle_t handle);
/*
 * *done_p = 1 and the handle freed when complete, else 0; never blocks.
 * Polling calls (gas_test, gas_progress, gas_test_until_*) that find
 * nothing done yield the CPU once (sched_yield) where waits do not spin:
 * on a node with more ranks than CPUs, or with GAS_WAIT_SPIN=0.  A loop of
 * them then lets the peers it polls for run, as the library's own waits
 * do (docs/architecture.md, "Waiting").
 */
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
/* Complete every operation this rank issued; an earlier operation's refusal
 * by its target is returned here (or by the next call implying a quiet:
 * "Deferred failures" at the top), after everything else has completed. */
GAS_EXPORT gas_status_t gas_quiet(void);

/*
 * One pass of the runtime's progress, never blocking: serves the requests
 * that peers' operations sent this rank (over udp with GAS_PROGRESS=poll,
 * nobody else does), sends and acknowledges what is due, and advances this
 * rank's pending non-blocking collectives.  For loops that compute, or spin
 * on plain loads of the local segment, for long stretches without other
 * libgas calls: with GAS_PROGRESS=poll a rank that makes no call for
 * GAS_UDP_PEER_TIMEOUT is declared dead by its peers (docs/udp.md,
 * "Progress").  Like upcxx::progress() or gasnet_AMPoll().  Completes
 * nothing by itself and reports no earlier operation's failure (gas_quiet
 * and gas_test do); GAS_ERR_NOT_INIT outside gas_init..gas_finalize.
 * A pass that found nothing to do yields the CPU where waits do not spin
 * (see gas_test).
 */
GAS_EXPORT gas_status_t gas_progress(void);

/* ------------------------------------------------------------------------ */
/* Atomics                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Remote atomics on naturally aligned 32- and 64-bit integers (misaligned:
 * GAS_ERR_ALIGN).  The generic call carries operands in 64 bits; the typed
 * wrappers below are what most programs use.  Fetching forms return the
 * value before the operation.
 *
 * Checks, in this order, the same on every path: the op, the width and a
 * fetching op's result_p (GAS_ERR_INVALID); the alignment of p's offset
 * (GAS_ERR_ALIGN, whatever else is wrong with p: a misaligned word at the
 * end of an array, or on a rank the job does not have, is GAS_ERR_ALIGN);
 * then p's rank and range (GAS_ERR_RANK, GAS_ERR_BOUNDS).  An aligned word
 * that the array's layout splits between two owners is GAS_ERR_ALIGN too.
 * gas_put_signal checks its signal word the same way, before the payload.
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

/*
 * Typed wrappers: gas_atomic_<op>_<type>, e.g. gas_atomic_fetch_add_u64(p, 1, &old).
 * They call gas_amo, so their errors name it with the op and width:
 * "gas_amo (fetch_add, 64-bit): ...".
 */
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

/*
 * float and double: fetch, set and swap (OpenSHMEM's extended atomics), on
 * the value's bits, so a NaN or -0.0 is stored and returned exactly.  No
 * arithmetic or compare-and-swap (a bitwise compare would take -0.0 and 0.0
 * for different values and NaN for equal): add to a float with a cswap loop
 * on its bits through the u32/u64 forms where needed.
 */
#define GAS_DEFINE_FLOAT_ATOMICS_(T, S, W, U)                                                 \
static inline gas_status_t gas_atomic_fetch_##S(gas_ptr_t p, T *old_p)                        \
{ uint64_t r; gas_status_t s = gas_amo(GAS_AMO_FETCH, W, p, 0, 0, &r);                        \
  if (s == GAS_OK) { U u = (U)r; __builtin_memcpy(old_p, &u, sizeof u); } return s; }         \
static inline gas_status_t gas_atomic_set_##S(gas_ptr_t p, T v)                               \
{ U u; __builtin_memcpy(&u, &v, sizeof u); return gas_amo(GAS_AMO_SET, W, p, u, 0, NULL); }   \
static inline gas_status_t gas_atomic_swap_##S(gas_ptr_t p, T v, T *old_p)                    \
{ U u; __builtin_memcpy(&u, &v, sizeof u); uint64_t r;                                        \
  gas_status_t s = gas_amo(GAS_AMO_SWAP, W, p, u, 0, &r);                                     \
  if (s == GAS_OK) { u = (U)r; __builtin_memcpy(old_p, &u, sizeof u); } return s; }

GAS_DEFINE_FLOAT_ATOMICS_(float, f32, 4, uint32_t)
GAS_DEFINE_FLOAT_ATOMICS_(double, f64, 8, uint64_t)

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
 *
 * A bad signal word fails the call with none of the payload written: the
 * checks of the atomics (GAS_ERR_ALIGN first, then GAS_ERR_RANK and
 * GAS_ERR_BOUNDS) are made before anything is sent.  A raw signal word
 * (gas_alloc side) of a rank reached over udp is checked by its owner, which
 * refuses one in its unclaimed middle (GAS_ERR_BOUNDS) and then writes none
 * of the payload either; that error is returned by the next gas_quiet (or
 * barrier) when the payload goes with the signal to its owner, else by this
 * call, which asks the owner before writing (one round trip).  One
 * exception: over an rdma route such a word is written unchecked, as puts
 * there are (docs/rdma.md), except where the signal goes to the owner's CPU
 * (GAS_RDMA_ATOMICS=cpu, for a signalled put that DQPLB does not carry):
 * then the payload has already been written over RC when the owner refuses
 * the signal, and the next gas_quiet returns GAS_ERR_BOUNDS.
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

/*
 * Waiting on several words, and testing without waiting (OpenSHMEM 1.5's
 * wait_until_all/any/some and test families).  ivars is an array of nelems
 * words of local memory, as for gas_wait_until; status, when not NULL, is
 * nelems ints and leaves out the words whose status is nonzero (the usual
 * loop: take an index from _any, set its status to 1, wait again).
 *  - _all: returns once every counted word has been seen to satisfy
 *    (ivar cmp value), each at some moment during the call (a word seen to
 *    satisfy it is not read again).  No counted word: returns at once.
 *  - _any: *index_p = the lowest index of a counted word that satisfies it.
 *    No counted word: returns at once with *index_p = SIZE_MAX.
 *  - _some: waits until at least one counted word satisfies it, then writes
 *    the indices of all those that do (read in one pass, ascending) to
 *    indices (room for nelems) and their number to *count_p.  No counted
 *    word: returns at once with *count_p = 0.
 * Waits spin briefly, then sleep in the kernel, keep the runtime
 * progressing, return GAS_ERR_TIMEOUT after GAS_TIMEOUT, and give the same
 * ordering guarantee as gas_wait_until for the words they saw satisfied.
 *
 * gas_test_until_* never wait: each looks, and when the condition does not
 * hold yet makes progress once (as gas_progress(), which poll mode needs)
 * and looks again.  gas_test_until sets *done_p to 1 when (*ivar cmp value)
 * holds, else 0; _all likewise for every counted word (a word seen to
 * satisfy it in an earlier call is read again: a test keeps no state);
 * _any sets *index_p to the lowest satisfying index or SIZE_MAX; _some sets
 * *count_p (0: none) and writes the indices.
 *
 * Errors, from every form: GAS_ERR_INVALID for a NULL ivars (nelems > 0),
 * indices (in _some, nelems > 0) or result pointer, or an unknown
 * comparison; GAS_ERR_ALIGN for a misaligned ivars; GAS_ERR_OVERFLOW when
 * the array would wrap the address space; GAS_ERR_PEER when the condition
 * does not hold and a peer has been given up on (its write may never come).
 * On an error *index_p is SIZE_MAX, *count_p 0 and *done_p 0.
 */
GAS_EXPORT gas_status_t gas_wait_until_all_i32(const int32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int32_t value);
GAS_EXPORT gas_status_t gas_wait_until_all_u32(const uint32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint32_t value);
GAS_EXPORT gas_status_t gas_wait_until_all_i64(const int64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int64_t value);
GAS_EXPORT gas_status_t gas_wait_until_all_u64(const uint64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint64_t value);
GAS_EXPORT gas_status_t gas_wait_until_any_i32(const int32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int32_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_u32(const uint32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint32_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_i64(const int64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int64_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_u64(const uint64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint64_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_some_i32(const int32_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, int32_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_u32(const uint32_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, uint32_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_i64(const int64_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, int64_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_u64(const uint64_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, uint64_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_i32(const int32_t *ivar, gas_cmp_t cmp, int32_t value,
                                           int *done_p);
GAS_EXPORT gas_status_t gas_test_until_u32(const uint32_t *ivar, gas_cmp_t cmp, uint32_t value,
                                           int *done_p);
GAS_EXPORT gas_status_t gas_test_until_i64(const int64_t *ivar, gas_cmp_t cmp, int64_t value,
                                           int *done_p);
GAS_EXPORT gas_status_t gas_test_until_u64(const uint64_t *ivar, gas_cmp_t cmp, uint64_t value,
                                           int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_i32(const int32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int32_t value,
                                               int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_u32(const uint32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint32_t value,
                                               int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_i64(const int64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int64_t value,
                                               int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_u64(const uint64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint64_t value,
                                               int *done_p);
GAS_EXPORT gas_status_t gas_test_until_any_i32(const int32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int32_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_u32(const uint32_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint32_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_i64(const int64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, int64_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_u64(const uint64_t *ivars, size_t nelems,
                                               const int *status, gas_cmp_t cmp, uint64_t value,
                                               size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_some_i32(const int32_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, int32_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_u32(const uint32_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, uint32_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_i64(const int64_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, int64_t value, size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_u64(const uint64_t *ivars, size_t nelems,
                                                size_t *indices, const int *status,
                                                gas_cmp_t cmp, uint64_t value, size_t *count_p);

/*
 * The _vector forms (OpenSHMEM 1.5's wait_until_*_vector and test_*_vector):
 * as the forms above, but word i is compared with cmp_values[i] (an array
 * of nelems values, read during the call) instead of with one value.
 * Besides the errors above: GAS_ERR_INVALID for a NULL cmp_values (nelems
 * > 0), GAS_ERR_ALIGN for a misaligned one.
 */
GAS_EXPORT gas_status_t gas_wait_until_all_vector_i32(const int32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int32_t *cmp_values);
GAS_EXPORT gas_status_t gas_wait_until_all_vector_u32(const uint32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint32_t *cmp_values);
GAS_EXPORT gas_status_t gas_wait_until_all_vector_i64(const int64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int64_t *cmp_values);
GAS_EXPORT gas_status_t gas_wait_until_all_vector_u64(const uint64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint64_t *cmp_values);
GAS_EXPORT gas_status_t gas_wait_until_any_vector_i32(const int32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int32_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_vector_u32(const uint32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint32_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_vector_i64(const int64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int64_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_any_vector_u64(const uint64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint64_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_wait_until_some_vector_i32(const int32_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const int32_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_vector_u32(const uint32_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const uint32_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_vector_i64(const int64_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const int64_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_wait_until_some_vector_u64(const uint64_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const uint64_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_all_vector_i32(const int32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int32_t *cmp_values, int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_vector_u32(const uint32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint32_t *cmp_values, int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_vector_i64(const int64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int64_t *cmp_values, int *done_p);
GAS_EXPORT gas_status_t gas_test_until_all_vector_u64(const uint64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint64_t *cmp_values, int *done_p);
GAS_EXPORT gas_status_t gas_test_until_any_vector_i32(const int32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int32_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_vector_u32(const uint32_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint32_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_vector_i64(const int64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const int64_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_any_vector_u64(const uint64_t *ivars, size_t nelems,
                                                      const int *status, gas_cmp_t cmp,
                                                      const uint64_t *cmp_values, size_t *index_p);
GAS_EXPORT gas_status_t gas_test_until_some_vector_i32(const int32_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const int32_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_vector_u32(const uint32_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const uint32_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_vector_i64(const int64_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const int64_t *cmp_values,
                                                       size_t *count_p);
GAS_EXPORT gas_status_t gas_test_until_some_vector_u64(const uint64_t *ivars, size_t nelems,
                                                       size_t *indices, const int *status,
                                                       gas_cmp_t cmp, const uint64_t *cmp_values,
                                                       size_t *count_p);

/* ------------------------------------------------------------------------ */
/* Synchronisation                                                           */
/* ------------------------------------------------------------------------ */

/*
 * All ranks: implies gas_quiet(), returns when every rank has entered it.
 * An earlier operation's failure that its quiet finds (a put refused by its
 * target over udp) does not keep this rank from the barrier: the barrier
 * completes everywhere and then this rank returns that status, the message
 * saying so (see "Deferred failures" at the top); a lost peer or a timeout
 * fails it at once.
 * When it fails with GAS_ERR_TIMEOUT (GAS_TIMEOUT set, a peer late or gone),
 * calling gas_barrier() again resumes the same barrier rather than starting
 * a new one, so a program may retry once the late rank has arrived.  The
 * message names first the ranks that have not entered this barrier ("rank 5
 * has not entered world barrier 4"), read from every rank as it times out,
 * and those that did not answer that question within half a second (dead,
 * unreachable, or outside libgas calls with GAS_PROGRESS=poll), then the
 * round it waited in and that round's partner.  So do the timeouts of the
 * world barrier of gas_malloc, gas_malloc_dist, gas_free and gas_finalize.
 * It is the world barrier of sync.c, which gas_malloc/gas_free also use;
 * gas_team_barrier(GAS_TEAM_WORLD) is this call under another name: either
 * call on one rank meets either on the others (same ordering, same implied
 * quiet, same errors, raised for the name called; gas_team_barrier_nb on
 * the world team is a team collective instead, see there).  Neither waits
 * for this rank's _nb collectives on the world team, which complete by
 * gas_wait/gas_test as usual.
 * A member blocked in a collective on a team with this rank that this rank
 * has not made yet (numbered with this rank's next call on that team or
 * later), and that had not entered this barrier then, can never reach it:
 * after about 0.2 s (or at once) this call, gas_malloc, gas_malloc_dist and
 * gas_free return GAS_ERR_INVALID naming that member and its collective,
 * doing nothing, and the call stands in for that collective (it counts as
 * failed here), so the member fails too, naming this call, instead of both
 * waiting until GAS_TIMEOUT (for ever by default).  A barrier whose rounds
 * had gone out resumes with the next such call, as after a timeout.  A
 * member only testing its _nb collective (gas_test) is not blocked.
 */
GAS_EXPORT gas_status_t gas_barrier(void);

/* ------------------------------------------------------------------------ */
/* Teams                                                                     */
/* ------------------------------------------------------------------------ */

/*
 * A team is an ordered set of ranks that run collectives together.  A rank's
 * position in a team is its team rank (0 .. size-1).  GAS_TEAM_WORLD holds
 * every rank in job order; other teams are split from a parent by calls that
 * are collective over the parent (every member of the parent calls them, in
 * the same order as its other collectives on the parent).  A rank that is
 * not in the new team gets GAS_TEAM_NULL.  Each team has its own scratch
 * space and sequence numbers, so collectives on different teams never
 * interfere and may be interleaved freely; collectives on one team must be
 * called in the same order by all of its members.  Each member keeps
 * GAS_COLL_SCRATCH bytes of its segment for each team it is in (backed when
 * used); a split fails with GAS_ERR_NOSPACE on the new team's members when
 * one of them has no room.
 */
typedef struct gas_team *gas_team_t;
#define GAS_TEAM_NULL ((gas_team_t)0)

/* Every rank, in job order (GAS_TEAM_NULL before gas_init / after gas_finalize). */
GAS_EXPORT extern gas_team_t gas_team_world_;
#define GAS_TEAM_WORLD (gas_team_world_)

/*
 * A destroyed team's handle stays invalid for the rest of the run: it never
 * names a team made later, and every call given it (a collective, a split of
 * it, gas_team_translate, a second gas_team_destroy) fails with
 * GAS_ERR_INVALID ("not a live team of this rank (destroyed?)") and touches
 * no live team; gas_team_rank gives -1 and gas_team_size 0.  A pointer that
 * is no team handle of this rank is refused the same way.
 */

/* My rank in the team (-1 if not a member or not a team) and the team's size (0). */
GAS_EXPORT int gas_team_rank(gas_team_t team);
GAS_EXPORT int gas_team_size(gas_team_t team);

/*
 * Collective over parent: the members are the parent ranks start,
 * start + stride, ... (size of them, in that order; stride >= 1, all below
 * the parent's size).  Every member of the parent must pass the same
 * arguments (a mismatch, or a NULL team_p on some rank, is detected:
 * GAS_ERR_INVALID on every rank).
 */
GAS_EXPORT gas_status_t gas_team_split_strided(gas_team_t parent, int start, int stride, int size,
                                               gas_team_t *team_p);

/*
 * Collective over parent, like MPI_Comm_split: ranks passing the same color
 * (>= 0) form one team, ordered by key and then by parent rank.  A rank
 * passing GAS_COLOR_UNDEFINED joins no team (*team_p = GAS_TEAM_NULL).
 */
#define GAS_COLOR_UNDEFINED (-1)
GAS_EXPORT gas_status_t gas_team_split_color(gas_team_t parent, int color, int key,
                                             gas_team_t *team_p);

/*
 * Collective over parent: the members of parent that share this rank's node
 * (reach each other through shared memory), in parent order.
 */
GAS_EXPORT gas_status_t gas_team_split_node(gas_team_t parent, gas_team_t *team_p);

/*
 * The rank in team `to` of the member that has rank `rank` in team `from`;
 * *rank_p = -1 when it is not a member of `to`.  GAS_ERR_RANK when rank is
 * not a rank of `from`.  Local, O(1) from or to the world team.
 */
GAS_EXPORT gas_status_t gas_team_translate(gas_team_t from, int rank, gas_team_t to,
                                           int *rank_p);

/*
 * Collective over the team: free it after every member has finished its
 * collectives on it (pending non-blocking ones are completed first).  The
 * world team cannot be destroyed (GAS_ERR_INVALID).  GAS_TEAM_NULL is a no-op.
 * Members waiting in a collective on the team that this rank did not call
 * fail with GAS_ERR_INVALID naming gas_team_destroy (after about 0.2 s);
 * this rank waits until they destroy the team too (or GAS_TIMEOUT).
 * Members in gas_barrier, gas_malloc, gas_malloc_dist, gas_free or
 * gas_finalize instead cannot come: where one of them finds this rank in
 * its destroy (after about 0.2 s) its call fails with GAS_ERR_INVALID
 * naming gas_team_destroy and stands in for it, and this destroy then fails
 * with GAS_ERR_INVALID naming that call, the team still live (it counts as
 * the team's failed call; a later gas_team_destroy is the next).  To go on,
 * this rank makes that world call, the members whose call failed make it
 * again, and then every member destroys the team.
 */
GAS_EXPORT gas_status_t gas_team_destroy(gas_team_t team);

/* ------------------------------------------------------------------------ */
/* Collectives                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Collectives run on a team; every member calls the same collective with the
 * same count, type, op and root (per-rank vectors of the v-forms may differ
 * as documented).  Buffers are local memory of the calling rank (any memory:
 * stack, heap or this rank's part of a gas_malloc'ed array); counts are in
 * elements.  A blocking collective returns when this rank's buffers may be
 * used again (dst holds the result, src may be reused); it does not imply a
 * barrier, except gas_team_barrier, which also implies gas_quiet().
 *
 * Implementation: one-sided puts with signals into per-team scratch space in
 * the segment, flow-controlled per pair of ranks; several algorithms per
 * collective, picked by message size and team shape from a tuning table
 * (configs/coll-tuning.conf, docs/collectives.md), or forced per collective
 * with GAS_COLL_<NAME>=<algorithm> or gas_coll_set_algorithm().
 *
 * In place: pass GAS_IN_PLACE as src; the input is then taken from dst (for
 * allgather and gather: from this rank's block of dst; for reduce-scatter:
 * dst holds the whole count * size input and the result is left in its first
 * count elements; for alltoall: dst holds this rank's blocks to send, and
 * they are copied aside first; for allgatherv and gatherv: from this rank's
 * block of dst at displs; for scatterv, at the root only: dst holds the
 * whole input and the root's block stays in place).  For allreduce,
 * reduce, scan and exscan, src == dst is also in place.  GAS_IN_PLACE is refused
 * (GAS_ERR_INVALID) for a reduce, gather, gatherv or scatterv off the root
 * (only the root has the whole vector), for scatter and for alltoallv,
 * which have no in-place form.
 *
 * Call numbers: messages number a member's collective calls on a team
 * ("its collective #k") from 1, the first call after the team was made, on
 * every team (#0 is gas_init's exchange on the world team, the split on a
 * split team); world calls (gas_barrier, gas_team_barrier(GAS_TEAM_WORLD),
 * gas_malloc, gas_free, gas_finalize) are not numbered.  Messages name the
 * API call each member made (gas_team_barrier_nb, gas_allreduce,
 * gas_team_split_strided, ...).
 *
 * Checks: every message carries the team's sequence number and a signature
 * of the call (collective, algorithm, count, type, op, root), so a member
 * that calls a different collective, or the same one with other arguments,
 * makes its peers fail with GAS_ERR_INVALID naming both calls (where a message
 * between them shows it) instead of corrupting memory.  A mismatch that lets
 * every call complete (a broadcast whose root differs between ranks, a call
 * only some ranks make) leaves a message nobody read: the team's later calls
 * throw it away (they are not affected), and gas_team_destroy, and
 * gas_finalize for the teams still live, then return GAS_ERR_INVALID
 * naming it ("found at its end") on the ranks that hold one and saw no
 * failed collective on that team, and the
 * results of the team's last collectives must be taken as wrong.  A
 * mismatch that leaves members waiting for each other (a reduce or gather
 * whose root differs) is found by their wait notes after about 0.2 s of
 * waiting: GAS_ERR_INVALID naming both calls, not GAS_ERR_TIMEOUT.  A rank
 * whose collective fails tells the other members, and those still waiting
 * in that call fail too (with its status, saying which rank failed); one
 * whose call already completed learns it at the team's end, as above.
 *
 * Bad arguments: a bitwise op on float/double, an unknown type or op, NULL
 * buffers with count > 0, a NULL handle_p in an _nb form and count * size
 * overflows are GAS_ERR_INVALID / GAS_ERR_OVERFLOW; a root outside the team
 * is GAS_ERR_RANK.  A call refused
 * for its arguments on a live team still counts as that team's next
 * collective on this rank (do not repeat it on this rank alone), and the
 * members in the same call fail with the same status ("rank r refused its
 * collective #k") instead of waiting for it; the team stays usable, and
 * chunks that peers sent for a failed or refused call are thrown away by
 * the next calls.
 *
 * A collective that failed (blocking, or its handle completed) writes
 * nothing into its buffers after it returned: where a member had begun
 * putting a large message straight into dst, the call first waits for that
 * put to end (at most GAS_TIMEOUT more, also inside gas_team_split and
 * gas_team_destroy after their own GAS_TIMEOUT; past it, a warning names
 * the member, whose data may then still land; see docs/collectives.md).
 *
 * Timeouts: a blocking collective that waits GAS_TIMEOUT returns
 * GAS_ERR_TIMEOUT and counts as failed on this rank: it is abandoned (as
 * above), and the members are told as of any failure, so one that reaches or waits in that call later fails
 * with GAS_ERR_TIMEOUT ("rank r gave up on its collective #k ... after
 * waiting GAS_TIMEOUT"); one whose call had already completed learns of it
 * at the team's end.  A call is not resumed by calling it again: the
 * program goes on with the next collective (every member does: the late
 * member's copy of the call fails, or completes if it had all it needed).
 * gas_wait on an _nb collective that times out returns GAS_ERR_TIMEOUT and
 * leaves the handle valid: the collective goes on, and the buffers stay its
 * own until gas_wait or gas_test completes the handle.  An _nb collective
 * that fails (here or on a member) completes its handle with the failure:
 * gas_wait returns it, gas_test returns it with *done_p = 1; the _nb call
 * itself returns it (with GAS_HANDLE_NULL) when the failure is known at once.
 */
#define GAS_IN_PLACE ((const void *)-1)

typedef enum gas_dtype {
    GAS_INT8, GAS_UINT8, GAS_INT16, GAS_UINT16, GAS_INT32, GAS_UINT32,
    GAS_INT64, GAS_UINT64, GAS_FLOAT, GAS_DOUBLE,
    /* value-index pairs (the structs below), for GAS_OP_MINLOC / GAS_OP_MAXLOC only:
     * MPI_2INT, MPI_FLOAT_INT, MPI_LONG_INT, MPI_DOUBLE_INT */
    GAS_2INT32, GAS_FLOAT_INT32, GAS_2INT64, GAS_DOUBLE_INT64,
    GAS_DTYPE_COUNT
} gas_dtype_t;

typedef enum gas_redop {
    GAS_OP_SUM, GAS_OP_PROD, GAS_OP_MIN, GAS_OP_MAX,
    GAS_OP_BAND, GAS_OP_BOR, GAS_OP_BXOR,   /* integers only */
    GAS_OP_MINLOC, GAS_OP_MAXLOC,           /* the pair types only */
    GAS_OP_COUNT
} gas_redop_t;

/*
 * The pair types' elements (MPI_MINLOC / MPI_MAXLOC): a value and an index
 * (typically the rank or position it came from), laid out as here.  The
 * pair types take only GAS_OP_MINLOC and GAS_OP_MAXLOC, and those ops only
 * the pair types; any other combination is refused (GAS_ERR_INVALID,
 * naming the call, the op and the type).  In a buffer of count elements the
 * pairs lie back to back (8 or 16 bytes each; alignment of the value type
 * is enough).
 *
 * MINLOC keeps the pair with the smaller value, MAXLOC the one with the
 * larger; on equal values (-0.0 and 0.0 are equal) both keep the one with
 * the smaller index, whole (its value's bits with it).  A NaN value never
 * wins over a number, for either op; between two NaNs the smaller index
 * wins.  Where value and index are both equal but the bits differ (-0.0
 * against 0.0, NaNs with other payloads), MINLOC keeps the value whose bits
 * are the smaller as a signed integer (-0.0), MAXLOC the larger (0.0).  So
 * the order is total and the result is the same pair, bit for bit, in
 * whatever order an algorithm combines the members' elements.  (Plain
 * GAS_OP_MIN / GAS_OP_MAX on float and double make no such promise for
 * NaNs: x < NaN is false both ways, so which survives depends on the order.)
 * exscan's identity for member 0: (the largest value, or +INFINITY, and the
 * largest index) for MINLOC, (the smallest value, or -INFINITY, and the
 * largest index) for MAXLOC, so it never wins a tie.
 */
typedef struct gas_2int32 { int32_t val; int32_t idx; } gas_2int32_t;
typedef struct gas_float_int32 { float val; int32_t idx; } gas_float_int32_t;
typedef struct gas_2int64 { int64_t val; int64_t idx; } gas_2int64_t;
typedef struct gas_double_int64 { double val; int64_t idx; } gas_double_int64_t;
#ifdef __cplusplus
#define GAS_STATIC_ASSERT_(c, m) static_assert(c, m)
#else
#define GAS_STATIC_ASSERT_(c, m) _Static_assert(c, m)
#endif
GAS_STATIC_ASSERT_(sizeof(gas_2int32_t) == 8, "gas_2int32_t is 8 bytes");
GAS_STATIC_ASSERT_(sizeof(gas_float_int32_t) == 8, "gas_float_int32_t is 8 bytes");
GAS_STATIC_ASSERT_(sizeof(gas_2int64_t) == 16, "gas_2int64_t is 16 bytes");
GAS_STATIC_ASSERT_(sizeof(gas_double_int64_t) == 16, "gas_double_int64_t is 16 bytes");

/* Bytes per element of a type (0 for an unknown one; 8 or 16 for the pairs). */
GAS_EXPORT size_t gas_dtype_size(gas_dtype_t type);

/*
 * Every member enters, then all leave; implies gas_quiet().  On
 * GAS_TEAM_WORLD it is gas_barrier (see there): a world call, matched by
 * gas_barrier or gas_team_barrier(GAS_TEAM_WORLD) on the other ranks, not
 * numbered among the world team's collectives, and it does not complete
 * this rank's earlier _nb collectives on the world team.
 */
GAS_EXPORT gas_status_t gas_team_barrier(gas_team_t team);

/* root's buf (count elements) to every member's buf. */
GAS_EXPORT gas_status_t gas_broadcast(gas_team_t team, void *buf, size_t count, gas_dtype_t type,
                                      int root);

/* dst at root = op over the members' src (dst is ignored on other ranks). */
GAS_EXPORT gas_status_t gas_reduce(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, gas_redop_t op, int root);

/* Every member's dst = op over the members' src, element by element. */
GAS_EXPORT gas_status_t gas_allreduce(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op);

/* dst (count * size elements) = the members' src blocks of count elements, in team order. */
GAS_EXPORT gas_status_t gas_allgather(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type);

/*
 * As allgather, with counts[i] elements from member i stored at dst +
 * displs[i] elements (displs NULL: packed in team order).  counts and displs
 * are the same on every member; this rank sends counts[my rank] elements.
 */
GAS_EXPORT gas_status_t gas_allgatherv(gas_team_t team, void *dst, const void *src,
                                       const size_t *counts, const size_t *displs,
                                       gas_dtype_t type);

/* Block j (count elements) of my src goes to member j, into block (my rank) of its dst. */
GAS_EXPORT gas_status_t gas_alltoall(gas_team_t team, void *dst, const void *src, size_t count,
                                     gas_dtype_t type);

/*
 * Variable all-to-all: src_counts[j] elements at src + src_displs[j] go to
 * member j, which receives them at its dst + dst_displs[my rank] and must
 * pass dst_counts[my rank] equal to that count (checked).  Each rank's
 * vectors are its own; displs NULL means packed.  No in-place form.
 */
GAS_EXPORT gas_status_t gas_alltoallv(gas_team_t team, void *dst, const size_t *dst_counts,
                                      const size_t *dst_displs, const void *src,
                                      const size_t *src_counts, const size_t *src_displs,
                                      gas_dtype_t type);

/* src (count * size elements) is reduced over members; member i gets block i in dst. */
GAS_EXPORT gas_status_t gas_reduce_scatter(gas_team_t team, void *dst, const void *src,
                                           size_t count, gas_dtype_t type, gas_redop_t op);

/*
 * Prefix reductions (MPI_Scan / MPI_Exscan), element by element in team
 * order.  gas_scan: member i's dst = op over the src of members 0 .. i.
 * gas_exscan: member i's dst = op over the src of members 0 .. i-1; member
 * 0's dst is filled with the op's identity (MPI leaves it undefined; here it
 * is defined): 0 for sum, bor and bxor, 1 for prod, all ones for band, the
 * type's largest value for min and its smallest for max (+INFINITY and
 * -INFINITY for float and double), for minloc / maxloc the pair given with
 * the pair types above.  In place: GAS_IN_PLACE as src, or src ==
 * dst, takes the input from dst.  Float and double: each member combines its
 * terms in a fixed order (the algorithm's), so a run repeats its bits; the
 * pipelined chain gives the sequential left-to-right result, recursive
 * doubling may differ from it by ceil(log2 n) units of rounding times the
 * sum of magnitudes.
 */
GAS_EXPORT gas_status_t gas_scan(gas_team_t team, void *dst, const void *src, size_t count,
                                 gas_dtype_t type, gas_redop_t op);
GAS_EXPORT gas_status_t gas_exscan(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, gas_redop_t op);

/* root's dst (count * size elements) = every member's src block, in team order. */
GAS_EXPORT gas_status_t gas_gather(gas_team_t team, void *dst, const void *src, size_t count,
                                   gas_dtype_t type, int root);

/* Member i's dst = block i of root's src (count * size elements; src ignored elsewhere). */
GAS_EXPORT gas_status_t gas_scatter(gas_team_t team, void *dst, const void *src, size_t count,
                                    gas_dtype_t type, int root);

/*
 * As gather, with counts[i] elements from member i (this rank sends
 * counts[my rank] elements from src), stored at the root's dst + displs[i]
 * elements (displs NULL: packed in team order; the blocks may leave gaps
 * but must not overlap).  counts is the same on every member, as for
 * gas_allgatherv, so every member knows every block's size: it is part of
 * the call's signature, and a member that passes other counts is a
 * mismatch (GAS_ERR_INVALID) where a message shows it.  displs is read
 * only at the root (as in MPI; other members may pass NULL); dst is
 * ignored elsewhere.  counts[i] == 0 is allowed for any or every member.
 * In place: GAS_IN_PLACE as src on the root takes its block from dst +
 * displs[root] (it stays there); refused on the other members.
 */
GAS_EXPORT gas_status_t gas_gatherv(gas_team_t team, void *dst, const void *src,
                                    const size_t *counts, const size_t *displs,
                                    gas_dtype_t type, int root);

/*
 * As scatter, with variable blocks: member i receives counts[i] elements
 * into its dst from the root's src + displs[i] elements (displs NULL:
 * packed in team order).  counts is the same on every member (part of the
 * call's signature, as for gas_gatherv); displs and src are read only at
 * the root.  In place: GAS_IN_PLACE as src on the root means that dst holds
 * the whole input (what src would) and the root's own block stays where it
 * is, at dst + displs[root]; refused on the other members.
 */
GAS_EXPORT gas_status_t gas_scatterv(gas_team_t team, void *dst, const void *src,
                                     const size_t *counts, const size_t *displs,
                                     gas_dtype_t type, int root);

/*
 * Non-blocking forms, one per collective (same arguments, then handle_p):
 * start the collective and return a handle that
 * gas_wait()/gas_test() complete (GAS_HANDLE_NULL when it completed at once,
 * e.g. on a team of one, and when the call itself fails, as for gas_put_nb).
 * The data buffers must not be touched until then; the counts and displs
 * vectors of the v forms are read before the call returns and may be reused
 * at once.
 * Progress is made inside gas_test/gas_wait and inside every other libgas
 * call that waits (a blocking collective, gas_get, gas_wait_until, ...).
 * Several may be outstanding; on one team they complete in call order, and a
 * blocking collective on that team completes the earlier ones first
 * (gas_team_barrier(GAS_TEAM_WORLD) excepted: it is gas_barrier).
 * gas_team_barrier_nb(GAS_TEAM_WORLD) is a collective of the world team,
 * numbered and ordered with its other collectives, and matched only by
 * gas_team_barrier_nb(GAS_TEAM_WORLD) on the other members: against
 * gas_barrier or gas_team_barrier(GAS_TEAM_WORLD) it is a mismatch, which
 * both sides report (GAS_ERR_INVALID naming the other's call) within about
 * 0.2 s, as for any collective against a world call.  Otherwise an _nb form
 * on some members matches the blocking form of the same collective on the
 * others (what must agree is the collective, its arguments and the order;
 * unlike MPI, where blocking and non-blocking collectives never match).
 * gas_progress() also advances them.
 */
GAS_EXPORT gas_status_t gas_team_barrier_nb(gas_team_t team, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_broadcast_nb(gas_team_t team, void *buf, size_t count,
                                         gas_dtype_t type, int root, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_allreduce_nb(gas_team_t team, void *dst, const void *src,
                                         size_t count, gas_dtype_t type, gas_redop_t op,
                                         gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_reduce_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op, int root,
                                      gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_allgather_nb(gas_team_t team, void *dst, const void *src,
                                         size_t count, gas_dtype_t type, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_allgatherv_nb(gas_team_t team, void *dst, const void *src,
                                          const size_t *counts, const size_t *displs,
                                          gas_dtype_t type, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_alltoall_nb(gas_team_t team, void *dst, const void *src,
                                        size_t count, gas_dtype_t type, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_alltoallv_nb(gas_team_t team, void *dst, const size_t *dst_counts,
                                         const size_t *dst_displs, const void *src,
                                         const size_t *src_counts, const size_t *src_displs,
                                         gas_dtype_t type, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_reduce_scatter_nb(gas_team_t team, void *dst, const void *src,
                                              size_t count, gas_dtype_t type, gas_redop_t op,
                                              gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_scan_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                    gas_dtype_t type, gas_redop_t op, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_exscan_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, gas_redop_t op, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_gather_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                      gas_dtype_t type, int root, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_scatter_nb(gas_team_t team, void *dst, const void *src, size_t count,
                                       gas_dtype_t type, int root, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_gatherv_nb(gas_team_t team, void *dst, const void *src,
                                       const size_t *counts, const size_t *displs,
                                       gas_dtype_t type, int root, gas_handle_t *handle_p);
GAS_EXPORT gas_status_t gas_scatterv_nb(gas_team_t team, void *dst, const void *src,
                                        const size_t *counts, const size_t *displs,
                                        gas_dtype_t type, int root, gas_handle_t *handle_p);

/* ------------------------------------------------------------------------ */
/* Collective algorithms                                                     */
/* ------------------------------------------------------------------------ */

typedef enum gas_coll {
    GAS_COLL_BARRIER, GAS_COLL_BROADCAST, GAS_COLL_REDUCE, GAS_COLL_ALLREDUCE,
    GAS_COLL_ALLGATHER, GAS_COLL_ALLGATHERV, GAS_COLL_ALLTOALL, GAS_COLL_ALLTOALLV,
    GAS_COLL_REDUCE_SCATTER, GAS_COLL_GATHER, GAS_COLL_SCATTER,
    GAS_COLL_SCAN, GAS_COLL_EXSCAN,
    GAS_COLL_GATHERV, GAS_COLL_SCATTERV,
    GAS_COLL_COUNT
} gas_coll_t;

/* "allreduce", ... (NULL for an unknown collective). */
GAS_EXPORT const char *gas_coll_name(gas_coll_t coll);

/* Algorithm i of a collective (0 is "auto"); NULL past the last one. */
GAS_EXPORT const char *gas_coll_algorithm(gas_coll_t coll, int i);

/*
 * Force an algorithm for a collective on this rank ("auto": back to the
 * tuning table and GAS_COLL_<NAME>); every rank must force the same (a
 * mismatch is reported by the first collective that exchanges messages).
 * An algorithm that cannot run a given call (e.g. hierarchical on one node)
 * falls back to the table's choice.  Not collective; takes effect for the
 * collectives started after it.  Only between gas_init and gas_finalize
 * (else GAS_ERR_NOT_INIT, like every call): to force an algorithm from the
 * start, set GAS_COLL_<NAME> in the environment.
 */
GAS_EXPORT gas_status_t gas_coll_set_algorithm(gas_coll_t coll, const char *algorithm);

/*
 * The algorithm a collective of `bytes` bytes (per rank's block for
 * allgather(v)/alltoall(v)/gather(v)/scatter(v)/reduce-scatter, whole vector
 * for the others; the largest block for allgatherv/gatherv/scatterv) on
 * `team` would use now.
 */
GAS_EXPORT gas_status_t gas_coll_choice(gas_team_t team, gas_coll_t coll, size_t bytes,
                                        const char **algorithm_p);
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
    uint64_t rdma_signals;     /* DQPLB signals of this peer applied here (as target) */
    uint64_t rdma_redone;      /* requests and signals redone over udp after an RC failure */
    uint32_t upgraded_peers;   /* peers now reached over RC (this rank's totals; 0/1 per peer) */
} gas_peer_stats_t;

/* Fill *stats_p for rank (GAS_ERR_RANK when out of range). */
GAS_EXPORT gas_status_t gas_peer_stats(int rank, gas_peer_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif /* GAS_H */
