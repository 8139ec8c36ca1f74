/*
 * udp-bench - libgas over udp next to raw UDP, measured in the same run.
 *
 *   GAS_TRANSPORT=udp gasrun -n 2 udp-bench [--reps N] [--batch-ms MS] [--quick]
 *                                           [--only lat|bw]
 *
 * Rank 0 drives, rank 1 is the target; both also open a plain UDP socket on
 * the address libgas uses (from gas_peer_stats), so the raw references take
 * the same path.  Two pairs, each measured in alternating batches (raw,
 * libgas, raw, ...) so that a machine whose speed drifts affects both alike:
 *
 *  latency: a raw ping-pong of 64-byte datagrams, where the echo side sleeps
 *    in epoll_wait for every datagram (as the target's progress thread, or
 *    its waiting application thread in GAS_PROGRESS=poll, does) and the
 *    sender spins GAS_WAIT_SPIN on a non-blocking receive before sleeping in
 *    epoll_wait (as a libgas wait does); against 8-byte gas_put + gas_quiet
 *    round trips while rank 1 waits in gas_wait_until.
 *
 *  bandwidth: a raw stream of sendmmsg batches (64 datagrams) of the
 *    transport's datagram size, drained by a recvmmsg thread on rank 1,
 *    counted where it arrives (datagrams the receiver drops do not count);
 *    against a stream of 1 MiB gas_put_nbi completed by gas_quiet.
 *
 * It prints medians and p10/p90 over the batches, and of the ratio of each
 * libgas batch to the raw batch just before it (which cancels the drift of a
 * shared machine).  With the bandwidth pair, where the difference went:
 * the link's use (udp bytes rank 0 sent per second in each libgas batch,
 * from gas_peer_stats, against the raw batch before it: below 100%, the
 * link idled), and over all batches the retransmissions and what the
 * headers cost (put bytes per udp payload byte).  Only the public API is used.  Not a test: no assertion
 * on the numbers.
 */
#include <gas.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PP_SIZE 64
#define STREAM_BATCH 64
#define PUT_CHUNK (1u << 20)
#define MAX_REPS 200

enum { STOP = 0x53544f50 };

struct opts {
    int reps;
    double batch_s;
    int quick;
    int lat, bw;   /* which pairs to run */
};

static int me;
static int sock = -1, ep = -1;
static struct sockaddr_in peer_raw;
static uint64_t spin_ns = 20000;
static size_t dgram = 1472;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "udp-bench: rank %d: %s (%s; %s)\n", me, what, strerror(errno), gas_last_error());
    gas_abort(1, what);
}

static void check(gas_status_t s, const char *what)
{
    if (s != GAS_OK)
        die(what);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct stats {
    double median, p10, p90;
};

static struct stats summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    struct stats s = {v[n / 2], v[n / 10], v[n - 1 - n / 10]};
    return s;
}

/* ---- the raw socket, on the address libgas chose ---- */

static void endpoint_ip(int rank, struct in_addr *ip)
{
    gas_peer_stats_t st;
    check(gas_peer_stats(rank, &st), "gas_peer_stats");
    char buf[64];
    snprintf(buf, sizeof buf, "%s", st.endpoint);
    char *colon = strrchr(buf, ':');
    if (colon)
        *colon = '\0';
    if (inet_pton(AF_INET, buf, ip) != 1)
        ip->s_addr = htonl(INADDR_LOOPBACK);
}

static uint16_t open_raw(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    endpoint_ip(me, &a.sin_addr);
    sock = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    int big = 4 << 20;
    setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
    setsockopt(sock, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
    int pmtu = IP_PMTUDISC_DO;
    setsockopt(sock, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    socklen_t len = sizeof a;
    if (sock < 0 || bind(sock, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(sock, (struct sockaddr *)&a, &len) != 0)
        die("raw udp socket");
    ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN};
    epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev);
    return ntohs(a.sin_port);
}

/* Receive one datagram: spin (non-blocking) for `spin` ns, then sleep in
 * epoll; 0 when nothing came within 50 ms (lost: the caller sends again). */
static ssize_t recv_wait(void *buf, size_t cap, uint64_t spin)
{
    double start = now_s(), end = start + (double)spin * 1e-9;
    for (;;) {
        ssize_t n = recv(sock, buf, cap, MSG_DONTWAIT);
        if (n > 0)
            return n;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (spin && now_s() < end)
            continue;
        if (now_s() - start > 0.05)
            return 0;
        struct epoll_event ev;
        epoll_wait(ep, &ev, 1, 50);
    }
}

/* ---- rank 1's raw side: one thread echoes ping-pong datagrams (PP_SIZE
 * bytes) and counts stream datagrams into a word of its segment ---- */

static uint64_t *drained;          /* rank 1: in its segment, read by rank 0 */
static gas_ptr_t drained_at;
static atomic_int raw_stop;

static void *raw_server(void *arg)
{
    static unsigned char bufs[STREAM_BATCH][65536];
    struct mmsghdr m[STREAM_BATCH];
    struct iovec iov[STREAM_BATCH];
    struct sockaddr_in from;
    for (int i = 0; i < STREAM_BATCH; i++)
        iov[i] = (struct iovec){bufs[i], sizeof bufs[i]};
    while (!atomic_load(&raw_stop)) {
        struct epoll_event ev;
        if (epoll_wait(ep, &ev, 1, 100) <= 0)
            continue;
        for (;;) {
            for (int i = 0; i < STREAM_BATCH; i++)
                m[i].msg_hdr = (struct msghdr){.msg_iov = &iov[i], .msg_iovlen = 1,
                                               .msg_name = &from, .msg_namelen = sizeof from};
            int n = recvmmsg(sock, m, STREAM_BATCH, MSG_DONTWAIT, NULL);
            if (n <= 0)
                break;
            uint64_t bytes = 0;
            for (int i = 0; i < n; i++) {
                if (m[i].msg_len == PP_SIZE)
                    sendto(sock, bufs[i], m[i].msg_len, 0, (struct sockaddr *)&from, sizeof from);
                else
                    bytes += m[i].msg_len;
            }
            if (bytes)
                __atomic_fetch_add(drained, bytes, __ATOMIC_RELAXED);
        }
    }
    return arg;
}

/* ---- the measured operations (rank 0) ---- */

static double raw_pingpong(uint64_t iters)
{
    unsigned char b[PP_SIZE] = {1};
    double t0 = now_s();
    for (uint64_t i = 0; i < iters; i++) {
        ssize_t n;
        do {
            if (sendto(sock, b, sizeof b, 0, (struct sockaddr *)&peer_raw, sizeof peer_raw) < 0 ||
                (n = recv_wait(b, sizeof b, spin_ns)) < 0)
                die("raw ping-pong");
        } while (n == 0); /* lost on the way: again (raw UDP has no retransmission) */
    }
    return (now_s() - t0) / (double)iters * 1e6;
}

static gas_ptr_t target; /* 8 bytes on rank 1 */

static double gas_put_quiet(uint64_t iters)
{
    uint64_t v = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < iters; i++) {
        v++;
        check(gas_put(target, &v, 8), "gas_put");
        check(gas_quiet(), "gas_quiet");
    }
    return (now_s() - t0) / (double)iters * 1e6;
}

/* MB/s arriving at rank 1 over `secs` of sendmmsg batches. */
static double raw_stream(double secs)
{
    static unsigned char buf[65536];
    struct mmsghdr m[STREAM_BATCH];
    struct iovec iov = {buf, dgram};
    for (int i = 0; i < STREAM_BATCH; i++)
        m[i].msg_hdr = (struct msghdr){.msg_iov = &iov, .msg_iovlen = 1, .msg_name = &peer_raw,
                                       .msg_namelen = sizeof peer_raw};
    uint64_t before, cur, last;
    check(gas_atomic_fetch_u64(drained_at, &before), "gas_atomic_fetch_u64");
    double t0 = now_s(), t;
    do {
        int sent = 0;
        while (sent < STREAM_BATCH) {
            int r = sendmmsg(sock, m + sent, (unsigned)(STREAM_BATCH - sent), 0);
            if (r > 0)
                sent += r;
            else if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR)
                die("sendmmsg");
        }
        t = now_s();
    } while (t - t0 < secs);
    /* Let the receiver drain what is queued (until its count stops), then count. */
    double end = t;
    check(gas_atomic_fetch_u64(drained_at, &cur), "gas_atomic_fetch_u64");
    do {
        last = cur;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        check(gas_atomic_fetch_u64(drained_at, &cur), "gas_atomic_fetch_u64");
        if (cur != last)
            end = now_s();
    } while (cur != last);
    return (double)(cur - before) / (end - t0) / 1e6;
}

static gas_ptr_t sink; /* PUT_CHUNK bytes on rank 1 */
static unsigned char *src;

static uint64_t stream_put_bytes;  /* totals over every gas_stream batch (and calibration) */
static double stream_secs;

static double gas_stream(double secs)
{
    double t0 = now_s();
    uint64_t bytes = 0;
    int n = 0;
    do {
        check(gas_put_nbi(sink, src, PUT_CHUNK), "gas_put_nbi");
        bytes += PUT_CHUNK;
        if (++n % 16 == 0)
            check(gas_quiet(), "gas_quiet");
    } while (now_s() - t0 < secs);
    check(gas_quiet(), "gas_quiet");
    double t = now_s() - t0;
    stream_put_bytes += bytes;
    stream_secs += t;
    return (double)bytes / t / 1e6;
}

/* Iterations that make a batch last about batch_s. */
static uint64_t calibrate(double (*per_op_us)(uint64_t), double batch_s)
{
    uint64_t it = 16;
    double us = per_op_us(it);
    it = (uint64_t)(batch_s * 1e6 / (us > 0.01 ? us : 0.01));
    return it < 16 ? 16 : it;
}

/* The latency pair: raw ping-pong and gas_put + gas_quiet, alternating. */
static void latency_pair(const struct opts *o)
{
    double raw[MAX_REPS], gas[MAX_REPS], ratio[MAX_REPS];
    uint64_t it_raw = calibrate(raw_pingpong, o->batch_s),
             it_gas = calibrate(gas_put_quiet, o->batch_s);
    for (int r = 0; r < o->reps; r++) {
        raw[r] = raw_pingpong(it_raw);
        gas[r] = gas_put_quiet(it_gas);
    }
    for (int r = 0; r < o->reps; r++)
        ratio[r] = gas[r] / raw[r];
    struct stats sr = summarize(raw, o->reps), sg = summarize(gas, o->reps),
                 sq = summarize(ratio, o->reps);
    printf("%-46s %9s %9s %9s\n", "latency (round trip)", "median", "p10", "p90");
    printf("%-46s %9.2f %9.2f %9.2f us\n", "raw UDP ping-pong, 64 B", sr.median, sr.p10, sr.p90);
    printf("%-46s %9.2f %9.2f %9.2f us\n", "gas_put 8 B + gas_quiet", sg.median, sg.p10, sg.p90);
    printf("%-46s %9.2fx %8.2fx %8.2fx (target: within 1.5x)\n\n",
           "libgas / raw, batch by batch", sq.median, sq.p10, sq.p90);
}

/* The bandwidth pair: raw sendmmsg stream and gas_put_nbi stream, alternating;
 * then where the difference went, from rank 0's counters towards rank 1. */
static void bandwidth_pair(const struct opts *o)
{
    double raw[MAX_REPS], gas[MAX_REPS], ratio[MAX_REPS], use[MAX_REPS];
    double secs = o->batch_s * 3;
    gas_peer_stats_t a, b, first;
    check(gas_peer_stats(1, &first), "gas_peer_stats");
    uint64_t put_bytes = 0;
    for (int r = 0; r < o->reps; r++) {
        raw[r] = raw_stream(secs);
        check(gas_peer_stats(1, &a), "gas_peer_stats");
        uint64_t before = stream_put_bytes;
        double t = stream_secs;
        gas[r] = gas_stream(secs);
        check(gas_peer_stats(1, &b), "gas_peer_stats");
        ratio[r] = 100 * gas[r] / raw[r];
        use[r] = 100 * (double)(b.bytes_sent - a.bytes_sent) / (stream_secs - t) / 1e6 / raw[r];
        put_bytes += stream_put_bytes - before;
    }
    struct stats sr = summarize(raw, o->reps), sg = summarize(gas, o->reps),
                 sq = summarize(ratio, o->reps), su = summarize(use, o->reps);
    printf("%-46s %9s %9s %9s\n", "bandwidth (goodput)", "median", "p10", "p90");
    char what[80];
    snprintf(what, sizeof what, "raw sendmmsg stream, %zu B datagrams", dgram);
    printf("%-46s %9.1f %9.1f %9.1f MB/s\n", what, sr.median, sr.p10, sr.p90);
    printf("%-46s %9.1f %9.1f %9.1f MB/s\n", "gas_put_nbi 1 MiB stream + gas_quiet", sg.median,
           sg.p10, sg.p90);
    printf("%-46s %9.1f%% %8.1f%% %8.1f%% (target: at least 70%%)\n",
           "libgas / raw, batch by batch", sq.median, sq.p10, sq.p90);
    printf("%-46s %9.1f%% %8.1f%% %8.1f%% (below 100%%: the link idled)\n",
           "libgas udp bytes sent / raw, batch by batch", su.median, su.p10, su.p90);
    uint64_t dg = b.datagrams_sent - first.datagrams_sent, bytes = b.bytes_sent - first.bytes_sent;
    uint64_t retx = b.retransmits - first.retransmits, acks = b.acks_received - first.acks_received;
    printf("libgas stream, all batches: %llu datagrams, %llu retransmitted (%.2f%%), %llu acks "
           "received; put bytes / udp bytes sent %.1f%%\n",
           (unsigned long long)dg, (unsigned long long)retx,
           dg ? 100.0 * (double)retx / (double)dg : 0.0, (unsigned long long)acks,
           bytes ? 100.0 * (double)put_bytes / (double)bytes : 0.0);
}

static void usage(void)
{
    fprintf(stderr, "usage: GAS_TRANSPORT=udp gasrun -n 2 udp-bench [--reps N] [--batch-ms MS] "
                    "[--quick] [--only lat|bw]\n");
}

int main(int argc, char **argv)
{
    struct opts o = {.reps = 15, .batch_s = 0.1, .lat = 1, .bw = 1};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            o.reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--batch-ms") == 0 && i + 1 < argc)
            o.batch_s = atof(argv[++i]) / 1000;
        else if (strcmp(argv[i], "--quick") == 0)
            o.quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            i++;
            o.lat = strcmp(argv[i], "lat") == 0;
            o.bw = strcmp(argv[i], "bw") == 0;
            if (!o.lat && !o.bw) {
                usage();
                return 2;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (o.quick) {
        o.reps = 3;
        o.batch_s = 0.01;
    }
    o.reps = o.reps < 3 ? 3 : o.reps > MAX_REPS ? MAX_REPS : o.reps;
    if (gas_init() != GAS_OK)
        return 1;
    me = gas_rank();
    if (gas_nranks() < 2) {
        fprintf(stderr, "udp-bench: needs 2 ranks (gasrun -n 2)\n");
        gas_finalize();
        return 77;
    }
    gas_peer_stats_t st;
    check(gas_peer_stats(1 - (me > 1 ? 1 : me), &st), "gas_peer_stats");
    if (me <= 1 && strcmp(st.transport, "udp") != 0) {
        if (me == 0)
            fprintf(stderr, "udp-bench: rank 0 reaches rank 1 over %s; run with GAS_TRANSPORT=udp\n",
                    st.transport);
        gas_finalize();
        return 77;
    }
    const char *e = getenv("GAS_WAIT_SPIN");
    if (e && *e) {
        double v = atof(e);
        spin_ns = (uint64_t)(strstr(e, "ms") ? v * 1e6 : strstr(e, "us") ? v * 1e3
                             : strstr(e, "ns") ? v : v * 1e9);
    }
    e = getenv("GAS_UDP_MTU");
    dgram = (e && *e ? (size_t)atol(e) : 1500) - 28;
    const char *prog = getenv("GAS_PROGRESS");
    gas_ptr_t ctl, data;
    check(gas_malloc(2 * 8 * sizeof(uint64_t), &ctl), "gas_malloc");
    check(gas_malloc_dist(2, PUT_CHUNK, GAS_DIST_BLOCK, 0, &data), "gas_malloc");
    check(gas_ptr_index(data, PUT_CHUNK, 1, &sink), "gas_ptr_index");
    target = sink;
    gas_ptr_t port1, flag1;
    check(gas_ptr_index(ctl, 8, 8, &port1), "gas_ptr_index");
    check(gas_ptr_index(ctl, 8, 9, &flag1), "gas_ptr_index");
    check(gas_ptr_index(ctl, 8, 10, &drained_at), "gas_ptr_index");
    drained = gas_ptr_local(drained_at);
    pthread_t server;
    if (me == 1) {
        uint64_t port = open_raw();
        check(gas_put(port1, &port, 8), "gas_put");
        pthread_create(&server, NULL, raw_server, NULL);
    }
    check(gas_barrier(), "gas_barrier");
    if (me == 0) {
        uint64_t port;
        check(gas_get(&port, port1, 8), "gas_get");
        open_raw();
        peer_raw = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        endpoint_ip(1, &peer_raw.sin_addr);
        src = malloc(PUT_CHUNK);
        memset(src, 0x5a, PUT_CHUNK);
        printf("udp-bench: libgas %s over udp, rank 0 -> rank 1 at %s, GAS_PROGRESS=%s, "
               "GAS_WAIT_SPIN %.0f us, datagrams of %zu B\n",
               GAS_VERSION_STRING, st.endpoint, prog && *prog ? prog : "thread",
               (double)spin_ns / 1e3, dgram);
        printf("%d batches of ~%.0f ms each, alternating raw and libgas%s\n\n", o.reps,
               o.batch_s * 1e3, o.quick ? " (--quick: NOT a measurement)" : "");
        if (o.lat)
            latency_pair(&o);
        if (o.bw)
            bandwidth_pair(&o);
        uint64_t one = 1;
        check(gas_put(flag1, &one, 8), "gas_put");
    } else if (me == 1) {
        uint64_t *flag = gas_ptr_local(flag1);
        check(gas_wait_until_u64(flag, GAS_CMP_EQ, 1), "gas_wait_until_u64");
        atomic_store(&raw_stop, 1);
        pthread_join(server, NULL);
    }
    check(gas_barrier(), "gas_barrier");
    if (sock >= 0)
        close(sock);
    gas_finalize();
    return 0;
}
