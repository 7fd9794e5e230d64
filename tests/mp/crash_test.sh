#!/usr/bin/env bash
# A crash in program code (tests/mp/crash.c, tests/omp/crashtls.c): rank 1 must print one line
# naming its rank, its thread, the signal, the faulting address, what that
# address is and the instruction pointer; the rank must still die of the
# same signal, and the launcher's verdict must follow that line.
#   crash_test.sh SDSMRUN PROG HOW SIGNAL-NAME SIGNAL-NUMBER WHAT-RE
set -u
SDSMRUN=$1 PROG=$2 HOW=$3 SIGNAME=$4 SIGNUM=$5 WHAT=$6
ulimit -c 0 # no core dumps left behind (or waited for)
OUT=$(mktemp "${TMPDIR:-/tmp}/crash_test.XXXXXX")
trap 'rm -f "$OUT"' EXIT
"$SDSMRUN" -n 2 --timeout 30 "$PROG" "$HOW" >"$OUT" 2>&1 </dev/null
RC=$?
cat "$OUT"
FAILED=0
fail() {
    echo "FAIL: $*"
    FAILED=1
}
[ "$RC" -eq $((128 + SIGNUM)) ] || fail "exit status $RC, expected $((128 + SIGNUM))"
# abort() has no faulting address, and its ip is in the C library.
if [ "$SIGNAME" = SIGABRT ]; then AT= WHERE=; else AT=" at 0x[0-9a-f]+" WHERE=" .*$(basename "$PROG")"; fi
REPORT="^sdsm: rank 1: (main )?thread [^:]+ crashed: $SIGNAME$AT: [^;]*($WHAT)[^;]*; ip 0x[0-9a-f]+$WHERE"
VERDICT="^sdsmrun: rank 1 \\(pid [0-9]+\\) killed by signal $SIGNUM "
report=$(grep -nE "$REPORT" "$OUT" | head -1 | cut -d: -f1)
verdict=$(grep -nE "$VERDICT" "$OUT" | head -1 | cut -d: -f1)
[ -n "$report" ] || fail "no line matches /$REPORT/"
[ -n "$verdict" ] || fail "no line matches /$VERDICT/"
[ "$(grep -cE "crashed: SIG" "$OUT")" -le 1 ] || fail "more than one crash report"
if [ -n "$report" ] && [ -n "$verdict" ] && [ "$report" -gt "$verdict" ]; then
    fail "the launcher's verdict comes before the report"
fi
[ "$FAILED" = 0 ] && echo "PASS: crash $HOW"
exit "$FAILED"
