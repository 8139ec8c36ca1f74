#!/usr/bin/env bash
# gasrun: --timeout ends a hung job with 124; ranks that ignore SIGTERM are
# SIGKILLed after the grace period.
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 3 --timeout 2 "$CLIENT" hang "$MARK"
expect_rc 124 "timeout"
expect_err "gasrun: job timed out after 2 s; killing 3 ranks" "timeout"
[ "$MS" -ge 1900 ] || fail "timeout: ended after ${MS} ms, before the timeout"
expect_faster 5000 "timeout"
check_clean "timeout"
pass "--timeout 2 -> 124 in ${MS} ms"

run_job -n 2 --timeout 0.5 "$CLIENT" hang-noterm "$MARK"
expect_rc 124 "timeout, SIGTERM ignored"
[ "$MS" -ge 2400 ] || fail "SIGTERM ignored: ended after ${MS} ms, before the grace period"
expect_faster 6000 "SIGTERM ignored"
check_clean "SIGTERM ignored"
pass "SIGTERM ignored -> SIGKILL after the grace period (${MS} ms)"

# A value past the largest accepted is refused naming the bound.
run_job -n 1 --timeout 8e9 true
expect_rc 2 "--timeout 8e9"
expect_err "--timeout wants seconds (a number from 0 to 1e9; 0: never), not '8e9'" "--timeout 8e9"
pass "--timeout 8e9 -> 2 naming the bound"
