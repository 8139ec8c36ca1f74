#!/usr/bin/env bash
# Memory settings and limits that gas_init must catch, each with a message that
# names the setting to change: GAS_NUMA for a node that does not exist,
# GAS_HUGEPAGES=on where the kernel can give no huge pages, a GAS_SEGMENT_SIZE
# the address space cannot hold (the node's ranks all map each other's
# segments), the same under RLIMIT_AS (ulimit -v: the per-process form of
# "overcommit refused"), a GAS_SEGMENT_SIZE below the minimum, and a
# GAS_SEGMENT_DIR that is not usable.  No root needed.
set -u
cd "$(dirname "$0")/../.."
. tests/scripts/lib-mem.sh
trap 'rm -f "$out"' EXIT
export GAS_ERRORS=return GAS_LOG_LEVEL=fatal

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
run env GAS_NUMA=node:99 "$GASRUN" -n 2 "$TOOL"
expect 2 "GAS_NUMA=node:99" "GAS_NUMA naming a missing node"
[ "$nodes" = 1 ] && { grep -qF "one NUMA node" "$out" || fail "the one-node machine is not named"; }
run env GAS_NUMA=nearest "$TOOL"
expect 2 "GAS_NUMA='nearest' (from env): not one of local, interleave, node:N, none" "GAS_NUMA with a bad value"

# GAS_HUGEPAGES=on: an error naming both kernel settings unless one allows huge pages.
shm=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)
pmd=$(cat /sys/kernel/mm/transparent_hugepage/hpage_pmd_size 2>/dev/null || echo 0)
own=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/hugepages-$((pmd / 1024))kB/shmem_enabled 2>/dev/null)
case "$shm" in deny|force) ;; *) [ -n "$own" ] && [ "$own" != inherit ] && shm=$own ;; esac
pool=$(( $(cat /proc/sys/vm/nr_hugepages) + $(cat /proc/sys/vm/nr_overcommit_hugepages) ))
run env GAS_HUGEPAGES=on "$TOOL" --stats
case "$shm" in
    never|deny|'')
        if [ "$pool" = 0 ]; then
            expect 2 "GAS_HUGEPAGES=on cannot be honoured" "GAS_HUGEPAGES=on without huge pages"
            grep -qF "shmem_enabled" "$out" && grep -qF "vm.nr_hugepages" "$out" ||
                fail "the message does not name shmem_enabled and vm.nr_hugepages"
        else
            expect 0 "hugetlb" "GAS_HUGEPAGES=on from the hugetlb pool"
        fi ;;
    *) expect 0 "on: transparent huge pages" "GAS_HUGEPAGES=on with shmem THP ($shm)" ;;
esac

# Address space: 2 ranks x 100 TiB cannot be mapped by one process.
run env GAS_SEGMENT_SIZE=100t "$GASRUN" -n 2 "$TOOL"
expect 2 "GAS_SEGMENT_SIZE=100.0 TiB" "a segment larger than the address space"
grep -qF "user address space" "$out" || fail "the message does not name the address space"

# RLIMIT_AS of 4 GiB: an explicit 64 GiB is refused by name, auto fits under it.
run bash -c "ulimit -v 4194304; GAS_SEGMENT_SIZE=64g exec $GASRUN -n 2 $TOOL"
expect 2 "RLIMIT_AS (ulimit -v) of 4.0 GiB" "GAS_SEGMENT_SIZE over RLIMIT_AS"
grep -qF "GAS_SEGMENT_SIZE" "$out" || fail "the RLIMIT_AS message does not name GAS_SEGMENT_SIZE"
run bash -c "ulimit -v 4194304; exec $GASRUN -n 2 $TOOL --malloc 16m --alloc 1m --touch --stats"
expect 0 "mem_tool: OK" "auto segment size under RLIMIT_AS"
reserved=$(sed -n 's/.*reserved \([0-9]*\).*/\1/p' "$out" | head -1)
[ -n "$reserved" ] && [ "$reserved" -le $((4 << 30)) ] || fail "auto reserved $reserved bytes under a 4 GiB RLIMIT_AS"
echo "   (auto segment under RLIMIT_AS 4 GiB, 2 ranks: $reserved bytes)"

# The smallest GAS_SEGMENT_SIZE: 6m runs gas_init and a first gas_alloc;
# anything below is refused when the configuration is read (by gas_init and
# gas-info alike) quoting the value as given (not rounded to a page), e.g. 1
# and 5m.
run env GAS_SEGMENT_SIZE=6m "$GASRUN" -n 2 "$TOOL" --malloc 64 --alloc 64 --touch
expect 0 "mem_tool: OK" "GAS_SEGMENT_SIZE=6m (the minimum) with gas_malloc and gas_alloc"
run env GAS_SEGMENT_SIZE=1 "$TOOL"
expect 2 "GAS_SEGMENT_SIZE='1' (from env): below 6m" \
    "GAS_SEGMENT_SIZE=1"
run env GAS_SEGMENT_SIZE=5m "$GASRUN" -n 2 "$TOOL" --alloc 64
expect 2 "GAS_SEGMENT_SIZE='5m' (from env): below 6m" "GAS_SEGMENT_SIZE=5m"

# GAS_SEGMENT_DIR must exist and be tmpfs or hugetlbfs.
run env GAS_SEGMENT_DIR=/nonexistent/gas "$TOOL"
expect 2 "GAS_SEGMENT_DIR=/nonexistent/gas" "a missing GAS_SEGMENT_DIR"
if [ "$(stat -f -c %T /)" != tmpfs ]; then
    run env GAS_SEGMENT_DIR=/ "$TOOL"
    expect 2 "is not on tmpfs or hugetlbfs" "GAS_SEGMENT_DIR on a disk file system"
fi
echo "mem-limits: all passed"
