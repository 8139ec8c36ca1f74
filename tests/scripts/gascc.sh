#!/usr/bin/env bash
# gascc and the installed tree.  Builds examples/histogram.c with the build
# tree's gascc (shared, compile-then-link, static), then runs `make install`
# into a temporary PREFIX and builds it again with the installed gascc and
# with pkg-config.  Every program runs through gasrun -n 2 and must verify.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
src=examples/histogram.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL   # the nested make below is not part of ours

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
# run GASRUN PROG: two ranks, a small histogram that must verify
run2() {
    "$1" -n 2 --timeout 60 "$2" 20000 100 >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$2 failed"; }
    grep -q 'histogram verified: 40000 keys across 2 ranks' "$tmp/out" || { cat "$tmp/out"; fail "$2 did not verify"; }
}
# has TEXT WORDS / hasnt TEXT WORDS: WORDS (blank-separated) occur in TEXT or not.
# (No `cmd | grep -q` under pipefail: grep's early exit can fail the pipeline.)
words() { printf '%s' "$1" | tr -s '[:space:]' ' '; }
has() { case " $(words "$1") " in *" $2 "*) ;; *) fail "expected '$2' in: $1" ;; esac; }
hasnt() { case " $(words "$1") " in *" $2 "*) fail "did not expect '$2' in: $1" ;; esac; }

gascc=$BUILD/bin/gascc
gasrun=$BUILD/bin/gasrun
inc=$(cd include && pwd)
lib=$(cd "$BUILD/lib" && pwd)

step "build tree: --showme"
line=$("$gascc" --showme -c x.c)
has "$line" "-I$inc"; hasnt "$line" "-lgas"
line=$("$gascc" -show -O2 x.c -o x)
has "$line" "-I$inc"; has "$line" "-L$lib"; has "$line" "-lgas"; has "$line" "-Wl,-rpath,$lib"
line=$("$gascc" --showme -static-libgas x.o -o x)
has "$line" "$lib/libgas.a"; hasnt "$line" "-lgas"
line=$(GASCC_CC="ccache gcc" "$gascc" --showme -c x.c)
has "$line" "ccache gcc -I$inc"

step "build tree: compile and link in one step (shared libgas)"
"$gascc" -O2 -Wall -o "$tmp/hist" "$src" '-DSPACED="two words"'
has "$(ldd "$tmp/hist")" "libgas.so => $lib/libgas.so"
run2 "$gasrun" "$tmp/hist"

step "build tree: compile, then link"
"$gascc" -O2 -c -o "$tmp/hist.o" "$src"
"$gascc" -o "$tmp/hist2" "$tmp/hist.o"
run2 "$gasrun" "$tmp/hist2"

step "build tree: -static-libgas"
"$gascc" -O2 -static-libgas -o "$tmp/hist-static" "$src"
hasnt "$(ldd "$tmp/hist-static")" "libgas.so"
run2 "$gasrun" "$tmp/hist-static"

prefix=$tmp/prefix
step "make install PREFIX=$prefix"
make -s --no-print-directory install PREFIX="$prefix" BUILD="$BUILD" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "make install"; }
for f in bin/gascc bin/gasrun include/gas.h lib/libgas.so lib/libgas.a lib/pkgconfig/gas.pc; do
    [ -e "$prefix/$f" ] || fail "make install did not install $f"
done

step "installed gascc"
line=$("$prefix/bin/gascc" --showme x.c)
has "$line" "-I$prefix/include"; has "$line" "-L$prefix/lib"; has "$line" "-Wl,-rpath,$prefix/lib"
"$prefix/bin/gascc" -O2 -o "$tmp/hist-inst" "$src"
has "$(ldd "$tmp/hist-inst")" "libgas.so => $prefix/lib/libgas.so"
run2 "$prefix/bin/gasrun" "$tmp/hist-inst"
# through a symbolic link, as from a PATH directory
ln -s "$prefix/bin/gascc" "$tmp/gascc-link"
has "$("$tmp/gascc-link" --showme -c x.c)" "-I$prefix/include"

step "pkg-config"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
flags=$(pkg-config --cflags --libs gas) || fail "pkg-config --cflags --libs gas"
echo "pkg-config: $flags"
has "$flags" "-I$prefix/include"; has "$flags" "-L$prefix/lib"; has "$flags" "-lgas"
# shellcheck disable=SC2046
cc -O2 $(pkg-config --cflags gas) -o "$tmp/hist-pc" "$src" $(pkg-config --libs gas)
LD_LIBRARY_PATH=$prefix/lib run2 "$prefix/bin/gasrun" "$tmp/hist-pc"

echo "gascc: all checks passed"
