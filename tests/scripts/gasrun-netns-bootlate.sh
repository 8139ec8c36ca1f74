#!/usr/bin/env bash
# Ranks on another host boot through a network that is not ready yet: gas_init
# retries its connection to gasrun's rendezvous within GAS_BOOT_TIMEOUT, and
# gasrun waits as long for a rank's HELLO.  Two namespaces, one rank of
# tests/mr/test_barrier in each (rank 1 boots over the veth):
#   1. B's interface is down when the job starts and comes up 2 s later
#      (each connect fails at once: network unreachable): the job passes.
#   2. What B sends over TCP in segments longer than 64 bytes is dropped for
#      7 s (the handshake passes, the HELLO is held back and retransmitted,
#      longer than gasrun's old 5 s window): the job passes.
#   3. B's interface stays down, GAS_BOOT_TIMEOUT=3s: rank 1's gas_init fails
#      after about 3 s naming the address, and gasrun exits non-zero.
#   4. B drops every TCP segment it sends (a firewall), GAS_BOOT_TIMEOUT=2s:
#      the connect times out and the message names the option that fixes it,
#      gasrun --rendezvous (it named --bind, the CPU-binding option).
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
unset BOOT_CLIENT_ONE_HOST
PROG=$BUILD/tests/mr/test_barrier
[ -x "$PROG" ] || fail "$PROG is not built"

netns_setup 2
A=${NS[0]} B=${NS[1]}
JOB_NS=$A JOB_LIMIT=60
HOSTS=(--hosts "$A:1,$B:1" --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}")
export GAS_UDP_IFACE=$NS_DEV

# restore_after S CMD...: run CMD after S seconds, in the background
restore_after() { (sleep "$1"; shift; "$@") & RESTORER=$!; }

ip -n "$B" link set "$NS_DEV" down
restore_after 2 ip -n "$B" link set "$NS_DEV" up
run_job -n 2 "${HOSTS[@]}" "$PROG" "$MARK"
wait "$RESTORER"
expect_rc 0 "interface down for 2 s at start"
grep -q 'barrier rank 0\] passed' "$TMPD/out" "$TMPD/err" || fail "link down: rank 0 did not pass"
check_clean "link down"
pass "B's interface down for the first 2 s: the job booted and passed in ${MS} ms"

_netns_nft_chain "$B" || fail "nft chain"
ip netns exec "$B" nft add rule netdev gastest out ip protocol tcp ip length '>' 64 drop ||
    fail "nft rule"
restore_after 7 ip netns exec "$B" nft flush chain netdev gastest out
run_job -n 2 "${HOSTS[@]}" "$PROG" "$MARK"
wait "$RESTORER"
expect_rc 0 "HELLO held back for 7 s"
check_clean "HELLO held back"
[ "$MS" -ge 6000 ] || fail "HELLO held back: the job took only ${MS} ms; was the HELLO dropped at all?"
pass "rank 1's HELLO held back for 7 s: gasrun waited for it, the job passed in ${MS} ms"

ip -n "$B" link set "$NS_DEV" down
GAS_BOOT_TIMEOUT=3s run_job -n 2 "${HOSTS[@]}" "$PROG" "$MARK"
ip -n "$B" link set "$NS_DEV" up
[ "$RC" != 0 ] || fail "interface down for good: gasrun exited 0"
expect_err "cannot connect to gasrun's rendezvous at ${NS_ADDR[0]}:" "interface down for good"
[ "$MS" -ge 2900 ] || fail "interface down for good: gave up after ${MS} ms, before GAS_BOOT_TIMEOUT=3s"
check_clean "interface down for good"
pass "B's interface down for good, GAS_BOOT_TIMEOUT=3s: rank 1 gave up naming the address (gasrun exited $RC after ${MS} ms)"

_netns_nft_chain "$B" || fail "nft chain"
ip netns exec "$B" nft add rule netdev gastest out ip protocol tcp drop || fail "nft rule"
GAS_BOOT_TIMEOUT=2s run_job -n 2 "${HOSTS[@]}" "$PROG" "$MARK"
ip netns exec "$B" nft flush chain netdev gastest out
[ "$RC" != 0 ] || fail "TCP dropped: gasrun exited 0"
expect_err "(GASRUN_BOOT_ADDR): Connection timed out (raise GAS_BOOT_TIMEOUT, or make gasrun listen on an address this host reaches: gasrun --rendezvous)" "TCP dropped"
check_clean "TCP dropped"
pass "B's TCP dropped, GAS_BOOT_TIMEOUT=2s: the connect timed out, the message names gasrun --rendezvous"
