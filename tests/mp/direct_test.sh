#!/usr/bin/env bash
# direct_test.sh - run an sdsm program under Open MPI's mpirun (direct launch
# through PMIx, no sdsmrun) or MPICH's mpiexec.hydra (PMI-2) and check how
# it ended.
#
#   direct_test.sh [--hydra] NP [--ok NAME] [mp_expect.sh options] -- PROG [ARGS...]
#
# --hydra: start the ranks with MPICH's mpiexec.hydra (PMI-2 over PMI_FD)
# instead of Open MPI's mpirun (PMIx).
# --ok NAME: the output holds exactly one "OK NAME" line (a job of NP ranks
# prints it once; NP processes that each ran as a job of one would print it
# NP times).  Skipped (status 77) when the launcher is not installed.
set -u
here=$(dirname "$0")
hydra=
if [ "$1" = --hydra ]; then
    hydra=1
    shift
fi
np=$1
shift
ok=
if [ "${1:-}" = --ok ]; then
    ok=$2
    shift 2
fi
if [ -n "$hydra" ]; then
    launcher=${MPIEXEC_HYDRA:-$(command -v mpiexec.hydra)}
    if [ -z "$launcher" ]; then
        echo "SKIP: mpiexec.hydra not found (install MPICH, e.g. Debian's mpich, to test direct launch through PMI-2)"
        exit 77
    fi
    launch=("$launcher" -n "$np")
else
    launcher=${MPIRUN:-$(command -v mpirun)}
    if [ -z "$launcher" ]; then
        echo "SKIP: mpirun not found (install Open MPI, e.g. Debian's openmpi-bin, to test direct launch)"
        exit 77
    fi
    launch=("$launcher" --allow-run-as-root --oversubscribe -n "$np")
fi
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    opts+=("$1")
    shift
done
shift
[ -n "$ok" ] && opts+=(--expect "^OK $ok\$")
# mpiexec.hydra itself now and then dies of SIGPIPE (status 141) before it
# forwards any output, when ranks end at once (seen once in a few thousand
# runs, under load): that is the launcher's race, not a result; run again,
# at most twice.
for try in 1 2 3; do
    out=$(bash "$here/mp_expect.sh" "${opts[@]}" -- \
          "${launch[@]}" "$@")
    rc=$?
    if [ -n "$hydra" ] && [ "$try" -lt 3 ] && grep -q "^mp_expect: exit status 141 after" <<<"$out" &&
       ! grep -q "^sdsm" <<<"$out"; then
        echo "direct_test: mpiexec.hydra died of SIGPIPE before any output; once more"
        continue
    fi
    break
done
echo "$out"
if [ -n "$ok" ]; then
    count=$(grep -c "^OK $ok\$" <<<"$out")
    if [ "$count" != 1 ]; then
        echo "direct_test: FAIL: \"OK $ok\" printed $count times, expected once (one job of $np ranks)"
        rc=1
    fi
fi
exit "$rc"
