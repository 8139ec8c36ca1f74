/*
 * verbs.h - the seam between the rdma transport and a verbs provider.
 *
 * A small table of function pointers mirroring the libibverbs calls the rdma
 * transport makes, with its own plain types so that nothing above the seam
 * needs <infiniband/verbs.h>.  Two implementations:
 *   verbs_ibv.c  libibverbs (rdma-core), compiled when GAS_HAVE_IBVERBS
 *   verbs_sim.c  a software RC "NIC" between processes of one host
 *                (GAS_RDMA_DEVICE=sim), for tests and machines without hardware
 * Everything above it (connection state machine, striping, ordering, flow
 * control, errors and fallback) is the same code for both.
 *
 * Semantics follow the verbs: a QP goes RESET -> INIT -> RTR -> RTS through
 * modify_qp with the attributes named by the mask; any state may go to ERR.
 * Work requests on one QP execute in order; a failed one moves the QP to ERR
 * and every later one completes with GAS_VB_WC_FLUSH_ERR.  An unsignalled
 * request yields a completion only when it fails.
 *
 * Completion events (ibv_comp_channel): a CQ made with events has a file
 * descriptor that becomes readable once a completion is added after the CQ
 * was armed (req_notify_cq, one-shot like ibv_req_notify_cq); get_cq_events
 * consumes and acknowledges what fired.  The progress engine sleeps on that
 * descriptor, so completions are handled while the application computes.
 */
#ifndef GAS_RDMA_VERBS_H
#define GAS_RDMA_VERBS_H

#include <gas.h>
#include <stddef.h>
#include <stdint.h>

struct gas_vb_ctx;
struct gas_vb_pd;
struct gas_vb_mr;
struct gas_vb_cq;
struct gas_vb_qp;

enum gas_vb_qp_state {
    GAS_VB_QPS_RESET,
    GAS_VB_QPS_INIT,
    GAS_VB_QPS_RTR,
    GAS_VB_QPS_RTS,
    GAS_VB_QPS_ERR
};

/* Which attributes a modify_qp sets (one bit per field, as IBV_QP_*). */
enum gas_vb_qp_mask {
    GAS_VB_QP_STATE = 1 << 0,
    GAS_VB_QP_ACCESS_FLAGS = 1 << 1,
    GAS_VB_QP_PKEY_INDEX = 1 << 2,
    GAS_VB_QP_PORT = 1 << 3,
    GAS_VB_QP_AV = 1 << 4,
    GAS_VB_QP_PATH_MTU = 1 << 5,
    GAS_VB_QP_DEST_QPN = 1 << 6,
    GAS_VB_QP_RQ_PSN = 1 << 7,
    GAS_VB_QP_MAX_DEST_RD_ATOMIC = 1 << 8,
    GAS_VB_QP_MIN_RNR_TIMER = 1 << 9,
    GAS_VB_QP_TIMEOUT = 1 << 10,
    GAS_VB_QP_RETRY_CNT = 1 << 11,
    GAS_VB_QP_RNR_RETRY = 1 << 12,
    GAS_VB_QP_SQ_PSN = 1 << 13,
    GAS_VB_QP_MAX_QP_RD_ATOMIC = 1 << 14
};

enum gas_vb_access {
    GAS_VB_ACCESS_LOCAL_WRITE = 1,
    GAS_VB_ACCESS_REMOTE_WRITE = 2,
    GAS_VB_ACCESS_REMOTE_READ = 4,
    GAS_VB_ACCESS_REMOTE_ATOMIC = 8
};

/* Where a peer's port is: what the QP handshake carries besides QPNs. */
typedef struct gas_vb_port_addr {
    uint16_t lid;
    uint8_t gid[16];
} gas_vb_port_addr_t;

typedef struct gas_vb_qp_attr {
    enum gas_vb_qp_state qp_state;
    unsigned qp_access_flags;
    uint16_t pkey_index;
    uint8_t port_num;
    unsigned path_mtu;          /* bytes: 256 .. 4096 */
    uint32_t dest_qp_num, rq_psn, sq_psn;
    uint8_t max_dest_rd_atomic, max_rd_atomic, min_rnr_timer;
    uint8_t timeout, retry_cnt, rnr_retry;
    struct {
        gas_vb_port_addr_t dest;
        uint8_t is_global, sgid_index, hop_limit, sl;
    } ah;
} gas_vb_qp_attr_t;

typedef struct gas_vb_qp_caps {
    uint32_t max_send_wr, max_recv_wr, max_inline;
} gas_vb_qp_caps_t;

enum gas_vb_opcode {
    GAS_VB_WR_RDMA_WRITE,
    GAS_VB_WR_RDMA_WRITE_WITH_IMM,
    GAS_VB_WR_RDMA_READ,
    GAS_VB_WR_ATOMIC_FETCH_ADD,
    GAS_VB_WR_ATOMIC_CMP_SWP
};

enum gas_vb_send_flags { GAS_VB_SEND_SIGNALED = 1, GAS_VB_SEND_INLINE = 2, GAS_VB_SEND_FENCE = 4 };

typedef struct gas_vb_send_wr {
    uint64_t wr_id;
    enum gas_vb_opcode opcode;
    unsigned flags;
    void *local;                /* source (write), destination (read, atomic: 8 bytes) */
    uint32_t length;
    uint32_t lkey;
    uint64_t remote_addr;
    uint32_t rkey;
    uint32_t imm;               /* WRITE_WITH_IMM */
    uint64_t compare_add, swap; /* atomics */
} gas_vb_send_wr_t;

enum gas_vb_wc_status {
    GAS_VB_WC_SUCCESS = 0,
    GAS_VB_WC_LOC_PROT_ERR,
    GAS_VB_WC_REM_ACCESS_ERR,
    GAS_VB_WC_RETRY_EXC_ERR,
    GAS_VB_WC_RNR_RETRY_EXC_ERR,
    GAS_VB_WC_FLUSH_ERR,
    GAS_VB_WC_OTHER_ERR
};

enum gas_vb_wc_opcode { GAS_VB_WC_SEND_SIDE, GAS_VB_WC_RECV_RDMA_WITH_IMM };

typedef struct gas_vb_wc {
    uint64_t wr_id;
    enum gas_vb_wc_status status;
    enum gas_vb_wc_opcode opcode;
    uint32_t qp_num;
    uint32_t imm;
    uint32_t byte_len;
} gas_vb_wc_t;

/* What an opened device offers. */
typedef struct gas_vb_dev_info {
    char name[32];
    uint64_t fabric;            /* peers with the same value can talk RC */
    gas_vb_port_addr_t port;
    unsigned active_mtu;
    int atomics_coherent;       /* NIC atomics are atomic with CPU atomics (IBV_ATOMIC_GLOB) */
} gas_vb_dev_info_t;

typedef struct gas_vb_ops {
    const char *name;
    /* Open the named device (NULL/"" the first) and its port; fill *info. */
    gas_status_t (*open)(const char *dev, unsigned port, struct gas_vb_ctx **ctx_p,
                         gas_vb_dev_info_t *info);
    void (*close)(struct gas_vb_ctx *ctx);
    gas_status_t (*alloc_pd)(struct gas_vb_ctx *ctx, struct gas_vb_pd **pd_p);
    void (*dealloc_pd)(struct gas_vb_pd *pd);
    /* fd: a memfd behind [addr, addr + len) at offset 0, or -1 (needed by sim
     * for remote access: its "NIC" maps the memory from the peer's process). */
    gas_status_t (*reg_mr)(struct gas_vb_pd *pd, void *addr, size_t len, int fd, unsigned access,
                           struct gas_vb_mr **mr_p, uint32_t *lkey_p, uint32_t *rkey_p);
    void (*dereg_mr)(struct gas_vb_mr *mr);
    /* events: give the CQ a completion channel (see above). */
    gas_status_t (*create_cq)(struct gas_vb_ctx *ctx, int depth, int events,
                              struct gas_vb_cq **cq_p);
    void (*destroy_cq)(struct gas_vb_cq *cq);
    /* The channel's descriptor (readable when an event fired), or -1 without events. */
    int (*cq_event_fd)(struct gas_vb_cq *cq);
    /* Arm: the next completion added to the CQ fires one event.  0 or an errno value. */
    int (*req_notify_cq)(struct gas_vb_cq *cq);
    /* Consume the events that fired, without blocking: how many (0: none since the arm). */
    int (*get_cq_events)(struct gas_vb_cq *cq);
    gas_status_t (*create_qp)(struct gas_vb_pd *pd, struct gas_vb_cq *send_cq,
                              struct gas_vb_cq *recv_cq, const gas_vb_qp_caps_t *caps,
                              struct gas_vb_qp **qp_p, uint32_t *qpn_p);
    /* 0, or an errno-style value (EINVAL for an illegal transition or missing attribute). */
    int (*modify_qp)(struct gas_vb_qp *qp, const gas_vb_qp_attr_t *attr, unsigned mask);
    enum gas_vb_qp_state (*qp_state)(struct gas_vb_qp *qp);
    int (*post_send)(struct gas_vb_qp *qp, const gas_vb_send_wr_t *wr);
    /* Post n receives (WRITE_WITH_IMM consumes one each; no buffer needed). */
    int (*post_recv)(struct gas_vb_qp *qp, uint64_t wr_id, unsigned n);
    int (*poll_cq)(struct gas_vb_cq *cq, int n, gas_vb_wc_t *wc);
    void (*destroy_qp)(struct gas_vb_qp *qp);
} gas_vb_ops_t;

extern const gas_vb_ops_t gas_vb_sim_ops;
#if GAS_HAVE_IBVERBS
extern const gas_vb_ops_t gas_vb_ibv_ops;
#endif

const char *gas_vb_wc_status_str(enum gas_vb_wc_status s);

#endif
