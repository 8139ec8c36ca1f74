#!/usr/bin/env bash
# gasrun: the boot protocol at its edges: requests in flight (a pipelined
# KV_GET behind a BARRIER, the largest value, replies backing up), a rank
# leaving right after its last BARRIER, and broken messages (the job fails
# with a clear message instead of hanging).
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 3 "$CLIENT" pipeline "$MARK"
expect_rc 0 "pipeline"
for r in 0 1 2; do grep -qxF "[$r] rank $r pipeline ok" "$TMPD/out" || fail "pipeline: rank $r"; done
check_clean "pipeline"
pass "pipelined requests in ${MS} ms"

for i in 1 2 3; do
    run_job -n 4 "$CLIENT" barrier-exit "$MARK"
    expect_rc 0 "barrier-exit #$i"
    check_clean "barrier-exit"
done
pass "BARRIER, FINI and exit without waiting"

for what in "unknown:protocol error: unexpected unknown message (type 99)" \
            "oversize:protocol error: KV_PUT message of 2097152 bytes" \
            "nohello:bad HELLO: first message is KV_PUT" \
            "shorthello:bad HELLO: 12 payload bytes"; do
    w=${what%%:*} msg=${what#*:}
    run_job -n 3 "$CLIENT" proto "$w" "$MARK"
    expect_rc 1 "proto $w"
    expect_err "gasrun: rank 1: $msg" "proto $w"
    expect_faster 5000 "proto $w"
    check_clean "proto $w"
    pass "proto $w -> 1"
done
