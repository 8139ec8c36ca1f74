#!/usr/bin/env bash
# udp-lease.sh - the automatic socket lease: counted over every rank that
# shares this rank's CPUs, and grown where the scheduler preempts its holders.
# One rank in each of two network namespaces (so each rank sees a node of its
# own: the launcher's count says one rank and its progress thread fit two
# CPUs), the job on two CPUs beside a busy loop on each (gasrun --bind-to
# none; each rank pinned with taskset by its GASRUN_RANK):
# tests/mr/test_udp_lease, a put-signal ping-pong with every payload checked.
#   1. GAS_UDP_LEASE=0 (automatic), both ranks on the same two CPUs: gas_init
#      counts two ranks (same kernel, same mask), four threads for two CPUs,
#      so each rank must say its lease is 2 ms from the start.
#   2. Automatic, rank 0 on both CPUs and rank 1 on the second only (other
#      masks: not counted as sharers): rank 0 keeps the short lease at first
#      and must log that it grew once the hogs preempted it.
#   3. GAS_UDP_LEASE=200us (set by the user): no rank may change it.
#   4. Three ranks of tests/mr/test_barrier, two in the first namespace and one
#      in the second, all on the same two CPUs: the lone rank must count three
#      ranks for two CPUs and say that its waits sleep at once (no spin).
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
both="${cpus[0]},${cpus[1]}"
# run LEASE MASK0 MASK1: the ping-pong, rank r pinned to MASKr
run() {
    LEASE_PIN0=$2 LEASE_PIN1=$3 GAS_UDP_LEASE=$1 GAS_LOG_LEVEL=info GAS_PROGRESS=thread \
        TEST_SECS=2 taskset -c "$both" tests/scripts/netns-run.sh --limit 90 -- \
        -n 2 --ppn 1 --bind-to none --timeout 60 sh -c \
        'if [ "$GASRUN_RANK" = 0 ]; then m=$LEASE_PIN0; else m=$LEASE_PIN1; fi; exec taskset -c "$m" "$0"' \
        "$TEST" >"$out" 2>&1
}
fail() { cat "$out"; echo "FAIL: $*"; exit 1; }

run 0 "$both" "$both" || fail "the ping-pong failed with the automatic lease, one mask"
for r in 0 1; do
    grep -q "r$r\] INFO udp [a-z]*\.c:[0-9]*: 2 ranks of this job .* share this rank's 2 CPUs: the lease is 2 ms" "$out" ||
        fail "rank $r shares its two CPUs with the other rank's namespace, yet did not take the 2 ms lease at start"
done
grep 'turns in' "$out"
echo "PASS: both ranks counted each other across the namespaces and took the 2 ms lease at start"

run 0 "$both" "${cpus[1]}" || fail "the ping-pong failed with the automatic lease, two masks"
grep 'turns in' "$out"
grep -q "share this rank's" "$out" && fail "ranks with different masks were counted as sharing CPUs"
grep -q 'r0\] INFO udp .*the lease is now 2 ms' "$out" ||
    fail "rank 0 was preempted by the busy loops, yet its automatic lease did not grow"
grep -o 'r0\] INFO udp .*lease is now 2 ms' "$out" | sed 's/^/PASS: /' | cut -c1-120

run 200us "$both" "$both" || fail "the ping-pong failed with GAS_UDP_LEASE=200us"
grep -q 'the lease is now\|the lease is 2 ms' "$out" && fail "a lease set by GAS_UDP_LEASE was changed"
echo "PASS: GAS_UDP_LEASE=200us was kept"

LEASE_PIN0=$both LEASE_PIN1=$both GAS_LOG_LEVEL=info taskset -c "$both" \
    tests/scripts/netns-run.sh --limit 90 -- -n 3 --ppn 2 --bind-to none --timeout 60 \
    "$BUILD/tests/mr/test_barrier" >"$out" 2>&1 || fail "three ranks' barriers failed"
grep -q 'r2\] INFO init .*oversubscribed: waits sleep at once' "$out" ||
    fail "rank 2 shares two CPUs with the other namespace's two ranks, yet its waits spin"
echo "PASS: the rank alone in its namespace counted the other namespace's ranks: its waits sleep at once"
