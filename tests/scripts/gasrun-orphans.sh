#!/usr/bin/env bash
# gasrun: descendants a rank leaves behind (in its group, or in a session of
# their own) and /dev/shm/gas-<jobid>-* files do not outlive the job, whether
# it fails or succeeds.
. "$(dirname "$0")/lib-gasrun.sh"

for mode in fork-hang:1 fork-ok:0; do
    m=${mode%:*} want=${mode#*:}
    run_job -n 3 "$CLIENT" "$m" "$MARK"
    expect_rc "$want" "$m"
    expect_faster 5000 "$m"
    id=$(sed -n 's/^\[0\] job id \([0-9a-f]*\)$/\1/p' "$TMPD/out")
    [ -n "$id" ] || fail "$m: rank 0 did not report the job id"
    check_clean "$m"
    ls /dev/shm/gas-"$id"-* >/dev/null 2>&1 && fail "$m: /dev/shm/gas-$id-* left"
    pass "$m -> $want, nothing left"
done
