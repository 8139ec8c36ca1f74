#!/usr/bin/env bash
# gasrun: successful jobs of 1, 3 and 8 ranks (boot protocol, environment,
# inherited fds), stdin of rank 0, the tag options.
. "$(dirname "$0")/lib-gasrun.sh"

for n in 1 3 8; do
    run_job -n "$n" "$CLIENT" ok "$MARK"
    expect_rc 0 "n=$n"
    check_clean "n=$n"
    [ "$(wc -l <"$TMPD/out")" = "$n" ] || fail "n=$n: expected $n output lines"
    for ((r = 0; r < n; r++)); do
        if [ "$n" = 1 ]; then want="rank 0 of 1 ok"; else want="[$r] rank $r of $n ok"; fi
        grep -qxF -- "$want" "$TMPD/out" || fail "n=$n: no line '$want'"
    done
    [ ! -s "$TMPD/err" ] || fail "n=$n: unexpected stderr"
    pass "$n ranks"
done

run_job -n 3 --no-tag-output "$CLIENT" ok "$MARK"
expect_rc 0 "--no-tag-output"
grep -qxF "rank 2 of 3 ok" "$TMPD/out" || fail "--no-tag-output: untagged line missing"
check_clean "--no-tag-output"
run_job -n 1 --tag-output "$CLIENT" ok "$MARK"
expect_rc 0 "--tag-output"
grep -qxF "[0] rank 0 of 1 ok" "$TMPD/out" || fail "--tag-output: tagged line missing"
check_clean "--tag-output"
pass "tag options"

# Rank 0 reads gasrun's stdin; the others have /dev/null.
head -c 100000 /dev/zero | timeout 20 "$GASRUN" -n 3 "$CLIENT" stdin "$MARK" >"$TMPD/out" 2>"$TMPD/err"
RC=$?
expect_rc 0 "stdin"
grep -qxF "[0] rank 0 read 100000 bytes of stdin" "$TMPD/out" || fail "stdin: rank 0 did not get it"
check_clean "stdin"
pass "stdin"
