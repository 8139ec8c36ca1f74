#!/usr/bin/env bash
# udp-reject-blips.sh - a firewall on the peer's host that rejects its udp port
# (ICMP port unreachable) for 0.4 s, three times 3 s apart, must not get a live
# peer declared dead, even one silent meanwhile: rank 1 (GAS_PROGRESS=poll)
# computes 10 s outside libgas while rank 0 sits in gas_wait_until, knocking at it
# (docs/udp.md, "Dead peers").  Refusals that stop end their episode; only
# refusals that go on for the grace (1 s) declare a death.  Before, the first
# refusal's time was kept until the peer was heard from, so the second blip
# found it 3 s old and killed the rank.  Runs in a network namespace of its own
# (lo only, nftables inside it), so the fixed port collides with nothing.
source "$(dirname "$0")/lib-tmp.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)"; exit 77; }
ns=gas-t$$-rj
cleanup() {
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$ns" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT INT TERM HUP
ip netns add "$ns" && ip -n "$ns" link set lo up || fail "cannot create namespace $ns"
nsx() { ip netns exec "$ns" "$@"; }
nsx nft add table inet gasrj && nsx nft add chain inet gasrj in '{ type filter hook input priority 0; }' ||
    fail "nftables unavailable"
out=$T/out
QUIET_S=10 GAS_TRANSPORT=udp GAS_PROGRESS=poll GAS_UDP_PORT=41000 GAS_ERRORS=return \
    timeout -k 5 60 ip netns exec "$ns" "$BUILD/bin/gasrun" -n 2 --timeout 50 \
    "$BUILD/tests/mr/test_wait_quiet_writer" >"$out" 2>&1 &
job=$!
for _ in $(seq 200); do grep -q "rank 0\] waiting" "$out" && break; sleep 0.05; done
grep -q "rank 0\] waiting" "$out" || { cat "$out"; fail "rank 0 never began its wait"; }
sleep 1.2   # rank 1 silent for a second: rank 0 knocks every 250 ms
for k in 1 2 3; do
    nsx nft add rule inet gasrj in udp dport 41001 reject || fail "cannot add the reject rule"
    sleep 0.4
    nsx nft flush chain inet gasrj in
    echo "reject blip $k done"
    sleep 3
done
wait $job
rc=$?
cat "$out"
[ $rc = 0 ] || fail "the job failed (status $rc): a live rank was declared dead for short rejects"
grep -q "waited .* for a writer silent for 10 s" "$out" || fail "rank 0 did not report its wait"
echo "PASS: three 0.4 s rejects of a silent live peer's port did not declare it dead"
