# lib-tmp.sh - sourced first by the script tests that need only the basics
# (gas-bench output, the tuning table, the tools' options, make bench): runs
# from the repository root, BUILD (default build), a scratch directory $T
# removed on exit, and fail MESSAGE (prints "FAIL: MESSAGE", exits 1).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
