#!/bin/sh
# compare.sh - run an OpenMP test program's reference build and another run
# of it, and require the same standard output, byte for byte.
#
#   compare.sh ref REF T1 T2 ...
#       REF (built with the system compiler's -fopenmp) with OMP_NUM_THREADS=T1,
#       then with T2, ...: every run must exit 0, end with "done", and print
#       what the first printed (the program does not depend on the team size).
#   compare.sh sdsm REF SDSMRUN [sdsmrun options...] -- PROG
#       REF with OMP_NUM_THREADS=4 gives the expected output; then
#       SDSMRUN [options] PROG (built by sdsmcc) must exit 0 and print it.
#
# Environment the test sets (OMP_SCHEDULE, SDSM_PROTOCOL, ...) reaches both
# runs.  OMP_NUM_THREADS is left out of the sdsm run: there the team is the
# job's ranks x threads.  On a difference the unified diff is printed (the
# expected output first), with the failing run's standard error.
set -u

die() {
    echo "compare.sh: $*" >&2
    exit 2
}

[ $# -ge 2 ] || die "usage: compare.sh ref REF T... | compare.sh sdsm REF SDSMRUN [opts...] -- PROG"
mode=$1
ref=$2
shift 2
[ -x "$ref" ] || die "reference program $ref not found or not executable"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/omp-compare.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$tmp"' EXIT INT TERM

# run NAME CMD...: stdout to $tmp/NAME.out, stderr to $tmp/NAME.err; the
# exit status in $rc; complains about a failed run or a missing "done".
run() {
    name=$1
    shift
    "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
    rc=$?
    why=
    [ $rc -ne 0 ] && why="exit status $rc"
    [ "$(tail -n 1 "$tmp/$name.out")" != done ] && why="${why:+$why, }no final \"done\" line"
    if [ -n "$why" ]; then
        echo "FAILED: $name run: $why: $*"
        echo "--- its stdout (last 30 lines):"
        tail -n 30 "$tmp/$name.out"
        echo "--- its stderr (last 30 lines):"
        tail -n 30 "$tmp/$name.err"
        return 1
    fi
    return 0
}

# same EXPECTED ACTUAL LABEL: the diff if they differ.
same() {
    if ! cmp -s "$tmp/$1.out" "$tmp/$2.out"; then
        echo "FAILED: the $3 run printed something else than the $1 run:"
        diff -u --label "$1" --label "$2" "$tmp/$1.out" "$tmp/$2.out" | head -n 80
        echo "--- stderr of the $2 run (last 30 lines):"
        tail -n 30 "$tmp/$2.err"
        return 1
    fi
    return 0
}

case $mode in
ref)
    [ $# -ge 1 ] || die "ref: no thread counts"
    first=
    for t in "$@"; do
        run "ref-$t" env OMP_NUM_THREADS="$t" "$ref" || exit 1
        if [ -z "$first" ]; then
            first=ref-$t
        else
            same "$first" "ref-$t" "OMP_NUM_THREADS=$t" || exit 1
        fi
    done
    echo "same output at OMP_NUM_THREADS=$*:"
    cat "$tmp/$first.out"
    ;;
sdsm)
    [ $# -ge 3 ] || die "sdsm: need SDSMRUN [options] -- PROG"
    sdsmrun=$1
    shift
    [ -x "$sdsmrun" ] || die "sdsmrun $sdsmrun not found"
    opts=
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        opts="$opts $1"
        shift
    done
    [ $# -eq 2 ] || die "sdsm: expected -- PROG after the sdsmrun options"
    prog=$2
    [ -x "$prog" ] || die "sdsm program $prog not found or not executable"
    run ref env OMP_NUM_THREADS=4 "$ref" || exit 1
    # shellcheck disable=SC2086 # the options are words
    run sdsm env -u OMP_NUM_THREADS "$sdsmrun" $opts "$prog" || exit 1
    same ref sdsm "sdsmrun$opts" || exit 1
    echo "same output as the reference: sdsmrun$opts $(basename "$prog")"
    ;;
*)
    die "unknown mode $mode (ref or sdsm)"
    ;;
esac
