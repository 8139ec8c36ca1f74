#!/usr/bin/env bash
# GAS_UDP_IFACE given as an IPv4 address (transport/udp/sock.c): a host-file
# line with addr=IP and no iface= hands its ranks GAS_UDP_IFACE=IP
# (docs/gasrun.md), and the udp transport binds that address.
#   - 4 ranks of examples/count over two namespaces, both host lines with addr=
#     only: the job succeeds and each rank bound its host's address;
#   - GAS_UDP_IFACE=an address no interface has: gas_init fails naming it.
. "$(dirname "$0")/lib-gasrun.sh"
. "$(dirname "$0")/lib-netns.sh"
COUNT=$BUILD/examples/count
[ -x "$COUNT" ] || fail "$COUNT is not built (make all)"
"$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp ||
    { echo "SKIP: no udp transport compiled in"; exit 77; }

netns_setup 2
A=${NS[0]} B=${NS[1]}
JOB_NS=$A
JOB_LIMIT=60
unset GAS_UDP_IFACE
printf '%s slots=2 addr=%s\n%s slots=2 addr=%s\n' "$A" "${NS_ADDR[0]}" "$B" "${NS_ADDR[1]}" \
    >"$TMPD/hosts"
GAS_LOG_LEVEL=info run_job -n 4 --hostfile "$TMPD/hosts" --launcher 'ip netns exec' \
    --timeout 50 "$COUNT" "$MARK"
expect_rc 0 "addr= only"
for r in 0 1 2 3; do
    grep -qxF "[$r] rank $r: counters correct (each 10)" "$TMPD/out" || fail "addr= only: rank $r"
    ip=${NS_ADDR[$((r / 2))]}
    grep -q "^\[$r\].*bound $ip:[0-9]* on $NS_DEV" "$TMPD/err" ||
        fail "addr= only: rank $r did not bind $ip on $NS_DEV"
done
check_clean "addr= only"
pass "host lines with addr= only: every rank bound its host's address"

# An address that no interface of the host has.
GAS_UDP_IFACE=10.213.0.99 run_job -n 2 --hosts "$B" --launcher 'ip netns exec' \
    --rendezvous "${NS_ADDR[0]}" --timeout 30 "$COUNT" "$MARK"
[ "$RC" != 0 ] || fail "foreign address: the job succeeded"
expect_err "GAS_UDP_IFACE=10.213.0.99: no interface of this host has that IPv4 address" \
    "foreign address"
check_clean "foreign address"
pass "GAS_UDP_IFACE with an address of no local interface: gas_init names it"
