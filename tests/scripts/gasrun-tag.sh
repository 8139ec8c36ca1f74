#!/usr/bin/env bash
# gasrun: tagged output of 8 ranks writing concurrently in odd-sized pieces:
# every line whole, tagged with its rank, on the stream it was written to,
# in order; the unterminated last line is flushed.
. "$(dirname "$0")/lib-gasrun.sh"

N=8 LINES=3000
run_job -n $N "$CLIENT" lines $LINES "$MARK"
expect_rc 0 "lines"
check_clean "lines"

check_stream() { # file stream count
    awk -v n=$N -v want="$3" -v s="$2" '
    {
        if (!match($0, /^\[[0-9]+\] /)) { print "untagged line " NR ": " substr($0, 1, 80); bad = 1; next }
        r = substr($0, 2, RLENGTH - 3) + 0
        rest = substr($0, RLENGTH + 1)
        if (s == "out" && rest == "R" r " out tail-without-newline") { tail[r]++; next }
        if (rest !~ ("^R" r " " s " line [0-9]+ [a-z]*\\|end$")) {
            print "line " NR " mixed or mistagged: " substr($0, 1, 100); bad = 1; next
        }
        split(rest, f, " ")
        if (f[4] + 0 != next_i[r] + 0) { print "rank " r ": line " f[4] " out of order"; bad = 1 }
        next_i[r] = f[4] + 1
    }
    END {
        for (r = 0; r < n; r++) {
            if (next_i[r] + 0 != want) { print "rank " r ": " next_i[r] + 0 " lines, want " want; bad = 1 }
            if (s == "out" && tail[r] != 1) { print "rank " r ": tail line seen " tail[r] + 0 " times"; bad = 1 }
        }
        exit bad
    }' "$1" >"$TMPD/check" || fail "$2: $(head -n 5 "$TMPD/check")"
}
check_stream "$TMPD/out" out $LINES
check_stream "$TMPD/err" err $((LINES / 4))
pass "tagged output of $N ranks"

# Untagged (-n 1 default): bytes pass through unchanged, no newline added.
run_job -n 1 "$CLIENT" lines 10 "$MARK"
expect_rc 0 "untagged"
[ "$(tail -c 27 "$TMPD/out")" = "R0 out tail-without-newline" ] || fail "untagged: last line changed"
check_clean "untagged"
pass "untagged output"

# Lines at the 64 KiB cut: a line of exactly 64 KiB is one tagged line (its
# newline is not a second, empty one); one byte more is cut into two.
for len in 65535 65536 65537; do
    run_job -n 2 sh -c 'head -c "$1" /dev/zero | tr "\0" x; echo' sh "$len" "$MARK"
    expect_rc 0 "line of $len bytes"
    got=$(awk '{ print length($0) }' "$TMPD/out" | sort -n | uniq -c | awk '{ printf "%sx%s ", $1, $2 }')
    case $len in
        65537) want="2x5 2x65540 " ;;    # "[r] x" and "[r] " + 64 KiB
        *)     want="2x$((len + 4)) " ;;
    esac
    [ "$got" = "$want" ] || fail "line of $len bytes: line lengths (count x length) $got, want $want"
done
check_clean "64 KiB lines"
pass "lines of 64 KiB - 1, 64 KiB and 64 KiB + 1 bytes"
