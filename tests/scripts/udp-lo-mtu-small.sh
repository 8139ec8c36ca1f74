#!/usr/bin/env bash
# udp-lo-mtu-small.sh - a loopback device whose MTU is below the 364 bytes
# udp needs, in a namespace whose ranks bind another interface (gas0, MTU
# 1500): ranks of that host cannot reach each other over udp.
#   1. GAS_TRANSPORT=udp, 2 ranks: gas_init fails at once (well within the
#      30 s GAS_UDP_PEER_TIMEOUT it waited before) with an error naming the
#      peer, the loopback device, its MTU and the fix.
#   2. GAS_TRANSPORT=auto: shm reaches the peer and the job passes.
# The namespaces come from lib-netns.sh (no traffic leaves them).
. "$(dirname "$0")/lib-tmp.sh"
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_barrier
require_udp_test "$TEST"
. tests/scripts/lib-netns.sh   # (exits 77 unless root)
on_exit() { rm -rf "$T"; }     # lib-netns.sh's exit trap replaced lib-tmp.sh's
netns_setup 2
ip -n "${NS[0]}" link set lo mtu 300 || fail "lo mtu 300 in ${NS[0]}"
GASRUN=$(readlink -f "$BUILD/bin/gasrun")
PROG=$(readlink -f "$TEST")
OUT=$T/out

start=$SECONDS
ip netns exec "${NS[0]}" env GAS_TRANSPORT=udp GAS_UDP_IFACE=$NS_DEV \
    timeout -k 5 50 "$GASRUN" -n 2 --timeout 45 "$PROG" >"$OUT" 2>&1
rc=$?
took=$((SECONDS - start))
[ "$rc" != 0 ] || { tail -5 "$OUT"; fail "the udp job passed with lo at MTU 300"; }
grep -q "loopback device, whose MTU (300) is below the 364 bytes udp needs" "$OUT" ||
    { tail -8 "$OUT"; fail "no error naming the loopback device's MTU (rc=$rc)"; }
[ "$took" -lt 20 ] || fail "the udp job took $took s to fail"
echo "ok: GAS_TRANSPORT=udp failed in $took s: $(grep -m1 -o 'rank [0-9] is on this host.*' "$OUT")"

ip netns exec "${NS[0]}" env GAS_TRANSPORT=auto GAS_UDP_IFACE=$NS_DEV \
    timeout -k 5 50 "$GASRUN" -n 2 --timeout 45 "$PROG" >"$OUT" 2>&1 ||
    { tail -8 "$OUT"; fail "GAS_TRANSPORT=auto with lo at MTU 300"; }
echo "PASS: lo MTU 300: udp refused naming it, shm (auto) works"
