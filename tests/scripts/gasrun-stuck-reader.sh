#!/usr/bin/env bash
# gasrun: a reader of gasrun's stdout or stderr that stops reading (a pager
# left on one page, a terminal paused with Ctrl-S) must not stop --timeout or
# a forwarded signal from ending the job: gasrun's writes never block its
# event loop (tools/gasrun/sink.c).  A slow reader that does read still gets
# every line, whole and in order.
. "$(dirname "$0")/lib-gasrun.sh"

READER=
trap '[ -n "$READER" ] && kill "$READER" 2>/dev/null; on_exit' EXIT

# stuck NAME WANT_RC STREAM [gasrun args]: the ranks write endlessly to STREAM
# (out or err) while the reader of that stream sleeps; gasrun must have exited
# with WANT_RC within 15 s (the reader sleeps 40).  With NAME=term the job has
# no --timeout and gasrun gets SIGTERM after 2 s.
stuck() {
    local name=$1 want=$2 stream=$3 redirect
    shift 3
    [ "$stream" = err ] && redirect='exec yes "$0" >&2' || redirect='exec yes "$0"'
    rm -f "$TMPD/rc"
    if [ "$stream" = err ]; then
        ( timeout -k 2 60 "$GASRUN" "$@" sh -c "$redirect" "$MARK" 2>&1 >/dev/null
          echo $? >"$TMPD/rc" ) | sleep 40 &
    else
        ( timeout -k 2 60 "$GASRUN" "$@" sh -c "$redirect" "$MARK" 2>"$TMPD/err"
          echo $? >"$TMPD/rc" ) | sleep 40 &
    fi
    READER=$!   # the last command of the pipeline: sleep 40
    if [ "$name" = term ]; then
        sleep 2
        pkill -TERM -f -- "^$GASRUN .*$MARK" || fail "$name: gasrun not found"
    fi
    local i
    for i in $(seq 150); do
        [ -s "$TMPD/rc" ] && break
        sleep 0.1
    done
    [ -s "$TMPD/rc" ] || fail "$name: gasrun still runs 15 s on, its $stream reader asleep"
    local rc
    rc=$(cat "$TMPD/rc")
    [ "$rc" = "$want" ] || fail "$name: gasrun exited $rc, expected $want"
    kill "$READER" 2>/dev/null
    wait "$READER" 2>/dev/null
    READER=
    check_clean "$name"
    pass "$name: gasrun exited $rc with its $stream reader asleep"
}

stuck timeout-stdout 124 out -n 2 --timeout 2
stuck timeout-stderr 124 err -n 2 --timeout 2
stuck term 143 out -n 2

# A slow reader loses nothing: every rank's lines, whole and in order.
timeout -k 2 60 "$GASRUN" -n 2 sh -c 'seq 1 200000; echo "done $0"' "$MARK" 2>"$TMPD/err" |
    (sleep 3; cat) >"$TMPD/out"
for r in 0 1; do
    n=$(awk -v r="[$r]" '$1 == r && $2 ~ /^[0-9]+$/ { if ($2 != ++k) { print "bad"; exit } } END { print k }' "$TMPD/out")
    [ "$n" = 200000 ] || fail "slow reader: rank $r's lines: $n of 200000 in order"
    grep -qxF "[$r] done $MARK" "$TMPD/out" || fail "slow reader: rank $r's last line missing"
done
check_clean "slow reader"
pass "slow reader: 2 x 200000 lines whole and in order"
