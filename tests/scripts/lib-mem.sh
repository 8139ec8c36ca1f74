# lib-mem.sh - sourced by tests/scripts/mem-*.sh (run from the repo root):
# run a command under a time bound with its output in $out, then check it.
BUILD=${BUILD:-build}
TOOL=$BUILD/tests/mr/mem_tool
GASRUN=$BUILD/bin/gasrun
out=$(mktemp)

fail() { echo "FAIL: $*"; sed 's/^/  | /' "$out" | tail -6; exit 1; }

run() { timeout 60 "$@" >"$out" 2>&1; RC=$?; }

expect() { # rc text what
    [ "$RC" = "$1" ] || fail "$3: exit status $RC, expected $1"
    grep -qF -- "$2" "$out" || fail "$3: output lacks '$2'"
    echo "ok: $3"
}
