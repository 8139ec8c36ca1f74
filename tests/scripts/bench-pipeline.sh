#!/usr/bin/env bash
# bench-pipeline.sh: the udp and veth sections of make bench
# (tools/make-bench.sh) in quick mode, into a page of its own (never
# docs/performance.md): gas-bench over udp on this host and between two
# network namespaces joined by a 1 Gbit/s veth, each with GAS_PROGRESS=thread
# and poll, and over the veth with 1% loss.  Checks that the page has the
# sections and every run's table, that every RMA row has its ratio to a raw
# UDP reference, that the veth runs measured those references over the veth
# (rank 0's namespace address), that the plots are SVG and that no namespace
# is left.  No timing assertion: --quick measures nothing.  Needs root,
# network namespaces and nft (the manifest says so).
. "$(dirname "$0")/lib-tmp.sh"
"$BUILD/bin/gas-info" | grep '^transports compiled in:' | grep -qw udp ||
    { echo "no udp transport compiled in"; exit 77; }

BENCH_QUICK=1 BENCH_REPS=2 BENCH_ONLY=udp,veth BENCH_OUT="$T/performance.md" BENCH_RAW="$T/raw" \
    bash tools/make-bench.sh 2>"$T/err" || fail "make-bench.sh: $(tail -3 "$T/err")"
page=$T/performance.md
grep -q '^<!-- bench:veth -->$' "$page" && grep -q '^## udp between two network namespaces' "$page" ||
    fail "no veth section in the page"
grep -q '^<!-- bench:udp -->$' "$page" && grep -q '^## udp, 2 ranks on one host' "$page" ||
    fail "no udp section in the page"
grep -q '^<!-- bench:shm -->$' "$page" && fail "a section that BENCH_ONLY did not name"
grep -q '(failed: see' "$page" && fail "a run failed: $(grep -h 'failed' "$page"; tail -5 "$T"/raw/*.txt)"
for run in udp-2-thread udp-2-poll veth-thread veth-poll veth-loss1; do
    md=$T/raw/$run.md
    [ -s "$md" ] || fail "$run: no table"
    grep -qF "$(head -1 "$md")" "$page" || fail "$run: its table is not in the page"
    # the references crossed the veth: rank 0's address in the first namespace
    want='rank 0 at [0-9.]* -> an echo process beside rank 1 at [0-9.]*:'
    [[ $run == veth-* ]] && want='rank 0 at 10\.213\.0\.1 -> an echo process beside rank 1 at 10\.213\.0\.2:'
    grep -q "$want" "$T/raw/$run.txt" || fail "$run: the raw UDP references did not take the ranks' path"
    # every put row: a ratio to a raw UDP reference
    bad=$(awk -F' *\\| *' '$2 ~ /^(put|get)-/ && ($8 !~ /^udp-/ || $9 !~ /^[0-9.]+(x|%)$/)' "$md" | head -1)
    [ -z "$bad" ] || fail "$run: a row without its udp ratio: $bad"
    n=$(awk -F' *\\| *' '$2 == "put-lat" || $2 == "put-bw"' "$md" | wc -l)
    [ "$n" -ge 2 ] || fail "$run: $n put rows"
    svg=$T/perf/$run.svg
    if command -v xmllint >/dev/null; then
        xmllint --noout "$svg" || fail "$run: the plot is not well-formed XML"
    else
        head -2 "$svg" | grep -q '<svg ' || fail "$run: the plot is not an svg document"
    fi
    echo "ok: $run ($n put rows)"
done
grep -q '^Summary: put-lat 8 B [0-9.]* us = [0-9.]*x ' "$page" || fail "no summary line"
# the namespaces netns-run.sh named (other tests may have theirs meanwhile)
ours=$(sed -n 's/^netns-run: \(gas-t[0-9]*\)-a=.*/\1/p' "$T"/raw/veth-*.txt)
[ -n "$ours" ] || fail "netns-run.sh did not say which namespaces it made"
for p in $ours; do
    ip netns list | grep -q "^$p-" && fail "network namespace left: $(ip netns list | grep "^$p-")"
done
echo "ok: the page, the summaries, no namespace left"
