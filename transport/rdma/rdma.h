/*
 * rdma.h - state shared by the files of the rdma transport (not included
 * from outside transport/rdma/, except by its tests).
 *
 *   verbs.h       the seam; verbs_ibv.c (libibverbs), verbs_sim.c (software)
 *   imm.h         DQPLB immediate data and reassembly
 *   init.c        device, registrations, configuration, address, counters, ops table
 *   conn.c        QP bring-up (INIT, RTR, RTS), the handshake and the cut over udp
 *   post.c        posting work requests, send completions, failures, drains
 *   recv.c        receive completions (DQPLB signals), served by the progress thread
 *   route.c       the path of each peer (udp or RC), switching it, redo, quiet
 *   data.c        put/get/atomics/signalled puts
 *
 * Every peer starts on udp: its route is an rdma peer that forwards to the
 * udp route until the peer is upgraded to RC (on the first operation, or
 * after GAS_RDMA_UPGRADE_AFTER), and again after an RC failure (fallback).
 *
 * Locking: an operation holds its peer's route_lock shared while it issues
 * on the peer's current path; switching the path (udp <-> RC) holds it
 * exclusive (route.c).  A thread never enters a route while it holds one:
 * waits under a route drive only the transports' progress, not the
 * collective schedules, which issue operations (gas_rt_progress_hold).  A peer's lock guards its QPs' posting state, its
 * connection state, its redo list and its DQPLB state; it is never held
 * while calling into udp (udp's control handler runs with udp's channel
 * lock held and takes the peer lock).  dqplb_lock serialises the signalled
 * puts of one peer.  One thread at a time polls the CQs (poll_lock);
 * completion processing takes the peer lock.  Lock order: route_lock,
 * dqplb_lock, udp channel, poll_lock, peer lock.
 */
#ifndef GAS_RDMA_H
#define GAS_RDMA_H

#include "transport/rdma/imm.h"
#include "transport/rdma/verbs.h"
#include "transport/transport.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define GAS_RDMA_ADDR_LEN 16      /* kind u8, pad 7, fabric u64 */
#define GAS_RDMA_MAX_QPS 16
#define GAS_RDMA_MBOX_SLOTS 256   /* signal descriptors in flight per initiator (protocol constant) */
#define GAS_RDMA_MBOX_SLOT_LEN 32

enum gas_rdma_conn {
    RC_IDLE,        /* on udp, not asked yet */
    RC_REQ_SENT,    /* on udp, handshake under way */
    RC_READY,       /* on RC */
    RC_FALLBACK,    /* RC failed: back on udp for good */
    RC_FAILED,      /* RC failed and fallback is off: operations fail */
    RC_NONE         /* the peer refused (no resources): udp for good */
};

enum gas_rdma_path { PATH_UDP, PATH_RC };

/* Internal status: the peer left RC under an operation; route it again. */
#define GAS_RDMA_REROUTE ((gas_status_t)2)

/* What an RC failure of a work request leaves to redo over udp (route.c). */
enum gas_rdma_redo_kind {
    REDO_NONE,      /* nothing: its operation fails (atomics: they may have run) */
    REDO_PUT,       /* its bytes (kept in the staging slot) at roff */
    REDO_GET,       /* read roff into dst again */
    REDO_SIG        /* a DQPLB descriptor: the signal log redoes it */
};

struct gas_rdma_cfg {
    unsigned qps[2], qp_max[2];     /* [near, far] */
    uint64_t stripe[2];
    unsigned peer_max, inline_max, signal_every, recv_depth;
    uint64_t upgrade_after;
    int dqplb, nic_atomics, fallback, poll_mode;
    unsigned timeout, retry_cnt, rnr_retry, min_rnr_timer, path_mtu, rd_atomic, sl, hop_limit;
    unsigned port, gid_index;
};

/* What one posted work request still has to do when it completes. */
struct gas_rdma_wr {
    struct gas_rdma_op *op;   /* NULL: nobody waits for it (quiet does) */
    void *dst;                /* read/atomic: copy the staged result here */
    uint64_t roff;            /* segment offset at the peer (redo) */
    uint32_t len;
    uint8_t opcode;           /* enum gas_vb_opcode */
    uint8_t redo;             /* enum gas_rdma_redo_kind */
};

/* A request that failed on RC, redone over udp when the peer switches (route.c). */
struct gas_rdma_redo {
    struct gas_rdma_redo *next;
    struct gas_rdma_op *op;   /* the reference its work request held */
    void *dst;                /* get */
    uint64_t off;
    uint32_t len;
    uint8_t kind;             /* REDO_PUT or REDO_GET */
    unsigned char data[];     /* put */
};

/* A DQPLB signalled put's signal, kept until the target applied it. */
struct gas_rdma_sig {
    uint64_t off, value;
    uint32_t seq;             /* of its notify piece */
    uint8_t op, valid;
};

/* An operation that waits for completions (a comp or a destination). */
struct gas_rdma_op {
    gas_tl_comp_t *comp;
    uint32_t remaining;       /* work requests not completed */
    int status;
    int done;                 /* for synchronous waits without comp */
    int orphan;               /* its caller gave up on it (forget): freed when it ends */
};

struct gas_rdma_qp {
    struct gas_vb_qp *qp;
    uint32_t qpn, psn;
    uint32_t posted, done;    /* work requests posted / known complete (wrap) */
    uint32_t since_signal;    /* unsignalled requests since the last signalled one */
    int marker;               /* a completion marker is posted (data.c) */
    struct gas_rdma_wr *wrs;  /* by index % qp_max */
    char *stage;              /* qp_max slots of stripe bytes, registered */
};

typedef struct gas_rdma_peer {
    gas_tl_peer_t base;             /* ops = gas_rdma_ops; first */
    gas_tl_peer_t *udp;             /* the udp route (carries it until upgraded) */
    pthread_rwlock_t route_lock;    /* shared: issuing on `path`; exclusive: switching it */
    pthread_mutex_t dqplb_lock;
    pthread_mutex_t lock;
    int rank, near;
    _Atomic int state;              /* enum gas_rdma_conn */
    int qps_up;                     /* our QPs are connected to the peer's */
    _Atomic int path;               /* enum gas_rdma_path operations are issued on */
    _Atomic uint64_t nops;          /* operations issued (the hot threshold) */
    unsigned nqp, qp_max, next_qp;
    uint64_t stripe;
    struct gas_rdma_qp qp[GAS_RDMA_MAX_QPS];
    struct gas_vb_mr *stage_mr;
    uint32_t stage_lkey;
    char *stage;
    _Atomic uint32_t outstanding;   /* over all QPs */
    int plain_writes;               /* writes posted since nothing was outstanding (atomic) */
    /* the peer's side */
    uint64_t seg_base, seg_size, mbox_base;
    uint32_t seg_rkey, mbox_rkey;
    /* DQPLB: as initiator, the next sequence number, the peer's consumed point
     * (last read) and the signals not known applied, by notify seq % slots */
    uint32_t tx_seq, tx_consumed;
    struct gas_rdma_sig sig_log[GAS_RDMA_MBOX_SLOTS];
    /* as target: reassembly of this peer's pieces; cut: the peer left RC */
    gas_rdma_reasm_t rx;
    int rx_cut;
    /* after a failure: requests to redo over udp, and the cut's answer */
    struct gas_rdma_redo *redo, **redo_tail;
    _Atomic int redoing;            /* redo_requests is issuing an entry it took (forget waits) */
    _Atomic int cut_done;
    uint32_t cut_next;
    /* failure raised by the next quiet */
    int err_status;
    char err_msg[200];
    /* counters */
    uint64_t n_wr, n_bytes, n_err, n_upgrades, n_signals, n_redone;
} gas_rdma_peer_t;

struct gas_rdma_state {
    int ready;
    struct gas_rdma_cfg cfg;
    gas_tl_env_t env;
    const gas_vb_ops_t *vb;
    struct gas_vb_ctx *ctx;
    struct gas_vb_pd *pd;
    gas_vb_dev_info_t dev;
    struct gas_vb_mr *seg_mr, *mbox_mr;
    uint32_t seg_lkey, seg_rkey, mbox_rkey;
    char *mbox;                     /* consumed u64[nranks], then slots[nranks][SLOTS] */
    uint64_t mbox_len;
    int mbox_fd;
    struct gas_vb_cq *scq, *rcq;
    int rcq_armed;                  /* the receive CQ is armed (poll_lock) */
    pthread_mutex_t poll_lock, peers_lock;
    _Atomic(gas_rdma_peer_t *) *peers;
    _Atomic uint32_t upgraded;
    _Atomic int switch_due;         /* a peer fell back: progress may switch it */
    int finalizing;                 /* failures now are peers leaving: no fallback */
    _Atomic int program_ops;        /* gas_init's own traffic is over: operations count for upgrades */
    uint64_t n_wr, n_bytes, n_err, n_signals, n_redone; /* totals (atomic adds) */
};

extern struct gas_rdma_state gas_rdma_g;
extern const struct gas_tl_ops gas_rdma_ops;

static inline char *gas_rdma_mbox_slot(char *mbox, int nranks, int src, uint32_t seq)
{
    return mbox + (uint64_t)nranks * 8 +
           ((uint64_t)src * GAS_RDMA_MBOX_SLOTS + seq % GAS_RDMA_MBOX_SLOTS) * GAS_RDMA_MBOX_SLOT_LEN;
}

/* The ops table's forget (post.c): the operations of comp write nothing more of the caller's. */
void gas_rdma_forget(gas_tl_comp_t *comp);

/* ---- conn.c ---- */
/* The peer state for rank, made on first need. */
gas_rdma_peer_t *gas_rdma_peer_get(int rank);
void gas_rdma_peer_free(gas_rdma_peer_t *p);
/* Start the handshake if the peer is due for an upgrade (call without locks). */
void gas_rdma_maybe_upgrade(gas_rdma_peer_t *p);
/* udp's control-message handler (the handshake and the cut). */
size_t gas_rdma_ctrl_in(int rank, const void *msg, size_t len, void *reply, size_t cap);
/* Ask the peer to cut our DQPLB stream (route.c); its answer sets cut_done. */
gas_status_t gas_rdma_send_cut(gas_rdma_peer_t *p);
/* Bring-up steps, exposed for the unit test. */
int gas_rdma_qp_init(struct gas_vb_qp *qp);
int gas_rdma_qp_rtr(struct gas_vb_qp *qp, uint32_t dest_qpn, uint32_t rq_psn,
                    const gas_vb_port_addr_t *dest);
int gas_rdma_qp_rts(struct gas_vb_qp *qp, uint32_t sq_psn);

/* ---- post.c ---- */
/* One work request to post (data.c, route.c). */
struct gas_rdma_req {
    enum gas_vb_opcode opcode;
    uint64_t raddr;     /* absolute remote address */
    uint32_t rkey;
    const void *src;
    void *dst;
    uint32_t len, imm;
    uint64_t cmp_add, swap;
    struct gas_rdma_op *op;
    int signal;
    uint8_t redo;       /* enum gas_rdma_redo_kind */
    uint64_t roff;      /* for redo */
};
struct gas_rdma_op *gas_rdma_op_new(gas_tl_comp_t *comp);
/* Drop a reference (peer locked). */
void gas_rdma_op_release(gas_rdma_peer_t *p, struct gas_rdma_op *op, int status);
/* Wait for a synchronous operation (call unlocked); frees it; its status (not raised). */
gas_status_t gas_rdma_op_wait(gas_rdma_peer_t *p, struct gas_rdma_op *op, const char *call);
/*
 * Post on the peer's next QP (peer locked; may unlock while it waits for
 * room, unless nowait: then GAS_ERR_AGAIN).  GAS_RDMA_REROUTE when the peer
 * is not on RC (any more) and falls back to udp.
 */
gas_status_t gas_rdma_post(gas_rdma_peer_t *p, const struct gas_rdma_req *r, const char *call,
                           int nowait);
/* The peer's RC path failed (peer locked): report once, fall back or fail. */
void gas_rdma_peer_fail(gas_rdma_peer_t *p, const char *what, uint32_t qpn, enum gas_vb_wc_status s);
gas_status_t gas_rdma_down_error(gas_rdma_peer_t *p, const char *call);
/* Wait until what was posted to the peer so far completed (call unlocked). */
gas_status_t gas_rdma_drain_posted(gas_rdma_peer_t *p, const char *call);
/* Wait until nothing is outstanding (route.c, with the route held exclusive). */
gas_status_t gas_rdma_drain_all(gas_rdma_peer_t *p, const char *call);
/* Poll the send CQ: completions handled. */
int gas_rdma_poll_send(void);
/* Poll cq until it is empty, handing each completion to fn: how many. */
int gas_rdma_drain_cq(struct gas_vb_cq *cq, void (*fn)(const gas_vb_wc_t *wc));

/* ---- recv.c ---- */
/* Poll the receive CQ (poll_lock held): completions handled. */
int gas_rdma_poll_recv(void);
/* The progress thread's event source: serve the receive CQ and re-arm it
 * (polled: an application thread polls it just now; see recv.c). */
int gas_rdma_recv_events(int polled);
/* The peer cut its DQPLB stream to us: stop taking it; how far it was applied. */
uint32_t gas_rdma_recv_cut(gas_rdma_peer_t *p);

/* ---- route.c ---- */
/* Enter the peer's route (want_rc: RC is wanted if up); *rc_p: on RC.  On
 * GAS_OK the route is held until gas_rdma_route_leave. */
gas_status_t gas_rdma_route_enter(gas_rdma_peer_t *p, const char *call, int want_rc, int *rc_p);
void gas_rdma_route_leave(gas_rdma_peer_t *p);
/* Switch the peers that fell back, from a progress call (not inside a route). */
void gas_rdma_switch_due(void);
/* Complete what was issued; at finalize (fin) without waiting for the targets' progress.
 * rep: as the quiet slot's (transport.h), may be NULL. */
gas_status_t gas_rdma_quiet_all(int fin, const char *call, gas_tl_report_t *rep);

/* ---- data.c ---- */
gas_status_t gas_rdma_put(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                          gas_tl_comp_t *comp, const char *call);
gas_status_t gas_rdma_get(gas_tl_peer_t *peer, void *dst, uint64_t off, size_t n,
                          gas_tl_comp_t *comp, const char *call);
gas_status_t gas_rdma_amo(gas_tl_peer_t *peer, const gas_tl_amo_t *a, gas_tl_comp_t *comp,
                          const char *call);
gas_status_t gas_rdma_put_signal(gas_tl_peer_t *peer, uint64_t off, const void *src, size_t n,
                                 uint64_t sig_off, uint64_t value, gas_signal_op_t op,
                                 gas_tl_comp_t *comp, const char *call);
gas_status_t gas_rdma_fence(void);
gas_status_t gas_rdma_quiet(const char *call, gas_tl_report_t *rep);
int gas_rdma_progress(void);

#endif
