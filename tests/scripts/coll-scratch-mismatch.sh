#!/usr/bin/env bash
# coll-scratch-mismatch.sh - ranks started with different GAS_COLL_SCRATCH
# (rank 0 512k, the others 4k) fail gas_init alike, naming the setting: every
# team's mailboxes are laid out from it.  Before, the world team's first
# collective failed on some ranks as a "collective mismatch" the user never
# made, while others returned from gas_init and waited in their next call.
source "$(dirname "$0")/lib-tmp.sh"
cat >"$T/perrank.sh" <<'W'
#!/bin/sh
# VAR V0 VOTHERS PROG...: rank 0 gets VAR=V0, every other rank VAR=VOTHERS
v=$1; a=$2; b=$3; shift 3
if [ "${GASRUN_RANK:-0}" = 0 ]; then export "$v=$a"; else export "$v=$b"; fi
exec "$@"
W
chmod +x "$T/perrank.sh"
GAS_ERRORS=return timeout -k 5 60 "$BUILD/bin/gasrun" -n 3 --timeout 50 \
    "$T/perrank.sh" GAS_COLL_SCRATCH 512k 4k "$BUILD/tests/mr/test_barrier" >"$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc != 0 ] || fail "the job succeeded with different GAS_COLL_SCRATCH per rank"
[ $rc != 124 ] && [ $rc != 137 ] || fail "the job hung"
grep -q "gas_init: GAS_COLL_SCRATCH differs between ranks (from 4096 to 524288 bytes" "$T/out" ||
    fail "no error naming GAS_COLL_SCRATCH"
! grep -q "mismatch" "$T/out" || fail "reported as a collective mismatch"
echo "PASS: different GAS_COLL_SCRATCH per rank fails gas_init naming it"
