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

#endif
