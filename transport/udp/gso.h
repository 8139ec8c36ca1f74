/*
 * gso.h - UDP GSO sends (UDP_SEGMENT): the kernel's limits and the control
 * message that asks for one.  Shared by the transport (sock.c) and
 * gas-bench's raw GSO stream reference, so the reference sends as the
 * transport does.
 */
#ifndef GAS_UDP_GSO_H
#define GAS_UDP_GSO_H

#include <stdint.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h: the GSO segment size of a send */
#endif
#define GAS_UDP_GSO_SEGS 64       /* the kernel's UDP_MAX_SEGMENTS */
#define GAS_UDP_GSO_BYTES 65000u  /* a GSO message is one UDP datagram to the stack until cut */

/* Room for the control message of one GSO send. */
union gas_udp_gso_ctl {
    char buf[CMSG_SPACE(sizeof(uint16_t))];
    struct cmsghdr align;
};

/* Make h a GSO send that the kernel cuts into datagrams of seg bytes (the
 * last may be shorter); ctl becomes its control buffer. */
static inline void gas_udp_gso_set(struct msghdr *h, union gas_udp_gso_ctl *ctl, uint16_t seg)
{
    h->msg_control = ctl->buf;
    h->msg_controllen = sizeof ctl->buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(h);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof seg);
    memcpy(CMSG_DATA(c), &seg, sizeof seg);
}
#endif
