/*
 * bench_ref.c - the references gas-bench measures in the same run, rank 0
 * alone, before the results:
 *  - memcpy bandwidth between two private page-aligned buffers, per size:
 *    bandwidth rows print their percentage of it;
 *  - the round trip of one 64-byte cache line bounced between rank 0 and a
 *    forked child process (not a rank) through a MAP_SHARED page, the floor
 *    of any shared-memory round trip: latency rows print their multiple of it;
 *  - fetch-add throughput on a private word (CPU atomics): rate rows print
 *    their percentage of it;
 *  - with GAS_TRANSPORT=udp (or --udp-ref), a raw UDP ping-pong of 64-byte
 *    datagrams and a raw sendmmsg stream of 1472-byte datagrams with a forked
 *    child over loopback, both ends busy-polling (the floor of the udp path):
 *    latency rows then print their multiple of the UDP round trip and
 *    bandwidth rows their percentage of the stream.
 */
#include "gas-bench.h"

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PINGPONG_STOP UINT64_MAX
#define PINGPONG_TIMEOUT_S 5.0
#define UDP_PP_SIZE 64
#define UDP_DGRAM 1472      /* an Ethernet MTU's UDP payload */
#define UDP_BATCH 64        /* datagrams per sendmmsg */
#define UDP_RCVBUF (8 << 20)
#define UDP_TIMEOUT_S 5.0

static uint64_t memcpy_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        memcpy(b->dst, b->src, size);
        __asm__ __volatile__("" ::: "memory"); /* keep every copy */
    }
    return 0;
}

/* The child: answer every odd value with the next even one, until told to stop. */
static void pingpong_child(volatile uint64_t *line, pid_t parent, unsigned yield_mask)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    for (unsigned spins = 0;; spins++) {
        uint64_t v = __atomic_load_n(line, __ATOMIC_ACQUIRE);
        if (v == PINGPONG_STOP)
            _exit(0);
        if (v & 1) {
            __atomic_store_n(line, v + 1, __ATOMIC_RELEASE);
            spins = 0;
        } else if ((spins & yield_mask) == yield_mask) {
            sched_yield(); /* lets a single CPU make progress */
        }
    }
}

/*
 * Fork the child.  With two CPUs or more, rank 0 and the child are pinned to
 * two different ones (spinning on one CPU would measure the scheduler);
 * pingpong_stop() gives rank 0 its CPUs back.
 */
static void pingpong_setup(struct bench *b, size_t size)
{
    if (b->pp_line == NULL) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
            bench_die("mmap of the ping-pong page: %s", strerror(errno));
        b->pp_line = page; /* page-aligned, so the word owns its 64-byte line */
    }
    if (b->pp_child > 0)
        return;
    *b->pp_line = 0;
    b->pp_seq = 0;
    b->pp_cpu[0] = b->pp_cpu[1] = -1;
    cpu_set_t one;
    if (sched_getaffinity(0, sizeof b->pp_saved, &b->pp_saved) == 0 &&
        CPU_COUNT(&b->pp_saved) >= 2) {
        int here = sched_getcpu();
        b->pp_cpu[0] = here >= 0 && CPU_ISSET(here, &b->pp_saved) ? here : -1;
        for (int c = 0; c < CPU_SETSIZE && b->pp_cpu[1] < 0; c++) {
            if (!CPU_ISSET(c, &b->pp_saved) || c == b->pp_cpu[0])
                continue;
            if (b->pp_cpu[0] < 0)
                b->pp_cpu[0] = c;
            else
                b->pp_cpu[1] = c;
        }
        CPU_ZERO(&one);
        CPU_SET(b->pp_cpu[0], &one);
        sched_setaffinity(0, sizeof one, &one);
    }
    b->pp_yield_mask = b->pp_cpu[1] >= 0 ? 4095 : 15;
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork for the ping-pong reference: %s", strerror(errno));
    if (pid == 0) {
        if (b->pp_cpu[1] >= 0) {
            CPU_ZERO(&one);
            CPU_SET(b->pp_cpu[1], &one);
            sched_setaffinity(0, sizeof one, &one);
        }
        pingpong_child(b->pp_line, parent, b->pp_yield_mask);
    }
    b->pp_child = pid;
}

static void pingpong_stop(struct bench *b)
{
    if (b->pp_child <= 0)
        return;
    __atomic_store_n(b->pp_line, PINGPONG_STOP, __ATOMIC_RELEASE);
    waitpid(b->pp_child, NULL, 0);
    b->pp_child = 0;
    if (b->pp_cpu[0] >= 0)
        sched_setaffinity(0, sizeof b->pp_saved, &b->pp_saved);
}

static uint64_t pingpong_batch(struct bench *b, size_t size, uint64_t iters)
{
    for (uint64_t i = 0; i < iters; i++) {
        uint64_t v = b->pp_seq + 1;
        double waiting_since = 0;
        __atomic_store_n(b->pp_line, v, __ATOMIC_RELEASE);
        for (unsigned spins = 1; __atomic_load_n(b->pp_line, __ATOMIC_ACQUIRE) != v + 1; spins++) {
            if ((spins & b->pp_yield_mask) == 0)
                sched_yield();
            if ((spins & 0xfffff) == 0) {
                if (waiting_since == 0)
                    waiting_since = bench_now_s();
                else if (bench_now_s() - waiting_since > PINGPONG_TIMEOUT_S)
                    bench_die("the ping-pong child stopped answering");
            }
        }
        b->pp_seq = v + 1;
    }
    return 0;
}

static void fill_src(struct bench *b, size_t size)
{
    bench_fill_pattern(b->src, size, b->seed);
}

static uint64_t local_fadd_batch(struct bench *b, size_t size, uint64_t iters)
{
    static uint64_t word;
    for (uint64_t i = 0; i < iters; i++)
        __atomic_fetch_add(&word, 1, __ATOMIC_SEQ_CST);
    return 0;
}

/* ---- raw UDP over loopback with a forked child ---- */

enum { UDP_DATA = 1, UDP_END = 2, UDP_QUIT = 3 };

struct bench_udp {
    int fd;
    pid_t child;
    struct sockaddr_in peer;
};

static int udp_socket(struct sockaddr_in *addr)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        bench_die("socket: %s", strerror(errno));
    int rb = UDP_RCVBUF;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rb, sizeof rb) < 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb); /* capped: fine */
    *addr = (struct sockaddr_in){ .sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof *addr;
    if (bind(fd, (struct sockaddr *)addr, sizeof *addr) < 0 ||
        getsockname(fd, (struct sockaddr *)addr, &len) < 0)
        bench_die("bind to loopback: %s", strerror(errno));
    return fd;
}

/* Busy-poll one datagram; -1 after UDP_TIMEOUT_S. */
static ssize_t udp_recv_spin(int fd, void *buf, size_t cap)
{
    double since = 0;
    for (unsigned spins = 1;; spins++) {
        ssize_t n = recv(fd, buf, cap, MSG_DONTWAIT);
        if (n >= 0)
            return n;
        if ((spins & 0xffff) == 0) {
            if (since == 0)
                since = bench_now_s();
            else if (bench_now_s() - since > UDP_TIMEOUT_S)
                return -1;
        }
    }
}

/*
 * The child echoes ping-pong datagrams, drains stream datagrams with
 * recvmmsg and answers UDP_END with the bytes received since the last one.
 */
static void udp_child(int fd, pid_t parent)
{
    static unsigned char bufs[UDP_BATCH][UDP_DGRAM];
    struct mmsghdr m[UDP_BATCH];
    struct iovec iov[UDP_BATCH];
    uint64_t got = 0;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    for (int i = 0; i < UDP_BATCH; i++) {
        iov[i] = (struct iovec){ bufs[i], UDP_DGRAM };
        m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
    }
    for (;;) {
        int n = recvmmsg(fd, m, UDP_BATCH, MSG_DONTWAIT, NULL);
        if (n <= 0)
            continue;
        for (int i = 0; i < n; i++) {
            unsigned char kind = bufs[i][0];
            if (kind == UDP_DATA) {
                got += m[i].msg_len;
                continue;
            }
            if (kind == UDP_QUIT)
                _exit(0);
            if (kind == UDP_END) {
                memcpy(bufs[i] + 8, &got, sizeof got);
                got = 0;
            }
            /* echo (ping-pong) or the count (end of a stream batch) */
            send(fd, bufs[i], m[i].msg_len < 16 ? 16 : m[i].msg_len, 0);
        }
    }
}

static void udp_setup(struct bench *b, size_t size)
{
    if (b->udp)
        return;
    struct bench_udp *u = calloc(1, sizeof *u);
    if (u == NULL)
        bench_die("out of memory");
    struct sockaddr_in mine, theirs;
    u->fd = udp_socket(&mine);
    int cfd = udp_socket(&theirs);
    if (connect(u->fd, (struct sockaddr *)&theirs, sizeof theirs) < 0 ||
        connect(cfd, (struct sockaddr *)&mine, sizeof mine) < 0)
        bench_die("connect on loopback: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid < 0)
        bench_die("fork for the UDP reference: %s", strerror(errno));
    if (pid == 0) {
        close(u->fd);
        udp_child(cfd, parent);
    }
    close(cfd);
    u->child = pid;
    b->udp = u;
}

static void udp_stop(struct bench *b)
{
    struct bench_udp *u = b->udp;
    if (u == NULL)
        return;
    unsigned char quit[16] = { UDP_QUIT };
    send(u->fd, quit, sizeof quit, 0);
    kill(u->child, SIGKILL); /* (the datagram may be dropped) */
    waitpid(u->child, NULL, 0);
    close(u->fd);
    free(u);
    b->udp = NULL;
}

static uint64_t udp_pingpong_batch(struct bench *b, size_t size, uint64_t iters)
{
    unsigned char buf[UDP_PP_SIZE] = { 0 }, in[UDP_DGRAM];
    for (uint64_t i = 0; i < iters; i++) {
        buf[0] = 0; /* neither data nor end: echoed */
        memcpy(buf + 8, &i, sizeof i);
        if (send(b->udp->fd, buf, sizeof buf, 0) < 0)
            bench_die("send: %s", strerror(errno));
        if (udp_recv_spin(b->udp->fd, in, sizeof in) < 0)
            bench_die("the UDP ping-pong child stopped answering (a datagram lost on loopback?)");
    }
    return 0;
}

/* Bytes arrive at the child; the batch ends with its count (drops do not count). */
static uint64_t udp_stream_batch(struct bench *b, size_t size, uint64_t iters)
{
    static unsigned char buf[UDP_DGRAM];
    struct mmsghdr m[UDP_BATCH];
    struct iovec iov = { buf, UDP_DGRAM };
    buf[0] = UDP_DATA;
    for (int i = 0; i < UDP_BATCH; i++)
        m[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
    /* iters counts bytes of `size`; send as many datagrams */
    uint64_t total = (uint64_t)size * iters, ndg = (total + UDP_DGRAM - 1) / UDP_DGRAM;
    while (ndg > 0) {
        unsigned n = ndg < UDP_BATCH ? (unsigned)ndg : UDP_BATCH;
        int r = sendmmsg(b->udp->fd, m, n, 0);
        if (r < 0 && errno != EAGAIN && errno != ENOBUFS)
            bench_die("sendmmsg: %s", strerror(errno));
        ndg -= r > 0 ? (uint64_t)r : 0;
    }
    unsigned char end[16] = { UDP_END }, in[UDP_DGRAM];
    for (;;) {
        send(b->udp->fd, end, sizeof end, 0);
        ssize_t n = udp_recv_spin(b->udp->fd, in, sizeof in);
        if (n >= 16 && in[0] == UDP_END) {
            memcpy(&b->counted_bytes, in + 8, sizeof b->counted_bytes);
            return 0;
        }
        if (n < 0)
            bench_die("the UDP stream child stopped answering");
    }
}

void bench_ref_stop(struct bench *b)
{
    pingpong_stop(b);
    udp_stop(b);
}

const struct mode bench_ref_modes[] = {
    { .name = "pingpong", .group = "ref", .kind = KIND_LAT, .fixed_size = 64, .reference = 1,
      .setup = pingpong_setup, .batch = pingpong_batch,
      .doc = "reference: 64-byte cache-line round trip with a forked child (MAP_SHARED)" },
    { .name = "memcpy", .group = "ref", .kind = KIND_BW, .sized = 1, .reference = 1,
      .setup = fill_src, .batch = memcpy_batch,
      .doc = "reference: memcpy between two private buffers of rank 0" },
    { .name = "local-fadd", .group = "ref", .kind = KIND_RATE, .fixed_size = 8, .reference = 1,
      .batch = local_fadd_batch, .doc = "reference: fetch-add on a private word" },
    { .name = "udp-pingpong", .group = "ref-udp", .kind = KIND_LAT, .fixed_size = UDP_PP_SIZE,
      .reference = 1, .setup = udp_setup, .batch = udp_pingpong_batch,
      .doc = "reference: raw UDP round trip over loopback, both ends busy-polling" },
    { .name = "udp-stream", .group = "ref-udp", .kind = KIND_BW, .fixed_size = UDP_DGRAM,
      .reference = 1, .counted = 1, .setup = udp_setup, .batch = udp_stream_batch,
      .doc = "reference: raw sendmmsg stream of 1472-byte datagrams over loopback, counted at the receiver" },
};
const size_t bench_nref_modes = sizeof bench_ref_modes / sizeof bench_ref_modes[0];
