#!/usr/bin/env bash
# siege_test.sh - strangers on the job's ports during start-up must not delay it.
#
#   siege_test.sh SDSMRUN MP_SIEGE N IDLE SLOW
#
# Runs the same N-rank job twice in a row: once alone, once with IDLE idle
# and SLOW slow-talking connections to rank 0's port and to the launcher's,
# opened before any peer of the job connects (see siege.c).  The attacked run
# must succeed, take less than 2 s longer than the quiet one, and log the
# strangers with a rate limit: one "refused connection" line from rank 0 and
# one from the launcher, and the rest as a count.
set -u

SDSMRUN=$1 PROG=$2 N=$3 IDLE=$4 SLOW=$5
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsm-siege.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
FAILED=0
fail() {
    echo "siege_test: FAIL: $*"
    FAILED=1
}

# job NAME IDLE SLOW: run the job, leaving its output in $TMP/NAME and the
# elapsed milliseconds in MS, its exit status in RC.
job() {
    local t0 t1
    t0=$(date +%s%N)
    SIEGE_READY=$TMP/$1.ready "$SDSMRUN" -n "$N" --timeout 20 "$PROG" "$2" "$3" >"$TMP/$1" 2>&1 </dev/null
    RC=$?
    t1=$(date +%s%N)
    MS=$(((t1 - t0) / 1000000))
    echo "--- $1 run (idle $2, slow $3): exit status $RC after $MS ms"
    cat "$TMP/$1"
}

job quiet 0 0
QUIET_RC=$RC QUIET_MS=$MS
job attacked "$IDLE" "$SLOW"
ATTACKED_RC=$RC ATTACKED_MS=$MS
OUT=$TMP/attacked

[ "$QUIET_RC" -eq 0 ] || fail "the quiet run exited $QUIET_RC"
[ "$ATTACKED_RC" -eq 0 ] || fail "the attacked run exited $ATTACKED_RC"
grep -q "^OK siege$" "$OUT" || fail "the attacked run did not print OK siege"
EXTRA=$((ATTACKED_MS - QUIET_MS))
echo "siege_test: the attack cost $EXTRA ms (quiet $QUIET_MS ms, attacked $ATTACKED_MS ms)"
[ "$EXTRA" -lt 2000 ] || fail "the attack delayed the job by $EXTRA ms (limit 2000)"

# Rate limit: one line per source, then a count.
count() { grep -cE -- "$1" "$OUT"; }
n=$(count '^sdsm: rank 0: refused connection from 127\.0\.0\.1:')
[ "$n" -eq 1 ] || fail "rank 0 logged $n 'refused connection' lines, expected 1"
more=$(grep -oE '^sdsm: rank 0: refused [0-9]+ more connection\(s\) from 127\.0\.0\.1' "$OUT" |
    grep -oE '[0-9]+ more' | cut -d' ' -f1 | head -n1)
if [ -z "$more" ]; then
    fail "rank 0 logged no count of the other refused connections"
elif [ "$more" -lt $(((IDLE + SLOW) / 2)) ]; then
    fail "rank 0 counted only $more more refused connections"
fi
n=$(count '^sdsmrun: refused connection from 127\.0\.0\.1:')
[ "$n" -eq 1 ] || fail "the launcher logged $n 'refused connection' lines, expected 1"
grep -qE '^sdsmrun: refused [0-9]+ more connection\(s\) from 127\.0\.0\.1' "$OUT" ||
    fail "the launcher logged no count of the other refused connections"
n=$(count 'refused')
[ "$n" -le 4 ] || fail "$n lines about refused connections for $((2 * (IDLE + SLOW))) strangers"

[ "$FAILED" -eq 0 ] && echo "siege_test: PASS"
exit "$FAILED"
