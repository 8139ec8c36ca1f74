#!/usr/bin/env bash
# gasrun and gas_init: every rank of a job must join it.  A rank that lost its
# boot channel (GASRUN_BOOT_FD) fails gas_init instead of running as a job of
# one; gasrun fails a libgas job in which a rank exited 0 without joining;
# gas_init waits for late ranks, warns after GAS_STALL_WARN and fails after
# GAS_TIMEOUT naming the ranks not arrived, and gasrun -v names them too.
. "$(dirname "$0")/lib-gasrun.sh"
COUNT=$BUILD/examples/count
HANG=$BUILD/tests/gasrun/gas_hang
for b in "$COUNT" "$HANG"; do [ -x "$b" ] || fail "$b is not built (make all tests)"; done
export GAS_ERRORS=abort

# Both ranks lose GASRUN_BOOT_FD: gas_init fails, naming the variables.
run_job -n 2 env -u GASRUN_BOOT_FD "$COUNT" "$MARK"
[ "$RC" != 0 ] || fail "lost boot fd: gasrun exited 0"
expect_err "GASRUN_NRANKS=2 say this process is a rank of a job" "lost boot fd"  # (rank 0 or 1: the first to fail ends the job)
expect_err "neither GASRUN_BOOT_FD nor GASRUN_BOOT_ADDR is set" "lost boot fd"
grep -q 'counters correct' "$TMPD/out" && fail "lost boot fd: a rank ran as a job of one"
check_clean "lost boot fd"
pass "ranks without GASRUN_BOOT_FD fail gas_init (status $RC)"

# Rank 1 runs as a job of one (its GASRUN_* removed) and exits 0; rank 0 is
# left waiting in gas_init: gasrun names rank 1 and fails the job at once.
nap=30.$$
run_job -n 2 sh -c '[ "$GASRUN_RANK" = 1 ] && exec env -u GASRUN_BOOT_FD -u GASRUN_NRANKS "$0"; exec "$0"' "$COUNT" "$MARK"
expect_rc 1 "unjoined rank"
expect_err "gasrun: rank 1 exited without joining the job (it never called gas_init, or lost GASRUN_BOOT_FD)" "unjoined rank"
expect_faster 10000 "unjoined rank"
check_clean "unjoined rank"
pass "a rank that exits 0 without joining fails the job in ${MS} ms"

# Rank 1 never calls gas_init: the others warn after GAS_STALL_WARN and fail
# after GAS_TIMEOUT, naming it; gasrun -v names it while they wait.
GAS_TIMEOUT=3s GAS_STALL_WARN=1s run_job -v -n 3 --timeout 15 \
    sh -c '[ "$GASRUN_RANK" = 1 ] && exec sleep '$nap'; exec "$0"' "$HANG" "$MARK"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "never: gasrun exited $RC, expected a rank's failure"
expect_err "s (GAS_STALL_WARN) for 1 of 3 ranks to call gas_init; not arrived: rank 1" "never"
expect_err "s (GAS_TIMEOUT) for 1 of 3 ranks to call gas_init; not arrived: rank 1" "never"
expect_err "1 of 3 ranks not connected yet (gas_init not called): rank 1" "never (gasrun -v)"
expect_faster 10000 "never"
check_clean "never"
[ -z "$(pgrep -xf "sleep $nap")" ] || fail "never: rank 1's sleep survived"
pass "gas_init honours GAS_STALL_WARN and GAS_TIMEOUT naming the rank not arrived (${MS} ms)"

# A late rank is waited for: the job succeeds.
GAS_TIMEOUT=20s run_job -n 3 sh -c '[ "$GASRUN_RANK" = 1 ] && sleep 1; exec "$0"' "$COUNT" "$MARK"
expect_rc 0 "late rank"
[ "$(grep -c 'counters correct' "$TMPD/out")" = 3 ] || fail "late rank: not every rank counted"
check_clean "late rank"
pass "a rank that calls gas_init 1 s late is waited for"
