/*
 * boot_tcp.h - the boot protocol (boot_wire.h) over TCP, for ranks that gasrun
 * starts on other hosts.
 *
 * Such a rank finds gasrun's rendezvous in GASRUN_BOOT_ADDR: "a.b.c.d:port" or
 * "[ipv6]:port" (numeric only).  Its first message must be the HELLO with the
 * job key; gasrun closes a connection that sends anything else, or nothing
 * within a few seconds, without a reply.
 *
 * Like boot_wire.c this file depends on nothing else of libgas: gasrun and
 * tests/gasrun/boot_client.c link it directly.
 */
#ifndef GAS_BOOT_TCP_H
#define GAS_BOOT_TCP_H

#include <stddef.h>
#include <sys/socket.h>

/* Enough for "[" numeric IPv6 with a scope "]:" port, and the NUL. */
#define GAS_BOOT_ADDR_MAX 96

/* Parse "ip:port" / "[ip]:port" (port 0..65535); 0 or -EINVAL. */
int gas_boot_addr_parse(const char *text, struct sockaddr_storage *ss, socklen_t *len_p);

/* Write sa as "ip:port" / "[ip]:port" into buf (GAS_BOOT_ADDR_MAX bytes). */
void gas_boot_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t size);

/*
 * Connect to `addr_text` within timeout_ms.  Errors that a network coming up
 * or a listener not yet there may cure (refused, unreachable, timed out,
 * reset) are retried, after 50 ms doubling up to 1 s, until the time is up
 * (timeout_ms <= 0: one attempt, within the kernel's own limit).  Returns a blocking,
 * close-on-exec socket tuned with gas_boot_tcp_tune(), or -EINVAL (bad
 * address), or the last attempt's error (-ETIMEDOUT, -ECONNREFUSED ...).
 */
int gas_boot_tcp_connect(const char *addr_text, int timeout_ms);

/*
 * No Nagle delay (requests and replies are small and come in bursts), and
 * keepalive probes so that a peer host that vanished without closing the
 * connection is noticed within about GAS_BOOT_TCP_DEAD_S seconds.
 */
#define GAS_BOOT_TCP_DEAD_S 30
void gas_boot_tcp_tune(int fd);

/*
 * What became of a boot connection, from the kernel's TCP state (it does not
 * take the socket's pending error, which a reader may still want):
 *   OPEN    established: nothing happened, or another thread replaced it;
 *   CLOSED  the peer closed it (a FIN: the process at the other end ended or
 *           let it go), or fd is no TCP socket;
 *   BROKEN  the kernel gave up on it: timed out (TCP_USER_TIMEOUT, keepalive,
 *           or, when this host drops the packets, about 8 s of unanswered window
 *           probes that no socket option changes) or reset.  A network outage
 *           does this; the other end may well be alive.
 */
enum gas_boot_tcp_fate { GAS_BOOT_TCP_OPEN, GAS_BOOT_TCP_CLOSED, GAS_BOOT_TCP_BROKEN };
enum gas_boot_tcp_fate gas_boot_tcp_fate(int fd);

#endif
