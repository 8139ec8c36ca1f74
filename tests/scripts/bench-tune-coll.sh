#!/usr/bin/env bash
# gas-bench --tune FILE --coll LIST replaces only the rows of the listed
# collectives for the measured rank count, node shape and kind of CPUs (own
# or shared, as the job has them; the rows carry it): every other line of
# FILE stays, in its place (other collectives' rows for 2 ranks, and rows
# without a cpus field or for the other kind, included).
# The new rows go last under their own heading; a second run drops the first
# run's heading with its rows.  No timing assertion: the choices of a --quick
# run mean nothing.
. "$(dirname "$0")/lib-tmp.sh"
tune() {
    timeout 60 "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench" --tune "$T/my.conf" \
        --coll allreduce,gather --quick --reps 1 --batch-ms 0.2 >"$T/out" 2>&1 ||
        fail "gas-bench --tune: $(tail -3 "$T/out")"
}
heading='^# measured by gas-bench --tune on 2 ranks \((own|shared) CPUs; .*: allreduce,gather$'
cp configs/coll-tuning.conf "$T/my.conf"
for kind in own shared; do   # rows of the other kind stay
    printf 'allreduce 2 1 0 ring %s\ngather 2 1 0 linear %s\n' $kind $kind >>"$T/my.conf"
done
cp "$T/my.conf" "$T/orig.conf"

for round in 1 2; do
    tune
    kind=$(grep -Eo "$heading" "$T/my.conf" | sed -E 's/.*\((own|shared) CPUs.*/\1/')
    replaced="^(allreduce|gather) +2 +1 +[^ ]+ +[^ ]+ +$kind *\$"
    [ "$round" = 1 ] && { grep -Eq "$replaced" "$T/orig.conf" || fail "no $kind 2-rank allreduce row to replace"; }
    grep -Eq '^(barrier|scatter|allreduce) +2 +1 +[^ ]+ +[^ ]+ *$' "$T/orig.conf" || fail "configs/coll-tuning.conf has no 2-rank rows without a cpus field"
    # everything but the replaced rows, unchanged and in order, then the new heading
    grep -Ev "$replaced" "$T/orig.conf" >"$T/want"
    at=$(grep -En "$heading" "$T/my.conf" | head -1 | cut -d: -f1)
    [ -n "$at" ] || fail "round $round: no heading of this run"
    head -n $((at - 1)) "$T/my.conf" >"$T/kept"
    diff -u "$T/want" "$T/kept" >"$T/diff" || fail "round $round: other lines changed: $(head -20 "$T/diff")"
    [ "$(grep -Ec "$heading" "$T/my.conf")" = 1 ] || fail "round $round: not one heading of this run"
    tail -n +$((at + 1)) "$T/my.conf" >"$T/new"
    grep -Evq "$replaced" "$T/new" && fail "round $round: rows other than allreduce/gather were written: $(cat "$T/new")"
    for c in allreduce gather; do
        grep -Eq "^$c +2 +1 +0 +[^ ]+ +$kind\$" "$T/new" || fail "round $round: no $c row from 0 bytes for $kind CPUs"
    done
    echo "ok: round $round ($kind CPUs) kept the other $(wc -l <"$T/kept") lines"
done

# A FILE that gas_init would refuse (its rows would be kept and the result
# refused too) is named with its bad line before anything is measured, and
# left as it was.
printf 'allreduce 4 1 0 ring\nallreduce 2 1 0 no_such_algorithm\n' >"$T/bad.conf"
cp "$T/bad.conf" "$T/bad.orig"
rc=0
timeout 60 "$BUILD/bin/gasrun" -n 2 --no-tag-output "$BUILD/bin/gas-bench" --tune "$T/bad.conf" \
    --coll allreduce --quick --reps 1 --batch-ms 0.2 >"$T/out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "a broken --tune FILE: exit $rc, want 2: $(tail -3 "$T/out")"
grep -q "bad.conf, line 2: .*no_such_algorithm" "$T/out" || fail "no message naming line 2: $(cat "$T/out")"
grep -q "allreduce .* B " "$T/out" && fail "measured despite the broken FILE: $(head -5 "$T/out")"
cmp -s "$T/bad.conf" "$T/bad.orig" || fail "the broken FILE was changed"
echo "ok: a broken FILE is refused before the sweep ($(grep -o 'line 2: .*' "$T/out" | head -c 100))"
