#!/usr/bin/env bash
# udp-iface-lo-hosts.sh - ranks on two "hosts" (network namespaces) bound to
# the loopback device (GAS_UDP_IFACE=lo) publish 127.0.0.1, which the other
# host cannot reach.  The node identities differ, so each rank warns at its
# first contact with the other that it "published a loopback address", and
# the job fails (within a second: nothing listens at 127.0.0.1:PORT in the
# sender's own namespace, so the port is refused; else after
# GAS_UDP_PEER_TIMEOUT, 3 s here) with that cause in the peer's death
# message, rather than a bare "dead or unreachable".
. "$(dirname "$0")/lib-tmp.sh"
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_barrier
require_udp_test "$TEST"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (network namespaces)"; exit 77; }
OUT=$T/out
start=$SECONDS
GAS_UDP_IFACE=lo GAS_TRANSPORT=udp GAS_UDP_PEER_TIMEOUT=3s \
    tests/scripts/netns-run.sh --limit 60 -- -n 2 --timeout 50 "$TEST" >"$OUT" 2>&1
rc=$?
took=$((SECONDS - start))
[ "$rc" != 0 ] || { tail -5 "$OUT"; fail "a job bound to lo on two hosts passed"; }
n=$(grep -c "WARN .*rank [01] may be unreachable: it is on another host but published a loopback address (127\.0\.0\.1:[0-9]*)" "$OUT")
[ "$n" -ge 1 ] || { tail -12 "$OUT"; fail "no first-contact warning naming the loopback address"; }
grep -q "declared dead: .*published a loopback address" "$OUT" ||
    { tail -12 "$OUT"; fail "the death message does not give the loopback address as the cause"; }
[ "$took" -lt 40 ] || fail "the job took $took s to fail"
echo "PASS: bound to lo on two hosts: warned at first contact ($n), failed in $took s naming the cause"
