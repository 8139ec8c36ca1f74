#!/usr/bin/env bash
# udp-peer-death.sh - a rank killed mid-run (SIGKILL) over udp: the survivor's
# operation to it fails with GAS_ERR_PEER within GAS_UDP_PEER_TIMEOUT instead of
# hanging.  gasrun tears the job down when a rank dies (SIGTERM, then SIGKILL
# 2 s later), so the survivor ignores SIGTERM and must report within those 2 s;
# the job's status is the killed rank's (128 + 9).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
GAS_TRANSPORT=udp GAS_UDP_PEER_TIMEOUT=500ms GAS_ERRORS=return \
    timeout 60 "$BUILD/bin/gasrun" -n 2 --timeout 50 "$BUILD/tests/mr/test_udp_peer" kill >"$out" 2>&1
rc=$?
cat "$out"
[ $rc = 137 ] || { echo "FAIL: expected status 137 (rank 1 killed), got $rc"; exit 1; }
grep -q 'survivor: GAS_ERR_PEER after .*rank 1' "$out" ||
    { echo "FAIL: the survivor did not report GAS_ERR_PEER naming rank 1"; exit 1; }
echo "PASS: the survivor saw GAS_ERR_PEER naming the killed rank"
