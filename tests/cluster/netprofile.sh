#!/usr/bin/env bash
# netprofile.sh - network conditions between the hosts of an emulated cluster
# (made by cluster.sh up DIR K; this script reads DIR/env).
#
#   netprofile.sh DIR lan|fe [--loss PCT]   set a profile on every host
#   netprofile.sh DIR off                   remove it (prints the delay
#                                           readers' counts)
#   netprofile.sh DIR rtt [A B]             TCP ping-pong of one page between
#                                           hosts A and B (default h1 h2)
#                                           through the emulated network;
#                                           prints the median round trip
#   netprofile.sh DIR show                  the profile in force
# Option (before or after the command): --build BUILD, the CMake build tree
# holding bench/nfdelay and bench/ref_micro (default: build/ next to tests/).
#
# Profiles (each direction of every host's link):
#   lan  1 Gbit/s, 50 us one-way delay    (a current LAN)
#   fe   100 Mbit/s, 100 us one-way delay (Fast Ethernet, the papers' clusters)
#   --loss PCT drops that percentage of the packets each host sends, at random
#
# How, given a kernel without the netem qdisc:
# - bandwidth: a tbf qdisc on both ends of every host's veth link, the host's
#   own side (what it sends) and the bridge's side (what the switch port
#   sends to it, so that several senders to one host share its link);
# - delay and loss: in every host's namespace an iptables rule hands each
#   packet leaving through eth0 to an NFQUEUE, where nfdelay (bench/nfdelay.c)
#   holds it for the delay and then lets it go, in order.  Packets stay the
#   kernel's own, so TCP (sdsm's, MPI's, the launcher's) is delayed as it
#   would be on a wire, acknowledgements included; traffic between ranks of
#   one host (loopback) is not delayed.  A reader that dies stops the host's
#   traffic (no --queue-bypass): a broken profile is loud, not silently fast.
# The queue costs about 10 us per round trip of its own on a 2-CPU virtual
# machine, so "rtt" measures what the profile gives rather than assuming it.
#
# Needs root, iproute2's tc and iptables (Debian: apt-get install iptables).
# The readers live in the hosts' namespaces: cluster.sh down removes them
# with everything else.
set -u
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH

die() {
    echo "netprofile.sh: $*" >&2
    exit 1
}

QUEUE=0 # one queue per namespace: the number is per namespace

here=$(cd "$(dirname "$0")" && pwd)
build=$here/../../build
args=()
while [ $# -gt 0 ]; do
    case $1 in
    --build)
        [ $# -ge 2 ] || die "--build needs a directory"
        build=$2
        shift 2
        ;;
    --build=*)
        build=${1#--build=}
        shift
        ;;
    *)
        args+=("$1")
        shift
        ;;
    esac
done
set -- "${args[@]}"
[ $# -ge 2 ] || die "usage: netprofile.sh DIR lan|fe [--loss PCT] | off | rtt [A B] | show [--build BUILD]"
dir=$1 cmd=$2
shift 2
[ -f "$dir/env" ] || die "$dir/env: no cluster there (cluster.sh up $dir K)"
# shellcheck disable=SC1091
. "$dir/env"
state=$dir/netprofile
nfdelay=$build/bench/nfdelay
ref_micro=$build/bench/ref_micro

host_field() { # host_field HOST NS|IP|VETH
    local v="CLUSTER_$2_$1"
    [ -n "${!v:-}" ] || die "unknown host '$1' (hosts: $CLUSTER_HOSTS)"
    echo "${!v}"
}

# running PID: alive and not a zombie waiting to be reaped.
running() {
    local st
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [ "${st%% *}" != Z ]
}

profile_off() {
    local h ns pid
    [ -d "$state" ] || return 0
    for h in $CLUSTER_HOSTS; do
        ns=$(host_field "$h" NS)
        # The rule goes first, so that no packet is queued with no reader.
        while ip netns exec "$ns" iptables -w -D OUTPUT -o eth0 -j NFQUEUE --queue-num $QUEUE \
            2>/dev/null; do :; done
        if [ -f "$state/$h.pid" ]; then
            pid=$(cat "$state/$h.pid")
            if kill -TERM "$pid" 2>/dev/null; then
                for _ in $(seq 250); do
                    running "$pid" || break
                    sleep 0.02
                done
            fi
            grep -h "packets" "$state/$h.log" 2>/dev/null | sed "s/^/netprofile.sh: $h: /"
        fi
        ip netns exec "$ns" tc qdisc del dev eth0 root 2>/dev/null
        tc qdisc del dev "$(host_field "$h" VETH)" root 2>/dev/null
    done
    rm -rf "$state"
}

# start_reader HOST DELAY_US LOSS: nfdelay in HOST's namespace, then its rule.
start_reader() {
    local h=$1 ns pid
    ns=$(host_field "$h" NS)
    ip netns exec "$ns" "$nfdelay" --queue $QUEUE --delay-us "$2" --loss "$3" \
        --seed "$((CLUSTER_ID * 100 + ${h#h}))" >"$state/$h.log" 2>&1 &
    pid=$!
    echo "$pid" >"$state/$h.pid"
    for _ in $(seq 150); do
        grep -q ready "$state/$h.log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    grep -q ready "$state/$h.log" ||
        { cat "$state/$h.log" >&2; return 1; }
    ip netns exec "$ns" iptables -w -A OUTPUT -o eth0 -j NFQUEUE --queue-num $QUEUE
}

profile_on() {
    local name=$1 rate burst delay loss=0 h
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --loss)
            [ $# -ge 2 ] || die "--loss needs a percentage"
            loss=$2
            shift 2
            ;;
        *) die "unknown option '$1'" ;;
        esac
    done
    case $loss in '' | *[!0-9.]*) die "--loss: a percentage, got '$loss'" ;; esac
    # burst: enough for tbf to keep the rate with its timer on a loaded
    # virtual machine (lan), one frame where that costs nothing (fe).
    case $name in
    lan) rate=1gbit burst=9000 delay=50 ;;
    fe) rate=100mbit burst=1600 delay=100 ;;
    *) die "unknown profile '$name' (lan, fe)" ;;
    esac
    command -v iptables >/dev/null || die "no iptables (Debian: apt-get install iptables)"
    command -v tc >/dev/null || die "no tc (install iproute2)"
    [ -x "$nfdelay" ] || die "no $nfdelay: build bench/ first (cmake --build $build)"
    profile_off
    mkdir -p "$state"
    echo "$name rate=$rate delay_us=$delay loss_pct=$loss" >"$state/profile"
    for h in $CLUSTER_HOSTS; do
        # tbf drops a frame bigger than its burst: at least one whole frame
        # of the link's MTU (someone may have raised it for jumbo frames).
        local mtu b
        mtu=$(ip netns exec "$(host_field "$h" NS)" cat /sys/class/net/eth0/mtu 2>/dev/null) || mtu=1500
        case $mtu in '' | *[!0-9]*) mtu=1500 ;; esac
        b=$burst
        [ $((mtu + 14)) -le "$b" ] || b=$((mtu + 14))
        ip netns exec "$(host_field "$h" NS)" tc qdisc replace dev eth0 root \
            tbf rate $rate burst $b latency 20ms &&
            tc qdisc replace dev "$(host_field "$h" VETH)" root \
                tbf rate $rate burst $b latency 20ms &&
            start_reader "$h" $delay "$loss" ||
            { profile_off; die "$name: cannot set up host $h"; }
    done
    echo "netprofile.sh: $CLUSTER_DIR: $(cat "$state/profile")"
}

# rtt A B: the page ping-pong of sdsm's fetch (24-byte request, 4120-byte
# reply: 16-byte header, 8-byte page number and count, the page) from A to B.
rtt() {
    local a=${1:-h1} b=${2:-h2} out pid port samples
    [ -x "$ref_micro" ] || die "no $ref_micro: build bench/ first (cmake --build $build)"
    out=$(mktemp)
    ip netns exec "$(host_field "$b" NS)" "$ref_micro" rtt-serve 0 24 4120 >"$out" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        grep -q listening "$out" && break
        sleep 0.02
    done
    port=$(awk '/listening/ {print $2}' "$out")
    [ -n "$port" ] || { kill "$pid" 2>/dev/null; cat "$out" >&2; rm -f "$out"; die "rtt: no server on $b"; }
    samples=$(ip netns exec "$(host_field "$a" NS)" "$ref_micro" rtt-to "$(host_field "$b" IP)" \
        "$port" 24 4120 500 9 | awk '/^sample/ {print $3}')
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -f "$out"
    [ -n "$samples" ] || die "rtt: no samples from $a to $b"
    echo "$samples" | sort -n | awk -v a="$a" -v b="$b" -v p="$(profile_name)" '
        { v[NR] = $1 }
        END { printf "netprofile.sh: %s: page ping-pong %s->%s (24 B -> 4120 B): median %.1f us (min %.1f, max %.1f, %d batches of 500)\n",
              p, a, b, v[int((NR + 1) / 2)] / 1e3, v[1] / 1e3, v[NR] / 1e3, NR }'
}

profile_name() {
    if [ -f "$state/profile" ]; then cut -d' ' -f1 "$state/profile"; else echo none; fi
}

case $cmd in
lan | fe) profile_on "$cmd" "$@" ;;
off) profile_off ;;
rtt) rtt "$@" ;;
show) if [ -f "$state/profile" ]; then cat "$state/profile"; else echo none; fi ;;
*) die "unknown command '$cmd' (lan, fe, off, rtt, show)" ;;
esac
