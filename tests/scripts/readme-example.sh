#!/usr/bin/env bash
# The README's complete program must be exactly examples/count.c (which the suite runs).
set -eu
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk '/^```c$/ && !done {on=1; next} on && /^```$/ {on=0; done=1} on' README.md > "$tmp"
if ! diff -u examples/count.c "$tmp"; then
    echo "README.md's program differs from examples/count.c" >&2
    exit 1
fi
echo "examples/count.c matches the README"
