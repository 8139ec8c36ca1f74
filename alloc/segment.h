/*
 * segment.h - a rank's segment: the memory other ranks can reach.
 *
 * A segment is a shared file of `size` bytes mapped shared, so node peers can
 * map it too (through /proc/<pid>/fd/<fd>: no name in any file system, nothing
 * to clean up when a process dies).  By default the file is a memfd; with
 * GAS_SEGMENT_DIR it is an unnamed (O_TMPFILE) file in that tmpfs or
 * hugetlbfs directory.  It is a reservation: mapped with MAP_NORESERVE, each
 * page is backed on first touch (see alloc/limits.h for what bounds that).
 * The NUMA policy and huge-page advice (alloc/place.h) are applied before any
 * page is touched.
 *
 * Offsets [0, GAS_AL_RESERVED_BYTES) hold the header and runtime scratch
 * space; the symmetric heap and the arenas share the rest (alloc/space.h).
 */
#ifndef GAS_AL_SEGMENT_H
#define GAS_AL_SEGMENT_H

#include <gas.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/config.h"
#include "runtime/wait.h"

#define GAS_AL_SEG_MAGIC 0x3167657373616767ull /* "ggassegl" */
#define GAS_AL_HEADER_BYTES 4096u
#define GAS_AL_SCRATCH_OFFSET GAS_AL_HEADER_BYTES       /* runtime scratch starts here */
#define GAS_AL_SCRATCH_BYTES (60u * 1024u)
#define GAS_AL_RESERVED_BYTES (GAS_AL_SCRATCH_OFFSET + GAS_AL_SCRATCH_BYTES)
/* The smallest GAS_SEGMENT_SIZE: measured, with the default configuration,
 * the symmetric heap's start (team scratch) and the first gas_alloc arena take
 * about 2 MiB each and a first gas_alloc another 2 MiB extent; below 6 MiB
 * gas_init (under 4 MiB) or that first gas_alloc fails.  A whole number of
 * MiB (messages write it as "6m"); config_defs.h and docs/memory.md say 6m. */
#define GAS_AL_SEG_MIN_BYTES GAS_RT_SEGMENT_MIN_BYTES /* config_ranges.h refuses less */
#define GAS_AL_SEG_START_BYTES (1u << 20)  /* backed memory a rank needs to start */

/* hdr->flags: what a peer's mapping must repeat. */
#define GAS_AL_SEG_F_HUGE   1u   /* madvise(MADV_HUGEPAGE) */
#define GAS_AL_SEG_F_NOHUGE 2u   /* madvise(MADV_NOHUGEPAGE) */

/* What lives at offset 0 of every segment. */
struct gas_al_seg_hdr {
    uint64_t magic;
    int32_t rank;
    uint32_t flags;
    uint64_t size;
    uint64_t arena_floor;     /* lowest offset of gas_alloc memory (alloc/space.h) */
    uint64_t heap_top;        /* the heap ends at or below it (space.h: limit) */
    uint64_t job_key;         /* the job's secret: a node-mate checks it before it trusts the rest */
    char pad2[64 - 48];
    gas_rt_doorbell_t doorbell __attribute__((aligned(64))); /* rung after remote writes */
};

struct gas_al_segment {
    int fd;
    char *base;
    uint64_t size;
    int hugetlb;            /* backed by hugetlb pages */
};

struct gas_al_place;

struct gas_al_seg_opts {
    int rank;
    uint32_t job_id;
    uint64_t job_key;                   /* written to the header (gas_al_seg_hdr) */
    uint64_t size;                      /* a multiple of the backing's page size */
    const char *dir;                    /* GAS_SEGMENT_DIR, or "" for a memfd */
    const struct gas_al_place *place;   /* NUMA policy and huge pages */
};

/* Create and map this rank's segment. */
gas_status_t gas_al_segment_create(const struct gas_al_seg_opts *o, struct gas_al_segment *seg_p);

/* Map rank owner's segment given its pid and file descriptor number.  When
 * the segment cannot be opened (its owner has ended, or /proc refuses) it
 * returns GAS_ERR_PEER without raising, errno set: the caller, which can
 * tell an ended owner, raises the rest; a failed mapping is raised here. */
gas_status_t gas_al_segment_attach(int owner, pid_t pid, int fd, uint64_t size, char **base_p);

void gas_al_segment_detach(char *base, uint64_t size);
void gas_al_segment_destroy(struct gas_al_segment *seg);

/* Bytes of the segment backed by memory now (its file's allocated blocks). */
uint64_t gas_al_segment_backed(const struct gas_al_segment *seg);

/*
 * Back [off, off + len) now (GAS_PREFAULT), after checking the limits for
 * the part of it not backed yet: 0, or -1 with `why` naming the limit that
 * refused it.
 */
struct gas_al_limits;
int gas_al_segment_back(const struct gas_al_segment *seg, const struct gas_al_limits *l,
                        uint64_t off, uint64_t len, char *why, size_t cap);

/* Give back the memory of [off, off + len) (only for ranges nobody uses or registered). */
void gas_al_segment_unback(const struct gas_al_segment *seg, uint64_t off, uint64_t len);

/* Does [off, off + len) read as zero without being backed (a hole)? */
int gas_al_segment_is_hole(const struct gas_al_segment *seg, uint64_t off, uint64_t len);

static inline struct gas_al_seg_hdr *gas_al_seg_hdr(char *base)
{
    return (struct gas_al_seg_hdr *)(void *)base;
}

#endif
