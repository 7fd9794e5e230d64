#!/usr/bin/env bash
# knob_suite.sh - run the data-checking tests under one setting of the
# optimization switches (the SDSM_* variables in this script's environment,
# which ctest passes on to every rank).
#
#   knob_suite.sh CTEST BUILD_DIR INDEX
#
# The suite runs every optimization only in its default state; a fast path
# that hides a write from one mechanism (written-page tracking missing the
# home's own atomics) passes there and loses data when the switch is flipped.
# So each setting runs:
#  - the core: the tests whose data pass through what a release announces
#    (reductions and atomics every thread checks, main's shared stack, home
#    atomics, write-notice chains), every time;
#  - one third of the other data-checking tests (OpenMP programs and the mp
#    programs that check exact values), chosen by the day and INDEX (the
#    setting's number), so that the settings of one run cover different
#    thirds and every third meets every setting within three days.
# SDSM_KNOB_GROUP=all runs every one of them; =0, 1 or 2 one given third.
# Fails if a test fails or if fewer tests ran than were chosen (a name list
# that stopped matching must not pass silently).
set -u
ctest=$1 dir=$2 index=$3

core='omp_redcheck_(n2|n2x2|n4x2|update_n2|update_n4|update_n2x2)|omp_(reduction|stack|atomic)_n2|omp_stackread_n2|mp_homeatomic_(hlrc|update)_[0-9]+|mp_chain_[0-9]+|mp_ownwrites_[0-9]+|proto_private_(hlrc|update)_4'
rest='omp_(redcheck_n4|reduction_n4|reduction_update_n4|reduction_n2x2|atomic_n4|atomic_update_n4|atomic_n2x2|stack_n4|stack_update_n4|stack_n2x2|jacobi_n2|jacobi_n4|jacobi_update_n4|jacobi_n2x2|globals_n2|globals_n4|globals_update_n4|heap_n2|heap_n4|heap_update_n4|relaxed_n2|relaxed_update_n4|locks_n2|locks_update_n4|flush_n2|flush_n4|critical_n2x2|single_n2x2)|mp_(counter|stencil|multiwriter|relrace|prodcons|threads|lockcache)_[0-9]+|mp_localalloc_(hlrc|update)_[0-9]+|proto_private_(hlrc|update)_[28]'

names() { "$ctest" --test-dir "$dir" -N -R "^($1)\$" | sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\).*/\1/p'; }

group=${SDSM_KNOB_GROUP:-$(( ($(date +%s) / 86400 + index) % 3 ))}
mapfile -t pick < <(names "$core")
i=0
while read -r t; do
    if [ "$group" = all ] || [ $((i % 3)) = "$group" ]; then
        pick+=("$t")
    fi
    i=$((i + 1))
done < <(names "$rest")

settings=$(env | grep -E '^SDSM_(WP_TRACK|HOME_HOT|WRITE_AHEAD|PREFETCH|WRITE_BUFFER|ZEROCOPY|PROTOCOL|QUIET_US|HOME_TWINS)=' | sort | tr '\n' ' ')
echo "knob_suite: ${settings:-defaults}: ${#pick[@]} tests (group $group of the others)"
[ ${#pick[@]} -ge 10 ] || { echo "knob_suite: only ${#pick[@]} tests matched: the name lists are out of date"; exit 1; }
regex="^($(IFS='|'; echo "${pick[*]}"))\$"
out=$("$ctest" --test-dir "$dir" --output-on-failure -R "$regex" 2>&1)
rc=$?
echo "$out" | grep -E 'tests passed|Failed|\*\*\*|FAILED|differ' || true
ran=$(echo "$out" | sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p')
if [ "$rc" != 0 ]; then
    echo "$out" | tail -150
    echo "knob_suite: FAILED under ${settings:-defaults}"
    exit 1
fi
if [ "${ran:-0}" != ${#pick[@]} ]; then
    echo "knob_suite: ran ${ran:-0} tests of ${#pick[@]} chosen"
    exit 1
fi
echo "knob_suite: OK, ${ran} tests under ${settings:-defaults}"
