#!/usr/bin/env bash
# udp-local-mtu.sh - GAS_UDP_MTU=auto (the default) sends datagrams of up to
# 65507 bytes to ranks on the same host and network namespace (they cross
# only the loopback device) and of the interface's size to ranks elsewhere.
# tests/mr/test_sizes (transfers up to 16 MiB, every byte checked) runs over
# udp and every rank writes its counters (GAS_STATS_FILE); from rank 0's
# line for a peer, bytes_sent / datagrams_sent is the mean datagram:
#   1. one host, 2 ranks: above 16 KiB with auto, at most 1472 with
#      GAS_UDP_MTU=1500;
#   2. two network namespaces joined by a veth of MTU 1500, 4 ranks, 2 in
#      each: above 16 KiB to rank 1 (same namespace), at most 1472 to ranks
#      2 and 3 (a larger datagram does not fit the veth: the kernel refuses
#      it, and the test would fail).
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_sizes
require_udp_test "$TEST"
T=$(mktemp -d)
on_exit() { rm -rf "$T"; }
trap on_exit EXIT
fail() { echo "FAIL: $*"; exit 1; }

# mean_dgram RANK PEER: rank's mean datagram to peer, from its stats file
mean_dgram() {
    awk -v p="peer=$2" '$0 ~ " " p " " {
        for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        if (v["datagrams_sent"] > 0) printf "%d\n", v["bytes_sent"] / v["datagrams_sent"]
    }' "$T/st.$1"
}

run_host() { # MTU-SETTING
    rm -f "$T"/st.*
    GAS_UDP_MTU=$1 GAS_TRANSPORT=udp GAS_STATS_FILE="$T/st.%r" \
        timeout -k 5 100 "$BUILD/bin/gasrun" -n 2 --timeout 90 "$TEST" >"$T/out" 2>&1 ||
        { tail -20 "$T/out"; fail "test_sizes over udp on one host, GAS_UDP_MTU=$1"; }
}
run_host auto
m=$(mean_dgram 0 1)
[ -n "$m" ] && [ "$m" -gt 16384 ] || fail "one host, auto: mean datagram to rank 1 is '$m' B, want > 16384"
echo "ok: one host, GAS_UDP_MTU=auto: mean datagram $m B"
run_host 1500
m=$(mean_dgram 0 1)
[ -n "$m" ] && [ "$m" -le 1472 ] || fail "one host, GAS_UDP_MTU=1500: mean datagram '$m' B, want <= 1472"
echo "ok: one host, GAS_UDP_MTU=1500: mean datagram $m B"

[ "$(id -u)" = 0 ] || { echo "skipped: the namespace part needs root"; exit 77; }
rm -f "$T"/st.*
GAS_TRANSPORT=udp GAS_STATS_FILE="$T/st.%r" GAS_UDP_PEER_TIMEOUT=10s \
    tests/scripts/netns-run.sh --limit 110 -- -n 4 --timeout 100 "$TEST" >"$T/out" 2>&1 ||
    { tail -20 "$T/out"; fail "test_sizes over two namespaces"; }
near=$(mean_dgram 0 1)
far2=$(mean_dgram 0 2)
far3=$(mean_dgram 0 3)
[ -n "$near" ] && [ "$near" -gt 16384 ] ||
    fail "namespaces: mean datagram to rank 1 (same namespace) '$near' B, want > 16384"
for f in "$far2" "$far3"; do
    [ -n "$f" ] && [ "$f" -le 1472 ] ||
        fail "namespaces: mean datagram to ranks 2 and 3 '$far2' / '$far3' B, want <= 1472"
done
echo "PASS: auto: $near B to the same namespace, $far2 / $far3 B over the veth; 1500 on one host: $m B"
