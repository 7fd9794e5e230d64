#!/usr/bin/env bash
# slurm_test.sh - direct launch under Slurm: bring up a one-node Slurm
# cluster of our own (munged, slurmctld, slurmd on loopback, everything in a
# temporary directory), run sdsm programs with srun, tear it all down.
#
#   slurm_test.sh COUNTER FAULT DIRECT [--no-pmix]
#
# COUNTER, FAULT, DIRECT: the mp_counter, fault and mp_direct test programs.
# --no-pmix: sdsm was built without PMIx; only the PMI-2 cases run.
# Needs root (slurmd starts tasks as the submitting user) and Debian's
# slurmctld, slurmd, slurm-client and munge (whose mpi/pmix plugin comes
# with slurm-wlm-basic-plugins); exits 77 (skipped) without them.  The
# daemons are stopped by an EXIT trap, whatever happens; a Slurm process
# still alive after that makes the test fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
expect=$here/../mp/mp_expect.sh
[ $# -eq 3 ] || [ $# -eq 4 ] && [ "${4:---no-pmix}" = --no-pmix ] ||
    { echo "usage: slurm_test.sh COUNTER FAULT DIRECT [--no-pmix]" >&2; exit 2; }
counter=$1 fault=$2 direct=$3 pmix=1
[ $# -eq 4 ] && pmix=

skip() {
    echo "SKIP: slurm_test: $* (direct launch under srun is NOT tested)"
    exit 77
}
[ "$(id -u)" = 0 ] || skip "needs root (slurmd starts tasks as the submitting user)"
for cmd in slurmctld slurmd srun sinfo scancel munged; do
    command -v "$cmd" >/dev/null ||
        skip "$cmd not found (Debian: apt-get install slurmctld slurmd slurm-client munge)"
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/sdsm-slurm.XXXXXX") || exit 1
chmod 700 "$dir"
# srun and the tasks carry this tag in their environment (the daemons
# rewrite theirs for their process titles).
tag="sdsm-slurm-$$-$RANDOM$RANDOM"
export TEST_SLURM_TAG=$tag
export SLURM_CONF=$dir/slurm.conf
pids=()

# Processes of this run: those holding a file or a socket under $dir (the
# daemons, and each slurmstepd with its socket in the spool directory) and
# those with the tag.  One find and one grep, not a process per pid.
ours() {
    local socks=() i
    for i in $(awk -v d="$dir/" 'index($8, d) == 1 { print $7 }' /proc/net/unix 2>/dev/null); do
        socks+=(-o -lname "socket:\\[$i\\]")
    done
    {
        find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \( -lname "$dir/*" "${socks[@]}" \) 2>/dev/null
        grep -lxzF "TEST_SLURM_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null
    } | cut -d/ -f3 | sort -un
}

stop_daemons() {
    local p i
    [ ${#pids[@]} -gt 0 ] || return 0
    kill -TERM "${pids[@]}" 2>/dev/null
    for i in $(seq 50); do
        kill -0 "${pids[@]}" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    pids=()
}

cleanup() {
    local rc=$? left
    trap - EXIT INT TERM
    unset TEST_SLURM_TAG # what this shell runs from now on is not a leftover
    if [ ${#pids[@]} -gt 0 ]; then
        timeout 5 scancel --full --quiet --partition=sdsm 2>/dev/null
        # Each slurmstepd removes its socket from the spool when it ends.
        local i
        for i in $(seq 50); do
            compgen -G "$dir/spool/sdsmnode_*" >/dev/null || break
            sleep 0.1
        done
        stop_daemons
    fi
    left=$(ours)
    if [ -n "$left" ]; then
        echo "slurm_test: FAIL: processes left after the teardown:"
        ps -o pid,ppid,args -p "$(tr '\n' ',' <<<"$left" | sed 's/,$//')"
        kill -KILL $left 2>/dev/null
        rc=1
    fi
    if [ "$rc" != 0 ] && [ "$rc" != 77 ] && [ -d "$dir/log" ]; then
        for f in "$dir"/log/*; do
            echo "---- $(basename "$f") (last lines)"
            tail -n 15 "$f"
        done
    fi
    rm -rf "$dir"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A port nothing listens on now; a collision with a port taken between
# this check and the daemon's bind is caught below and retried.
free_port() {
    local p
    while :; do
        p=$((20000 + RANDOM % 20000))
        command -v ss >/dev/null && [ -n "$(ss -Htln "sport = :$p")" ] && continue
        echo "$p"
        return
    done
}

write_conf() {
    local cpus
    cpus=$(nproc)
    cat >"$SLURM_CONF" <<EOF
ClusterName=sdsmtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
TmpFS=$dir/tmp
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=2
NodeName=sdsmnode NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=sdsm Nodes=sdsmnode Default=YES MaxTime=2 State=UP OverSubscribe=FORCE
EOF
}

start_munge() {
    mkdir -p "$dir/log"
    head -c 1024 /dev/urandom >"$dir/munge.key"
    chmod 400 "$dir/munge.key"
    munged -F --force --socket="$dir/munge.socket" --key-file="$dir/munge.key" \
        --pid-file="$dir/munged.pid" --seed-file="$dir/munged.seed" </dev/null >>"$dir/log/munged.out" 2>&1 &
    pids+=($!)
    local i
    for i in $(seq 50); do
        [ -S "$dir/munge.socket" ] && return 0
        sleep 0.1
    done
    echo "slurm_test: FAIL: munged did not start"
    return 1
}

# Starts slurmctld and slurmd; 0 once the node is idle, 2 when a port was
# taken (try others), 1 on any other failure.
start_slurm() {
    rm -rf "$dir/state" "$dir/spool" "$dir/tmp"
    mkdir -p "$dir/state" "$dir/spool" "$dir/tmp"
    write_conf "$(free_port)" "$(free_port)"
    slurmctld -D -i -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
    local ctld=$!
    slurmd -D -N sdsmnode -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmd.out" 2>&1 &
    local sd=$!
    pids+=("$ctld" "$sd")
    local i state
    for i in $(seq 150); do
        # Before sinfo: whatever holds a taken port may never answer it.
        grep -qi "address already in use" "$dir"/log/slurm* && return 2
        state=$(timeout 3 sinfo -h -n sdsmnode -o %t 2>/dev/null)
        [ "$state" = idle ] && return 0
        if ! kill -0 "$ctld" 2>/dev/null || ! kill -0 "$sd" 2>/dev/null; then
            grep -qi "address already in use" "$dir"/log/slurm* && return 2
            echo "slurm_test: FAIL: a Slurm daemon exited during start-up"
            return 1
        fi
        sleep 0.1
    done
    echo "slurm_test: FAIL: the node is not idle after 15 s (state '$state')"
    return 1
}

t0=$(date +%s%N)
start_munge || exit 1
up=
for try in 1 2 3; do
    start_slurm
    case $? in
    0) up=1; break ;;
    2) echo "slurm_test: a port was taken, retrying with others"
       kill -KILL "${pids[@]:1}" 2>/dev/null
       for p in "${pids[@]:1}"; do wait "$p" 2>/dev/null; done
       pids=("${pids[0]}")
       : >"$dir/log/slurmctld.out"
       : >"$dir/log/slurmd.out" ;;
    *) exit 1 ;;
    esac
done
[ -n "$up" ] || { echo "slurm_test: FAIL: no free ports after 3 tries"; exit 1; }
plugins=$(srun --mpi=list 2>&1 | tr '\n' ' ')
if [ -n "$pmix" ] && ! grep -qw pmix <<<"$plugins"; then
    echo "slurm_test: this Slurm has no mpi/pmix plugin (srun --mpi=list: $plugins): the PMIx cases are NOT run"
    pmix=
fi
pmi2=1
if ! grep -qw pmi2 <<<"$plugins"; then
    echo "slurm_test: this Slurm has no mpi/pmi2 plugin (srun --mpi=list: $plugins): the PMI-2 cases are NOT run"
    pmi2=
fi
[ -n "$pmix$pmi2" ] || skip "neither the mpi/pmix nor the mpi/pmi2 plugin can be used"
echo "slurm_test: cluster up in $((($(date +%s%N) - t0) / 1000000)) ms"

failed=0
# run NAME [mp_expect options] -- SRUN_ARGS...: one job step, bounded by
# timeout (srun cancels its step when it is stopped).
run() {
    local name=$1
    shift
    local opts=()
    while [ "$1" != -- ]; do opts+=("$1"); shift; done
    shift
    echo "==== $name: srun $*"
    if bash "$expect" "${opts[@]}" -- timeout 30 srun --overcommit --time=1 "$@"; then
        echo "==== $name: PASS"
    else
        echo "==== $name: FAIL"
        failed=1
    fi
}

# One job of 4 ranks: "OK counter" printed once, not once per rank (four
# jobs of one would print it four times).
counter_once() {
    local name=$1 out n
    shift
    out=$(run "$name" --status 0 --expect '^OK counter$' --max-seconds 15 --no-leftovers -- "$@")
    echo "$out"
    grep -q "^==== $name: PASS" <<<"$out" || failed=1
    n=$(grep -c '^OK counter$' <<<"$out")
    [ "$n" = 1 ] || { echo "slurm_test: FAIL: $name: \"OK counter\" printed $n times, expected once"; failed=1; }
}
if [ -n "$pmix" ]; then
counter_once counter --mpi=pmix -n 4 "$counter" 200

run ranks --status 0 --expect '^OK direct$' --max-seconds 15 --no-leftovers \
    -- --mpi=pmix -n 4 "$direct" 4
# A rank that exits 3: the others stop, and srun names the task and its
# status.  srun's own status is the highest of the tasks': 3, or 137 when
# Slurm's PMIx plugin (which sees a client leave without PMIx_Finalize)
# cancels the step before the others are done (seen under ThreadSanitizer).
run exit3 --nonzero --expect 'rank 1 fails now' --expect 'task 1: Exited with exit code 3' \
    --max-seconds 15 --no-leftovers -- --mpi=pmix -n 4 "$fault" lock exit3
# A rank killed by a signal: non-zero, srun names the task.
run kill9 --nonzero --expect 'rank 1 fails now' --expect 'task 1: Killed' \
    --max-seconds 15 --no-leftovers -- --mpi=pmix -n 4 "$fault" barrier kill9
# A rank that exits before sdsm_init: srun leaves the others in the PMIx
# fence, which SDSM_TIMEOUT bounds; with -K (--kill-on-bad-exit) srun ends
# the step at once, as mpirun does.
run preinit --nonzero --expect 'rank 1 fails now' --expect 'PMIx_Fence over 4 ranks failed: TIMEOUT' \
    --max-seconds 12 --no-leftovers -- --export=ALL,SDSM_TIMEOUT=1 --mpi=pmix -n 4 "$fault" preinit exit3
run preinit_K --nonzero --expect 'rank 1 fails now' --reject 'PMIx_Fence' \
    --max-seconds 10 --no-leftovers -- -K --mpi=pmix -n 4 "$fault" preinit exit3
# sdsm_abort in one rank ends the whole step through PMIx_Abort.
run abort --nonzero --expect 'rank 3 stops the job on purpose' --reject '^OK direct$' \
    --max-seconds 15 --no-leftovers -- --mpi=pmix -n 4 "$direct" 4 abort
fi
# PMI-2 (Slurm's mpi/pmi2 plugin serves it over PMI_FD): the same job, a
# rank that exits 3 (srun names it), sdsm_abort ending the step through
# PMI-2's abort, a rank gone before sdsm_init bounded by SDSM_TIMEOUT.
if [ -n "$pmi2" ]; then
counter_once counter_pmi2 --mpi=pmi2 -n 4 "$counter" 200
run exit3_pmi2 --nonzero --expect 'rank 1 fails now' --expect 'task 1: Exited with exit code 3' \
    --max-seconds 15 --no-leftovers -- --mpi=pmi2 -n 4 "$fault" lock exit3
run abort_pmi2 --nonzero --expect 'rank 3 stops the job on purpose' --reject '^OK direct$' \
    --max-seconds 15 --no-leftovers -- --mpi=pmi2 -n 4 "$direct" 4 abort
run preinit_pmi2 --nonzero --expect 'rank 1 fails now' --expect 'PMI-2 .*within 1 s \(SDSM_TIMEOUT\)' \
    --max-seconds 12 --no-leftovers -- --export=ALL,SDSM_TIMEOUT=1 --mpi=pmi2 -n 4 "$fault" preinit exit3
fi
# srun without an MPI plugin is refused by every rank, never run as jobs of one.
run none --nonzero --expect 'rank 1: started by srun as one of 2 tasks without PMIx or PMI-2' \
    --reject '^OK direct$' --max-seconds 15 --no-leftovers -- --mpi=none -n 2 "$direct" 2

echo "slurm_test: all steps done in $((($(date +%s%N) - t0) / 1000000)) ms"
if [ "$failed" = 0 ]; then
    echo "PASS: slurm_test"
    exit 0
fi
echo "FAIL: slurm_test"
exit 1
