#!/usr/bin/env bash
# gasrun: descendants a rank leaves behind (in its group, or in a session of
# their own) and /dev/shm/gas-<jobid>-* entries (files, and directories with
# what they hold) do not outlive the job, however it ends: normal end, a rank
# exiting 1, a rank crashing, SIGINT or SIGTERM to gasrun, --timeout.  Another
# job's entries, and what a link in the job's directory names, are left alone.
. "$(dirname "$0")/lib-gasrun.sh"
set -m  # background jobs must not start with SIGINT ignored

# Another job's entries (an id of this run's own, not gasrun's).
OTHER=$(printf '%04x%04x' $((RANDOM)) $((RANDOM)))
DECOYS="/dev/shm/gas-$OTHER-keep /dev/shm/gas-$OTHER-dir/file"
mkdir "/dev/shm/gas-$OTHER-dir" && touch $DECOYS || fail "cannot create /dev/shm/gas-$OTHER-*"
ls /dev/shm 2>/dev/null | grep '^gas-' | sort >"$SHM_BEFORE"
trap 'rm -rf /dev/shm/gas-"$OTHER"-*; on_exit' EXIT

job_id() {
    sed -n 's/^\[0\] job id \([0-9a-f]*\)$/\1/p' "$TMPD/out" 2>/dev/null
}

# What every ending must leave: nothing of the job, the other job's entries.
check_shm() { # what
    local id f
    id=$(job_id)
    [ -n "$id" ] || fail "$1: rank 0 did not report the job id"
    [ "$id" != "$OTHER" ] || fail "$1: the job got the decoys' id $OTHER (rerun)"
    check_clean "$1"
    ls -d /dev/shm/gas-"$id"* >/dev/null 2>&1 && fail "$1: left: $(ls -d /dev/shm/gas-"$id"*)"
    grep -F "cannot remove" "$TMPD/err" && fail "$1: gasrun could not remove an entry"
    for f in $DECOYS; do
        [ -e "$f" ] || fail "$1: another job's $f was removed"
    done
}

run_case() { # what want gasrun-args...
    local what=$1 want=$2
    shift 2
    run_job -n 3 "$@" "$MARK"
    expect_rc "$want" "$what"
    expect_faster 5000 "$what"
    check_shm "$what"
    pass "$what -> $want, nothing left"
}
run_case "rank 1 exits 1" 1 "$CLIENT" fork-hang
run_case "normal end" 0 "$CLIENT" fork-ok
run_case "normal end (shm ok)" 0 "$CLIENT" shm ok
run_case "rank 1 crashes" 139 "$CLIENT" shm crash
run_case "--timeout" 124 --timeout 1 "$CLIENT" shm hang

# SIGINT and SIGTERM to gasrun once rank 0 has left its entries.
for s in INT:130 TERM:143; do
    sig=${s%:*} want=${s#*:}
    rm -f "$TMPD/out"  # the last job's id must not be taken for this one's
    "$GASRUN" -n 3 "$CLIENT" shm hang "$MARK" >"$TMPD/out" 2>"$TMPD/err" </dev/null &
    gpid=$!
    for ((i = 0; i < 100; i++)); do
        [ -n "$(job_id)" ] && break
        sleep 0.05
    done
    kill -"$sig" "$gpid"
    for ((i = 0; i < 100; i++)); do
        kill -0 "$gpid" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$gpid" 2>/dev/null && { kill -KILL "$gpid"; fail "SIG$sig: gasrun did not exit within 5 s"; }
    wait "$gpid"
    RC=$?
    expect_rc "$want" "SIG$sig"
    check_shm "SIG$sig"
    pass "SIG$sig to gasrun -> $want, nothing left"
done
