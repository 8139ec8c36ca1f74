#!/usr/bin/env bash
# gasrun: signals to gasrun. SIGINT/SIGTERM are forwarded and end the job
# with 128+signal; SIGUSR1 is only forwarded; if gasrun itself is SIGKILLed
# its ranks die with it (PR_SET_PDEATHSIG).
. "$(dirname "$0")/lib-gasrun.sh"
set -m  # background jobs must not start with SIGINT ignored

start_bg() { # gasrun args...
    "$GASRUN" "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null &
    GPID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        [ "$(pgrep -P "$GPID" -f -- "$MARK" | wc -l)" -ge "$NR" ] && return
        sleep 0.05
    done
    fail "ranks did not start"
}

wait_bg() { # -> RC, MS since now
    local t0 i
    t0=$(now_ms)
    for ((i = 0; i < 100; i++)); do
        kill -0 "$GPID" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$GPID" 2>/dev/null && fail "gasrun did not exit within 5 s"
    wait "$GPID"
    RC=$?
    MS=$(( $(now_ms) - t0 ))
}

NR=4
for s in INT:130 TERM:143 HUP:129; do
    sig=${s%:*} want=${s#*:}
    start_bg -n $NR "$CLIENT" hang "$MARK"
    kill -"$sig" "$GPID"
    wait_bg
    expect_rc "$want" "SIG$sig"
    check_clean "SIG$sig"
    pass "SIG$sig to gasrun -> $want in ${MS} ms"
done

# SIGUSR1 is forwarded without teardown: the ranks die of it (default action).
start_bg -n $NR "$CLIENT" hang "$MARK"
kill -USR1 "$GPID"
wait_bg
expect_rc 138 "SIGUSR1"
expect_err "killed by signal SIGUSR1" "SIGUSR1"
check_clean "SIGUSR1"
pass "SIGUSR1 forwarded"

# gasrun killed outright: the kernel kills the ranks.
start_bg -n $NR "$CLIENT" hang "$MARK"
kill -KILL "$GPID"
wait "$GPID" 2>/dev/null
for ((i = 0; i < 40; i++)); do
    [ -z "$(pgrep -f -- "$MARK")" ] && break
    sleep 0.05
done
check_clean "gasrun SIGKILLed"
pass "gasrun SIGKILLed: ranks gone"
