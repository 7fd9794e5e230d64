#!/usr/bin/env bash
# cluster_test.sh - one test on an emulated cluster (cluster.sh): 4 hosts
# h1..h4, network namespaces on a private bridge.
#
#   cluster_test.sh CASE NAME=PATH...
#
# NAME=PATH pairs give the programs (sdsmrun=..., counter=..., ...); each is
# available to the case as $P_NAME.  The cluster is made before the case and
# removed after it whatever happens (trap; a run killed by ctest's TIMEOUT is
# cleaned by the next cluster.sh up).  Status 77 (ctest SKIP) with a loud
# message where namespaces cannot be made.
set -u

CASE=$1
shift
for kv in "$@"; do
    declare "P_${kv%%=*}=${kv#*=}"
done
HERE=$(cd "$(dirname "$0")" && pwd)
CL="bash $HERE/cluster.sh"
EXPECT="bash $HERE/../mp/mp_expect.sh"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsm-cluster.XXXXXX")
D=$TMP/cluster
OUT=$TMP/out ERR=$TMP/err
TAG="sdsmcluster-$$-$RANDOM" # unique word on every command line of a case
FAILED=0 RC=0 MS=0
ulimit -c 0
unset SDSM_RSH SDSM_IFACE

cleanup() {
    $CL down "$D"
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

fail() {
    echo "FAIL [$CASE]: $*"
    FAILED=1
}

# run CMD...: status into RC, wall time into MS, output into OUT and ERR.
run() {
    local t0
    t0=$(date +%s%N)
    "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}
expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_out() { grep -qF -- "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr lacks '$1'"; }
show() { # show: what the last command said, when the case has failed
    echo "--- stdout:"
    cat "$OUT"
    echo "--- stderr:"
    cat "$ERR"
}

# A process left on a host: anything in its namespace but the sshd listeners.
expect_hosts_empty() {
    local h ns p left=""
    for h in $CLUSTER_HOSTS; do
        ns=CLUSTER_NS_$h
        for p in $(ip netns pids "${!ns}" 2>/dev/null); do
            grep -q "^sshd: .*\[listener\]" "/proc/$p/cmdline" 2>/dev/null && continue
            left="$left $h:$p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"
        done
    done
    [ -z "$left" ] || fail "processes left on the hosts:$left"
}

up() {
    $CL up "$D" 4
    local rc=$?
    if [ "$rc" = 77 ]; then
        echo "SKIP [$CASE]: no emulated cluster here (see the message above); this test did NOT run"
        exit 77
    fi
    [ "$rc" = 0 ] || { echo "FAIL [$CASE]: cluster.sh up failed ($rc)"; exit 1; }
    # shellcheck disable=SC1091
    . "$D/env"
}

# The harness itself, with plain commands: names, addresses, the wrapper's
# ssh conventions, traffic between hosts, cut and heal, hide, down, and the
# cleaning of a cluster whose owner was killed.
case_harness() {
    local h ip
    for h in $CLUSTER_HOSTS; do
        ip=CLUSTER_IP_$h
        run "$D/rsh" "$h" ip -4 -o addr show dev eth0
        expect_rc 0
        expect_out "inet ${!ip}/24"
    done
    # Words are joined and run by sh, in this directory, with this environment.
    (cd "$TMP" && FOO="a b" run "$D/rsh" -x -o BatchMode=yes h2 'echo "$FOO|$(pwd)|"' '"x  y"')
    # (run in a subshell: read the files it wrote)
    grep -qxF "a b|$TMP| x  y" "$OUT" || fail "rsh: wrong words, directory or environment: $(cat "$OUT")"
    run "$D/rsh" h3 'exit 7'
    expect_rc 7
    run "$D/rsh" nosuchhost true
    expect_rc 255
    expect_err "Could not resolve hostname nosuchhost"
    # TCP from h1 to h2, and from the root namespace (the launcher's side) to h4.
    "$D/rsh" h2 "exec python3 -c 'import socket,sys
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"$CLUSTER_IP_h2\", 5001)); s.listen(2)
for _ in range(2):
    c, a = s.accept(); print(a[0], c.recv(64).decode().strip(), flush=True); c.close()'" >"$TMP/server" 2>&1 &
    local srv=$!
    for _ in $(seq 50); do
        "$D/rsh" h1 "bash -c 'echo from-h1 >/dev/tcp/$CLUSTER_IP_h2/5001'" 2>/dev/null && break
        sleep 0.1
    done
    bash -c "echo from-root >/dev/tcp/$CLUSTER_IP_h2/5001" || fail "no TCP from the root namespace to h2"
    wait "$srv"
    grep -qx "$CLUSTER_IP_h1 from-h1" "$TMP/server" || fail "no TCP from h1 to h2: $(cat "$TMP/server")"
    grep -qx "$CLUSTER_HEAD_IP from-root" "$TMP/server" || fail "no TCP from the root namespace: $(cat "$TMP/server")"
    # The hosts cannot reach anything outside the cluster: no default route.
    run "$D/rsh" h1 ip route show default
    [ ! -s "$OUT" ] || fail "h1 has a default route: $(cat "$OUT")"
    # A cut host drops off: a connect to it goes unanswered, the wrapper
    # refuses it like ssh; healed, it answers again.
    $CL cut "$D" h3 || fail "cut failed"
    run "$D/rsh" h1 "timeout 2 bash -c 'exec 3<>/dev/tcp/$CLUSTER_IP_h3/9'"
    expect_rc 124
    run "$D/rsh" h3 true
    expect_rc 255
    expect_err "No route to host"
    $CL heal "$D" h3 || fail "heal failed"
    run "$D/rsh" h1 "timeout 5 bash -c 'exec 3<>/dev/tcp/$CLUSTER_IP_h3/9'"
    expect_err "Connection refused" # a live kernel answered
    run "$D/rsh" h3 true
    expect_rc 0
    # A directory hidden on h4 is empty there only.
    mkdir "$TMP/only-here" && touch "$TMP/only-here/prog"
    $CL hide "$D" h4 "$TMP/only-here" || fail "hide failed"
    run "$D/rsh" h4 ls "$TMP/only-here"
    [ "$RC" = 0 ] && [ ! -s "$OUT" ] || fail "hidden directory seen on h4: $(cat "$OUT")"
    run "$D/rsh" h3 ls "$TMP/only-here"
    expect_out prog
    [ -e "$TMP/only-here/prog" ] || fail "hide changed the root namespace"
    # down removes everything, processes on the hosts included.
    "$D/rsh" h2 "sleep 300 # $TAG" &
    sleep 0.3
    local st=$CLUSTER_STATE ns=$CLUSTER_NS_h2 br=$CLUSTER_BRIDGE
    $CL down "$D"
    wait
    ip netns list | grep -q "^$ns " && fail "namespace $ns left after down"
    ip link show "$br" >/dev/null 2>&1 && fail "bridge $br left after down"
    [ -e "$st" ] && fail "state $st left after down"
    pgrep -f "$TAG" >/dev/null && fail "a process on h2 survived down"
    # A run killed before its down: the next up removes what it left.
    local D2=$TMP/killed
    bash -c "$CL up $D2 2 && sleep 300 # $TAG" &
    local owner=$! i
    for i in $(seq 50); do [ -f "$D2/env" ] && break; sleep 0.1; done
    [ -f "$D2/env" ] || fail "the owner's cluster did not come up"
    local st2 ns2
    st2=$(. "$D2/env" && echo "$CLUSTER_STATE")
    ns2=$(. "$D2/env" && echo "$CLUSTER_NS_h2")
    "$D2/rsh" h1 "sleep 300 # $TAG" &
    sleep 0.3
    kill -KILL "$owner"
    wait "$owner" 2>/dev/null
    up # reaps the dead owner's cluster
    wait
    # (its subnet number may have gone to the new cluster: compare owners)
    [ "$(cat "$st2/dir" 2>/dev/null)" = "$D2" ] && fail "the killed run's cluster $st2 was not cleaned"
    ip netns list | grep -q "^$ns2 " && [ "$ns2" != "$CLUSTER_NS_h2" ] &&
        fail "the killed run's namespace $ns2 was not cleaned"
    pgrep -f "$TAG" >/dev/null && fail "a process of the killed run survived"
    [ "$FAILED" = 0 ] || show
}

if ! declare -F "case_$CASE" >/dev/null; then
    echo "cluster_test: unknown case $CASE"
    exit 2
fi
up
"case_$CASE"
if [ "$FAILED" -ne 0 ]; then
    exit 1
fi
echo "PASS [$CASE]"
