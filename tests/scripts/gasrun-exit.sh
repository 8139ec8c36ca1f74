#!/usr/bin/env bash
# gasrun: a rank's exit status is the job's; the other ranks are killed at once.
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 4 "$CLIENT" exit 3 "$MARK"
expect_rc 3 "exit 3"
expect_err "gasrun: rank 1 exited with status 3" "exit 3"
expect_faster 5000 "exit 3"
check_clean "exit 3"
pass "rank 1 exits 3 -> 3 in ${MS} ms"

# A rank that exits 0 while the others wait in a barrier it can no longer
# join: the job fails instead of hanging.
run_job -n 4 "$CLIENT" early-exit "$MARK"
[ "$RC" != 0 ] || fail "early-exit: gasrun exited 0"
expect_err "barrier" "early-exit"
expect_faster 5000 "early-exit"
check_clean "early-exit"
pass "early exit during a barrier -> $RC in ${MS} ms"

# A libgas rank that exits 0 without gas_finalize while the others wait in
# gas_barrier (a data-plane barrier gasrun cannot see): gasrun says so at
# once, and the others' barrier fails naming the rank whose process is gone
# (the program then exits 5; the job ends so, not by --timeout's 124); with
# GAS_ERRORS=abort the job ends with the abort's code 1.
GAS_ERRORS=return GAS_TEST_EXIT_RANK=1 run_job -n 3 --timeout 20 "$BUILD/tests/gasrun/gas_hang" "$MARK"
expect_rc 5 "exit 0 without gas_finalize"
expect_err "rank 1 exited with status 0 without calling gas_finalize while 2 ranks still run" \
    "exit 0 without gas_finalize"
expect_err "gas_barrier: rank 1 is gone: its process on this node has ended" \
    "exit 0 without gas_finalize"
check_clean "exit 0 without gas_finalize"
GAS_ERRORS=abort GAS_TEST_EXIT_RANK=1 run_job -n 2 --timeout 20 "$BUILD/tests/gasrun/gas_hang" "$MARK"
expect_rc 1 "exit 0 without gas_finalize (abort)"
expect_err "aborted (code 1): rank 0: gas_barrier: rank 1 is gone" "exit 0 without gas_finalize (abort)"
check_clean "exit 0 without gas_finalize (abort)"
pass "exit 0 without gas_finalize is reported, and the others' barrier fails"

# Programs that never speak the protocol are fine.
run_job -n 3 sh -c 'exit 0' "$MARK"
expect_rc 0 "sh exit 0"
nap=30.$$  # sleep's command line does not carry the marker: find it by this
run_job -n 3 sh -c '[ "$GASRUN_RANK" = 2 ] && exit 42; sleep '$nap "$MARK"
expect_rc 42 "sh exit 42"
expect_faster 5000 "sh exit 42"
check_clean "sh exit 42"
[ -z "$(pgrep -xf "sleep $nap")" ] || fail "sh exit 42: a rank's sleep survived"
pass "plain programs"
