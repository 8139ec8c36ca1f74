#!/usr/bin/env bash
# Build the library, gasrun and the tests with AddressSanitizer + UndefinedBehaviorSanitizer
# into build/asan, then run the unit tests and a set of multi-rank tests under them (shm,
# udp, and rdma on the sim device); then the udp and rdma transports' threaded paths under
# ThreadSanitizer (build/tsan).
# Any sanitizer report fails the run (halt_on_error, and UBSan is made fatal).
set -u
cd "$(dirname "$0")/../.."
B=build/asan
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if ! echo 'int main(void){return 0;}' | gcc -x c - $SAN -o /dev/null 2>/dev/null; then
    echo "the compiler has no ASan/UBSan runtime"; exit 77
fi
make --no-print-directory -s BUILD=$B OPT="-O1 -g" EXTRA_CFLAGS="$SAN" \
    $B/bin/gasrun $B/bin/gas-bench $B/lib/libgas.a tests examples >/dev/null || { echo "sanitizer build failed"; exit 1; }
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export GAS_ERRORS=return GAS_LOG_LEVEL=fatal
fail=0
failed=""
run() { # ranks binary
    local n=$1; shift
    if [ "$n" = - ]; then timeout 120 "$@"; else timeout 120 $B/bin/gasrun -n "$n" --timeout 110 "$@"; fi
    local rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        echo "FAILED under sanitizers (rc=$rc): $*"
        fail=1
        failed="$failed
  rc=$rc: ${GAS_TRANSPORT:+GAS_TRANSPORT=$GAS_TRANSPORT }$*"
    fi
}
for t in $B/tests/unit/test_*; do run - "$t"; done
for t in test_put_get test_sizes test_atomics test_order test_bad_input test_layout \
         test_alloc_threads test_alloc_model test_alloc_big test_exhaust test_placement \
         test_arena_used test_finalize_race test_wait_set; do
    [ -x $B/tests/mr/$t ] && run 3 $B/tests/mr/$t
done
run - $B/tests/mr/test_arena_hooks
run 2 $B/tests/mr/test_arena_auto
run 3 $B/tests/mr/test_coll_table
TEST_CYCLES=300 run 3 $B/tests/mr/test_team_stale
run 3 $B/tests/mr/test_coll --quick
GAS_TEST_NODE_SIZE=2 run 4 $B/tests/mr/test_coll --quick
# The udp transport: its threads, channels and wire parsing under the sanitizers.
for t in test_put_get test_atomics test_order test_udp_stray test_udp_oneside test_udp_threads; do
    [ -x $B/tests/mr/$t ] && GAS_TRANSPORT=udp run 2 $B/tests/mr/$t
done
[ -x $B/tests/mr/test_udp_faults ] && GAS_TRANSPORT=udp GAS_TEST_OPS=8000 GAS_TEST_UDP_DROP=5% \
    GAS_TEST_UDP_DUP=2% GAS_TEST_UDP_REORDER=5% GAS_TEST_UDP_CORRUPT=1% run 4 $B/tests/mr/test_udp_faults
GAS_TRANSPORT=udp GAS_PROGRESS=poll run 3 $B/tests/mr/test_put_get
# The rdma transport on the software device: upgrade, DQPLB, fallback with redo, threads.
for t in test_put_get test_rdma test_rdma_oneside test_rdma_redo; do
    [ -x $B/tests/mr/$t ] && GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim run 3 $B/tests/mr/$t
done
GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_TEST_RDMA_QP_ERROR=60 GAS_TEST_RDMA_DELAY=100% \
    run 2 $B/tests/mr/test_rdma_redo
GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_RDMA_ATOMICS=cpu GAS_RDMA_UPGRADE_AFTER=300 \
    GAS_TEST_RDMA_QP_ERROR=900 GAS_TEST_OPS=4000 run 2 $B/tests/mr/test_rdma_threads
run 4 $B/examples/histogram 20000
run 2 $B/bin/gas-bench --mode all --max-size 64k --reps 2 --quick
# ThreadSanitizer over the udp transport (a progress thread, application threads
# that also receive, per-channel locks), the rdma one (route switches under several
# threads, the receive CQ served by the progress thread), gas_alloc from several
# threads (arenas made on demand) and collectives progressed from other threads'
# waits while teams are split and destroyed: its own build tree, a few runs.  The sanitizer
# reaches the links through CFLAGS.  A compiler with TSan whose build fails is a
# failure, not a skip (the build once broke silently).
T=build/tsan
TSAN="-fsanitize=thread"
if echo 'int main(void){return 0;}' | gcc -x c - $TSAN -o /dev/null 2>/dev/null; then
    if make --no-print-directory -s BUILD=$T OPT="-O1 -g" EXTRA_CFLAGS="$TSAN" \
           $T/bin/gasrun $T/tests/unit/test_udp_chan \
           $T/tests/mr/test_atomics $T/tests/mr/test_udp_faults $T/tests/mr/test_udp_oneside \
           $T/tests/mr/test_udp_threads $T/tests/mr/test_rdma_threads $T/tests/mr/test_rdma_oneside \
           $T/tests/mr/test_alloc_threads $T/tests/mr/test_arena_auto \
           $T/tests/mr/test_arena_used $T/tests/mr/test_finalize_race \
           $T/tests/mr/test_coll_stress >$T.build.log 2>&1; then
        export TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0
        B=$T
        run - $T/tests/unit/test_udp_chan
        GAS_TRANSPORT=udp run 2 $T/tests/mr/test_atomics
        GAS_TRANSPORT=udp run 2 $T/tests/mr/test_udp_oneside
        GAS_TRANSPORT=udp GAS_TEST_OPS=8000 run 2 $T/tests/mr/test_udp_threads
        GAS_TRANSPORT=udp GAS_PROGRESS=poll GAS_TEST_OPS=8000 run 2 $T/tests/mr/test_udp_threads
        GAS_TRANSPORT=udp GAS_TEST_OPS=4000 GAS_TEST_UDP_DROP=5% GAS_TEST_UDP_DUP=2% \
            GAS_TEST_UDP_REORDER=5% GAS_TEST_UDP_CORRUPT=1% run 4 $T/tests/mr/test_udp_faults
        GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim run 3 $T/tests/mr/test_rdma_oneside
        GAS_TRANSPORT=rdma GAS_RDMA_DEVICE=sim GAS_RDMA_ATOMICS=cpu GAS_RDMA_UPGRADE_AFTER=300 \
            GAS_TEST_RDMA_QP_ERROR=900 GAS_TEST_RDMA_DELAY=5% GAS_TEST_OPS=4000 \
            run 2 $T/tests/mr/test_rdma_threads
        run 2 $T/tests/mr/test_alloc_threads
        run 2 $T/tests/mr/test_arena_auto
        GAS_ARENAS=2 run 3 $T/tests/mr/test_alloc_threads
        # arena_used's per-thread counts, and gas_finalize against other threads' calls.
        GAS_SEGMENT_SIZE=256m run 2 $T/tests/mr/test_arena_used
        GAS_SEGMENT_SIZE=64m run - $T/tests/mr/test_finalize_race
        # Collectives driven from other threads' waits while teams come and go.
        TEST_ITERS=200 run 3 $T/tests/mr/test_coll_stress
        GAS_TRANSPORT=udp TEST_ITERS=200 run 2 $T/tests/mr/test_coll_stress
    else
        tail -20 $T.build.log
        echo "FAILED: the ThreadSanitizer build (log: $T.build.log)"
        fail=1
    fi
else
    echo "no ThreadSanitizer runtime: the thread checks were not run"
fi
# The runs that failed, last, where a log's tail shows them.
if [ $fail -eq 0 ]; then echo "sanitizer runs clean"; else echo "runs that failed:$failed"; fi
exit $fail
