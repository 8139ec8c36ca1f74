# lib-gasrun.sh - sourced by tests/scripts/gasrun-*.sh (run from the repo root).
#
# Every rank gets a marker argument unique to this script run, so that
# check_clean can find any process of the job that survived gasrun
# (grandchildren forked without exec keep their parent's command line).
set -u
BUILD=${BUILD:-build}
GASRUN=$BUILD/bin/gasrun
CLIENT=$BUILD/tests/gasrun/boot_client
export BOOT_CLIENT_ONE_HOST=1  # without --hosts every rank is local
MARK="gasrun-test-marker-$$-$RANDOM$RANDOM"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/gasrun-test.XXXXXX")
SHM_BEFORE=$TMPD/shm-before
ls /dev/shm 2>/dev/null | grep '^gas-' | sort >"$SHM_BEFORE"
ulimit -c 0

on_exit() {
    local left
    # Only what this script started (its marker), by pid.
    left=$(pgrep -f -- "$MARK")
    [ -n "$left" ] && kill -KILL $left 2>/dev/null
    rm -rf "$TMPD"
}
trap on_exit EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$TMPD"/out "$TMPD"/err; do
        [ -s "$f" ] && { echo "--- ${f##*/} (last 10 lines):"; tail -n 10 "$f" | cut -c1-200; }
    done >&2
    exit 1
}

for b in "$GASRUN" "$CLIENT"; do
    [ -x "$b" ] || fail "$b is not built (make build/bin/gasrun build/tests/gasrun/boot_client)"
done

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run_job [gasrun args...]: runs gasrun under a time bound with stdout/stderr in
# $TMPD/out and $TMPD/err; sets RC and MS (elapsed milliseconds).  With JOB_NS
# set, gasrun runs in that network namespace (lib-netns.sh).
run_job() {
    local t0 in_ns=()
    [ -n "${JOB_NS:-}" ] && in_ns=(ip netns exec "$JOB_NS")
    t0=$(now_ms)
    timeout -k 2 "${JOB_LIMIT:-20}" "${in_ns[@]}" "$GASRUN" "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
    RC=$?
    MS=$(( $(now_ms) - t0 ))
}

# Wait (up to 30 s: a loaded 2-CPU machine is slow to start them) until N
# lines of FILE end in " up" (the test programs' start line), else fail.
wait_ranks_up() { # N FILE what
    local i
    for ((i = 0; i < 600; i++)); do
        [ "$(grep -c ' up$' "$2")" = "$1" ] && return 0
        sleep 0.05
    done
    fail "$3: the ranks did not come up"
}

expect_rc() { # want what
    [ "$RC" = "$1" ] || fail "$2: gasrun exited $RC, expected $1"
}

expect_err() { # fixed-string what
    grep -qF -- "$1" "$TMPD/err" || fail "$2: stderr lacks '$1'"
}

expect_faster() { # ms what
    [ "$MS" -le "$1" ] || fail "$2: took ${MS} ms (limit $1 ms)"
}

# Nothing of the job may survive gasrun: no process carrying the marker, no
# new /dev/shm/gas-* file, and (with lib-netns.sh) nothing in the namespaces.
check_clean() { # what
    local left
    left=$(pgrep -f -- "$MARK" | paste -sd, -)
    if [ -n "$left" ]; then
        ps -o pid,ppid,pgid,stat,args -p "$left" >&2 || true
        fail "$1: processes of the job survived gasrun: $left"
    fi
    local new
    new=$(ls /dev/shm 2>/dev/null | grep '^gas-' | sort | comm -13 "$SHM_BEFORE" -)
    [ -z "$new" ] || fail "$1: /dev/shm files left behind: $new"
    if declare -F netns_check_clean >/dev/null; then netns_check_clean "$1"; fi
}

pass() { echo "PASS: $*"; }
