/*
 * config_defs.h - every tunable of libgas, declared once.
 *
 * GAS_CONFIG_ROW(ID, TYPE, DEFAULT, CHOICES, DOC)
 *   ID       the variable is GAS_<ID>
 *   TYPE     SIZE (bytes, k/m/g/t/p suffixes; CHOICES, if set, is a word that means 0),
 *            UINT, BOOL (y/yes/1/on, n/no/0/off),
 *            TIME (seconds; s/ms/us/ns suffixes), ENUM (one of CHOICES, "a|b|c"), STRING
 *   DEFAULT  the value as a user would write it
 * The parser, `gas-info` and docs/config.md are generated from this list.
 */
GAS_CONFIG_ROW(LOG_LEVEL, ENUM, "warn", "fatal|error|warn|info|debug|trace",
               "How much libgas logs to stderr.")
GAS_CONFIG_ROW(ERRORS, ENUM, "abort", "abort|return",
               "What an API error does after logging it: abort the whole job, or return the error code to the caller.")
GAS_CONFIG_ROW(BOOT_TIMEOUT, TIME, "30s", NULL,
               "How long gas_init waits to connect to gasrun's rendezvous when the rank runs on another host than gasrun (GASRUN_BOOT_ADDR); past it gas_init fails naming the address.")
GAS_CONFIG_ROW(SEGMENT_SIZE, SIZE, "auto", "auto",
               "Bytes of address space reserved for each rank's segment, which gas_malloc and gas_alloc share; pages are backed on first touch. auto: 3/8 of the address space this process may use (RLIMIT_AS, 47-bit user space) divided by the ranks on the node, rounded down to a power of two (and within GAS_SEGMENT_DIR's size). Every rank maps the segments of all ranks on its node, so ranks-per-node x size must fit 3/4 of that space.")
GAS_CONFIG_ROW(SEGMENT_DIR, STRING, "", NULL,
               "A tmpfs or hugetlbfs directory (e.g. /dev/shm) to hold the segments as unnamed files; empty: memfd segments. Its size then bounds what can be backed, and gas_init checks that the node's ranks can start in it.")
GAS_CONFIG_ROW(PREFAULT, BOOL, "n", NULL,
               "Back gas_malloc and gas_alloc memory when it is allocated (fallocate, after checking tmpfs, cgroup, overcommit and free memory), so that exhaustion is a GAS_ERR_NOMEM from the call rather than SIGBUS or the OOM killer on first touch. Costs the memory up front.")
GAS_CONFIG_ROW(NUMA, STRING, "local", NULL,
               "NUMA policy of each segment: local (the node of the rank's CPUs), interleave, node:N, or none (first touch). Read back with get_mempolicy; gas-info --memory shows each rank's.")
GAS_CONFIG_ROW(HUGEPAGES, ENUM, "auto", "auto|on|off",
               "Huge pages for segments: auto (the kernel's default for the backing), on (transparent huge pages via madvise, else the hugetlb pool; gas_init fails if neither is possible), off (madvise NOHUGEPAGE).")
GAS_CONFIG_ROW(ARENAS, UINT, "1", NULL,
               "gas_alloc arenas per NUMA node the rank uses (jemalloc arenas inside the segment); a thread uses the one of its node and CPU.")
GAS_CONFIG_ROW(TRANSPORT, ENUM, "auto", "auto|shm",
               "Force one transport for every peer (auto: fastest path per peer).")
GAS_CONFIG_ROW(TIMEOUT, TIME, "0", NULL,
               "Deadline of every wait (barrier, gas_wait_until, completion); 0 waits forever. Past it the call fails with GAS_ERR_TIMEOUT.")
GAS_CONFIG_ROW(STALL_WARN, TIME, "60s", NULL,
               "Log a warning naming the operation and peer when one wait has lasted this long (0: never).")
GAS_CONFIG_ROW(WAIT_SPIN, TIME, "20us", NULL,
               "How long a wait spins before it sleeps in the kernel; not used when the node runs more ranks than cores.")
GAS_CONFIG_ROW(CONFIG_FILE, STRING, "", NULL,
               "A file of NAME=VALUE lines (GAS_ prefix optional, # comments) read before the environment; the environment wins.")
