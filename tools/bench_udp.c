/*
 * bench_udp.c - gas-bench's raw UDP references (GAS_TRANSPORT=udp or
 * --udp-ref), measured between the addresses the ranks' udp transport is
 * bound to, so they take the ranks' path: loopback on one host, the veth
 * between two network namespaces, the NIC between two hosts.
 *
 * The target rank forks an echo server where it runs (its host, its network
 * namespace), bound to its own udp endpoint address; rank 0 sends from its
 * own endpoint address.
 *  - udp-pingpong-*: 64-byte datagrams echoed back, with both ends waiting
 *    one of three ways: "sleep" in the kernel at once, "spin" (poll for
 *    GAS_WAIT_SPIN, then sleep: how a libgas wait waits), or
 *    "busy" (poll until the answer comes).  Which is fastest depends on the
 *    machine: busy-polling is the floor on idle CPUs, and the worst when the
 *    two ends share one free CPU (each waits for the other's time slice).
 *    Latency rows take the fastest of the three as their reference.
 *  - udp-stream, udp-stream-busy: sendmmsg batches of 64 datagrams of the
 *    udp transport's size (GAS_UDP_MTU or the path MTU, the smaller, less
 *    the 28 bytes of IPv4 and UDP headers), counted where they arrive (drops
 *    do not count); the receiver waits "spin" or "busy".
 *  - udp-stream-gso: the same datagrams, but sent as UDP GSO messages (one
 *    send of up to GAS_UDP_GSO_SEGS datagrams that the kernel cuts), as the udp
 *    transport sends runs of datagrams; where the kernel refuses GSO on
 *    this route (no checksum offload, an old kernel) the row is left out.
 *    Bandwidth rows take the fastest stream as their reference, so a
 *    transport that batches with GSO is held to a stream that does too.
 * Both survive loss, because lossy links are measured too: a ping nobody
 * answered within RESEND_S is sent again (the time counts), and a stream
 * batch ends with a numbered request for the server's running byte count,
 * repeated until answered.  No retransmission of data: the stream's figure
 * is what a lossy link delivers.
 */
#include "gas-bench.h"
#include "runtime/config.h"
#include "transport/udp/gso.h"
#include "transport/udp/wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PING_SIZE 64
#define BATCH 64                /* datagrams per sendmmsg / recvmmsg */
#define MAX_DGRAM GAS_UDP_MAX_DGRAM      /* largest UDP payload over IPv4 */
#define HEADERS GAS_UDP_IP_UDP_OVERHEAD  /* IPv4 + UDP */
#define RCVBUF (8 << 20)
#define RESEND_S 1e-3           /* a ping unanswered this long is sent again */
#define END_RESEND_S 20e-3      /* a count request unanswered this long, too */
#define GIVE_UP_S 5.0
#define BUSY_S 0.2              /* "busy": poll this long, then sleep (between references) */
#define GSO_BATCH 8             /* GSO messages per sendmmsg */

/* transport/udp/udp.h: the largest datagram the transport sends to rank (0: no udp route) */
uint32_t gas_udp_peer_dgram(int rank);

enum { MSG_PING = 1, MSG_DATA = 2, MSG_END = 3 };
enum { WAIT_SLEEP, WAIT_SPIN, WAIT_BUSY };   /* how both ends wait */

/*
 * Wire: byte 0 the kind, byte 1 how the server waits for the next datagram
 * (WAIT_*), bytes 8..15 a number, 16..23 the server's byte count.
 */
struct bench_udp {
    int fd;                     /* rank 0: connected to the server */
    pid_t server;               /* the target: the forked server */
    struct sockaddr_in to;      /* the server */
    uint64_t seq;               /* the last ping or count request */
    uint64_t counted;           /* the server's byte count at the last answer */
    size_t dgram;               /* the stream's datagram size */
    int gso;                    /* the kernel takes UDP GSO sends on this route */
    double poll_s[3];           /* how long to poll before sleeping, per WAIT_* */
    char from_ip[INET_ADDRSTRLEN];
};

/*
 * GAS_WAIT_SPIN in seconds, as the library has it: gas_init loaded the
 * configuration (environment and GAS_CONFIG_FILE, parsed and range-checked
 * there, so a value gas_init refuses never reaches this).
 */
static double spin_s(void)
{
    return (double)gas_rt_config_ns(GAS_CFG_WAIT_SPIN) * 1e-9;
}

/* This rank's udp endpoint address ("a.b.c.d" of "a.b.c.d:port"), or loopback. */
static struct in_addr own_address(const struct bench *b)
{
    gas_peer_stats_t st;
    struct in_addr ip = { htonl(INADDR_LOOPBACK) };
    char buf[sizeof st.endpoint];
    if (gas_peer_stats(b->rank, &st) != GAS_OK || st.endpoint[0] == '\0')
        return ip;
    memcpy(buf, st.endpoint, sizeof buf);
    buf[sizeof buf - 1] = '\0';
    char *colon = strrchr(buf, ':');
    if (colon)
        *colon = '\0';
    if (inet_pton(AF_INET, buf, &ip) != 1)
        ip.s_addr = htonl(INADDR_LOOPBACK);
    return ip;
}

static int bound_socket(struct in_addr ip, struct sockaddr_in *addr_p)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        bench_die("socket: %s", strerror(errno));
    int rb = RCVBUF, dont_fragment = IP_PMTUDISC_DO;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof rb) < 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb); /* capped: fine */
    (void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &dont_fragment, sizeof dont_fragment);
    *addr_p = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr = ip };
    socklen_t len = sizeof *addr_p;
    if (bind(fd, (struct sockaddr *)addr_p, sizeof *addr_p) < 0 ||
        getsockname(fd, (struct sockaddr *)addr_p, &len) < 0)
        bench_die("bind to %s: %s", inet_ntoa(ip), strerror(errno));
    return fd;
}

/*
 * The server: echo pings, count data bytes, answer count requests.  After a
 * datagram it polls for as long as that datagram's byte 1 says (WAIT_*),
 * then sleeps in recvmmsg.
 */
static void server_loop(int fd, pid_t parent)
{
    static unsigned char bufs[BATCH][MAX_DGRAM];
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    struct sockaddr_in from[BATCH];
    uint64_t total = 0;
    const double poll_s[3] = { 0, spin_s(), BUSY_S };
    double last = 0, poll = 0;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            iov[i] = (struct iovec){ bufs[i], sizeof bufs[i] };
            m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &from[i], .msg_namelen = sizeof from[i],
                                                  .msg_iov = &iov[i], .msg_iovlen = 1 } };
        }
        int sleep = bench_now_s() - last >= poll;
        int n = recvmmsg(fd, m, BATCH, sleep ? MSG_WAITFORONE : MSG_DONTWAIT, NULL);
        if (n <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            unsigned char *d = bufs[i];
            if (m[i].msg_len >= 2 && d[1] <= WAIT_BUSY)
                poll = poll_s[d[1]];
            if (d[0] == MSG_DATA) {
                total += m[i].msg_len;
                continue;
            }
            if (m[i].msg_len < 24)
                continue;
            if (d[0] == MSG_END)
                memcpy(d + 16, &total, sizeof total);
            sendto(fd, d, m[i].msg_len, 0, (struct sockaddr *)&from[i], sizeof from[i]);
        }
        last = bench_now_s();
    }
}

/* The transport's own (gas_udp_peer_dgram, where udp is up), and otherwise
 * GAS_UDP_MTU (auto: 1500) less the headers; no more than the path MTU of
 * the connected socket allows. */
static size_t stream_dgram(int fd, int target)
{
    size_t mtu = (size_t)gas_rt_config_size(GAS_CFG_UDP_MTU);   /* as gas_init loaded it */
    uint32_t transport = gas_udp_peer_dgram(target);
    if (transport)
        mtu = transport + HEADERS;
    else if (mtu == 0)
        mtu = GAS_UDP_AUTO_MTU;
    int path = 0;
    socklen_t len = sizeof path;
    if (getsockopt(fd, IPPROTO_IP, IP_MTU, &path, &len) == 0 && path > 0 && (size_t)path < mtu)
        mtu = (size_t)path;
    mtu = mtu < HEADERS + PING_SIZE ? HEADERS + PING_SIZE : mtu;
    return mtu - HEADERS > MAX_DGRAM ? MAX_DGRAM : mtu - HEADERS;
}

/* How many datagrams of u->dgram bytes one GSO message carries (as the transport caps it). */
static unsigned gso_segs(const struct bench_udp *u)
{
    size_t n = GAS_UDP_GSO_BYTES / u->dgram;
    return n < 1 ? 1 : n > GAS_UDP_GSO_SEGS ? GAS_UDP_GSO_SEGS : (unsigned)n;
}

/*
 * Send min(count, GSO_BATCH) GSO messages in one sendmmsg, each of the len
 * bytes at buf, which the kernel cuts into datagrams of seg bytes.  Returns
 * how many messages the kernel took, or -1 with errno where it refused the
 * first.
 */
static int gso_send(const struct bench_udp *u, unsigned char *buf, size_t len, uint16_t seg,
                    uint64_t count)
{
    struct mmsghdr m[GSO_BATCH];
    struct iovec iov = { buf, len };
    union gas_udp_gso_ctl ctl[GSO_BATCH];
    unsigned n = count < GSO_BATCH ? (unsigned)count : GSO_BATCH;
    for (unsigned i = 0; i < n; i++) {
        m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
        gas_udp_gso_set(&m[i].msg_hdr, &ctl[i], seg);
    }
    return sendmmsg(u->fd, m, n, 0);
}

/*
 * Does the kernel take a GSO send on this route?  Sends one message of two
 * 16-byte datagrams of no kind, which the server drops (too short to answer,
 * not data, so not counted).
 */
static int gso_works(const struct bench_udp *u)
{
    unsigned char probe[32] = { 0 };
    return gso_send(u, probe, sizeof probe, 16, 1) == 1;
}

void bench_udp_start(struct bench *b)
{
    struct bench_udp *u = calloc(1, sizeof *u);
    if (u == NULL)
        bench_die("out of memory");
    u->fd = -1;
    b->udp = u;
    gas_ptr_t slot = bench_ctl_slot(b, b->target, 0);
    if (b->rank == b->target) {
        struct sockaddr_in addr;
        int fd = bound_socket(own_address(b), &addr);
        fflush(NULL);
        pid_t parent = getpid(), pid = fork();
        if (pid < 0)
            bench_die("fork for the UDP references: %s", strerror(errno));
        if (pid == 0)
            server_loop(fd, parent);
        close(fd);
        u->server = pid;
        uint64_t where = (uint64_t)ntohl(addr.sin_addr.s_addr) << 16 | ntohs(addr.sin_port);
        __atomic_store_n((uint64_t *)gas_ptr_local(slot), where, __ATOMIC_RELEASE);
    }
    bench_check(gas_barrier(), "gas_barrier");
    if (b->rank != 0)
        return;
    uint64_t where;
    bench_check(gas_get(&where, slot, sizeof where), "gas_get");
    u->to = (struct sockaddr_in){ .sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl((uint32_t)(where >> 16)),
                                  .sin_port = htons((uint16_t)where) };
    struct sockaddr_in mine;
    u->fd = bound_socket(own_address(b), &mine);
    if (connect(u->fd, (struct sockaddr *)&u->to, sizeof u->to) < 0)
        bench_die("connect to the UDP reference server: %s", strerror(errno));
    inet_ntop(AF_INET, &mine.sin_addr, u->from_ip, sizeof u->from_ip);
    u->dgram = stream_dgram(u->fd, b->target);
    u->gso = gso_works(u);
    u->poll_s[WAIT_SLEEP] = 0;
    u->poll_s[WAIT_SPIN] = spin_s();
    u->poll_s[WAIT_BUSY] = GIVE_UP_S;
}

size_t bench_udp_dgram(const struct bench *b)
{
    return b->udp ? b->udp->dgram : 0;
}

int bench_udp_gso(const struct bench *b)
{
    return b->udp && b->udp->gso;
}

void bench_udp_note(const struct bench *b, FILE *f, const char *pre)
{
    char to[INET_ADDRSTRLEN];
    const struct bench_udp *u = b->udp;
    if (u == NULL || u->fd < 0)
        return;
    inet_ntop(AF_INET, &u->to.sin_addr, to, sizeof to);
    char gso[64] = "the kernel refuses GSO here: no udp-stream-gso";
    if (u->gso)
        snprintf(gso, sizeof gso, "GSO messages of %u", gso_segs(u));
    fprintf(f, "%s  (rank 0 at %s -> an echo process beside rank %d at %s:%u; stream datagrams "
            "of %zu B, %s; \"spin\" polls %.0f us (GAS_WAIT_SPIN) before it sleeps)\n", pre,
            u->from_ip, b->target, to, ntohs(u->to.sin_port), u->dgram, gso,
            u->poll_s[WAIT_SPIN] * 1e6);
}

void bench_udp_stop(struct bench *b)
{
    struct bench_udp *u = b->udp;
    if (u == NULL)
        return;
    if (u->server > 0) {
        kill(u->server, SIGKILL);
        waitpid(u->server, NULL, 0);
    }
    if (u->fd >= 0)
        close(u->fd);
    free(u);
    b->udp = NULL;
}

/*
 * Send msg (len bytes, number seq) and wait for the answer carrying the
 * same kind and number: poll for as long as msg's byte 1 says (WAIT_*),
 * then sleep in poll(2); send again every resend_s.  Stale answers (to an
 * earlier copy) are skipped.  Returns the answer's length.
 */
static size_t ask(struct bench_udp *u, unsigned char *msg, size_t len, double resend_s,
                  unsigned char *in, size_t cap)
{
    uint64_t seq;
    memcpy(&seq, msg + 8, sizeof seq);
    double start = bench_now_s(), sent = start, poll_s = u->poll_s[msg[1]];
    if (send(u->fd, msg, len, 0) < 0 && errno != ENOBUFS && errno != EAGAIN)
        bench_die("send to the UDP reference server: %s", strerror(errno));
    for (;;) {
        ssize_t n = recv(u->fd, in, cap, MSG_DONTWAIT);
        uint64_t got;
        if (n >= 24 && in[0] == msg[0] && (memcpy(&got, in + 8, sizeof got), got == seq))
            return (size_t)n;
        if (n >= 0)
            continue; /* a stale answer */
        double now = bench_now_s();
        if (now - start > GIVE_UP_S)
            bench_die("the UDP reference server stopped answering (%.0f s)", GIVE_UP_S);
        if (now - sent > resend_s) {
            send(u->fd, msg, len, 0);
            sent = now;
        } else if (now - start > poll_s) {
            struct pollfd p = { .fd = u->fd, .events = POLLIN };
            int ms = (int)((resend_s - (now - sent)) * 1e3) + 1;
            poll(&p, 1, ms);
        }
    }
}

static uint64_t pingpong(struct bench *b, uint64_t iters, int wait)
{
    unsigned char ping[PING_SIZE] = { MSG_PING, (unsigned char)wait }, in[PING_SIZE];
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t seq = ++b->udp->seq;
        memcpy(ping + 8, &seq, sizeof seq);
        ask(b->udp, ping, sizeof ping, RESEND_S, in, sizeof in);
    }
    return 0;
}

static uint64_t pingpong_sleep(struct bench *b, size_t size, uint64_t iters)
{
    return pingpong(b, iters, WAIT_SLEEP);
}

static uint64_t pingpong_spin(struct bench *b, size_t size, uint64_t iters)
{
    return pingpong(b, iters, WAIT_SPIN);
}

static uint64_t pingpong_busy(struct bench *b, size_t size, uint64_t iters)
{
    return pingpong(b, iters, WAIT_BUSY);
}

/*
 * End a stream batch: ask the server for its running byte count (resent
 * until answered) and leave what arrived since the last batch in
 * b->counted_bytes.
 */
static uint64_t end_count(struct bench *b, int wait)
{
    struct bench_udp *u = b->udp;
    unsigned char end[24] = { MSG_END, (unsigned char)wait }, in[64];
    uint64_t seq = ++u->seq, total;
    memcpy(end + 8, &seq, sizeof seq);
    ask(u, end, sizeof end, END_RESEND_S, in, sizeof in);
    memcpy(&total, in + 16, sizeof total);
    b->counted_bytes = total - u->counted;
    u->counted = total;
    return 0;
}

/* iters datagrams of size bytes; bytes counted by the server (b->counted_bytes). */
static uint64_t stream(struct bench *b, size_t size, uint64_t iters, int wait)
{
    static unsigned char buf[MAX_DGRAM];
    struct bench_udp *u = b->udp;
    struct mmsghdr m[BATCH];
    struct iovec iov = { buf, size };
    buf[0] = MSG_DATA;
    buf[1] = (unsigned char)wait;
    for (int i = 0; i < BATCH; i++)
        m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
    for (uint64_t left = iters; left > 0;) {
        unsigned n = left < BATCH ? (unsigned)left : BATCH;
        int r = sendmmsg(u->fd, m, n, 0);
        if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
            bench_die("sendmmsg: %s", strerror(errno));
        left -= r > 0 ? (uint64_t)r : 0;
    }
    return end_count(b, wait);
}

/*
 * iters datagrams of size bytes as GSO messages (the last may carry fewer);
 * every datagram starts with the data header, so the server counts each as
 * it arrives.  Bytes counted by the server (b->counted_bytes).
 */
static uint64_t stream_gso(struct bench *b, size_t size, uint64_t iters)
{
    static unsigned char buf[GAS_UDP_GSO_BYTES > MAX_DGRAM ? GAS_UDP_GSO_BYTES : MAX_DGRAM];
    struct bench_udp *u = b->udp;
    unsigned segs = gso_segs(u);
    (void)size; /* u->dgram, as run_references set it */
    for (unsigned i = 0; i < segs; i++) {
        buf[i * u->dgram] = MSG_DATA;
        buf[i * u->dgram + 1] = WAIT_SPIN;
    }
    for (uint64_t left = iters; left > 0;) {
        /* whole messages of segs datagrams, then one of the rest */
        uint64_t k = left < segs ? left : segs;
        int r = gso_send(u, buf, k * u->dgram, (uint16_t)u->dgram, left / k);
        if (r < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
            bench_die("sendmmsg with UDP_SEGMENT: %s", strerror(errno));
        left -= r > 0 ? (uint64_t)r * k : 0;
    }
    return end_count(b, WAIT_SPIN);
}

static uint64_t stream_spin(struct bench *b, size_t size, uint64_t iters)
{
    return stream(b, size, iters, WAIT_SPIN);
}

static uint64_t stream_busy(struct bench *b, size_t size, uint64_t iters)
{
    return stream(b, size, iters, WAIT_BUSY);
}

/*
 * The latency rows' reference is the fastest udp-pingpong-* row, the
 * bandwidth rows' the fastest udp-stream* row (gas-bench.c).
 */
const struct mode bench_udp_modes[] = {
    { .name = "udp-pingpong-sleep", .group = "ref-udp", .kind = KIND_LAT, .fixed_size = PING_SIZE,
      .reference = 1, .batch = pingpong_sleep,
      .doc = "reference: raw UDP round trip between the ranks' addresses, both ends sleeping" },
    { .name = "udp-pingpong-spin", .group = "ref-udp", .kind = KIND_LAT, .fixed_size = PING_SIZE,
      .reference = 1, .batch = pingpong_spin,
      .doc = "reference: the same, both ends polling GAS_WAIT_SPIN before they sleep" },
    { .name = "udp-pingpong-busy", .group = "ref-udp", .kind = KIND_LAT, .fixed_size = PING_SIZE,
      .reference = 1, .batch = pingpong_busy,
      .doc = "reference: the same, both ends busy-polling" },
    /* fixed_size is set to the datagram size once it is known (bench_udp_dgram) */
    { .name = "udp-stream", .group = "ref-udp", .kind = KIND_BW, .fixed_size = 1472,
      .reference = 1, .counted = 1, .batch = stream_spin,
      .doc = "reference: raw sendmmsg stream of the transport's datagram size, counted at the "
             "receiver, which polls GAS_WAIT_SPIN before it sleeps" },
    { .name = "udp-stream-busy", .group = "ref-udp", .kind = KIND_BW, .fixed_size = 1472,
      .reference = 1, .counted = 1, .batch = stream_busy,
      .doc = "reference: the same, the receiver busy-polling" },
    { .name = "udp-stream-gso", .group = "ref-udp", .kind = KIND_BW, .fixed_size = 1472,
      .reference = 1, .counted = 1, .batch = stream_gso,
      .doc = "reference: the same datagrams sent as UDP GSO messages of up to 64 (as the "
             "transport sends runs), the receiver polling GAS_WAIT_SPIN; left out where the "
             "kernel refuses GSO" },
};
const size_t bench_nudp_modes = sizeof bench_udp_modes / sizeof bench_udp_modes[0];
