# lib-udp.sh - sourced by the udp test scripts (BUILD set, run from the repository root).
#   require_built FILE...  fail (exit 1) naming the first FILE that is not an executable
#   require_udp [WHY]      skip (exit 77) when build/bin/gas-info lists no udp transport

require_built() {
    local b
    for b in "$@"; do
        [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
    done
}

require_udp() {
    "$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp && return 0
    echo "no udp transport compiled in ($BUILD/bin/gas-info)${1:+; $1}"
    exit 77
}
