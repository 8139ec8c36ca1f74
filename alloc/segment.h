/*
 * segment.h - a rank's segment: the memory other ranks can reach.
 *
 * A segment is a memfd of `size` bytes mapped shared, so node peers can map
 * it too (through /proc/<pid>/fd/<fd>, no file in any file system, nothing to
 * clean up when a process dies).  It is sparse: pages are backed on first
 * touch.  Offsets [0, GAS_AL_RESERVED_BYTES) hold the header and runtime
 * scratch space; the symmetric heap starts after them.
 */
#ifndef GAS_AL_SEGMENT_H
#define GAS_AL_SEGMENT_H

#include <gas.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtime/wait.h"

#define GAS_AL_SEG_MAGIC 0x3167657373616767ull /* "ggassegl" */
#define GAS_AL_HEADER_BYTES 4096u
#define GAS_AL_SCRATCH_OFFSET GAS_AL_HEADER_BYTES       /* runtime scratch starts here */
#define GAS_AL_SCRATCH_BYTES (60u * 1024u)
#define GAS_AL_RESERVED_BYTES (GAS_AL_SCRATCH_OFFSET + GAS_AL_SCRATCH_BYTES)
#define GAS_AL_SEG_MIN_BYTES (1u << 20)

/* What lives at offset 0 of every segment. */
struct gas_al_seg_hdr {
    uint64_t magic;
    int32_t rank;
    uint32_t pad;
    uint64_t size;
    char pad2[64 - 24];
    gas_rt_doorbell_t doorbell __attribute__((aligned(64))); /* rung after remote writes */
};

struct gas_al_segment {
    int fd;
    char *base;
    uint64_t size;
};

/* Create and map this rank's segment of `size` bytes (rounded up to a page). */
gas_status_t gas_al_segment_create(int rank, uint64_t size, struct gas_al_segment *seg_p);

/* Map a node peer's segment given its pid and memfd number. */
gas_status_t gas_al_segment_attach(pid_t pid, int fd, uint64_t size, char **base_p);

void gas_al_segment_detach(char *base, uint64_t size);
void gas_al_segment_destroy(struct gas_al_segment *seg);

static inline struct gas_al_seg_hdr *gas_al_seg_hdr(char *base)
{
    return (struct gas_al_seg_hdr *)(void *)base;
}

#endif
