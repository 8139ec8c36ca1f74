/*
 * boot.h - the bootstrap: how a rank learns who it is and meets the others.
 *
 * A small interface (like Sandia OpenSHMEM's runtime.h) with one file per back
 * end: boot_gasrun.c (a rank started by gasrun) and boot_single.c (a program
 * started on its own: a job of one rank).  The key-value store holds small
 * blobs per rank (transport addresses); kv_get of another rank's key is valid
 * after a barrier that follows its kv_put.
 */
#ifndef GAS_RT_BOOT_H
#define GAS_RT_BOOT_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

struct gas_rt_boot {
    const char *name;
    int rank, nranks;
    int local_rank, local_size;   /* among ranks on this node, as the launcher knows it */
    uint64_t job_key;             /* secret shared by the job's ranks (0 for single) */
    uint32_t job_id;              /* public job identifier */

    gas_status_t (*kv_put)(const char *key, const void *val, size_t len);
    /* *val_p is malloc'ed; GAS_ERR_INVALID when the rank never put the key. */
    gas_status_t (*kv_get)(int rank, const char *key, void **val_p, size_t *len_p);
    gas_status_t (*barrier)(void);
    void (*abort)(int code, const char *msg);
    void (*fini)(void);
};

/* Pick the back end from the environment and open it. */
gas_status_t gas_rt_boot_open(const struct gas_rt_boot **boot_p);

gas_status_t gas_rt_boot_single_open(struct gas_rt_boot *b);
/* A rank started by gasrun: an inherited socket (GASRUN_BOOT_FD) or a TCP
 * connection to GASRUN_BOOT_ADDR (a rank on another host). */
gas_status_t gas_rt_boot_gasrun_open(struct gas_rt_boot *b);
/* The rank gasrun gave this process (GASRUN_RANK), or -1: what messages name
 * it by before the bootstrap opens. */
int gas_rt_boot_gasrun_rank(void);

/* boot_watch.c: end this rank when the boot connection `fd` closes (gasrun is
 * gone); `what` names the connection in the message.  When the kernel gave up
 * on it instead (a network outage), resume() is called first: 0 means that it
 * put a new connection under fd's number, and the watch goes on; -errno that
 * it could not (it said why), and the rank ends.  stop() before closing fd. */
void gas_rt_boot_watch_start(int fd, const char *what, int (*resume)(void));
void gas_rt_boot_watch_stop(void);

#endif
