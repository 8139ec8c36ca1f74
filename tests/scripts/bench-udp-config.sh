#!/usr/bin/env bash
# gas-bench's raw UDP references take GAS_WAIT_SPIN and GAS_UDP_MTU from the
# library's configuration: a GAS_CONFIG_FILE value is seen, the syntax is the
# configuration's ("1 ms"), and a value gas_init refuses (bad syntax, outside
# config_ranges.h) is refused by gas-bench with the library's message.
. "$(dirname "$0")/lib-tmp.sh"
bench() { # env assignments... -> $T/out (stdout and stderr), RC
    env GAS_TRANSPORT=udp "$@" timeout 120 "$BUILD/bin/gasrun" -n 2 "$BUILD/bin/gas-bench" \
        --mode put-lat --max-size 1 --reps 1 --quick >"$T/out" 2>&1
    RC=$?
}
note() { grep -F 'an echo process beside rank 1' "$T/out"; }

printf 'GAS_UDP_MTU=1000\nGAS_WAIT_SPIN=2ms\n' >"$T/cfg"
bench GAS_CONFIG_FILE="$T/cfg"
[ "$RC" = 0 ] || fail "config file run exited $RC: $(tail -3 "$T/out")"
note | grep -qF 'stream datagrams of 972 B' || fail "GAS_UDP_MTU=1000 from the file not used: $(note)"
note | grep -qF '"spin" polls 2000 us (GAS_WAIT_SPIN)' || fail "GAS_WAIT_SPIN=2ms from the file not used: $(note)"
echo "ok: GAS_CONFIG_FILE values are used"

bench GAS_CONFIG_FILE="$T/cfg" GAS_WAIT_SPIN="1 ms"
[ "$RC" = 0 ] || fail "GAS_WAIT_SPIN='1 ms' run exited $RC: $(tail -3 "$T/out")"
note | grep -qF '"spin" polls 1000 us (GAS_WAIT_SPIN)' || fail "GAS_WAIT_SPIN='1 ms' not read as 1 ms: $(note)"
echo "ok: the environment's '1 ms' overrides the file, parsed as the library parses it"

for bad in "GAS_WAIT_SPIN=abc:GAS_WAIT_SPIN='abc' (from env): not a duration" \
           "GAS_WAIT_SPIN=5m:GAS_WAIT_SPIN='5m' (from env): ambiguous unit" \
           "GAS_UDP_MTU=100:GAS_UDP_MTU='100' (from env): outside 364..65535"; do
    bench "${bad%%:*}"
    [ "$RC" != 0 ] || fail "${bad%%:*}: gas-bench ran"
    grep -qF "gas_init: ${bad#*:}" "$T/out" || fail "${bad%%:*}: not refused as gas_init refuses it: $(tail -3 "$T/out")"
    echo "ok: ${bad%%:*} refused"
done
