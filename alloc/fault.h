/*
 * fault.h - a clear report when a segment page cannot be backed.
 *
 * A store to a page of a lazily backed segment that the kernel cannot back
 * (tmpfs full, hugetlb pool empty, overcommit refused, memory exhausted)
 * raises SIGBUS in the process that touched it, the owner or a node peer.
 * gas_init installs a SIGBUS handler that recognises faults inside any
 * segment this process maps, writes one line naming the rank, the segment's
 * owner and offset, what limits the backing here and what to change, and then
 * lets the signal take its default course (the rank dies of SIGBUS, which
 * gasrun reports).  Faults anywhere else go to the handler that was installed
 * before, or get the default action.  (A memory cgroup that runs out kills
 * with the OOM killer instead: no signal reaches the process.)
 */
#ifndef GAS_AL_FAULT_H
#define GAS_AL_FAULT_H

#include <stdint.h>

/*
 * Install the handler for this rank; `limits` is the sentence of
 * gas_al_limits_describe, capacity the most mappings tracked at once.
 */
int gas_al_fault_setup(int rank, const char *limits, int capacity);
void gas_al_fault_teardown(void);

/* Track / forget a mapping of `owner`'s segment (no-ops before setup). */
void gas_al_fault_track(const char *base, uint64_t size, int owner);
void gas_al_fault_untrack(const char *base);

/* Bytes of other ranks' segments this process maps now. */
uint64_t gas_al_fault_peer_bytes(int self);

#endif
