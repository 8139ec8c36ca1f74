#!/usr/bin/env bash
# coll-lost-netns.sh - a rank stops in the middle of world collectives in a job
# over two network namespaces (2 ranks each, so the collectives are
# hierarchical and only the victim's node-mate waits for it, over shm): every
# survivor must fail within GAS_UDP_PEER_TIMEOUT and some slack, not hang.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 77; }
fail=0
for case in "allreduce 3" "bcast 3" "barrier 1"; do
    set -- $case
    out=$(GAS_UDP_PEER_TIMEOUT=2s GAS_ERRORS=return GAS_LOG_LEVEL=fatal \
          tests/scripts/netns-run.sh --limit 60 -- -n 4 --ppn 2 --timeout 50 \
          "$PWD/$BUILD/tests/mr/test_coll_lost" "$1" "$2" 2>&1)
    rc=$?
    n=$(printf '%s\n' "$out" | grep -c '^\[[0-9]\] survivor: rank [0-9]: .* after [0-9.]* s: .')
    if [ $rc != 5 ] || [ "$n" != 3 ]; then
        echo "FAIL: $1, victim $2: exit $rc (want 5 from rank 0's abort), $n of 3 survivors failed cleanly"
        printf '%s\n' "$out" | tail -8
        fail=1
    else
        printf '%s\n' "$out" | grep 'survivor: rank' | sed "s/^/  $1: /"
    fi
done
[ $fail = 0 ] && echo "PASS: every survivor failed instead of waiting for the stopped rank"
exit $fail
