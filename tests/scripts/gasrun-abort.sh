#!/usr/bin/env bash
# gasrun: ABORT from a rank ends the job with its code and message.
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 4 "$CLIENT" abort "$MARK"
expect_rc 7 "abort"
expect_err "gasrun: rank 1 aborted (code 7): boot_client test abort" "abort"
expect_faster 5000 "abort"
check_clean "abort"
pass "ABORT code 7 -> 7"
