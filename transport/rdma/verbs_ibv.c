/*
 * verbs_ibv.c - the seam over libibverbs (rdma-core): device and port
 * discovery, protection domain, registrations, CQs, RC QPs, posting and
 * polling.  Compiled when the build finds libibverbs (GAS_HAVE_IBVERBS).
 * It translates the seam's plain types to ibv_* ones and nothing more;
 * the policy (attributes, timeouts, retries) is the transport's.
 */
#include "transport/rdma/verbs.h"

#if GAS_HAVE_IBVERBS
#include "runtime/error.h"
#include "runtime/log.h"

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gas_vb_ctx { struct ibv_context *ctx; uint8_t port; uint8_t gid_index; };
struct gas_vb_pd { struct ibv_pd *pd; struct gas_vb_ctx *ctx; };
struct gas_vb_mr { struct ibv_mr *mr; };
struct gas_vb_cq { struct ibv_cq *cq; struct ibv_comp_channel *ch; };
struct gas_vb_qp { struct ibv_qp *qp; };

static unsigned mtu_bytes(enum ibv_mtu m)
{
    return 128u << (unsigned)m;
}

static enum ibv_mtu mtu_enum(unsigned bytes)
{
    return bytes >= 4096 ? IBV_MTU_4096 : bytes >= 2048 ? IBV_MTU_2048
         : bytes >= 1024 ? IBV_MTU_1024 : bytes >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

static gas_status_t ibv_open(const char *dev, unsigned port, struct gas_vb_ctx **ctx_p,
                             gas_vb_dev_info_t *info)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    int named = dev != NULL && *dev != 0;
    if (list == NULL || n == 0) {
        if (list)
            ibv_free_device_list(list);
        if (named) /* asked for by name: say why it is not used */
            gas_log_warn("rdma", "GAS_RDMA_DEVICE=%s: this host has no verbs device; this "
                         "rank goes on without rdma (udp)", dev);
        return GAS_ERR_UNSUPPORTED;
    }
    struct ibv_device *d = NULL;
    char found[160] = "";
    for (int i = 0; i < n && d == NULL; i++) {
        const char *name = ibv_get_device_name(list[i]);
        if (!named || strcmp(name, dev) == 0)
            d = list[i];
        size_t at = strlen(found);
        snprintf(found + at, sizeof found - at, "%s%s", at ? ", " : "", name);
    }
    if (d == NULL) {
        /* A cluster's nodes may differ: the rank goes on over udp, as one without a device. */
        ibv_free_device_list(list);
        gas_log_warn("rdma", "GAS_RDMA_DEVICE=%s: no verbs device of that name here (found: %s); "
                     "this rank goes on without rdma (udp)", dev, found);
        return GAS_ERR_UNSUPPORTED;
    }
    struct gas_vb_ctx *c = calloc(1, sizeof *c);
    if (c == NULL) {
        ibv_free_device_list(list);
        return GAS_ERR_NOMEM;
    }
    c->ctx = ibv_open_device(d);
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", ibv_get_device_name(d));
    ibv_free_device_list(list);
    if (c->ctx == NULL) {
        free(c);
        return gas_rt_error(GAS_ERR_IO, "gas_init", "ibv_open_device(%s): %s", info->name,
                            strerror(errno));
    }
    struct ibv_port_attr pa;
    struct ibv_device_attr da;
    union ibv_gid gid;
    if (ibv_query_port(c->ctx, (uint8_t)port, &pa) != 0 || pa.state != IBV_PORT_ACTIVE ||
        ibv_query_device(c->ctx, &da) != 0) {
        ibv_close_device(c->ctx);
        free(c);
        return gas_rt_error(GAS_ERR_UNSUPPORTED, "gas_init",
                            "verbs device %s port %u is not active (GAS_RDMA_PORT)", info->name,
                            port);
    }
    c->port = (uint8_t)port;
    memset(&gid, 0, sizeof gid);
    if (pa.link_layer == IBV_LINK_LAYER_ETHERNET || pa.lid == 0)
        ibv_query_gid(c->ctx, c->port, c->gid_index, &gid);
    info->port.lid = pa.lid;
    memcpy(info->port.gid, gid.raw, 16);
    /* Same fabric: the subnet prefix for RoCE/global routing, else the SM's LID. */
    info->fabric = gid.global.subnet_prefix ? gid.global.subnet_prefix
                                            : 0x1b00000000ull | pa.sm_lid;
    info->active_mtu = mtu_bytes(pa.active_mtu);
    info->atomics_coherent = da.atomic_cap == IBV_ATOMIC_GLOB;
    *ctx_p = c;
    return GAS_OK;
}

static void ibv_close_(struct gas_vb_ctx *c)
{
    ibv_close_device(c->ctx);
    free(c);
}

static gas_status_t ibv_alloc_pd_(struct gas_vb_ctx *ctx, struct gas_vb_pd **pd_p)
{
    struct gas_vb_pd *pd = calloc(1, sizeof *pd);
    if (pd == NULL)
        return GAS_ERR_NOMEM;
    pd->ctx = ctx;
    if ((pd->pd = ibv_alloc_pd(ctx->ctx)) == NULL) {
        free(pd);
        return gas_rt_error(GAS_ERR_IO, "gas_init", "ibv_alloc_pd: %s", strerror(errno));
    }
    *pd_p = pd;
    return GAS_OK;
}

static void ibv_dealloc_pd_(struct gas_vb_pd *pd)
{
    ibv_dealloc_pd(pd->pd);
    free(pd);
}

static gas_status_t ibv_reg_mr_(struct gas_vb_pd *pd, void *addr, size_t len, int fd,
                                unsigned access, struct gas_vb_mr **mr_p, uint32_t *lkey_p,
                                uint32_t *rkey_p)
{
    int acc = 0;
    if (access & GAS_VB_ACCESS_LOCAL_WRITE) acc |= IBV_ACCESS_LOCAL_WRITE;
    if (access & GAS_VB_ACCESS_REMOTE_WRITE) acc |= IBV_ACCESS_REMOTE_WRITE;
    if (access & GAS_VB_ACCESS_REMOTE_READ) acc |= IBV_ACCESS_REMOTE_READ;
    if (access & GAS_VB_ACCESS_REMOTE_ATOMIC) acc |= IBV_ACCESS_REMOTE_ATOMIC;
    struct gas_vb_mr *mr = calloc(1, sizeof *mr);
    if (mr == NULL)
        return GAS_ERR_NOMEM;
    /* On-demand paging would suit the sparse segment; plain registration pins it. */
    if ((mr->mr = ibv_reg_mr(pd->pd, addr, len, acc)) == NULL) {
        free(mr);
        return gas_rt_error(GAS_ERR_IO, "gas_init", "ibv_reg_mr of %zu bytes: %s", len,
                            strerror(errno));
    }
    *mr_p = mr;
    *lkey_p = mr->mr->lkey;
    *rkey_p = mr->mr->rkey;
    return GAS_OK;
}

static void ibv_dereg_mr_(struct gas_vb_mr *mr)
{
    ibv_dereg_mr(mr->mr);
    free(mr);
}

static gas_status_t ibv_create_cq_(struct gas_vb_ctx *ctx, int depth, int events,
                                   struct gas_vb_cq **cq_p)
{
    struct gas_vb_cq *cq = calloc(1, sizeof *cq);
    if (cq == NULL)
        return GAS_ERR_NOMEM;
    if (events) {
        /* Non-blocking, so that consuming events never waits (get_cq_events). */
        if ((cq->ch = ibv_create_comp_channel(ctx->ctx)) == NULL ||
            fcntl(cq->ch->fd, F_SETFL, fcntl(cq->ch->fd, F_GETFL) | O_NONBLOCK) != 0) {
            gas_status_t st = gas_rt_error(GAS_ERR_IO, "gas_init", "ibv_create_comp_channel: %s",
                                           strerror(errno));
            if (cq->ch)
                ibv_destroy_comp_channel(cq->ch);
            free(cq);
            return st;
        }
    }
    if ((cq->cq = ibv_create_cq(ctx->ctx, depth, NULL, cq->ch, 0)) == NULL) {
        gas_status_t st = gas_rt_error(GAS_ERR_IO, "gas_init", "ibv_create_cq(%d): %s", depth,
                                       strerror(errno));
        if (cq->ch)
            ibv_destroy_comp_channel(cq->ch);
        free(cq);
        return st;
    }
    *cq_p = cq;
    return GAS_OK;
}

static void ibv_destroy_cq_(struct gas_vb_cq *cq)
{
    ibv_destroy_cq(cq->cq); /* every event was acknowledged by get_cq_events */
    if (cq->ch)
        ibv_destroy_comp_channel(cq->ch);
    free(cq);
}

static int ibv_cq_event_fd_(struct gas_vb_cq *cq)
{
    return cq->ch ? cq->ch->fd : -1;
}

static int ibv_req_notify_cq_(struct gas_vb_cq *cq)
{
    return ibv_req_notify_cq(cq->cq, 0);
}

static int ibv_get_cq_events_(struct gas_vb_cq *cq)
{
    struct ibv_cq *ev_cq;
    void *ev_ctx;
    int n = 0;
    while (cq->ch && ibv_get_cq_event(cq->ch, &ev_cq, &ev_ctx) == 0)
        n++;
    if (n)
        ibv_ack_cq_events(cq->cq, (unsigned)n);
    return n;
}

static gas_status_t ibv_create_qp_(struct gas_vb_pd *pd, struct gas_vb_cq *scq,
                                   struct gas_vb_cq *rcq, const gas_vb_qp_caps_t *caps,
                                   struct gas_vb_qp **qp_p, uint32_t *qpn_p)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = scq->cq,
        .recv_cq = rcq->cq,
        .cap = {
            .max_send_wr = caps->max_send_wr,
            .max_recv_wr = caps->max_recv_wr,
            .max_send_sge = 1,
            .max_recv_sge = 1,
            .max_inline_data = caps->max_inline,
        },
        .qp_type = IBV_QPT_RC,
        .sq_sig_all = 0,
    };
    struct gas_vb_qp *qp = calloc(1, sizeof *qp);
    if (qp == NULL)
        return GAS_ERR_NOMEM;
    if ((qp->qp = ibv_create_qp(pd->pd, &ia)) == NULL) {
        free(qp);
        return gas_rt_error(GAS_ERR_IO, "connect", "ibv_create_qp: %s", strerror(errno));
    }
    *qp_p = qp;
    *qpn_p = qp->qp->qp_num;
    return GAS_OK;
}

static const struct { unsigned ours; int theirs; } mask_map[] = {
    {GAS_VB_QP_STATE, IBV_QP_STATE},
    {GAS_VB_QP_ACCESS_FLAGS, IBV_QP_ACCESS_FLAGS},
    {GAS_VB_QP_PKEY_INDEX, IBV_QP_PKEY_INDEX},
    {GAS_VB_QP_PORT, IBV_QP_PORT},
    {GAS_VB_QP_AV, IBV_QP_AV},
    {GAS_VB_QP_PATH_MTU, IBV_QP_PATH_MTU},
    {GAS_VB_QP_DEST_QPN, IBV_QP_DEST_QPN},
    {GAS_VB_QP_RQ_PSN, IBV_QP_RQ_PSN},
    {GAS_VB_QP_MAX_DEST_RD_ATOMIC, IBV_QP_MAX_DEST_RD_ATOMIC},
    {GAS_VB_QP_MIN_RNR_TIMER, IBV_QP_MIN_RNR_TIMER},
    {GAS_VB_QP_TIMEOUT, IBV_QP_TIMEOUT},
    {GAS_VB_QP_RETRY_CNT, IBV_QP_RETRY_CNT},
    {GAS_VB_QP_RNR_RETRY, IBV_QP_RNR_RETRY},
    {GAS_VB_QP_SQ_PSN, IBV_QP_SQ_PSN},
    {GAS_VB_QP_MAX_QP_RD_ATOMIC, IBV_QP_MAX_QP_RD_ATOMIC},
};

static int ibv_modify_qp_(struct gas_vb_qp *qp, const gas_vb_qp_attr_t *a, unsigned mask)
{
    static const enum ibv_qp_state st[] = {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR,
                                           IBV_QPS_RTS, IBV_QPS_ERR};
    int acc = 0;
    if (a->qp_access_flags & GAS_VB_ACCESS_LOCAL_WRITE) acc |= IBV_ACCESS_LOCAL_WRITE;
    if (a->qp_access_flags & GAS_VB_ACCESS_REMOTE_WRITE) acc |= IBV_ACCESS_REMOTE_WRITE;
    if (a->qp_access_flags & GAS_VB_ACCESS_REMOTE_READ) acc |= IBV_ACCESS_REMOTE_READ;
    if (a->qp_access_flags & GAS_VB_ACCESS_REMOTE_ATOMIC) acc |= IBV_ACCESS_REMOTE_ATOMIC;
    struct ibv_qp_attr attr = {
        .qp_state = st[a->qp_state],
        .qp_access_flags = (unsigned)acc,
        .pkey_index = a->pkey_index,
        .port_num = a->port_num,
        .path_mtu = mtu_enum(a->path_mtu),
        .dest_qp_num = a->dest_qp_num,
        .rq_psn = a->rq_psn,
        .sq_psn = a->sq_psn,
        .max_dest_rd_atomic = a->max_dest_rd_atomic,
        .max_rd_atomic = a->max_rd_atomic,
        .min_rnr_timer = a->min_rnr_timer,
        .timeout = a->timeout,
        .retry_cnt = a->retry_cnt,
        .rnr_retry = a->rnr_retry,
        .ah_attr = {
            .dlid = a->ah.dest.lid,
            .sl = a->ah.sl,
            .port_num = a->port_num,
            .is_global = a->ah.is_global,
        },
    };
    if (a->ah.is_global) {
        memcpy(attr.ah_attr.grh.dgid.raw, a->ah.dest.gid, 16);
        attr.ah_attr.grh.sgid_index = a->ah.sgid_index;
        attr.ah_attr.grh.hop_limit = a->ah.hop_limit;
    }
    int m = 0;
    for (size_t i = 0; i < sizeof mask_map / sizeof mask_map[0]; i++)
        if (mask & mask_map[i].ours)
            m |= mask_map[i].theirs;
    return ibv_modify_qp(qp->qp, &attr, m);
}

static enum gas_vb_qp_state ibv_qp_state_(struct gas_vb_qp *qp)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(qp->qp, &a, IBV_QP_STATE, &ia) != 0)
        return GAS_VB_QPS_ERR;
    switch (a.qp_state) {
    case IBV_QPS_RESET: return GAS_VB_QPS_RESET;
    case IBV_QPS_INIT: return GAS_VB_QPS_INIT;
    case IBV_QPS_RTR: return GAS_VB_QPS_RTR;
    case IBV_QPS_RTS: return GAS_VB_QPS_RTS;
    default: return GAS_VB_QPS_ERR;
    }
}

static int ibv_post_send_(struct gas_vb_qp *qp, const gas_vb_send_wr_t *w)
{
    static const enum ibv_wr_opcode op[] = {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
                                            IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
                                            IBV_WR_ATOMIC_CMP_AND_SWP};
    struct ibv_sge sge = {.addr = (uintptr_t)w->local, .length = w->length, .lkey = w->lkey};
    struct ibv_send_wr wr = {
        .wr_id = w->wr_id,
        .sg_list = &sge,
        .num_sge = w->length ? 1 : 0,
        .opcode = op[w->opcode],
        .send_flags = (w->flags & GAS_VB_SEND_SIGNALED ? IBV_SEND_SIGNALED : 0) |
                      (w->flags & GAS_VB_SEND_INLINE ? IBV_SEND_INLINE : 0) |
                      (w->flags & GAS_VB_SEND_FENCE ? IBV_SEND_FENCE : 0),
        .imm_data = htobe32(w->imm),
    }, *bad = NULL;
    if (w->opcode == GAS_VB_WR_ATOMIC_FETCH_ADD || w->opcode == GAS_VB_WR_ATOMIC_CMP_SWP) {
        sge.length = 8;
        wr.num_sge = 1;
        wr.wr.atomic.remote_addr = w->remote_addr;
        wr.wr.atomic.rkey = w->rkey;
        wr.wr.atomic.compare_add = w->compare_add;
        wr.wr.atomic.swap = w->swap;
    } else {
        wr.wr.rdma.remote_addr = w->remote_addr;
        wr.wr.rdma.rkey = w->rkey;
    }
    return ibv_post_send(qp->qp, &wr, &bad);
}

static int ibv_post_recv_(struct gas_vb_qp *qp, uint64_t wr_id, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = NULL, .num_sge = 0}, *bad = NULL;
        int rc = ibv_post_recv(qp->qp, &wr, &bad);
        if (rc)
            return rc;
    }
    return 0;
}

static enum gas_vb_wc_status wc_status(enum ibv_wc_status s)
{
    switch (s) {
    case IBV_WC_SUCCESS: return GAS_VB_WC_SUCCESS;
    case IBV_WC_LOC_PROT_ERR: return GAS_VB_WC_LOC_PROT_ERR;
    case IBV_WC_REM_ACCESS_ERR: return GAS_VB_WC_REM_ACCESS_ERR;
    case IBV_WC_RETRY_EXC_ERR: return GAS_VB_WC_RETRY_EXC_ERR;
    case IBV_WC_RNR_RETRY_EXC_ERR: return GAS_VB_WC_RNR_RETRY_EXC_ERR;
    case IBV_WC_WR_FLUSH_ERR: return GAS_VB_WC_FLUSH_ERR;
    default: return GAS_VB_WC_OTHER_ERR;
    }
}

static int ibv_poll_cq_(struct gas_vb_cq *cq, int n, gas_vb_wc_t *out)
{
    struct ibv_wc wc[32];
    if (n > 32)
        n = 32;
    int k = ibv_poll_cq(cq->cq, n, wc);
    for (int i = 0; i < k; i++)
        out[i] = (gas_vb_wc_t){
            .wr_id = wc[i].wr_id,
            .status = wc_status(wc[i].status),
            .opcode = wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM ? GAS_VB_WC_RECV_RDMA_WITH_IMM
                                                                : GAS_VB_WC_SEND_SIDE,
            .qp_num = wc[i].qp_num,
            .imm = be32toh(wc[i].imm_data),
            .byte_len = wc[i].byte_len,
        };
    return k;
}

static void ibv_destroy_qp_(struct gas_vb_qp *qp)
{
    ibv_destroy_qp(qp->qp);
    free(qp);
}

const gas_vb_ops_t gas_vb_ibv_ops = {
    .name = "ibverbs",
    .open = ibv_open,
    .close = ibv_close_,
    .alloc_pd = ibv_alloc_pd_,
    .dealloc_pd = ibv_dealloc_pd_,
    .reg_mr = ibv_reg_mr_,
    .dereg_mr = ibv_dereg_mr_,
    .create_cq = ibv_create_cq_,
    .destroy_cq = ibv_destroy_cq_,
    .cq_event_fd = ibv_cq_event_fd_,
    .req_notify_cq = ibv_req_notify_cq_,
    .get_cq_events = ibv_get_cq_events_,
    .create_qp = ibv_create_qp_,
    .modify_qp = ibv_modify_qp_,
    .qp_state = ibv_qp_state_,
    .post_send = ibv_post_send_,
    .post_recv = ibv_post_recv_,
    .poll_cq = ibv_poll_cq_,
    .destroy_qp = ibv_destroy_qp_,
};
#endif
