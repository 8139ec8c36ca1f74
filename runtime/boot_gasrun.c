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
#include <unistd.h>

static int boot_fd = -1;
static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;

static gas_status_t lost(const char *what, int rc)
{
    return gas_rt_error(GAS_ERR_BOOTSTRAP, what, "lost the connection to gasrun: %s",
                        strerror(-rc));
}

/* Send one request and, when `want` is nonzero, read its reply. */
static gas_status_t request(const char *what, unsigned type, const void *payload, size_t len,
                            unsigned *rtype_p, void **reply_p, size_t *rlen_p)
{
    pthread_mutex_lock(&boot_lock);
    int rc = gas_boot_wire_send(boot_fd, type, payload, len);
    if (rc == 0 && rtype_p)
        rc = gas_boot_wire_recv(boot_fd, rtype_p, reply_p, rlen_p);
    pthread_mutex_unlock(&boot_lock);
    return rc == 0 ? GAS_OK : lost(what, rc);
}

static gas_status_t gasrun_kv_put(const char *key, const void *val, size_t len)
{
    size_t klen = strlen(key) + 1;
    unsigned char *msg = malloc(klen + len);
    if (msg == NULL)
        return GAS_ERR_NOMEM;
    memcpy(msg, key, klen);
    memcpy(msg + klen, val, len);
    gas_status_t st = request("bootstrap kv_put", GAS_BOOT_KV_PUT, msg, klen + len, NULL, NULL,
                              NULL);
    free(msg);
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
 * GAS_TIMEOUT fails with GAS_ERR_TIMEOUT (raised), naming it in both.
 */
static gas_status_t boot_wait_check(struct boot_wait *w, const char *what)
{
    uint64_t waited = gas_rt_now_ns() - w->start;
    if (w->timeout && waited >= w->timeout)
        return gas_rt_error(GAS_ERR_TIMEOUT, "gas_init", "waited %.1f s (GAS_TIMEOUT) for %s",
                            (double)waited / 1e9, what);
    if (w->warn && !w->warned && waited >= w->warn) {
        gas_log_warn("boot", "gas_init has waited %.0f s for %s", (double)waited / 1e9, what);
        w->warned = 1;
    }
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
    unsigned type;
    void *reply = NULL;
    size_t rlen;
    pthread_mutex_lock(&boot_lock);
    int rc = gas_boot_wire_send(boot_fd, GAS_BOOT_BARRIER, NULL, 0);
    gas_status_t st = rc == 0 ? await_reply(what) : lost("bootstrap barrier", rc);
    if (st == GAS_OK && (rc = gas_boot_wire_recv(boot_fd, &type, &reply, &rlen)) != 0)
        st = lost("bootstrap barrier", rc);
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
        if (fcntl((int)fd, F_GETFD) < 0)
            return gas_rt_error(GAS_ERR_BOOTSTRAP, "gas_init",
                                "GASRUN_BOOT_FD=%ld is not open: %s", fd, strerror(errno));
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
                                               "on an address this host reaches: gasrun --bind)"
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
    unsigned char hello[20];
    gas_boot_put_u32(hello, GAS_BOOT_WIRE_VERSION);
    gas_boot_put_u64(hello + 4, b->job_key);
    gas_boot_put_u32(hello + 12, (uint32_t)rank);
    gas_boot_put_u32(hello + 16, (uint32_t)getpid());
    unsigned type;
    void *reply = NULL;
    size_t rlen;
    pthread_mutex_lock(&boot_lock);
    int rc = gas_boot_wire_send(boot_fd, GAS_BOOT_HELLO, hello, sizeof hello);
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
    if (fd_text == NULL)
        gas_rt_boot_watch_start(boot_fd, addr);
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
