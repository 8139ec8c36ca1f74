#!/usr/bin/env bash
# netns-count.sh one-node | udp - a real libgas program (examples/count)
# started by gasrun over network namespaces (tests/scripts/netns-run.sh):
#   one-node  3 ranks in one namespace, gasrun in it too, but every rank
#             launched by `ip netns exec` and booting over TCP (GASRUN_BOOT_ADDR);
#             the ranks share a node, so shm carries their RMA
#   udp       4 ranks, 2 per namespace: two nodes, which only the udp transport
#             joins; then again with 1% of the packets each namespace sends
#             dropped and 1% duplicated (nftables on the veth).  Skipped (77)
#             while build/bin/gas-info lists no udp transport.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
COUNT=$BUILD/examples/count
for b in "$BUILD/bin/gas-info" "$BUILD/bin/gasrun" "$COUNT"; do
    [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT

check() { # what nranks gasrun-args -- netns-run-args...
    local what=$1 n=$2 gargs=$3; shift 3
    # shellcheck disable=SC2086
    tests/scripts/netns-run.sh --limit 120 "$@" -- -n "$n" $gargs --timeout 100 "$COUNT" >"$out"
    local rc=$? want=$((n * (n + 1) / 2)) r
    [ $rc = 0 ] || { cat "$out"; echo "FAIL: $what: exit status $rc"; exit 1; }
    for ((r = 0; r < n; r++)); do
        grep -qxF "[$r] rank $r: counters correct (each $want)" "$out" ||
            { cat "$out"; echo "FAIL: $what: rank $r"; exit 1; }
    done
    echo "PASS: $what"
}

case "${1:-}" in
one-node)
    check "count, 3 ranks booting over TCP in one namespace" 3 "--ppn 3"
    ;;
udp)
    if ! "$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp; then
        echo "no udp transport compiled in (build/bin/gas-info); ranks in two namespaces need it"
        exit 77
    fi
    check "count, 4 ranks over 2 namespaces" 4 ""
    check "count with 1% loss and 1% duplication" 4 "" --loss 1 --dup 1
    ;;
*)
    echo "usage: netns-count.sh one-node|udp" >&2
    exit 2
    ;;
esac
