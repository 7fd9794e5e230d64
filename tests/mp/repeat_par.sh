#!/bin/bash
# repeat_par.sh ROUNDS COPIES EXPECT -- command...
#
# Runs COPIES copies of the command at once, ROUNDS times over, and fails
# (printing the first bad copy's output) unless every copy exits with status
# 0 and prints EXPECT (an extended regular expression).  For races that
# show only when several jobs compete for the CPUs.
set -u
rounds=$1 copies=$2 expect=$3
shift 3
[ "${1:-}" = -- ] && shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for ((r = 1; r <= rounds; r++)); do
    pids=()
    for ((c = 1; c <= copies; c++)); do
        "$@" >"$dir/$c" 2>&1 &
        pids+=($!)
    done
    for ((c = 1; c <= copies; c++)); do
        st=0
        wait "${pids[c - 1]}" || st=$?
        if [ "$st" -ne 0 ] || ! grep -Eq -- "$expect" "$dir/$c"; then
            echo "repeat_par: round $r, copy $c: exit status $st; its output:"
            cat "$dir/$c"
            exit 1
        fi
    done
done
echo "repeat_par: $((rounds * copies)) runs passed"
