#!/usr/bin/env bash
# A bad tuning-table line (GAS_COLL_TUNING) fails naming the file, the line
# and the bad field: a missing or an extra field, an unknown collective, bad
# ranks, nodes or byte count (without a list of algorithms, which only an
# error about the algorithm gives), an unknown algorithm, and "auto" (the
# table itself, so no row's algorithm; the list offered then lacks it);
# rank counts that do not fit (they used to wrap: 4294967298 read as 2), a
# field too long, a NUL byte.  Lines of any length are read whole (they were
# cut at 255 characters: an extra field past that was accepted, a rule past
# it dropped), and a GAS_COLL_TUNING that is a directory or a device is
# refused (a directory read as an empty table).  The optional sixth field
# (cpus: *, own or shared) is read, and a bad one named.
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

check 'allreduce * * 0 ring own extra' "extra field 'extra' after the cpus"
check 'allreduce * * 0 ring extra' "bad cpus 'extra' (*, own or shared)" "$algs"
check 'allreduce * * 0 ring Own' "bad cpus 'Own'"
check 'allreduce * * 0' '4 fields, expected 5'
check 'allreduc * * 0 ring' "unknown collective 'allreduc' (one of: barrier," "$algs"
check 'allreduce x * 0 ring' "bad ranks 'x'" "$algs"
check 'allreduce * 2 0 ring' "bad nodes '2'" "$algs"
check 'allreduce * * 0q ring' "bad byte count '0q'" "$algs"
check 'allreduce * * 0 nope' "unknown algorithm 'nope' for allreduce (one of: $algs)" 'auto'
check 'allreduce * * 0 auto' "algorithm 'auto' means this table; a row names one of allreduce's algorithms: $algs" '(auto|'

max=1073741823
check 'allreduce 99999999999 * 0 ring' "ranks '99999999999' out of range (a rank count is 1 .. $max)"
check 'allreduce 4294967298 * 0 ring' "ranks '4294967298' out of range (a rank count is 1 .. $max)"
check 'allreduce 2-4294967298 * 0 ring' "ranks '2-4294967298' out of range"
check 'allreduce 99999999999999999999999-3 * 0 ring' "ranks '99999999999999999999999-3' out of range"
check 'allreduce 0 * 0 ring' "ranks '0' out of range"
check 'allreduce 4-3 * 0 ring' "bad ranks '4-3'"
pad=$(printf '%300s' '')
check "allreduce * * 0 ring shared${pad}extra field" "extra field 'extra'"
long=$(printf 'x%.0s' $(seq 100))
check "allreduce * * 0 $long" "field 5 ('xxxxxxxxxxxxxxxxxxxx...') is 100 characters long (at most 63)"

# a NUL byte in a line
printf 'barrier * * 0 dissemination\nallreduce * * 0 ring\0 extra\n' >"$T/t.conf"
GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 && fail "a NUL byte accepted"
grep -q "tuning table $T/t.conf, line 2: a NUL byte" "$T/out" || fail "NUL: $(grep ERROR "$T/out")"
echo "ok: a NUL byte"

# not a regular file: a directory, a device
for f in "$T" /dev/null; do
    GAS_COLL_TUNING=$f timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 && fail "GAS_COLL_TUNING=$f accepted"
    grep -q "GAS_COLL_TUNING=$f is a .*, not a regular file" "$T/out" || fail "$f: $(grep ERROR "$T/out")"
    echo "ok: GAS_COLL_TUNING=$f refused"
done

# a rule after 300 spaces, and one after a 1000-character comment line, are read (not dropped)
{ printf '%s%s\n' "$pad" 'allreduce 7 * 0 ring'; printf '#%1000s\n' x; printf 'gather 9 * 0 linear\n'; } >"$T/t.conf"
GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 ||
    fail "long lines refused: $(tail -2 "$T/out")"
grep -Eq '^ +allreduce +7 +\* +0 +ring +\*$' "$T/out" || fail "the rule after 300 spaces was dropped"
grep -Eq '^ +gather +9 +\* +0 +linear +\*$' "$T/out" || fail "the rule after a long comment was dropped"
echo "ok: long lines read whole"

# a good row with a trailing comment still reads
printf 'allreduce * * 0 ring # comment\n' >"$T/t.conf"
GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 ||
    fail "a good row refused: $(tail -2 "$T/out")"
echo "ok: a good row with a comment"

# the cpus field: own, shared and * read and shown; gas-info gives the choice for each
printf 'allreduce * * 0 ring\nallreduce 4 1 0 one_shot own\nallreduce 4 1 0 two_shot shared\nallreduce 8 1 0 rabenseifner *\n' >"$T/t.conf"
GAS_COLL_TUNING=$T/t.conf timeout 20 "$BUILD/bin/gas-info" --coll >"$T/out" 2>&1 ||
    fail "cpus rows refused: $(tail -2 "$T/out")"
grep -Eq '^ +allreduce +4 +1 +0 +one_shot +own$' "$T/out" || fail "the own row not shown"
grep -Eq '^ +allreduce +4 +1 +0 +two_shot +shared$' "$T/out" || fail "the shared row not shown"
grep -Eq '^ +allreduce +8 +1 +0 +rabenseifner +\*$' "$T/out" || fail "the * row not shown"
grep -q 'own CPUs, 2/4/8 ranks: 8:ring/one_shot/rabenseifner ' "$T/out" || fail "own choices: $(grep 'own CPUs' "$T/out" | grep -m1 -o '8:[^ ]*')"
grep -q 'shared CPUs, 2/4/8 ranks: 8:ring/two_shot/rabenseifner ' "$T/out" || fail "shared choices: $(grep 'shared CPUs' "$T/out" | grep -m1 -o '8:[^ ]*')"
echo "ok: the cpus field"
