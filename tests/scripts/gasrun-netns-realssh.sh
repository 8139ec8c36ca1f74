#!/usr/bin/env bash
# gasrun's multi-host launch through the real ssh: two network namespaces,
# each running its own sshd (/usr/sbin/sshd -D -e with a config, host key,
# client key and authorized_keys made in this test's temporary directory,
# listening only on the namespace's address, port $SSH_PORT); gasrun runs in
# the first namespace with --hosts A_ADDR,B_ADDR and a launcher named `ssh`
# (shell mode) that execs /usr/bin/ssh with that key and port.  Every rank goes
# through sshd: a real libgas program (examples/count, udp between the
# namespaces), stdin and stdout/stderr forwarding, a failing remote rank's
# exit status, a rank killed by a signal (255 from ssh), and after every job no
# rank process and no sshd session left.  No system-wide sshd is used or
# started; all traffic stays in the namespaces.  Skipped (77) without sshd.
. "$(dirname "$0")/lib-gasrun.sh"
SSHD=/usr/sbin/sshd
for b in "$SSHD" /usr/bin/ssh /usr/bin/ssh-keygen; do
    [ -x "$b" ] || { echo "no $b: install openssh-server and openssh-client (make test-deps)"; exit 77; }
done
COUNT=$BUILD/examples/count
HANG=$BUILD/tests/gasrun/gas_hang
for b in "$COUNT" "$HANG"; do
    [ -x "$b" ] || fail "$b is not built (make all tests)"
done
"$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp ||
    { echo "no udp transport compiled in (build/bin/gas-info); ranks in two namespaces need it"; exit 77; }
. "$(dirname "$0")/lib-netns.sh"

netns_setup 2
A=${NS[0]} B=${NS[1]}
AA=${NS_ADDR[0]} BA=${NS_ADDR[1]}
SSH_PORT=42222
USER_NAME=$(id -un)

# Keys and configs, all in $TMPD (removed on exit).
ssh-keygen -q -t ed25519 -N '' -C gas-test-host -f "$TMPD/host_key" || fail "ssh-keygen (host key)"
ssh-keygen -q -t ed25519 -N '' -C gas-test-client -f "$TMPD/client_key" || fail "ssh-keygen (client key)"
cp "$TMPD/client_key.pub" "$TMPD/authorized_keys"
# sshd's privilege separation directory (what the package's tmpfiles.d makes
# at boot); it is not removed: another sshd may use it.
[ -d /run/sshd ] || mkdir -m 0755 /run/sshd || fail "mkdir /run/sshd"

SSHD_PIDS=()
start_sshd() { # i: sshd in NS[i], on NS_ADDR[i]:SSH_PORT only
    local i=$1 cfg=$TMPD/sshd_config.$1 log=$TMPD/sshd.$1.log t
    cat >"$cfg" <<EOF
ListenAddress ${NS_ADDR[i]}:$SSH_PORT
HostKey $TMPD/host_key
PidFile $TMPD/sshd.$i.pid
AuthorizedKeysFile $TMPD/authorized_keys
AllowUsers $USER_NAME
PermitRootLogin prohibit-password
AuthenticationMethods publickey
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitTunnel no
PermitUserEnvironment no
PrintMotd no
PrintLastLog no
MaxStartups 20:30:60
LogLevel INFO
EOF
    "$SSHD" -t -f "$cfg" || fail "sshd -t: config $cfg rejected"
    ip netns exec "${NS[i]}" "$SSHD" -D -e -f "$cfg" </dev/null >>"$log" 2>&1 &
    SSHD_PIDS+=($!)   # ip netns exec execs sshd: this is the listener
    for ((t = 0; t < 100; t++)); do
        grep -q "Server listening on ${NS_ADDR[i]} port $SSH_PORT" "$log" && return 0
        kill -0 "${SSHD_PIDS[-1]}" 2>/dev/null || break
        sleep 0.1
    done
    cat "$log" >&2
    fail "sshd in ${NS[i]} did not start listening on ${NS_ADDR[i]}:$SSH_PORT"
}
start_sshd 0
start_sshd 1

# Between jobs the sshd listeners stay: leave them out of lib-netns.sh's
# "nothing left in the namespaces" check, but nothing else (sshd's session
# processes are children of a listener and are not excluded).
netns_pids() {
    local ns p keep l
    for ns in "${NS_ALL[@]}"; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do
            keep=1
            for l in "${SSHD_PIDS[@]}"; do [ "$p" = "$l" ] && keep=0; done
            [ $keep = 1 ] && echo "$p"
        done
    done
}

# No sshd session and no rank may outlive the job.  A remote rank is not
# gasrun's descendant: it ends on its own once gasrun's job is over (its boot
# connection closes, or, if its ssh client was killed before sshd had started
# it - the login shell's start-up files can take a while - its connect to the
# rendezvous is refused).  So wait, up to 15 s, for the sessions of both sshds
# and every process of the job to go; then check_clean (marker, /dev/shm,
# namespaces).
job_left() {
    local s
    for s in "${SSHD_PIDS[@]}"; do pgrep -P "$s"; done
    pgrep -f -- "$MARK"
    netns_pids
}
check_all_clean() { # what
    local t left t0
    t0=$(now_ms)
    for ((t = 0; t < 150; t++)); do
        left=$(job_left | sort -u | paste -sd, -)
        [ -z "$left" ] && break
        sleep 0.1
    done
    if [ -n "$left" ]; then
        ps -o pid,ppid,stat,args -p "$left" >&2 || true
        fail "$1: sshd sessions or processes of the job left 15 s after it: $left"
    fi
    [ $(( $(now_ms) - t0 )) -gt 200 ] &&
        echo "note: $1: remote processes took $(( $(now_ms) - t0 )) ms to go after gasrun exited"
    check_clean "$1"
}

accepted() { cat "$TMPD"/sshd.*.log | grep -c "Accepted publickey for $USER_NAME from $NS_NET\."; }

cat >"$TMPD/ssh" <<EOF
#!/bin/sh
# ssh with this test's key and port, no configuration file, no known_hosts.
exec /usr/bin/ssh -F none -p $SSH_PORT -i $TMPD/client_key -o IdentitiesOnly=yes \\
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes \\
    -o LogLevel=ERROR -o ConnectTimeout=10 -T -x "\$@"
EOF
chmod 755 "$TMPD/ssh"
JOB_NS=$A
HOSTS=(--hosts "$AA,$BA" --launcher "$TMPD/ssh" --rendezvous "$AA")
export GAS_UDP_IFACE=$NS_DEV GAS_TRANSPORT=auto

# 1. examples/count, 4 ranks, 2 per namespace, every one started by sshd.
before=$(accepted)
JOB_LIMIT=100 run_job -n 4 -v --timeout 90 "${HOSTS[@]}" "$COUNT" "$MARK"
expect_rc 0 "count"
expect_err "(shell mode)" "count"
for r in 0 1 2 3; do
    grep -qxF "[$r] rank $r: counters correct (each 10)" "$TMPD/out" || fail "count: rank $r"
done
[ $(($(accepted) - before)) = 4 ] || fail "count: sshd accepted $(($(accepted) - before)) logins, not 4"
check_all_clean "count"
pass "examples/count, 4 ranks in 2 namespaces, all started through sshd"

# 2. stdio: rank 0 reads gasrun's stdin through ssh, the others get EOF; a
# rank's stdout and stderr come back separately, tagged.
t0=$(now_ms)
printf 'hello\n' | timeout -k 2 30 ip netns exec "$A" "$GASRUN" -n 4 "${HOSTS[@]}" sh -c \
    'n=$(wc -c); echo "in $n"; echo "err $GASRUN_RANK" >&2' "$MARK" >"$TMPD/out" 2>"$TMPD/err"
RC=$? MS=$(( $(now_ms) - t0 ))
expect_rc 0 "stdio"
for r in 0 1 2 3; do
    want=0; [ $r = 0 ] && want=6
    grep -qxF "[$r] in $want" "$TMPD/out" || fail "stdio: rank $r stdout"
    grep -qxF "[$r] err $r" "$TMPD/err" || fail "stdio: rank $r stderr"
done
check_all_clean "stdio"
pass "stdin, stdout and stderr through ssh"

# 3. A remote rank fails with 42 while the others (libgas, gas_hang) wait: the
# job's status is 42, its output arrives, and the waiting ranks end too
# (their boot connections close: runtime/boot_watch.c).
run_job -n 4 "${HOSTS[@]}" sh -c \
    'if [ "$GASRUN_RANK" = 3 ]; then sleep 2; echo "rank 3 out"; echo "rank 3 err" >&2; exit 42; fi
     exec "$1" "$0"' "$MARK" "$PWD/$HANG"
expect_rc 42 "exit 42"
expect_err "gasrun: rank 3 ($BA) exited with status 42" "exit 42"
grep -qxF "[3] rank 3 out" "$TMPD/out" || fail "exit 42: rank 3's stdout"
grep -qxF "[3] rank 3 err" "$TMPD/err" || fail "exit 42: rank 3's stderr"
expect_faster 15000 "exit 42"
check_all_clean "exit 42"
pass "a failing remote rank's exit status and output"

# 4. A remote rank killed by a signal (SIGSEGV): ssh reports 255.  The other
# ranks are libgas ranks (gas_hang) again: a program without libgas that
# waits for ever (boot_client's barrier) would outlive the job under ssh
# (docs/gasrun.md, "What ends a remote rank").
run_job -n 4 "${HOSTS[@]}" sh -c \
    'if [ "$GASRUN_RANK" = 1 ]; then sleep 2; kill -SEGV $$; fi; exec "$1" "$0"' "$MARK" "$PWD/$HANG"
expect_rc 255 "SIGSEGV"
expect_err "gasrun: rank 1 ($AA) exited with status 255 (from ssh" "SIGSEGV"
expect_faster 15000 "SIGSEGV"
check_all_clean "SIGSEGV"
pass "a remote rank killed by a signal: 255 from ssh"

# 5. The sshd listeners end, and then nothing at all is left.
kill -TERM "${SSHD_PIDS[@]}" 2>/dev/null
wait "${SSHD_PIDS[@]}" 2>/dev/null
SSHD_PIDS=()
check_clean "sshd stopped"
n=$(accepted)
[ "$n" -ge 12 ] || fail "sshd accepted $n logins in all, expected at least 12"
pass "sshd stopped after $n logins; nothing left in the namespaces"
