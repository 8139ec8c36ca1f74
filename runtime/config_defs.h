/*
 * config_defs.h - every tunable of libgas, declared once.
 *
 * GAS_CONFIG_ROW(ID, TYPE, DEFAULT, CHOICES, DOC)
 *   ID       the variable is GAS_<ID>
 *   TYPE     SIZE (bytes, k/m/g/t/p suffixes), UINT, BOOL (y/yes/1/on, n/no/0/off),
 *            TIME (seconds; s/ms/us/ns suffixes), ENUM (one of CHOICES, "a|b|c"), STRING
 *   DEFAULT  the value as a user would write it
 * The parser, `gas-info` and docs/config.md are generated from this list.
 */
GAS_CONFIG_ROW(LOG_LEVEL, ENUM, "warn", "fatal|error|warn|info|debug|trace",
               "How much libgas logs to stderr.")
GAS_CONFIG_ROW(ERRORS, ENUM, "abort", "abort|return",
               "What an API error does after logging it: abort the whole job, or return the error code to the caller.")
GAS_CONFIG_ROW(SEGMENT_SIZE, SIZE, "4g", NULL,
               "Usable bytes of each rank's segment (virtual; pages are backed on first touch). Bounds what gas_malloc can hand out.")
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
GAS_CONFIG_ROW(COLL_SCRATCH, SIZE, "512k", NULL,
               "Scratch space per team on every rank (mailboxes for collectives; rounded up to 4 KiB). A team of P ranks needs about 128 * P bytes; larger values let big messages move in larger chunks.")
GAS_CONFIG_ROW(COLL_ZCOPY_MIN, SIZE, "16k", NULL,
               "Collective messages of at least this many bytes go straight into a destination buffer that lies in the receiver's segment (zero-copy) instead of through the mailboxes; 0: never.")
GAS_CONFIG_ROW(COLL_TEAMS, UINT, "32", NULL,
               "Teams (world included) that may exist at once on a rank, 1 .. 64; each takes GAS_COLL_SCRATCH of the segment (virtual, backed when used).")
GAS_CONFIG_ROW(COLL_TUNING, STRING, "", NULL,
               "A tuning table (format: docs/collectives.md) choosing each collective's algorithm by size and team shape; empty: the built-in copy of configs/coll-tuning.conf.")
GAS_CONFIG_ROW(COLL_BARRIER, ENUM, "auto", "auto|dissemination|hierarchical",
               "Force the algorithm of team barriers (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_BROADCAST, ENUM, "auto", "auto|binomial|scatter_allgather|hierarchical",
               "Force the algorithm of gas_broadcast (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_REDUCE, ENUM, "auto", "auto|binomial|reduce_scatter_gather|hierarchical",
               "Force the algorithm of gas_reduce (auto: the tuning table).")
GAS_CONFIG_ROW(COLL_ALLREDUCE, ENUM, "auto", "auto|recursive_doubling|rabenseifner|ring|hierarchical",
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
GAS_CONFIG_ROW(TEST_NODE_SIZE, UINT, "0", NULL,
               "Testing only: collectives treat every N consecutive ranks as one node (0: the real nodes), so hierarchical algorithms run on one host.")
