#!/usr/bin/env bash
# gasrun: programs that cannot run (127) and usage errors (2).
. "$(dirname "$0")/lib-gasrun.sh"

run_job -n 2 "no-such-program-$MARK"
expect_rc 127 "not in PATH"
expect_err "no-such-program-$MARK" "not in PATH"
run_job -n 2 "./no/such/$MARK"
expect_rc 127 "no such file"
expect_err "./no/such/$MARK" "no such file"
printf 'not a program\n' >"$TMPD/plain"
run_job -n 2 "$TMPD/plain"
expect_rc 127 "not executable"
expect_err "$TMPD/plain" "not executable"
run_job -n 2 "$TMPD"
expect_rc 127 "a directory"
# Executable but not a valid program: exec fails in the rank.
chmod +x "$TMPD/plain"
printf '\x7fELF garbage' >"$TMPD/plain"
run_job -n 2 "$TMPD/plain" "$MARK"
expect_rc 127 "exec failure"
check_clean "exec failure"
pass "missing programs -> 127"

run_job --bogus -n 2 true
expect_rc 2 "unknown option"
expect_err "unknown option '--bogus'" "unknown option"
run_job true
expect_rc 2 "no -n"
run_job -n 5000 true
expect_rc 2 "-n 5000"
run_job -n x true
expect_rc 2 "-n x"
run_job -n 2
expect_rc 2 "no program"
run_job -n 2 --timeout
expect_rc 2 "--timeout without value"
run_job --help
expect_rc 0 "--help"
grep -q "usage: gasrun" "$TMPD/out" || fail "--help: no usage"
# Options after the program belong to it.
run_job -n 1 sh -c 'echo "$@"' sh --bogus -n 3
expect_rc 0 "program options"
grep -qxF -- "--bogus -n 3" "$TMPD/out" || fail "program options were not passed on"
pass "usage errors -> 2"
