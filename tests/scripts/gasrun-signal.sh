#!/usr/bin/env bash
# gasrun: a rank killed by a signal -> 128 + signal, the others torn down.
. "$(dirname "$0")/lib-gasrun.sh"

for s in KILL:137 SEGV:139; do
    sig=${s%:*} want=${s#*:}
    run_job -n 3 "$CLIENT" kill "$sig" "$MARK"
    expect_rc "$want" "SIG$sig"
    expect_err "gasrun: rank 1 killed by signal SIG$sig" "SIG$sig"
    expect_faster 5000 "SIG$sig"
    check_clean "SIG$sig"
    pass "rank killed by SIG$sig -> $want"
done
