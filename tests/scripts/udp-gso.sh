#!/usr/bin/env bash
# udp-gso.sh - the udp transport's sends with and without UDP GSO: the sizes
# conformance test (every size from 1 B to several MiB, checked byte by byte)
# over udp on this host, 3 ranks,
#   1. with the kernel refusing GSO (GAS_TEST_UDP_GSO_REFUSE sets SO_NO_CHECK):
#      the transport must say so once per rank and fall back, losing nothing;
#   2. with GSO turned off (GAS_UDP_GSO=n).
# (Every other udp test runs with GSO on, the default.)  Skipped (77) while
# build/bin/gas-info lists no udp transport.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_sizes
require_udp_test "$TEST"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# 1472-byte datagrams, as to other hosts: on this host GAS_UDP_MTU=auto sends
# datagrams of up to 65507 bytes, which go one per message, without GSO.
export GAS_TRANSPORT=udp GAS_ERRORS=return GAS_UDP_MTU=1500
GAS_LOG_LEVEL=info GAS_TEST_UDP_GSO_REFUSE=y "$BUILD/bin/gasrun" -n 3 --timeout 100 "$TEST" >"$out" 2>&1 ||
    { cat "$out"; echo "FAIL: sizes over udp with GSO refused by the kernel"; exit 1; }
n=$(grep -c "refused a UDP GSO send" "$out")
[ "$n" -ge 1 ] || { cat "$out"; echo "FAIL: no rank reported the refused GSO send"; exit 1; }
echo "PASS: GSO refused ($n ranks fell back), every size intact"
GAS_UDP_GSO=n "$BUILD/bin/gasrun" -n 3 --timeout 100 "$TEST" >"$out" 2>&1 ||
    { cat "$out"; echo "FAIL: sizes over udp with GAS_UDP_GSO=n"; exit 1; }
echo "PASS: GAS_UDP_GSO=n, every size intact"
