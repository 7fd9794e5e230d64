#!/usr/bin/env bash
# cluster.sh - an emulated cluster on one machine, for tests and benchmarks:
# K "hosts" h1..hK, each a network namespace with one veth link to a bridge in
# the root namespace, on a private /24 that exists only there.
#
#   cluster.sh up DIR K      make hosts h1..hK; write DIR/env, DIR/rsh
#   cluster.sh down DIR      remove all of it (also kills what runs on the hosts)
#   cluster.sh cut DIR HOST  take HOST's link down (the host drops off the network)
#   cluster.sh heal DIR HOST bring it back up
#   cluster.sh sshd DIR      start an sshd on port 22 in every host; write DIR/ssh_config
#   cluster.sh hide DIR HOST PATH
#                            commands started on HOST through DIR/rsh see the
#                            directory PATH empty (a program "not installed there")
#   cluster.sh cpus DIR N|off
#                            give every host N CPUs of its own, as real hosts
#                            have: what starts on host hI from then on (through
#                            DIR/rsh, or a login to its sshd) runs on CPUs
#                            (I-1)*N .. I*N-1, counted modulo this machine's CPUs
#                            (more hosts than CPUs: hosts share them in turn);
#                            off (the default): every host may use every CPU
#   cluster.sh reap          remove the clusters of runs whose owner has died
#
# Addresses: 10.77.N.0/24 with N allocated atomically per cluster, so that test
# runs at once never share a subnet; host hI is 10.77.N.I, the bridge (where a
# launcher in the root namespace sits) is 10.77.N.254.  No default route exists
# inside the hosts: their traffic cannot leave these namespaces.
#
# DIR/env (sourceable): CLUSTER_ID CLUSTER_K CLUSTER_HOSTS CLUSTER_SUBNET
# CLUSTER_PREFIX CLUSTER_BRIDGE CLUSTER_HEAD_IP CLUSTER_STATE, and per host
# CLUSTER_NS_hI (namespace), CLUSTER_IP_hI, CLUSTER_VETH_hI (root-side link).
# DIR/rsh HOST CMD... runs CMD the way ssh would (words joined, run by sh -c)
# inside HOST's network namespace, keeping the working directory and the
# environment; the command's host name (UTS namespace) is HOST; on the CPUs
# DIR/cpus.HOST lists, if that file exists ("cpus").
#
# Every cluster has a state folder (CLUSTER_STATE, under $SDSM_CLUSTER_STATE or
# /run/sdsm-cluster) that records what was made and the process that owns the
# cluster: the process that ran "up" (call it directly, not from a subshell
# that ends at once), or the pid in $CLUSTER_OWNER.  A run killed before its
# "down" (a ctest TIMEOUT) leaves that folder behind; the next "up" or "reap"
# finds its owner gone and removes the leftovers, processes included.
#
# Exit status 77 (with a SKIP message) where namespaces cannot be made: not
# root, no iproute2, no namespace support, or no sshd for "sshd".
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

STATE_ROOT=${SDSM_CLUSTER_STATE:-/run/sdsm-cluster}
MAX_HOSTS=64
SKIP=77

die() {
    echo "cluster.sh: $*" >&2
    exit 1
}
skip() {
    echo "SKIP: cluster.sh: $* -- the emulated-cluster tests need root allowed to make network namespaces, and iproute2" >&2
    exit $SKIP
}

# starttime PID: the process's start time in clock ticks (field 22 of
# /proc/PID/stat), so a recycled pid is not taken for the owner.
starttime() {
    local s
    s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    s=${s##*) }
    set -- $s
    echo "${20}"
}
alive() { # alive PID STARTTIME
    [ "$(starttime "$1" 2>/dev/null)" = "$2" ]
}

can_make_namespaces() {
    [ "$(id -u)" = 0 ] || skip "not root"
    command -v ip >/dev/null || skip "no 'ip' command (install iproute2)"
    command -v flock >/dev/null || skip "no 'flock' command (install util-linux)"
    command -v unshare >/dev/null || skip "no 'unshare' command (install util-linux)"
    ip netns list >/dev/null 2>&1 || skip "'ip netns' does not work here"
    mkdir -p "$STATE_ROOT" || skip "cannot create $STATE_ROOT"
}

# Root in a container without the capabilities (CAP_SYS_ADMIN, CAP_NET_ADMIN)
# cannot make what a cluster needs: find out before making anything.
probe() {
    local ns="sdsm-probe-$$" br="sdsmprb$$" err
    if ! err=$(ip netns add "$ns" 2>&1); then
        skip "cannot create a network namespace: $err"
    fi
    if ! err=$(ip netns exec "$ns" unshare --uts true 2>&1); then
        ip netns del "$ns" 2>/dev/null
        skip "cannot enter a network namespace with a host name of its own: $err"
    fi
    ip netns del "$ns"
    if ! err=$(ip link add "$br" type bridge 2>&1); then
        skip "cannot create a bridge: $err"
    fi
    ip link del "$br"
}

# teardown STATE: kill what runs in the hosts, delete links, namespaces and
# bridge recorded in STATE, then STATE itself.  Idempotent.
teardown() {
    local st=$1 ns link pid start p
    if [ -f "$st/daemons" ]; then
        while read -r pid start; do
            alive "$pid" "$start" && kill -TERM "$pid" 2>/dev/null
        done <"$st/daemons"
    fi
    if [ -f "$st/netns" ]; then
        # Anything left in a host (ranks, agents, sshd): a host that is
        # switched off takes its processes with it.
        while read -r ns; do
            for p in $(ip netns pids "$ns" 2>/dev/null); do
                kill -KILL "$p" 2>/dev/null
            done
        done <"$st/netns"
    fi
    if [ -f "$st/links" ]; then
        while read -r link; do
            ip link del "$link" 2>/dev/null
        done <"$st/links"
    fi
    if [ -f "$st/netns" ]; then
        while read -r ns; do
            ip netns del "$ns" 2>/dev/null
        done <"$st/netns"
    fi
    rm -rf "$st"
}

# reap: remove every cluster whose owner is gone.  Caller holds the lock.
reap() {
    local st pid start
    for st in "$STATE_ROOT"/net*; do
        [ -d "$st" ] || continue
        if read -r pid start 2>/dev/null <"$st/owner" && alive "$pid" "$start"; then
            continue
        fi
        echo "cluster.sh: removing the leftovers of a cluster whose owner is gone ($st)" >&2
        teardown "$st"
    done
}

# A subnet number nobody here uses: no cluster state, no route, no link.
allocate() {
    local n
    for n in $(seq 1 250); do
        [ -e "$STATE_ROOT/net$n" ] && continue
        ip -4 route show 2>/dev/null | grep -q "^10\.77\.$n\." && continue
        ip link show "sdsm$n-br" >/dev/null 2>&1 && continue
        mkdir "$STATE_ROOT/net$n" 2>/dev/null || continue
        echo "$n"
        return 0
    done
    return 1
}

load_env() { # load_env DIR
    [ -f "$1/env" ] || die "$1/env: no cluster there (run 'cluster.sh up $1 K' first)"
    # shellcheck disable=SC1091
    . "$1/env"
}
# The cluster of the loaded env still exists (not reaped after its owner died).
check_live() {
    [ "$(cat "$CLUSTER_STATE/dir" 2>/dev/null)" = "$CLUSTER_DIR" ] ||
        die "$CLUSTER_DIR: its cluster is gone (removed after its owner died? see CLUSTER_OWNER)"
}

# host_var HOST FIELD: CLUSTER_<FIELD>_<HOST> from the loaded env, or fail.
host_var() {
    local v="CLUSTER_$2_$1"
    case $1 in h[0-9] | h[0-9][0-9]) ;; *) die "unknown host '$1' (hosts: $CLUSTER_HOSTS)" ;; esac
    [ -n "${!v:-}" ] || die "unknown host '$1' (hosts: $CLUSTER_HOSTS)"
    echo "${!v}"
}

cmd_up() {
    local dir=$1 k=$2 n st i ns link ip owner
    case $k in '' | *[!0-9]*) die "up: K must be a number of hosts, got '$k'" ;; esac
    [ "$k" -ge 1 ] && [ "$k" -le $MAX_HOSTS ] || die "up: K must be 1..$MAX_HOSTS"
    [ ! -e "$dir/env" ] || die "up: $dir already has a cluster (cluster.sh down $dir)"
    mkdir -p "$dir" || die "up: cannot create $dir"
    dir=$(cd "$dir" && pwd)
    can_make_namespaces
    probe
    owner=${CLUSTER_OWNER:-$PPID}
    exec 9>"$STATE_ROOT/.lock"
    flock 9
    reap
    n=$(allocate) || die "up: no free subnet 10.77.N.0/24 (250 clusters in use?)"
    st=$STATE_ROOT/net$n
    echo "$owner $(starttime "$owner")" >"$st/owner"
    echo "$dir" >"$st/dir"
    flock -u 9
    exec 9>&-

    # Record each object before making it, so a kill at any point leaves
    # nothing teardown does not know about.
    local br="sdsm$n-br" pre="10.77.$n"
    echo "$br" >>"$st/links"
    ip link add "$br" type bridge || { teardown "$st"; die "up: cannot create bridge $br"; }
    ip addr add "$pre.254/24" dev "$br" && ip link set "$br" up ||
        { teardown "$st"; die "up: cannot configure $br"; }
    {
        echo "# emulated cluster made by cluster.sh up $dir $k"
        echo "CLUSTER_DIR=$dir"
        echo "CLUSTER_ID=$n"
        echo "CLUSTER_K=$k"
        echo "CLUSTER_SUBNET=$pre.0/24"
        echo "CLUSTER_PREFIX=$pre"
        echo "CLUSTER_BRIDGE=$br"
        echo "CLUSTER_HEAD_IP=$pre.254"
        echo "CLUSTER_STATE=$st"
    } >"$dir/env.new"
    local hosts=""
    for i in $(seq 1 "$k"); do
        ns="sdsm$n-h$i" link="sdsm$n-h$i" ip="$pre.$i"
        echo "$ns" >>"$st/netns"
        echo "$link" >>"$st/links"
        if ! { ip netns add "$ns" &&
            ip link add "$link" type veth peer name "sdsm$n-p$i" &&
            ip link set "sdsm$n-p$i" netns "$ns" &&
            ip -n "$ns" link set "sdsm$n-p$i" name eth0 &&
            ip -n "$ns" addr add "$ip/24" dev eth0 &&
            ip -n "$ns" link set lo up &&
            ip -n "$ns" link set eth0 up &&
            ip link set "$link" master "$br" &&
            ip link set "$link" up; }; then
            teardown "$st"
            rm -f "$dir/env.new"
            die "up: cannot make host h$i (namespace $ns)"
        fi
        hosts="$hosts h$i"
        echo "CLUSTER_NS_h$i=$ns CLUSTER_IP_h$i=$ip CLUSTER_VETH_h$i=$link" >>"$dir/env.new"
    done
    echo "CLUSTER_HOSTS=\"${hosts# }\"" >>"$dir/env.new"
    write_rsh "$dir" "$k" "$n" "$pre"
    mv "$dir/env.new" "$dir/env"
    wait_reachable "$dir" "$k" "$pre"
}

# write_rsh DIR K N PREFIX: the remote-shell wrapper, with the host table
# written in, so that each call is one small sh and one ip netns exec.
write_rsh() {
    local dir=$1 k=$2 n=$3 pre=$4 i
    {
        cat <<'EOF'
#!/bin/sh
# rsh [ssh options] HOST CMD... - a remote shell into a host of an emulated
# cluster (written by cluster.sh up).  Like ssh it joins CMD's words with
# spaces and hands them to sh -c, under the host name HOST; unlike ssh it
# keeps the working directory and the environment.  An unknown host fails as ssh does (status 255), and
# so does a host whose link is cut.
while [ $# -gt 0 ]; do
    case $1 in
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;; # ssh options that take a value
    -?*) shift ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: rsh HOST CMD..." >&2; exit 255; }
host=$1
shift
case $host in
EOF
        for i in $(seq 1 "$k"); do
            echo "h$i | $pre.$i) name=h$i ns=sdsm$n-h$i link=sdsm$n-h$i hide=$dir/hide.h$i cpus=$dir/cpus.h$i ;;"
        done
        cat <<'EOF'
*) echo "ssh: Could not resolve hostname $host: Name or service not known" >&2; exit 255 ;;
esac
[ $# -ge 1 ] || { echo "rsh: $host: no command (interactive logins are not supported)" >&2; exit 255; }
if [ "$(cat "/sys/class/net/$link/operstate" 2>/dev/null)" != up ]; then
    echo "ssh: connect to host $host port 22: No route to host" >&2
    exit 255
fi
# ip netns exec gives the command a mount namespace of its own (what the
# hide list mounts is seen by it only); unshare gives it the host's name, so
# that programs keying files by host name (Open MPI's session directories
# in the shared /tmp) tell the hosts apart; taskset the host's CPUs, if it
# has CPUs of its own (cluster.sh cpus).
cmd=$*
pin=
[ -s "$cpus" ] && read -r pin <"$cpus"
if [ -n "$pin" ]; then set -- taskset -c "$pin"; else set --; fi
exec "$@" ip netns exec "$ns" unshare --uts sh -c '
hostname "$1" || exit 255
if [ -s "$2" ]; then
    while read -r d; do mount -t tmpfs -o size=4k,mode=0755 hidden "$d" || exit 255; done <"$2"
fi
exec sh -c "$3"' sh "$name" "$hide" "$cmd"
EOF
    } >"$dir/rsh.new"
    chmod 755 "$dir/rsh.new"
    mv "$dir/rsh.new" "$dir/rsh"
}

# The bridge's ports take a moment to forward: wait until every host's
# kernel answers (a connect to a closed port there is refused, not lost).
wait_reachable() {
    local dir=$1 k=$2 pre=$3 i
    for i in $(seq 1 "$k"); do
        wait_host "$pre.$i" "h$i"
    done
}
wait_host() { # wait_host IP NAME
    for _ in $(seq 1 50); do
        timeout 1 bash -c "exec 3<>/dev/tcp/$1/9" 2>&1 | grep -q refused && return 0
        sleep 0.1
    done
    die "host $2 ($1) does not answer from the root namespace"
}

cmd_down() {
    local dir=$1
    [ -f "$dir/env" ] || return 0 # nothing made, or already down
    load_env "$dir"
    [ "$(id -u)" = 0 ] || die "down: not root"
    # The state may have been reaped (owner gone) and its subnet given to
    # another cluster since: only tear down what is still this DIR's.
    [ "$(cat "$CLUSTER_STATE/dir" 2>/dev/null)" = "$CLUSTER_DIR" ] && teardown "$CLUSTER_STATE"
    rm -f "$dir/env" "$dir/rsh" "$dir"/hide.h* "$dir"/cpus.h*
}

cmd_link() { # cmd_link DIR HOST up|down
    local link
    load_env "$1"
    check_live
    link=$(host_var "$2" VETH) || exit 1
    ip link set "$link" "$3" || die "cannot bring $2's link ($link) $3"
    # Healed means reachable again: the link's carrier takes a moment.
    [ "$3" = up ] && wait_host "$(host_var "$2" IP)" "$2"
    return 0
}

cmd_hide() {
    local path
    load_env "$1"
    host_var "$2" NS >/dev/null || exit 1
    path=$(cd "$3" 2>/dev/null && pwd) || die "hide: $3 is not a directory"
    echo "$path" >>"$1/hide.$2"
}

cmd_sshd() {
    local dir=$1 h ns ip sd pid
    load_env "$dir"
    check_live
    local sshd=/usr/sbin/sshd
    [ -x "$sshd" ] || skip "no $sshd (install openssh-server)"
    command -v ssh-keygen >/dev/null || skip "no ssh-keygen (install openssh-client)"
    sd=$dir/ssh
    mkdir -p "$sd" && chmod 700 "$sd"
    [ -f "$sd/host_key" ] || ssh-keygen -q -t ed25519 -N '' -C "cluster host key" -f "$sd/host_key" || die "sshd: ssh-keygen failed"
    [ -f "$sd/id" ] || ssh-keygen -q -t ed25519 -N '' -C "cluster client key" -f "$sd/id" || die "sshd: ssh-keygen failed"
    cp "$sd/id.pub" "$sd/authorized_keys"
    mkdir -p /run/sshd # sshd's privilege separation directory
    local home
    home=$(getent passwd root | cut -d: -f6)
    : >"$sd/empty_bashrc"
    : >"$sd/known_hosts"
    {
        echo "# ssh -F $dir/ssh_config HOST CMD: the hosts of the emulated cluster"
        for h in $CLUSTER_HOSTS; do
            ip=$(host_var "$h" IP)
            printf 'Host %s %s\n  HostName %s\n' "$h" "$ip" "$ip"
            echo "$h,$ip $(cut -d' ' -f1,2 "$sd/host_key.pub")" >>"$sd/known_hosts"
        done
        cat <<EOF
Host *
  User root
  Port 22
  IdentityFile $sd/id
  IdentitiesOnly yes
  BatchMode yes
  StrictHostKeyChecking yes
  UserKnownHostsFile $sd/known_hosts
  GlobalKnownHostsFile /dev/null
  CheckHostIP no
  ConnectTimeout 5
  LogLevel ERROR
EOF
    } >"$dir/ssh_config"
    for h in $CLUSTER_HOSTS; do
        ns=$(host_var "$h" NS)
        ip=$(host_var "$h" IP)
        cat >"$sd/sshd_config.$h" <<EOF
Port 22
ListenAddress $ip
HostKey $sd/host_key
PidFile $sd/sshd.$h.pid
AuthorizedKeysFile $sd/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
MaxStartups 100:30:200
ClientAliveInterval 1
ClientAliveCountMax 3
MaxSessions 100
EOF
        rm -f "$sd/sshd.$h.pid"
        # sshd gets the host's name, and (in its own mount namespace, from
        # ip netns exec) an empty root .bashrc: bash reads it for every ssh
        # command, and this machine's own (e.g. pyenv's rehash under a lock)
        # made each login take seconds, many at once minutes.
        ip netns exec "$ns" unshare --uts sh -c '
            hostname "$0" || exit 1
            if [ -f "$1/.bashrc" ]; then mount --bind "$2" "$1/.bashrc" || exit 1; fi
            shift 2
            exec "$@"' "$h" "$home" "$sd/empty_bashrc" \
            "$sshd" -f "$sd/sshd_config.$h" -E "$sd/sshd.$h.log" ||
            die "sshd: sshd did not start on $h (see $sd/sshd.$h.log)"
        pid=
        for _ in $(seq 1 50); do
            pid=$(cat "$sd/sshd.$h.pid" 2>/dev/null) && [ -n "$pid" ] && break
            sleep 0.1
        done
        [ -n "$pid" ] || die "sshd: no pid file from sshd on $h (see $sd/sshd.$h.log)"
        echo "$pid $(starttime "$pid")" >>"$CLUSTER_STATE/daemons"
    done
    # Ready when every host takes a login.
    for h in $CLUSTER_HOSTS; do
        for _ in $(seq 1 50); do
            ssh -F "$dir/ssh_config" "$h" true 2>/dev/null && continue 2
            sleep 0.1
        done
        die "sshd: cannot log in to $h: $(ssh -F "$dir/ssh_config" "$h" true 2>&1)"
    done
}

# allowed_cpus: the CPUs this script may run on, one per line (a container
# may allow some only, and not from 0).
allowed_cpus() {
    local r a b
    for r in $(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status | tr ',' ' '); do
        a=${r%-*} b=${r#*-}
        seq "$a" "$b"
    done
}

cmd_cpus() {
    local dir=$1 n=$2 h i j pid list
    local -a cpu
    load_env "$dir"
    check_live
    command -v taskset >/dev/null || die "cpus: no taskset (install util-linux)"
    mapfile -t cpu < <(allowed_cpus)
    [ "${#cpu[@]}" -ge 1 ] || die "cpus: cannot read the CPUs allowed here (/proc/self/status)"
    case $n in
    off) ;;
    '' | *[!0-9]*) die "cpus: N must be a number of CPUs per host or 'off', got '$n'" ;;
    *) [ "$n" -ge 1 ] && [ "$n" -le "${#cpu[@]}" ] ||
        die "cpus: N must be 1..${#cpu[@]} (the CPUs of this machine)" ;;
    esac
    i=0
    for h in $CLUSTER_HOSTS; do
        i=$((i + 1))
        if [ "$n" = off ]; then
            rm -f "$dir/cpus.$h"
            list=$(IFS=,; echo "${cpu[*]}")
        else
            list=
            for j in $(seq 0 $((n - 1))); do
                list="$list,${cpu[$((((i - 1) * n + j) % ${#cpu[@]}))]}"
            done
            list=${list#,}
            echo "$list" >"$dir/cpus.$h"
        fi
        # A running sshd: its next logins start where the host now runs.
        [ -f "$dir/ssh/sshd.$h.pid" ] && [ -f "$CLUSTER_STATE/daemons" ] || continue
        read -r pid <"$dir/ssh/sshd.$h.pid" || continue
        grep -q "^$pid " "$CLUSTER_STATE/daemons" || continue
        taskset -a -c -p "$list" "$pid" >/dev/null || die "cpus: cannot move $h's sshd ($pid)"
    done
}

cmd_reap() {
    can_make_namespaces
    exec 9>"$STATE_ROOT/.lock"
    flock 9
    reap
}

usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
up) [ $# -eq 2 ] || usage; cmd_up "$1" "$2" ;;
down) [ $# -eq 1 ] || usage; cmd_down "$1" ;;
cut) [ $# -eq 2 ] || usage; cmd_link "$1" "$2" down ;;
heal) [ $# -eq 2 ] || usage; cmd_link "$1" "$2" up ;;
sshd) [ $# -eq 1 ] || usage; cmd_sshd "$1" ;;
hide) [ $# -eq 3 ] || usage; cmd_hide "$1" "$2" "$3" ;;
cpus) [ $# -eq 2 ] || usage; cmd_cpus "$1" "$2" ;;
reap) [ $# -eq 0 ] || usage; cmd_reap ;;
-h | --help | help) usage ;;
*) echo "cluster.sh: unknown command '$cmd'" >&2; usage ;;
esac
