/*
 * sock.c - the udp socket of this rank: address choice, set-up, batched
 * sends (sendmmsg) with the test-only fault knobs, and the reorder fault's
 * queue of held-back datagrams.
 */
#include "transport/udp/udp.h"
#include "transport/udp/gso.h"
#include "runtime/clock.h"
#include "runtime/config.h"
#include "runtime/error.h"
#include "runtime/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

void gas_udp_addr_str(const struct sockaddr_in *a, char *buf, size_t cap)
{
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    snprintf(buf, cap, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

/* Whether interface entry i is the one GAS_UDP_IFACE names: by its name, or
 * (when the setting is a numeric IPv4 address, *want) by its address. */
static int iface_is(const struct ifaddrs *i, const char *iface, const struct in_addr *want)
{
    const struct in_addr *a = &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
    return strcmp(i->ifa_name, iface) == 0 || (want && a->s_addr == want->s_addr);
}

/* The IPv4 address and netmask to bind: GAS_UDP_IFACE's (an interface name,
 * or an IPv4 address that a local interface has), else the first UP
 * non-loopback interface's, else 127.0.0.1/8. */
static gas_status_t pick_address(const char *iface, struct in_addr *addr_p, uint32_t *mask_p,
                                 char *name, size_t cap)
{
    struct in_addr want;
    int by_addr = iface[0] && inet_pton(AF_INET, iface, &want) == 1;
    struct ifaddrs *list = NULL;
    if (getifaddrs(&list) != 0)
        list = NULL;
    const struct ifaddrs *pick = NULL;
    for (const struct ifaddrs *i = list; i && !pick; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
            continue;
        if (iface[0] ? iface_is(i, iface, by_addr ? &want : NULL)
                     : (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK))
            pick = i;
    }
    if (pick) {
        *addr_p = ((const struct sockaddr_in *)(const void *)pick->ifa_addr)->sin_addr;
        *mask_p = pick->ifa_netmask
                      ? ((const struct sockaddr_in *)(const void *)pick->ifa_netmask)->sin_addr.s_addr
                      : htonl(0xffffff00u);
        size_t l = strnlen(pick->ifa_name, cap - 1);
        memcpy(name, pick->ifa_name, l);
        name[l] = '\0';
    }
    if (list)
        freeifaddrs(list);
    if (pick)
        return GAS_OK;
    if (by_addr)
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_IFACE=%s: no interface of this host has that IPv4 address "
                            "(give one of its own addresses, or an interface name)", iface);
    if (iface[0])
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_IFACE=%s: no interface of that name has an IPv4 address", iface);
    addr_p->s_addr = htonl(INADDR_LOOPBACK);
    *mask_p = htonl(0xff000000u);
    snprintf(name, cap, "lo");
    return GAS_OK;
}

static uint32_t iface_mtu(int fd, const char *name)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, name, strnlen(name, sizeof ifr.ifr_name - 1));
    return ioctl(fd, SIOCGIFMTU, &ifr) == 0 && ifr.ifr_mtu > 0 ? (uint32_t)ifr.ifr_mtu : 0;
}

static void set_buffer(int fd, int force_opt, int opt, uint64_t bytes)
{
    int v = bytes > (1u << 30) ? 1 << 30 : (int)bytes;
    if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0)
        setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
}

gas_status_t gas_udp_sock_open(const char *iface, uint32_t port, uint64_t sockbuf,
                               uint32_t *iface_mtu_p)
{
    struct gas_udp_state *g = &gas_udp_g;
    char name[IFNAMSIZ + 1];
    struct in_addr ip = {0};
    gas_status_t st = pick_address(iface, &ip, &g->self_mask, name, sizeof name);
    if (st != GAS_OK)
        return st;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno == EAFNOSUPPORT ? GAS_ERR_UNSUPPORTED
                                     : gas_rt_error(GAS_ERR_IO, "gas_init", "udp socket: %s",
                                                    strerror(errno));
    set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, sockbuf);
    set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, sockbuf);
    int pmtu = IP_PMTUDISC_DO; /* never fragment: datagrams are cut to GAS_UDP_MTU */
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    /* ICMP errors for our datagrams are queued for us (rx.c: a peer whose
     * port is refused has ended); without it an unconnected socket drops them */
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one);
    if (gas_rt_config_size(GAS_CFG_TEST_UDP_GSO_REFUSE)) /* GSO refused without checksums (test) */
        setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr = ip};
    uint32_t want = port ? port + (uint32_t)g->env.local_rank : 0;
    if (want > 65535) {
        close(fd);
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "GAS_UDP_PORT=%u plus the node rank %d exceeds 65535", port,
                            g->env.local_rank);
    }
    a.sin_port = htons((uint16_t)want);
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int err = errno;
        close(fd);
        char as[48];
        gas_udp_addr_str(&a, as, sizeof as);
        return gas_rt_error(GAS_ERR_IO, "gas_init", "cannot bind the udp socket to %s (%s): %s%s",
                            as, name, strerror(err),
                            port ? "; choose another GAS_UDP_PORT or 0 for any" : "");
    }
    socklen_t alen = sizeof g->self;
    getsockname(fd, (struct sockaddr *)&g->self, &alen);
    gas_udp_addr_str(&g->self, g->self_str, sizeof g->self_str);
    uint32_t mtu = iface_mtu(fd, name);
    if (mtu == 0)
        mtu = 65535; /* not known: GAS_UDP_MTU alone bounds the datagrams */
    if (mtu < GAS_UDP_MIN_MTU) {
        close(fd);
        return gas_rt_error(GAS_ERR_INVALID, "gas_init",
                            "the udp transport's interface %s (%s) has an MTU of %u, below the "
                            "%u bytes its datagrams need (IPv4, UDP and datagram headers, a "
                            "record and its smallest piece); raise the interface's MTU or choose "
                            "another interface with GAS_UDP_IFACE",
                            name, g->self_str, mtu, GAS_UDP_MIN_MTU);
    }
    *iface_mtu_p = mtu;
    g->fd = fd;
    gas_log_info("udp", "bound %s on %s (interface MTU %u)", g->self_str, name, *iface_mtu_p);
    return GAS_OK;
}

uint32_t gas_udp_sock_local_mtu(void)
{
    const struct gas_udp_state *g = &gas_udp_g;
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = 0;
    socklen_t len = sizeof mtu;
    if (fd >= 0) {
        if (connect(fd, (const struct sockaddr *)&g->self, sizeof g->self) != 0 ||
            getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len) != 0 || mtu <= 0)
            mtu = (int)iface_mtu(fd, "lo");
        close(fd);
    }
    return mtu <= 0 ? 65535u : (uint32_t)mtu;   /* fit_datagrams caps the datagram size */
}

void gas_udp_sock_close(void)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (g->fd >= 0)
        close(g->fd);
    g->fd = -1;
    while (g->delayed) {
        struct gas_udp_delayed *d = g->delayed;
        g->delayed = d->next;
        free(d);
    }
}

/* ---- test-only fault injection ---- */

static _Thread_local uint64_t fault_rng;

static uint32_t roll(void)
{
    if (fault_rng == 0)
        fault_rng = gas_rt_now_ns() ^ ((uint64_t)gas_udp_g.env.rank << 40) ^
                    (uint64_t)(uintptr_t)&fault_rng;
    fault_rng ^= fault_rng << 13;
    fault_rng ^= fault_rng >> 7;
    fault_rng ^= fault_rng << 17;
    return (uint32_t)(fault_rng % 1000000u);
}

static int faults_on(const struct gas_udp_cfg *c)
{
    return c->drop_ppm | c->dup_ppm | c->reorder_ppm | c->corrupt_ppm;
}

static void hold_back(const struct sockaddr_in *to, const unsigned char *buf, uint32_t len)
{
    struct gas_udp_state *g = &gas_udp_g;
    struct gas_udp_delayed *d = malloc(sizeof *d + len);
    if (d == NULL)
        return; /* a lost datagram: the protocol recovers */
    uint64_t delay = g->cfg.fault_delay / 2 + roll() % (g->cfg.fault_delay / 2 + 1);
    uint64_t due = gas_rt_now_ns() + delay;
    d->due_ns = due;
    d->to = *to;
    d->len = len;
    memcpy(d->buf, buf, len);
    pthread_mutex_lock(&g->fault_lock);
    d->next = g->delayed;
    g->delayed = d; /* from here on another thread may send and free it */
    pthread_mutex_unlock(&g->fault_lock);
    gas_udp_timer_at(due);
}

/*
 * A send failed with err.  With IP_RECVERR every failure may have queued its
 * details (an ICMP error for an earlier datagram, or a local one such as a
 * too-big datagram), and a queue left full keeps epoll reporting the socket:
 * the receive side is told to read it (rx.c).  Returns 1 when err is an ICMP
 * error for an earlier datagram, which the kernel hands to the socket's next
 * call whatever that call sends: this message was not sent and is simply
 * sent again.  (A pending EMSGSIZE from an ICMP "fragmentation needed"
 * cannot be told from the message's own and is taken as its: the protocol
 * resends it.)
 */
static int async_err(int err)
{
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR || err == ENOBUFS)
        return 0;
    atomic_store(&gas_udp_g.errq_pending, 1);
    return err == ECONNREFUSED || err == EHOSTUNREACH || err == ENETUNREACH ||
           err == EHOSTDOWN || err == ENONET || err == EPROTO;
}

/* One datagram by sendto, sent again past a pending ICMP error; lost otherwise. */
static void send_one(const void *buf, size_t len, int flags, const struct sockaddr_in *to)
{
    for (int again = 0; again < 8; again++) {
        ssize_t r = sendto(gas_udp_g.fd, buf, len, flags, (const struct sockaddr *)to, sizeof *to);
        if (r >= 0 || (errno != EINTR && !async_err(errno)))
            return;
    }
}

uint64_t gas_udp_sock_flush_delayed(uint64_t now)
{
    struct gas_udp_state *g = &gas_udp_g;
    uint64_t next = GAS_UDP_NEVER;
    pthread_mutex_lock(&g->fault_lock);
    for (struct gas_udp_delayed **p = &g->delayed; *p;) {
        struct gas_udp_delayed *d = *p;
        if (d->due_ns <= now) {
            *p = d->next;
            send_one(d->buf, d->len, 0, &d->to);
            free(d);
        } else {
            next = d->due_ns < next ? d->due_ns : next;
            p = &d->next;
        }
    }
    pthread_mutex_unlock(&g->fault_lock);
    return next;
}

void gas_udp_sock_nudge(uint32_t ip, uint16_t port)
{
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = port};
    to.sin_addr.s_addr = ip;
    send_one("", 0, MSG_DONTWAIT, &to); /* lost: the sleeper wakes at the end of its slice */
}

/* ---- batched sends ---- */

static void send_failed(int err, uint32_t len)
{
    if (err == EMSGSIZE)
        gas_log_warn_ratelimited("udp", 1000000000ull,
                                 "a %u-byte datagram does not fit the path MTU: lower GAS_UDP_MTU",
                                 len);
    else
        gas_log_warn_ratelimited("udp", 1000000000ull, "sendmmsg: %s (the datagram is lost)",
                                 strerror(err));
}

/* Send k prepared messages; returns how many the kernel took, counting
 * those that failed for good (lost) as taken, stopping at a full buffer.
 * With refused not NULL, a GSO message (several iovecs) the kernel refuses
 * as such sets *refused and stops there, untaken (see send_gso). */
static unsigned send_all(struct mmsghdr *m, unsigned k, int *refused)
{
    unsigned done = 0, again = 0;
    while (done < k) {
        int r = sendmmsg(gas_udp_g.fd, m + done, k - done, 0);
        if (r > 0) {
            done += (unsigned)r;
            continue;
        }
        int err = r < 0 ? errno : EIO;
        if (err == EINTR || (async_err(err) && again++ < 8))
            continue;
        if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
            break;
        if (refused && m[done].msg_hdr.msg_iovlen > 1 &&
            (err == EIO || err == EINVAL || err == ENOPROTOOPT || err == EOPNOTSUPP)) {
            if (!atomic_exchange(&gas_udp_g.gso_off, 1))
                gas_log_info("udp", "the kernel refused a UDP GSO send (%s): one datagram per "
                             "message from now on", strerror(err));
            *refused = 1;
            break;
        }
        send_failed(err, (uint32_t)m[done].msg_hdr.msg_iov->iov_len);
        done++; /* lost; the protocol recovers */
    }
    return done;
}

/*
 * Send bufs[0..n) to `to` as UDP GSO messages: each run of datagrams of one
 * size (the last of a run may be shorter) goes as one message whose payload
 * the kernel cuts into those datagrams.  Returns how many datagrams the kernel
 * took (as gas_udp_sock_send); sets *refused when it refused GSO itself (a
 * route without checksum offload, an old kernel): nothing from there on was
 * sent, and the caller sends the rest one datagram per message.
 */
static unsigned send_gso(const struct sockaddr_in *to, unsigned char *const *bufs,
                         const uint32_t *lens, unsigned n, int *refused)
{
    struct mmsghdr m[GAS_UDP_BATCH];
    struct iovec iov[GAS_UDP_BATCH];
    union gas_udp_gso_ctl ctl[GAS_UDP_BATCH];
    unsigned first[GAS_UDP_BATCH + 1], k = 0;
    *refused = 0;
    for (unsigned i = 0; i < n;) {
        uint32_t seg = lens[i], bytes = 0;
        unsigned j = i;
        /* A datagram above GAS_UDP_GSO_BYTES (GAS_UDP_MTU over 65028 on a
         * loopback route) goes alone: a message of one iovec, no GSO. */
        while (j < n && j - i < GAS_UDP_GSO_SEGS && lens[j] <= seg &&
               (j == i || bytes + lens[j] <= GAS_UDP_GSO_BYTES)) {
            iov[j] = (struct iovec){.iov_base = bufs[j], .iov_len = lens[j]};
            bytes += lens[j++];
            if (lens[j - 1] < seg)
                break; /* only the last of a run may be shorter */
        }
        m[k].msg_hdr = (struct msghdr){.msg_name = (void *)to, .msg_namelen = sizeof *to,
                                       .msg_iov = &iov[i], .msg_iovlen = j - i};
        m[k].msg_len = 0;
        if (j - i > 1)
            gas_udp_gso_set(&m[k].msg_hdr, &ctl[k], (uint16_t)seg);
        first[k++] = i;
        i = j;
    }
    first[k] = n;
    return first[send_all(m, k, refused)];
}

unsigned gas_udp_sock_send(const struct sockaddr_in *to, unsigned char *const *bufs,
                           const uint32_t *lens, unsigned n)
{
    struct gas_udp_state *g = &gas_udp_g;
    if (n > 1 && g->cfg.gso && !faults_on(&g->cfg) &&
        !atomic_load_explicit(&g->gso_off, memory_order_relaxed)) {
        int refused;
        n = n < GAS_UDP_BATCH ? n : GAS_UDP_BATCH;
        unsigned took = send_gso(to, bufs, lens, n, &refused);
        if (!refused)
            return took;
        return took + gas_udp_sock_send(to, bufs + took, lens + took, n - took);
    }
    struct mmsghdr m[2 * GAS_UDP_BATCH];
    struct iovec iov[2 * GAS_UDP_BATCH];
    unsigned char *copies[GAS_UDP_BATCH];
    unsigned orig[2 * GAS_UDP_BATCH];
    unsigned k = 0, ncopies = 0;
    int faulty = faults_on(&g->cfg);
    memset(m, 0, sizeof(struct mmsghdr) * 2 * (n < GAS_UDP_BATCH ? n : GAS_UDP_BATCH));
    for (unsigned i = 0; i < n && i < GAS_UDP_BATCH; i++) {
        unsigned char *b = bufs[i];
        int copies_wanted = 1;
        if (faulty) {
            if (roll() < g->cfg.drop_ppm)
                continue;
            if (roll() < g->cfg.reorder_ppm) {
                hold_back(to, b, lens[i]);
                continue;
            }
            if (roll() < g->cfg.corrupt_ppm) {
                unsigned char *c = malloc(lens[i]);
                if (c) {
                    memcpy(c, b, lens[i]);
                    c[roll() % lens[i]] ^= (unsigned char)(1 + roll() % 255);
                    copies[ncopies++] = c;
                    b = c;
                }
            }
            if (roll() < g->cfg.dup_ppm)
                copies_wanted = 2;
        }
        for (int c = 0; c < copies_wanted; c++) {
            iov[k] = (struct iovec){.iov_base = b, .iov_len = lens[i]};
            m[k].msg_hdr = (struct msghdr){.msg_name = (void *)to, .msg_namelen = sizeof *to,
                                           .msg_iov = &iov[k], .msg_iovlen = 1};
            orig[k++] = i;
        }
    }
    unsigned done = send_all(m, k, NULL);
    for (unsigned c = 0; c < ncopies; c++)
        free(copies[c]);
    if (done == k)
        return n < GAS_UDP_BATCH ? n : GAS_UDP_BATCH;
    return orig[done]; /* the first datagram the kernel did not take */
}
