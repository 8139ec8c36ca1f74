/*
 * shm.c - the shared-memory transport: peers on the same node map each other's
 * segments; put/get are memcpy, atomics are CPU atomics, and every operation
 * completes before it returns.  No system call on the data path, except a
 * futex wake when the target is asleep in a wait.
 */
#include "transport/transport.h"
#include "transport/local.h"
#include "alloc/segment.h"
#include "runtime/boot_wire.h"
#include "runtime/error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const struct gas_tl_ops gas_shm_ops;

#define SHM_ADDR_LEN 24 /* node id u64, pid u32, memfd u32, size u64 */

struct shm_peer {
    gas_tl_peer_t base;
    struct gas_al_seg_hdr *hdr;
    int mapped;          /* 1 when we mapped it (a peer), 0 for our own segment */
};

static gas_tl_env_t env;

static gas_status_t shm_init(const gas_tl_env_t *e)
{
    env = *e;
    return GAS_OK;
}

static gas_status_t shm_addr_pack(void *buf, size_t cap, size_t *len_p)
{
    unsigned char *p = buf;
    if (cap < SHM_ADDR_LEN)
        return GAS_ERR_INTERNAL;
    gas_boot_put_u64(p, env.node_id);
    gas_boot_put_u32(p + 8, (uint32_t)getpid());
    gas_boot_put_u32(p + 12, (uint32_t)env.seg_fd);
    gas_boot_put_u64(p + 16, env.seg_size);
    *len_p = SHM_ADDR_LEN;
    return GAS_OK;
}

static int shm_reachable(const void *addr, size_t len)
{
    return len == SHM_ADDR_LEN && gas_boot_get_u64(addr) == env.node_id;
}

/*
 * The node-mate's process pid no longer exists (it exited, finalized or not,
 * or was killed).  A pid the kernel gave to another process since reads as
 * alive: a wait then goes on as before, never fails wrongly.  Cheap (one
 * system call): the probes of long waits ask it every 50 ms.
 */
static int pid_gone(pid_t pid)
{
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/*
 * pid has ended and waits to be reaped (a zombie), which kill(pid, 0) does
 * not tell.  Read from /proc, so asked only on error paths: where a segment
 * could not be attached (an ending process's can no longer be opened, and
 * the connect then fell through to udp, which needed GAS_UDP_PEER_TIMEOUT to
 * find the rank gone) and by thorough looks (shm_gone_addr), never by the
 * 50 ms probes of long waits (there, these reads changed the timing of the
 * destroy-against-barrier mismatch tests enough to make them fail).
 */
static int pid_zombie(pid_t pid)
{
    char path[48], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')');   /* "pid (comm) S ...": comm may hold ')' */
    return paren != NULL && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X');
}

static gas_status_t shm_connect(int rank, const void *addr, size_t len, gas_tl_peer_t **peer_p)
{
    const unsigned char *a = addr;
    struct shm_peer *p = calloc(1, sizeof *p);
    if (p == NULL)
        return GAS_ERR_NOMEM;
    uint64_t size = gas_boot_get_u64(a + 16);
    char *base = env.seg_base;
    if (rank != env.rank) {
        pid_t pid = (pid_t)gas_boot_get_u32(a + 8);
        if (pid_gone(pid)) { /* before it was ever contacted: gas_tl_peer_slow says so */
            free(p);
            gas_tl_mark_exited(rank);
            return GAS_ERR_PEER;
        }
        int fd = (int)gas_boot_get_u32(a + 12);
        gas_status_t st = gas_al_segment_attach(rank, pid, fd, size, &base);
        if (st != GAS_OK) {
            int err = errno;
            free(p);
            if (pid_gone(pid) || pid_zombie(pid)) {   /* it ended meanwhile: not udp's to find */
                gas_tl_mark_exited(rank);
                return GAS_ERR_PEER;
            }
            if (st == GAS_ERR_PEER)   /* not raised by the attach: its open failed */
                st = gas_rt_error(GAS_ERR_PEER, "connect",
                                  "cannot open /proc/%d/fd/%d (rank %d's segment): %s", (int)pid,
                                  fd, rank, strerror(err));
            return st;
        }
        p->mapped = 1;
    }
    p->hdr = gas_al_seg_hdr(base);
    int ours = __atomic_load_n(&p->hdr->magic, __ATOMIC_ACQUIRE) == GAS_AL_SEG_MAGIC;
    if (!ours || p->hdr->rank != rank || p->hdr->job_key != env.job_key) {
        if (p->mapped)
            gas_al_segment_detach(base, size);
        free(p);
        /* Another process's memory behind the published pid and fd: /proc
         * of another PID namespace, or a pid reused.  Never written to. */
        return gas_rt_error(GAS_ERR_PEER, "connect",
                            "the shared segment published by rank %d %s: the process this rank "
                            "sees as its pid is another (a PID namespace of its own? run such "
                            "ranks with GAS_TRANSPORT=udp)",
                            rank, !ours ? "does not carry a libgas header"
                                  : p->hdr->rank != rank ? "belongs to another rank"
                                                         : "belongs to another job");
    }
    p->base = (gas_tl_peer_t){.ops = &gas_shm_ops, .rank = rank, .direct_base = base,
                              .size = size};
    *peer_p = &p->base;
    return GAS_OK;
}

static gas_status_t shm_put(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                            gas_tl_comp_t *comp, const char *call)
{
    struct shm_peer *p = (struct shm_peer *)peer;
    memcpy(peer->direct_base + off, src, n);
    gas_rt_doorbell_ring(&p->hdr->doorbell, off, n);
    return GAS_OK;
}

static gas_status_t shm_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                            gas_tl_comp_t *comp, const char *call)
{
    memcpy(dst, peer->direct_base + off, n);
    return GAS_OK;
}

static gas_status_t shm_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp,
                            const char *call)
{
    struct shm_peer *p = (struct shm_peer *)peer;
    uint64_t old = gas_tl_amo_apply(peer->direct_base + a->offset, a->op, a->width, a->operand,
                                    a->compare);
    if (a->result && gas_amo_fetches(a->op))
        *a->result = old;
    if (a->op != GAS_AMO_FETCH)
        gas_rt_doorbell_ring(&p->hdr->doorbell, a->offset, a->width);
    return GAS_OK;
}

static gas_status_t shm_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                   uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                   gas_tl_comp_t *comp, const char *call)
{
    struct shm_peer *p = (struct shm_peer *)peer;
    memcpy(peer->direct_base + off, src, n);
    gas_tl_signal_apply(peer->direct_base + sig_off, value, op);
    gas_rt_doorbell_ring2(&p->hdr->doorbell, off, n, sig_off, 8);
    return GAS_OK;
}

static gas_status_t shm_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    return GAS_OK;
}

/* As the fence: stores to node-local memory are complete once made. */
static gas_status_t shm_quiet(const char *call, gas_tl_report_t *rep)
{
    (void)call;
    (void)rep;
    return shm_fence();
}

static int shm_gone_addr(const void *addr, size_t len, int thorough)
{
    if (!shm_reachable(addr, len))
        return 0;
    pid_t pid = (pid_t)gas_boot_get_u32((const unsigned char *)addr + 8);
    return pid_gone(pid) || (thorough && pid_zombie(pid));
}

static void shm_disconnect(gas_tl_peer_t *peer)
{
    struct shm_peer *p = (struct shm_peer *)peer;
    if (p->mapped)
        gas_al_segment_detach(peer->direct_base, peer->size);
    free(p);
}

static void shm_fini(void)
{
}

const struct gas_tl_ops gas_shm_ops = {
    .name = "shm",
    .id = GAS_TL_SHM,
    .init = shm_init,
    .addr_pack = shm_addr_pack,
    .reachable = shm_reachable,
    .connect = shm_connect,
    .put = shm_put,
    .get = shm_get,
    .amo = shm_amo,
    .put_signal = shm_put_signal,
    .fence = shm_fence,
    .quiet = shm_quiet,
    .gone_addr = shm_gone_addr,
    .progress = gas_tl_no_progress,
    .stats = gas_tl_no_stats,
    .disconnect = shm_disconnect,
    .fini = shm_fini,
};

/* For gas-bench-scale: what each contacted peer costs this transport. */
const size_t gas_shm_peer_bytes = sizeof(struct shm_peer);
