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
