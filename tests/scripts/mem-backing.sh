#!/usr/bin/env bash
# Backing failures, in a private mount namespace (nothing outside it sees the
# mounts) with small tmpfs file systems, and in a memory cgroup this script
# creates and removes:
#  - /dev/shm too small for the node's ranks to start (GAS_SEGMENT_DIR=/dev/shm):
#    gas_init says so, naming GAS_SEGMENT_DIR;
#  - a 64 MiB /dev/shm: auto segments of 10 ranks take their 6.4 MiB shares;
#    16 ranks (4 MiB shares, under the 6m minimum) fail naming GAS_SEGMENT_DIR;
#  - /dev/shm exhausted later, GAS_PREFAULT=y: gas_malloc returns GAS_ERR_NOMEM
#    on every rank, naming the tmpfs and its size;
#  - GAS_PREFAULT=y: an array freed and allocated again takes no new memory
#    (its pages are still backed), so it fits where two would not;
#  - the same without GAS_PREFAULT: the rank that touches the page dies of
#    SIGBUS after one line naming the limit (gasrun exits 128+7);
#  - GAS_HUGEPAGES=on on a tmpfs mounted huge=always: huge pages really used
#    (ShmemPmdMapped); on a tmpfs without huge=: an error naming the option;
#  - a memory cgroup of 48 MiB, GAS_PREFAULT=y: a 96 MiB gas_malloc fails with
#    a message naming the cgroup limit (skipped where no memory cgroup can be made).
# Needs root (unshare -m, mount).
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
if [ "${GAS_MEM_BACKING_INNER:-}" != 1 ]; then
    [ "$(id -u)" = 0 ] || { echo "needs root"; exit 77; }
    GAS_MEM_BACKING_INNER=1 exec unshare -m --propagation private bash "$0" "$@"
fi
. tests/scripts/lib-mem.sh
export GAS_ERRORS=return GAS_LOG_LEVEL=error
cg=""
cleanup() {
    rm -f "$out"
    if [ -n "$cg" ] && [ -d "$cg" ]; then
        while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$cg/cgroup.procs"
        for _ in 1 2 3 4 5; do rmdir "$cg" 2>/dev/null && break; sleep 0.2; done
    fi
}
trap cleanup EXIT

# /dev/shm too small to start two ranks (each needs 1 MiB backed to start).
mount -t tmpfs -o size=1m gas-test /dev/shm || { echo "cannot mount a tmpfs here"; exit 77; }
run env GAS_SEGMENT_DIR=/dev/shm GAS_LOG_LEVEL=warn "$GASRUN" -n 2 "$TOOL"
expect 2 "too little to start the 2 ranks" "/dev/shm too small to start"
grep -qF "GAS_SEGMENT_DIR=/dev/shm" "$out" || fail "the message does not name GAS_SEGMENT_DIR"

# 64 MiB for 10 ranks: auto sizing gives each its 6.4 MiB share (the power of
# two below it, 4 MiB, is under the 6m minimum); for 16 ranks (4 MiB each) gas_init
# fails naming GAS_SEGMENT_DIR, its size, the ranks and the minimum, not the
# address space; GAS_SEGMENT_SIZE=6m still starts 10 ranks.
mount -o remount,size=64m /dev/shm
run env GAS_SEGMENT_DIR=/dev/shm "$GASRUN" -n 10 "$TOOL" --stats
expect 0 "mem_tool: OK" "auto segments for 10 ranks in a 64 MiB /dev/shm"
fits=$(awk '/mem_tool: rank .* reserved/ { for (i = 1; i < NF; i++) if ($i == "reserved" &&
       $(i + 1) >= 6291456 && $(i + 1) <= 67108864 / 10) n++ } END { print n + 0 }' "$out")
[ "$fits" = 10 ] || fail "auto segments are not between 6m and a tenth of 64 MiB on every rank"
run env GAS_SEGMENT_DIR=/dev/shm "$GASRUN" -n 16 "$TOOL"
why="GAS_SEGMENT_DIR=/dev/shm is a tmpfs of 64.0 MiB, 4.0 MiB for each of the 16 ranks"
why="$why of this node, less than the smallest segment, 6m"
expect 2 "$why" "auto segments for 16 ranks in a 64 MiB /dev/shm"
grep -qF "GAS_SEGMENT_SIZE (at least 6m)" "$out" ||
    fail "the message does not say to set GAS_SEGMENT_SIZE"
grep -qF "address space" "$out" && fail "the message blames the address space"
run env GAS_SEGMENT_DIR=/dev/shm GAS_SEGMENT_SIZE=6m "$GASRUN" -n 10 "$TOOL"
expect 0 "mem_tool: OK" "GAS_SEGMENT_SIZE=6m for 10 ranks in a 64 MiB /dev/shm"

# Room to start, not for 2 x 64 MiB.  Auto sizing keeps the segments within
# the tmpfs, so gas_malloc finds them too small and says what bounds them.
mount -o remount,size=24m /dev/shm
run env GAS_SEGMENT_DIR=/dev/shm "$GASRUN" -n 2 "$TOOL" --malloc 64m
expect 3 "and the size of the tmpfs at /dev/shm (GAS_SEGMENT_DIR, 24.0 MiB)" "auto segments within /dev/shm"
# Larger segments than the tmpfs holds (warned about at start).
export GAS_SEGMENT_SIZE=1g
run env GAS_SEGMENT_DIR=/dev/shm GAS_LOG_LEVEL=warn "$GASRUN" -n 2 "$TOOL"
expect 0 "touching more than fits raises SIGBUS" "a warning when the segments can outgrow /dev/shm"
run env GAS_SEGMENT_DIR=/dev/shm GAS_PREFAULT=y "$GASRUN" -n 2 "$TOOL" --malloc 64m
expect 3 "gas_malloc failed: out of memory" "GAS_PREFAULT=y: gas_malloc past /dev/shm"
[ "$(grep -c 'gas_malloc failed' "$out")" = 2 ] || fail "not every rank saw the failure"
grep -qF "the tmpfs at /dev/shm (GAS_SEGMENT_DIR) has" "$out" || fail "the message does not name the tmpfs"
run env GAS_SEGMENT_DIR=/dev/shm GAS_PREFAULT=y "$GASRUN" -n 2 "$TOOL" --malloc 4m --alloc 2m --stats
expect 0 "mem_tool: OK" "GAS_PREFAULT=y: allocations that fit"

# Without GAS_PREFAULT the first touch past the end is a SIGBUS, reported first.
run env GAS_SEGMENT_DIR=/dev/shm "$GASRUN" -n 2 "$TOOL" --malloc 64m --touch
expect 135 "SIGBUS: no memory could back the page at offset" "touching past /dev/shm"
grep -qF "the tmpfs at /dev/shm" "$out" && grep -qF "GAS_PREFAULT=y" "$out" ||
    fail "the SIGBUS report does not name the tmpfs and GAS_PREFAULT"
[ -z "$(ls -A /dev/shm)" ] || fail "segment files left in /dev/shm: $(ls /dev/shm)"

# GAS_PREFAULT=y checks the limits for the pages not backed yet: 24 MiB freed and
# allocated again at the same place fits a 40 MiB /dev/shm (counting all of it
# again, the check saw 48 MiB and refused).
# The kernel tells which pages a range has from Linux 6.5 (cachestat); before,
# the whole range is counted.
kver=$(uname -r | cut -d- -f1)
if [ "$(printf '6.5\n%s\n' "$kver" | sort -V | head -1)" = 6.5 ]; then
    mount -o remount,size=40m /dev/shm
    run env GAS_SEGMENT_DIR=/dev/shm GAS_PREFAULT=y "$GASRUN" -n 1 "$TOOL" --malloc 24m --again
    expect 0 "mem_tool: OK" "GAS_PREFAULT=y: gas_malloc, gas_free, the same gas_malloc again"
else
    echo "skip: GAS_PREFAULT=y on a range backed before (Linux $kver has no cachestat)"
fi
unset GAS_SEGMENT_SIZE
umount /dev/shm

# Huge pages on a tmpfs that allows them, and an error where it does not.
d=$(mktemp -d)
mount -t tmpfs -o size=64m,huge=always gas-test "$d" || fail "cannot mount a huge=always tmpfs"
run env GAS_SEGMENT_DIR="$d" GAS_HUGEPAGES=on GAS_SEGMENT_SIZE=32m "$TOOL" --malloc 8m --touch --stats
expect 0 "on: transparent huge pages" "GAS_HUGEPAGES=on on a huge=always tmpfs"
kib=$(sed -n 's/.*pmd_mapped_kib \([0-9]*\).*/\1/p' "$out")
[ "${kib:-0}" -ge 4096 ] || fail "only ${kib:-0} KiB mapped with huge pages after touching 8 MiB"
echo "   ($kib KiB of the segment mapped with huge pages)"
umount "$d"
mount -t tmpfs -o size=64m gas-test "$d"
run env GAS_SEGMENT_DIR="$d" GAS_HUGEPAGES=on "$TOOL"
expect 2 "huge=never" "GAS_HUGEPAGES=on on a tmpfs without huge pages"
umount "$d"
rmdir "$d"

# A memory cgroup of 48 MiB (cgroup v1 or v2), if this machine lets us make one.
self=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)/\1/p' /proc/self/cgroup | head -1)
if [ -n "$self" ] && [ -d "/sys/fs/cgroup/memory$self" ]; then
    cg="/sys/fs/cgroup/memory${self%/}/gas-test-$$"; limit_file=memory.limit_in_bytes
else
    self=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
    cg="/sys/fs/cgroup${self%/}/gas-test-$$"; limit_file=memory.max
fi
if mkdir "$cg" 2>/dev/null && echo $((48 << 20)) >"$cg/$limit_file" 2>/dev/null; then
    run env GAS_PREFAULT=y bash -c "echo \$\$ > $cg/cgroup.procs && exec $GASRUN -n 1 $TOOL --malloc 96m"
    expect 3 "memory cgroup limit is 48.0 MiB" "GAS_PREFAULT=y: gas_malloc past a memory cgroup limit"
    run env GAS_PREFAULT=y bash -c "echo \$\$ > $cg/cgroup.procs && exec $GASRUN -n 1 $TOOL --malloc 8m --alloc 4m"
    expect 0 "mem_tool: OK" "GAS_PREFAULT=y: allocations within the cgroup limit"
else
    echo "skip: no memory cgroup can be made here"
    rmdir "$cg" 2>/dev/null
    cg=""
fi
echo "mem-backing: all passed"
