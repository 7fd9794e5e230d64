#!/usr/bin/env bash
# lossy_test.sh BUILD - jobs across two emulated hosts that drop 5 % of the
# packets they send (netprofile.sh lan --loss 5).  Every start-up must
# succeed (a lost SYN or handshake ACK is retried by sdsm, not left to the
# kernel's 1 s timers), and programs that check their data must give their
# answers under each way a lost segment can be recovered: the loss probes
# and the 5 ms retransmission floor (the default), the floor alone
# (SDSM_LOSS_PROBE=0), and the kernel's own timers (SDSM_LOSS_PROBE=0
# SDSM_RTO_MIN=0).  The default run must have sent loss probes (SDSM_STATS),
# which shows they run where packets are lost.  No timing is checked here:
# bench/lossy measures the time against lossless runs.  Status 77 (skipped,
# with a message) without root, namespaces or iptables.
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/twohosts.sh"
twohosts_up lossy_test
$NP "$D" lan --loss 5 >"$TMP/np.log" 2>&1 || { cat "$TMP/np.log"; echo "FAIL: netprofile.sh lan --loss 5"; exit 1; }
. "$D/env"
export SDSM_IFACE=$CLUSTER_SUBNET
RUN="$BUILD/tools/sdsmrun/sdsmrun -n 4 --hosts h1:2,h2:2 --rsh $D/rsh --timeout 120"
FAILED=0
fail() {
    echo "FAIL: $*"
    FAILED=1
}

for i in 1 2 3 4 5 6 7 8; do
    $RUN "$BUILD/bench/sdsm_empty" >"$TMP/empty.log" 2>&1 ||
        { cat "$TMP/empty.log"; fail "start-up $i of an empty job"; }
done

# job NAME PROGRAM [VAR=VALUE...]: PROGRAM (and its arguments in ARGS) must
# exit 0 and print PASSED; its statistics line is kept in $TMP/NAME.log.
job() {
    local name=$1 prog=$2
    shift 2
    local xs=()
    for kv in "$@"; do xs+=(-x "$kv"); done
    if ! SDSM_STATS=json $RUN "${xs[@]}" $prog >"$TMP/$name.log" 2>&1; then
        tail -20 "$TMP/$name.log"
        fail "$name: exit status"
    elif ! grep -q "PASSED" "$TMP/$name.log"; then
        tail -20 "$TMP/$name.log"
        fail "$name: no PASSED line"
    fi
}

for conf in default noprobe kernel; do
    case $conf in
    default) set -- ;;
    noprobe) set -- SDSM_LOSS_PROBE=0 ;;
    kernel) set -- SDSM_LOSS_PROBE=0 SDSM_RTO_MIN=0 ;;
    esac
    job "multiwriter_$conf" "$BUILD/tests/mp/mp_multiwriter" "$@"
    job "laplace_$conf" "$BUILD/apps/laplace/laplace_sdsm --size small" "$@"
    [ $conf = kernel ] || job "cg_$conf" "$BUILD/apps/cg/cg_sdsm --size small" "$@"
done

probes=$(python3 - "$TMP/cg_default.log" "$TMP/laplace_default.log" <<'PY'
import json, sys
n = 0
for path in sys.argv[1:]:
    for line in open(path, errors="replace"):
        if line.startswith('{"format":"sdsm-stats"'):
            n += sum(json.loads(line)["counters"].get("loss_probes", [0]))
print(n)
PY
)
echo "loss probes sent by the default runs of cg and laplace: $probes"
[ "${probes:-0}" -gt 0 ] || fail "no loss probe sent with 5 % of the packets lost"
noprobes=$(grep -h '"format":"sdsm-stats"' "$TMP/cg_noprobe.log" | grep -o '"loss_probes":\[[0-9,]*\]' | tr -dc '1-9')
[ -z "$noprobes" ] || fail "SDSM_LOSS_PROBE=0 still sent loss probes"
[ $FAILED -eq 0 ] && echo "PASS"
exit $FAILED
