#!/usr/bin/env bash
# habits_test.sh - sdsmrun taking what mpirun and srun users type: -np,
# -H, -N, --map-by ppr, --bind-to, --report-bindings, --display-map, MPMD
# with ':', other launchers' options, SIGUSR1/SIGUSR2, a Slurm allocation's
# nodes, rank 0's input and --output-filename on other hosts, the
# out-of-memory killer and --info.  One case per ctest test.
#
#   habits_test.sh CASE SDSMRUN FAKE_RANK
#
# "Other hosts" are this machine through fakersh, as in hosts_test.sh.
set -u

CASE=$1 SDSMRUN=$2 FAKE=$3
HERE=$(cd "$(dirname "$0")" && pwd)
RSH=$HERE/fakersh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsmrun-habits.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out ERR=$TMP/err
export FAKERSH_LOG=$TMP/rsh.log
TAG="sdsmtest-$$-$RANDOM" # unique word on every rank's command line
ulimit -c 0
unset SDSM_RSH SLURM_JOB_NODELIST SLURM_NODELIST SLURM_TASKS_PER_NODE SLURM_JOB_CPUS_PER_NODE
LEFTOVER_SETTLE=0.2
. "$HERE/testlib.sh"

# run ARGS...: sdsmrun --rsh fakersh --timeout 9 ARGS; IN=FILE: its stdin.
run() {
    local t0 t1
    : >"$FAKERSH_LOG"
    t0=$(date +%s%N)
    "$SDSMRUN" --rsh "$RSH" --timeout 9 "$@" >"$OUT" 2>"$ERR" <"${IN:-/dev/null}"
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
}

# expect_lines "A B ...": stdout holds exactly these lines, in any order.
expect_lines() {
    local want got
    want=$(printf '%s\n' "$@" | sort)
    got=$(sort "$OUT")
    [ "$want" = "$got" ] || fail "stdout is '$(echo $got)', expected '$(echo $want)'"
}

# expect_usage_errors: each line of stdin is "ARGS|TEXT": status 2, TEXT on stderr.
expect_usage_errors() {
    local line args text
    while IFS= read -r line; do
        args=${line%%|*} text=${line#*|}
        # shellcheck disable=SC2086 # word splitting of the argument list is wanted
        run $args
        [ "$RC" -eq 2 ] || fail "'sdsmrun $args' exited $RC, expected 2"
        grep -qF -- "$text" "$ERR" || fail "'sdsmrun $args' did not say '$text': $(head -1 "$ERR")"
    done
}

WHO='echo "$SDSM_RANK/$SDSM_NPROCS"'

case_np() {
    local form
    for form in "-np 3" "-np=3" "--np 3" "-nprocs 3"; do
        # shellcheck disable=SC2086
        run $form sh -c "$WHO" "$TAG"
        expect_rc 0
        expect_lines 0/3 1/3 2/3
    done
    # The hosts say how many without -n; -N caps each host.
    run -host localhost,localhost sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_lines 0/2 1/2
    run -H localhost:5 -N 2 sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_lines 0/2 1/2
    run --map-by ppr:3:node sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_lines 0/3 1/3 2/3
    # Only whole long names take one dash: a cluster of short ones stays one.
    run -st 5 -n 1 sh -c 'echo "stats=$SDSM_STATS"'
    expect_rc 0
    expect_lines stats=1
    run -np 2 "$FAKE" "tag=$TAG" ok
    expect_rc 0
    expect_out "rank 1 of 2 ok"
    expect_usage_errors <<EOF
-n 3 -N 2 true|3 ranks do not fit 2 per host on 1 host(s)
-N 0 true|-N: '0' is not a number of ranks per host
--map-by ppr:x:node true|'x' is not a number of ranks per host
--map-by ppr:2:socket true|--map-by 'ppr:2:socket': expected slot, node or ppr:N:node
--map-by core true|expected slot, node or ppr:N:node
-H a --hostfile /dev/null -n 1 true|give --hosts (-H) or --hostfile, not both
EOF
}

case_foreign() {
    expect_usage_errors <<'EOF'
--machinefile hosts -n 2 true|unknown option '--machinefile' (mpirun's; sdsmrun spells it --hostfile FILE)
-machinefile hosts -n 2 true|unknown option '-machinefile' (mpirun's; sdsmrun spells it --hostfile FILE)
-ppn 2 -n 2 true|unknown option '-ppn' (mpiexec's; sdsmrun spells it -N N
--npernode 2 -n 2 true|unknown option '--npernode' (mpirun's; sdsmrun spells it -N N
--ntasks-per-node=2 true|unknown option '--ntasks-per-node' (srun's
--ntasks=4 true|unknown option '--ntasks' (srun's; sdsmrun spells it -n N)
--oversubscribe -n 2 true|(an option sdsmrun does not need: without --hosts
-mca btl self -n 2 true|unknown option '-mca' (an option sdsmrun does not need: sdsm is tuned by SDSM_*
-c 4 -n 2 true|unknown option '-c' (srun's --cpus-per-task
-w a,b -n 2 true|unknown option '-w' (srun's --nodelist; sdsmrun spells it --hosts
--nodelist=a,b -n 2 true|unknown option '--nodelist' (srun's
-wdir /tmp -n 2 true|unknown option '-wdir' (an option sdsmrun does not need
--tag-ouput -n 2 true|unknown option '--tag-ouput' (did you mean --tag-output?)
--timout 3 -n 2 true|unknown option '--timout' (did you mean --timeout?)
--out d -n 2 true|option '--out' is ambiguous: it may be --output-filename, --output
--frobnicate -n 2 true|unknown option '--frobnicate'
EOF
    grep -qF "did you mean" "$ERR" && fail "a 'did you mean' for an option like none of sdsmrun's"
    # A program's own options are its own, a ':' after "--" an argument.
    run -n 1 -- sh -c 'echo "$@"' x -c 4 : --mca
    expect_rc 0
    expect_lines "-c 4 : --mca"
}

case_bind() {
    run -n 2 --bind-to core --report-bindings sh -c 'echo "$SDSM_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
    expect_rc 0
    local r cpu
    for r in 0 1; do
        cpu=$(sed -n "s/^$r //p" "$OUT")
        case $cpu in
        *[!0-9]* | "") fail "rank $r may run on CPUs '$cpu', not one" ;;
        esac
        expect_err "] rank $r bound to CPU $cpu: ["
    done
    run -n 2 --bind-to none --report-bindings true
    expect_rc 0
    expect_count 2 "is not bound (runs on any of its"
    run -n 2 true
    expect_quiet
    expect_usage_errors <<EOF
-n 2 --bind-to socket true|--bind-to 'socket': expected core or none
EOF
}

case_display_map() {
    run -n 3 -H localhost:2,"$(hostname)" --display-map sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_err "sdsmrun: job map: 3 rank(s) on 2 host(s)"
    expect_err "host localhost: 2 rank(s), 2 slot(s), this machine"
    expect_err "rank 2: sh ..."
    [ "$(grep -c '    rank ' "$ERR")" -eq 3 ] || fail "the map does not list 3 ranks"
}

case_mpmd() {
    run -n 1 sh -c 'echo "A $SDSM_RANK/$SDSM_NPROCS"' : -np 2 sh -c 'echo "B $SDSM_RANK/$SDSM_NPROCS $0"' arg
    expect_rc 0
    expect_lines "A 0/3" "B 1/3 arg" "B 2/3 arg"
    # One job on the runtime's rendezvous: every rank registers with the same launcher.
    run -n 2 "$FAKE" "tag=$TAG" ok : -n 1 "$FAKE" "tag=$TAG" ok
    expect_rc 0
    expect_out "rank 2 of 3 ok"
    expect_usage_errors <<EOF
-n 1 true :|nothing after ':' (program 2)
-n 1 : -n 1 true|':' with no program before it
-n 1 true : true|program 2 (after ':'): expected -n N before 'true'
-n 1 true : -n 2|program 2 (after ':'): -n 2 but no program
-n 1 true : -n x true|program 2 (after ':'): invalid number of ranks 'x'
-n 1 true : -n 1 -x A true|only -n N may come before the program, not '-x'
true : -n 1 true|with ':' every program needs its own -n N; the first, 'true', has none
EOF
    run -n 1 true : -n 1 /nonexistent/prog
    expect_rc 127
    expect_err "cannot run '/nonexistent/prog'"
}

# SIGUSR1/SIGUSR2 to sdsmrun reach every rank (here and through an agent),
# and the job goes on.
usr_job() {
    rm -f "$TMP"/ready.*
    "$SDSMRUN" --rsh "$RSH" --timeout 9 "$@" sh -c '
        trap "echo usr2 \$SDSM_RANK" USR2
        trap "echo usr1 \$SDSM_RANK; exit 0" USR1
        touch "$0/ready.$SDSM_RANK"
        while :; do sleep 0.05; done' "$TMP" "$TAG" >"$OUT" 2>"$ERR" </dev/null &
    local pid=$! i
    for ((i = 0; i < 150; i++)); do
        [ "$(ls "$TMP" | grep -c '^ready\.')" -ge 3 ] && break
        sleep 0.05
    done
    kill -USR2 "$pid"
    sleep 0.3
    kill -USR1 "$pid"
    wait "$pid"
    RC=$?
}

case_sigusr() {
    usr_job -n 3
    expect_rc 0
    expect_lines "usr2 0" "usr2 1" "usr2 2" "usr1 0" "usr1 1" "usr1 2"
    usr_job -n 3 --hosts localhost,a:2
    expect_rc 0
    expect_lines "usr2 0" "usr2 1" "usr2 2" "usr1 0" "usr1 1" "usr1 2"
    expect_no_leftovers
}

case_slurm() {
    SLURM_JOB_NODELIST=$(hostname) SLURM_TASKS_PER_NODE=3 run --verbose sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_err "inside a Slurm allocation: the ranks go to its 1 host(s), $(hostname)"
    expect_err "slots from SLURM_TASKS_PER_NODE=3"
    [ "$(grep -c / "$OUT")" -eq 3 ] || fail "not 3 ranks"
    # This machine by its name with a domain, or without one, runs its ranks itself.
    local me other
    me=$(hostname)
    case $me in
    *.*) other=${me%%.*} ;;
    *) other=$me.cluster.example ;;
    esac
    SLURM_JOB_NODELIST=$other SLURM_TASKS_PER_NODE=2 run sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_lines 0/2 1/2
    [ ! -s "$FAKERSH_LOG" ] || fail "a remote shell was started for this machine as '$other'"
    SLURM_NODELIST=localhost SLURM_JOB_CPUS_PER_NODE=2 run -n 2 sh -c "$WHO" "$TAG"
    expect_rc 0
    expect_lines 0/2 1/2
    SLURM_JOB_NODELIST=localhost SLURM_TASKS_PER_NODE=2 run -n 3 true
    expect_rc 2
    expect_err "3 ranks need 3 slots, but the hosts have only 2"
    # Other hosts of the allocation get agents; --hosts wins over it.
    SLURM_JOB_NODELIST="a[1-2],localhost" SLURM_TASKS_PER_NODE="2(x2),1" run sh -c \
        'echo "$SDSM_RANK on $SDSM_HOST"' "$TAG"
    expect_rc 0
    expect_lines "0 on a1" "1 on a1" "2 on a2" "3 on a2" "4 on localhost"
    SLURM_JOB_NODELIST="down[1-4]" run -n 2 --hosts localhost:2 true
    expect_rc 0
    SLURM_JOB_NODELIST="node[1-" run -n 1 true
    expect_rc 2
    expect_err "the Slurm host list 'node[1-': '[' without its ']'"
    SLURM_JOB_NODELIST="n[1-2]" SLURM_TASKS_PER_NODE="2(x3)" run -n 1 true
    expect_rc 2
    expect_err "SLURM_TASKS_PER_NODE: '2(x3)' gives 3 count(s) for 2 host(s)"
}

# Rank 0 on another host reads sdsmrun's stdin; --output-filename holds the
# files of remote ranks too.
case_remote_io() {
    seq 1 30000 >"$TMP/in"
    IN=$TMP/in run -n 3 --hosts a,b,localhost sh -c '[ "$SDSM_RANK" = 0 ] && md5sum; echo "rank $SDSM_RANK"' "$TAG"
    expect_rc 0
    expect_out "$(md5sum <"$TMP/in")"
    expect_out "rank 2"
    # Rank 0 that reads nothing still ends; one that reads stops at the end.
    IN=$TMP/in run -n 2 --hosts a,b sh -c 'echo "rank $SDSM_RANK"' "$TAG"
    expect_rc 0
    local d=$TMP/of r
    IN=$TMP/in run -n 3 --hosts a,localhost,b --output-filename "$d" sh -c \
        'echo "out $SDSM_RANK"; echo "err $SDSM_RANK" >&2; if [ "$SDSM_RANK" = 0 ]; then wc -l; fi' "$TAG"
    expect_rc 0
    [ ! -s "$OUT" ] || fail "output reached sdsmrun's stdout too"
    for r in 0 1 2; do
        grep -qx "out $r" "$d/rank.$r/stdout" 2>/dev/null || fail "rank.$r/stdout lacks its line"
        [ "$(cat "$d/rank.$r/stderr" 2>/dev/null)" = "err $r" ] || fail "rank.$r/stderr is wrong"
    done
    grep -qx 30000 "$d/rank.0/stdout" || fail "remote rank 0 did not read all of its input"
    expect_no_leftovers
}

case_remote_bind() {
    run -n 3 --hosts localhost,a:2 --bind-to core --report-bindings -N 2 true
    expect_rc 0
    expect_err "[a:"
    expect_count 3 "bound to CPU"
    expect_err "] rank 1 bound to CPU"
}

case_oom_hint() {
    local hosts
    for hosts in localhost:2 localhost,a; do
        run -n 2 --hosts "$hosts" sh -c '[ "$SDSM_RANK" = 1 ] && kill -9 $$; sleep 2' "$TAG"
        expect_rc 137
        expect_err "sdsmrun: rank 1 (pid "
        expect_err "killed by signal 9 (Killed) (SIGKILL: out of memory? see dmesg)"
    done
    expect_no_leftovers
}

# A rank the out-of-memory killer ends is named so.  Needs a memory cgroup
# of our own with a limit (root, a writable cgroup tree): else skipped.
case_oom_cgroup() {
    local base cg limit
    base=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' /proc/self/cgroup)
    if [ -n "$base" ]; then # cgroup v1's memory controller
        cg=/sys/fs/cgroup/memory${base%/}/sdsmtest-$$ limit=memory.limit_in_bytes
    else
        base=$(sed -n 's/^0:://p' /proc/self/cgroup)
        cg=/sys/fs/cgroup${base%/}/sdsmtest-$$ limit=memory.max
    fi
    if ! mkdir "$cg" 2>/dev/null || ! echo 64M >"$cg/$limit" 2>/dev/null; then
        rmdir "$cg" 2>/dev/null
        echo "SKIP [oom_cgroup]: cannot make a memory cgroup with a limit here (needs root and cgroup access)"
        exit 77
    fi
    { echo 64M >"$cg/memory.memsw.limit_in_bytes" || echo 0 >"$cg/memory.swap.max"; } 2>/dev/null
    # Rank 1 here, then on another host (whose agent tells).
    local hosts
    for hosts in localhost:2 localhost,a; do
        sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -n 2 --hosts "$3" --rsh "$4" --timeout 20 sh -c \
            "[ \"\$SDSM_RANK\" = 1 ] && exec awk \"BEGIN { s = \\\"x\\\"; while (1) s = s s }\"; sleep 3"' \
            sh "$cg" "$SDSMRUN" "$hosts" "$RSH" >"$OUT" 2>"$ERR"
        RC=$?
        expect_rc 137
        expect_err "killed by signal 9 (Killed): the out-of-memory killer ended it (cgroup "
        expect_err "memory ran out"
    done
    rmdir "$cg"
}

case_info() {
    "$SDSMRUN" --info >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    expect_out "Direct launch (mpirun or srun starts the ranks, without sdsmrun):"
    expect_out "PMI-2: yes"
    if [ "${SDSM_TEST_HAVE_PMIX:-OFF}" = ON ]; then
        expect_out "PMIx:  yes"
    else
        expect_out "PMIx:  no (built without it"
    fi
    "$SDSMRUN" --help >"$OUT" 2>"$ERR"
    for w in -np -H --host -N "ppr:N:node" "--bind-to core|none" --report-bindings --display-map \
        "-n 1 ./a : -n 3 ./b" SIGUSR1 SLURM_JOB_NODELIST --machinefile "out-of-memory"; do
        expect_out "$w"
    done
}

run_case
