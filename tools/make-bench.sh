#!/usr/bin/env bash
# make bench: the standard gas-bench set on this host, written to
# docs/performance.md (tables) and docs/perf/*.svg (plots).  Long (minutes);
# not part of make test.  The hand-written part of the page (targets, what
# was changed and why) is docs/performance-notes.md, copied in first.
#
#   BENCH_ONLY=LIST  run only these sections (comma-separated, in any order):
#                      shm      shm, 2 ranks: the standard set
#                      oversub  the standard set with 8 ranks
#                      coll     every collective algorithm and the tuned choice
#                               (gas-bench --compare) at 2, 4 and 8 ranks
#                      udp      udp on one host, GAS_PROGRESS=thread and poll
#                      veth     udp between two network namespaces over a veth
#                               limited to 1 Gbit/s, and with 1% loss (root)
#                      scale    gas-bench-scale, 2..64 ranks
#                    The page keeps the other sections of its previous version
#                    (each lies between <!-- bench:NAME --> markers).
#   BENCH_REPS=N     timed batches per point (default 7)
#   BENCH_QUICK=1    --quick runs: checks the pipeline, measures nothing
#   BENCH_SCALE="2 4 8 16 32 64"   rank counts of the scale table
#   BENCH_OUT=FILE   the page (default docs/performance.md); plots go to perf/
#                    beside it, raw output to $BUILD/bench (BENCH_RAW)
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
GASRUN="$BUILD/bin/gasrun --no-tag-output --timeout 900"
BENCH=$BUILD/bin/gas-bench
REPS=${BENCH_REPS:-7}
SCALE=${BENCH_SCALE:-"2 4 8 16 32 64"}
OUT=${BENCH_OUT:-docs/performance.md}
PLOTS=$(dirname "$OUT")/perf
RAW=${BENCH_RAW:-$BUILD/bench}
SECTIONS="shm oversub coll udp veth scale"
ONLY=${BENCH_ONLY:-}
mkdir -p "$PLOTS" "$RAW"
common=(--reps "$REPS")
[ "${BENCH_QUICK:-0}" = 1 ] && common+=(--quick)
STD=put-lat,put-call,get-lat,putsig-lat,put-bw,get-bw,amo-lat,amo-rate,barrier
UDP_MODES=put-lat,put-call,get-lat,put-bw,get-bw,amo-lat
for s in ${ONLY//,/ }; do
    [[ " $SECTIONS " == *" $s "* ]] || { echo "make bench: unknown section '$s' in BENCH_ONLY (sections: $SECTIONS)" >&2; exit 2; }
done

FRAG=/dev/null   # the fragment of the section being written
section() { printf '\n## %s\n\n' "$1" >>"$FRAG"; }
note() { printf '%s\n' "$*" >>"$FRAG"; }
wanted() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

# run NAME RANKS [VAR=value...] -- gas-bench args: ranks started by gasrun on
# this host, or by the command in the array VIA (then RANKS is ignored: VIA
# names them).  The table goes to $RAW, md/json beside it, the plot to $PLOTS.
VIA=()
run() {
    local name=$1 n=$2; shift 2
    local envs=() launch=($GASRUN -n "$n")
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    [ ${#VIA[@]} -gt 0 ] && launch=("${VIA[@]}")
    echo "make bench: $name" >&2
    if env "${envs[@]}" "${launch[@]}" "$BENCH" "${common[@]}" "$@" --md "$RAW/$name.md" \
           --json="$RAW/$name.json" --plot "$PLOTS/$name.svg" >"$RAW/$name.txt" 2>&1; then
        cat "$RAW/$name.md" >>"$FRAG"
        note ""
        note "![$name]($(basename "$PLOTS")/$name.svg)"
    else
        note "(failed: see $RAW/$name.txt)"
        tail -5 "$RAW/$name.txt" >&2
    fi
}

# "field N of the md row of MODE at SIZE" (the rows are | mode | size | median | ... | ratio |)
md_field() { # FILE MODE SIZE N
    awk -F' *\\| *' -v m="$2" -v s="$3" -v n="$4" '$2 == m && $3 == s { print $(n + 1); exit }' "$1"
}

# One line under a udp table: the two figures the udp targets are about.
udp_summary() { # NAME
    local f=$RAW/$1.md lat r ref bw bref
    [ -f "$f" ] || return 0
    lat=$(md_field "$f" put-lat 8 3) r=$(md_field "$f" put-lat 8 8) ref=$(md_field "$f" put-lat 8 7)
    bref=$(md_field "$f" put-bw 64K 7)
    bw=$(awk -F' *\\| *' '$2 == "put-bw" && $3 ~ /^[0-9]+[KM]$/ && ($3 ~ /M$/ || $3 + 0 >= 64) {
            v = $9; sub(/%/, "", v); if (lo == "" || v + 0 < lo) lo = v + 0; if (v + 0 > hi) hi = v + 0 }
         END { if (lo != "") printf "%.1f..%.1f%%", lo, hi }' "$f")
    note ""
    note "Summary: put-lat 8 B ${lat:-?} us = ${r:-?} the fastest raw round trip (${ref:-?} us);"
    note "put-bw 64 KiB and up: ${bw:-?} of the fastest raw stream (${bref:-?} MB/s)."
}

have_udp() { "$BUILD/bin/gas-info" 2>/dev/null | grep -q "^transports compiled in:.*\budp\b"; }
have_netns() {
    [ "$(id -u)" = 0 ] && ip netns add "gas-bench-probe-$$" 2>/dev/null &&
        ip netns del "gas-bench-probe-$$"
}

sec_shm() {
    section "shm, 2 ranks: the standard set"
    run shm-2 2 GAS_TRANSPORT=shm -- --mode "$STD"
}

sec_oversub() {
    section "Oversubscription: the standard set with 8 ranks on $(nproc) CPUs"
    note "Ranks 2..7 only take part in barriers.  Target: a barrier at 8 ranks under 1 ms median."
    note ""
    run shm-8 8 GAS_TRANSPORT=shm -- --mode "$STD" --max-size 1m
}

sec_coll() {
    section "Collectives: every algorithm and the tuned choice, 2, 4 and 8 ranks over shm"
    note "gas-bench --compare: per collective and size (8 B .. 1 MiB, x8 steps) every algorithm"
    note "that can run and auto (the tuning table) are timed in turn, so a machine that changes"
    note "speed affects all alike.  Target: the tuned choice never more than 10% slower than"
    note "the best single algorithm (chosen/best <= 1.10x).  The plots are us per call."
    note "Ranks are bound to CPUs (gasrun --bind core), so every run places them alike; see"
    note "docs/collectives.md, \"Placement\"."
    for n in 2 4 8; do
        note ""
        note "### $n ranks"
        note ""
        VIA=($GASRUN -n "$n" --bind core)
        run coll-$n "$n" GAS_TRANSPORT=shm -- --compare
        VIA=()
    done
}

sec_udp() {
    section "udp, 2 ranks on one host (loopback)"
    if ! have_udp; then
        note "Skipped: this build has no udp transport (gas-info lists none)."
        return
    fi
    note "References, measured in the same run between the addresses the ranks' udp transport is"
    note "bound to (tools/bench_udp.c): a raw UDP ping-pong of 64 B with both ends sleeping in the"
    note "kernel, polling GAS_WAIT_SPIN first, or busy-polling; the fastest of the three is the"
    note "latency rows' reference.  A raw sendmmsg stream of the transport's datagram size, the"
    note "receiver polling GAS_WAIT_SPIN or busy-polling, and the same datagrams sent as UDP GSO"
    note "messages (as the transport sends runs of them; left out where the kernel refuses GSO);"
    note "the fastest is the bandwidth rows' reference.  Between ranks of one host the transport's"
    note "datagrams are 65507 B (GAS_UDP_MTU=auto: the loopback MTU; docs/udp.md), and so are the"
    note "streams'."
    note "Both are measured again at the end (\"Raw UDP at the end of the run\")."
    note "Targets: put-lat 8 B within 1.5x of the raw round trip; put-bw >= 70% of the raw stream."
    for p in thread poll; do
        note ""
        note "### GAS_PROGRESS=$p"
        note ""
        run udp-2-$p 2 GAS_TRANSPORT=udp GAS_PROGRESS=$p -- --mode "$UDP_MODES" --max-size 4m
        udp_summary udp-2-$p
    done
}

sec_veth() {
    section "udp between two network namespaces over a 1 Gbit/s veth"
    if ! have_udp; then
        note "Skipped: this build has no udp transport (gas-info lists none)."
        return
    elif ! have_netns; then
        note "Skipped: needs root and network namespaces (ip netns)."
        return
    fi
    note "tests/scripts/netns-run.sh: rank 0 and rank 1 in two namespaces joined by a veth pair,"
    note "tbf rate 1gbit on what each sends; the raw UDP references run over the same veth"
    note "(rank 0's address to an echo process beside rank 1).  Target: put-bw >= 95% of the"
    note "raw stream.  The loss run drops 1% of what each namespace sends (nftables)."
    note "Batches of ~100 ms (not 10): tbf lets a burst of 256 KB through at once, which"
    note "would inflate short batches."
    local ns=(tests/scripts/netns-run.sh --rate 1gbit --limit 1800)
    local tail=(-- -n 2 --no-tag-output --timeout 1700) long=(--batch-ms 100)
    [ "${BENCH_QUICK:-0}" = 1 ] && long=()
    for p in thread poll; do
        note ""
        note "### GAS_PROGRESS=$p"
        note ""
        VIA=("${ns[@]}" "${tail[@]}")
        run veth-$p 2 GAS_TRANSPORT=udp GAS_PROGRESS=$p -- --mode "$UDP_MODES" --max-size 4m "${long[@]}"
        udp_summary veth-$p
    done
    note ""
    note "### GAS_PROGRESS=thread, GAS_UDP_LEASE=200us: small operations"
    note ""
    note "Each namespace holds one rank, so the launcher's count gives each the socket lease"
    note "of a host whose progress thread has a core of its own (200 us); but both \"hosts\""
    note "share $(nproc) CPUs, and gas_init counts the ranks with the same kernel boot and"
    note "affinity mask across namespaces, so the automatic lease above is 2 ms wherever four"
    note "threads outnumber the CPUs (docs/udp.md, \"Thread-mode wake-ups\").  This run forces"
    note "200 us: what the automatic rule gave here before it counted across namespaces."
    note ""
    VIA=("${ns[@]}" "${tail[@]}")
    run veth-thread-lease200us 2 GAS_TRANSPORT=udp GAS_PROGRESS=thread GAS_UDP_LEASE=200us -- \
        --mode put-lat,get-lat,amo-lat --max-size 64 "${long[@]}"
    note ""
    note "### 1% loss (GAS_PROGRESS=thread)"
    note ""
    if command -v nft >/dev/null 2>&1; then
        VIA=("${ns[@]}" --loss 1 "${tail[@]}")
        run veth-loss1 2 GAS_TRANSPORT=udp -- --mode put-lat,put-bw --max-size 4m "${long[@]}"
        udp_summary veth-loss1
    else
        note "Skipped: needs nft (nftables)."
    fi
    VIA=()
}

sec_scale() {
    section "Scale: one host, 2..64 ranks"
    note "gas-bench-scale: gas_init time (max over ranks), resident memory per rank after init"
    note "and after one 8-byte get from every other rank (first contact builds the route),"
    note "and the per-peer state from the code.  The route table is one pointer per rank,"
    note "allocated at init; a transport's per-peer record is allocated on first contact."
    note ""
    local hdr=--header n
    for n in $SCALE; do
        echo "make bench: scale ($n ranks)" >&2
        if $GASRUN -n "$n" "$BUILD/bin/gas-bench-scale" $hdr >"$RAW/scale-$n.txt" 2>&1; then
            cat "$RAW/scale-$n.txt" >>"$FRAG"
            hdr=
        else
            note "| $n | failed: see $RAW/scale-$n.txt | | | | | |"
        fi
    done
}

# The lines of the old page between <!-- bench:NAME --> and <!-- /bench:NAME -->.
old_block() { # NAME
    [ -f "$OUT" ] && awk -v b="<!-- bench:$1 -->" -v e="<!-- /bench:$1 -->" \
        '$0 == e { on = 0 } on { print } $0 == b { on = 1 }' "$OUT"
}

for s in $SECTIONS; do
    wanted "$s" || continue
    FRAG=$RAW/section-$s.md
    : >"$FRAG"
    "sec_$s"
done

# The page: the stamp, the notes, then every section, new or kept.
ver=$(sed -n 's/^#define GAS_VERSION_STRING "\(.*\)"/\1/p' include/gas.h)
when="$(date '+%Y-%m-%d %H:%M %z')"
{
    echo "# Performance"
    echo
    echo "<!-- bench:stamp -->"
    if [ -z "$ONLY" ] || [ -z "$(old_block stamp)" ]; then
        echo "Generated by \`make bench\` (tools/make-bench.sh) on $(hostname), $(nproc) CPUs,"
        echo "$when; libgas $ver."
        echo "Every figure is a gas-bench median over timed batches with its p10/p90 and the ratio"
        echo "to a reference measured in the same run; compare ratios, not absolute numbers, and"
        echo "mind the \"machine changed\" notes (a shared 2-vCPU VM)."
    else
        old_block stamp | grep -vF "(BENCH_ONLY=$ONLY)"
    fi
    [ -n "$ONLY" ] && echo "Sections re-measured on $when, libgas $ver (BENCH_ONLY=$ONLY)."
    echo "<!-- /bench:stamp -->"
    echo
    [ -f docs/performance-notes.md ] && cat docs/performance-notes.md
    for s in $SECTIONS; do
        if wanted "$s"; then
            body=$(cat "$RAW/section-$s.md")
        else
            body=$(old_block "$s")
        fi
        [ -n "$body" ] || continue
        echo
        echo "<!-- bench:$s -->"
        printf '%s\n' "$body"
        echo "<!-- /bench:$s -->"
    done
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "make bench: wrote $OUT and $PLOTS/*.svg (raw output in $RAW)" >&2
