# lib-netns.sh - network namespaces as the hosts of multi-host tests (sourced;
# needs root).  Addresses are in 10.213.0.0/24 and exist only inside the
# namespaces created here: no test traffic leaves them, and the root namespace
# gets no interface, route or rule.
#
#   netns_setup N        create N namespaces $NS_PREFIX-a, -b, ... (NS[0..N-1]),
#                        lo up in each, joined by one veth pair (N = 2) or by a
#                        bridge in a namespace of its own ($NS_PREFIX-br, N > 2).
#                        Inside each the interface is $NS_DEV (gas0) with
#                        address NS_ADDR[i] = 10.213.0.(i+1)/24.
#   netns_rate NS RATE [LIMIT]  tbf rate limit (e.g. 1gbit) on what NS sends; with
#                        LIMIT (bytes, e.g. 128kb) a shallow queue: 32kb burst,
#                        LIMIT queued, the rest dropped (default: 256kb burst,
#                        50 ms of queue)
#   netns_loss NS PCT    nftables: drop PCT% of the packets NS sends
#   netns_dup NS PCT     nftables: duplicate PCT% of the packets NS sends
#   netns_pids           pids of every process in our namespaces
#   netns_check_clean WHAT  fail (via fail(), or exit 1) if any process is left
#   netns_cleanup        kill what is left in them, delete the nft tables and
#                        the namespaces; runs on exit (and on INT/TERM/HUP)
#
# NS_PREFIX defaults to gas-t<pid>: unique per test run.  If the sourcing script
# defines on_exit (lib-gasrun.sh does), it runs after the cleanup.
NS_PREFIX=${NS_PREFIX:-gas-t$$}
NS_DEV=gas0
NS_NET=10.213.0
NS=()
NS_ADDR=()
NS_ALL=()           # everything created, the bridge namespace too

_netns_fail() {
    if declare -F fail >/dev/null; then fail "$@"; fi
    echo "FAIL: $*" >&2
    exit 1
}

netns_setup() { # N
    local n=$1 i name letters=abcdefghijklmnopqrstuvwxyz
    [ "$n" -ge 2 ] && [ "$n" -le 26 ] || _netns_fail "netns_setup: 2..26 namespaces, not $n"
    for ((i = 0; i < n; i++)); do
        name=$NS_PREFIX-${letters:i:1}
        ip netns add "$name" || _netns_fail "ip netns add $name failed"
        NS_ALL+=("$name")
        NS+=("$name")
        NS_ADDR+=("$NS_NET.$((i + 1))")
        ip -n "$name" link set lo up || _netns_fail "lo up in $name"
    done
    if [ "$n" = 2 ]; then
        # Created inside the namespaces: the root namespace never sees them.
        ip link add "$NS_DEV" netns "${NS[0]}" type veth peer name "$NS_DEV" netns "${NS[1]}" ||
            _netns_fail "veth between ${NS[0]} and ${NS[1]}"
    else
        local br=$NS_PREFIX-br
        ip netns add "$br" || _netns_fail "ip netns add $br failed"
        NS_ALL+=("$br")
        ip -n "$br" link add br0 type bridge && ip -n "$br" link set br0 up ||
            _netns_fail "bridge in $br"
        for ((i = 0; i < n; i++)); do
            ip link add "$NS_DEV" netns "${NS[i]}" type veth peer name "p$i" netns "$br" &&
                ip -n "$br" link set "p$i" master br0 up || _netns_fail "veth ${NS[i]} - $br"
        done
    fi
    for ((i = 0; i < n; i++)); do
        ip -n "${NS[i]}" addr add "${NS_ADDR[i]}/24" dev "$NS_DEV" &&
            ip -n "${NS[i]}" link set "$NS_DEV" up || _netns_fail "address of ${NS[i]}"
    done
}

netns_rate() { # NS RATE [LIMIT]
    local q=(burst 256kb latency 50ms)
    [ -n "${3:-}" ] && q=(burst 32kb limit "$3")
    ip netns exec "$1" tc qdisc replace dev "$NS_DEV" root tbf rate "$2" "${q[@]}" ||
        _netns_fail "tbf rate $2 in $1"
}

_netns_nft_chain() { # NS: the egress chain of table netdev gastest
    ip netns exec "$1" nft list chain netdev gastest out >/dev/null 2>&1 && return 0
    ip netns exec "$1" nft add table netdev gastest &&
        ip netns exec "$1" nft add chain netdev gastest out \
            "{ type filter hook egress device $NS_DEV priority 0; }"
}

netns_loss() { # NS PCT (100: everything)
    local match=(numgen random mod 100 '<' "$2")
    [ "$2" -ge 100 ] && match=()
    _netns_nft_chain "$1" &&
        ip netns exec "$1" nft add rule netdev gastest out "${match[@]}" drop ||
        _netns_fail "nft drop $2% in $1"
}

netns_dup() { # NS PCT
    _netns_nft_chain "$1" &&
        ip netns exec "$1" nft add rule netdev gastest out numgen random mod 100 '<' "$2" \
            dup to "$NS_DEV" || _netns_fail "nft dup $2% in $1"
}

netns_pids() {
    local ns
    for ns in "${NS_ALL[@]}"; do ip netns pids "$ns" 2>/dev/null; done
}

netns_check_clean() { # what
    local left i
    for ((i = 0; i < 20; i++)); do   # a killed process takes a moment to go
        left=$(netns_pids | paste -sd, -)
        [ -z "$left" ] && return 0
        sleep 0.05
    done
    ps -o pid,ppid,pgid,stat,args -p "$left" >&2 || true
    _netns_fail "$1: processes left in the namespaces: $left"
}

netns_cleanup() {
    local ns pids
    for ns in "${NS_ALL[@]}"; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
        ip netns exec "$ns" nft delete table netdev gastest 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
    NS_ALL=()
}

_netns_exit() {
    netns_cleanup
    if declare -F on_exit >/dev/null; then on_exit; fi
}
trap _netns_exit EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(id -u)" = 0 ] || { echo "needs root for network namespaces"; exit 77; }
