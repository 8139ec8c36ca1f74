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
expect_err "--timeout wants a duration (seconds, or with a unit: 90, 1.5s, 500ms, 10min; at most 1e9 s; 0: never), not '8e9': above 1e9 s" "--timeout 8e9"
pass "--timeout 8e9 -> 2 naming the bound"

# Units as GAS_TIMEOUT takes them; a bare m is refused as ambiguous.
run_job -n 2 --timeout 700ms "$CLIENT" hang "$MARK"
expect_rc 124 "--timeout 700ms"
expect_err "gasrun: job timed out after 700ms; killing 2 ranks" "--timeout 700ms"
[ "$MS" -ge 600 ] || fail "--timeout 700ms: ended after ${MS} ms"
expect_faster 5000 "--timeout 700ms"
check_clean "--timeout 700ms"
run_job -n 1 --timeout 1m true
expect_rc 2 "--timeout 1m"
expect_err "not '1m': ambiguous unit 'm' (write min for minutes or ms for milliseconds)" "--timeout 1m"
run_job -n 1 --timeout 0.01min true
expect_rc 0 "--timeout 0.01min"
pass "--timeout 700ms -> 124; 1m refused as ambiguous; 0.01min accepted"
