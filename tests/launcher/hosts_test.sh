#!/usr/bin/env bash
# hosts_test.sh - sdsmrun with ranks on several hosts (--hosts, --hostfile,
# --map-by, -x, agents), one case per ctest test.
#
#   hosts_test.sh CASE SDSMRUN FAKE_RANK MP_COUNTER MP_STENCIL
#
# The "hosts" are this machine: fakersh (next to this script) is the remote
# shell, and runs the agent's command here the way ssh would run it there.
# Each case checks exit status, messages, placement, the time a stop takes
# and that no process of the job is left behind.
set -u

CASE=$1 SDSMRUN=$2 FAKE=$3 COUNTER=$4 STENCIL=$5
HERE=$(cd "$(dirname "$0")" && pwd)
RSH=$HERE/fakersh
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsmrun-hosts.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out ERR=$TMP/err
export FAKERSH_LOG=$TMP/rsh.log
TAG="sdsmtest-$$-$RANDOM" # unique word on every rank's command line
ulimit -c 0
unset SDSM_RSH
LEFTOVER_SETTLE=0.2 # agents stop their ranks after the launcher has gone
. "$HERE/testlib.sh"

# run ARGS...: sdsmrun --rsh fakersh --timeout 9 ARGS, with status, output and wall time.
run() {
    local t0 t1
    : >"$FAKERSH_LOG"
    t0=$(date +%s%N)
    "$SDSMRUN" --rsh "$RSH" --timeout 9 "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
}

# The remote shell was asked for exactly these hosts (sorted, one each).
expect_rsh_hosts() {
    local got
    got=$(sort "$FAKERSH_LOG" | tr '\n' ' ')
    [ "$got" = "$1 " ] || fail "remote shell started for '$got', expected '$1 '"
}
# expect_placement "0:a 1:b ...": what each rank saw in SDSM_HOST.
expect_placement() {
    local p
    for p in $1; do
        grep -qx "rank ${p%%:*} on ${p#*:}" "$OUT" || fail "rank ${p%%:*} did not run on ${p#*:}"
    done
    [ "$(grep -c '^rank ' "$OUT")" -eq "$(echo $1 | wc -w)" ] || fail "wrong number of ranks ran"
}
WHERE='echo "rank $SDSM_RANK on $SDSM_HOST"'

# The mp programs, on the runtime, with two ranks on each of two agent hosts.
case_mp() {
    run -n 4 --hosts a:2,b:2 "$COUNTER" 200 "$TAG"
    expect_rc 0
    expect_out "OK counter"
    expect_rsh_hosts "a b"
    run -n 4 --hosts a:2,localhost:2 --map-by node "$STENCIL" 64 1024 20 "$TAG"
    expect_rc 0
    expect_out "OK stencil"
    expect_rsh_hosts "a"
    expect_no_leftovers
}

case_placement() {
    run -n 4 --hosts a:2,b:2 sh -c "$WHERE" "$TAG"
    expect_rc 0
    expect_placement "0:a 1:a 2:b 3:b"
    run -n 4 --hosts a:2,b:2 --map-by node sh -c "$WHERE" "$TAG"
    expect_rc 0
    expect_placement "0:a 1:b 2:a 3:b"
    # Round-robin skips full hosts; a name given twice adds its slots.
    run -n 5 --hosts a,b:3,a --map-by node sh -c "$WHERE" "$TAG"
    expect_rc 0
    expect_placement "0:a 1:b 2:a 3:b 4:b"
    expect_rsh_hosts "a b"
    # This machine runs its own ranks: no remote shell for it.
    run -n 3 --hosts localhost,c:2 --tag-output sh -c "$WHERE" "$TAG"
    expect_rc 0
    expect_out "[0] rank 0 on localhost"
    expect_out "[1] rank 1 on c"
    expect_out "[2] rank 2 on c"
    expect_rsh_hosts "c"
    # Lines of remote ranks stay whole, and so does an unfinished last line.
    run -n 4 --hosts a:2,b:2 sh -c 'i=0; while [ $i -lt 200 ]; do echo "line $i of rank $SDSM_RANK"; i=$((i+1)); done; printf "tail $SDSM_RANK"' "$TAG"
    expect_rc 0
    # (An unfinished line is passed on as it is: another rank's may follow it on its line.)
    [ "$(grep -cE '^(tail [0-3])*line [0-9]+ of rank [0-3]$' "$OUT")" -eq 800 ] || fail "lines were lost or mixed"
    for r in 0 1 2 3; do grep -q "tail $r" "$OUT" || fail "rank $r's unfinished line was lost"; done
}

case_env() {
    FOO=from-here run -n 4 --hosts a:2,b:2 --stats -x FOO -x BAR='b a z' sh -c \
        'echo "rank $SDSM_RANK: $FOO|$BAR|$SDSM_STATS|$SDSM_NPROCS|${#SDSM_JOB_KEY}|$SDSM_LOG"
         echo "$SDSM_JOB_KEY" >"$0/key"; ps -eo args >"$0/ps.$SDSM_RANK"' "$TMP" "$TAG"
    expect_rc 0
    for r in 0 1 2 3; do
        expect_out "rank $r: from-here|b a z|1|4|64|"
    done
    # The job key is on no command line while the agents run (grep -f: nor on grep's).
    grep -q "sdsmrun --agent b" "$TMP/ps.2" "$TMP/ps.3" || fail "the agents were not seen running"
    grep -qF -f "$TMP/key" "$TMP"/ps.* && fail "the job key is on a command line"
    SDSM_LOG=info run -n 2 --hosts a,b sh -c 'echo "log=$SDSM_LOG"' "$TAG"
    expect_rc 0
    [ "$(grep -c '^log=info$' "$OUT")" -eq 2 ] || fail "SDSM_LOG did not reach the remote ranks"
    run -n 2 --hosts a,b -x NOT_SET_ANYWHERE_"$RANDOM" true
    expect_rc 2
    expect_err "is not set here"
    # -x values are checked like the environment's own SDSM_* before anything starts.
    run -n 2 --hosts a,b -x SDSM_PROTOCOL=bogus true
    expect_rc 2
    expect_err "SDSM_PROTOCOL=bogus"
    [ ! -s "$FAKERSH_LOG" ] || fail "a remote shell was started despite a bad -x value"
}

case_host_down() {
    run -n 4 --hosts a,down,c,d "$FAKE" "tag=$TAG" ok
    [ "$RC" -ne 0 ] || fail "exit status 0 with a host down"
    expect_err "sdsmrun: host down: the remote shell '$RSH' failed before the agent started"
    expect_faster 5000
    expect_no_leftovers
    # The program is missing there (not on its PATH).
    PATH=$(dirname "$FAKE"):$PATH run -n 4 --hosts a,nopath,c,d "$(basename "$FAKE")" "tag=$TAG" ok
    expect_rc 127
    expect_err "sdsmrun: host nopath: cannot run '$(basename "$FAKE")': No such file or directory"
    expect_faster 5000
    expect_no_leftovers
    # An agent that never answers fails the job within the set-up time.
    SDSM_TIMEOUT=1 run -n 2 --hosts a,hang "$FAKE" "tag=$TAG" ok
    [ "$RC" -ne 0 ] || fail "exit status 0 with a silent host"
    expect_err "sdsmrun: host hang: no word from its agent through '$RSH' within 1 s"
    expect_faster 5000
    expect_no_leftovers
    # What comes back from a host is checked before it is believed.
    run -n 2 --hosts a,garbage "$FAKE" "tag=$TAG" ok
    expect_rc 1
    expect_err "sdsmrun: host garbage: its agent sent a bad message (type 90, rank "
    expect_faster 5000
    expect_no_leftovers
}

case_rank_killed() {
    run -n 4 --hosts a:2,b:2 "$FAKE" "tag=$TAG" rankdo 2 segv
    expect_rc 139
    expect_err "sdsmrun: rank 2 (pid "
    expect_err " on host b) killed by signal 11"
    expect_faster 5000
    expect_no_leftovers
    # Killed from outside while the others wait in the job.
    "$SDSMRUN" --rsh "$RSH" --timeout 9 -n 4 --hosts a:2,b:2 "$FAKE" "tag=$TAG" hang >"$OUT" 2>"$ERR" &
    local pid=$! victim="" i
    for i in $(seq 50); do
        victim=$(pgrep -f -- "$FAKE tag=$TAG hang" | while read -r p; do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'SDSM_RANK=3' && echo "$p"; done | head -1)
        [ -n "$victim" ] && break
        sleep 0.1
    done
    [ -n "$victim" ] || fail "rank 3 never started"
    sleep 0.3
    kill -KILL "$victim"
    wait "$pid"
    RC=$?
    expect_rc 137
    expect_err "sdsmrun: rank 3 (pid $victim on host b) killed by signal 9"
    expect_no_leftovers
}

# agent_pid HOST: the pid of this test's agent for HOST (sdsmrun --agent HOST).
agent_pid() {
    local p
    for p in $(pgrep -f -- "--agent $1 .*$TAG"); do
        [ "$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -1 | sed 's|.*/||')" = sdsmrun ] &&
            echo "$p" && return
    done
}
# start_hang HOSTS: a job of 4 hanging ranks in the background (PID), up and
# running (AGENT: host b's agent, or cutb's); SDSM_PEER_TIMEOUT=2.
start_hang() {
    local i host=${1##*,}
    host=${host%%:*}
    T0=$(date +%s%N)
    SDSM_PEER_TIMEOUT=2 "$SDSMRUN" --rsh "$RSH" --timeout 20 -n 4 --hosts "$1" "$FAKE" "tag=$TAG" hang \
        >"$OUT" 2>"$ERR" </dev/null &
    PID=$! AGENT=
    for i in $(seq 50); do
        AGENT=$(agent_pid "$host")
        [ -n "$AGENT" ] && [ "$(pgrep -f -- "$FAKE tag=$TAG hang" | wc -l)" -ge 4 ] && break
        sleep 0.1
    done
    [ -n "$AGENT" ] || fail "the agent for $host never started"
    sleep 0.3
}
# finish_hang: wait for the launcher; RC, and MS since the failure (T0 reset by the caller).
finish_hang() {
    wait "$PID"
    RC=$?
    MS=$((($(date +%s%N) - T0) / 1000000))
}

# An agent stopped by SIGSTOP (its ranks run on): its silence is noticed
# within the peer timeout, the host named, and every process goes.
case_agent_stopped() {
    start_hang a:2,b:2
    kill -STOP "$AGENT"
    T0=$(date +%s%N)
    finish_hang
    expect_rc 1
    expect_err "sdsmrun: host b: no word from its agent"
    expect_err "(SDSM_PEER_TIMEOUT)"
    expect_faster 7000
    expect_no_leftovers
}

# An agent killed: the host is named at once, its ranks die with it.
case_agent_killed() {
    start_hang a:2,b:2
    kill -KILL "$AGENT"
    T0=$(date +%s%N)
    finish_hang
    expect_rc 1
    expect_err "sdsmrun: host b: its agent (pid"
    expect_err "with 2 rank(s) still running"
    expect_faster 5000
    expect_no_leftovers
}

# The connection to a host dies without a word (both relays stopped): the
# launcher names the host within the peer timeout, and the agent, out of the
# launcher's reach, hears nothing more either: it stops its ranks and exits.
case_link_cut() {
    local rsh relays i
    start_hang a:2,cutb:2
    rsh=$(pgrep -f -- "fakersh cutb .*$TAG" | head -1)
    relays=$(pgrep -P "$rsh" -x cat | tr '\n' ' ')
    [ "$(echo $relays | wc -w)" -eq 2 ] || fail "expected 2 relays of host cutb, found '$relays'"
    kill -STOP $relays
    T0=$(date +%s%N)
    finish_hang
    expect_rc 1
    expect_err "sdsmrun: host cutb: no word from its agent"
    expect_faster 7000
    for i in $(seq 70); do
        kill -0 "$AGENT" 2>/dev/null || break
        sleep 0.1
    done
    MS=$((($(date +%s%N) - T0) / 1000000))
    kill -0 "$AGENT" 2>/dev/null && fail "the agent of host cutb still runs $MS ms after the cut"
    [ -z "$(pgrep -f -- "$FAKE tag=$TAG hang")" ] || fail "ranks of host cutb outlived their agent"
    kill -KILL $relays 2>/dev/null
    expect_no_leftovers
}

# The launcher dies without a word: the agents see their stdin close and stop their ranks.
case_launcher_killed() {
    set -m
    "$SDSMRUN" --rsh "$RSH" -n 4 --hosts a:2,b:2 "$FAKE" "tag=$TAG" hang >"$OUT" 2>"$ERR" </dev/null &
    local pid=$!
    sleep 0.7
    kill -KILL "$pid"
    wait "$pid"
    set +m
    sleep 0.5
    expect_no_leftovers
    # And a plain SIGTERM stops the job on every host.
    "$SDSMRUN" --rsh "$RSH" -n 4 --hosts a:2,b:2 "$FAKE" "tag=$TAG" hang >"$OUT" 2>"$ERR" </dev/null &
    pid=$!
    sleep 0.7
    kill -TERM "$pid"
    wait "$pid"
    RC=$?
    expect_rc 143
    expect_no_leftovers
}

case_hostfile() {
    cat >"$TMP/hosts" <<EOF
# the test cluster

a slots=2   # two ranks
b
	c slots=3
EOF
    run -n 6 --hostfile "$TMP/hosts" sh -c "$WHERE" "$TAG"
    expect_rc 0
    expect_placement "0:a 1:a 2:b 3:c 4:c 5:c"
    run -n 7 --hostfile "$TMP/hosts" sh -c "$WHERE" "$TAG"
    expect_rc 2
    expect_err "sdsmrun: 7 ranks need 7 slots, but the hosts have only 6; no rank was started"
    [ ! -s "$FAKERSH_LOG" ] || fail "a remote shell was started although the slots were too few"
    printf 'a slots=2\n\nb slots=two\n' >"$TMP/bad"
    run -n 2 --hostfile "$TMP/bad" true
    expect_rc 2
    expect_err "sdsmrun: $TMP/bad:3: expected 'host [slots=N]'"
    printf 'a\nb cpus=4\n' >"$TMP/bad"
    run -n 2 --hostfile "$TMP/bad" true
    expect_rc 2
    expect_err "$TMP/bad:2:"
    run -n 2 --hostfile "$TMP/missing" true
    expect_rc 2
    expect_err "--hostfile: cannot open '$TMP/missing'"
    local args
    while IFS= read -r args; do
        # shellcheck disable=SC2086 # word splitting of the argument list is wanted
        run $args
        [ "$RC" -eq 2 ] || fail "'sdsmrun $args' exited $RC, expected 2"
    done <<EOF
-n 2 --hosts a:0 true
-n 2 --hosts a:x true
-n 2 --hosts a,,b true
-n 2 --hosts :2 true
-n 2 --hosts a --hostfile /dev/null true
-n 2 --hosts a,b --map-by core true
-n 2 --hosts a,b --map-by ppr:0:node true
EOF
}

case_help() {
    "$SDSMRUN" --help >"$OUT" 2>"$ERR"
    RC=$?
    expect_rc 0
    for w in --hosts --hostfile --map-by --rsh --prefix "-x NAME" SDSM_RSH SDSM_HOST; do
        expect_out "$w"
    done
}

# A rank on another host that fails by itself, after starting children (in
# its process group and in a session of its own): nothing of the job is
# left on any host, every time (the agent used to leave before it had
# signalled them, in 5 of 10 runs).  And none after a job that succeeds.
case_leftovers() {
    local i kids='sh -c "sleep 30; :" "$0" & setsid sh -c "sleep 30; :" "$0" &'
    for i in 1 2 3 4 5 6; do
        run -n 2 --hosts a,b sh -c "$kids"' [ "$SDSM_RANK" = 1 ] && exit 4; sleep 5' "$TAG"
        expect_rc 4
        expect_no_leftovers
    done
    run -n 3 --hosts localhost,a,b sh -c "$kids"' echo "rank $SDSM_RANK"' "$TAG"
    expect_rc 0
    expect_out "rank 2"
    expect_no_leftovers
}

# The job key travels only on the agent's stdin: not in the remote shell's
# environment (which ssh's SendEnv would pass on), even when one is
# inherited from an enclosing job; the ranks still get it.
case_key_env() {
    export FAKERSH_ENVLOG=$TMP/env
    SDSM_JOB_KEY=from-an-enclosing-job run -n 3 --hosts localhost,a,b sh -c \
        'echo "rank $SDSM_RANK: ${#SDSM_JOB_KEY}"; tr "\0" "\n" </proc/$PPID/environ >"$0/agent.$SDSM_RANK"' "$TMP" "$TAG"
    unset FAKERSH_ENVLOG
    expect_rc 0
    for r in 0 1 2; do
        expect_out "rank $r: 64"
    done
    [ -s "$TMP/env.a" ] && [ -s "$TMP/env.b" ] || fail "the remote shell's environment was not logged"
    grep -l SDSM_JOB_KEY "$TMP"/env.* && fail "SDSM_JOB_KEY is in the remote shell's environment"
    grep -q "^SDSM_NPROCS=" "$TMP/env.a" || fail "the environment log misses what sdsmrun sets"
    grep -l SDSM_JOB_KEY "$TMP/agent.1" "$TMP/agent.2" && fail "SDSM_JOB_KEY is in an agent's environment"
}

# A remote shell that prints a banner before the agent: skipped (shown with
# --verbose); without an agent after it, the job fails quoting it.
case_banner() {
    run -v -n 3 --hosts a,bannerb,bannerc sh -c 'echo "rank $SDSM_RANK"' "$TAG"
    expect_rc 0
    for r in 0 1 2; do
        expect_out "rank $r"
    done
    expect_err "sdsmrun: host bannerb: the remote shell printed 'Welcome to bannerb!   Last login: today' before the agent started"
    expect_no_err "bad message"
    run -n 2 --hosts a,bannerdownb "$FAKE" "tag=$TAG" ok
    expect_rc 1
    expect_err "sdsmrun: unexpected output from the remote shell on host bannerdownb: 'Welcome to bannerdownb! Unauthorized access prohibited.'; it exited with status 1 before the agent started"
    expect_faster 5000
    expect_no_leftovers
    SDSM_TIMEOUT=1 run -n 2 --hosts a,bannerhangb "$FAKE" "tag=$TAG" ok
    expect_rc 1
    expect_err "sdsmrun: unexpected output from the remote shell on host bannerhangb: 'Welcome to bannerhangb!'; no agent answered"
    expect_faster 5000
    expect_no_leftovers
}

run_case
