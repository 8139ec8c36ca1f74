/*
 * config_ranges.h - the values a numeric setting of config_defs.h accepts.
 *
 * GAS_CONFIG_RANGE(ID, LO, HI, ZERO, WHY)
 *   GAS_<ID> must lie in LO..HI (inclusive), as parsed (bytes, a count,
 *   nanoseconds); HI UINT64_MAX: no upper bound.  ZERO 1: 0 is accepted too
 *   (the setting's automatic value).  WHY, if not NULL, says what the bounds
 *   are for (it ends the message that refuses a value, and the docs' row).
 * The configuration refuses a value outside its range when it is loaded, so
 * gas-info reports it as gas_init would, and docs/config.md shows it.  The
 * owners read these settings without checking them again.
 */
GAS_CONFIG_RANGE(SEGMENT_SIZE, GAS_RT_SEGMENT_MIN_BYTES, UINT64_MAX, 1,
                 "the least in which gas_init and a first gas_alloc fit; raise it, or set it "
                 "to auto (or 0)")
GAS_CONFIG_RANGE(UDP_MTU, GAS_RT_UDP_MTU_MIN, 65535, 1,
                 "the least in which the IPv4, UDP and datagram headers, a put-with-signal "
                 "record and its smallest piece fit, docs/udp-wire.md")
GAS_CONFIG_RANGE(UDP_WINDOW, 16, 1u << 20, 0, NULL)
GAS_CONFIG_RANGE(UDP_PORT, 0, 65535, 0, NULL)
GAS_CONFIG_RANGE(UDP_SEND_QUEUE, 1, UINT64_MAX, 0,
                 "with 0 no put could ever be queued and gas_init would wait for room for ever")
GAS_CONFIG_RANGE(UDP_RTO_MIN, 1, UINT64_MAX, 0,
                 "a retransmission timeout of 0 would resend at once, without end")
GAS_CONFIG_RANGE(UDP_PEER_TIMEOUT, 1, UINT64_MAX, 0,
                 "with 0 every peer would be declared dead at once")
GAS_CONFIG_RANGE(RDMA_QPS_NEAR, 1, 16, 0, NULL)                      /* transport/rdma GAS_RDMA_MAX_QPS */
GAS_CONFIG_RANGE(RDMA_QPS_FAR, 1, 16, 0, NULL)
GAS_CONFIG_RANGE(RDMA_QP_OUTSTANDING_NEAR, 2, 4096, 0, NULL)
GAS_CONFIG_RANGE(RDMA_QP_OUTSTANDING_FAR, 2, 4096, 0, NULL)
GAS_CONFIG_RANGE(RDMA_STRIPE_NEAR, 64, 1u << 30, 0, NULL)
GAS_CONFIG_RANGE(RDMA_STRIPE_FAR, 64, 1u << 30, 0, NULL)
GAS_CONFIG_RANGE(RDMA_PEER_OUTSTANDING, 2, 1u << 16, 0, NULL)
GAS_CONFIG_RANGE(RDMA_INLINE, 0, 1024, 0, NULL)
GAS_CONFIG_RANGE(RDMA_SIGNAL_EVERY, 1, 4096, 0, NULL)
GAS_CONFIG_RANGE(RDMA_RECV_DEPTH, 16, 1024, 0, NULL)
GAS_CONFIG_RANGE(RDMA_TIMEOUT, 0, 31, 0, NULL)
GAS_CONFIG_RANGE(RDMA_RETRY_CNT, 0, 7, 0, NULL)
GAS_CONFIG_RANGE(RDMA_RNR_RETRY, 0, 7, 0, NULL)
GAS_CONFIG_RANGE(RDMA_MIN_RNR_TIMER, 0, 31, 0, NULL)
GAS_CONFIG_RANGE(RDMA_PATH_MTU, 256, 4096, 0, NULL)
GAS_CONFIG_RANGE(RDMA_RD_ATOMIC, 1, 16, 0, NULL)
GAS_CONFIG_RANGE(RDMA_SL, 0, 15, 0, NULL)
GAS_CONFIG_RANGE(RDMA_HOP_LIMIT, 1, 255, 0, NULL)
GAS_CONFIG_RANGE(RDMA_PORT, 1, 255, 0, NULL)
GAS_CONFIG_RANGE(RDMA_GID_INDEX, 0, 255, 0, NULL)
