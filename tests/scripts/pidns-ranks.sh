#!/usr/bin/env bash
# pidns-ranks.sh - ranks on one host, in one network namespace, but each in a PID
# namespace of its own (containers with the host's network, e.g. hostNetwork
# pods): a pid another rank publishes means another process there, so they are
# not node-mates (runtime/node.c folds the PID namespace into the node id) and
# reach each other over udp.  Before, they took each other for node-mates and
# mapped /proc/PID/fd/N of their own namespace: the job failed ("does not carry
# its header"), or, where the pid and fd matched a rank of another job, wrote
# into that job's memory.  Two such jobs run at once (every rank is pid 1 in
# its namespace, segment fd alike), and neither may report an error: a failed
# attach that fell through to udp counts as a failure.
source "$(dirname "$0")/lib-tmp.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (PID namespaces)"; exit 77; }
unshare -pf --mount-proc true 2>/dev/null || { echo "skipped: unshare -p unavailable"; exit 77; }
cat >"$T/pidns-launcher.sh" <<'L'
#!/bin/sh
# HOST CMD...: start the rank in a PID (and mount, for its own /proc) namespace of its own
shift
GASRUN_TEST_HOST=pidns exec unshare -pf --mount-proc "$@"
L
chmod +x "$T/pidns-launcher.sh"
run() { # OUT: 4 ranks, two "hosts" of two, each rank in its own PID namespace
    GAS_ERRORS=return timeout -k 5 100 "$BUILD/bin/gasrun" -n 4 --hosts pa:2,pb:2 \
        --launcher "$T/pidns-launcher.sh" --rendezvous 127.0.0.1 --timeout 90 \
        "$BUILD/tests/mr/test_put_get" >"$1" 2>&1
}
run "$T/a" & a=$!
run "$T/b" & b=$!
wait $a; ra=$?
wait $b; rb=$?
cat "$T/a" "$T/b"
[ $ra = 0 ] && [ $rb = 0 ] || fail "a job with ranks in PID namespaces of their own failed ($ra, $rb)"
for f in "$T/a" "$T/b"; do   # its own part only: the others over udp, not mapped
    grep -q "rank 0 loads 1 of 4 parts directly" "$f" || fail "rank 0 mapped a peer's segment"
    ! grep -q "ERROR" "$f" || fail "errors on the way (a failed attach falls through to udp)"
done
echo "PASS: ranks in PID namespaces of their own reached each other over udp (two jobs at once)"
