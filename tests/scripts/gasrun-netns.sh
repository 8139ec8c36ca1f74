#!/usr/bin/env bash
# gasrun across two network namespaces as two hosts: gasrun runs in the first,
# `ip netns exec` starts the ranks (4 ranks, 2 per namespace; all boot over
# TCP on the veth).  Success, tagged output, placement, exit statuses, a rank
# killed by a signal, SIGINT to gasrun, the timeout, leftover descendants;
# after each: no process in either namespace, no /dev/shm/gas-* file.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
unset BOOT_CLIENT_ONE_HOST
set -m  # background jobs must not start with SIGINT ignored

netns_setup 2
A=${NS[0]} B=${NS[1]}
JOB_NS=$A
HOSTS=(--hosts "$A,$B" --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}")

run_job -n 4 "${HOSTS[@]}" "$CLIENT" where "$MARK"
expect_rc 0 "success"
for r in 0 1 2 3; do
    grep -qxF "[$r] rank $r of 4 ok" "$TMPD/out" || fail "success: rank $r"
    grep -qxF "[$r] rank $r local $((r % 2))/2" "$TMPD/out" || fail "success: rank $r's local rank"
done
[ "$(grep -cv '^\[[0-3]\] ' "$TMPD/out")" = 0 ] || fail "success: untagged lines"
check_clean "success"
pass "4 ranks over 2 namespaces in ${MS} ms"

# Where each rank ran, and what it was told.
run_job -n 4 "${HOSTS[@]}" sh -c \
    'echo "$GASRUN_RANK $(ip netns identify) ${GASRUN_BOOT_ADDR%:*} ${GASRUN_BOOT_FD:-nofd}"' "$MARK"
expect_rc 0 "placement"
for r in 0 1 2 3; do
    ns=$A; [ $r -ge 2 ] && ns=$B
    grep -qxF "[$r] $r $ns ${NS_ADDR[0]} nofd" "$TMPD/out" || fail "placement: rank $r"
done
check_clean "placement"
# No --rendezvous: the address comes from the hostfile (addr=, or iface= here).
printf '%s slots=2 addr=%s\n%s slots=2 iface=%s # the veth\n' "$A" "${NS_ADDR[0]}" \
    "$B" "$NS_DEV" >"$TMPD/hosts"
run_job -n 4 --hostfile "$TMPD/hosts" --launcher 'ip netns exec' sh -c \
    'echo "$GASRUN_RANK ${GASRUN_BOOT_ADDR%:*} $GAS_UDP_IFACE"' "$MARK"
expect_rc 0 "hostfile"
grep -qxF "[0] 0 ${NS_ADDR[0]} ${NS_ADDR[0]}" "$TMPD/out" || fail "hostfile: rank 0"
grep -qxF "[3] 3 ${NS_ADDR[0]} $NS_DEV" "$TMPD/out" || fail "hostfile: rank 3"
check_clean "hostfile"
pass "placement and addresses"

# Exit statuses: rank 1 (in A) exits 3; rank 3 (in B) exits 42.
run_job -n 4 "${HOSTS[@]}" "$CLIENT" exit 3 "$MARK"
expect_rc 3 "exit 3"
expect_err "gasrun: rank 1 ($A) exited with status 3" "exit 3"
expect_faster 5000 "exit 3"
check_clean "exit 3"
run_job -n 4 "${HOSTS[@]}" sh -c '[ "$GASRUN_RANK" = 3 ] && exit 42; sleep 30' "$MARK"
expect_rc 42 "exit 42"
expect_err "gasrun: rank 3 ($B) exited with status 42" "exit 42"
expect_faster 5000 "exit 42"
check_clean "exit 42"
pass "exit statuses"

# A rank killed by a signal: the launcher execs, so its status is the rank's.
run_job -n 4 "${HOSTS[@]}" "$CLIENT" kill SEGV "$MARK"
expect_rc 139 "SIGSEGV"
expect_err "gasrun: rank 1 ($A) killed by signal SIGSEGV" "SIGSEGV"
check_clean "SIGSEGV"
run_job -n 4 "${HOSTS[@]}" sh -c '[ "$GASRUN_RANK" = 2 ] && kill -KILL $$; sleep 30' "$MARK"
expect_rc 137 "SIGKILL"
expect_err "gasrun: rank 2 ($B) killed by signal SIGKILL" "SIGKILL"
expect_faster 5000 "SIGKILL"
check_clean "SIGKILL"
pass "ranks killed by signals"

# SIGINT to gasrun while the ranks wait.
ip netns exec "$A" "$GASRUN" -n 4 "${HOSTS[@]}" "$CLIENT" hang "$MARK" \
    >"$TMPD/out" 2>"$TMPD/err" </dev/null &
GPID=$!
for ((i = 0; i < 100; i++)); do
    [ "$(pgrep -f -- "$CLIENT hang $MARK" | wc -l)" -ge 4 ] && break
    sleep 0.05
done
[ "$(ip netns pids "$B" | wc -l)" -ge 2 ] || fail "SIGINT: the ranks in $B did not start"
sleep 0.2   # let them connect
kill -INT "$GPID"
t0=$(now_ms)
for ((i = 0; i < 100; i++)); do kill -0 "$GPID" 2>/dev/null || break; sleep 0.05; done
kill -0 "$GPID" 2>/dev/null && fail "SIGINT: gasrun did not exit within 5 s"
wait "$GPID"
RC=$?
expect_rc 130 "SIGINT"
check_clean "SIGINT"
pass "SIGINT to gasrun -> 130 in $(( $(now_ms) - t0 )) ms"

# The timeout.
run_job -n 4 --timeout 1 "${HOSTS[@]}" "$CLIENT" hang "$MARK"
expect_rc 124 "timeout"
expect_err "gasrun: job timed out after 1 s; killing 4 ranks" "timeout"
expect_faster 5000 "timeout"
check_clean "timeout"
pass "--timeout -> 124"

# Descendants left behind in A, and a /dev/shm/gas-<jobid>-* file.
run_job -n 4 "${HOSTS[@]}" "$CLIENT" fork-hang "$MARK"
expect_rc 1 "fork-hang"
check_clean "fork-hang"
pass "leftover descendants and shm files swept"
