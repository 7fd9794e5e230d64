#!/usr/bin/env bash
# mp_expect.sh - run one sdsm job and check how it ended.
#
#   mp_expect.sh [options] -- COMMAND [ARGS...]
#
#   --status N          the exit status must be N
#   --nonzero           the exit status must not be 0
#   --expect RE         the output (stdout and stderr) must match the extended regex RE
#   --reject RE         the output must not match RE
#   --once RE           exactly one line of the output matches RE
#   --skip-if RE        if the output matches RE (and the status is right),
#                       exit 77 (skipped) instead of checking the --expect REs
#   --max-seconds S     the whole run must take less than S seconds
#   --mark-deadline S   the output holds "mp-mark-ms=<wall-clock ms>" (printed by
#                       the program); the command must have ended within S s of it
#   --no-leftovers      no process started by COMMAND may remain afterwards
#
# Processes are recognised by a unique MP_EXPECT_TAG in their environment
# (set for COMMAND only), so other jobs running the same program are not
# mistaken for leftovers.  Prints the output, then PASS or FAIL lines; exits 0
# on PASS, 1 on FAIL.
set -u

STATUS= NONZERO=0 MAXS= MARKS= LEFTOVERS=0 SKIPIF=
EXPECT=() REJECT=() ONCE=()
while [ $# -gt 0 ]; do
    case $1 in
    --status) STATUS=$2; shift 2 ;;
    --nonzero) NONZERO=1; shift ;;
    --expect) EXPECT+=("$2"); shift 2 ;;
    --reject) REJECT+=("$2"); shift 2 ;;
    --once) ONCE+=("$2"); shift 2 ;;
    --skip-if) SKIPIF=$2; shift 2 ;;
    --max-seconds) MAXS=$2; shift 2 ;;
    --mark-deadline) MARKS=$2; shift 2 ;;
    --no-leftovers) LEFTOVERS=1; shift ;;
    --) shift; break ;;
    *) echo "mp_expect: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "mp_expect: no command" >&2; exit 2; }

ulimit -c 0 # the crash tests must not leave (or wait for) core dumps
OUT=$(mktemp "${TMPDIR:-/tmp}/mp_expect.XXXXXX")
trap 'rm -f "$OUT"' EXIT
TAG="mp-expect-$$-$RANDOM$RANDOM"

t0=$(date +%s%N)
env MP_EXPECT_TAG="$TAG" "$@" >"$OUT" 2>&1 </dev/null
RC=$?
t1=$(date +%s%N)
END_MS=$((t1 / 1000000))
MS=$(((t1 - t0) / 1000000))

cat "$OUT"
echo "mp_expect: exit status $RC after $MS ms"
FAILED=0
fail() {
    echo "mp_expect: FAIL: $*"
    FAILED=1
}

if [ -n "$STATUS" ] && [ "$RC" -ne "$STATUS" ]; then
    fail "exit status $RC, expected $STATUS"
fi
if [ "$NONZERO" = 1 ] && [ "$RC" -eq 0 ]; then
    fail "exit status 0, expected a failure"
fi
if [ -n "$SKIPIF" ] && [ "$FAILED" = 0 ] && grep -Eq -- "$SKIPIF" "$OUT"; then
    echo "mp_expect: SKIP: the output matches /$SKIPIF/"
    exit 77
fi
for re in "${EXPECT[@]+"${EXPECT[@]}"}"; do
    grep -Eq -- "$re" "$OUT" || fail "output does not match /$re/"
done
for re in "${REJECT[@]+"${REJECT[@]}"}"; do
    grep -Eq -- "$re" "$OUT" && fail "output matches /$re/, which it must not"
done
for re in "${ONCE[@]+"${ONCE[@]}"}"; do
    n=$(grep -Ec -- "$re" "$OUT")
    [ "$n" = 1 ] || fail "$n lines match /$re/, expected exactly one"
done
if [ -n "$MAXS" ] && [ "$MS" -ge $((MAXS * 1000)) ]; then
    fail "took $MS ms, limit $MAXS s"
fi
if [ -n "$MARKS" ]; then
    mark=$(grep -Eo 'mp-mark-ms=[0-9]+' "$OUT" | head -n1 | cut -d= -f2)
    if [ -z "$mark" ]; then
        fail "no mp-mark-ms= line in the output"
    else
        after=$((END_MS - mark))
        echo "mp_expect: the job ended $after ms after the mark"
        [ "$after" -le $((MARKS * 1000)) ] || fail "the job ended $after ms after the mark, limit $MARKS s"
    fi
fi
if [ "$LEFTOVERS" = 1 ]; then
    # A process still exiting (its command line already empty: a launcher's
    # proxy killed with the job, slowed down by a sanitizer) gets up to 3 s
    # to be gone before it counts as left behind, and so does any other
    # process of the job: a rank whose launcher died without killing it
    # (MPICH's hydra proxies abort when a rank is killed) ends by itself
    # once it sees its peers gone, which took longer than the launcher
    # under ThreadSanitizer (cluster_direct_hydra, 1 run in 8).  One that
    # never ends is still caught.
    for try in 1 2 3 4 5 6 7; do
        left= pids=
        # One grep over every environment (entries are NUL-terminated): a loop
        # of tr|grep per process took seconds on a busy machine.
        for e in $(grep -lzxF "MP_EXPECT_TAG=$TAG" /proc/[0-9]*/environ 2>/dev/null); do
            pid=${e#/proc/}
            pid=${pid%/environ}
            cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")
            pids="$pids $pid"
            left="$left $pid($cmd)"
        done
        [ -n "$left" ] && [ "$try" -lt 7 ] || break
        sleep 0.5
    done
    if [ -n "$left" ]; then
        fail "processes left behind:$left"
        for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
    fi
fi
[ "$FAILED" = 0 ] && echo "mp_expect: PASS"
exit "$FAILED"
