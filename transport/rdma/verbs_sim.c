/*
 * verbs_sim.c - a software RC "NIC" for processes on one host
 * (GAS_RDMA_DEVICE=sim), behind the same seam as libibverbs.
 *
 * Each process's device is a shared page (a memfd) that holds its memory
 * registrations and, per QP, the state, the access flags, the posted receive
 * credits and a ring of WRITE_WITH_IMM arrivals.  A peer's port address (GID)
 * names the owner's pid and that memfd, so the initiator maps the target's
 * page and, through each registration's memfd, its memory, and performs
 * WRITE/READ/atomics itself: the target's CPU is never involved.  Checks are
 * real: the target QP must be RTR/RTS and allow the access, the rkey must be
 * current, the range inside the region; a failure completes the request with
 * an error status, moves the QP to ERR and flushes what follows.
 *
 * Work requests run in order per QP at post time, or later from poll_cq when
 * one was delayed (fault injection) or the target has no receive posted (RNR:
 * it waits, like rnr_retry 7).  Faults (GAS_TEST_RDMA_*): delay a fraction of
 * requests, fail the Nth request with retry-exceeded or remote-access error.
 * One lock per device; the transport polls from one thread at a time anyway.
 *
 * Completion events: a CQ made with events owns a pipe and a slot in the
 * device page (armed flag, the pipe's write end).  Each QP's shared state
 * names the slot of its receive CQ, so the initiator that appends a
 * WRITE_WITH_IMM arrival clears the armed flag and, if it was set, writes a
 * byte into the target's pipe (opened through /proc/<pid>/fd/<n>, like the
 * memory): the target's progress thread wakes with no other help from the
 * initiator.  (An eventfd cannot be opened that way; a pipe can.)
 */
#include "transport/rdma/verbs.h"
#include "runtime/clock.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SIM_MAGIC 0x4d495341474d4953ull /* "SIMGASIM" */
#define SIM_MAX_MR 32
#define SIM_MAX_QP 512
#define SIM_RING 1024            /* receive completions a QP holds (>= its receive queue) */
#define SIM_GID_TAG "GSIM"
#define SIM_MAX_CQ 16

struct sim_mr_sh {
    _Atomic uint32_t rkey;       /* 0: free */
    uint32_t access;
    int32_t fd;
    uint32_t pad;
    uint64_t addr, len;
};

struct sim_rq_sh {
    _Atomic uint32_t state;
    _Atomic uint32_t access;
    _Atomic uint32_t credits;    /* receives posted and not consumed */
    uint32_t pad;
    _Atomic int32_t cqn;         /* completion-event slot of the receive CQ + 1 (0: none) */
    uint32_t pad2;
    _Atomic uint64_t head;       /* written by the peer that writes into this QP */
    _Atomic uint64_t tail;       /* written by the owner */
    struct { uint32_t imm, len; } ring[SIM_RING];
};

/* A CQ's completion-event slot: armed by its owner, fired by whoever adds a completion. */
struct sim_cqn_sh {
    _Atomic uint32_t armed;
    int32_t wfd;                 /* the owner's pipe write end */
};

struct sim_page {
    uint64_t magic;
    uint32_t pid;
    int32_t fd;
    struct sim_mr_sh mr[SIM_MAX_MR];
    struct sim_cqn_sh cqn[SIM_MAX_CQ];
    struct sim_rq_sh qp[SIM_MAX_QP];
};

struct sim_remote {
    struct sim_remote *next;
    uint32_t pid;
    int32_t fd;
    struct sim_page *page;
    struct { uint32_t rkey; char *base; uint64_t len; } map[SIM_MAX_MR];
    int cqfd[SIM_MAX_CQ];        /* the peer's event pipes, opened on first use (-1) */
};

struct pending {
    gas_vb_send_wr_t wr;
    uint64_t due_ns;
};

struct gas_vb_ctx {
    pthread_mutex_t lock;
    struct sim_page *page;
    int fd;
    uint32_t mr_gen;
    struct gas_vb_qp *qps[SIM_MAX_QP];
    int qp_hi;                           /* qps[] beyond it are all NULL */
    struct gas_vb_cq *cqs[SIM_MAX_CQ];   /* CQs with events, by slot */
    struct sim_remote *remotes;
    uint64_t wr_count, qp_error_at, access_error_at, delay_ns;
    uint64_t marker_count, marker_error_at; /* empty writes, counted apart */
    uint32_t delay_ppm;
    uint64_t rng;
};

struct gas_vb_pd { struct gas_vb_ctx *ctx; };
struct gas_vb_mr { struct gas_vb_ctx *ctx; int idx; };

struct gas_vb_cq {
    struct gas_vb_ctx *ctx;
    gas_vb_wc_t *wc;
    size_t cap, head, n;
    int slot;                    /* completion-event slot, -1 without events */
    int rfd, wfd;                /* its pipe */
};

struct gas_vb_qp {
    struct gas_vb_ctx *ctx;
    int idx;
    struct gas_vb_cq *scq, *rcq;
    gas_vb_qp_caps_t caps;
    enum gas_vb_qp_state state;
    struct sim_remote *rem;
    int rem_idx;
    _Atomic uint64_t recv_wr_id; /* receives are all alike: the last posted id (posted
                                    without the context's lock, read by poll_cq under it) */
    struct pending *pend;        /* FIFO ring */
    size_t pend_cap, pend_head, pend_n;
};

static struct sim_rq_sh *own_rq(struct gas_vb_qp *qp)
{
    return &qp->ctx->page->qp[qp->idx];
}

static void set_state(struct gas_vb_qp *qp, enum gas_vb_qp_state s)
{
    qp->state = s;
    atomic_store_explicit(&own_rq(qp)->state, (uint32_t)s, memory_order_release);
}

/* ---- device ---- */

static gas_status_t sim_open(const char *dev, unsigned port, struct gas_vb_ctx **ctx_p,
                             gas_vb_dev_info_t *info)
{
    struct gas_vb_ctx *c = calloc(1, sizeof *c);
    if (c == NULL)
        return GAS_ERR_NOMEM;
    c->fd = memfd_create("gas-rdma-sim", MFD_CLOEXEC);
    if (c->fd < 0 || ftruncate(c->fd, sizeof *c->page) != 0) {
        gas_status_t st = gas_rt_error(GAS_ERR_IO, "gas_init", "rdma sim device: memfd: %s",
                                       strerror(errno));
        if (c->fd >= 0)
            close(c->fd);
        free(c);
        return st;
    }
    c->page = mmap(NULL, sizeof *c->page, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
    if (c->page == MAP_FAILED) {
        gas_status_t st = gas_rt_error(GAS_ERR_NOMEM, "gas_init", "rdma sim device: mmap: %s",
                                       strerror(errno));
        close(c->fd);
        free(c);
        return st;
    }
    c->page->pid = (uint32_t)getpid();
    c->page->fd = c->fd;
    atomic_store((_Atomic uint64_t *)&c->page->magic, SIM_MAGIC);
    pthread_mutex_init(&c->lock, NULL);
    c->qp_error_at = gas_rt_config_size(GAS_CFG_TEST_RDMA_QP_ERROR);
    c->access_error_at = gas_rt_config_size(GAS_CFG_TEST_RDMA_ACCESS_ERROR);
    c->marker_error_at = gas_rt_config_size(GAS_CFG_TEST_RDMA_MARKER_ERROR);
    c->delay_ppm = (uint32_t)gas_rt_config_ppm(GAS_CFG_TEST_RDMA_DELAY);
    c->delay_ns = gas_rt_config_ns(GAS_CFG_TEST_RDMA_DELAY_TIME);
    c->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
    if (c->qp_error_at | c->access_error_at | c->marker_error_at | c->delay_ppm)
        gas_log_warn_once("rdma", "sim fault injection is on (GAS_TEST_RDMA_*)");
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "sim");
    info->fabric = gethostid() ^ 0x53494d00u; /* one host: all sim devices on it */
    info->port.lid = (uint16_t)(getpid() & 0xffff);
    memcpy(info->port.gid, SIM_GID_TAG, 4);
    memcpy(info->port.gid + 4, &c->page->pid, 4);
    memcpy(info->port.gid + 8, &c->page->fd, 4);
    info->active_mtu = 4096;
    info->atomics_coherent = 1; /* its atomics are the CPU's */
    *ctx_p = c;
    return GAS_OK;
}

static void sim_close(struct gas_vb_ctx *c)
{
    while (c->remotes) {
        struct sim_remote *r = c->remotes;
        c->remotes = r->next;
        for (int i = 0; i < SIM_MAX_MR; i++)
            if (r->map[i].base)
                munmap(r->map[i].base, r->map[i].len);
        for (int i = 0; i < SIM_MAX_CQ; i++)
            if (r->cqfd[i] >= 0)
                close(r->cqfd[i]);
        munmap(r->page, sizeof *r->page);
        free(r);
    }
    munmap(c->page, sizeof *c->page);
    close(c->fd);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static gas_status_t sim_alloc_pd(struct gas_vb_ctx *ctx, struct gas_vb_pd **pd_p)
{
    struct gas_vb_pd *pd = calloc(1, sizeof *pd);
    if (pd == NULL)
        return GAS_ERR_NOMEM;
    pd->ctx = ctx;
    *pd_p = pd;
    return GAS_OK;
}

static void sim_dealloc_pd(struct gas_vb_pd *pd)
{
    free(pd);
}

static gas_status_t sim_reg_mr(struct gas_vb_pd *pd, void *addr, size_t len, int fd,
                               unsigned access, struct gas_vb_mr **mr_p, uint32_t *lkey_p,
                               uint32_t *rkey_p)
{
    struct gas_vb_ctx *c = pd->ctx;
    if (fd < 0 && (access & ~GAS_VB_ACCESS_LOCAL_WRITE))
        return GAS_ERR_UNSUPPORTED; /* the sim can expose only memfd-backed memory */
    struct gas_vb_mr *mr = calloc(1, sizeof *mr);
    if (mr == NULL)
        return GAS_ERR_NOMEM;
    pthread_mutex_lock(&c->lock);
    int idx = -1;
    for (int i = 0; i < SIM_MAX_MR && idx < 0; i++)
        if (atomic_load(&c->page->mr[i].rkey) == 0)
            idx = i;
    if (idx < 0) {
        pthread_mutex_unlock(&c->lock);
        free(mr);
        return GAS_ERR_AGAIN;
    }
    struct sim_mr_sh *m = &c->page->mr[idx];
    m->access = access;
    m->fd = fd;
    m->addr = (uint64_t)(uintptr_t)addr;
    m->len = len;
    uint32_t key = (++c->mr_gen & 0xffff) << 16 | (uint32_t)(idx + 1);
    atomic_store_explicit(&m->rkey, key, memory_order_release);
    pthread_mutex_unlock(&c->lock);
    mr->ctx = c;
    mr->idx = idx;
    *mr_p = mr;
    *lkey_p = key;
    *rkey_p = key;
    return GAS_OK;
}

static void sim_dereg_mr(struct gas_vb_mr *mr)
{
    atomic_store(&mr->ctx->page->mr[mr->idx].rkey, 0);
    free(mr);
}

/* ---- completion queues ---- */

static gas_status_t sim_create_cq(struct gas_vb_ctx *ctx, int depth, int events,
                                  struct gas_vb_cq **cq_p)
{
    struct gas_vb_cq *cq = calloc(1, sizeof *cq);
    if (cq == NULL || (cq->wc = calloc((size_t)depth, sizeof *cq->wc)) == NULL) {
        free(cq);
        return GAS_ERR_NOMEM;
    }
    cq->ctx = ctx;
    cq->cap = (size_t)depth;
    cq->slot = cq->rfd = cq->wfd = -1;
    if (events) {
        int fds[2];
        pthread_mutex_lock(&ctx->lock);
        for (int i = 0; i < SIM_MAX_CQ && cq->slot < 0; i++)
            if (ctx->cqs[i] == NULL)
                cq->slot = i;
        if (cq->slot >= 0 && pipe2(fds, O_NONBLOCK | O_CLOEXEC) == 0) {
            cq->rfd = fds[0];
            cq->wfd = fds[1];
            ctx->cqs[cq->slot] = cq;
            struct sim_cqn_sh *e = &ctx->page->cqn[cq->slot];
            e->wfd = cq->wfd;
            atomic_store(&e->armed, 0);
        }
        pthread_mutex_unlock(&ctx->lock);
        if (cq->rfd < 0) {
            free(cq->wc);
            free(cq);
            return GAS_ERR_AGAIN;
        }
    }
    *cq_p = cq;
    return GAS_OK;
}

static void sim_destroy_cq(struct gas_vb_cq *cq)
{
    if (cq->slot >= 0) {
        pthread_mutex_lock(&cq->ctx->lock);
        atomic_store(&cq->ctx->page->cqn[cq->slot].armed, 0);
        cq->ctx->cqs[cq->slot] = NULL;
        pthread_mutex_unlock(&cq->ctx->lock);
        close(cq->rfd);
        close(cq->wfd);
    }
    free(cq->wc);
    free(cq);
}

static int sim_cq_event_fd(struct gas_vb_cq *cq)
{
    return cq->rfd;
}

static int sim_req_notify_cq(struct gas_vb_cq *cq)
{
    if (cq->slot < 0)
        return EINVAL;
    atomic_store(&cq->ctx->page->cqn[cq->slot].armed, 1);
    atomic_thread_fence(memory_order_seq_cst); /* then look at the rings (poll_cq) */
    return 0;
}

static int sim_get_cq_events(struct gas_vb_cq *cq)
{
    if (cq->slot < 0 || atomic_load(&cq->ctx->page->cqn[cq->slot].armed))
        return 0; /* still armed: nothing fired, no system call */
    char buf[64];
    ssize_t r;
    int n = 0;
    while ((r = read(cq->rfd, buf, sizeof buf)) > 0)
        n += (int)r;
    return n;
}

/* Fire the event of slot `slot` of page pg if armed; fd_p caches the pipe's
 * write end (opened through /proc when the page is another process's). */
static void fire_event(struct sim_page *pg, int slot, int *fd_p, int own_fd)
{
    atomic_thread_fence(memory_order_seq_cst); /* the completion is visible first */
    if (!atomic_exchange(&pg->cqn[slot].armed, 0))
        return;
    int fd = own_fd;
    if (fd < 0) {
        if (*fd_p < 0) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%u/fd/%d", pg->pid, pg->cqn[slot].wfd);
            *fd_p = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        }
        fd = *fd_p;
    }
    char one = 1;
    if (fd >= 0 && write(fd, &one, 1) < 0) {
        /* a full pipe has an event pending already */
    }
}

/* Add a completion; fire: it is new (a send completion), not an arrival
 * another process already signalled (see fire_event). */
static void cq_push(struct gas_vb_cq *cq, const gas_vb_wc_t *wc, int fire)
{
    if (cq->n == cq->cap) { /* a real CQ would overrun; the transport sizes it to avoid that */
        size_t ncap = cq->cap * 2;
        gas_vb_wc_t *nw = malloc(ncap * sizeof *nw);
        if (nw == NULL)
            return;
        for (size_t i = 0; i < cq->n; i++)
            nw[i] = cq->wc[(cq->head + i) % cq->cap];
        free(cq->wc);
        cq->wc = nw;
        cq->cap = ncap;
        cq->head = 0;
    }
    cq->wc[(cq->head + cq->n++) % cq->cap] = *wc;
    if (fire && cq->slot >= 0)
        fire_event(cq->ctx->page, cq->slot, NULL, cq->wfd);
}

/* ---- queue pairs ---- */

static gas_status_t sim_create_qp(struct gas_vb_pd *pd, struct gas_vb_cq *scq,
                                  struct gas_vb_cq *rcq, const gas_vb_qp_caps_t *caps,
                                  struct gas_vb_qp **qp_p, uint32_t *qpn_p)
{
    struct gas_vb_ctx *c = pd->ctx;
    if (caps->max_recv_wr > SIM_RING)
        return GAS_ERR_INVALID;
    struct gas_vb_qp *qp = calloc(1, sizeof *qp);
    if (qp == NULL)
        return GAS_ERR_NOMEM;
    pthread_mutex_lock(&c->lock);
    int idx = -1;
    for (int i = 0; i < SIM_MAX_QP && idx < 0; i++)
        if (c->qps[i] == NULL)
            idx = i;
    if (idx < 0) {
        pthread_mutex_unlock(&c->lock);
        free(qp);
        return GAS_ERR_AGAIN;
    }
    *qp = (struct gas_vb_qp){.ctx = c, .idx = idx, .scq = scq, .rcq = rcq, .caps = *caps};
    struct sim_rq_sh *rq = &c->page->qp[idx];
    atomic_store(&rq->credits, 0);
    atomic_store(&rq->access, 0);
    atomic_store(&rq->tail, atomic_load(&rq->head));
    atomic_store(&rq->cqn, rcq->slot + 1);
    set_state(qp, GAS_VB_QPS_RESET);
    c->qps[idx] = qp;
    if (idx >= c->qp_hi)
        c->qp_hi = idx + 1;
    pthread_mutex_unlock(&c->lock);
    *qp_p = qp;
    *qpn_p = (uint32_t)idx + 1;
    return GAS_OK;
}

/* Map a peer's device page named by its GID (cached). */
static struct sim_remote *remote_get(struct gas_vb_ctx *c, const uint8_t *gid)
{
    if (memcmp(gid, SIM_GID_TAG, 4) != 0)
        return NULL;
    uint32_t pid;
    int32_t fd;
    memcpy(&pid, gid + 4, 4);
    memcpy(&fd, gid + 8, 4);
    for (struct sim_remote *r = c->remotes; r; r = r->next)
        if (r->pid == pid && r->fd == fd)
            return r;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, fd);
    int pfd = open(path, O_RDWR | O_CLOEXEC);
    if (pfd < 0)
        return NULL;
    void *p = mmap(NULL, sizeof(struct sim_page), PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
    close(pfd);
    if (p == MAP_FAILED)
        return NULL;
    struct sim_remote *r = calloc(1, sizeof *r);
    if (r == NULL || ((struct sim_page *)p)->magic != SIM_MAGIC) {
        munmap(p, sizeof(struct sim_page));
        free(r);
        return NULL;
    }
    for (int i = 0; i < SIM_MAX_CQ; i++)
        r->cqfd[i] = -1;
    r->pid = pid;
    r->fd = fd;
    r->page = p;
    r->next = c->remotes;
    c->remotes = r;
    return r;
}

static void complete(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr, int status);
static void pend_pop(struct gas_vb_qp *qp);

static int has(unsigned mask, unsigned need)
{
    return (mask & need) == need;
}

static int sim_modify_qp(struct gas_vb_qp *qp, const gas_vb_qp_attr_t *a, unsigned mask)
{
    struct gas_vb_ctx *c = qp->ctx;
    if (!(mask & GAS_VB_QP_STATE))
        return EINVAL;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    enum gas_vb_qp_state from = qp->state, to = a->qp_state;
    if (to == GAS_VB_QPS_ERR || to == GAS_VB_QPS_RESET) {
        set_state(qp, to);
        while (qp->pend_n) { /* what was not executed is flushed */
            complete(qp, &qp->pend[qp->pend_head].wr, GAS_VB_WC_FLUSH_ERR);
            pend_pop(qp);
        }
    } else if (from == GAS_VB_QPS_RESET && to == GAS_VB_QPS_INIT) {
        if (!has(mask, GAS_VB_QP_PKEY_INDEX | GAS_VB_QP_PORT | GAS_VB_QP_ACCESS_FLAGS) ||
            a->port_num != 1)
            rc = EINVAL;
        else {
            atomic_store(&own_rq(qp)->access, a->qp_access_flags);
            set_state(qp, to);
        }
    } else if (from == GAS_VB_QPS_INIT && to == GAS_VB_QPS_RTR) {
        unsigned need = GAS_VB_QP_AV | GAS_VB_QP_PATH_MTU | GAS_VB_QP_DEST_QPN |
                        GAS_VB_QP_RQ_PSN | GAS_VB_QP_MAX_DEST_RD_ATOMIC | GAS_VB_QP_MIN_RNR_TIMER;
        struct sim_remote *r = has(mask, need) ? remote_get(c, a->ah.dest.gid) : NULL;
        if (r == NULL || a->dest_qp_num == 0 || a->dest_qp_num > SIM_MAX_QP)
            rc = EINVAL;
        else {
            qp->rem = r;
            qp->rem_idx = (int)a->dest_qp_num - 1;
            set_state(qp, to);
        }
    } else if (from == GAS_VB_QPS_RTR && to == GAS_VB_QPS_RTS) {
        if (!has(mask, GAS_VB_QP_TIMEOUT | GAS_VB_QP_RETRY_CNT | GAS_VB_QP_RNR_RETRY |
                           GAS_VB_QP_SQ_PSN | GAS_VB_QP_MAX_QP_RD_ATOMIC))
            rc = EINVAL;
        else
            set_state(qp, to);
    } else {
        rc = EINVAL; /* an illegal transition */
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static enum gas_vb_qp_state sim_qp_state(struct gas_vb_qp *qp)
{
    pthread_mutex_lock(&qp->ctx->lock);
    enum gas_vb_qp_state s = qp->state;
    pthread_mutex_unlock(&qp->ctx->lock);
    return s;
}

/* ---- executing work requests (the "NIC") ---- */

#define SIM_RNR (-1) /* the target has no receive posted: try again later */

/* The target memory of [raddr, raddr + len) under rkey with access, or NULL. */
static char *remote_mem(struct sim_remote *r, uint32_t rkey, uint64_t raddr, uint64_t len,
                        unsigned access)
{
    uint32_t idx = (rkey & 0xffff) - 1;
    if (idx >= SIM_MAX_MR)
        return NULL;
    struct sim_mr_sh *m = &r->page->mr[idx];
    if (atomic_load_explicit(&m->rkey, memory_order_acquire) != rkey || !has(m->access, access))
        return NULL;
    if (raddr < m->addr || raddr - m->addr > m->len || len > m->len - (raddr - m->addr))
        return NULL;
    if (r->map[idx].rkey != rkey) {
        if (r->map[idx].base)
            munmap(r->map[idx].base, r->map[idx].len);
        r->map[idx].base = NULL;
        char path[64];
        snprintf(path, sizeof path, "/proc/%u/fd/%d", r->pid, m->fd);
        int pfd = open(path, O_RDWR | O_CLOEXEC);
        if (pfd < 0)
            return NULL;
        void *p = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, pfd, 0);
        close(pfd);
        if (p == MAP_FAILED)
            return NULL;
        r->map[idx].base = p;
        r->map[idx].len = m->len;
        r->map[idx].rkey = rkey;
    }
    return r->map[idx].base + (raddr - m->addr);
}

static int exec_wr(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr)
{
    struct gas_vb_ctx *c = qp->ctx;
    /* Injected faults count requests that carry something apart from empty
     * writes (completion markers): a marker with nothing behind it fails
     * with nothing to redo, so a test expecting a redo could not tell where
     * it landed.  Markers have their own fault (GAS_TEST_RDMA_MARKER_ERROR). */
    if (wr->length || wr->opcode != GAS_VB_WR_RDMA_WRITE) {
        uint64_t n = ++c->wr_count;
        if (c->qp_error_at && n == c->qp_error_at)
            return GAS_VB_WC_RETRY_EXC_ERR;
        if (c->access_error_at && n == c->access_error_at)
            return GAS_VB_WC_REM_ACCESS_ERR;
    } else if (c->marker_error_at && ++c->marker_count == c->marker_error_at) {
        return GAS_VB_WC_RETRY_EXC_ERR;
    }
    struct sim_rq_sh *rq = &qp->rem->page->qp[qp->rem_idx];
    uint32_t rs = atomic_load_explicit(&rq->state, memory_order_acquire);
    if (rs != GAS_VB_QPS_RTR && rs != GAS_VB_QPS_RTS)
        return GAS_VB_WC_RETRY_EXC_ERR; /* nobody answers: the transport retries, then gives up */
    unsigned qacc = atomic_load(&rq->access);
    switch (wr->opcode) {
    case GAS_VB_WR_RDMA_WRITE:
    case GAS_VB_WR_RDMA_WRITE_WITH_IMM: {
        int imm = wr->opcode == GAS_VB_WR_RDMA_WRITE_WITH_IMM;
        if (imm && atomic_load(&rq->credits) == 0)
            return SIM_RNR;
        if (wr->length) {
            char *dst = has(qacc, GAS_VB_ACCESS_REMOTE_WRITE)
                            ? remote_mem(qp->rem, wr->rkey, wr->remote_addr, wr->length,
                                         GAS_VB_ACCESS_REMOTE_WRITE)
                            : NULL;
            if (dst == NULL)
                return GAS_VB_WC_REM_ACCESS_ERR;
            memcpy(dst, wr->local, wr->length);
        }
        if (imm) {
            atomic_thread_fence(memory_order_seq_cst);
            atomic_fetch_sub(&rq->credits, 1);
            uint64_t h = atomic_load_explicit(&rq->head, memory_order_relaxed);
            rq->ring[h % SIM_RING].imm = wr->imm;
            rq->ring[h % SIM_RING].len = wr->length;
            atomic_store_explicit(&rq->head, h + 1, memory_order_release);
            int slot = atomic_load(&rq->cqn) - 1;
            if (slot >= 0 && slot < SIM_MAX_CQ)
                fire_event(qp->rem->page, slot, &qp->rem->cqfd[slot], -1);
        }
        return GAS_VB_WC_SUCCESS;
    }
    case GAS_VB_WR_RDMA_READ: {
        char *src = has(qacc, GAS_VB_ACCESS_REMOTE_READ)
                        ? remote_mem(qp->rem, wr->rkey, wr->remote_addr, wr->length,
                                     GAS_VB_ACCESS_REMOTE_READ)
                        : NULL;
        if (src == NULL)
            return GAS_VB_WC_REM_ACCESS_ERR;
        memcpy(wr->local, src, wr->length);
        return GAS_VB_WC_SUCCESS;
    }
    case GAS_VB_WR_ATOMIC_FETCH_ADD:
    case GAS_VB_WR_ATOMIC_CMP_SWP: {
        char *w = has(qacc, GAS_VB_ACCESS_REMOTE_ATOMIC) && wr->remote_addr % 8 == 0
                      ? remote_mem(qp->rem, wr->rkey, wr->remote_addr, 8,
                                   GAS_VB_ACCESS_REMOTE_ATOMIC)
                      : NULL;
        if (w == NULL)
            return GAS_VB_WC_REM_ACCESS_ERR;
        uint64_t *x = (uint64_t *)(void *)w, old;
        if (wr->opcode == GAS_VB_WR_ATOMIC_FETCH_ADD)
            old = __atomic_fetch_add(x, wr->compare_add, __ATOMIC_SEQ_CST);
        else {
            old = wr->compare_add;
            __atomic_compare_exchange_n(x, &old, wr->swap, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        }
        memcpy(wr->local, &old, 8);
        return GAS_VB_WC_SUCCESS;
    }
    }
    return GAS_VB_WC_OTHER_ERR;
}

static void complete(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr, int status)
{
    if (status == GAS_VB_WC_SUCCESS && !(wr->flags & GAS_VB_SEND_SIGNALED))
        return;
    gas_vb_wc_t wc = {.wr_id = wr->wr_id, .status = (enum gas_vb_wc_status)status,
                      .opcode = GAS_VB_WC_SEND_SIDE, .qp_num = (uint32_t)qp->idx + 1};
    cq_push(qp->scq, &wc, 1);
}

/* The QP failed: report the request, flush everything queued behind it. */
static void fail_qp(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr, int status)
{
    set_state(qp, GAS_VB_QPS_ERR);
    complete(qp, wr, status);
    while (qp->pend_n) {
        complete(qp, &qp->pend[qp->pend_head].wr, GAS_VB_WC_FLUSH_ERR);
        pend_pop(qp); /* frees an inline request's copy */
    }
}

static int pend_push(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr, uint64_t due)
{
    if (qp->pend_n == qp->pend_cap) {
        size_t ncap = qp->pend_cap ? qp->pend_cap * 2 : 64;
        struct pending *np = malloc(ncap * sizeof *np);
        if (np == NULL)
            return ENOMEM;
        for (size_t i = 0; i < qp->pend_n; i++)
            np[i] = qp->pend[(qp->pend_head + i) % qp->pend_cap];
        free(qp->pend);
        qp->pend = np;
        qp->pend_cap = ncap;
        qp->pend_head = 0;
    }
    struct pending *p = &qp->pend[(qp->pend_head + qp->pend_n++) % qp->pend_cap];
    p->wr = *wr;
    if (wr->flags & GAS_VB_SEND_INLINE) { /* the caller may reuse an inline source at once */
        void *copy = malloc(wr->length ? wr->length : 1);
        if (copy == NULL)
            return ENOMEM;
        memcpy(copy, wr->local, wr->length);
        p->wr.local = copy;
    }
    p->due_ns = due;
    return 0;
}

static void pend_pop(struct gas_vb_qp *qp)
{
    struct pending *p = &qp->pend[qp->pend_head];
    if (p->wr.flags & GAS_VB_SEND_INLINE)
        free(p->wr.local);
    qp->pend_head = (qp->pend_head + 1) % qp->pend_cap;
    qp->pend_n--;
}

/* Run the queued requests that are due, in order; stop at one that must wait. */
static void run_pending(struct gas_vb_qp *qp, uint64_t now)
{
    while (qp->pend_n && qp->state == GAS_VB_QPS_RTS) {
        struct pending *p = &qp->pend[qp->pend_head];
        if (p->due_ns > now)
            return;
        int st = exec_wr(qp, &p->wr);
        if (st == SIM_RNR)
            return;
        gas_vb_send_wr_t wr = p->wr;
        if (st == GAS_VB_WC_SUCCESS)
            complete(qp, &wr, st);
        pend_pop(qp);
        if (st != GAS_VB_WC_SUCCESS)
            fail_qp(qp, &wr, st);
    }
}

static int sim_post_send(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr)
{
    struct gas_vb_ctx *c = qp->ctx;
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    if (qp->state == GAS_VB_QPS_ERR) {
        complete(qp, wr, GAS_VB_WC_FLUSH_ERR);
    } else if (qp->state != GAS_VB_QPS_RTS) {
        rc = EINVAL;
    } else if ((wr->flags & GAS_VB_SEND_INLINE) && wr->length > qp->caps.max_inline) {
        rc = EINVAL;
    } else {
        uint64_t due = 0;
        if (c->delay_ppm) {
            c->rng ^= c->rng << 13;
            c->rng ^= c->rng >> 7;
            c->rng ^= c->rng << 17;
            if (c->rng % 1000000u < c->delay_ppm)
                due = gas_rt_now_ns() + c->delay_ns;
        }
        if (qp->pend_n || due) {
            rc = pend_push(qp, wr, due);
        } else {
            int st = exec_wr(qp, wr);
            if (st == SIM_RNR)
                rc = pend_push(qp, wr, 0);
            else if (st == GAS_VB_WC_SUCCESS)
                complete(qp, wr, st);
            else
                fail_qp(qp, wr, st);
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

static int sim_post_recv(struct gas_vb_qp *qp, uint64_t wr_id, unsigned n)
{
    struct sim_rq_sh *rq = own_rq(qp);
    if (atomic_load(&rq->credits) + n > qp->caps.max_recv_wr)
        return ENOMEM;
    atomic_store_explicit(&qp->recv_wr_id, wr_id, memory_order_relaxed);
    atomic_fetch_add(&rq->credits, n);
    return 0;
}

static int sim_poll_cq(struct gas_vb_cq *cq, int n, gas_vb_wc_t *wc)
{
    struct gas_vb_ctx *c = cq->ctx;
    pthread_mutex_lock(&c->lock);
    uint64_t now = 0;
    for (int i = 0; i < c->qp_hi; i++) {
        struct gas_vb_qp *qp = c->qps[i];
        if (qp == NULL)
            continue;
        if (qp->scq == cq && qp->pend_n) {
            if (now == 0)
                now = gas_rt_now_ns();
            run_pending(qp, now);
        }
        if (qp->rcq == cq) {
            struct sim_rq_sh *rq = own_rq(qp);
            uint64_t t = atomic_load_explicit(&rq->tail, memory_order_relaxed);
            while (t != atomic_load_explicit(&rq->head, memory_order_acquire)) {
                gas_vb_wc_t w = {.wr_id = atomic_load_explicit(&qp->recv_wr_id,
                                                                memory_order_relaxed),
                                 .status = GAS_VB_WC_SUCCESS,
                                 .opcode = GAS_VB_WC_RECV_RDMA_WITH_IMM,
                                 .qp_num = (uint32_t)i + 1, .imm = rq->ring[t % SIM_RING].imm,
                                 .byte_len = rq->ring[t % SIM_RING].len};
                cq_push(cq, &w, 0);
                atomic_store_explicit(&rq->tail, ++t, memory_order_release);
            }
        }
    }
    int k = 0;
    while (k < n && cq->n) {
        wc[k++] = cq->wc[cq->head];
        cq->head = (cq->head + 1) % cq->cap;
        cq->n--;
    }
    pthread_mutex_unlock(&c->lock);
    return k;
}

static void sim_destroy_qp(struct gas_vb_qp *qp)
{
    struct gas_vb_ctx *c = qp->ctx;
    pthread_mutex_lock(&c->lock);
    set_state(qp, GAS_VB_QPS_RESET);
    while (qp->pend_n)
        pend_pop(qp);
    free(qp->pend);
    c->qps[qp->idx] = NULL;
    pthread_mutex_unlock(&c->lock);
    free(qp);
}

const gas_vb_ops_t gas_vb_sim_ops = {
    .name = "sim",
    .open = sim_open,
    .close = sim_close,
    .alloc_pd = sim_alloc_pd,
    .dealloc_pd = sim_dealloc_pd,
    .reg_mr = sim_reg_mr,
    .dereg_mr = sim_dereg_mr,
    .create_cq = sim_create_cq,
    .destroy_cq = sim_destroy_cq,
    .cq_event_fd = sim_cq_event_fd,
    .req_notify_cq = sim_req_notify_cq,
    .get_cq_events = sim_get_cq_events,
    .create_qp = sim_create_qp,
    .modify_qp = sim_modify_qp,
    .qp_state = sim_qp_state,
    .post_send = sim_post_send,
    .post_recv = sim_post_recv,
    .poll_cq = sim_poll_cq,
    .destroy_qp = sim_destroy_qp,
};

const char *gas_vb_wc_status_str(enum gas_vb_wc_status s)
{
    switch (s) {
    case GAS_VB_WC_SUCCESS: return "success";
    case GAS_VB_WC_LOC_PROT_ERR: return "local protection error";
    case GAS_VB_WC_REM_ACCESS_ERR: return "remote access error";
    case GAS_VB_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case GAS_VB_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    case GAS_VB_WC_FLUSH_ERR: return "work request flushed";
    default: return "other error";
    }
}
