#!/usr/bin/env bash
# A network outage shorter than the udp transport's GAS_UDP_PEER_TIMEOUT
# (30 s) does not end a job whose ranks boot over TCP (runtime/boot_gasrun.c
# resume(), boot_watch.c; tools/gasrun rendezvous RESUME): 4 ranks of
# tests/gasrun/gas_barriers, gasrun and ranks 0-1 in namespace A, ranks 2-3 in
# B, meet in barriers every 200 ms; once all are up, everything either side
# sends is dropped (nftables on the veth, so the senders' own kernels drop it:
# a TCP connection with data waiting dies after ~8 s of window probes, which
# no socket option changes) for 12 s.  Then every rank must finish with
# status 0, the ranks whose boot connection broke having connected again, and
# none killed by SIGPIPE.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
PROG=$BUILD/tests/gasrun/gas_barriers
[ -x "$PROG" ] || fail "$PROG is not built (make tests)"
"$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp ||
    { echo "SKIP: no udp transport compiled in"; exit 77; }
OUTAGE_S=${OUTAGE_S:-12}
set -m

netns_setup 2
A=${NS[0]} B=${NS[1]}
export GAS_UDP_IFACE=$NS_DEV
# The barriers run until well after the network is back (~3 s + the outage).
timeout -k 2 $((OUTAGE_S + 60)) ip netns exec "$A" "$GASRUN" -n 4 --hosts "$A,$B" \
    --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}" --timeout $((OUTAGE_S + 50)) \
    "$PROG" $((OUTAGE_S + 10)) "$MARK" >"$TMPD/out" 2>"$TMPD/err" </dev/null &
GPID=$!
wait_ranks_up 4 "$TMPD/out" "before the outage"
sleep 1
netns_loss "$A" 100
netns_loss "$B" 100
t0=$(now_ms)
sleep "$OUTAGE_S"
for ns in "$A" "$B"; do ip netns exec "$ns" nft delete table netdev gastest; done
echo "outage of $(( $(now_ms) - t0 )) ms over"
wait "$GPID"
RC=$?
[ "$RC" = 0 ] || fail "the job ended with status $RC after a ${OUTAGE_S} s outage"
for r in 0 1 2 3; do
    grep -qxF "[$r] rank $r done" "$TMPD/out" || fail "rank $r did not finish"
done
grep -q SIGPIPE "$TMPD/err" && fail "SIGPIPE"
# The outage did break boot connections (else this test proves nothing).
grep -q "boot_gasrun.c:[0-9]*: connected to gasrun (${NS_ADDR[0]}:[0-9]*) again after" \
    "$TMPD/err" || fail "no rank's boot connection broke and was made again"
check_clean "outage"
pass "4 ranks over 2 namespaces lived through a ${OUTAGE_S} s outage" \
    "($(grep -c 'connected to gasrun .* again' "$TMPD/err") boot connection(s) made again)"
