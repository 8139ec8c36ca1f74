#!/usr/bin/env bash
# gasrun's rendezvous port refuses what is not a rank of its job: while a job
# of 4 ranks over two network namespaces waits on a gate, foreign TCP clients
# in namespace B connect to the port and send garbage, a HELLO with a wrong
# key, a HELLO with the right key for a rank that is connected already, or
# nothing (refused after the HELLO window, GAS_BOOT_TIMEOUT=5s here); and more
# connections than may wait for a HELLO.  Each is closed
# without a byte sent to it, the refusals are logged and counted, and the job
# then finishes normally.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
unset BOOT_CLIENT_ONE_HOST

netns_setup 2
A=${NS[0]} B=${NS[1]}
PORT=$((20000 + RANDOM % 20000))   # the namespaces are ours: any port is free
GATE=$TMPD/gate

ip netns exec "$A" env GAS_BOOT_TIMEOUT=5s "$GASRUN" -n 4 --hosts "$A,$B" --launcher 'ip netns exec' \
    --rendezvous "${NS_ADDR[0]}:$PORT" "$CLIENT" gate "$GATE" "$MARK" \
    >"$TMPD/out" 2>"$TMPD/err" </dev/null &
GPID=$!
for ((i = 0; i < 100; i++)); do
    [ "$(pgrep -f -- "^$CLIENT gate" | wc -l)" -ge 4 ] && break
    sleep 0.05
done
sleep 0.3   # the ranks connect and wait on the gate

# probe HEX...: connect from B, send the bytes, print how many bytes came back
# before the connection closed, and the milliseconds it took.
probe() {
    ip netns exec "$B" timeout 15 bash -c '
        exec 3<>"/dev/tcp/$1/$2" || exit 9
        t0=$(date +%s%N)
        [ -n "$3" ] && printf "$(sed "s/../\\\\x&/g" <<<"$3")" >&3
        n=$(cat <&3 2>/dev/null | wc -c)
        echo "$n $(( ($(date +%s%N) - t0) / 1000000 ))"' probe "${NS_ADDR[0]}" "$PORT" "$1"
}

le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24)); }
le64_of_hex() { local h=$1 o="" i; for ((i = 14; i >= 0; i -= 2)); do o+=${h:i:2}; done; echo "$o"; }
HDR_HELLO=62736167""0100""0000""14000000      # "bsag", type 1, 20 bytes
hello() { echo "$HDR_HELLO$(le32 1)$1$(le32 "$2")$(le32 4242)"; }  # key-hex rank

expect_refused() { # what reply-line max-ms
    local n=${2% *} ms=${2#* }
    [ "$n" = 0 ] || fail "$1: got $n bytes back"
    [ "$ms" -le "$3" ] || fail "$1: closed after $ms ms (limit $3)"
}

r=$(probe "$(printf 'GET / HTTP/1.0\r\n\r\n' | od -An -tx1 | tr -d ' \n')")
expect_refused "garbage" "$r" 2000
sleep 1.1   # past the once-a-second limit on refusal messages: this one is logged
r=$(probe "$(hello 0123456789abcdef 2)")
expect_refused "wrong key" "$r" 2000
# The right key, read from a rank's environment (root may): still refused,
# because that rank has its connection.
rank_pid=$(pgrep -f -- "^$CLIENT gate" | head -1)
key=$(tr '\0' '\n' <"/proc/$rank_pid/environ" | sed -n 's/^GASRUN_JOB_KEY=//p')
[ -n "$key" ] || fail "no GASRUN_JOB_KEY in the environment of pid $rank_pid"
r=$(probe "$(hello "$(le64_of_hex "$key")" 3)")
expect_refused "right key, rank connected already" "$r" 2000
r=$(probe "")
expect_refused "silence" "$r" 8000
[ "${r#* }" -ge 4000 ] || fail "silence: closed after ${r#* } ms, before the HELLO time limit"
pass "garbage, wrong key, a taken rank and silence: refused, nothing sent"

# More idle connections than may wait for a HELLO: the oldest are dropped.
sleep 1.1   # past the once-a-second limit on refusal messages
ip netns exec "$B" timeout 15 bash -c '
    for ((i = 0; i < 70; i++)); do exec {fd}<>"/dev/tcp/$1/$2" || exit 9; done
    sleep 1' flood "${NS_ADDR[0]}" "$PORT" || fail "flood: could not connect 70 times"
kill -0 "$GPID" 2>/dev/null || fail "gasrun died during the probes"
expect_err "dropped: more than 64 connections are waiting for a HELLO" "flood"
pass "70 idle connections: the oldest dropped"

touch "$GATE"
for ((i = 0; i < 200; i++)); do kill -0 "$GPID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$GPID" 2>/dev/null && fail "the job did not finish after the gate opened"
wait "$GPID"
RC=$?
expect_rc 0 "job after the probes"
for r in 0 1 2 3; do grep -qxF "[$r] rank $r of 4 ok" "$TMPD/out" || fail "job: rank $r"; done
expect_err "refused a connection to the rendezvous from ${NS_ADDR[1]}:" "log"
expect_err "wrong job key" "log"
n=$(sed -n 's/^gasrun: refused \([0-9]*\) connections to the rendezvous port in all$/\1/p' "$TMPD/err")
[ -n "$n" ] && [ "$n" -ge 10 ] || fail "refusal count: '$n'"
[ "$(grep -c '^gasrun: refused a connection' "$TMPD/err")" -le 8 ] ||
    fail "refusals are not rate-limited: $(grep -c '^gasrun: refused a connection' "$TMPD/err") lines"
check_clean "auth"
pass "the job is unaffected; $n refusals counted"
