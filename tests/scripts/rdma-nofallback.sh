#!/usr/bin/env bash
# rdma-nofallback.sh - with GAS_RDMA_FALLBACK=n a queue pair in error ends the job
# cleanly (GAS_ERRORS=abort): gasrun exits non-zero well within the time limit,
# and the error names the peer, the operation and the work completion status.
# Once with an injected retry-exceeded, once with a remote access error.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail=0
for fault in GAS_TEST_RDMA_QP_ERROR=40 GAS_TEST_RDMA_ACCESS_ERROR=40; do
    env GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_RDMA_FALLBACK=n GAS_ERRORS=abort "$fault" \
        timeout 50 "$BUILD/bin/gasrun" -n 3 --timeout 40 "$BUILD/tests/mr/test_rdma_redo" >"$out" 2>&1
    rc=$?
    tail -n 5 "$out"
    if [ $rc = 0 ] || [ $rc = 124 ] || [ $rc = 137 ]; then
        echo "FAIL ($fault): expected the job to abort, got status $rc"; fail=1
    elif ! grep -Eq 'RDMA [A-Z_]+( \(completion marker\))? to rank [0-9]+ failed on QP [0-9]+: (transport retry counter exceeded|remote access error)' "$out"; then
        echo "FAIL ($fault): no error naming the peer, the operation and the status"; fail=1
    elif ! grep -q 'aborted' "$out"; then
        echo "FAIL ($fault): the job did not abort"; fail=1
    else
        echo "PASS ($fault): the job aborted with status $rc, naming the failure"
    fi
done
exit $fail
