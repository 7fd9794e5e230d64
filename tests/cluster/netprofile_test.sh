#!/usr/bin/env bash
# netprofile_test.sh BUILD - the network profiles of netprofile.sh on two
# emulated hosts: a profile delays every packet at least by its one-way
# delay each way (the page round trip grows by at least 2 x 50 us under lan
# and 2 x 100 us under fe; a lower bound, which load cannot break), its rate
# and delay are in place on both hosts, and "off" leaves no rule, qdisc or
# reader behind.  Status 77 (skipped, with a message) without root,
# namespaces or iptables.
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/twohosts.sh"
twohosts_up netprofile_test
. "$D/env"
FAILED=0
fail() {
    echo "FAIL: $*"
    FAILED=1
}

rtt_us() { # the median page round trip h1 -> h2, in whole microseconds
    $NP "$D" rtt h1 h2 | tee -a "$TMP/log" | sed -n 's/.*median \([0-9]*\)\..*/\1/p'
}

base=$(rtt_us)
[ -n "$base" ] || fail "no round trip measured without a profile"
for prof in lan fe; do
    case $prof in lan) min=100 rate=1Gbit ;; fe) min=200 rate=100Mbit ;; esac
    $NP "$D" $prof >>"$TMP/log" 2>&1 || fail "$prof: netprofile.sh $prof failed"
    for h in h1 h2; do
        ns=CLUSTER_NS_$h
        ip netns exec "${!ns}" iptables -S OUTPUT | grep -q NFQUEUE ||
            fail "$prof: no NFQUEUE rule on $h"
        ip netns exec "${!ns}" tc qdisc show dev eth0 | grep -q "tbf.*rate $rate" ||
            fail "$prof: no tbf at $rate on $h's side"
        veth=CLUSTER_VETH_$h
        tc qdisc show dev "${!veth}" | grep -q "tbf.*rate $rate" ||
            fail "$prof: no tbf at $rate on the bridge's side of $h"
    done
    got=$(rtt_us)
    if [ -z "$got" ] || [ -z "$base" ]; then
        fail "$prof: no round trip measured"
    elif [ $((got - base)) -lt $min ]; then
        fail "$prof: round trip ${got} us, only $((got - base)) us more than without a profile (${base} us): at least $min us expected"
    else
        echo "$prof: page round trip ${got} us (without a profile ${base} us)"
    fi
done
readers=$(cat "$D"/netprofile/*.pid 2>/dev/null)
$NP "$D" off >>"$TMP/log" 2>&1 || fail "netprofile.sh off failed"
for h in h1 h2; do
    ns=CLUSTER_NS_$h
    ip netns exec "${!ns}" iptables -S OUTPUT | grep -q NFQUEUE && fail "off: NFQUEUE rule left on $h"
    ip netns exec "${!ns}" tc qdisc show dev eth0 | grep -q tbf && fail "off: tbf left on $h"
done
for pid in $readers; do # a zombie not yet reaped by init is gone
    st=$(cat "/proc/$pid/stat" 2>/dev/null) && st=${st##*) } && [ "${st%% *}" != Z ] &&
        fail "off: delay reader $pid still running"
done
grep -q "packets, 0 dropped" "$TMP/log" || fail "off: no reader reported its counts"
[ "$($NP "$D" show)" = none ] || fail "off: a profile is still shown"
[ $FAILED -eq 0 ] || { echo "--- log:"; cat "$TMP/log"; }
exit $FAILED
