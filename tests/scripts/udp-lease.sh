#!/usr/bin/env bash
# udp-lease.sh - the automatic socket lease grows where the scheduler preempts
# its holders.  One rank in each of two network namespaces (so each rank sees
# a node of its own, and the automatic rule picks the short lease: one rank
# and its progress thread fit two CPUs), the whole job pinned to two CPUs
# beside a busy loop on each (gasrun --bind-to none: were the two CPUs on two
# NUMA nodes, binding would give each rank one CPU, and the automatic rule the
# long lease from the start): tests/mr/test_udp_lease, a put-signal ping-pong
# with every payload checked.
#   1. GAS_UDP_LEASE=0 (automatic): a rank must log that its lease grew.
#   2. GAS_UDP_LEASE=200us (set by the user): no rank may change it.
# Skipped (77) with fewer than two usable CPUs or no udp transport.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_udp_lease
require_udp_test "$TEST" "ranks in two namespaces need it"
command -v taskset >/dev/null || { echo "no taskset"; exit 77; }
cpus=()
for c in $(seq 0 1023); do
    taskset -c "$c" true 2>/dev/null && cpus+=("$c")
    [ ${#cpus[@]} -ge 2 ] && break
done
[ ${#cpus[@]} -ge 2 ] || { echo "fewer than two usable CPUs"; exit 77; }
hogs=()
out=$(mktemp)
cleanup() { [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null; wait 2>/dev/null; rm -f "$out"; }
trap cleanup EXIT
for c in "${cpus[@]}"; do
    taskset -c "$c" sh -c 'while :; do :; done' &
    hogs+=($!)
done
run() { # GAS_UDP_LEASE value
    GAS_UDP_LEASE=$1 GAS_LOG_LEVEL=info GAS_PROGRESS=thread TEST_SECS=2 \
        taskset -c "${cpus[0]},${cpus[1]}" tests/scripts/netns-run.sh --limit 90 -- \
        -n 2 --ppn 1 --bind-to none --timeout 60 "$TEST" >"$out" 2>&1
}
if ! run 0; then
    cat "$out"; echo "FAIL: the ping-pong failed with the automatic lease"; exit 1
fi
grep 'turns in' "$out"
if ! grep -q 'the lease is now 2 ms' "$out"; then
    cat "$out"; echo "FAIL: preempted holders, yet no rank's automatic lease grew"; exit 1
fi
grep -o 'r[0-9]\] INFO udp .*lease is now 2 ms' "$out" | sed 's/^/PASS: /' | cut -c1-120
if ! run 200us; then
    cat "$out"; echo "FAIL: the ping-pong failed with GAS_UDP_LEASE=200us"; exit 1
fi
if grep -q 'the lease is now' "$out"; then
    cat "$out"; echo "FAIL: a lease set by GAS_UDP_LEASE was changed"; exit 1
fi
echo "PASS: GAS_UDP_LEASE=200us was kept"
