#!/usr/bin/env bash
# gasrun --bind-to core|numa|none (also spelt --bind core|numa|none): each rank's CPU set (read back from
# /proc/<rank>/status), only ever within gasrun's own (taskset), the default
# for this machine, GASRUN_BIND, a bad value, and libgas binding the segment
# to the node of the rank's CPUs.
. "$(dirname "$0")/lib-gasrun.sh"
TOOL=$BUILD/tests/mr/mem_tool
show='echo "cpus=$(sed -n "s/^Cpus_allowed_list:\t*//p" /proc/self/status) bind=$GASRUN_BIND"'
ncpu=$(nproc)
nnodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nnodes" -ge 1 ] || nnodes=1
mine=$(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/self/status)

# core: one CPU each, distinct while there are enough.
n=$(( ncpu < 4 ? ncpu : 4 ))
run_job -n "$n" --bind-to core sh -c "$show" "$MARK"
expect_rc 0 "--bind core"
cpus=$(grep -o 'cpus=[0-9,-]*' "$TMPD/out" | sort -u | wc -l)
[ "$cpus" = "$n" ] || fail "--bind core: $n ranks got $cpus distinct CPU sets"
grep -q 'cpus=[0-9]*-\|cpus=[0-9]*,' "$TMPD/out" && fail "--bind core: a rank has several CPUs"
grep -c 'bind=core' "$TMPD/out" | grep -qx "$n" || fail "--bind core: GASRUN_BIND not set"
pass "--bind core: $n ranks on $n distinct CPUs"

# more ranks than CPUs: wrap around, and say so.
run_job -n $((ncpu + 1)) --bind core sh -c "$show" "$MARK"
expect_rc 0 "--bind core oversubscribed"
expect_err "ranks on $ncpu CPUs" "--bind core oversubscribed"
pass "--bind core with more ranks than CPUs"

# only gasrun's own CPUs are handed out.
if [ "$ncpu" -ge 2 ]; then
    last=$(( $(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/self/status | tr ',-' '\n\n' | sort -n | tail -1) ))
    timeout 20 taskset -c "$last" "$GASRUN" -n 3 --bind core sh -c "$show" "$MARK" \
        >"$TMPD/out" 2>"$TMPD/err" </dev/null
    [ "$(grep -o 'cpus=[0-9,-]*' "$TMPD/out" | sort -u)" = "cpus=$last" ] ||
        fail "--bind core under taskset -c $last: $(grep -o 'cpus=[0-9,-]*' "$TMPD/out" | sort -u | tr '\n' ' ')"
    pass "--bind core stays within gasrun's CPUs"
fi

# numa: every rank on exactly the CPUs of one node.
run_job -n 3 --bind numa sh -c "$show" "$MARK"
expect_rc 0 "--bind numa"
while read -r set; do
    ok=0
    for nd in /sys/devices/system/node/node[0-9]*; do
        [ "$set" = "$(cat "$nd/cpulist")" ] && ok=1
    done
    [ "$nnodes" = 1 ] && [ "$set" = "$mine" ] && ok=1
    [ $ok = 1 ] || fail "--bind numa: CPU set $set is not one node's"
done < <(grep -o 'cpus=[0-9,-]*' "$TMPD/out" | cut -d= -f2)
pass "--bind numa"

# none, and the default: one node -> none (inherit); several -> numa.
run_job -n 2 --bind none sh -c "$show" "$MARK"
[ "$(grep -o 'cpus=[0-9,-]*' "$TMPD/out" | sort -u)" = "cpus=$mine" ] || fail "--bind none changed the CPU set"
run_job -n 2 sh -c "$show" "$MARK"
want=$([ "$nnodes" -gt 1 ] && echo numa || echo none)
grep -c "bind=$want" "$TMPD/out" | grep -qx 2 || fail "default binding is not $want on $nnodes node(s)"
pass "--bind none, and the default here ($want)"

run_job -n 2 --bind-to sockets true "$MARK"
expect_rc 2 "--bind-to sockets"
expect_err "--bind wants core, numa or none, not 'sockets'" "--bind-to sockets"
run_job -n 2 --bind sockets true "$MARK"
expect_rc 2 "--bind sockets"
expect_err "wants core, numa or none, not 'sockets'" "--bind sockets"
pass "bad --bind-to / --bind values"

# libgas: the segment goes to the node of the rank's CPUs.
GAS_ERRORS=return run_job -n 2 --bind numa "$TOOL" --stats
expect_rc 0 "mem_tool under --bind numa"
for r in 0 1; do
    node=$(sed -n "s/.*rank $r .*numa_node \([-0-9]*\).*/\1/p" "$TMPD/out")
    [ -n "$node" ] && [ "$node" -ge 0 ] || fail "rank $r: its segment is bound to no node ($node)"
done
pass "segments bound to the ranks' nodes"
check_clean "bind"
