#!/usr/bin/env bash
# A bad tuning-table line (GAS_COLL_TUNING) fails naming the file, the line
# and the bad field: a missing or an extra field, an unknown collective, bad
# ranks, nodes or byte count (without a list of algorithms, which only an
# error about the algorithm gives), an unknown algorithm, and "auto" (the
# table itself, so no row's algorithm; the list offered then lacks it).
# gas-info --coll reads the table as gas_init does.
. "$(dirname "$0")/lib-tmp.sh"
algs='recursive_doubling|rabenseifner|ring|one_shot|two_shot|hierarchical'

check() { # line, what the message must hold, what it must not
    local line=$1 want=$2 unwanted=${3:-}
    printf '# a comment\nbarrier * * 0 dissemination\n%s\n' "$line" >"$T/t.conf"
    GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 &&
        fail "'$line' accepted"
    msg=$(grep 'tuning table' "$T/out")
    case "$msg" in *"$T/t.conf, line 3: $want"*) ;; *) fail "'$line': $msg (want '$want')" ;; esac
    if [ -n "$unwanted" ]; then
        case "$msg" in *"$unwanted"*) fail "'$line': '$unwanted' in $msg" ;; esac
    fi
    echo "ok: '$line'"
}

check 'allreduce * * 0 ring extra' "extra field 'extra'"
check 'allreduce * * 0' '4 fields, expected 5'
check 'allreduc * * 0 ring' "unknown collective 'allreduc' (one of: barrier," "$algs"
check 'allreduce x * 0 ring' "bad ranks 'x'" "$algs"
check 'allreduce * 2 0 ring' "bad nodes '2'" "$algs"
check 'allreduce * * 0q ring' "bad byte count '0q'" "$algs"
check 'allreduce * * 0 nope' "unknown algorithm 'nope' for allreduce (one of: $algs)" 'auto'
check 'allreduce * * 0 auto' "algorithm 'auto' means this table; a row names one of allreduce's algorithms: $algs" '(auto|'

# a good row with a trailing comment still reads
printf 'allreduce * * 0 ring # comment\n' >"$T/t.conf"
GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 ||
    fail "a good row refused: $(tail -2 "$T/out")"
echo "ok: a good row with a comment"
