#!/usr/bin/env bash
# Run every test listed in tests/manifest; print one line per test and finish with
# "N passed, M failed[, K skipped]"; exit non-zero when any test failed.
#
# Manifest lines:  name  ranks  timeout  needs  command...
#   ranks   "-" runs the command as is; "2,3,8" runs it through gasrun once per count
#   timeout seconds for one run (the whole run is killed past it)
#   needs   "-" or a comma list of: root, netns, nft, ibverbs  (missing -> skipped)
# Select with TESTS=regex (matched against "name" or "name/nN").
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
GASRUN=$BUILD/bin/gasrun
LOGDIR=$BUILD/test-logs
mkdir -p "$LOGDIR"
export GAS_ERRORS=${GAS_ERRORS:-return}
passed=0 failed=0 skipped=0
failures=()

have() {
    case "$1" in
        root)    [ "$(id -u)" = 0 ] ;;
        netns)   [ "$(id -u)" = 0 ] && ip netns add gas-probe-$$ 2>/dev/null && ip netns del gas-probe-$$ ;;
        nft)     command -v nft >/dev/null 2>&1 && [ "$(id -u)" = 0 ] ;;
        ibverbs) ls /sys/class/infiniband/* >/dev/null 2>&1 ;;
        *)       return 1 ;;
    esac
}

# The test namespaces (gas-*) that exist now, one per line (none when not root).
netns_now() { [ "$(id -u)" = 0 ] && ip netns list 2>/dev/null | awk '$1 ~ /^gas-/ {print $1}'; }

# After a test killed for its time: the namespaces it made and could not remove
# (a script killed past its trap leaves them, and the ranks in them), gone.
netns_sweep() { # namespaces that existed before the test, the test's log
    local ns
    for ns in $(netns_now); do
        grep -qxF "$ns" <<<"$1" && continue
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$ns" 2>/dev/null && echo "(removed namespace $ns, left by the killed test)" >>"$2"
    done
}

run_one() { # label timeout command...
    local label=$1 tmo=$2; shift 2
    local log="$LOGDIR/${label//\//_}.log" start end rc before
    before=$(netns_now)
    start=$(date +%s.%N)
    timeout -k 5 "$tmo" "$@" >"$log" 2>&1 </dev/null
    rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && netns_sweep "$before" "$log"
    end=$(date +%s.%N)
    local secs; secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
    if [ $rc -eq 0 ]; then
        passed=$((passed+1)); printf 'PASS  %-40s %6ss\n' "$label" "$secs"
    elif [ $rc -eq 77 ]; then
        skipped=$((skipped+1)); printf 'SKIP  %-40s (%s)\n' "$label" "$(tail -n1 "$log")"
    else
        failed=$((failed+1)); failures+=("$label")
        [ $rc -eq 124 ] && echo "(timed out after ${tmo}s)" >>"$log"
        printf 'FAIL  %-40s %6ss  rc=%d  log: %s\n' "$label" "$secs" "$rc" "$log"
        tail -n 15 "$log" | sed 's/^/      | /'
    fi
}

while read -r name ranks tmo needs cmd; do
    case "$name" in ''|\#*) continue ;; esac
    missing=""
    if [ "$needs" != "-" ]; then
        IFS=, read -ra reqs <<<"$needs"
        for r in "${reqs[@]}"; do have "$r" || missing="$missing $r"; done
    fi
    if [ "$ranks" = "-" ]; then
        labels=("$name")
    else
        IFS=, read -ra counts <<<"$ranks"; labels=()
        for n in "${counts[@]}"; do labels+=("$name/n$n"); done
    fi
    for label in "${labels[@]}"; do
        if [ -n "${TESTS:-}" ] && ! [[ "$label" =~ $TESTS ]]; then continue; fi
        if [ -n "$missing" ]; then
            skipped=$((skipped+1)); printf 'SKIP  %-40s (needs%s)\n' "$label" "$missing"; continue
        fi
        if [ "$ranks" = "-" ]; then
            # shellcheck disable=SC2086
            run_one "$label" "$tmo" bash -c "$cmd"
        else
            n=${label##*/n}
            # shellcheck disable=SC2086
            run_one "$label" "$tmo" $GASRUN -n "$n" --timeout "$tmo" $cmd
        fi
    done
done < tests/manifest

# Nothing may outlive the suite: no rank processes, no shared-memory files.
leftover=$(ls /dev/shm 2>/dev/null | grep -c '^gas-' || true)
if [ "$leftover" != 0 ]; then
    failed=$((failed+1)); failures+=("no-leftover-shm")
    echo "FAIL  no-leftover-shm: $(ls /dev/shm | grep '^gas-' | head -5 | tr '\n' ' ')"
fi

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
line="$passed passed, $failed failed"
[ $skipped -gt 0 ] && line="$line, $skipped skipped"
echo "$line"
[ $failed -eq 0 ]
