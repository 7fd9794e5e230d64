#!/usr/bin/env bash
# threads_hide_test.sh BUILD - where a rank runs more compute threads than
# run slots, a waiting thread polls for SDSM_HIDE_SPIN_US (1000 us by
# default) instead of SDSM_SPIN_US (50 us), so that the rank's CPU does not
# go idle between its threads' replies.  On two emulated hosts under the
# lan profile (a page takes about 200 us to come), cg at 2 ranks with one
# page per fault (SDSM_PREFETCH=0) and one run slot:
#   - 4 threads: the polls pay, at least 2 answered for each one timed out
#     (3,519 against 64 measured on a quiet machine; 1,717 against 438
#     where the rest of the suite ran beside it: polls that lose their CPU
#     time out);
#   - 4 threads with SDSM_HIDE_SPIN_US=50: 50 us polls cannot see a page
#     come, and fewer than half as many are answered (48 and 158 against
#     3,519 and 2,576 measured; they still see the rank's own threads
#     meet);
#   - 1 thread (as many threads as slots): SDSM_SPIN_US applies, fewer
#     answered than timed out (0 against 150 measured).
# Every run must pass cg's check.  Status 77 (skipped, with a message)
# without root, namespaces or iptables.
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/twohosts.sh"
twohosts_up threads_hide_test
twohosts_profile lan

FAILED=0
# polls NAME T [VAR=VALUE]: cg with T threads per rank; sets ANSWERED and TIMED_OUT.
polls() {
    local name=$1 t=$2 log=$TMP/$1.log
    shift 2
    SDSM_STATS=all "$BUILD/tools/sdsmrun/sdsmrun" -n 2 --hosts h1:1,h2:1 --rsh "$D/rsh" --stats --timeout 120 \
        --threads "$t" -x SDSM_RUN_THREADS=1 -x SDSM_PREFETCH=0 ${1:+-x "$1"} \
        "$BUILD/apps/cg/cg_sdsmt" --size paper --niter 1 >"$log" 2>&1 ||
        { cat "$log"; echo "FAIL: $name: cg did not run"; exit 1; }
    grep -q "^PASSED" "$log" || { cat "$log"; echo "FAIL: $name: wrong result"; exit 1; }
    ANSWERED=$(awk '/^polls answered/ { print $NF }' "$log")
    TIMED_OUT=$(awk '/^polls timed out/ { print $NF }' "$log")
    [ -n "$ANSWERED" ] && [ -n "$TIMED_OUT" ] ||
        { cat "$log"; echo "FAIL: $name: no poll statistics"; exit 1; }
    echo "$name: polls answered $ANSWERED, timed out $TIMED_OUT"
}

polls "4 threads" 4
[ "$ANSWERED" -ge $((2 * TIMED_OUT)) ] && [ "$ANSWERED" -gt 0 ] ||
    { echo "FAIL: 4 threads on 1 slot: their polls do not pay"; FAILED=1; }
long=$ANSWERED
polls "4 threads, SDSM_HIDE_SPIN_US=50" 4 SDSM_HIDE_SPIN_US=50
[ $((2 * ANSWERED)) -lt "$long" ] ||
    { echo "FAIL: SDSM_HIDE_SPIN_US=50 does not shorten the polls"; FAILED=1; }
polls "1 thread" 1
[ "$ANSWERED" -lt "$TIMED_OUT" ] ||
    { echo "FAIL: 1 thread on 1 slot polls longer than SDSM_SPIN_US"; FAILED=1; }
[ "$FAILED" = 0 ] && echo "PASS"
exit "$FAILED"
