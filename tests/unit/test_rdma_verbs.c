/*
 * test_rdma_verbs.c - unit tests of the rdma transport below the data path:
 * the sim back end's QP state machine (legal and illegal transitions, the
 * attributes each one needs, ERR flushing) driven through the transport's
 * own INIT/RTR/RTS functions, a loopback WRITE/READ/atomic with rkey and
 * bounds checks, the DQPLB immediate encoding and reassembly across the
 * sequence wrap-around, and the completion channel of a receive CQ (an
 * arrival fires the descriptor once per arm, and only when armed).
 */
#include "transport/rdma/rdma.h"
#include "runtime/config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int fails;
#define T(c) do { if (!(c)) { fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); fails++; } } while (0)

static void test_imm(void)
{
    T(gas_rdma_imm_seq(gas_rdma_imm_encode(5, 1)) == 5);
    T(gas_rdma_imm_notify(gas_rdma_imm_encode(5, 1)));
    T(!gas_rdma_imm_notify(gas_rdma_imm_encode(GAS_RDMA_SEQ_MASK, 0)));
    T(gas_rdma_imm_seq(gas_rdma_imm_encode(GAS_RDMA_SEQ_MASK + 3u, 0)) == 2);
    /* Reassembly across the wrap: 8 pieces from 2^31 - 4, arriving reversed. */
    gas_rdma_reasm_t r;
    uint32_t first = GAS_RDMA_SEQ_MASK - 3, seq = 0;
    int notify = 0;
    gas_rdma_reasm_init(&r, first);
    for (int i = 7; i >= 1; i--) {
        T(gas_rdma_reasm_arrive(&r, gas_rdma_imm_encode(first + (uint32_t)i, i == 7)) == 0);
        T(!gas_rdma_reasm_pop(&r, &seq, &notify)); /* piece 0 still missing */
    }
    T(gas_rdma_reasm_arrive(&r, gas_rdma_imm_encode(first + 3, 0)) == -1); /* twice */
    T(gas_rdma_reasm_arrive(&r, gas_rdma_imm_encode(first + GAS_RDMA_REASM_WIN, 0)) == -1);
    T(gas_rdma_reasm_arrive(&r, gas_rdma_imm_encode(first, 0)) == 0);
    for (uint32_t i = 0; i < 8; i++) {
        T(gas_rdma_reasm_pop(&r, &seq, &notify));
        T(seq == ((first + i) & GAS_RDMA_SEQ_MASK));
        T(notify == (i == 7));
    }
    T(r.next == 4);
    T(!gas_rdma_reasm_pop(&r, &seq, &notify));
}

static void test_sim_qp(void)
{
    const gas_vb_ops_t *vb = &gas_vb_sim_ops;
    struct gas_rdma_state *g = &gas_rdma_g;
    g->vb = vb;
    g->cfg = (struct gas_rdma_cfg){.port = 1, .path_mtu = 4096, .rd_atomic = 4, .timeout = 14,
                                   .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
                                   .hop_limit = 64};
    struct gas_vb_ctx *ctx;
    struct gas_vb_pd *pd;
    struct gas_vb_cq *cq;
    gas_vb_dev_info_t info;
    T(vb->open("sim", 1, &ctx, &info) == GAS_OK);
    T(vb->alloc_pd(ctx, &pd) == GAS_OK);
    T(vb->create_cq(ctx, 64, 0, &cq) == GAS_OK);
    int fd = memfd_create("t", 0);
    T(ftruncate(fd, 65536) == 0);
    char *mem = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    struct gas_vb_mr *mr;
    uint32_t lkey, rkey;
    T(vb->reg_mr(pd, mem, 4096, fd, GAS_VB_ACCESS_REMOTE_WRITE | GAS_VB_ACCESS_REMOTE_READ |
                                    GAS_VB_ACCESS_REMOTE_ATOMIC, &mr, &lkey, &rkey) == GAS_OK);
    gas_vb_qp_caps_t caps = {.max_send_wr = 16, .max_recv_wr = 16, .max_inline = 64};
    struct gas_vb_qp *a, *b;
    uint32_t qa, qb;
    T(vb->create_qp(pd, cq, cq, &caps, &a, &qa) == GAS_OK);
    T(vb->create_qp(pd, cq, cq, &caps, &b, &qb) == GAS_OK);
    /* Illegal: RESET -> RTR / RTS, and INIT without its attributes. */
    T(gas_rdma_qp_rtr(a, qb, 0, &info.port) != 0);
    T(gas_rdma_qp_rts(a, 0) != 0);
    gas_vb_qp_attr_t bare = {.qp_state = GAS_VB_QPS_INIT};
    T(vb->modify_qp(a, &bare, GAS_VB_QP_STATE) != 0);
    T(vb->qp_state(a) == GAS_VB_QPS_RESET);
    /* Legal: INIT, RTR, RTS for both ends of a loopback pair. */
    T(gas_rdma_qp_init(a) == 0 && gas_rdma_qp_init(b) == 0);
    T(gas_rdma_qp_rts(a, 0) != 0); /* INIT -> RTS skips RTR */
    T(gas_rdma_qp_rtr(a, qb, 0, &info.port) == 0 && gas_rdma_qp_rtr(b, qa, 0, &info.port) == 0);
    T(gas_rdma_qp_rts(a, 0) == 0 && gas_rdma_qp_rts(b, 0) == 0);
    T(vb->qp_state(a) == GAS_VB_QPS_RTS);
    /* One-sided operations, checked against rkey and bounds. */
    char src[16] = "hello, rdma!", dst[16] = {0};
    uint64_t old = 0;
    gas_vb_wc_t wc[8];
    gas_vb_send_wr_t w = {.wr_id = 1, .opcode = GAS_VB_WR_RDMA_WRITE, .flags = GAS_VB_SEND_SIGNALED,
                          .local = src, .length = 13, .remote_addr = (uintptr_t)mem + 100, .rkey = rkey};
    T(vb->post_send(a, &w) == 0);
    T(vb->poll_cq(cq, 8, wc) == 1 && wc[0].status == GAS_VB_WC_SUCCESS && wc[0].wr_id == 1);
    T(strcmp(mem + 100, "hello, rdma!") == 0);
    w = (gas_vb_send_wr_t){.wr_id = 2, .opcode = GAS_VB_WR_RDMA_READ, .flags = GAS_VB_SEND_SIGNALED,
                           .local = dst, .length = 13, .remote_addr = (uintptr_t)mem + 100, .rkey = rkey};
    T(vb->post_send(a, &w) == 0 && vb->poll_cq(cq, 8, wc) == 1 && strcmp(dst, src) == 0);
    w = (gas_vb_send_wr_t){.wr_id = 3, .opcode = GAS_VB_WR_ATOMIC_FETCH_ADD, .flags = GAS_VB_SEND_SIGNALED,
                           .local = &old, .length = 8, .remote_addr = (uintptr_t)mem + 8, .rkey = rkey,
                           .compare_add = 5};
    T(vb->post_send(a, &w) == 0 && vb->poll_cq(cq, 8, wc) == 1 && old == 0);
    T(*(uint64_t *)(void *)(mem + 8) == 5);
    /* Unsignalled success: no completion. */
    w = (gas_vb_send_wr_t){.wr_id = 4, .opcode = GAS_VB_WR_RDMA_WRITE, .local = src, .length = 4,
                           .remote_addr = (uintptr_t)mem, .rkey = rkey};
    T(vb->post_send(a, &w) == 0 && vb->poll_cq(cq, 8, wc) == 0);
    /* Out of bounds: remote access error (even unsignalled), QP to ERR, later ones flushed. */
    w.wr_id = 5;
    w.remote_addr = (uintptr_t)mem + 4094;
    T(vb->post_send(a, &w) == 0);
    T(vb->poll_cq(cq, 8, wc) == 1 && wc[0].status == GAS_VB_WC_REM_ACCESS_ERR && wc[0].wr_id == 5);
    T(vb->qp_state(a) == GAS_VB_QPS_ERR);
    w.wr_id = 6;
    w.remote_addr = (uintptr_t)mem;
    T(vb->post_send(a, &w) == 0);
    T(vb->poll_cq(cq, 8, wc) == 1 && wc[0].status == GAS_VB_WC_FLUSH_ERR && wc[0].wr_id == 6);
    /* The peer QP is in ERR: nobody answers, retry exceeded. */
    w = (gas_vb_send_wr_t){.wr_id = 7, .opcode = GAS_VB_WR_RDMA_WRITE, .flags = GAS_VB_SEND_SIGNALED,
                           .local = src, .length = 4, .remote_addr = (uintptr_t)mem, .rkey = rkey ^ 0x10000};
    T(vb->post_send(b, &w) == 0 && vb->poll_cq(cq, 8, wc) == 1 &&
      wc[0].status == GAS_VB_WC_RETRY_EXC_ERR);
    /* ERR -> RESET -> INIT is allowed again. */
    gas_vb_qp_attr_t rst = {.qp_state = GAS_VB_QPS_RESET};
    T(vb->modify_qp(a, &rst, GAS_VB_QP_STATE) == 0 && gas_rdma_qp_init(a) == 0);
    vb->destroy_qp(a);
    vb->destroy_qp(b);
    vb->dereg_mr(mr);
    vb->destroy_cq(cq);
    vb->dealloc_pd(pd);
    vb->close(ctx);
}

static int readable(int fd)
{
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    return poll(&pf, 1, 0) == 1;
}

static void test_sim_events(void)
{
    const gas_vb_ops_t *vb = &gas_vb_sim_ops;
    struct gas_vb_ctx *ctx;
    struct gas_vb_pd *pd;
    struct gas_vb_cq *scq, *rcq;
    gas_vb_dev_info_t info;
    T(vb->open("sim", 1, &ctx, &info) == GAS_OK);
    T(vb->alloc_pd(ctx, &pd) == GAS_OK);
    T(vb->create_cq(ctx, 64, 0, &scq) == GAS_OK && vb->create_cq(ctx, 64, 1, &rcq) == GAS_OK);
    T(vb->cq_event_fd(scq) == -1);
    int fd = vb->cq_event_fd(rcq), mfd = memfd_create("t", 0);
    T(fd >= 0 && ftruncate(mfd, 4096) == 0);
    char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
    struct gas_vb_mr *mr;
    uint32_t lkey, rkey;
    T(vb->reg_mr(pd, mem, 4096, mfd, GAS_VB_ACCESS_REMOTE_WRITE, &mr, &lkey, &rkey) == GAS_OK);
    gas_vb_qp_caps_t caps = {.max_send_wr = 16, .max_recv_wr = 16, .max_inline = 64};
    struct gas_vb_qp *a, *b;
    uint32_t qa, qb;
    T(vb->create_qp(pd, scq, scq, &caps, &a, &qa) == GAS_OK);
    T(vb->create_qp(pd, scq, rcq, &caps, &b, &qb) == GAS_OK);
    T(gas_rdma_qp_init(a) == 0 && gas_rdma_qp_init(b) == 0);
    T(gas_rdma_qp_rtr(a, qb, 0, &info.port) == 0 && gas_rdma_qp_rtr(b, qa, 0, &info.port) == 0);
    T(gas_rdma_qp_rts(a, 0) == 0 && gas_rdma_qp_rts(b, 0) == 0);
    T(vb->post_recv(b, 77, 8) == 0);
    char src[8] = "abcdefg";
    gas_vb_send_wr_t w = {.wr_id = 1, .opcode = GAS_VB_WR_RDMA_WRITE_WITH_IMM, .local = src,
                          .length = 8, .remote_addr = (uintptr_t)mem, .rkey = rkey, .imm = 42};
    gas_vb_wc_t wc[4];
    /* Not armed: an arrival fires nothing. */
    T(vb->post_send(a, &w) == 0);
    T(!readable(fd) && vb->get_cq_events(rcq) == 0);
    T(vb->poll_cq(rcq, 4, wc) == 1 && wc[0].imm == 42 && wc[0].wr_id == 77);
    /* Armed: the next arrival fires once; the one after it does not. */
    T(vb->req_notify_cq(rcq) == 0 && !readable(fd));
    w.imm = 43;
    T(vb->post_send(a, &w) == 0 && readable(fd));
    w.imm = 44;
    T(vb->post_send(a, &w) == 0);
    T(vb->get_cq_events(rcq) == 1 && !readable(fd));
    T(vb->poll_cq(rcq, 4, wc) == 2 && wc[0].imm == 43 && wc[1].imm == 44);
    T(vb->get_cq_events(rcq) == 0);
    vb->destroy_qp(a);
    vb->destroy_qp(b);
    vb->dereg_mr(mr);
    vb->destroy_cq(scq);
    vb->destroy_cq(rcq);
    vb->dealloc_pd(pd);
    vb->close(ctx);
}

int main(void)
{
    gas_rt_config_load();
    test_imm();
    test_sim_qp();
    test_sim_events();
    printf(fails ? "%d failures\n" : "rdma verbs unit tests passed\n", fails);
    return fails != 0;
}
