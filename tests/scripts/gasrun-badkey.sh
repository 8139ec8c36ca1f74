#!/usr/bin/env bash
# gasrun: a HELLO with a wrong job key fails the job at once (the rank itself
# keeps sleeping, so only gasrun's check can end it).
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 3 "$CLIENT" badkey "$MARK"
[ "$RC" != 0 ] && [ "$RC" != 124 ] || fail "badkey: gasrun exited $RC"
expect_err "rank 1: bad HELLO: wrong job key" "badkey"
expect_faster 5000 "badkey"
check_clean "badkey"
pass "bad key -> $RC in ${MS} ms"
