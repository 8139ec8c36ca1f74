# lib-udp.sh - sourced by the udp test scripts, from the repository root.
#   BUILD                  the build directory (default build)
#   require_udp_test TEST [WHY]
#                          fail (exit 1) unless gas-info, gasrun and TEST are built;
#                          skip (exit 77) when gas-info lists no udp transport
BUILD=${BUILD:-build}

require_udp_test() {
    local b
    for b in "$BUILD/bin/gas-info" "$BUILD/bin/gasrun" "$1"; do
        [ -x "$b" ] || { echo "FAIL: $b is not built"; exit 1; }
    done
    "$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp && return 0
    echo "no udp transport compiled in ($BUILD/bin/gas-info)${2:+; $2}"
    exit 77
}
