#!/usr/bin/env bash
# Own or shared CPUs (docs/collectives.md, "Own or shared CPUs"): gas_init
# counts, from every rank's CPU key (machine boot and affinity mask), which
# ranks share their CPUs with more ranks than those CPUs number.  That
# decides the tuning table's rows (test_coll_cpus checks gas_coll_choice
# and runs the collectives) and how waits wait: a rank that shares sleeps at
# once ("oversubscribed" in its gas_init line), one that owns its CPU spins
# first.  Ranks bound one per core own their CPU (they used to count every
# rank of the node against their one CPU and slept at every wait).
# Needs 2 CPUs in this shell's affinity mask (skipped otherwise).
. "$(dirname "$0")/lib-tmp.sh"
cpus=$(taskset -pc $$ | sed 's/.*: //')   # this shell's affinity list, e.g. 0-3,6
first=()
for part in ${cpus//,/ }; do               # the first two CPUs in it
    for ((c = ${part%-*}; c <= ${part#*-} && ${#first[@]} < 2; c++)); do first+=("$c"); done
done
[ ${#first[@]} = 2 ] || { echo "SKIP: needs 2 CPUs (affinity: $cpus)"; exit 77; }
two=${first[0]},${first[1]}
one=${two%%,*}
prog=$BUILD/tests/mr/test_coll_cpus

# run NAME TASKSET_CPUS NRANKS "GASRUN OPTIONS" [VAR=value...]: the test and its gas_init lines in $T/NAME
run() {
    local name=$1 set=$2 n=$3 opts=$4; shift 4
    env GAS_LOG_LEVEL=info GAS_TRANSPORT=shm "$@" taskset -c "$set" timeout 60 \
        "$BUILD/bin/gasrun" -n "$n" --timeout 50 $opts "$prog" >"$T/$name" 2>&1 ||
        fail "$name: $(grep -v INFO "$T/$name" | tail -5)"
}
# oversub NAME RANK yes|no: rank's gas_init line says oversubscribed, or not
oversub() {
    local line
    line=$(grep "^\[$2\] .*rank $2 of .* up (" "$T/$1") || fail "$1: no gas_init line of rank $2"
    if [ "$3" = yes ]; then
        [[ $line == *oversubscribed* ]] || fail "$1: rank $2 should be oversubscribed: $line"
    else
        [[ $line != *oversubscribed* ]] || fail "$1: rank $2 took itself for oversubscribed: $line"
    fi
}

# two ranks bound one per CPU: both own theirs (and spin)
run bound2 "$two" 2 "--bind core" COLL_CPUS_WORLD=own COLL_CPUS_EVEN=own COLL_CPUS_ODD=own
oversub bound2 0 no; oversub bound2 1 no
echo "ok: 2 ranks bound one per CPU own their CPUs"

# two ranks on one CPU: both share it
run onecpu "$one" 2 "" COLL_CPUS_WORLD=shared COLL_CPUS_EVEN=shared COLL_CPUS_ODD=shared
oversub onecpu 0 yes; oversub onecpu 1 yes
echo "ok: 2 ranks on one CPU share it"

# three ranks bound to 2 CPUs: ranks 0 and 2 share the first, rank 1 owns the
# second; the world team shares (a member does), the team of rank 1 alone owns
run bound3 "$two" 3 "--bind core" COLL_CPUS_WORLD=shared COLL_CPUS_EVEN=shared COLL_CPUS_ODD=own
oversub bound3 0 yes; oversub bound3 1 no; oversub bound3 2 yes
echo "ok: 3 ranks on 2 CPUs: the team of rank 1 owns its CPU, the others share"

# GAS_COLL_CPUS overrides the count for the table (not for the waits)
run forced_own "$one" 2 "" GAS_COLL_CPUS=own COLL_CPUS_WORLD=own COLL_CPUS_EVEN=own COLL_CPUS_ODD=own
run forced_shared "$two" 2 "--bind core" GAS_COLL_CPUS=shared COLL_CPUS_WORLD=shared COLL_CPUS_EVEN=shared COLL_CPUS_ODD=shared
echo "ok: GAS_COLL_CPUS=own and =shared"
