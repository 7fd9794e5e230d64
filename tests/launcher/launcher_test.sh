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
ulimit -c 0
. "$(dirname "$0")/testlib.sh"

# run ARGS... : sdsmrun ARGS, recording exit status, output and wall time.
# IN=FILE: standard input (default /dev/null).  PIPED=1: stdout and stderr
# reach their files through pipes, as they reach a pager or another program,
# where writers of more than a few KiB at once can split each other's lines.
run() {
    local t0 t1 cats=()
    t0=$(date +%s%N)
    if [ "${PIPED:-0}" = 1 ]; then
        rm -f "$TMP/o.fifo" "$TMP/e.fifo"
        mkfifo "$TMP/o.fifo" "$TMP/e.fifo"
        cat "$TMP/o.fifo" >"$OUT" &
        cats+=($!)
        cat "$TMP/e.fifo" >"$ERR" &
        cats+=($!)
        "$SDSMRUN" "$@" >"$TMP/o.fifo" 2>"$TMP/e.fifo" <"${IN:-/dev/null}"
        RC=$?
        wait "${cats[@]}"
    else
        "$SDSMRUN" "$@" >"$OUT" 2>"$ERR" <"${IN:-/dev/null}"
        RC=$?
    fi
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
}

# run_job ARGS...: run, with a time limit first so a launcher that hangs fails
# fast as 124 (a later --timeout among ARGS wins).
run_job() { run --timeout 9 "$@"; }

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
        --tag-output --output-filename "Standard input goes to rank 0 only" \
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
    expect_faster 2200 # ranks that honour SIGTERM need no SIGKILL (2.5 s after the failure)
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
    expect_faster 2200 # SIGCONT lets the stopped rank take its SIGTERM (SIGKILL: after 2.5 s)
}

# Ranks that ignore SIGTERM get SIGKILL after 2 s.
case_kill_escalation() {
    FAKE_IGNORE_TERM=1 run_job -n 3 "$FAKE" "tag=$TAG" rankdo 0 exit 4
    expect_stop 4 "sdsmrun: rank 0 (pid "
    [ "$MS" -ge 2000 ] || fail "the stop took only $MS ms: SIGTERM was not ignored?"
    expect_faster 4000 # SIGKILL comes 2 s after SIGTERM, itself 0.5 s after the failure
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

# ---- standard streams

# Rank R's line I: "R:<R>:<I>:" then LEN(R, I) copies of letter R, then ":END".
# Every seventh line is longer than a pipe's buffer (64 KiB).
LINES_AWK='
function len(r, i) { return i % 7 == 0 ? 70000 + 13 * r : 1000 + (i * 37 + r * 101) % 9000 }
function rep(c, n,   s) { s = c; while (length(s) < n) s = s s; return substr(s, 1, n) }
function letter(r) { return substr("abcdefghijklmnopqrstuvwxyz", r % 26 + 1, 1) }'

# lines_prog N: a rank program printing N such lines on stdout.
lines_prog() {
    echo "awk -v r=\"\$SDSM_RANK\" -v n=$1 '$LINES_AWK
BEGIN { for (i = 0; i < n; i++) print \"R:\" r \":\" i \":\" rep(letter(r), len(r, i)) \":END\" }'"
}

# check_lines FILE RANKS N [PREFIXED]: FILE holds exactly N whole lines from each
# of RANKS ranks, none broken or mixed; PREFIXED=1: each starts with "[R] ".
check_lines() {
    local bad
    bad=$(awk -v ranks="$2" -v n="$3" -v tagged="${4:-0}" "$LINES_AWK"'
        {
            line = $0
            if (tagged) {
                if (!match(line, /^\[[0-9]+\] /)) { print "untagged line " NR; exit }
                t = substr(line, 2, RLENGTH - 3); line = substr(line, RLENGTH + 1)
            }
            k = split(line, f, ":")
            if (k != 5 || f[1] != "R" || f[5] != "END") { print "broken line " NR ": " substr(line, 1, 60); exit }
            r = f[2]; i = f[3]
            if (tagged && t != r) { print "line " NR " of rank " r " tagged [" t "]"; exit }
            if (f[4] != rep(letter(r), len(r, i))) { print "line " NR " (rank " r ", line " i ") has other bytes"; exit }
            if (seen[r, i]++) { print "line " i " of rank " r " twice"; exit }
            count[r]++
        }
        END { for (r = 0; r < ranks; r++) if (count[r] != n) { print "rank " r ": " count[r] + 0 " lines, expected " n; exit } }
    ' "$1")
    [ -z "$bad" ] || fail "$1: $bad"
}

# Input goes to rank 0 whole; the others read an empty stdin at once.
case_io_stdin() {
    head -c 600000 /dev/urandom | od -An -tx1 -v >"$TMP/in" # 2 MB of lines
    IN=$TMP/in run_job -n 4 sh -c 'cat >"$0/got.$SDSM_RANK"' "$TMP"
    expect_rc 0
    cmp -s "$TMP/in" "$TMP/got.0" || fail "rank 0 did not get the whole input"
    for r in 1 2 3; do
        [ -f "$TMP/got.$r" ] && [ ! -s "$TMP/got.$r" ] || fail "rank $r read something from stdin"
    done
    # Rank 0 reading only part of it, or nothing, must not hold anyone up.
    IN=$TMP/in run_job -n 3 sh -c '[ "$SDSM_RANK" != 0 ] || head -n 2'
    expect_rc 0
    [ "$(wc -l <"$OUT")" -eq 2 ] || fail "rank 0 printed $(wc -l <"$OUT") lines, expected 2"
    IN=$TMP/in run_job -n 2 /bin/true
    expect_rc 0
    expect_faster 2000
}

# Many long lines from 4 ranks at once: every line arrives whole.
case_io_lines() {
    PIPED=1 run_job -n 4 sh -c "$(lines_prog 150)"
    expect_rc 0
    expect_quiet
    check_lines "$OUT" 4 150
}

case_io_tag() {
    PIPED=1 run_job -n 3 --tag-output sh -c "$(lines_prog 40); echo \"err \$SDSM_RANK\" >&2"
    expect_rc 0
    check_lines "$OUT" 3 40 1
    for r in 0 1 2; do
        expect_count 1 "[$r] err $r"
    done
    # An unfinished last line is passed on; the next rank's line starts a line of its own.
    run_job -n 2 --tag-output sh -c 'printf "no newline $SDSM_RANK"'
    expect_rc 0
    grep -qx '\[0\] no newline 0' "$OUT" || fail "rank 0's unfinished line is missing or merged"
    grep -qx '\[1\] no newline 1' "$OUT" || fail "rank 1's unfinished line is missing or merged"
    # Without tags the bytes are passed on exactly.
    run_job -n 1 sh -c 'printf "a\nb"'
    [ "$(od -An -c "$OUT" | tr -d ' ')" = 'a\nb' ] || fail "untagged output was changed"
    # A line of 3 MB (past the 1 MiB piece size) arrives whole and unchanged.
    run_job -n 2 sh -c '[ "$SDSM_RANK" = 1 ] || { head -c 3000000 /dev/zero | tr "\0" x; echo; }'
    [ "$(wc -c <"$OUT")" -eq 3000001 ] && [ "$(tr -d x <"$OUT")" = "" ] ||
        fail "a 3 MB line came out as $(wc -c <"$OUT") bytes"
}

case_io_files() {
    local d=$TMP/outdir r
    run_job -n 3 --output-filename "$d" sh -c "$(lines_prog 20); echo \"err \$SDSM_RANK\" >&2"
    expect_rc 0
    [ ! -s "$OUT" ] || fail "output reached sdsmrun's stdout too"
    expect_quiet
    for r in 0 1 2; do
        [ -f "$d/rank.$r/stdout" ] || { fail "no $d/rank.$r/stdout"; continue; }
        [ "$(grep -c "^R:$r:" "$d/rank.$r/stdout")" -eq 20 ] || fail "rank.$r/stdout lacks its lines"
        [ "$(grep -vc "^R:$r:" "$d/rank.$r/stdout")" -eq 0 ] || fail "rank.$r/stdout has other lines"
        [ "$(cat "$d/rank.$r/stderr")" = "err $r" ] || fail "rank.$r/stderr is wrong"
    done
    cat "$d"/rank.*/stdout >"$TMP/all"
    check_lines "$TMP/all" 3 20
    run_job -n 2 --output-filename /nonexistent/dir/x /bin/true
    expect_rc 1
    expect_err "sdsmrun: --output-filename: cannot create the directory '/nonexistent/dir/x'"
}

# A rank that dies: all it wrote is passed on, before the verdict on it, and the
# verdict and the exit status are what they always were.
case_io_dying() {
    # Rank 1 dies once the others are done, so the stop cuts no one else short.
    PIPED=1 run_job -n 3 sh -c "$(lines_prog 60)"'; echo "last words $SDSM_RANK" >&2; printf "tail $SDSM_RANK"
        [ "$SDSM_RANK" = 1 ] && sleep 0.5 && kill -SEGV $$; exit 0' "tag=$TAG"
    expect_stop 139 "sdsmrun: rank 1 (pid "
    expect_err "killed by signal 11 (Segmentation fault)"
    # An unfinished last line is passed on as it is (another's line may follow it on its line).
    sed -E 's/(tail [0-9])+//g' "$OUT" | grep -v '^$' >"$TMP/lines"
    check_lines "$TMP/lines" 3 60
    grep -q "tail 1" "$OUT" || fail "rank 1's unfinished last line was lost"
    local words verdict
    words=$(grep -n "last words 1" "$ERR" | cut -d: -f1)
    verdict=$(grep -n "sdsmrun: rank 1 (pid " "$ERR" | cut -d: -f1)
    [ -n "$words" ] && [ -n "$verdict" ] && [ "$words" -lt "$verdict" ] ||
        fail "rank 1's last words did not come before the verdict on it"
    PIPED=1 run_job -n 2 "$FAKE" "tag=$TAG" rankdo 1 exit 3
    expect_stop 3 "sdsmrun: rank 1 (pid "
    expect_err ") exited with status 3"
}

# Ranks that fail by themselves, each after printing a line (stdio buffers
# it in the pipe's case, and flushes it at exit): the first exit must not
# stop the others while they are still ending, so no line is lost.  Before
# the stop waited for them, 2 of 3 runs here lost one.
case_io_exit_flush() {
    local i lost=0
    for i in $(seq 15); do
        run_job -n 2 awk 'BEGIN { print "line of rank " ENVIRON["SDSM_RANK"]; exit 1 }' "tag=$TAG"
        expect_rc 1
        [ "$(grep -c '^line of rank [01]$' "$OUT")" -eq 2 ] || lost=$((lost + 1))
    done
    [ "$lost" -eq 0 ] || fail "a rank's line was lost in $lost of 15 runs"
    expect_no_leftovers
}

# Without --tag-output a rank's bytes arrive exactly: no newline is added to
# data without one (4 MB, past the 1 MiB piece size, while another rank
# prints a line half-way), nor to binary data; the other rank's line stays
# whole.
case_io_bytes() {
    run_job -n 2 sh -c 'if [ "$SDSM_RANK" = 0 ]; then
            head -c 2000000 /dev/zero | tr "\0" x; touch "$0/half"; sleep 0.3
            head -c 2000000 /dev/zero | tr "\0" x
        else
            while [ ! -e "$0/half" ]; do sleep 0.01; done; echo "the line of rank 1"
        fi' "$TMP"
    expect_rc 0
    [ "$(wc -c <"$OUT")" -eq 4000019 ] || fail "stdout has $(wc -c <"$OUT") bytes, expected 4000019"
    grep -qF "the line of rank 1" "$OUT" || fail "rank 1's line was broken"
    [ "$(sed 's/the line of rank 1//' "$OUT" | tr -d x | wc -c)" -eq 1 ] ||
        fail "bytes other than rank 0's and rank 1's line"
    head -c 3000000 /dev/urandom >"$TMP/bin"
    run_job -n 3 sh -c '[ "$SDSM_RANK" != 1 ] || cat "$0"' "$TMP/bin"
    expect_rc 0
    cmp -s "$TMP/bin" "$OUT" || fail "binary output was changed"
    # An unfinished last line stays unfinished.
    run_job -n 2 sh -c 'printf "r$SDSM_RANK"'
    [ "$(wc -c <"$OUT")" -eq 4 ] || fail "unfinished lines of 2 bytes came out as $(wc -c <"$OUT") bytes"
}

# Output the launcher cannot write is an error, as for any program; a
# reader that went away (| head) is not.
case_io_write_error() {
    "$SDSMRUN" -n 1 /bin/echo hi >/dev/full 2>"$ERR" </dev/null
    RC=$?
    expect_rc 1
    expect_err "sdsmrun: cannot write to standard output: No space left on device"
    "$SDSMRUN" -n 2 /bin/echo hi >&- 2>"$ERR" </dev/null
    RC=$?
    expect_rc 1
    expect_err "sdsmrun: cannot write to standard output: Bad file descriptor"
    "$SDSMRUN" -n 2 sh -c 'echo oops >&2' >"$OUT" 2>/dev/full </dev/null
    RC=$?
    expect_rc 1
    # A job whose output is all written succeeds, whatever else was closed.
    "$SDSMRUN" -n 2 /bin/true >&- 2>"$ERR" </dev/null
    RC=$?
    expect_rc 0
    expect_quiet
    "$SDSMRUN" -n 2 sh -c 'seq 100000' 2>"$ERR" </dev/null | head -n 1 >"$OUT"
    RC=${PIPESTATUS[0]}
    expect_rc 0
    expect_quiet
    # A failing job keeps its own status.
    "$SDSMRUN" -n 1 sh -c 'echo hi; exit 3' >/dev/full 2>"$ERR" </dev/null
    RC=$?
    expect_rc 3
}

# Nothing a job started outlives it: a rank's children, in its process
# group or in a session of their own, after a job that succeeds and after
# one that fails; a child that ignores SIGTERM gets SIGKILL.
case_leftovers() {
    local kids='sh -c "sleep 30; :" "$0" & setsid sh -c "sleep 30; :" "$0" &'
    run_job -n 2 sh -c "$kids"' echo "rank $SDSM_RANK"' "tag=$TAG"
    expect_rc 0
    expect_out "rank 1"
    expect_no_leftovers
    run_job -n 2 sh -c "$kids"' [ "$SDSM_RANK" = 1 ] && exit 4; sleep 5' "tag=$TAG"
    expect_rc 4
    expect_no_leftovers
    run_job -n 1 sh -c 'sh -c "trap \"\" TERM; sleep 30; :" "$0" & sleep 0.2' "tag=$TAG"
    expect_rc 0
    expect_faster 5000
    expect_no_leftovers
}

run_case
