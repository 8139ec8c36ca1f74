#!/usr/bin/env bash
# GAS_STATS_FILE and gas-info --stats: a 3-rank udp job writes one file per
# rank ("%r" replaced), each with a line per peer and its totals; gas-info
# --stats prints them as a table (a row per rank and peer with traffic in
# both directions, each rank's totals, the job's sums); over rdma (sim) the
# totals count upgraded peers; a file without counters, a missing one and no
# file at all are refused with a message.
. "$(dirname "$0")/lib-tmp.sh"
job() { timeout 60 "$BUILD/bin/gasrun" -n 3 --timeout 50 "$BUILD/tests/mr/test_barrier" >"$T/job" 2>&1 ||
            fail "job: $(tail -3 "$T/job")"; }

GAS_TRANSPORT=udp GAS_STATS_FILE="$T/st.%r.txt" job
for r in 0 1 2; do
    [ -s "$T/st.$r.txt" ] || fail "no file for rank $r"
    [ "$(grep -c "^gas-stats 1 rank=$r peer=[0-9]" "$T/st.$r.txt")" = 2 ] || fail "rank $r: not 2 peer lines"
    grep -q "^gas-stats 1 rank=$r peer=total " "$T/st.$r.txt" || fail "rank $r: no totals line"
done
"$BUILD/bin/gas-info" --stats "$T"/st.*.txt >"$T/table" || fail "gas-info --stats: $(tail -2 "$T/table")"
# rank, peer, path, route, then sent, sent KiB, recv, recv KiB, ...
awk '$2 ~ /^[0-9]+$/ && $3 == "udp" && $5 > 0 && $7 > 0' "$T/table" | wc -l | grep -qx 6 ||
    fail "not 6 udp peer rows with traffic both ways: $(cat "$T/table")"
[ "$(grep -c '^[0-9] *total' "$T/table")" = 3 ] || fail "not 3 totals rows"
grep -q '^job *total' "$T/table" || fail "no job row"
echo "ok: udp counters, a file per rank, the table"

GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_STATS_FILE="$T/rd" job
"$BUILD/bin/gas-info" --stats "$T"/rd.0 "$T"/rd.1 "$T"/rd.2 >"$T/rtable" || fail "gas-info --stats (rdma)"
# a barrier talks to ~log2(3) peers of each rank: every rank upgraded one at least
n=$(awk '$2 == "total" && $1 ~ /^[0-9]$/ && $NF >= 1' "$T/rtable" | wc -l)
[ "$n" = 3 ] || fail "rdma: $n ranks with an upgraded peer: $(cat "$T/rtable")"
grep -q ' rc ' "$T/rtable" || fail "rdma: no peer row on route rc"
echo "ok: rdma counters (upgraded peers, routes)"

echo "not counters" >"$T/other"
"$BUILD/bin/gas-info" --stats "$T/other" >/dev/null 2>"$T/err"; st=$?
[ "$st" = 1 ] && grep -q "has no gas-stats lines" "$T/err" || fail "a file without counters: status $st"
"$BUILD/bin/gas-info" --stats "$T/missing" >/dev/null 2>"$T/err"; st=$?
[ "$st" = 1 ] && grep -q "cannot read $T/missing" "$T/err" || fail "a missing file: status $st"
"$BUILD/bin/gas-info" --stats >/dev/null 2>"$T/err"; st=$?
[ "$st" = 2 ] && grep -q "needs the files" "$T/err" || fail "no file: status $st"
echo "ok: bad input refused"
