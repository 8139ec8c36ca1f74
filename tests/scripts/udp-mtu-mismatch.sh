#!/usr/bin/env bash
# udp-mtu-mismatch.sh - two "hosts" whose interfaces have different MTUs:
# namespace A's end of the veth takes 9000-byte frames, B's only 1500, and
# GAS_UDP_MTU=9000 for every rank.  Each rank caps its datagrams at its own
# interface's MTU and publishes that cap with its address; a rank sends each
# peer datagrams no larger than the peer's cap.  tests/mr/test_put_get (every
# put and get flavour, ~2 KiB slices: one datagram each at 9000 bytes, which
# B's end would drop) must pass, and rank 0 must say that rank 1 takes smaller
# datagrams.  GAS_UDP_PEER_TIMEOUT=5s, so a rank whose datagrams vanish fails
# fast instead of hanging.  Then B's interface MTU goes down to 340, below
# the 364 the transport needs: gas_init on B must fail at once naming the
# interface and its MTU (it used to start and fail puts with GAS_ERR_NOMEM).
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_put_get
require_udp_test "$TEST" "ranks in two namespaces need it"
. tests/scripts/lib-netns.sh
out=$(mktemp)
on_exit() { rm -f "$out"; }
netns_setup 2
ip -n "${NS[0]}" link set "$NS_DEV" mtu 9000 || { echo "FAIL: cannot set the MTU"; exit 1; }
GAS_UDP_MTU=9000 GAS_UDP_IFACE=$NS_DEV GAS_UDP_PEER_TIMEOUT=5s GAS_LOG_LEVEL=info \
    timeout -k 5 100 ip netns exec "${NS[0]}" "$BUILD/bin/gasrun" --hosts "${NS[0]}:1,${NS[1]}:1" \
    --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}" -n 2 --timeout 90 "$TEST" >"$out" 2>&1
rc=$?
grep -E 'passed|FAIL|dead|at most' "$out" | cut -c1-200
[ $rc = 0 ] || { tail -20 "$out"; echo "FAIL: test_put_get over MTUs 9000 and 1500 exited $rc"; exit 1; }
grep -q 'r0\] INFO udp .*rank 1 takes datagrams of at most 1472 bytes' "$out" ||
    { echo "FAIL: rank 0 did not lower its datagrams to rank 1's 1472 bytes"; exit 1; }
netns_check_clean "mtu mismatch"
echo "ok: rank 0 (MTU 9000) sent rank 1 (MTU 1500) datagrams of at most 1472 bytes; every byte checked"

ip -n "${NS[1]}" link set "$NS_DEV" mtu 340 || { echo "FAIL: cannot set the MTU to 340"; exit 1; }
GAS_UDP_IFACE=$NS_DEV GAS_UDP_PEER_TIMEOUT=5s \
    timeout -k 5 60 ip netns exec "${NS[0]}" "$BUILD/bin/gasrun" --hosts "${NS[0]}:1,${NS[1]}:1" \
    --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}" -n 2 --timeout 40 "$TEST" >"$out" 2>&1
rc=$?
grep -E 'ERROR|aborted|FATAL' "$out" | head -3 | cut -c1-240
[ $rc != 0 ] && [ $rc != 124 ] || { tail -5 "$out"; echo "FAIL: an interface MTU of 340: exit $rc"; exit 1; }
grep -q "r1\] .*gas_init: the udp transport's interface $NS_DEV (${NS_ADDR[1]}:[0-9]*) has an MTU of 340, below the 364" "$out" ||
    { tail -5 "$out"; echo "FAIL: an interface MTU of 340 was not refused at gas_init naming it"; exit 1; }
! grep -q 'no memory' "$out" || { echo "FAIL: GAS_ERR_NOMEM with a small interface MTU"; exit 1; }
netns_check_clean "mtu too small"
echo "PASS: MTUs 9000 and 1500 work together; an interface MTU of 340 fails gas_init naming it"
