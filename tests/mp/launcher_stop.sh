#!/usr/bin/env bash
# The launcher is stopped (SIGSTOP) while rank R is killed; the other ranks
# notice, and exit, before the launcher runs again.  Once continued, it sees
# every exit at once and must still blame rank R, the one that died, not
# rank 0, whose exit was only a consequence.
#   launcher_stop.sh SDSMRUN MP_SETUP N R
set -u
SDSMRUN=$1 PROG=$2 N=$3 R=$4
OUT=$(mktemp "${TMPDIR:-/tmp}/launcher_stop.XXXXXX")
trap 'rm -f "$OUT"' EXIT
"$SDSMRUN" -n "$N" --timeout 60 "$PROG" hold "$R" >"$OUT" 2>&1 </dev/null &
LPID=$!
for _ in $(seq 100); do
    [ "$(grep -c '^mp-setup-ready' "$OUT")" -eq "$N" ] && break
    sleep 0.1
done
VICTIM=$(sed -n "s/^mp-setup-ready rank $R pid \([0-9]*\)$/\1/p" "$OUT")
if [ -z "$VICTIM" ]; then
    cat "$OUT"
    echo "FAIL: the ranks did not get ready"
    kill -KILL "$LPID"
    exit 1
fi
sleep 0.2 # the others are in their barrier
kill -STOP "$LPID"
kill -KILL "$VICTIM"
sleep 2 # the others see the lost link and exit meanwhile
kill -CONT "$LPID"
wait "$LPID"
RC=$?
cat "$OUT"
FAILED=0
[ "$RC" -eq 137 ] || { echo "FAIL: exit status $RC, expected 137 (rank $R killed by SIGKILL)"; FAILED=1; }
grep -q "^sdsmrun: rank $R (pid $VICTIM) killed by signal 9" "$OUT" ||
    { echo "FAIL: the launcher does not blame rank $R (pid $VICTIM)"; FAILED=1; }
if grep -E "^sdsmrun: rank [0-9]+ \(pid [0-9]+\) exited" "$OUT"; then
    echo "FAIL: the launcher blames a rank that only lost its link to rank $R"
    FAILED=1
fi
[ "$FAILED" = 0 ] && echo "PASS: launcher_stop"
exit "$FAILED"
