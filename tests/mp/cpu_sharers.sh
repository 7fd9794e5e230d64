#!/bin/sh
# cpu_sharers.sh SDSMRUN PROGRAM - which ranks of a host count as sharing
# a rank's CPUs (boot.c, link_peers): for the default run slots and for
# whether a polling waiter yields.  Ranks started on one CPU set share it
# (sdsmrun alone; taskset -c 0 sdsmrun); ranks that a launcher binds to
# CPUs of their own (here a taskset per rank, bind_rank.sh) do not, and
# must each see 1 rank on their CPUs, not 2.  Read from the debug line
# "N run slot(s) ... shared by K rank(s)" of every rank.
run=$1 prog=$2
command -v taskset >/dev/null || { echo "cpu_sharers.sh: no taskset: skipped"; exit 77; }
sharers() { # sharers LABEL CMD...: every rank's K, one per line, sorted
    label=$1
    shift
    out=$(SDSM_LOG=debug SDSM_THREADS=2 "$run" -n 2 --timeout 60 "$@" "$prog" 2>&1)
    st=$?
    [ $st = 0 ] || { printf '%s\n' "$out"; echo "cpu_sharers.sh: $label: status $st"; exit 1; }
    got=$(printf '%s\n' "$out" | sed -n 's/.*run slot(s).*shared by \([0-9]*\) rank(s).*/\1/p' | sort | tr '\n' ' ')
    echo "$label: ranks on each rank's CPUs: $got"
}
check() { # check LABEL WANT CMD...
    label=$1 want=$2
    shift 2
    sharers "$label" "$@"
    [ "$got" = "$want" ] || { printf '%s\n' "$out"; echo "cpu_sharers.sh: $label: want '$want'"; exit 1; }
}
check "sdsmrun alone" "2 2 " env
check "taskset -c 0 sdsmrun" "2 2 " taskset -c 0
if [ "$(nproc)" -ge 2 ]; then
    check "a CPU each" "1 1 " "$(dirname "$0")/bind_rank.sh"
else
    echo "cpu_sharers.sh: one CPU only: the bound case skipped"
fi
echo "cpu_sharers.sh: PASS"
