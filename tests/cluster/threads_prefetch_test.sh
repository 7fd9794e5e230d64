#!/usr/bin/env bash
# threads_prefetch_test.sh BUILD - compute threads must not break the
# automatic prefetch.  cg's threads of a rank all read the other rank's
# pages of p in the same order; only the first to fault on a page used to
# reach the prefetch, so each thread's stream kept starting over and 4
# threads sent about twice the FETCH requests of 1.  On two emulated hosts
# under the lan profile (so threads do wait for each other's fetches), cg
# at 2 ranks with 1 and with 4 threads (SDSM_RUN_THREADS=1): the FETCH
# requests of 4 threads must stay within 1.3 x those of 1 thread on a quiet
# machine (1.06-1.10 x measured; the bug made 1.9 x).  A machine busy with
# other work adds some, with or without the bug fixed (1.32-1.44 x with two
# busy loops on 2 CPUs, 12 runs), so: the fewest of up to 3 runs of 4
# threads, and within 1.6 x when the 1.3 x is missed.  Status 77 (skipped,
# with a message) without root, namespaces or iptables.
set -u
BUILD=$1
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/twohosts.sh"
twohosts_up threads_prefetch_test
twohosts_profile lan

fetches() { # T: total FETCH messages of a cg run with T threads per rank
    SDSM_RUN_THREADS=1 "$BUILD/tools/sdsmrun/sdsmrun" -n 2 --hosts h1:1,h2:1 --rsh "$D/rsh" --stats \
        --timeout 120 --threads "$1" -x SDSM_RUN_THREADS=1 "$BUILD/apps/cg/cg_sdsmt" --size paper --niter 1 \
        >"$TMP/t$1.log" 2>&1 || { cat "$TMP/t$1.log"; echo "FAIL: cg with $1 threads"; exit 1; }
    grep -q "^PASSED" "$TMP/t$1.log" || { cat "$TMP/t$1.log"; echo "FAIL: cg with $1 threads: wrong result"; exit 1; }
    awk '$1 == "msgs" && $2 == "FETCH" { print $NF }' "$TMP/t$1.log"
}
one=$(fetches 1) || exit 1
four=
for run in 1 2 3; do
    f=$(fetches 4) || exit 1
    echo "FETCH requests, 4 threads, run $run: $f"
    if [ -z "$four" ] || { [ -n "$f" ] && [ "$f" -lt "$four" ]; }; then four=$f; fi
    [ -n "$four" ] && [ $((four * 10)) -le $((one * 13)) ] && break
done
echo "FETCH requests: 1 thread $one, 4 threads $four (fewest)"
if [ -z "$one" ] || [ -z "$four" ] || [ $((four * 10)) -gt $((one * 16)) ]; then
    echo "FAIL: 4 threads sent more than 1.6 x the FETCH requests of 1 thread"
    exit 1
fi
[ $((four * 10)) -gt $((one * 13)) ] &&
    echo "(above 1.3 x: a busy machine; the load average is $(cut -d' ' -f1-3 /proc/loadavg))"
echo "PASS"
