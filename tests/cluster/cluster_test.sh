#!/usr/bin/env bash
# cluster_test.sh - one test on an emulated cluster (cluster.sh): 4 hosts
# h1..h4, network namespaces on a private bridge.
#
#   cluster_test.sh CASE NAME=PATH...
#
# NAME=PATH pairs give the programs (sdsmrun=..., counter=..., ...); each is
# available to the case as $P_NAME.  The cluster is made before the case and
# removed after it whatever happens (trap; a run killed by ctest's TIMEOUT is
# cleaned by the next cluster.sh up, or by the cluster_reap test).  Status 77 (ctest SKIP) with a loud
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
TAG="sdsmcluster-$$-$RANDOM" # marks a case's processes (command line or CLUSTER_JOB_TAG)
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
# A wrong status shows that command's output at once (a later command's
# output, shown at the end, would hide why this one failed).
expect_rc() { [ "$RC" -eq "$1" ] || { fail "exit status $RC, expected $1"; show; }; }
expect_out() { grep -qF -- "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr lacks '$1'"; }
show() { # show: what the last command said, when the case has failed
    echo "--- stdout:"
    cat "$OUT"
    echo "--- stderr:"
    cat "$ERR"
}

# A process left on a host: anything in its namespace but sshd's own.
expect_hosts_empty() {
    local h ns p left=""
    for h in $CLUSTER_HOSTS; do
        ns=CLUSTER_NS_$h
        for p in $(ip netns pids "${!ns}" 2>/dev/null); do
            # sshd's own processes: its listener, and a session whose client
            # vanished with a cut link, which sshd ends after its ClientAlive
            # probes (3 s, later under load); the job's processes are counted
            # by their tag (job_pids) besides.
            grep -q "^sshd: " "/proc/$p/cmdline" 2>/dev/null && continue
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
        # Each host has its own name (Open MPI keys its session directories
        # in the shared /tmp by it: the same name made daemons collide).
        run "$D/rsh" "${!ip}" hostname
        [ "$(cat "$OUT")" = "$h" ] || fail "$h's host name is '$(cat "$OUT")'"
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
    # cpus: every host on CPUs of its own, in turn when there are more hosts
    # than CPUs; off: every CPU again.  Hosts hI and hJ share a CPU exactly
    # when I - J is a multiple of the machine's CPUs.
    local ncpu i j
    local -a on
    ncpu=$(nproc)
    $CL cpus "$D" 1 || fail "cpus 1 failed"
    for i in 1 2 3 4; do
        run "$D/rsh" "h$i" "nproc; sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status"
        [ "$(head -1 "$OUT")" = 1 ] || fail "cpus 1: h$i may run on $(head -1 "$OUT") CPUs"
        on[i]=$(tail -1 "$OUT")
        for j in $(seq 1 $((i - 1))); do
            if [ $(((i - j) % ncpu)) = 0 ]; then
                [ "${on[i]}" = "${on[j]}" ] || fail "cpus 1: h$j on CPU ${on[j]}, h$i on ${on[i]} ($ncpu CPUs)"
            else
                [ "${on[i]}" != "${on[j]}" ] || fail "cpus 1: h$j and h$i share CPU ${on[i]} ($ncpu CPUs)"
            fi
        done
    done
    $CL cpus "$D" off || fail "cpus off failed"
    run "$D/rsh" h2 nproc
    [ "$(cat "$OUT")" = "$ncpu" ] || fail "cpus off: h2 may run on $(cat "$OUT") of $ncpu CPUs"
    run $CL cpus "$D" $((ncpu + 1))
    expect_rc 1
    expect_err "cpus: N must be 1..$ncpu"
    # Clusters made at once get subnets of their own.
    $CL up "$TMP/c2" 1 & $CL up "$TMP/c3" 1 & wait
    local ids
    ids=$( (. "$TMP/c2/env" && echo "$CLUSTER_ID") && (. "$TMP/c3/env" && echo "$CLUSTER_ID") &&
        echo "$CLUSTER_ID")
    ids=$(echo "$ids" | sort -u | wc -l)
    [ "$ids" = 3 ] || fail "three clusters at once do not have three subnets"
    $CL down "$TMP/c2"
    $CL down "$TMP/c3"
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
    # (not by its namespaces' names: another test running at once may have
    # made a cluster with that number since)
    pgrep -f "$TAG" >/dev/null && fail "a process of the killed run survived the reaping"
    [ "$FAILED" = 0 ] || show
}

# ---- sdsm jobs on 4 hosts x 2 ranks ----------------------------------------

HOSTS=h1:2,h2:2,h3:2,h4:2
FAILED_RE="FAILED|sdsmrun: stopping the job|: sdsm_abort\(|: fatal: "

# link_bytes: "host:bytes ..." through each host's link so far (both ways).
link_bytes() {
    local h v
    for h in $CLUSTER_HOSTS; do
        v=CLUSTER_VETH_$h
        echo "$h:$(($(cat "/sys/class/net/${!v}/statistics/rx_bytes") + $(cat "/sys/class/net/${!v}/statistics/tx_bytes")))"
    done
}
# expect_traffic BEFORE MIN: every host's link carried at least MIN bytes
# since BEFORE (link_bytes): the ranks really talked across the network.
expect_traffic() {
    local b a h
    for b in $1; do
        h=${b%%:*}
        a=$(link_bytes | grep "^$h:")
        [ $((${a#*:} - ${b#*:})) -ge "$2" ] || fail "only $((${a#*:} - ${b#*:})) bytes through $h's link, expected >= $2"
    done
}

# job PROTOCOL OK-REGEX PROG ARGS...: PROG on 4 hosts x 2 ranks through the
# wrapper rsh; it must verify, end well, and leave nothing on any host.
job() {
    local proto=$1 ok=$2 before
    shift 2
    before=$(link_bytes)
    run $EXPECT --status 0 --expect "$ok" --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "$P_sdsmrun" -n 8 --hosts $HOSTS --rsh "$D/rsh" --protocol "$proto" --timeout 30 "$@"
    expect_rc 0
    expect_traffic "$before" 4096
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# job_<prog>_<protocol>: the mp suite's programs (rank placement left to the
# defaults: the launcher offers all its addresses, each agent picks its own).
for proto in hlrc update ibec; do
    eval "case_counter_$proto() { job $proto '^OK counter\$' \"\$P_counter\" 200; }"
    eval "case_stencil_$proto() { job $proto '^OK stencil\$' \"\$P_stencil\" 64 1024 20; }"
    eval "case_multiwriter_$proto() { job $proto '^OK multiwriter\$' \"\$P_multiwriter\"; }"
    eval "case_prodcons_$proto() { job $proto '^OK prodcons\$' \"\$P_prodcons\" 40; }"
    # The applications at small size, listening on the bridge's network as a
    # user would choose it (SDSM_IFACE, by network and by interface name).
    eval "case_laplace_$proto() { SDSM_IFACE=\$CLUSTER_SUBNET job $proto '^PASSED' \"\$P_laplace\" --size small; }"
    eval "case_sor_$proto() { SDSM_IFACE=\$CLUSTER_SUBNET job $proto '^PASSED' \"\$P_sor\" --size small; }"
    eval "case_tsp_$proto() { SDSM_IFACE=\$CLUSTER_BRIDGE,eth0 job $proto '^PASSED' \"\$P_tsp\" --size small; }"
    eval "case_cg_$proto() { SDSM_IFACE=\$CLUSTER_BRIDGE,eth0 job $proto '^PASSED' \"\$P_cg\" --size small; }"
done

# The ranks of a host meet their host's node of the barrier in shared memory
# by default (SDSM_BARRIER_SHM=1): the cases above.  Over loopback too.
case_counter_hlrc_loopback() { job hlrc '^OK counter$' -x SDSM_BARRIER_SHM=0 "$P_counter" 200; }
case_stencil_update_loopback() { job update '^OK stencil$' -x SDSM_BARRIER_SHM=0 "$P_stencil" 64 1024 20; }
case_multiwriter_ibec_loopback() { job ibec '^OK multiwriter$' -x SDSM_BARRIER_SHM=0 "$P_multiwriter"; }

# An OpenMP program built by sdsmcc, unchanged: the team is every thread of
# every rank, across the hosts.
case_omp_laplace_hlrc() { SDSM_IFACE=$CLUSTER_SUBNET job hlrc '^PASSED' "$P_omplaplace" --size small; }
case_omp_laplace_update() { SDSM_IFACE=$CLUSTER_SUBNET job update '^PASSED' "$P_omplaplace" --size small; }
case_omp_laplace_threads() {
    local before
    before=$(link_bytes)
    run $EXPECT --status 0 --expect '^PASSED' --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "$P_sdsmrun" -n 4 --threads 2 --hosts h1,h2,h3,h4 --rsh "$D/rsh" --timeout 30 "$P_omplaplace" --size small
    expect_rc 0
    expect_traffic "$before" 4096
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# Same-host zero-copy (SDSM_ZEROCOPY=auto): the two ranks of a host read
# each other's pages from memory, pages from other hosts come over TCP
# (the statistics' totals: pages read zero-copy and FETCH replies both
# non-zero).
case_zcopy() {
    local before
    before=$(link_bytes)
    run $EXPECT --status 0 --expect '^OK stencil$' --reject "$FAILED_RE" \
        --expect '^pages read zero-copy( +[0-9]+)* +[1-9][0-9]*$' \
        --expect '^msgs FETCH_(REP|RUN)( +[0-9]+)* +[1-9][0-9]*$' --max-seconds 60 --no-leftovers -- \
        "$P_sdsmrun" -n 8 --hosts $HOSTS --rsh "$D/rsh" --stats --timeout 30 "$P_stencil" 64 1024 20
    expect_rc 0
    expect_traffic "$before" 4096
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# ---- the ssh path ---------------------------------------------------------

# Real ssh to an sshd in each host, with a key made for the test: the agents
# and ranks run where ssh put them, -x carries the environment (ssh itself
# forwards none), a job verifies, and a host cut off fails the start.
# An sshd in every host; without one here the case is skipped (77).
sshd_or_skip() {
    $CL sshd "$D"
    local rc=$?
    if [ "$rc" = 77 ]; then
        echo "SKIP [$CASE]: no sshd here (see the message above); this test did NOT run"
        exit 77
    fi
    [ "$rc" = 0 ] || { fail "cluster.sh sshd failed ($rc)"; return 1; }
}

case_ssh() {
    # ssh passes no environment: a sanitizer build's options go by -x.
    local SANX=() v
    for v in TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
        [ -n "${!v:-}" ] && SANX+=(-x "$v")
    done
    sshd_or_skip || return
    local SSH="ssh -F $D/ssh_config" h ip before
    run $SSH h2 'hostname -I; echo "$SSH_CONNECTION"'
    expect_rc 0
    expect_out "$CLUSTER_IP_h2"
    expect_out "$CLUSTER_HEAD_IP" # the client was the root namespace, through the bridge
    run "$P_sdsmrun" "${SANX[@]}" -n 8 --hosts $HOSTS --rsh "$SSH" --timeout 30 -x FOO='b a r' \
        sh -c 'echo "rank $SDSM_RANK on $SDSM_HOST at $(hostname -I | tr -d " ") with $FOO"'
    expect_rc 0
    for h in h1:0 h1:1 h2:2 h2:3 h3:4 h3:5 h4:6 h4:7; do
        ip=CLUSTER_IP_${h%:*}
        grep -qx "rank ${h#*:} on ${h%:*} at ${!ip} with b a r" "$OUT" ||
            fail "rank ${h#*:} did not run on ${h%:*} with FOO (ssh -x)"
    done
    before=$(link_bytes)
    run $EXPECT --status 0 --expect '^OK stencil$' --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "$P_sdsmrun" "${SANX[@]}" -n 8 --hosts $HOSTS --rsh "$SSH" --timeout 30 -x MP_EXPECT_TAG \
        "$P_stencil" 64 1024 20
    expect_rc 0
    expect_traffic "$before" 4096
    SDSM_IFACE=$CLUSTER_SUBNET run $EXPECT --status 0 --expect '^PASSED' --reject "$FAILED_RE" \
        --max-seconds 60 --no-leftovers -- \
        "$P_sdsmrun" "${SANX[@]}" -n 8 --hosts $HOSTS --rsh "$SSH" --protocol ibec --timeout 30 -x MP_EXPECT_TAG \
        "$P_laplace" --size small
    expect_rc 0
    # An unreachable host: ssh's own error, then sdsmrun's naming the host.
    $CL cut "$D" h3
    SSH="$SSH -o ConnectTimeout=2"
    run "$P_sdsmrun" "${SANX[@]}" -n 8 --hosts $HOSTS --rsh "$SSH" --timeout 30 "$P_counter" 200
    [ "$RC" -ne 0 ] || fail "exit status 0 with h3 cut off"
    expect_err "ssh: connect to host $CLUSTER_IP_h3 port 22"
    expect_err "sdsmrun: host h3: the remote shell '$SSH' failed before the agent started"
    [ "$MS" -lt 15000 ] || fail "took $MS ms to give up on h3"
    sleep 0.3 # sshd's session processes go once their client has
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# ---- failures across hosts ------------------------------------------------

# fail_start OPTIONS... -- SDSMRUN-ARGS...: a job that must fail before it
# runs (mp_expect options first), quickly and leaving nothing anywhere.
fail_start() {
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    run $EXPECT --reject "^OK " --max-seconds 10 --no-leftovers "${opts[@]}" -- \
        "$P_sdsmrun" -n 8 --timeout 30 "$@"
    expect_rc 0 # mp_expect's verdict
    expect_hosts_empty
}

case_fail_unknown_host() {
    fail_start --status 1 --expect "Could not resolve hostname nosuch" \
        --expect "sdsmrun: host nosuch: the remote shell '$D/rsh' failed before the agent started" -- \
        --hosts h1:2,h2:2,nosuch:2,h4:2 --rsh "$D/rsh" "$P_counter" 200
    [ "$FAILED" = 0 ] || show
}

case_fail_rsh() {
    # A remote shell that cannot run, and one whose host is cut off.
    fail_start --nonzero --expect "sdsmrun: host h[1-4]: cannot run the remote shell '/nonexistent/rsh'" -- \
        --hosts $HOSTS --rsh /nonexistent/rsh "$P_counter" 200
    $CL cut "$D" h2
    fail_start --status 1 --expect "No route to host" \
        --expect "sdsmrun: host h2: the remote shell '$D/rsh' failed before the agent started: it exited with status 255" -- \
        --hosts $HOSTS --rsh "$D/rsh" "$P_counter" 200
    [ "$FAILED" = 0 ] || show
}

# The program exists on every host but h3: a copy in a directory that h3
# sees empty (cluster.sh hide: a mount namespace, since the hosts share the
# file system).
case_fail_missing() {
    mkdir "$TMP/bin" && cp "$P_counter" "$TMP/bin/" || { fail "cannot copy the program"; return; }
    $CL hide "$D" h3 "$TMP/bin"
    fail_start --status 127 --expect "sdsmrun: host h3: cannot run '$TMP/bin/mp_counter': No such file or directory" \
        --reject "sdsmrun: host h[124]: cannot run" -- \
        --hosts $HOSTS --rsh "$D/rsh" "$TMP/bin/mp_counter" 200
    [ "$FAILED" = 0 ] || show
}

case_fail_slots() {
    # A remote shell that logs every call: none may be made.
    printf '#!/bin/sh\necho "$1" >>%s/rsh.log\nexec %s "$@"\n' "$TMP" "$D/rsh" >"$TMP/logrsh"
    chmod +x "$TMP/logrsh"
    fail_start --status 2 --expect "sdsmrun: 9 ranks need 9 slots, but the hosts have only 8; no rank was started" -- \
        -n 9 --hosts $HOSTS --rsh "$TMP/logrsh" "$P_counter" 200
    [ ! -s "$TMP/rsh.log" ] || fail "a remote shell was started for: $(cat "$TMP/rsh.log")"
    [ "$FAILED" = 0 ] || show
}

# A rank on h4 kills itself while the others block (mp_killrank): the job
# stops within 5 s of it, named with its host.
case_fail_rank_killed() {
    run $EXPECT --status 137 --expect "sdsmrun: rank 7 \(pid [0-9]+ on host h4\) killed by signal 9" \
        --reject "^OK " --max-seconds 20 --mark-deadline 5 --no-leftovers -- \
        "$P_sdsmrun" -n 8 --hosts $HOSTS --rsh "$D/rsh" --timeout 60 "$P_killrank"
    expect_rc 0
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# ---- failures from outside, while a job runs ------------------------------

# rank_pid RANK: pid of that rank of the job started by start_job.
rank_pid() {
    local e p
    for e in $(grep -lzxF "CLUSTER_JOB_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null); do
        p=${e#/proc/}
        p=${p%/environ}
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = mp_counter ] || continue
        grep -qzxF "SDSM_RANK=$1" "$e" 2>/dev/null && { echo "$p"; return 0; }
    done
    return 1
}
# agent_pid HOST: pid of the agent sdsmrun started on HOST.
agent_pid() {
    local e p
    for e in $(grep -lzxF "CLUSTER_JOB_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null); do
        p=${e#/proc/}
        p=${p%/environ}
        tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "--agent $1 " && { echo "$p"; return 0; }
    done
    return 1
}

# start_job MP_EXPECT-OPTIONS... -- SDSMRUN-OPTIONS...: a long job (counter
# with no end in sight; its time limit JOB_LIMIT, default 60 s) in the
# background, checked by mp_expect into OUT;
# returns once every rank runs.  finish_job waits for it and sets RC and
# MS (ms from finish_job's call to the end).
start_job() {
    local opts=() r
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    [ -n "${LEFTOVERS_LATER:-}" ] || opts+=(--no-leftovers) # else: the case looks itself, later
    CLUSTER_JOB_TAG=$TAG $EXPECT --reject "^OK " --reject "time limit" "${opts[@]}" -- \
        "$P_sdsmrun" -n 8 --hosts $HOSTS --timeout "${JOB_LIMIT:-60}" -x CLUSTER_JOB_TAG "$@" "$P_counter" 100000000 \
        >"$OUT" 2>"$ERR" </dev/null &
    JOB=$!
    for _ in $(seq 100); do
        for r in 0 1 2 3 4 5 6 7; do rank_pid $r >/dev/null || continue 2; done
        sleep 0.5 # well inside the job
        return 0
    done
    fail "the job's ranks did not all start"
}
finish_job() {
    local t0
    t0=$(date +%s%N)
    wait "$JOB"
    RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
}

case_fail_rank_kill_from_outside() {
    start_job --status 137 --expect "sdsmrun: rank 3 \(pid [0-9]+ on host h2\) killed by signal 9" -- --rsh "$D/rsh"
    kill -KILL "$(rank_pid 3)"
    finish_job
    expect_rc 0
    [ "$MS" -lt 5000 ] || fail "the job took $MS ms to stop after the kill"
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# Where a job listens: each rank only on its host's address, the launcher
# (SDSM_IFACE=the cluster's network) only on the bridge's; then SIGTERM to
# the launcher stops the job on every host.
case_listen() {
    local e p h ns ip lines launcher=
    SDSM_IFACE=$CLUSTER_SUBNET start_job --status 143 -- --rsh "$D/rsh"
    for e in $(grep -lzxF "CLUSTER_JOB_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null); do
        p=${e#/proc/}
        p=${p%/environ}
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sdsmrun ] || continue
        tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "--agent" || launcher=$p
    done
    [ -n "$launcher" ] || { fail "no launcher found"; return; }
    lines=$(ss -Hltnp | grep "pid=$launcher,")
    [ -n "$lines" ] || fail "the launcher listens nowhere"
    echo "$lines" | awk '{print $4}' | grep -v "^$CLUSTER_HEAD_IP:" &&
        fail "the launcher listens beyond the bridge: $lines"
    for h in $CLUSTER_HOSTS; do
        ns=CLUSTER_NS_$h ip=CLUSTER_IP_$h
        lines=$(ip netns exec "${!ns}" ss -Hltnp | grep '"mp_counter"')
        [ "$(echo "$lines" | grep -c .)" -ge 2 ] || fail "fewer than 2 ranks listen on $h: $lines"
        echo "$lines" | awk '{print $4}' | grep -v "^${!ip}:" &&
            fail "a rank on $h listens beyond ${!ip}: $lines"
    done
    kill -TERM "$launcher"
    finish_job
    expect_rc 0
    [ "$MS" -lt 5000 ] || fail "the job took $MS ms to stop after SIGTERM"
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

case_fail_agent_killed() {
    start_job --nonzero --expect "sdsmrun: host h3" -- --rsh "$D/rsh"
    kill -KILL "$(agent_pid h3)"
    finish_job
    expect_rc 0
    [ "$MS" -lt 5000 ] || fail "the job took $MS ms to stop after the kill"
    sleep 0.5
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

case_fail_rank_stopped() {
    start_job --nonzero --expect "sdsmrun: rank 5 \(pid [0-9]+ on host h3\) stopped" -- --rsh "$D/rsh"
    kill -STOP "$(rank_pid 5)"
    finish_job
    expect_rc 0
    [ "$MS" -lt 15000 ] || fail "the job took $MS ms to stop after SIGSTOP"
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# job_pids: processes of the job started by start_job, on any host.
job_pids() {
    local e p
    for e in $(grep -lzxF "CLUSTER_JOB_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null); do
        p=${e#/proc/}
        echo "${p%/environ}"
    done
}

# A host cut off mid-job (its link down): its ranks fall silent.  The peer
# timeout (2 s here) must find them: the job ends within 5 s + 2 s of the
# cut, naming the host (and a rank of it, where the launcher still hears
# h3's agent), and every process of the job, on h3 too, is gone within that
# time: what runs on h3 cannot be told to stop and must stop on its own.
# With ssh the launcher's link to h3's agent is cut too; with the wrapper
# only the ranks' links are.
cut_mid_job() {
    local re=$1 t0 left
    shift
    LEFTOVERS_LATER=1 start_job --nonzero --expect "$re" -- "$@"
    t0=$(date +%s%N)
    $CL cut "$D" h3
    finish_job
    expect_rc 0
    [ "$MS" -lt 7000 ] || fail "the job took $MS ms to stop after h3 was cut off (limit 5 s + SDSM_PEER_TIMEOUT)"
    while left=$(job_pids) && [ -n "$left" ] && [ $(($(date +%s%N) - t0)) -lt 7000000000 ]; do
        sleep 0.1
    done
    if [ -n "$left" ]; then
        fail "7 s after the cut, processes of the job are left: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
        kill -KILL $left 2>/dev/null
    fi
    # sshd's session for the vanished client goes after its ClientAlive probes.
    for _ in $(seq 60); do
        [ -z "$(ip netns pids "$CLUSTER_NS_h3" | while read -r p; do
            grep -q '^sshd: .*\[listener\]' "/proc/$p/cmdline" 2>/dev/null || echo "$p"; done)" ] && break
        sleep 0.1
    done
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}
# An agent stopped (SIGSTOP) on h3: alive, silent; the launcher's heartbeat
# with its agents must name the host within 5 s + the peer timeout.
case_fail_agent_stopped() {
    local t0
    JOB_LIMIT=20 SDSM_HEARTBEAT=200ms SDSM_PEER_TIMEOUT=2s \
        start_job --nonzero --expect "sdsmrun: host h3" -- --rsh "$D/rsh"
    kill -STOP "$(agent_pid h3)"
    finish_job
    expect_rc 0
    [ "$MS" -lt 7000 ] || fail "the job took $MS ms to stop after h3's agent was stopped"
    sleep 0.5
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

case_fail_cut() {
    JOB_LIMIT=20 SDSM_HEARTBEAT=200ms SDSM_PEER_TIMEOUT=2s \
        cut_mid_job "sdsmrun: .*rank [45][^0-9].*h3" --rsh "$D/rsh"
}
case_fail_cut_ssh() {
    sshd_or_skip || return
    JOB_LIMIT=20 SDSM_HEARTBEAT=200ms SDSM_PEER_TIMEOUT=2s \
        cut_mid_job "sdsmrun: .*(host h3|rank [45][^0-9].*h3)" --rsh "ssh -F $D/ssh_config"
}

# ---- direct launch: mpirun on the emulated hosts ---------------------------

# Open MPI's mpirun starts its orted on each host through the same wrapper
# (plm_rsh_agent); orted and mpirun talk over the bridge's network only
# (oob/btl if_include).  Hosts are given by address: mpirun looks host names
# up, and these exist only in the wrapper.
case_direct() {
    local mpirun
    mpirun=${MPIRUN:-$(command -v mpirun)}
    if [ -z "$mpirun" ]; then
        echo "SKIP [$CASE]: mpirun not found (install Open MPI, e.g. Debian's openmpi-bin); this test did NOT run"
        exit 77
    fi
    local pre=$CLUSTER_PREFIX before
    local mpi=("$mpirun" --allow-run-as-root --oversubscribe -n 8 --host "$pre.1:2,$pre.2:2,$pre.3:2,$pre.4:2"
        --mca plm_rsh_agent "$D/rsh" --mca oob_tcp_if_include "$CLUSTER_SUBNET"
        --mca btl_tcp_if_include "$CLUSTER_SUBNET")
    # Open MPI passes only what -x names to the ranks on other hosts; a
    # sanitizer build's options go that way (make tsan's report_signal_unsafe=0:
    # a fault that waits handles messages, see the Makefile).
    local v
    for v in TSAN_OPTIONS ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
        [ -n "${!v:-}" ] && mpi+=(-x "$v")
    done
    run "${mpi[@]}" sh -c 'echo "rank $PMIX_RANK at $(hostname -I | tr -d " ")"'
    expect_rc 0
    for h in 1:0 1:1 2:2 2:3 3:4 3:5 4:6 4:7; do
        grep -qx "rank ${h#*:} at $pre.${h%:*}" "$OUT" || fail "rank ${h#*:} did not run on h${h%:*}"
    done
    before=$(link_bytes)
    run $EXPECT --status 0 --expect '^OK counter$' --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "${mpi[@]}" -x SDSM_IFACE="$CLUSTER_SUBNET" "$P_counter" 200
    expect_rc 0
    [ "$(grep -c '^OK counter$' "$OUT")" = 1 ] || fail "not one job of 8 ranks"
    expect_traffic "$before" 4096
    # Without SDSM_IFACE: each rank takes its host's one address.
    run $EXPECT --status 0 --expect '^OK stencil$' --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "${mpi[@]}" "$P_stencil" 64 1024 20
    expect_rc 0
    # A rank killed on a remote host ends the mpirun job.
    run $EXPECT --nonzero --expect "rank 5 fails now" --reject "passed" --max-seconds 20 --no-leftovers -- \
        "${mpi[@]}" -x FAULT_RANK=5 "$P_fault" barrier kill9
    expect_rc 0
    sleep 0.3
    expect_hosts_empty
    [ "$FAILED" = 0 ] || show
}

# MPICH's mpiexec.hydra (PMI-2) starts its proxies on the hosts through the
# wrapper (its rsh launcher), and they reach it on the bridge (-iface).  The
# launcher's PMI_process_mapping names 4 nodes, so each rank listens on its
# host's one address (no SDSM_IFACE needed; loopback would not reach).
case_direct_hydra() {
    local hydra
    hydra=${MPIEXEC_HYDRA:-$(command -v mpiexec.hydra)}
    if [ -z "$hydra" ]; then
        echo "SKIP [$CASE]: mpiexec.hydra not found (install MPICH, e.g. Debian's mpich); this test did NOT run"
        exit 77
    fi
    local pre=$CLUSTER_PREFIX before
    local mpi=("$hydra" -launcher rsh -launcher-exec "$D/rsh" -iface "$CLUSTER_BRIDGE"
        -hosts "$pre.1:2,$pre.2:2,$pre.3:2,$pre.4:2" -n 8)
    run "${mpi[@]}" sh -c 'echo "rank $PMI_RANK at $(hostname -I | tr -d " ")"'
    expect_rc 0
    for h in 1:0 1:1 2:2 2:3 3:4 3:5 4:6 4:7; do
        grep -qx "rank ${h#*:} at $pre.${h%:*}" "$OUT" || fail "rank ${h#*:} did not run on h${h%:*}"
    done
    before=$(link_bytes)
    run $EXPECT --status 0 --expect '^OK counter$' --reject "$FAILED_RE" --max-seconds 60 --no-leftovers -- \
        "${mpi[@]}" "$P_counter" 200
    expect_rc 0
    [ "$(grep -c '^OK counter$' "$OUT")" = 1 ] || fail "not one job of 8 ranks"
    expect_traffic "$before" 4096
    # A rank killed on a remote host ends the job.
    run $EXPECT --nonzero --expect "rank 5 fails now" --reject "passed" --max-seconds 20 --no-leftovers -- \
        env FAULT_RANK=5 "${mpi[@]}" "$P_fault" barrier kill9
    expect_rc 0
    sleep 0.3
    expect_hosts_empty
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
