#!/usr/bin/env bash
# netns-run.sh [--rate RATE [--queue BYTES]] [--loss PCT] [--dup PCT] [--limit S] [--] GASRUN-ARGS...
#
# Runs one gasrun job over two network namespaces standing for two hosts, for
# tests that need ranks on different "nodes".  It creates the namespaces
# (tests/scripts/lib-netns.sh: one veth pair, interface gas0 in each, 10.213.0.1
# and 10.213.0.2), optionally limits the rate (tbf) of what each sends (with
# --queue, a shallow tbf queue of BYTES, e.g. 128kb, beyond which it drops), or
# drops / duplicates PCT% of it (nftables), then runs, in the first one,
#
#   gasrun --hosts A,B --launcher 'ip netns exec' --rendezvous 10.213.0.1 GASRUN-ARGS...
#
# (so `-n 4` places ranks 0-1 in A and 2-3 in B; add --ppn K to change that),
# with GAS_UDP_IFACE=gas0 unless it is set, and removes the namespaces and
# anything left in them.  The whole run is bounded by --limit S (default 300).
# Exit status: gasrun's; 1 when gasrun exited 0 but left a process in a
# namespace; 77 when not root.  Run from the repository root (BUILD=build).
set -u
HERE=$(dirname "$0")
BUILD=${BUILD:-build}
GASRUN=${GASRUN:-$BUILD/bin/gasrun}
rate="" queue="" loss="" dup="" limit=300
while [ $# -gt 0 ]; do
    case "$1" in
        --rate)  rate=$2; shift 2 ;;
        --queue) queue=$2; shift 2 ;;
        --loss)  loss=$2; shift 2 ;;
        --dup)   dup=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --)      shift; break ;;
        -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *)       break ;;
    esac
done
[ $# -gt 0 ] || { echo "netns-run.sh: no gasrun arguments (see --help)" >&2; exit 2; }
[ -x "$GASRUN" ] || { echo "netns-run.sh: $GASRUN is not built" >&2; exit 2; }
. "$HERE/lib-netns.sh"

netns_setup 2
for ns in "${NS[@]}"; do
    [ -n "$rate" ] && netns_rate "$ns" "$rate" "$queue"
    [ -n "$loss" ] && netns_loss "$ns" "$loss"
    [ -n "$dup" ] && netns_dup "$ns" "$dup"
done
export GAS_UDP_IFACE=${GAS_UDP_IFACE:-$NS_DEV}
echo "netns-run: ${NS[0]}=${NS_ADDR[0]} ${NS[1]}=${NS_ADDR[1]}${rate:+ rate $rate}${queue:+ queue $queue}${loss:+ loss $loss%}${dup:+ dup $dup%}" >&2
t0=$SECONDS
timeout -k 5 "$limit" ip netns exec "${NS[0]}" "$GASRUN" --hosts "${NS[0]},${NS[1]}" \
    --launcher 'ip netns exec' --rendezvous "${NS_ADDR[0]}" "$@"
rc=$?
if [ $rc = 124 ]; then
    if [ $((SECONDS - t0)) -ge "$limit" ]; then
        echo "netns-run: gasrun did not finish within $limit s" >&2
    else   # gasrun's own --timeout (it exits 124 too)
        echo "netns-run: gasrun exited 124 after $((SECONDS - t0)) s (its --timeout)" >&2
    fi
fi
left=$(netns_pids | paste -sd, -)
if [ -n "$left" ]; then
    echo "netns-run: gasrun left processes in the namespaces: $left" >&2
    ps -o pid,ppid,stat,args -p "$left" >&2
    [ $rc = 0 ] && rc=1
fi
exit $rc
