/*
 * config_defs.h - every tunable of libgas, declared once.
 *
 * GAS_CONFIG_ROW(ID, TYPE, DEFAULT, CHOICES, DOC)
 *   ID       the variable is GAS_<ID>
 *   TYPE     SIZE (bytes, k/m/g/t/p/e suffixes; CHOICES, if set, is a word that means 0),
 *            UINT, BOOL (y/yes/1/on/true, n/no/0/off/false; any case),
 *            TIME (seconds; s/ms/us/ns/min suffixes, bare m refused),
 *            ENUM (one of CHOICES, "a|b|c", any case), STRING,
 *            RATIO (a fraction: 0.05 or 5%; read as parts per million)
 *   DEFAULT  the value as a user would write it
 * The parser, `gas-info` and docs/config.md are generated from this list.
 */
GAS_CONFIG_ROW(LOG_LEVEL, ENUM, "warn", "fatal|error|warn|info|debug|trace",
               "How much libgas logs to stderr.")
GAS_CONFIG_ROW(ERRORS, ENUM, "abort", "abort|return",
               "What an API error does after logging it: abort the whole job, or return the error code to the caller.")
GAS_CONFIG_ROW(BOOT_TIMEOUT, TIME, "30s", NULL,
               "How long gas_init waits to connect to gasrun's rendezvous when the rank runs on another host than gasrun (GASRUN_BOOT_ADDR), retrying refused or unreachable connections meanwhile (a network or interface still coming up); past it gas_init fails naming the address. gasrun waits as long for such a rank's first message (its HELLO); 0: one attempt, and 30 s for the HELLO.")
GAS_CONFIG_ROW(SEGMENT_SIZE, SIZE, "auto", "auto",
               "Bytes of address space reserved for each rank's segment, which gas_malloc and gas_alloc share; pages are backed on first touch. At least 6m (the least in which gas_init and a first gas_alloc fit; smaller values are refused). auto (or 0): 3/8 of the address space this process may use (RLIMIT_AS, 47-bit user space) divided by the ranks on the node, and with a tmpfs GAS_SEGMENT_DIR at most its size divided by them, rounded down to a power of two; where that falls below 6m, the largest multiple of the page in the node's share (3/4 of that space, or the tmpfs, divided by its ranks), and gas_init fails naming the limit (GAS_SEGMENT_DIR with its size, or the address space) when even that is below 6m. Every rank maps the segments of all ranks on its node, so ranks-per-node x size must fit 3/4 of that space.")
GAS_CONFIG_ROW(SEGMENT_DIR, STRING, "", NULL,
               "A tmpfs or hugetlbfs directory (e.g. /dev/shm) to hold the segments as unnamed files; empty: memfd segments. Its size then bounds what can be backed, and gas_init checks that the node's ranks can start in it.")
GAS_CONFIG_ROW(PREFAULT, BOOL, "n", NULL,
               "Back gas_malloc and gas_alloc memory when it is allocated (fallocate, after checking tmpfs, cgroup, overcommit and free memory), so that exhaustion is a GAS_ERR_NOMEM from the call rather than SIGBUS or the OOM killer on first touch. Costs the memory up front.")
GAS_CONFIG_ROW(NUMA, STRING, "local", NULL,
               "NUMA policy of each segment: local (the node of the rank's CPUs), interleave, node:N, or none (first touch). Read back with get_mempolicy; gas-info --memory shows each rank's.")
GAS_CONFIG_ROW(HUGEPAGES, ENUM, "auto", "auto|on|off",
               "Huge pages for segments: auto (the kernel's default for the backing), on (transparent huge pages via madvise, else the hugetlb pool; gas_init fails if neither is possible), off (madvise NOHUGEPAGE).")
GAS_CONFIG_ROW(ARENAS, UINT, "0", NULL,
               "Most gas_alloc arenas per NUMA node the rank uses (jemalloc arenas inside the segment); 0: one per CPU of that node the rank may run on, at most 8. One is made at gas_init, another only when a thread first allocates while every existing one has a thread; a thread takes the arena of its node with the fewest threads.")
GAS_CONFIG_ROW(TRANSPORT, ENUM, "auto", "auto|shm|udp|rdma",
               "Force one transport for every peer (auto: shm to ranks on this node, rdma or udp to the others; udp: every other rank over udp, even on this node; rdma: every other rank starts on udp and is upgraded to RC when both have a device on one fabric).")
GAS_CONFIG_ROW(TIMEOUT, TIME, "0", NULL,
               "Deadline of every wait (barrier, gas_wait_until, completion, and gas_init's wait for the other ranks of the job to call gas_init); 0 waits forever. Past it the call fails with GAS_ERR_TIMEOUT (gas_init's naming the ranks not arrived; a world barrier's, as in gas_barrier, gas_malloc, gas_free and gas_finalize, naming the ranks that have not entered it, or did not answer within 0.5 s when asked). It bounds a whole call: one that waits several times (a get in pieces, gas_iget, an atomic, gas_quiet, a barrier's rounds, gas_malloc's barriers, a team split) fails once it has waited this long in all. Time in which the waiting rank did not run (stopped with SIGSTOP or ^Z, at a debugger's breakpoint) is not counted.")
GAS_CONFIG_ROW(STALL_WARN, TIME, "60s", NULL,
               "Log a warning naming the operation and peer when one wait has lasted this long (gas_init: naming the ranks not yet arrived; 0: never).")
GAS_CONFIG_ROW(WAIT_SPIN, TIME, "50us", NULL,
               "How long a wait spins without progress before it sleeps in the kernel (again each time it is woken); udp's progress thread also keeps polling its socket this long after serving a request. Not used when this rank shares its CPUs: more ranks of the job have its affinity mask on this machine (in any network namespace or container) than the mask has CPUs; ranks bound one per core (gasrun --bind core) own theirs.")
GAS_CONFIG_ROW(WAIT_SLICE, TIME, "0", NULL,
               "Longest a sleeping wait goes before it looks at its condition again, woken or not (0: 2 ms on the futex doorbell, 1 ms in the udp socket). Writers wake sleepers, so this is only a safety net; a large value turns a missed wake-up into a visible stall.")
GAS_CONFIG_ROW(CONFIG_FILE, STRING, "", NULL,
               "A regular file of NAME=VALUE lines of any length (GAS_ prefix optional; a leading export is ignored, so a shell can source the same file; # starts a comment at the start of a line or after a blank) read before the environment; the environment wins.")
GAS_CONFIG_ROW(COLL_SCRATCH, SIZE, "512k", NULL,
               "Scratch space (collective mailboxes) each member of a team keeps for it in its segment, backed when used; at least 256 bytes per member are always taken. Larger values let big messages move in larger chunks. Every rank must use the same value (gas_init fails on every rank otherwise, naming it).")
GAS_CONFIG_ROW(COLL_ZCOPY_MIN, SIZE, "16k", NULL,
               "Collective messages of at least this many bytes go straight into a destination buffer that lies in the receiver's segment (zero-copy) instead of through the mailboxes; 0: never.")
GAS_CONFIG_ROW(COLL_TUNING, STRING, "", NULL,
               "A tuning table (format: docs/collectives.md) choosing each collective's algorithm by size and team shape; empty: the built-in copy of configs/coll-tuning.conf.")
GAS_CONFIG_ROW(COLL_CPUS, ENUM, "auto", "auto|own|shared",
               "Which tuning-table rows apply (their cpus field): own (every rank has a CPU to itself), shared (ranks share CPUs) or auto (shared where a team member's CPUs, by affinity, hold more ranks of the job than CPUs; counted at gas_init). Must be the same on every rank.")
GAS_CONFIG_ROW(COLL_BARRIER, ENUM, "auto", "auto|dissemination|hierarchical",
               "Force the algorithm of team barriers (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_BROADCAST, ENUM, "auto", "auto|binomial|scatter_allgather|hierarchical",
               "Force the algorithm of gas_broadcast (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_REDUCE, ENUM, "auto", "auto|binomial|reduce_scatter_gather|hierarchical",
               "Force the algorithm of gas_reduce (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLREDUCE, ENUM, "auto", "auto|recursive_doubling|rabenseifner|ring|one_shot|two_shot|hierarchical",
               "Force the algorithm of gas_allreduce (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLGATHER, ENUM, "auto", "auto|recursive_doubling|bruck|ring",
               "Force the algorithm of gas_allgather (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLGATHERV, ENUM, "auto", "auto|recursive_doubling|bruck|ring",
               "Force the algorithm of gas_allgatherv (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLTOALL, ENUM, "auto", "auto|pairwise|bruck|scattered",
               "Force the algorithm of gas_alltoall (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLTOALLV, ENUM, "auto", "auto|pairwise|scattered",
               "Force the algorithm of gas_alltoallv (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_REDUCE_SCATTER, ENUM, "auto", "auto|recursive_halving|ring",
               "Force the algorithm of gas_reduce_scatter (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_GATHER, ENUM, "auto", "auto|binomial|linear",
               "Force the algorithm of gas_gather (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_SCATTER, ENUM, "auto", "auto|binomial|linear",
               "Force the algorithm of gas_scatter (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_SCAN, ENUM, "auto", "auto|recursive_doubling|chain",
               "Force the algorithm of gas_scan (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_EXSCAN, ENUM, "auto", "auto|recursive_doubling|chain",
               "Force the algorithm of gas_exscan (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_GATHERV, ENUM, "auto", "auto|binomial|linear",
               "Force the algorithm of gas_gatherv (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_SCATTERV, ENUM, "auto", "auto|binomial|linear",
               "Force the algorithm of gas_scatterv (auto: the tuning table).")
GAS_CONFIG_ROW(TEST_NODE_SIZE, UINT, "0", NULL,
               "Testing only: collectives treat every N consecutive ranks as one node (0: the real nodes), so hierarchical algorithms run on one host.")
GAS_CONFIG_ROW(TEST_COLL_PUMP_DELAY, TIME, "0", NULL,
               "Testing only: a thread that ends the last queued non-blocking collective of a team sleeps this long before it clears the queue's tail (0: never), which widens the window a start of a collective on another thread must not fall into.")
GAS_CONFIG_ROW(TEST_COLL_NOTE_DELAY, TIME, "0", NULL,
               "Testing only: a rank whose collective fails sleeps this long between putting its failure note to one member and to the next (0: never), so the members learn of the failure far apart, as they may when the rank is descheduled.")
GAS_CONFIG_ROW(PROGRESS, ENUM, "thread", "thread|poll",
               "Who serves incoming udp requests: a progress thread per rank that sleeps in epoll when idle (thread), or only the rank's own library calls (poll; see docs/udp.md for the trade-offs).")
GAS_CONFIG_ROW(STATS, BOOL, "n", NULL,
               "At gas_finalize every rank prints its per-peer counters (datagrams, bytes, retransmits, duplicates, bad datagrams, round trip), one line per peer (a peer over shm: a line saying it has none, since shared memory sends nothing), then the totals of its udp socket (and rdma), bad datagrams from strangers included.")
GAS_CONFIG_ROW(STATS_FILE, STRING, "", NULL,
               "At gas_finalize every rank writes the same counters to this file, a line of name=value fields per peer it has a route to and one of its totals, for gas-info --stats FILE... to print as a table; %r in the name is replaced by the rank (a name without it gets .RANK added). A file that cannot be written is a warning.")
GAS_CONFIG_ROW(UDP_IFACE, STRING, "", NULL,
               "Network interface whose IPv4 address the udp transport binds, by name (eth0) or by one of its IPv4 addresses (10.0.0.5; gasrun passes a host file's addr= so); an address no local interface has fails gas_init (default: the first UP non-loopback interface with one, else 127.0.0.1).")
GAS_CONFIG_ROW(UDP_PORT, UINT, "0", NULL,
               "Base udp port: a rank binds base + its rank on the node (0: an ephemeral port).")
GAS_CONFIG_ROW(UDP_MTU, SIZE, "auto", "auto",
               "Path MTU the udp transport fits its datagrams to (IP and UDP headers included; never fragmented). auto (or 0): 1500 towards ranks on other hosts; towards ranks on this host and in this network namespace, whose datagrams cross only the loopback device, that device's MTU (65536 by default: datagrams of up to 65507 bytes). A number applies to both. A rank whose interface (or, for ranks on its host, loopback device) has a smaller MTU uses that, and says so with its address: datagrams to it are no larger; an interface MTU below 364 fails gas_init naming the interface, and a loopback MTU below 364 fails the first contact with a rank on the host over udp, naming the device. Set it no higher than the smallest MTU on the paths between hosts (routers in between are not seen).")
GAS_CONFIG_ROW(UDP_SOCKBUF, SIZE, "4m", NULL,
               "Kernel send and receive buffer of the udp socket.")
GAS_CONFIG_ROW(UDP_WINDOW, UINT, "1024", NULL,
               "Most datagrams in flight to one peer, and how far ahead of the next expected one a receiver keeps datagrams. All ranks of a job must agree.")
GAS_CONFIG_ROW(UDP_INFLIGHT_NEAR, SIZE, "256k", NULL,
               "Most bytes in flight to one peer of the near link class (same node or same IPv4 subnet); the ceiling of its congestion window. To a rank on this host and network namespace it is at least 32 of its datagrams (2 MiB with GAS_UDP_MTU=auto).")
GAS_CONFIG_ROW(UDP_INFLIGHT_FAR, SIZE, "1m", NULL,
               "Most bytes in flight to one peer of the far link class (another subnet); the ceiling of its congestion window.")
GAS_CONFIG_ROW(UDP_INFLIGHT_TOTAL, SIZE, "8m", NULL,
               "Most bytes in flight from this rank to all peers together.")
GAS_CONFIG_ROW(UDP_SEND_QUEUE, SIZE, "4m", NULL,
               "Bytes a rank may queue towards one peer beyond its window before a put waits for room (the source is copied, so a put returns as soon as it is queued).")
GAS_CONFIG_ROW(UDP_RTO_MIN, TIME, "2ms", NULL,
               "Lower clamp of the udp retransmission timeout (computed from the measured round trip, RFC 6298); at most GAS_UDP_RTO_MAX (gas_init and gas-info refuse a larger one).")
GAS_CONFIG_ROW(UDP_RTO_MAX, TIME, "250ms", NULL,
               "Upper clamp of the retransmission timeout after exponential back-off; bounds how late traffic resumes after an outage.")
GAS_CONFIG_ROW(UDP_RTO_INIT, TIME, "20ms", NULL,
               "Retransmission timeout before the first round trip has been measured.")
GAS_CONFIG_ROW(UDP_ACK_DELAY, TIME, "500us", NULL,
               "How long a receiver may hold a standalone acknowledgement of a one-way stream (sooner when the sender asks or 16 datagrams are unacknowledged).")
GAS_CONFIG_ROW(UDP_LEASE, TIME, "0", NULL,
               "Progress-thread mode: how long an application thread that polled the socket inside a wait keeps it (the progress thread stands aside and runs no timers meanwhile, and takes over at most this long after the thread leaves the library). 0: 200us when every rank that shares this rank's CPUs (its node's, and those in other network namespaces or containers on the same machine with the same affinity mask) and its progress thread can have a CPU of its own, else 2ms (there a holder the scheduler preempts for longer than the lease loses it, and each hand-over wakes a thread that preempts a spinning one); the 200us lease grows to 2ms for the rest of the run once holders lose it to preemption twice within a second (CPUs shared with other jobs, or ranks with other affinity masks, which the first rule cannot see). A value set here is kept.")
GAS_CONFIG_ROW(UDP_GSO, BOOL, "y", NULL,
               "Send each run of equal-size datagrams to one peer as a single UDP GSO message (UDP_SEGMENT, up to 64 datagrams): the kernel cuts it up after one pass through its stack instead of one per datagram. Switched off by itself, with a log line, where the kernel or the route refuses it.")
GAS_CONFIG_ROW(UDP_PACE, BOOL, "y", NULL,
               "Pace the datagrams to each udp peer on another node at the rate its acknowledgements show the path delivers (twice that in slow start; see GAS_UDP_PACE_HEADROOM), cut when much is lost, so a window larger than a queue on the path does not overrun it in bursts.")
GAS_CONFIG_ROW(UDP_PACE_BURST, SIZE, "64k", NULL,
               "Bytes a paced udp peer may be sent back to back (at least one datagram); a timer sends the rest. Smaller bursts are smoother but wake the progress thread more often.")
GAS_CONFIG_ROW(UDP_PACE_HEADROOM, RATIO, "25%", NULL,
               "How much faster than its measured delivery rate a udp peer is paced (outside slow start and loss recovery), so that the rate can grow when the path has room; the congestion window still bounds what is in flight.")
GAS_CONFIG_ROW(UDP_LOSS_TOLERANCE, RATIO, "3%", NULL,
               "Loss rate of a udp peer's datagrams (a moving average over about 256) below which a loss shrinks its congestion window by 15% (random loss on a lossy link); above it, by half (a full queue).")
GAS_CONFIG_ROW(UDP_PEER_TIMEOUT, TIME, "30s", NULL,
               "A peer that acknowledges nothing for this long while operations to it are outstanding is declared dead: those operations fail with GAS_ERR_PEER naming it. Keep it well above the longest queueing delay on the path: acknowledgements wait in the same queues as data (a slow link with a deep queue, say 1 Mbit/s behind 256 KB of buffer, holds them for seconds). A rank on another host than gasrun whose boot connection breaks (a network outage) tries this long, and at least 30 s, to connect to gasrun again.")
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
GAS_CONFIG_ROW(TEST_UDP_GSO_REFUSE, BOOL, "n", NULL,
               "Test only: send without UDP checksums (SO_NO_CHECK), which makes the kernel refuse GSO sends, so the fall-back to one datagram per message runs.")
GAS_CONFIG_ROW(RDMA_DEVICE, STRING, "", NULL,
               "Verbs device of the rdma transport: a device name, empty for the first one found, sim for the software verbs back end (RC between processes of one host), none to disable rdma. A named device this host lacks is a warning, not an error (a cluster's nodes may differ): the rank goes on without rdma.")
GAS_CONFIG_ROW(RDMA_PORT, UINT, "1", NULL,
               "Port number of the verbs device.")
GAS_CONFIG_ROW(RDMA_GID_INDEX, UINT, "0", NULL,
               "GID table index used for RoCE / globally routed InfiniBand.")
GAS_CONFIG_ROW(RDMA_UPGRADE_AFTER, UINT, "1", NULL,
               "Operations to a peer over udp before it is upgraded to RC (1: on the first RMA; larger: only once the peer is hot). The program's operations count (its RMA, and the messages of its barriers and collectives), gas_init's own do not.")
GAS_CONFIG_ROW(RDMA_QPS_NEAR, UINT, "2", NULL,
               "Data queue pairs per peer of the near link class (same node).")
GAS_CONFIG_ROW(RDMA_QPS_FAR, UINT, "4", NULL,
               "Data queue pairs per peer of the far link class (another node).")
GAS_CONFIG_ROW(RDMA_QP_OUTSTANDING_NEAR, UINT, "32", NULL,
               "Most work requests outstanding on one queue pair, near link class.")
GAS_CONFIG_ROW(RDMA_QP_OUTSTANDING_FAR, UINT, "64", NULL,
               "Most work requests outstanding on one queue pair, far link class.")
GAS_CONFIG_ROW(RDMA_PEER_OUTSTANDING, UINT, "128", NULL,
               "Most work requests outstanding to one peer over all its queue pairs.")
GAS_CONFIG_ROW(RDMA_STRIPE_NEAR, SIZE, "64k", NULL,
               "Bytes of one work request when a transfer is striped over the queue pairs, near link class.")
GAS_CONFIG_ROW(RDMA_STRIPE_FAR, SIZE, "128k", NULL,
               "Bytes of one work request when a transfer is striped over the queue pairs, far link class.")
GAS_CONFIG_ROW(RDMA_INLINE, SIZE, "128", NULL,
               "Puts up to this size are posted inline (no registration or staging copy; the source is free at once).")
GAS_CONFIG_ROW(RDMA_SIGNAL_EVERY, UINT, "16", NULL,
               "Selective signalling: at least every this many work requests on a queue pair asks for a completion (and the last of an operation that waits for one).")
GAS_CONFIG_ROW(RDMA_RECV_DEPTH, UINT, "128", NULL,
               "Receives kept posted per queue pair for WRITE_WITH_IMM arrivals (signalled puts).")
GAS_CONFIG_ROW(RDMA_DQPLB, ENUM, "auto", "auto|y|n",
               "Signalled puts striped over the queue pairs as WRITE_WITH_IMM carrying a sequence number and a notify flag; the target applies the signal once every earlier piece arrived over any queue pair, from its progress thread (it sleeps on the receive CQ's completion channel), so the target need not call libgas. auto: y with GAS_PROGRESS=thread, n with poll (no thread would apply it while the target computes). n: the initiator waits for the payload's completion, then writes the signal with the NIC.")
GAS_CONFIG_ROW(RDMA_ATOMICS, ENUM, "auto", "auto|nic|cpu",
               "Where atomics to an RC peer run: nic (IB atomics; 64-bit fetch-add and compare-swap native, the rest by a compare-swap loop), cpu (over the udp request path, applied by the target's CPU), auto (nic when the device's atomics are coherent with the CPU's, else cpu). See docs/rdma.md.")
GAS_CONFIG_ROW(RDMA_FALLBACK, BOOL, "y", NULL,
               "After a queue pair fails (retry exceeded, remote access error), report the failed operations and carry on to that peer over udp (n: every later operation to the peer fails with GAS_ERR_PEER).")
GAS_CONFIG_ROW(RDMA_TIMEOUT, UINT, "14", NULL,
               "Local ACK timeout of RC queue pairs (4.096 us * 2^value; 14 is about 67 ms).")
GAS_CONFIG_ROW(RDMA_RETRY_CNT, UINT, "7", NULL,
               "Transport retries of an RC queue pair before its work requests fail with retry-exceeded.")
GAS_CONFIG_ROW(RDMA_RNR_RETRY, UINT, "7", NULL,
               "Receiver-not-ready retries (7: for ever).")
GAS_CONFIG_ROW(RDMA_MIN_RNR_TIMER, UINT, "12", NULL,
               "Minimum RNR NAK timer code the target advertises (12 is 0.64 ms).")
GAS_CONFIG_ROW(RDMA_PATH_MTU, SIZE, "4096", NULL,
               "Largest path MTU used (the port's active MTU when smaller).")
GAS_CONFIG_ROW(RDMA_RD_ATOMIC, UINT, "4", NULL,
               "RDMA READ/atomic operations in flight per queue pair, as initiator and as target.")
GAS_CONFIG_ROW(RDMA_SL, UINT, "0", NULL,
               "InfiniBand service level of the queue pairs.")
GAS_CONFIG_ROW(RDMA_HOP_LIMIT, UINT, "64", NULL,
               "Hop limit of globally routed (RoCE) packets.")
GAS_CONFIG_ROW(TEST_RDMA_RANKS, STRING, "", NULL,
               "Test only: comma-separated ranks that open the rdma device (empty: all); the others stay on udp, to test mixed jobs on one host.")
GAS_CONFIG_ROW(TEST_RDMA_DELAY, RATIO, "0", NULL,
               "Test only (sim device): fraction of work requests held back for GAS_TEST_RDMA_DELAY_TIME; later ones on the same queue pair wait behind them, other queue pairs overtake.")
GAS_CONFIG_ROW(TEST_RDMA_DELAY_TIME, TIME, "1ms", NULL,
               "Test only (sim device): how long GAS_TEST_RDMA_DELAY holds a work request back.")
GAS_CONFIG_ROW(TEST_RDMA_QP_ERROR, UINT, "0", NULL,
               "Test only (sim device): the Nth work request of this rank that carries data or an atomic (empty writes are not counted) fails with retry-exceeded (0: never).")
GAS_CONFIG_ROW(TEST_RDMA_ACCESS_ERROR, UINT, "0", NULL,
               "Test only (sim device): the Nth work request of this rank that carries data or an atomic (empty writes are not counted) fails with a remote access error (0: never).")
GAS_CONFIG_ROW(TEST_RDMA_MARKER_ERROR, UINT, "0", NULL,
               "Test only (sim device): the Nth empty write of this rank (a completion marker) fails with retry-exceeded (0: never).")
