#!/usr/bin/env bash
# gasrun --hosts/--hostfile without root: "remote" hosts are started on this
# machine by tests/scripts/local-launcher.sh and boot over TCP on loopback.
# Placement (slots, --ppn, hostfile), the environment of remote ranks, the
# quoting of shell mode, forked local hosts, exit statuses, usage errors.
. "$(dirname "$0")/lib-gasrun.sh"
unset BOOT_CLIENT_ONE_HOST
LL=tests/scripts/local-launcher.sh
REMOTE=(--launcher "$LL" --rendezvous 127.0.0.1)
SHOW='echo "${GASRUN_TEST_HOST:-here} $GASRUN_LOCAL_RANK/$GASRUN_LOCAL_SIZE"'

expect_lines() { # what lines...: stdout is exactly these lines (any order)
    local what=$1; shift
    printf '%s\n' "$@" | sort >"$TMPD/want"
    sort "$TMPD/out" | diff -u "$TMPD/want" - >&2 || fail "$what: output differs (above)"
}

# Block placement: h1 has 2 slots, h2 and h3 share the 3 ranks left (2 each).
run_job -n 5 --hosts h1:2,h2,h3 "${REMOTE[@]}" sh -c "$SHOW" "$MARK"
expect_rc 0 "slots"
expect_lines "slots" "[0] h1 0/2" "[1] h1 1/2" "[2] h2 0/2" "[3] h2 1/2" "[4] h3 0/1"
check_clean "slots"
# --ppn: 3 per host; the third host gets nothing and is not contacted.
run_job -n 5 --ppn 3 --hosts h1,h2,h3 "${REMOTE[@]}" sh -c "$SHOW" "$MARK"
expect_rc 0 "--ppn"
expect_lines "--ppn" "[0] h1 0/3" "[1] h1 1/3" "[2] h1 2/3" "[3] h2 0/2" "[4] h2 1/2"
pass "placement"

# This host (localhost, or its name) is forked: inherited socket, no launcher.
run_job -n 4 --hosts "localhost:1,$(hostname):1,h1:2" "${REMOTE[@]}" \
    sh -c 'echo "${GASRUN_TEST_HOST:-here} fd=${GASRUN_BOOT_FD:-none} addr=${GASRUN_BOOT_ADDR:-none}"' "$MARK"
expect_rc 0 "local hosts"
grep -Eqx '\[0\] here fd=[0-9]+ addr=none' "$TMPD/out" || fail "localhost: rank 0 not forked"
grep -Eqx '\[1\] here fd=[0-9]+ addr=none' "$TMPD/out" || fail "$(hostname): rank 1 not forked"
grep -Eqx '\[3\] h1 fd=none addr=127\.0\.0\.1:[0-9]+' "$TMPD/out" || fail "h1: rank 3 not remote"
# The protocol over TCP, remote and local ranks in one job.
run_job -n 4 --hosts localhost:1,h1:3 "${REMOTE[@]}" "$CLIENT" where "$MARK"
expect_rc 0 "boot_client over TCP"
for r in 0 1 2 3; do grep -qxF "[$r] rank $r of 4 ok" "$TMPD/out" || fail "TCP: rank $r"; done
grep -qxF "[3] rank 3 local 2/3" "$TMPD/out" || fail "TCP: rank 3's local rank"
check_clean "boot_client over TCP"
pass "local and remote ranks in one job"

# Rank 0's launcher gets gasrun's stdin; the others /dev/null.
head -c 100000 /dev/zero | timeout 20 "$GASRUN" -n 2 --hosts h1 "${REMOTE[@]}" "$CLIENT" stdin "$MARK" \
    >"$TMPD/out" 2>"$TMPD/err"
RC=$?
expect_rc 0 "stdin"
grep -qxF "[0] rank 0 read 100000 bytes of stdin" "$TMPD/out" || fail "stdin: rank 0 did not get it"
[ ! -s "$TMPD/err" ] || fail "stdin: unexpected stderr"
pass "stdin of a remote rank 0"

# A hostfile: comments, slots, iface/addr -> GAS_UDP_IFACE, GAS_* forwarded.
cat >"$TMPD/hosts" <<'EOF'
# test cluster
h1 slots=1 iface=eth7     # iface wins over addr
h2   slots=1 addr=192.0.2.5
h3 slots=1
EOF
GAS_UDP_IFACE=global GAS_TEST_FORWARD='a b' run_job -n 3 --hostfile "$TMPD/hosts" "${REMOTE[@]}" \
    sh -c 'echo "$GASRUN_TEST_HOST $GAS_UDP_IFACE $GAS_TEST_FORWARD"' "$MARK"
expect_rc 0 "hostfile"
expect_lines "hostfile" "[0] h1 eth7 a b" "[1] h2 192.0.2.5 a b" "[2] h3 global a b"
pass "hostfile"

# Shell mode (a launcher named ssh): the command line is one sh-quoted word.
cat >"$TMPD/ssh" <<'EOF'
#!/bin/sh
# Like ssh without a terminal: join the words, run them with sh -c.
host=$1
shift
GASRUN_TEST_HOST=$host exec sh -c "$*"
EOF
chmod +x "$TMPD/ssh"
args=("a b" "it's" '$HOME' '"q"' '' 'x;y' '*' 'back\slash' $'new\nline')
GAS_TEST_FORWARD="it's \$x" run_job -n 2 --hosts h1,h2 --launcher "$TMPD/ssh" --rendezvous 127.0.0.1 \
    sh -c 'printf "<%s>" "$GAS_TEST_FORWARD" "$@"; echo' "$MARK" "${args[@]}"
expect_rc 0 "shell mode"
want=$(printf "<%s>" "it's \$x" "${args[@]}")
[ "$(grep -c . "$TMPD/out")" -ge 2 ] || fail "shell mode: no output"
grep -qF -- "[1] $want" "$TMPD/out" || fail "shell mode: words changed: $(head -c 300 "$TMPD/out")"
run_job -n 2 --hosts h1 --launcher "$LL" --launcher-mode shell --rendezvous 127.0.0.1 true
expect_rc 127 "--launcher-mode shell with an exec launcher"
pass "shell-mode quoting"

# Exit statuses come back through the launcher.
run_job -n 4 --hosts h1,h2 "${REMOTE[@]}" sh -c '[ "$GASRUN_RANK" = 3 ] && exit 42; sleep 30' "$MARK"
expect_rc 42 "remote exit 42"
expect_err "gasrun: rank 3 (h2) exited with status 42" "remote exit 42"
expect_faster 5000 "remote exit 42"
check_clean "remote exit 42"
run_job -n 2 --hosts h1,h2 "${REMOTE[@]}" "$CLIENT" kill SEGV "$MARK"
expect_rc 139 "remote SIGSEGV"
expect_err "gasrun: rank 1 (h2) killed by signal SIGSEGV" "remote SIGSEGV"
check_clean "remote SIGSEGV"
pass "exit statuses"

# At most 8 launches per host in flight: 12 ranks that never connect start in
# two batches (the second when the first exit); 24 that connect at once.
run_job -n 12 --hosts h1 "${REMOTE[@]}" sh -c 'sleep 0.5' "$MARK"
expect_rc 0 "launch window"
[ "$MS" -ge 950 ] || fail "launch window: 12 ranks of 0.5 s took only $MS ms"
expect_faster 4000 "launch window"
run_job -n 24 --hosts h1 "${REMOTE[@]}" "$CLIENT" ok "$MARK"
expect_rc 0 "launch window, connecting ranks"
[ "$(grep -c ' ok$' "$TMPD/out")" = 24 ] || fail "launch window: not all 24 ranks finished"
expect_faster 1900 "launch window, connecting ranks"
check_clean "launch window"
pass "launch window"

# Usage and set-up errors.
run_job -n 2 --ppn 1 true
expect_rc 2 "--ppn without hosts"
run_job -n 2 --hosts h1 --hostfile "$TMPD/hosts" true
expect_rc 2 "--hosts and --hostfile"
run_job -n 3 --hosts h1:1,h2:1 "${REMOTE[@]}" true
expect_rc 2 "too few slots"
expect_err "3 ranks do not fit in the 2 slots of 2 hosts" "too few slots"
run_job -n 2 --hosts h1,h1 "${REMOTE[@]}" true
expect_rc 2 "host twice"
run_job -n 2 --hosts -oProxyCommand=x "${REMOTE[@]}" true
expect_rc 2 "option-like host"
printf 'h1 slots=2\nh2 cores=4\n' >"$TMPD/bad"
run_job -n 2 --hostfile "$TMPD/bad" "${REMOTE[@]}" true
expect_rc 2 "unknown hostfile key"
expect_err "$TMPD/bad:2: 'cores' is not a key=value" "unknown hostfile key"
printf 'h1 slots=2\nh2 slots=1 iface=eth0 slots=3\n' >"$TMPD/bad"
run_job -n 2 --hostfile "$TMPD/bad" "${REMOTE[@]}" true
expect_rc 2 "a hostfile key twice"
expect_err "$TMPD/bad:2: slots= given twice for host h2" "a hostfile key twice"
printf 'h1 addr=192.0.2.1 addr=192.0.2.2\n' >"$TMPD/bad"
run_job -n 1 --hostfile "$TMPD/bad" "${REMOTE[@]}" true
expect_rc 2 "addr= twice"
expect_err "$TMPD/bad:1: addr= given twice for host h1" "addr= twice"
run_job -n 2 --hostfile "$TMPD/none" true
expect_rc 2 "missing hostfile"
run_job -n 2 --hosts h1 --launcher-mode bogus true
expect_rc 2 "--launcher-mode bogus"
run_job -n 2 --hosts h1 --rendezvous nowhere true
expect_rc 2 "--rendezvous nowhere"
run_job -n 2 --hosts nosuch.invalid --launcher "$LL" true
expect_rc 1 "unresolvable host"
expect_err "cannot tell which address host nosuch.invalid reaches gasrun at" "unresolvable host"
run_job -n 2 --hosts h1 --launcher "no-such-launcher-$MARK" --rendezvous 127.0.0.1 true
expect_rc 127 "missing launcher"
run_job -n 2 --hosts h1 --rendezvous 192.0.2.1 --launcher "$LL" true
expect_rc 1 "--rendezvous to a foreign address"
expect_err "not an address of this host" "--rendezvous to a foreign address"
pass "usage errors"

# The example cluster file in configs/ stays readable: one rank per host.
run_job -n 8 --ppn 1 --hostfile configs/cluster-example.hosts "${REMOTE[@]}" \
    sh -c 'echo "$GASRUN_TEST_HOST $GAS_UDP_IFACE"' "$MARK"
expect_rc 0 "configs/cluster-example.hosts"
expect_lines "configs/cluster-example.hosts" "[0] gold01 eno1" "[1] gold02 eno1" "[2] plat01 eno1" \
    "[3] plat02 eno1" "[4] genoa01 enp65s0f0" "[5] genoa02 enp65s0f0" "[6] bergamo01 enp65s0f0" \
    "[7] bergamo02 enp65s0f0"
pass "configs/cluster-example.hosts"
