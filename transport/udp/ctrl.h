/*
 * ctrl.h - what the udp transport offers the other transports (rdma): its
 * reliable, ordered channel to each peer for small control messages, and a
 * way to wait until everything sent to a peer was applied there.  The one
 * udp header included from outside transport/udp/.
 */
#ifndef GAS_UDP_CTRL_H
#define GAS_UDP_CTRL_H

#include <gas.h>
#include <stddef.h>

#define GAS_UDP_CTRL_MAX 1024 /* bytes of one control message */

/*
 * Called on udp's receive path (progress thread or a polling application
 * thread) for each control message from rank, in the order sent, with udp's
 * channel to rank locked: it must not call back into udp.  It may write a
 * reply of up to cap bytes to `reply`, returning its length (0: none); the
 * reply is sent on the same channel.
 */
typedef size_t (*gas_udp_ctrl_fn)(int rank, const void *msg, size_t len, void *reply, size_t cap);
void gas_udp_ctrl_set_handler(gas_udp_ctrl_fn fn);

/* Queue a control message to rank (reliable, in order with udp's other traffic). */
gas_status_t gas_udp_ctrl_send(int rank, const void *msg, size_t len);

/* Wait until every operation this rank sent to rank over udp so far is applied there. */
gas_status_t gas_udp_drain(int rank, const char *call);

/* Whether udp gave up on rank (nothing acknowledged for GAS_UDP_PEER_TIMEOUT). */
int gas_udp_peer_dead(int rank);
/*
 * Ranks lost: those udp gave up on here, and those another rank reported it
 * gave up on.  A rank that gives up on a peer tells every other rank (a
 * control message udp handles itself, first byte GAS_UDP_CTRL_OWN or above;
 * other transports' messages start below it), so that a rank whose wait
 * depends on the lost one only through others fails too.
 * gas_udp_dead_count: how many (grows only; 0 before init); gas_udp_peer_lost:
 * whether rank is one.  gas_udp_announce: send the reports not yet sent
 * (called when the timers, which declare deaths, have run: outside any
 * channel's lock).
 */
#define GAS_UDP_CTRL_OWN 0xf0
int gas_udp_dead_count(void);
int gas_udp_peer_lost(int rank);
/* Whether rank is lost only by another rank's report (not declared dead here). */
int gas_udp_lost_by_report(int rank);
/* Whether this rank declared rank dead because its port refused datagrams (rx.c). */
int gas_udp_lost_refused(int rank);
void gas_udp_announce(void);
/* Record rank as lost, declared dead by rank `by` (this rank's own: declared
 * here; another: that rank's report). */
void gas_udp_lost_set(int rank, int by);
/*
 * This rank itself was declared dead: a peer that gave up on it answers its
 * datagrams with a DEAD notice naming who declared it (docs/udp-wire.md).
 * Then this rank is out of the job: every channel fails what is outstanding
 * and sends nothing more, it declares no peer dead and reports nothing, and
 * gas_tl_first_lost names it for every wait.  gas_udp_self_lost: the rank
 * that declared it dead, or -1.
 */
int gas_udp_self_lost(void);
/* GAS_UDP_PEER_TIMEOUT in seconds (0 before init), for messages. */
double gas_udp_peer_timeout_s(void);
/* Into buf: how a peer comes to declare a rank dead (silence for
 * GAS_UDP_PEER_TIMEOUT, or its port refusing datagrams for the grace), for
 * this rank's messages about itself. */
void gas_udp_self_lost_why(char *buf, size_t cap);
/* The hint a loss message adds under GAS_PROGRESS=poll ("" otherwise): there a
 * live rank that makes no libgas call for GAS_UDP_PEER_TIMEOUT looks dead. */
const char *gas_udp_poll_hint(void);

/*
 * A liveness probe: when nothing to rank is unacknowledged, send it an empty
 * control record, which it acknowledges and otherwise ignores, so that a
 * peer gone silent is declared dead after GAS_UDP_PEER_TIMEOUT like one with
 * operations outstanding.  At most one every quarter of that timeout per
 * peer; for waits that have waited long on a peer they send nothing to.
 */
void gas_udp_probe(int rank);
/*
 * For a wait that no one rank owes (transport.c gas_tl_probe_gone_some): send
 * the next few peers this rank has talked to, and has not heard from for a
 * second, an acknowledgement, a knock (at most one each per quarter second;
 * not the doorbell's wake-up nudge, gas_udp_sock_nudge).  It asks
 * for no answer, so a silent peer is never declared dead for it (a rank
 * computing outside libgas with GAS_PROGRESS=poll is safe); but where the
 * peer's process has ended, its port refuses the datagram, and the refusal
 * declares it dead (rx.c refused) instead of leaving the wait to hang.
 */
void gas_udp_knock_some(void);

/*
 * Another transport's event source, served by udp's progress (rdma: the
 * completion channel of its receive CQ).  With a progress thread, fd (readable
 * when there is work) joins the thread's epoll set and fn runs each time the
 * thread goes round, so the work is done while the application computes; fn
 * must be cheap when there is nothing to do.  fn's argument says whether an
 * application thread is polling from inside the library just now (it holds
 * udp's socket lease, and drives every transport's progress): then the source
 * need not arm its wake-up, and an event would only wake this thread for
 * nothing; the thread runs fn again, with 0, when the lease lapses.  With
 * GAS_PROGRESS=poll there is no thread: fd joins the set that a waiting thread
 * sleeps in, and fn(0) runs before it sleeps.  fn returns how many events it
 * handled and runs without any udp lock held.  One source at most; fd -1
 * removes it (returning once fn is not running).  While one is set, a waiter
 * sleeps in the socket 1 ms at a time at most, whatever GAS_WAIT_SLICE says:
 * rdma's send CQ has no completion channel, so waits for its completions
 * poll it that often.
 */
typedef int (*gas_udp_event_fn)(int polled);
gas_status_t gas_udp_set_event_source(int fd, gas_udp_event_fn fn);

#endif
