#!/usr/bin/env bash
# launcher_test.sh - behaviour tests of sdsmrun, one case per ctest test.
#
#   launcher_test.sh CASE SDSMRUN FAKE_RANK STRANGER
#
# Each case runs the launcher on the fake rank (or a plain program) and
# checks the exit status, the messages, how long the stop took and that no
# process of the job is left behind.
set -u

CASE=$1 SDSMRUN=$2 FAKE=$3 STRANGER=$4
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsmrun-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out ERR=$TMP/err
TAG="sdsmtest-$$-$RANDOM" # unique word on every rank's command line
RC=0 MS=0
FAILED=0
ulimit -c 0

fail() {
    echo "FAIL [$CASE]: $*"
    FAILED=1
}

# run ARGS... : sdsmrun ARGS, recording exit status, output and wall time.
run() {
    local t0 t1
    t0=$(date +%s%N)
    "$SDSMRUN" "$@" >"$OUT" 2>"$ERR" </dev/null
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
}

# run_job ARGS...: run, with a time limit first so a launcher that hangs fails
# fast as 124 (a later --timeout among ARGS wins).
run_job() { run --timeout 9 "$@"; }

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr lacks '$1'"; }
expect_out() { grep -qF -- "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_no_err() { grep -qF -- "$1" "$ERR" && fail "stderr has '$1'"; }
expect_quiet() { [ ! -s "$ERR" ] || fail "stderr is not empty"; }
expect_faster() { [ "$MS" -lt "$1" ] || fail "took $MS ms, limit $1 ms"; }
expect_count() { # expect_count N TEXT: TEXT appears on exactly N lines of stderr
    local n
    n=$(grep -cF -- "$2" "$ERR")
    [ "$n" -eq "$1" ] || fail "stderr has '$2' $n times, expected $1"
}
expect_no_leftovers() {
    local left
    left=$(pgrep -f -- "$TAG")
    if [ -n "$left" ]; then
        fail "processes left behind: $left"
        pkill -KILL -f -- "$TAG"
    fi
}

# A failure stop: status, the one failure line, one "stopping", under 5 s, nothing left.
expect_stop() {
    expect_rc "$1"
    expect_err "$2"
    expect_count 1 "sdsmrun: stopping the job"
    expect_faster 5000
    expect_no_leftovers
}

case_help() {
    run --help
    expect_rc 0
    for w in -n --nprocs --timeout --stats --protocol --verbose --help --version --info \
        SDSM_RANK SDSM_NPROCS SDSM_RENDEZVOUS SDSM_JOB_KEY SDSM_STATS SDSM_ERRORS=abort\|return \
        SDSM_PROTOCOL SDSM_HEAP_SIZE SDSM_PAGE_SIZE SDSM_LOG 124 127 128+SIG; do
        expect_out "$w"
    done
    run --version
    expect_rc 0
    expect_out "sdsmrun (sdsm) "
}

case_bad_options() {
    local args
    while IFS= read -r args; do
        # shellcheck disable=SC2086 # word splitting of the argument list is wanted
        run $args
        [ "$RC" -eq 2 ] || fail "'sdsmrun $args' exited $RC, expected 2"
        grep -qF "Usage: sdsmrun" "$ERR" || fail "'sdsmrun $args' printed no usage"
    done <<EOF
-n 0 /bin/true
-n 4097 /bin/true
-n abc /bin/true
-n 2x /bin/true
-n
--bogus -n 2 /bin/true
-q -n 2 /bin/true
/bin/true
-n 2
--timeout -1 -n 2 /bin/true
--timeout soon -n 2 /bin/true
EOF
    run -n 0 /bin/true
    expect_err "invalid number of ranks '0'"
}

case_ok_n() {
    local r
    run_job -n "$1" "$FAKE" "tag=$TAG" ok
    expect_rc 0
    expect_quiet
    for ((r = 0; r < $1; r++)); do
        expect_out "rank $r of $1 ok"
    done
    expect_no_leftovers
}
case_ok_1() { case_ok_n 1; }
case_ok_4() { case_ok_n 4; }
case_ok_8() { case_ok_n 8; }

case_plain() {
    run_job -n 4 /bin/true
    expect_rc 0
    expect_quiet
    run_job -n 3 sh -c 'exit 0'
    expect_rc 0
    run_job -n 2 /bin/false
    expect_rc 1
    expect_err "exited with status 1"
}

case_env() {
    run_job -n 3 --stats --protocol hlrc "$FAKE" printenv
    expect_rc 0
    for r in 0 1 2; do
        expect_out "rank $r of 3: SDSM_STATS=1 SDSM_PROTOCOL=hlrc"
    done
    run_job -n 2 sh -c 'echo "$SDSM_RANK $SDSM_NPROCS $SDSM_RENDEZVOUS ${#SDSM_JOB_KEY}"'
    expect_rc 0
    grep -qE '^0 2 127\.0\.0\.1:[0-9]+ 64$' "$OUT" || fail "rank 0's environment is wrong"
    grep -qE '^1 2 127\.0\.0\.1:[0-9]+ 64$' "$OUT" || fail "rank 1's environment is wrong"
}

case_verbose() {
    run_job -v -n 2 "$FAKE" ok
    expect_rc 0
    expect_err "rank 0: pid "
    expect_err "rank 1: pid "
    expect_err "registered at"
    expect_err "address table sent"
    expect_err "job finished at"
}

case_exec_fail() {
    run_job -n 3 /nonexistent/program
    expect_rc 127
    expect_err "sdsmrun: cannot run '/nonexistent/program': No such file or directory"
    run_job -n 2 no-such-program-"$TAG"
    expect_rc 127
    expect_err "cannot run 'no-such-program-"
    run_job -n 2 "$TMP"
    expect_rc 127
}

# Guards against sleeps on the success path; the real bound is far lower.
case_startup_fast() {
    local best=100000 i
    for i in 1 2 3 4 5; do
        run_job -n 8 /bin/true
        expect_rc 0
        [ "$MS" -lt "$best" ] && best=$MS
    done
    MS=$best
    expect_faster 500
}

case_rank_exit() {
    run_job -n 4 "$FAKE" "tag=$TAG" rankdo 2 exit 3
    expect_stop 3 "sdsmrun: rank 2 (pid "
    expect_err ") exited with status 3"
    expect_faster 1500 # ranks that honour SIGTERM need no SIGKILL
}

case_segv() {
    run_job -n 3 "$FAKE" "tag=$TAG" rankdo 1 segv
    expect_stop 139 "sdsmrun: rank 1 (pid "
    expect_err "killed by signal 11 (Segmentation fault)"
}

case_abort() {
    run_job -n 3 "$FAKE" "tag=$TAG" rankdo 2 abort 42 "disk on fire"
    expect_stop 42 "sdsmrun: rank 2 aborted (code 42): disk on fire"
    expect_no_err "exited with status 42"
    run_job -n 2 "$FAKE" "tag=$TAG" rankdo 0 abort 0 "zero code"
    expect_rc 1
    expect_err "sdsmrun: rank 0 aborted (code 0): zero code"
}

case_timeout() {
    run_job -n 2 --timeout 1 "$FAKE" "tag=$TAG" hang
    expect_stop 124 "sdsmrun: time limit of 1 s exceeded"
    [ "$MS" -ge 1000 ] || fail "stopped after $MS ms, before the time limit"
}

case_nofinalize() {
    run_job -n 2 "$FAKE" "tag=$TAG" rankdo 1 nofinalize
    expect_stop 1 "sdsmrun: rank 1 (pid "
    expect_err ") exited without calling sdsm_finalize"
}

case_early_exit() {
    run_job -n 3 "$FAKE" "tag=$TAG" early 1 0
    expect_stop 1 "sdsmrun: rank 1 (pid "
    expect_err ") exited before sdsm_init completed"
    run_job -n 3 "$FAKE" "tag=$TAG" early 2 5
    expect_stop 5 ") exited with status 5"
}

case_wrong_register() {
    run_job -n 2 "$FAKE" "tag=$TAG" wrongreg 1
    expect_stop 1 "authenticated as rank 1 but registering as rank 2"
    expect_err "sdsmrun: refused registration from 127.0.0.1:"
}

case_bad_frame() {
    run_job -n 2 "$FAKE" "tag=$TAG" rankdo 0 badframe
    expect_stop 1 "sent a bad control message (type 77, length 0)"
}

case_stopped() {
    run_job -n 3 "$FAKE" "tag=$TAG" rankdo 1 stop
    expect_stop 147 "sdsmrun: rank 1 (pid "
    expect_err "stopped by signal 19"
    expect_faster 1500 # SIGCONT lets the stopped rank take its SIGTERM
}

# Ranks that ignore SIGTERM get SIGKILL after 2 s.
case_kill_escalation() {
    FAKE_IGNORE_TERM=1 run_job -n 3 "$FAKE" "tag=$TAG" rankdo 0 exit 4
    expect_stop 4 "sdsmrun: rank 0 (pid "
    [ "$MS" -ge 1500 ] || fail "the stop took only $MS ms: SIGTERM was not ignored?"
    expect_faster 3500 # SIGKILL comes 2 s after SIGTERM
}

# signal_launcher SIG: the launcher gets SIG while all ranks wait in the job.
signal_launcher() {
    local pid t0 t1
    set -m # own process group, so a background job's SIGINT is not ignored
    t0=$(date +%s%N)
    "$SDSMRUN" --timeout 9 -n 3 "$FAKE" "tag=$TAG" hang >"$OUT" 2>"$ERR" </dev/null &
    pid=$!
    sleep 0.5
    kill -"$1" "$pid"
    wait "$pid"
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
    set +m
}

case_sigterm() {
    signal_launcher TERM
    expect_stop 143 "sdsmrun: received signal 15"
}

case_sigint() {
    signal_launcher INT
    expect_stop 130 "sdsmrun: received signal 2"
}

# The ranks die with the launcher even when it gets no chance to stop them.
case_launcher_killed() {
    signal_launcher KILL
    [ "$RC" -eq 137 ] || fail "launcher exit $RC"
    sleep 0.3
    expect_no_leftovers
}

# Strangers during the run are refused and the job still succeeds; a silent
# connection held open from before the ranks registered must not stall it.
# Connections that never prove the key are logged with a rate limit: the
# first gets a line, the next two are counted; those that prove the key and
# then misbehave get a line each.
case_strangers() {
    FAKE_RANK0_PRE="$STRANGER silent-bg" \
        run_job -n 4 "$FAKE" "tag=$TAG" run0 "$STRANGER" wrongkey garbage rawgarbage late-register badframe
    expect_rc 0
    expect_count 1 "(authentication failed)"
    expect_count 1 "sdsmrun: refused 2 more connection(s) from 127.0.0.1 (latest: not an sdsm handshake)"
    expect_err "sdsmrun: refused connection from 127.0.0.1:"
    expect_err "sdsmrun: refused registration from 127.0.0.1:"
    expect_err "(rank 0 is already registered)"
    expect_err "(unexpected control message: type 99, length 1000000)"
    expect_faster 3000
}

case_silent_stranger() {
    run_job -n 2 "$FAKE" run0 "$STRANGER" silent-check
    expect_rc 0
    expect_err "(no authentication within 5 s)"
}

# A bad --protocol or SDSM_* value is refused by the launcher before any
# rank starts, once, naming the valid values.
case_bad_config() {
    run -n 2 --protocol bogus sh -c 'echo started'
    expect_rc 2
    expect_err "sdsmrun: unknown protocol 'bogus': expected one of hlrc, update, ibec"
    [ ! -s "$OUT" ] || fail "a rank started despite --protocol bogus"
    local v want
    while IFS='|' read -r v want; do
        env "$v" "$SDSMRUN" -n 2 sh -c 'echo started' >"$OUT" 2>"$ERR" </dev/null
        RC=$?
        expect_rc 2
        expect_err "sdsmrun: $want"
        expect_count 1 "$want"
        expect_err "no rank was started"
        [ ! -s "$OUT" ] || fail "a rank started despite $v"
    done <<EOF
SDSM_PROTOCOL=bogus|SDSM_PROTOCOL=bogus: unknown value; expected one of hlrc, update, ibec
SDSM_BARRIER_MANAGER=5|SDSM_BARRIER_MANAGER=5 is not a rank of this job of 2 (0 to 1)
SDSM_HEAP_BASE=0|SDSM_HEAP_BASE=0: must be at least 0x100000
SDSM_HEAP_BASE=0x7fff00000000|SDSM_HEAP_BASE=0x7fff00000000 + SDSM_HEAP_SIZE=68719476736 ends past 0x800000000000
EOF
    # A rank number inherited from an enclosing job is not this job's.
    SDSM_RANK=7 run_job -n 2 sh -c 'echo "rank $SDSM_RANK"'
    expect_rc 0
    expect_out "rank 1"
}

if ! declare -F "case_$CASE" >/dev/null; then
    echo "unknown case $CASE"
    exit 2
fi
"case_$CASE"
if [ "$FAILED" -ne 0 ]; then
    echo "--- stdout:"
    cat "$OUT"
    echo "--- stderr:"
    cat "$ERR"
    exit 1
fi
echo "PASS [$CASE] ($MS ms)"
