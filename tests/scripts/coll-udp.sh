#!/usr/bin/env bash
# coll-udp.sh host | netns - the collectives test (tests/mr/test_coll) over udp:
#   host   4 ranks on this host with GAS_TRANSPORT=udp (every peer over udp)
#   netns  4 ranks, 2 per network namespace (tests/scripts/netns-run.sh): two
#          real nodes, so the node teams and the hierarchical algorithms run
#          with shm inside a node and udp between them; then with 1% loss
# Skipped (77) while build/bin/gas-info lists no udp transport.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-udp.sh
TEST=$BUILD/tests/mr/test_coll
require_udp_test "$TEST"
export GAS_ERRORS=return
case "${1:-}" in
host)
    GAS_TRANSPORT=udp "$BUILD/bin/gasrun" -n 4 --timeout 250 "$TEST" --quick || exit 1
    ;;
netns)
    tests/scripts/netns-run.sh --limit 250 -- -n 4 --timeout 240 "$TEST" --quick || exit 1
    tests/scripts/netns-run.sh --limit 250 --loss 1 -- -n 4 --timeout 240 "$TEST" --quick || exit 1
    ;;
*)
    echo "usage: coll-udp.sh host|netns" >&2
    exit 2
    ;;
esac
echo "PASS: collectives over udp ($1)"
