#!/usr/bin/env bash
# wake-netns.sh - sleeping waits are woken by node-local (shm) writers in a job
# that also talks over udp: tests/mr/test_wake, 4 ranks, 2 in each of two
# network namespaces (tests/scripts/netns-run.sh), with a progress thread and
# in poll mode.  GAS_WAIT_SPIN=0 makes every wait sleep at once and
# GAS_WAIT_SLICE=1000s makes a missed wake-up a stall, which gasrun's
# --timeout turns into a failure.  Skipped (77) while build/bin/gas-info lists
# no udp transport.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_wake
require_udp_test "$TEST" "ranks in two namespaces need it"
export GAS_WAIT_SPIN=0 GAS_WAIT_SLICE=1000s GAS_ERRORS=return
for p in thread poll; do
    GAS_PROGRESS=$p tests/scripts/netns-run.sh --limit 100 -- -n 4 --timeout 60 "$TEST" ||
        { echo "FAIL: GAS_PROGRESS=$p: a wait was not woken (or a result was wrong)"; exit 1; }
    echo "PASS: GAS_PROGRESS=$p"
done
