/*
 * config_defs.h - every tunable of libgas, declared once.
 *
 * GAS_CONFIG_ROW(ID, TYPE, DEFAULT, CHOICES, DOC)
 *   ID       the variable is GAS_<ID>
 *   TYPE     SIZE (bytes, k/m/g/t/p suffixes), UINT, BOOL (y/yes/1/on, n/no/0/off),
 *            TIME (seconds; s/ms/us/ns suffixes), ENUM (one of CHOICES, "a|b|c"), STRING,
 *            RATIO (a fraction: 0.05 or 5%; read as parts per million)
 *   DEFAULT  the value as a user would write it
 * The parser, `gas-info` and docs/config.md are generated from this list.
 */
GAS_CONFIG_ROW(LOG_LEVEL, ENUM, "warn", "fatal|error|warn|info|debug|trace",
               "How much libgas logs to stderr.")
GAS_CONFIG_ROW(ERRORS, ENUM, "abort", "abort|return",
               "What an API error does after logging it: abort the whole job, or return the error code to the caller.")
GAS_CONFIG_ROW(BOOT_TIMEOUT, TIME, "30s", NULL,
               "How long gas_init waits to connect to gasrun's rendezvous when the rank runs on another host than gasrun (GASRUN_BOOT_ADDR); past it gas_init fails naming the address.")
GAS_CONFIG_ROW(SEGMENT_SIZE, SIZE, "4g", NULL,
               "Usable bytes of each rank's segment (virtual; pages are backed on first touch). Bounds what gas_malloc can hand out.")
GAS_CONFIG_ROW(TRANSPORT, ENUM, "auto", "auto|shm|udp",
               "Force one transport for every peer (auto: shm to ranks on this node, udp to the others; udp: every other rank over udp, even on this node).")
GAS_CONFIG_ROW(TIMEOUT, TIME, "0", NULL,
               "Deadline of every wait (barrier, gas_wait_until, completion); 0 waits forever. Past it the call fails with GAS_ERR_TIMEOUT.")
GAS_CONFIG_ROW(STALL_WARN, TIME, "60s", NULL,
               "Log a warning naming the operation and peer when one wait has lasted this long (0: never).")
GAS_CONFIG_ROW(WAIT_SPIN, TIME, "20us", NULL,
               "How long a wait spins before it sleeps in the kernel; not used when the node runs more ranks than cores.")
GAS_CONFIG_ROW(CONFIG_FILE, STRING, "", NULL,
               "A file of NAME=VALUE lines (GAS_ prefix optional, # comments) read before the environment; the environment wins.")
GAS_CONFIG_ROW(PROGRESS, ENUM, "thread", "thread|poll",
               "Who serves incoming udp requests: a progress thread per rank that sleeps in epoll when idle (thread), or only the rank's own library calls (poll; see docs/udp.md for the trade-offs).")
GAS_CONFIG_ROW(STATS, BOOL, "n", NULL,
               "At gas_finalize every rank prints its per-peer counters (datagrams, bytes, retransmits, duplicates, bad datagrams), one line per peer.")
GAS_CONFIG_ROW(UDP_IFACE, STRING, "", NULL,
               "Network interface whose IPv4 address the udp transport binds (default: the first UP non-loopback interface with one, else 127.0.0.1).")
GAS_CONFIG_ROW(UDP_PORT, UINT, "0", NULL,
               "Base udp port: a rank binds base + its rank on the node (0: an ephemeral port).")
GAS_CONFIG_ROW(UDP_MTU, SIZE, "1500", NULL,
               "Path MTU the udp transport fits its datagrams to (IP and UDP headers included; never fragmented). All ranks of a job must agree.")
GAS_CONFIG_ROW(UDP_SOCKBUF, SIZE, "4m", NULL,
               "Kernel send and receive buffer of the udp socket.")
GAS_CONFIG_ROW(UDP_WINDOW, UINT, "1024", NULL,
               "Most datagrams in flight to one peer, and how far ahead of the next expected one a receiver keeps datagrams. All ranks of a job must agree.")
GAS_CONFIG_ROW(UDP_INFLIGHT_NEAR, SIZE, "256k", NULL,
               "Most bytes in flight to one peer of the near link class (same node or same IPv4 subnet); the ceiling of its congestion window.")
GAS_CONFIG_ROW(UDP_INFLIGHT_FAR, SIZE, "1m", NULL,
               "Most bytes in flight to one peer of the far link class (another subnet); the ceiling of its congestion window.")
GAS_CONFIG_ROW(UDP_INFLIGHT_TOTAL, SIZE, "8m", NULL,
               "Most bytes in flight from this rank to all peers together.")
GAS_CONFIG_ROW(UDP_SEND_QUEUE, SIZE, "4m", NULL,
               "Bytes a rank may queue towards one peer beyond its window before a put waits for room (the source is copied, so a put returns as soon as it is queued).")
GAS_CONFIG_ROW(UDP_RTO_MIN, TIME, "2ms", NULL,
               "Lower clamp of the udp retransmission timeout (computed from the measured round trip, RFC 6298).")
GAS_CONFIG_ROW(UDP_RTO_MAX, TIME, "250ms", NULL,
               "Upper clamp of the retransmission timeout after exponential back-off; bounds how late traffic resumes after an outage.")
GAS_CONFIG_ROW(UDP_RTO_INIT, TIME, "20ms", NULL,
               "Retransmission timeout before the first round trip has been measured.")
GAS_CONFIG_ROW(UDP_ACK_DELAY, TIME, "500us", NULL,
               "How long a receiver may hold a standalone acknowledgement of a one-way stream (sooner when the sender asks or 16 datagrams are unacknowledged).")
GAS_CONFIG_ROW(UDP_PEER_TIMEOUT, TIME, "30s", NULL,
               "A peer that acknowledges nothing for this long while operations to it are outstanding is declared dead: those operations fail with GAS_ERR_PEER naming it.")
GAS_CONFIG_ROW(TEST_UDP_DROP, RATIO, "0", NULL,
               "Test only: fraction of outgoing udp datagrams to drop (e.g. 5%).")
GAS_CONFIG_ROW(TEST_UDP_DUP, RATIO, "0", NULL,
               "Test only: fraction of outgoing udp datagrams to send twice.")
GAS_CONFIG_ROW(TEST_UDP_REORDER, RATIO, "0", NULL,
               "Test only: fraction of outgoing udp datagrams held back for GAS_TEST_UDP_DELAY, so later ones overtake them.")
GAS_CONFIG_ROW(TEST_UDP_DELAY, TIME, "1ms", NULL,
               "Test only: how long GAS_TEST_UDP_REORDER holds a datagram back.")
GAS_CONFIG_ROW(TEST_UDP_CORRUPT, RATIO, "0", NULL,
               "Test only: fraction of outgoing udp datagrams with one byte flipped (receivers must drop them by checksum).")
