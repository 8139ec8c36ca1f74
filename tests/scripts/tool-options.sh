#!/usr/bin/env bash
# The small tools' options: --help prints the usage on stdout and exits 0
# without running anything; an unknown option, or a bad --threads for
# gas-bench-mem, exits 2 with a message naming it, before any work.
. "$(dirname "$0")/lib-tmp.sh"

expect() { # status, text the output must hold, command...
    local want=$1 text=$2; shift 2
    timeout 20 "$@" >"$T/out" 2>"$T/err"
    local st=$?
    [ "$st" = "$want" ] || fail "$*: exit status $st, expected $want: $(head -2 "$T/err")"
    cat "$T/out" "$T/err" | grep -qF -- "$text" || fail "$*: no '$text' in: $(head -3 "$T/out" "$T/err")"
    echo "ok: $* -> $st"
}

expect 0 'usage: gas-info' "$BUILD/bin/gas-info" --help
[ -s "$T/err" ] && fail "gas-info --help wrote to stderr: $(head -2 "$T/err")"
expect 2 "unknown option '--bogus'" "$BUILD/bin/gas-info" --bogus

expect 0 'usage: gasrun -n N gas-bench-scale' "$BUILD/bin/gas-bench-scale" --help
grep -q '^| 1 |' "$T/out" && fail "gas-bench-scale --help ran the benchmark"
expect 2 "unknown option '--bogus'" "$BUILD/bin/gas-bench-scale" --bogus
grep -q '^| 1 |' "$T/out" && fail "gas-bench-scale --bogus ran the benchmark"

expect 0 'usage: gas-bench-mem' "$BUILD/bin/gas-bench-mem" --help
for v in 0 abc 65 -1 2x; do
    expect 2 "--threads '$v': not a whole number in 1 .. 64" "$BUILD/bin/gas-bench-mem" --threads "$v"
done
expect 2 "a value is missing after the option '--threads'" "$BUILD/bin/gas-bench-mem" --threads

# gas-bench-scale's per-peer record column names the path it measured.
expect 0 '| shm ' "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench-scale"
grep -Eq '\| shm [0-9]+ \|$' "$T/out" || fail "gas-bench-scale over shm: no shm record size: $(cat "$T/out")"
GAS_TRANSPORT=udp expect 0 '| udp ' "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench-scale"
grep -Eq '\| udp [0-9]+ \|$' "$T/out" || fail "gas-bench-scale under udp: no udp record size: $(cat "$T/out")"
