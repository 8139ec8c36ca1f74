/* boot_tcp.c - addresses and connections of the boot protocol over TCP (see boot_tcp.h). */
#include "boot_tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEPIDLE_S  10
#define KEEPINTVL_S 5
#define KEEPCNT     4   /* 10 + 4 * 5 = 30 = GAS_BOOT_TCP_DEAD_S */

int gas_boot_addr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len_p)
{
    char host[GAS_BOOT_ADDR_MAX];
    const char *colon = strrchr(text, ':'), *port = colon ? colon + 1 : NULL;
    size_t hlen = colon ? (size_t)(colon - text) : 0;
    if (colon == NULL || hlen == 0 || hlen >= sizeof host || *port == '\0' ||
        strspn(port, "0123456789") != strlen(port) || strlen(port) > 5 || atoi(port) > 65535)
        return -EINVAL;
    memcpy(host, text, hlen);
    host[hlen] = '\0';
    if (host[0] == '[') {
        if (hlen < 3 || host[hlen - 1] != ']')
            return -EINVAL;
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = '\0';
    } else if (strchr(host, ':') != NULL) {
        return -EINVAL;     /* an IPv6 address needs its brackets */
    }
    struct addrinfo hints = {
        .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
    };
    struct addrinfo *ai;
    if (getaddrinfo(host, port, &hints, &ai) != 0)
        return -EINVAL;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *len_p = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

void gas_boot_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t size)
{
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getnameinfo(sa, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, size, "(address of family %d)", sa->sa_family);
        return;
    }
    snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

void gas_boot_tcp_tune(int fd)
{
    int one = 1, idle = KEEPIDLE_S, intvl = KEEPINTVL_S, cnt = KEEPCNT;
    unsigned user_ms = GAS_BOOT_TCP_DEAD_S * 1000;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    /* Unacknowledged data (a peer gone while we send) fails in as long. */
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof user_ms);
}

enum gas_boot_tcp_fate gas_boot_tcp_fate(int fd)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 || len < 1)
        return GAS_BOOT_TCP_CLOSED;
    if (ti.tcpi_state == TCP_ESTABLISHED)
        return GAS_BOOT_TCP_OPEN;
    /* TCP_CLOSE without a FIN first: tcp_done() after a timeout or a reset. */
    return ti.tcpi_state == TCP_CLOSE ? GAS_BOOT_TCP_BROKEN : GAS_BOOT_TCP_CLOSED;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for the non-blocking connect on fd to finish; 0 or -errno. */
static int connect_wait(int fd, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        int left = -1;
        if (timeout_ms > 0) {
            long long l = deadline - now_ms();
            if (l <= 0)
                return -ETIMEDOUT;
            left = (int)l;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLOUT };
        int n = poll(&pfd, 1, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            continue;   /* the deadline check above ends it */
        int err = 0;
        socklen_t elen = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
            return -errno;
        return -err;
    }
}

/* One attempt: a connected non-blocking socket, or -errno. */
static int connect_once(const struct sockaddr_storage *ss, socklen_t len, int timeout_ms)
{
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (const struct sockaddr *)ss, len) < 0) {
        int rc = errno == EINPROGRESS ? connect_wait(fd, timeout_ms) : -errno;
        if (rc < 0) {
            close(fd);
            return rc;
        }
    }
    return fd;
}

/* Errors that a network coming up, or a listener not there yet, may cure. */
static int transient(int err)
{
    return err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH || err == ENETDOWN ||
           err == EHOSTDOWN || err == ETIMEDOUT || err == ECONNRESET || err == ECONNABORTED ||
           err == EAGAIN || err == EINTR;
}

int gas_boot_tcp_connect(const char *addr_text, int timeout_ms)
{
    struct sockaddr_storage ss;
    socklen_t len;
    if (gas_boot_addr_parse(addr_text, &ss, &len) < 0)
        return -EINVAL;
    long long deadline = now_ms() + timeout_ms;
    int pause_ms = 50, fd;
    for (;;) {
        long long left = deadline - now_ms();
        fd = connect_once(&ss, len, timeout_ms > 0 ? (int)(left > 0 ? left : 1) : 0);
        long long rest = deadline - now_ms();
        if (fd >= 0 || !transient(-fd) || timeout_ms <= 0 || rest <= 0)
            break;
        int nap = rest < pause_ms ? (int)rest : pause_ms; /* the last try comes at the deadline */
        struct timespec ts = {.tv_sec = nap / 1000, .tv_nsec = (long)(nap % 1000) * 1000000};
        nanosleep(&ts, NULL);
        pause_ms = pause_ms * 2 > 1000 ? 1000 : pause_ms * 2;
    }
    if (fd < 0)
        return fd;
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    gas_boot_tcp_tune(fd);
    return fd;
}
