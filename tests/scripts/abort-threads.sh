#!/usr/bin/env bash
# Threads of one rank abort at once (gas_abort, or errors under GAS_ERRORS=abort):
# every run must end with the first thread's code and one whole message.
set -u
cd "$(dirname "$0")/../.."
prog=build/tests/mr/test_abort_threads
fail=0
for mode in abort error; do
    want=3 pat='^gasrun: rank 1 aborted \(code 3\): thread [0-3] aborts$'
    if [ $mode = error ]; then
        want=1 pat='^gasrun: rank 1 aborted \(code 1\): rank 1: gas_ptr_add: .*'
    fi
    for i in $(seq 12); do
        err=$(GAS_ERRORS=abort GAS_LOG_LEVEL=fatal timeout 60 build/bin/gasrun -n 2 --timeout 50 $prog $mode 2>&1 >/dev/null)
        rc=$?
        line=$(printf '%s\n' "$err" | grep '^gasrun: rank 1 aborted' | head -1)
        if [ $rc -ne $want ] || ! printf '%s\n' "$line" | grep -Eq "$pat" ||
           printf '%s' "$line" | LC_ALL=C grep -q '[^[:print:]]'; then
            echo "FAIL: $mode run $i: exit $rc (want $want), gasrun said: $err"
            fail=1
            break
        fi
    done
done
# gas_abort(512): an exit status holds 8 bits, and 512's are 0; the rank must
# still exit 1 (alone, and under gasrun), and gasrun must not take it for a
# rank that exited 0 without calling gas_finalize; gasrun names both numbers, and the
# aborting rank's own "job aborted" line is there every time.
GAS_LOG_LEVEL=fatal timeout 30 $prog abort 512 >/dev/null 2>&1
rc=$?
[ $rc = 1 ] || { echo "FAIL: a lone rank's gas_abort(512) exited $rc (want 1)"; fail=1; }
for i in $(seq 6); do
    err=$(GAS_LOG_LEVEL=fatal timeout 60 build/bin/gasrun -n 3 --timeout 50 $prog abort 512 2>&1 >/dev/null)
    rc=$?
    # (the aborting rank's own line is written before gasrun is told, which may kill it)
    if [ $rc -ne 1 ] || ! printf '%s\n' "$err" | grep -q '^gasrun: rank 2 aborted (code 512, exit status 1)' ||
       ! printf '%s\n' "$err" | grep -q 'gas r2\] job aborted: ' ||
       printf '%s\n' "$err" | grep -q 'without calling gas_finalize'; then
        echo "FAIL: gas_abort(512) run $i: exit $rc (want 1), gasrun said: $err"
        fail=1
        break
    fi
done
[ $fail = 0 ] && echo "abort-threads: 12 runs of each mode ended with one clean report; gas_abort(512) exits 1"
exit $fail
