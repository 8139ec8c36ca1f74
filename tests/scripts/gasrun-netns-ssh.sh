#!/usr/bin/env bash
# gasrun's ssh launch path across two network namespaces, with
# tests/scripts/netns-ssh.sh standing in for ssh (linked as "ssh", so gasrun
# picks shell mode itself): quoting, exit statuses (255 for a rank killed by a
# signal, as ssh reports it), and teardown when killing a launcher leaves its
# "remote" rank running.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
unset BOOT_CLIENT_ONE_HOST

netns_setup 2
A=${NS[0]} B=${NS[1]}
ln -s "$PWD/tests/scripts/netns-ssh.sh" "$TMPD/ssh"
JOB_NS=$A
HOSTS=(--hosts "$A,$B" --launcher "$TMPD/ssh" --rendezvous "${NS_ADDR[0]}")

run_job -n 4 -v "${HOSTS[@]}" "$CLIENT" where "$MARK"
expect_rc 0 "success"
expect_err "(shell mode)" "success"
for r in 0 1 2 3; do grep -qxF "[$r] rank $r of 4 ok" "$TMPD/out" || fail "success: rank $r"; done
check_clean "success"
args=("a b" "it's" '$HOME' '' 'x;y' '*' $'new\nline')
run_job -n 4 "${HOSTS[@]}" sh -c 'printf "<%s>" "$(ip netns identify)" "$@"; echo' "$MARK" "${args[@]}"
expect_rc 0 "quoting"
grep -qF -- "[3] $(printf "<%s>" "$B" "${args[@]}")" "$TMPD/out" || fail "quoting: $(head -c 300 "$TMPD/out")"
check_clean "quoting"
pass "shell mode through ssh"

run_job -n 4 "${HOSTS[@]}" sh -c '[ "$GASRUN_RANK" = 3 ] && exit 42; sleep 30' "$MARK"
expect_rc 42 "exit 42"
expect_err "gasrun: rank 3 ($B) exited with status 42" "exit 42"
expect_faster 5000 "exit 42"
check_clean "exit 42"
run_job -n 4 "${HOSTS[@]}" "$CLIENT" kill SEGV "$MARK"
expect_rc 255 "SIGSEGV"
expect_err "gasrun: rank 1 ($A) exited with status 255 (from ssh" "SIGSEGV"
check_clean "SIGSEGV"
pass "exit statuses through ssh"

# The launchers die of SIGTERM and leave their ranks: gasrun still ends them.
run_job -n 4 --timeout 1 "${HOSTS[@]}" "$CLIENT" hang "$MARK"
expect_rc 124 "timeout"
expect_faster 5000 "timeout"
check_clean "timeout"
pass "ranks outliving their launcher are ended"
