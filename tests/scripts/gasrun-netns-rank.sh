#!/usr/bin/env bash
# The rank side of remote launch (runtime/boot_gasrun.c, boot_watch.c), with
# libgas ranks (tests/gasrun/gas_hang) in network namespaces:
#   - a rank on another host ends when its boot connection does: gasrun in
#     namespace A starts 2 ranks in B through tests/scripts/netns-ssh.sh (like
#     ssh: killing it leaves the rank running), then is SIGKILLed (or
#     SIGTERMed): nothing may be left in B;
#   - gas_init's errors for GASRUN_BOOT_ADDR: malformed, refused (retried for
#     GAS_BOOT_TIMEOUT), and a
#     connect that times out (B drops everything it sends) after
#     GAS_BOOT_TIMEOUT, each naming the address.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
HANG=$BUILD/tests/gasrun/gas_hang
[ -x "$HANG" ] || { echo "$HANG is not built (make tests)"; exit 77; }
set -m

netns_setup 2
A=${NS[0]} B=${NS[1]}
ln -s "$PWD/tests/scripts/netns-ssh.sh" "$TMPD/ssh"

for how in KILL TERM; do
    # Empty the output first: the poll below must not see the last round's
    # lines before the new gasrun's redirection truncates the file.
    : >"$TMPD/out"
    ip netns exec "$A" "$GASRUN" -n 2 --hosts "$B" --ppn 2 --launcher "$TMPD/ssh" \
        --rendezvous "${NS_ADDR[0]}" "$HANG" "$MARK" >"$TMPD/out" 2>"$TMPD/err" </dev/null &
    GPID=$!
    wait_ranks_up 2 "$TMPD/out" "$how"
    kill -"$how" "$GPID"
    wait "$GPID" 2>/dev/null
    t0=$(now_ms)
    for ((i = 0; i < 100; i++)); do
        [ -z "$(ip netns pids "$B")" ] && break
        sleep 0.05
    done
    [ -z "$(ip netns pids "$B")" ] || fail "$how: ranks still running in $B after 5 s"
    check_clean "gasrun SIG$how"
    pass "gasrun SIG$how: remote ranks gone in $(( $(now_ms) - t0 )) ms"
done

# gas_init's connect errors, each naming the address.
boot_err() { # what want-in-stderr env...
    local what=$1 want=$2; shift 2
    ip netns exec "$B" timeout 20 env GASRUN_RANK=0 GASRUN_NRANKS=1 GASRUN_JOB_KEY=0123456789abcdef \
        GASRUN_JOB_ID=01234567 GAS_ERRORS=return "$@" "$HANG" "$MARK" >"$TMPD/out" 2>"$TMPD/err"
    RC=$?
    [ "$RC" != 0 ] || fail "$what: gas_init succeeded"
    expect_err "$want" "$what"
}
boot_err "malformed" "GASRUN_BOOT_ADDR=10.213.0.1 is not a numeric ip:port" GASRUN_BOOT_ADDR=10.213.0.1
t0=$(now_ms)
boot_err "refused" "cannot connect to gasrun's rendezvous at ${NS_ADDR[0]}:9 (GASRUN_BOOT_ADDR): Connection refused (tried again for GAS_BOOT_TIMEOUT, 1.0 s)" \
    GASRUN_BOOT_ADDR="${NS_ADDR[0]}:9" GAS_BOOT_TIMEOUT=1s
ms=$(( $(now_ms) - t0 ))
[ "$ms" -ge 900 ] && [ "$ms" -le 5000 ] || fail "refused: gas_init gave up after $ms ms, not ~1 s of retries"
netns_loss "$B" 100
t0=$(now_ms)
boot_err "timeout" "at ${NS_ADDR[0]}:9 (GASRUN_BOOT_ADDR): Connection timed out (raise GAS_BOOT_TIMEOUT" \
    GASRUN_BOOT_ADDR="${NS_ADDR[0]}:9" GAS_BOOT_TIMEOUT=1s
ms=$(( $(now_ms) - t0 ))
[ "$ms" -ge 900 ] && [ "$ms" -le 5000 ] || fail "timeout: gas_init gave up after $ms ms, not ~1 s"
netns_check_clean "connect errors"
pass "gas_init: malformed, refused and timed-out GASRUN_BOOT_ADDR (${ms} ms)"
