/*
 * udp.h - state shared by the files of the udp transport (not included from
 * outside transport/udp/, except by its tests).
 *
 *   wire.[ch]    datagram format: header, records, checksum, checks
 *   seq.h        serial-number arithmetic on the 32-bit sequence numbers
 *   rxwin.[ch]   receive window: cumulative + selective acknowledgement state
 *   rtt.[ch]     RFC 6298 retransmission timeout
 *   bounds.h     the target's overflow-free range check
 *   sock.c       socket, address choice, batched send/receive, fault injection
 *   chan.c       per-peer channel: making it, filling and sealing datagrams,
 *                operations awaiting answers, declaring a peer dead
 *   rate.[ch]    delivery-rate estimate from acknowledgements, and the pacer
 *   send.c       send side: windows, pacing, transmission, standalone acks, timers
 *   recovery.c   acknowledgements in, loss detection and response, timeouts, probes
 *   rx.c         receive side: checks, in-order delivery, applying records
 *   ops.c        the ops table: routes, put/get/atomics, quiet, counters
 *   init.c       set-up and tear-down: configuration, sockets, threads, goodbyes
 *   progress.c   the progress thread, the socket lease and the sleeper
 *   ctrl.c       control messages of other transports (ctrl.h: rdma's handshake)
 *
 * Locking: each channel has a mutex that guards all its state (both
 * directions, its operations and its counters).  One thread at a time
 * receives (rx_lock; the progress thread blocks on it, application threads
 * only try it).  Fields read without the channel lock are atomics: `dead`,
 * `cacked` (quiet's condition) and `queued` (a put's room condition).
 * Lock order: rx_lock, then chans_lock or one channel lock (never two
 * channel locks at once), then the fault queue's lock.
 */
#ifndef GAS_UDP_H
#define GAS_UDP_H

#include "runtime/wait.h"
#include "transport/transport.h"
#include "transport/udp/rate.h"
#include "transport/udp/rtt.h"
#include "transport/udp/rxwin.h"
#include "transport/udp/seq.h"
#include "transport/udp/wire.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define GAS_UDP_ADDR_LEN 28        /* ipv4 4, port u16, largest dgram u16, segment size u64, node u64,
                                      largest dgram from this host u16, reserved u16 */
#define GAS_UDP_BATCH 64           /* datagrams per sendmmsg/recvmmsg */
#define GAS_UDP_GET_MAX (64u << 10) /* bytes one GET record may ask for */
#define GAS_UDP_ACK_EVERY 16       /* acknowledge at once after this many datagrams */
#define GAS_UDP_DUPTHRESH 3        /* later datagrams acknowledged before one counts as lost */
#define GAS_UDP_LOCAL_FLIGHT 32    /* datagrams a same-host channel may have in flight, at least */
#define GAS_UDP_MAX_OPS 65535      /* operations awaiting replies, per peer */
#define GAS_UDP_NEVER UINT64_MAX
#define GAS_UDP_LEASE_SHORT 200000u    /* automatic lease where threads have CPUs */
#define GAS_UDP_LEASE_CROWDED 2000000u /* ... and where they do not (or get preempted) */

struct gas_udp_cfg {
    uint32_t dgram_max;      /* largest datagram to a rank on another host (UDP payload) */
    uint32_t dgram_local;    /* ... to a rank on this host and network namespace (loopback) */
    uint32_t dgram_accept;   /* largest datagram accepted: the larger of the two */
    uint32_t lo_mtu;         /* the loopback route's MTU as found (below GAS_UDP_MIN_MTU:
                                ranks on this host cannot be reached over udp) */
    uint32_t window;         /* datagrams in flight per peer */
    uint64_t inflight_near, inflight_far, inflight_total, send_queue;
    uint64_t rto_min, rto_max, rto_init, ack_delay, peer_timeout;
    int pace;                /* pace at the estimated delivery rate */
    uint64_t pace_burst;     /* bytes that may leave back to back */
    uint32_t pace_headroom_ppm; /* pacing above (and below) the estimate while probing */
    uint32_t loss_tolerance_ppm; /* loss rates below it shrink the window by 15%, not half */
    int poll_mode;
    int gso;                     /* GAS_UDP_GSO: send runs of datagrams as one GSO message */
    uint64_t sleep_slice;        /* longest sleep in the socket (GAS_WAIT_SLICE, else 1 ms) */
    uint64_t lease;              /* GAS_UDP_LEASE, or its automatic value at start */
    int lease_auto;              /* GAS_UDP_LEASE=0: it may grow (lease_watch in progress.c) */
    uint32_t drop_ppm, dup_ppm, reorder_ppm, corrupt_ppm;
    uint64_t fault_delay;
};

struct gas_udp_counters {
    uint64_t dg_tx, dg_rx, b_tx, b_rx, retx, dup, ack_tx, ack_rx, bad, rejected;
    uint64_t spurious;     /* timeouts shown needless by the receiver (not exported) */
};

enum gas_udp_slot_state { SLOT_QUEUED, SLOT_FLIGHT, SLOT_LOST, SLOT_SACKED };

/* One sealed datagram of a send stream, kept until acknowledged. */
struct gas_udp_slot {
    unsigned char *buf;
    uint32_t len;
    uint32_t cack;         /* the reverse stream's delivery point when sealed */
    uint8_t state, ntx;
    uint8_t ask;           /* carries a request (not only replies): its burst asks for an ack */
    uint8_t req_ack;       /* its first transmission asked for an immediate ack (ACKREQ) */
    uint64_t first_ns, last_ns, txorder;
    struct gas_udp_rate_snap snap; /* delivery-rate state at its last transmission */
};

enum gas_udp_op_kind { OP_FREE, OP_PUT, OP_GET, OP_AMO };

/* An operation of this rank that waits for a reply from the peer. */
struct gas_udp_op {
    gas_tl_comp_t *comp;   /* may be NULL (then quiet completes it) */
    void *dst;             /* get: destination; fetching atomic: uint64_t result */
    uint64_t len, done;    /* get: bytes asked, bytes answered (or refused) */
    int32_t status;
    uint16_t gen;
    uint8_t kind;
};

struct gas_udp_chan {
    gas_tl_peer_t base;          /* first: the route's peer state */
    pthread_mutex_t lock;
    int rank;
    struct sockaddr_in addr;
    int have_addr, near, paced;
    int local;                   /* on this host and network namespace: only loopback between */
    atomic_int dead;

    /* send stream */
    uint32_t next_seq;           /* number of the next datagram sealed */
    uint32_t una;                /* oldest not acknowledged */
    uint32_t snd_nxt;            /* oldest never sent */
    struct gas_udp_slot *ring;   /* [una, next_seq) at seq & (ring_cap - 1) */
    uint32_t ring_cap;
    unsigned char *open;         /* datagram being filled (records from GAS_UDP_HDR_LEN) */
    uint32_t open_len;
    uint32_t dgram_max;          /* largest datagram to this peer: ours, or its own if smaller */
    uint32_t buf_size;           /* bytes of each datagram buffer, fixed by the first (0: none yet) */
    uint8_t open_ask;            /* the open datagram holds a request */
    uint8_t tail_ask;            /* the last datagram sent asked for an immediate ack */
    struct gas_udp_cont tx_cont; /* what a CONT appended now would continue */
    unsigned char **pool;        /* spare datagram buffers */
    uint32_t npool;
    uint64_t inflight;           /* bytes of FLIGHT slots */
    _Atomic uint64_t queued;     /* bytes sealed or open but never sent */
    uint64_t cwnd, ssthresh, cwnd_max, cwnd_min;
    uint32_t recover, lost;
    int in_recovery, rec_timeout;
    uint64_t txorder, sacked_txorder;
    struct gas_udp_rtt rtt;
    uint64_t rto_at;             /* retransmission timer: no ack progress by then (0: idle) */
    uint64_t backoff_ns;         /* last timeout: older datagrams give no RTT samples */
    uint64_t sample_ns;          /* last RTT sample (0: none yet) */
    uint64_t sample_ask_ns;      /* last burst of answers alone that asked for one */
    uint32_t ack_len_last;       /* the largest datagram the last acknowledgement with
                                  * progress covered (gas_udp_mtu_hint) */
    uint32_t spur_lo, spur_hi;   /* what the last timeout resent, until proven needed or not */
    int spur_check;
    int frto;                    /* a timeout resent the oldest datagram: was it lost? (F-RTO) */
    int rto_probe;               /* a probe goes out whatever the windows say (timeout, tail) */
    uint64_t tlp_at;             /* tail-loss probe due (0: none) */
    int tlp_out;                 /* a tail-loss probe is out, no progress since */
    int32_t loss_avg;            /* moving average of lost datagrams, of 65536 */
    uint32_t ep_flight, ep_lost; /* this loss episode: datagrams out at its start, lost */
    int ep_cut;                  /* the rate estimate was cut in this episode */
    struct gas_udp_rate rate;    /* delivery-rate estimate and pacing */
    uint64_t pace_at;            /* paced: the next datagram may leave then (0: none waits) */
    uint64_t spur_cwnd, spur_ssthresh; /* the window before that timeout, to restore */
    uint64_t last_progress_ns, retry_ns;
    uint64_t alive_probe_ns;     /* last liveness probe (gas_udp_probe) */
    uint64_t knock_ns;           /* last knock (gas_udp_knock_some) */
    uint64_t last_rx_ns;         /* the peer's last datagram */
    uint64_t refused_ns;         /* first ICMP port unreachable of this episode (0: none; rx.c) */
    uint64_t refused_last_ns, refused_gap_ns; /* the episode's last refusal, the gap before it */
    uint64_t probe_ns;           /* last completion probe; its interval backs off */
    unsigned probe_backoff;
    _Atomic uint32_t cacked;     /* our numbers before it are applied, replies delivered */
    uint32_t stash_seq, stash_cack;
    int stash;

    /* receive stream */
    struct gas_udp_rxwin rx;
    struct gas_udp_cont rx_cont; /* what the peer's next CONT continues */
    struct {                     /* the peer's last put refused whole: its later */
        uint32_t op;             /* pieces (pos > 0) are dropped unwritten */
        uint64_t start, total;
        int set;
    } rx_refused;
    unsigned char **held;        /* early datagrams, by seq & (rx.size - 1) */
    uint32_t *held_len;
    uint32_t ack_pending;        /* datagrams received since we last acknowledged */
    uint32_t dsack_seq;          /* a duplicate to report (when have_dsack) */
    int have_dsack;
    int ack_now, touched, bye_recv, bye_sent;
    uint64_t ack_due_ns, bye_recv_ns;

    /* operations awaiting replies */
    struct gas_udp_op *ops;
    uint32_t *ops_free;
    uint32_t ops_cap, nfree, ops_live;
    uint64_t get_bytes, get_limit;

    /* failure of operations without a completion, raised by the next quiet */
    int err_status;
    char err_msg[512];
    /* the caller's own operations without a completion (not the runtime's:
     * gas_tl_rt_issuing) are in datagrams numbered below user_until, while
     * user_owed: only their failure is kept for the quiet (gas_udp_chan_kill) */
    uint32_t user_until;
    int user_owed;
    uint64_t notice_ns;          /* last DEAD notice sent to the peer (rx.c) */

    struct gas_udp_counters c;
};

/* A datagram held back by the reorder fault. */
struct gas_udp_delayed {
    struct gas_udp_delayed *next;
    uint64_t due_ns;
    struct sockaddr_in to;
    uint32_t len;
    unsigned char buf[];
};

struct gas_udp_state {
    int ready;
    struct gas_udp_cfg cfg;
    gas_tl_env_t env;
    int fd, epfd, evfd;
    /* The one waiter asleep in the socket (waiter_asleep) also watches
     * done_evfd, which other threads write to wake it: it sleeps in wait_ep
     * (thread mode) or epfd (poll mode, where it is poll_leader's thread). */
    int wait_ep, done_evfd;
    pthread_mutex_t sleep_lock;  /* thread mode: one waiter in the socket (others use the doorbell) */
    atomic_int waiter_asleep;
    _Atomic(const void *) poll_leader; /* poll mode: the waiting thread that serves the socket */
    _Atomic uint64_t sleeper_until; /* when that waiter wakes at the latest */
    _Atomic uint64_t lease_until; /* an application thread polls the socket until then */
    _Atomic uint64_t lease_ns;   /* the lease's length now (cfg.lease, or grown) */
    _Atomic uint64_t preempt_since; /* the window in which preempted holders are counted */
    atomic_uint preempt_n;       /* holders preempted past their lease in that window */
    int lease_tfd;               /* timerfd in the progress thread's set: fires when the lease may lapse */
    _Atomic uint64_t lease_armed; /* when lease_tfd fires (<= lease_until; 0: not armed) */
    pthread_mutex_t lease_lock;  /* guards pt_sock_on and the progress thread's epoll set */
    atomic_int ndead;            /* ranks lost: declared dead here or reported (gas_udp_dead_count) */
    atomic_int unannounced;      /* of those, declared here and not yet told to the others */
    _Atomic unsigned char *lost; /* by rank: 0, LOST_HERE, LOST_ANNOUNCED, LOST_REPORTED (ctrl.c) */
    _Atomic int *lost_by;        /* by rank: who declared it dead (this rank, or the reporter) */
    _Atomic unsigned char *lost_refused; /* by rank: declared dead here for a refused port (rx.c) */
    atomic_int self_lost_by;     /* the rank that declared this rank dead (a DEAD notice), or -1 */
    pthread_mutex_t ext_lock;    /* held while the event source's fn runs (ctrl.h) */
    _Atomic(int (*)(int)) ext_fn;
    int ext_fd;
    atomic_int pt_sock_on;       /* the progress thread watches the socket */
    struct sockaddr_in self;
    uint32_t self_mask;          /* netmask of the chosen interface, network order */
    char self_str[48];           /* "a.b.c.d:port", the size of gas_peer_stats_t's endpoint */
    gas_tl_peer_t self_peer;     /* this rank's own route: applied in place */

    _Atomic(struct gas_udp_chan *) *chans; /* by rank, made on first contact */
    struct gas_udp_chan **active;          /* every channel made, in order */
    _Atomic uint32_t nactive;
    uint32_t active_cap;
    pthread_mutex_t chans_lock;

    pthread_mutex_t rx_lock;
    unsigned char **rx_bufs;
    pthread_mutex_t timer_lock;
    _Atomic uint64_t next_timer_ns;        /* earliest deadline of any channel */
    _Atomic uint64_t next_urgent_ns;       /* earliest one that holds data back (pacing, retry) */
    _Atomic uint64_t inflight_total;
    atomic_int total_blocked;
    atomic_int corked;                    /* some channel holds a corked datagram */
    atomic_int gso_off;                   /* the kernel refused a GSO send: never again */
    atomic_int errq_pending;              /* a send failed: its error may be queued (rx.c reads) */
    _Atomic uint64_t last_idle_poll_ns;    /* poll mode, no channel yet: last look */

    pthread_t pt;
    int pt_started;
    atomic_int stop;
    _Atomic uint64_t pt_wake_ns;          /* when the progress thread wakes; NEVER: not on its own */
    _Atomic uint64_t last_activity_ns;

    pthread_mutex_t fault_lock;
    struct gas_udp_delayed *delayed;

    struct gas_udp_counters totals;       /* updated with __atomic adds */
};

extern struct gas_udp_state gas_udp_g;

/* ---- sock.c ---- */
/* Choose the address (GAS_UDP_IFACE), create, tune and bind the socket. */
gas_status_t gas_udp_sock_open(const char *iface, uint32_t port, uint64_t sockbuf,
                               uint32_t *iface_mtu_p);
/* The MTU of the route to this rank's own address: the loopback device's,
 * which every datagram to a rank on this host and network namespace crosses
 * (65535 where it cannot be read). */
uint32_t gas_udp_sock_local_mtu(void);
void gas_udp_sock_close(void);
/*
 * Send n datagrams to `to`, applying the test fault knobs; returns how many
 * leading ones the kernel took (n unless it ran out of buffer space).
 */
unsigned gas_udp_sock_send(const struct sockaddr_in *to, unsigned char *const *bufs,
                           const uint32_t *lens, unsigned n);
/* Send the reorder fault's held datagrams that are due; their next deadline. */
uint64_t gas_udp_sock_flush_delayed(uint64_t now);
void gas_udp_addr_str(const struct sockaddr_in *a, char *buf, size_t cap);
/* Send an empty datagram to ip:port (network order): a node-local waiter's wake-up. */
void gas_udp_sock_nudge(uint32_t ip, uint16_t port);

/* ---- chan.c ---- */
/* The largest datagram this rank sends to `rank` over udp, from what it
 * published (0 before gas_init, or where it published no udp address).
 * gas-bench's raw stream reference sends datagrams of this size. */
uint32_t gas_udp_peer_dgram(int rank);

/* Whether ch has records appended that no datagram carries yet (an open
 * datagram past its header: gas_udp_chan_seal numbers it). */
static inline int gas_udp_chan_has_open(const struct gas_udp_chan *ch)
{
    return ch->open != NULL && ch->open_len > GAS_UDP_HDR_LEN;
}

static inline struct gas_udp_slot *gas_udp_slot_at(struct gas_udp_chan *ch, uint32_t seq)
{
    return &ch->ring[seq & (ch->ring_cap - 1)];
}
/* Return an acknowledged datagram's buffer to the channel's spares. */
void gas_udp_buf_put(struct gas_udp_chan *ch, unsigned char *b);
/* The channel to rank, made (with its address fetched if need be) when create. */
struct gas_udp_chan *gas_udp_chan_get(int rank, int create);
/* Make the channel to rank (or find it), setting its address when given and missing. */
struct gas_udp_chan *gas_udp_chan_make(int rank, const unsigned char *addr);
/* Whether the rank that published addr is on this host and network namespace
 * (its node identity is ours): its datagrams cross only the loopback device. */
int gas_udp_addr_local(const unsigned char *addr);
void gas_udp_chan_free(struct gas_udp_chan *ch);
/* Room in the open datagram for a record of `fixed` bytes and up to `want`
 * data bytes: how many data bytes fit (sealing first when too few do), or
 * GAS_UDP_NOROOM when no datagram buffer can be had. */
#define GAS_UDP_NOROOM ((size_t)-1)
size_t gas_udp_chan_room(struct gas_udp_chan *ch, size_t fixed, size_t want);
/* Bytes before the data that r will take when appended now: a PUT or
 * GET_REPLY that continues the stream's last record goes as a 4-byte CONT. */
size_t gas_udp_chan_fixed(const struct gas_udp_chan *ch, const struct gas_udp_rec *r);
/* Append a record (after gas_udp_chan_room); returns where its data goes. */
unsigned char *gas_udp_chan_append(struct gas_udp_chan *ch, const struct gas_udp_rec *r);
void gas_udp_chan_seal(struct gas_udp_chan *ch, uint64_t now);
/* Declare the peer dead: fail everything outstanding with GAS_ERR_PEER. */
void gas_udp_chan_kill(struct gas_udp_chan *ch, const char *why);
/* This rank was itself declared dead (gas_udp_self_lost): fail everything
 * outstanding on the channel and send nothing more, without declaring the
 * peer anything; the next quiet says why (a failure of the caller's own). */
void gas_udp_chan_retire(struct gas_udp_chan *ch);
/* A request of the caller's without a completion went into the open datagram
 * (the runtime's own traffic, gas_tl_rt_issuing, does not count). */
void gas_udp_chan_user_op(struct gas_udp_chan *ch, const gas_tl_comp_t *comp);
/* Operations awaiting replies. */
uint32_t gas_udp_op_new(struct gas_udp_chan *ch, enum gas_udp_op_kind kind, gas_tl_comp_t *comp,
                        void *dst, uint64_t len);
struct gas_udp_op *gas_udp_op_find(struct gas_udp_chan *ch, uint32_t id);
void gas_udp_op_finish(struct gas_udp_chan *ch, struct gas_udp_op *op);

/* ---- send.c ---- */
/* Set the pacing rate from the delivery-rate estimate (GAS_UDP_PACE). */
void gas_udp_pace_update(struct gas_udp_chan *ch, uint64_t now);
/*
 * Send what the windows allow (losses first, then new datagrams).  Unless
 * flush, a part-filled open datagram stays open (corked) while GAS_UDP_CORK
 * datagrams are in flight, so small operations issued meanwhile share it:
 * the next acknowledgement sends it, or sooner any thread that waits in the
 * library (its first progress call flushes corked channels).
 */
#define GAS_UDP_CORK 8
void gas_udp_chan_push(struct gas_udp_chan *ch, uint64_t now, int flush);
/* A standalone acknowledgement; flags may add GAS_UDP_F_ACKREQ (a probe). */
void gas_udp_chan_send_ack(struct gas_udp_chan *ch, uint64_t now, uint8_t flags);
/* Send one standalone (NOSEQ, 40-byte) datagram with header h to ch's peer
 * and count it: 1 when the socket took it, else 0.  Acknowledgements and
 * DEAD notices (rx.c) go this way. */
int gas_udp_chan_send_standalone(struct gas_udp_chan *ch, const struct gas_udp_hdr *h);
/* Retransmission, delayed-ack, pacing and peer timers; returns the next
 * deadline, and in *urgent the next one that holds data back (pacing, a
 * refused send retried), or NEVER. */
uint64_t gas_udp_chan_timers(struct gas_udp_chan *ch, uint64_t now, uint64_t *urgent);
/* A duplicate of our peer's datagram dup arrived: resend replies to it. */
void gas_udp_chan_resend_replies(struct gas_udp_chan *ch, uint32_t dup, uint64_t now);

/* ---- recovery.c ---- */
/* An acknowledgement from the peer; -1 when it acknowledges what was never sent. */
int gas_udp_chan_ack_in(struct gas_udp_chan *ch, const struct gas_udp_hdr *h, uint64_t now);
/* A completion point from the peer's stream (see wire.h, cack). */
void gas_udp_chan_cack(struct gas_udp_chan *ch, uint32_t cack, uint64_t now);
/* Take a datagram in flight for lost (it is sent again before new data). */
void gas_udp_mark_lost(struct gas_udp_chan *ch, struct gas_udp_slot *s);
/* Should a burst of answers alone ask for an immediate acknowledgement, to
 * time a round trip?  Yes while the channel has no RTT sample, and once per
 * RTT_REFRESH_NS (10 ms) without one. */
int gas_udp_want_sample(const struct gas_udp_chan *ch, uint64_t now);
/* Into buf (of size bytes), for a peer about to be declared dead: "; only
 * datagrams of N bytes went unacknowledged ..." when every datagram still
 * out is larger than any its last acknowledgement covered (an MTU black
 * hole on the path looks like that) and would not fit a link of MTU 576,
 * else "". */
void gas_udp_mtu_hint(struct gas_udp_chan *ch, char *buf, size_t size);
/* Into buf, for a peer on another host: ": it ... published a loopback
 * address ..." when its address or this rank's is in 127/8 (unreachable
 * across hosts; warned at first contact and given when it is declared
 * dead), else "". */
void gas_udp_loopback_hint(const struct gas_udp_chan *ch, char *buf, size_t size);
/* Datagrams went out now: arm the retransmission timer and the tail-loss probe. */
void gas_udp_loss_sent(struct gas_udp_chan *ch, uint64_t now);
/* Fire the retransmission timer or the tail-loss probe when due; the next deadline. */
uint64_t gas_udp_loss_timers(struct gas_udp_chan *ch, uint64_t now);

/* ---- rx.c ---- */
/* How long a peer's port must refuse datagrams, with nothing heard from it,
 * before it is declared dead: 1 s, at most half GAS_UDP_PEER_TIMEOUT. */
uint64_t gas_udp_refused_grace_ns(void);
/* Receive and handle one batch; returns datagrams handled (0: none waiting).
 * Called with rx_lock held. */
int gas_udp_rx_batch(void);
/* Point gas_udp_rx_batch's receive vectors at g->rx_bufs (gas_init, once they exist). */
void gas_udp_rx_vectors_init(void);
/* Apply the records of one in-order datagram of ch's peer. */
int gas_udp_rx_deliver(struct gas_udp_chan *ch, const unsigned char *buf, uint32_t len, uint64_t now);

/* ---- progress.c ---- */
/* Lower the global timer deadline to t (and wake whoever runs the timers if it would sleep past t). */
void gas_udp_timer_at(uint64_t t);
/* The same for a deadline that holds data back (pacing, a send retry): the
 * progress thread keeps to it even while an application thread holds the lease. */
void gas_udp_timer_at_urgent(uint64_t t);
gas_status_t gas_udp_progress_start(void);
void gas_udp_progress_stop(void);
int gas_udp_progress(void);
/* Run every channel's timers if the earliest deadline passed; events handled. */
int gas_udp_timers_run(uint64_t now);
/* Wake the progress thread. */
void gas_udp_kick(void);
/* Wake the waiter asleep in the socket (through done_evfd). */
void gas_udp_poke_waiter(void);
/*
 * The sleeper for gas_rt_wait (see runtime/wait.h): one waiting thread at a
 * time blocks in the socket (the datagram that answers it wakes it without a
 * hop through the progress thread), the others on the doorbell; in poll mode
 * that thread serves the socket until its wait ends.  A waiter on segment words
 * joins the doorbell as a socket sleeper, so node-local writers nudge it.
 */
int gas_udp_sleep(gas_rt_cond_fn cond, void *arg, const void *watch, uint64_t max_ns);
/* A wait that asked gas_udp_sleep ended (poll mode: the socket's server, if
 * this thread, hands it on to a thread still waiting). */
void gas_udp_wait_done(void);

/*
 * Wake this rank's sleepers whose watched word lies in [off, off + len) of its
 * segment; (0, 0) wakes only those waiting on other memory (completions).
 */
void gas_udp_ring_own(uint64_t off, uint64_t len);

/* ---- ctrl.c ---- */
/* A CTRL record arrived (channel locked): hand it to the handler, append its reply. */
void gas_udp_ctrl_in(struct gas_udp_chan *ch, const struct gas_udp_rec *r);
/* A DEAD notice from ch's peer (channel locked): unless this rank counts that
 * peer lost, this rank was declared dead by rank `by` (gas_udp_self_lost). */
void gas_udp_self_lost_set(struct gas_udp_chan *ch, int by);
/* Who declared rank dead (this rank, or the rank whose report was taken); -1: not lost. */
int gas_udp_lost_by(int rank);
/* Run the other transport's event source (ctrl.h), if any: events handled. */
int gas_udp_event_run(int polled);

/* ---- init.c ---- */
gas_status_t gas_udp_init(const gas_tl_env_t *env);
void gas_udp_fini(void);
/* The ops table's cpu_sharers: the automatic lease where they outnumber the CPUs. */
void gas_udp_cpu_sharers(int ranks);

/* ---- ops.c ---- */
#define GAS_UDP_COUNT(field, n) \
    __atomic_fetch_add(&gas_udp_g.totals.field, (uint64_t)(n), __ATOMIC_RELAXED)

#endif
