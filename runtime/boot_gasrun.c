/*
 * boot_gasrun.c - bootstrap for a rank started by gasrun: speaks the protocol of
 * boot_wire.h over the inherited socket named by GASRUN_BOOT_FD, or, for a rank
 * on another host, over a TCP connection to GASRUN_BOOT_ADDR (boot_tcp.h),
 * watched by boot_watch.c.  Requests are serialised by a mutex (a lazy peer
 * lookup may come from any thread).
 */
#include "boot.h"
#include "boot_tcp.h"
#include "boot_wire.h"
#include "clock.h"
#include "config.h"
#include "error.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static int boot_fd = -1;
static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;

/* A TCP boot connection (GASRUN_BOOT_ADDR) that the kernel gives up on is
 * replaced (resume()); these, under boot_lock, are what that needs. */
static const char *boot_addr;                   /* NULL: an inherited socket */
static unsigned char boot_hello[GAS_BOOT_HELLO_LEN]; /* said again as RESUME */
static uint64_t barriers_done;                  /* boot barriers this rank completed */
static int boot_dead;                           /* -errno: resume() failed for good */
struct boot_put {
    struct boot_put *next;
    size_t len;
    unsigned char msg[];                        /* a KV_PUT payload */
};
static struct boot_put *boot_puts, **boot_puts_end = &boot_puts; /* sent again after a RESUME,
                                                                   in the order first sent */

static gas_status_t lost(const char *what, int rc)
{
    return gas_rt_error(GAS_ERR_BOOTSTRAP, what, "lost the connection to gasrun: %s",
                        strerror(-rc));
}

/* How long a broken boot connection is tried again: as long as the udp
 * transport waits for a silent peer, and at least GAS_BOOT_TCP_DEAD_S. */
static uint64_t resume_window_ns(void)
{
    uint64_t peer = gas_rt_config_ns(GAS_CFG_UDP_PEER_TIMEOUT);
    uint64_t dead = (uint64_t)GAS_BOOT_TCP_DEAD_S * 1000000000u;
    return peer > dead ? peer : dead;
}

/* On a new connection: RESUME, its RESUME_OK, and the KV_PUTs again; 0 or
 * -errno, with what gasrun says of the boot barrier in *done_p, *in_barrier_p. */
static int resume_on(int fd, uint64_t *done_p, int *in_barrier_p)
{
    unsigned type;
    void *reply = NULL;
    size_t rlen = 0;
    int rc = gas_boot_wire_send(fd, GAS_BOOT_RESUME, boot_hello, sizeof boot_hello);
    if (rc == 0)
        rc = gas_boot_wire_recv(fd, &type, &reply, &rlen);
    if (rc == 0 && (type != GAS_BOOT_RESUME_OK || rlen < GAS_BOOT_RESUME_OK_LEN))
        rc = -EPROTO;
    if (rc == 0) {
        *done_p = gas_boot_get_u64((unsigned char *)reply + 4);
        *in_barrier_p = gas_boot_get_u32((unsigned char *)reply + 12) != 0;
    }
    free(reply);
    for (struct boot_put *p = boot_puts; p != NULL && rc == 0; p = p->next)
        rc = gas_boot_wire_send(fd, GAS_BOOT_KV_PUT, p->msg, p->len);
    return rc;
}

/*
 * The boot connection failed with `cause` (-errno).  When it is a TCP
 * connection that the kernel gave up on (gas_boot_tcp_fate: BROKEN, a network
 * outage, not gasrun closing it), connect to GASRUN_BOOT_ADDR again for up to
 * resume_window_ns() and say RESUME (boot_wire.h); the new connection takes
 * boot_fd's number, so the watchdog and later requests use it.  Returns 0
 * (gasrun's barrier count and whether it counts this rank in the current
 * barrier in *done_p, *in_barrier_p), or -errno: `cause` when there is
 * nothing to resume, else why it failed (logged; it stays failed).  Called
 * with boot_lock held.
 */
static int resume(int cause, uint64_t *done_p, int *in_barrier_p)
{
    if (boot_addr == NULL || cause == -EPROTO || cause == -ENOMEM)
        return cause;
    if (boot_dead)
        return boot_dead;
    if (gas_boot_tcp_fate(boot_fd) != GAS_BOOT_TCP_BROKEN)
        return cause;
    uint64_t start = gas_rt_now_ns(), window = resume_window_ns();
    gas_log_warn("boot", "the connection to gasrun (%s) broke: %s (a network outage?); "
                 "connecting again for up to %.0f s (the longer of 30 s and "
                 "GAS_UDP_PEER_TIMEOUT)", boot_addr, strerror(-cause), (double)window / 1e9);
    int rc = -ETIMEDOUT;
    while (gas_rt_now_ns() - start < window) {
        uint64_t tried = gas_rt_now_ns(), left_ms = (window - (tried - start)) / 1000000 + 1;
        int fd = gas_boot_tcp_connect(boot_addr, left_ms < 1000 ? (int)left_ms : 1000);
        if (fd == -ECONNREFUSED) {
            rc = fd;        /* the host answers, nothing listens: gasrun is gone */
            break;
        }
        if (fd < 0) {       /* unreachable still; it paused, unless the error was odd */
            if (gas_rt_now_ns() - tried < 100000000u)
                usleep(100000);
            continue;
        }
        rc = resume_on(fd, done_p, in_barrier_p);
        if (rc == 0 && dup3(fd, boot_fd, O_CLOEXEC) < 0)
            rc = -errno;
        enum gas_boot_tcp_fate fate = gas_boot_tcp_fate(fd);
        close(fd);
        if (rc == 0) {
            gas_log_warn("boot", "connected to gasrun (%s) again after %.1f s", boot_addr,
                         (double)(gas_rt_now_ns() - start) / 1e9);
            return 0;
        }
        if (fate != GAS_BOOT_TCP_BROKEN)
            break;          /* gasrun closed it: it refuses this rank */
        rc = -ETIMEDOUT;    /* broke again: the outage goes on */
    }
    boot_dead = rc;
    if (rc == -ETIMEDOUT)
        gas_log_error("boot", "cannot connect to gasrun (%s) again: no answer within %.0f s "
                      "(GAS_UDP_PEER_TIMEOUT, at least 30 s)", boot_addr, (double)window / 1e9);
    else
        gas_log_error("boot", "cannot connect to gasrun (%s) again: %s", boot_addr,
                      rc == -ECONNREFUSED ? "connection refused: gasrun is gone"
                                          : "gasrun refused this rank (its job is over)");
    return rc;
}

/* For the watchdog: the boot connection broke; resume it unless a request
 * did so meanwhile.  0, or -errno (the rank is to end). */
static int watch_resume(void)
{
    uint64_t done;
    int in_barrier;
    int err = 0, rc = 0;
    socklen_t elen = sizeof err;
    pthread_mutex_lock(&boot_lock);
    if (gas_boot_tcp_fate(boot_fd) != GAS_BOOT_TCP_OPEN) {
        /* No request runs (we hold the lock): the pending error is ours to take. */
        if (getsockopt(boot_fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err == 0)
            err = ECONNRESET;
        rc = resume(-err, &done, &in_barrier);
    }
    pthread_mutex_unlock(&boot_lock);
    return rc;
}

/* Send one request and, when rtype_p is set, read its reply; a request whose
 * connection broke is sent again on the resumed one (every request but the
 * barrier, which has its own, may be: KV_GET and FINI repeat harmlessly). */
static gas_status_t request(const char *what, unsigned type, const void *payload, size_t len,
                            unsigned *rtype_p, void **reply_p, size_t *rlen_p)
{
    uint64_t done;
    int in_barrier, rc;
    pthread_mutex_lock(&boot_lock);
    do {
        rc = gas_boot_wire_send(boot_fd, type, payload, len);
        if (rc == 0 && rtype_p)
            rc = gas_boot_wire_recv(boot_fd, rtype_p, reply_p, rlen_p);
    } while (rc != 0 && resume(rc, &done, &in_barrier) == 0);
    pthread_mutex_unlock(&boot_lock);
    return rc == 0 ? GAS_OK : lost(what, rc);
}

static gas_status_t gasrun_kv_put(const char *key, const void *val, size_t len)
{
    size_t klen = strlen(key) + 1;
    struct boot_put *put = malloc(sizeof *put + klen + len);
    if (put == NULL)
        return GAS_ERR_NOMEM;
    put->len = klen + len;
    memcpy(put->msg, key, klen);
    memcpy(put->msg + klen, val, len);
    gas_status_t st = request("bootstrap kv_put", GAS_BOOT_KV_PUT, put->msg, put->len, NULL,
                              NULL, NULL);
    if (st != GAS_OK || boot_addr == NULL) {
        free(put);
        return st;
    }
    pthread_mutex_lock(&boot_lock); /* kept: a RESUME sends it again */
    put->next = NULL;
    *boot_puts_end = put;
    boot_puts_end = &put->next;
    pthread_mutex_unlock(&boot_lock);
    return st;
}

static gas_status_t gasrun_kv_get(int rank, const char *key, void **val_p, size_t *len_p)
{
    size_t klen = strlen(key) + 1;
    unsigned char *msg = malloc(4 + klen);
    if (msg == NULL)
        return GAS_ERR_NOMEM;
    gas_boot_put_u32(msg, (uint32_t)rank);
    memcpy(msg + 4, key, klen);
    unsigned type;
    void *reply = NULL;
    size_t rlen;
    gas_status_t st = request("bootstrap kv_get", GAS_BOOT_KV_GET, msg, 4 + klen, &type, &reply,
                              &rlen);
    free(msg);
    if (st != GAS_OK)
        return st;
    if (type == GAS_BOOT_KV_VALUE) {
        *val_p = reply;
        *len_p = rlen;
        return GAS_OK;
    }
    free(reply);
    return type == GAS_BOOT_KV_MISSING
               ? GAS_ERR_INVALID
               : gas_rt_error(GAS_ERR_BOOTSTRAP, "bootstrap kv_get", "unexpected reply %u", type);
}

/* A wait of gas_init's (the waits of libgas proper are not set up yet). */
struct boot_wait {
    uint64_t start, timeout, warn;   /* GAS_TIMEOUT, GAS_STALL_WARN (0: never) */
    int warned;
};

static struct boot_wait boot_wait_begin(void)
{
    return (struct boot_wait){gas_rt_now_ns(), gas_rt_config_ns(GAS_CFG_TIMEOUT),
                              gas_rt_config_ns(GAS_CFG_STALL_WARN), 0};
}

/*
 * Still waiting for `what`: warns once after GAS_STALL_WARN, and after
 * GAS_TIMEOUT fails with GAS_ERR_TIMEOUT (raised), naming it in both.  The
 * warning comes first even when a late look finds both due.
 */
static gas_status_t boot_wait_check(struct boot_wait *w, const char *what)
{
    uint64_t waited = gas_rt_now_ns() - w->start;
    if (w->warn && !w->warned && waited >= w->warn && (!w->timeout || w->warn < w->timeout)) {
        gas_log_warn("boot", "gas_init has waited %.1f s (GAS_STALL_WARN) for %s",
                     (double)waited / 1e9, what);
        w->warned = 1;
    }
    if (w->timeout && waited >= w->timeout)
        return gas_rt_error(GAS_ERR_TIMEOUT, "gas_init", "waited %.1f s (GAS_TIMEOUT) for %s",
                            (double)waited / 1e9, what);
    return GAS_OK;
}

/* Wait until the boot socket has something to read (boot_wait_check's limits). */
static gas_status_t await_reply(const char *what)
{
    struct boot_wait w = boot_wait_begin();
    for (;;) {
        struct pollfd pfd = {.fd = boot_fd, .events = POLLIN};
        if (poll(&pfd, 1, 100) > 0)
            return GAS_OK; /* data, EOF or an error: the read says which */
        gas_status_t st = boot_wait_check(&w, what);
        if (st != GAS_OK)
            return st;
    }
}

/* The boot barrier (gas_init's only), bounded by GAS_TIMEOUT. */
static gas_status_t gasrun_barrier(void)
{
    const char *what = "the other ranks in the bootstrap barrier (every rank has connected; "
                       "some have not reached the barrier)";
    unsigned type = 0;
    void *reply = NULL;
    size_t rlen;
    uint64_t done;
    int in_barrier;
    gas_status_t st = GAS_OK;
    pthread_mutex_lock(&boot_lock);
    int rc = gas_boot_wire_send(boot_fd, GAS_BOOT_BARRIER, NULL, 0);
    for (;;) {
        if (rc == 0 && (st = await_reply(what)) == GAS_OK)
            rc = gas_boot_wire_recv(boot_fd, &type, &reply, &rlen);
        if (rc == 0 || st != GAS_OK)
            break;
        /* The connection broke: after a RESUME, the barrier is over (its
         * BARRIER_DONE was lost), still counts this rank, or never got its BARRIER. */
        if ((rc = resume(rc, &done, &in_barrier)) != 0) {
            st = lost("bootstrap barrier", rc);
            break;
        }
        if (done > barriers_done) {
            type = GAS_BOOT_BARRIER_DONE;
            break;
        }
        rc = in_barrier ? 0 : gas_boot_wire_send(boot_fd, GAS_BOOT_BARRIER, NULL, 0);
    }
    if (st == GAS_OK && type == GAS_BOOT_BARRIER_DONE)
        barriers_done++;
    pthread_mutex_unlock(&boot_lock);
    free(reply);
    if (st == GAS_OK && type != GAS_BOOT_BARRIER_DONE)
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "bootstrap barrier", "unexpected reply %u", type);
    return st;
}

static void gasrun_abort(int code, const char *msg)
{
    size_t mlen = msg ? strlen(msg) : 0;
    unsigned char *buf = malloc(4 + mlen);
    if (buf == NULL)
        return;
    gas_boot_put_u32(buf, (uint32_t)code);
    if (mlen)
        memcpy(buf + 4, msg, mlen);
    /* No lock: the abort may come from a thread that holds it; a torn message
     * only makes gasrun see a broken connection, which also ends the job. */
    gas_boot_wire_send(boot_fd, GAS_BOOT_ABORT, buf, 4 + mlen);
    free(buf);
}

static void gasrun_fini(void)
{
    request("bootstrap fini", GAS_BOOT_FINI, NULL, 0, NULL, NULL, NULL);
    gas_rt_boot_watch_stop();
    close(boot_fd);
    boot_fd = -1;
    while (boot_puts != NULL) {
        struct boot_put *p = boot_puts;
        boot_puts = p->next;
        free(p);
    }
    boot_puts_end = &boot_puts;
}

/*
 * Wait until every rank of the job has said HELLO to gasrun (it called
 * gas_init), polling gasrun's set of joined ranks (GAS_BOOT_KEY_JOINED).
 * Warns once after GAS_STALL_WARN and fails with GAS_ERR_TIMEOUT after
 * GAS_TIMEOUT, naming the ranks not yet arrived.  A gasrun that does not
 * serve the set: returns at once (the barrier that follows waits).
 */
static gas_status_t wait_all_joined(uint32_t nranks)
{
    struct boot_wait w = boot_wait_begin();
    uint64_t nap_us = 1000;
    for (;;) {
        void *bits = NULL;
        size_t len = 0;
        gas_status_t st = gasrun_kv_get(0, GAS_BOOT_KEY_JOINED, &bits, &len);
        if (st == GAS_ERR_INVALID)
            return GAS_OK; /* KV_MISSING: an older gasrun */
        if (st != GAS_OK)
            return st;
        if (len < (nranks + 7) / 8) {
            free(bits);
            return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init", "gasrun's %s has %zu bytes for "
                                "%u ranks", GAS_BOOT_KEY_JOINED, len, nranks);
        }
        char missing[256];
        uint32_t n = gas_boot_format_ranks(bits, nranks, 0, missing, sizeof missing);
        free(bits);
        if (n == 0)
            return GAS_OK;
        char what[320];
        snprintf(what, sizeof what, "%u of %u ranks to call gas_init; not arrived: rank%s %s", n,
                 nranks, n == 1 ? "" : "s", missing);
        if ((st = boot_wait_check(&w, what)) != GAS_OK)
            return st;
        usleep((useconds_t)nap_us);
        if (nap_us < 100000)
            nap_us *= 2;
    }
}

static int env_int(const char *name, long lo, long hi, long *out)
{
    const char *s = getenv(name);
    char *end;
    if (s == NULL)
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int gas_rt_boot_gasrun_rank(void)
{
    long rank;
    return env_int("GASRUN_RANK", 0, INT32_MAX, &rank) == 0 ? (int)rank : -1;
}

/* The boot socket: inherited (GASRUN_BOOT_FD), or connected to GASRUN_BOOT_ADDR. */
static gas_status_t open_socket(const char *fd_text, const char *addr)
{
    if (fd_text != NULL) {
        long fd;
        if (env_int("GASRUN_BOOT_FD", 0, 1 << 20, &fd))
            return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                                "GASRUN_BOOT_FD=%s is not a file descriptor number", fd_text);
        struct stat st;
        int e = fstat((int)fd, &st) < 0 ? errno : S_ISSOCK(st.st_mode) ? 0 : ENOTSOCK;
        if (e != 0)   /* (a program a rank started, e.g. with system(), inherits GASRUN_*) */
            return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                                "GASRUN_BOOT_FD=%ld is %s: this process is not a rank gasrun "
                                "started (gasrun's ranks close that socket in the programs they "
                                "start, which inherit the GASRUN_* variables); to run a libgas "
                                "program from inside a rank as a job of its own, remove every "
                                "GASRUN_* variable from its environment, or start it with gasrun",
                                fd, e == ENOTSOCK ? "not a socket" : "not open");
        fcntl((int)fd, F_SETFD, FD_CLOEXEC);
        boot_fd = (int)fd;
        return GAS_OK;
    }
    uint64_t ns = gas_rt_config_ns(GAS_CFG_BOOT_TIMEOUT);
    int ms = ns == 0 ? 0 : ns / 1000000 > INT32_MAX ? INT32_MAX : (int)(ns / 1000000) + 1;
    int fd = gas_boot_tcp_connect(addr, ms);
    if (fd == -EINVAL)
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "GASRUN_BOOT_ADDR=%s is not a numeric ip:port or [ipv6]:port", addr);
    if (fd < 0) {
        char tried[80] = "";
        if (fd != -ETIMEDOUT && ms > 0)
            snprintf(tried, sizeof tried, " (tried again for GAS_BOOT_TIMEOUT, %.1f s)", ns / 1e9);
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "cannot connect to gasrun's rendezvous at %s (GASRUN_BOOT_ADDR): %s%s",
                            addr, strerror(-fd),
                            fd == -ETIMEDOUT ? " (raise GAS_BOOT_TIMEOUT, or make gasrun listen "
                                               "on an address this host reaches: gasrun --rendezvous)"
                                             : tried);
    }
    boot_fd = fd;
    return GAS_OK;
}

gas_status_t gas_rt_boot_gasrun_open(struct gas_rt_boot *b)
{
    const char *fd_text = getenv("GASRUN_BOOT_FD"), *addr = getenv("GASRUN_BOOT_ADDR");
    long rank, nranks, lrank = 0, lsize = 1;
    if (env_int("GASRUN_RANK", 0, INT32_MAX, &rank) ||
        env_int("GASRUN_NRANKS", 1, INT32_MAX, &nranks) || rank >= nranks)
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "%s=%s but GASRUN_RANK/GASRUN_NRANKS are missing or bad; "
                            "start the program with gasrun",
                            fd_text ? "GASRUN_BOOT_FD" : "GASRUN_BOOT_ADDR",
                            fd_text ? fd_text : addr);
    env_int("GASRUN_LOCAL_RANK", 0, INT32_MAX, &lrank);
    env_int("GASRUN_LOCAL_SIZE", 1, INT32_MAX, &lsize);
    const char *key = getenv("GASRUN_JOB_KEY"), *id = getenv("GASRUN_JOB_ID");
    gas_status_t st = open_socket(fd_text, addr);
    if (st != GAS_OK)
        return st;
    *b = (struct gas_rt_boot){
        .name = fd_text ? "gasrun" : "gasrun-tcp",
        .rank = (int)rank, .nranks = (int)nranks,
        .local_rank = (int)lrank, .local_size = (int)lsize,
        .job_key = key ? strtoull(key, NULL, 16) : 0,
        .job_id = id ? (uint32_t)strtoul(id, NULL, 16) : 0,
        .kv_put = gasrun_kv_put, .kv_get = gasrun_kv_get, .barrier = gasrun_barrier,
        .abort = gasrun_abort, .fini = gasrun_fini,
    };
    unsigned char *hello = boot_hello;
    gas_boot_put_u32(hello, GAS_BOOT_WIRE_VERSION);
    gas_boot_put_u64(hello + 4, b->job_key);
    gas_boot_put_u32(hello + 12, (uint32_t)rank);
    gas_boot_put_u32(hello + 16, (uint32_t)getpid());
    unsigned type;
    void *reply = NULL;
    size_t rlen;
    pthread_mutex_lock(&boot_lock);
    int rc = gas_boot_wire_send(boot_fd, GAS_BOOT_HELLO, hello, sizeof boot_hello);
    if (rc == 0)
        rc = gas_boot_wire_recv(boot_fd, &type, &reply, &rlen);
    pthread_mutex_unlock(&boot_lock);
    if (rc < 0) {
        close(boot_fd);
        boot_fd = -1;
        if (fd_text != NULL)
            return lost("gas_init", rc);
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "gasrun at %s (GASRUN_BOOT_ADDR) closed the connection after HELLO "
                            "(%s): it does not know this rank (wrong GASRUN_JOB_KEY or rank), "
                            "the HELLO reached it later than it waits (GAS_BOOT_TIMEOUT), or "
                            "its job is over", addr, strerror(-rc));
    }
    uint32_t n = rlen >= 4 ? gas_boot_get_u32(reply) : 0;
    free(reply);
    if (type != GAS_BOOT_HELLO_OK || n != (uint32_t)nranks) {
        close(boot_fd);
        boot_fd = -1;
        return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                            "gasrun refused this rank (reply %u, %u ranks; expected %ld)", type, n,
                            nranks);
    }
    if (fd_text == NULL) {
        boot_addr = addr;   /* the environment's: it stays */
        gas_rt_boot_watch_start(boot_fd, addr, watch_resume);
    }
    gas_rt_log_rank_ = (int)rank; /* the messages of the wait name this rank */
    st = wait_all_joined((uint32_t)nranks);
    if (st != GAS_OK) {
        if (fd_text == NULL)
            gas_rt_boot_watch_stop();
        close(boot_fd);
        boot_fd = -1;
    }
    return st;
}
