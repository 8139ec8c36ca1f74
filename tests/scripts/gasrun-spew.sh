#!/usr/bin/env bash
# gasrun: a rank writing 5 MB without a newline neither blocks the job nor
# grows memory: the line is cut into tagged pieces.
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 3 "$CLIENT" spew "$MARK"
expect_rc 0 "spew"
expect_faster 10000 "spew"
check_clean "spew"
bytes=$(wc -c <"$TMPD/out")
[ "$bytes" -ge $((5 * 1024 * 1024)) ] || fail "spew: only $bytes bytes of output"
grep -qxF "[0] spew done" "$TMPD/out" || fail "spew: last line missing"
bad=$(grep -cv '^\[[0-2]\] ' "$TMPD/out")
[ "$bad" = 0 ] || fail "spew: $bad untagged lines"
long=$(awk 'length($0) > 65540' "$TMPD/out" | wc -l)
[ "$long" = 0 ] || fail "spew: $long lines longer than 64 KiB"
for r in 0 1 2; do grep -qxF "[$r] rank $r of 3 ok" "$TMPD/out" || fail "spew: rank $r did not finish"; done
pass "spew: $bytes bytes in ${MS} ms"
