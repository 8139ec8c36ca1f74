/*
 * config_ranges.h - the values a numeric setting of config_defs.h accepts.
 *
 * GAS_CONFIG_RANGE(ID, LO, HI)  GAS_<ID> must lie in LO..HI (inclusive), as
 *                               parsed (bytes, a count).
 * The configuration refuses a value outside its range when it is loaded, so
 * gas-info reports it as gas_init would, and docs/config.md shows it.  The
 * owners read these settings without checking them again.  (GAS_SEGMENT_SIZE's
 * minimum is checked with the segment plan, alloc/limits.c, whose message
 * says what the minimum is for; gas-info shows that plan too.)
 */
GAS_CONFIG_RANGE(UDP_MTU, 320, 65535)
GAS_CONFIG_RANGE(UDP_WINDOW, 16, 1u << 20)
GAS_CONFIG_RANGE(RDMA_QPS_NEAR, 1, 16)                      /* transport/rdma GAS_RDMA_MAX_QPS */
GAS_CONFIG_RANGE(RDMA_QPS_FAR, 1, 16)
GAS_CONFIG_RANGE(RDMA_QP_OUTSTANDING_NEAR, 2, 4096)
GAS_CONFIG_RANGE(RDMA_QP_OUTSTANDING_FAR, 2, 4096)
GAS_CONFIG_RANGE(RDMA_STRIPE_NEAR, 64, 1u << 30)
GAS_CONFIG_RANGE(RDMA_STRIPE_FAR, 64, 1u << 30)
GAS_CONFIG_RANGE(RDMA_PEER_OUTSTANDING, 2, 1u << 16)
GAS_CONFIG_RANGE(RDMA_INLINE, 0, 1024)
GAS_CONFIG_RANGE(RDMA_SIGNAL_EVERY, 1, 4096)
GAS_CONFIG_RANGE(RDMA_RECV_DEPTH, 16, 1024)
GAS_CONFIG_RANGE(RDMA_TIMEOUT, 0, 31)
GAS_CONFIG_RANGE(RDMA_RETRY_CNT, 0, 7)
GAS_CONFIG_RANGE(RDMA_RNR_RETRY, 0, 7)
GAS_CONFIG_RANGE(RDMA_MIN_RNR_TIMER, 0, 31)
GAS_CONFIG_RANGE(RDMA_PATH_MTU, 256, 4096)
GAS_CONFIG_RANGE(RDMA_RD_ATOMIC, 1, 16)
GAS_CONFIG_RANGE(RDMA_SL, 0, 15)
GAS_CONFIG_RANGE(RDMA_HOP_LIMIT, 1, 255)
GAS_CONFIG_RANGE(RDMA_PORT, 1, 255)
GAS_CONFIG_RANGE(RDMA_GID_INDEX, 0, 255)
