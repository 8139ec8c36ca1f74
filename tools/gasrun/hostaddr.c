/*
 * hostaddr.c - which of this machine's addresses a host reaches gasrun at.
 *
 *   1. iface=NAME for the host, and this machine has an interface NAME with an
 *      address: that address (IPv4 first);
 *   2. else the source address of the route towards the host (addr=IP, or its
 *      name resolved): found by connecting a UDP socket there, which sends
 *      nothing, and reading getsockname();
 *   3. else it fails with a message asking for --rendezvous or addr=/iface=.
 * --rendezvous ADDR overrides all of this (listen.c).
 */
#include "gasrun.h"
#include "log.h"

#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

static bool usable(const struct sockaddr *sa)
{
    if (sa == NULL)
        return false;
    if (sa->sa_family == AF_INET)
        return true;
    if (sa->sa_family == AF_INET6)
        return !IN6_IS_ADDR_LINKLOCAL(&((const struct sockaddr_in6 *)sa)->sin6_addr);
    return false;
}

/* The address of interface `name` here; 0, or -1 when it has none. */
static int iface_addr(const char *name, struct sockaddr_storage *ss, socklen_t *len_p)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0)
        return -1;
    const struct ifaddrs *best = NULL;
    for (const struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
        if (strcmp(i->ifa_name, name) != 0 || !usable(i->ifa_addr))
            continue;
        if (best == NULL || (i->ifa_addr->sa_family == AF_INET &&
                             best->ifa_addr->sa_family != AF_INET))
            best = i;
    }
    int rc = -1;
    if (best != NULL) {
        *len_p = best->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                      : sizeof(struct sockaddr_in6);
        memcpy(ss, best->ifa_addr, *len_p);
        rc = 0;
    }
    freeifaddrs(ifs);
    return rc;
}

/* The source address of the route to `dest`; 0, or a getaddrinfo/errno text. */
static const char *route_source(const char *dest, struct sockaddr_storage *ss, socklen_t *len_p)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM };
    struct addrinfo *ai;
    int g = getaddrinfo(dest, "9", &hints, &ai);
    if (g != 0)
        return gai_strerror(g);
    const char *why = "no address";
    for (const struct addrinfo *a = ai; a != NULL; a = a->ai_next) {
        int fd = socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            why = strerror(errno);
            continue;
        }
        socklen_t len = sizeof *ss;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
            getsockname(fd, (struct sockaddr *)ss, &len) == 0) {
            close(fd);
            freeaddrinfo(ai);
            *len_p = len;
            return NULL;
        }
        why = strerror(errno);
        close(fd);
    }
    freeaddrinfo(ai);
    return why;
}

int gr_host_local_addr(const struct gr_host *h, struct sockaddr_storage *ss, socklen_t *len_p)
{
    if (h->iface != NULL) {
        if (iface_addr(h->iface, ss, len_p) == 0)
            return 0;
        gr_info("host %s: iface=%s has no address here; using the route to it", h->name,
                h->iface);
    }
    const char *dest = h->addr ? h->addr : h->name;
    const char *at = strrchr(dest, '@');     /* user@host for ssh */
    if (h->addr == NULL && at != NULL)
        dest = at + 1;
    const char *why = route_source(dest, ss, len_p);
    if (why == NULL)
        return 0;
    gr_msg("cannot tell which address host %s reaches gasrun at: %s: %s; give --rendezvous ADDR, "
           "or addr=IP / iface=NAME for it in a --hostfile", h->name, dest, why);
    return -1;
}
