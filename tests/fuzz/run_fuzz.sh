#!/bin/sh
# run_fuzz.sh FUZZER WORKDIR CORPUS SECONDS [libFuzzer options...]
# Fuzz for SECONDS starting from CORPUS (read only); new inputs and any crash
# go to WORKDIR.  Exits non-zero on a crash and prints libFuzzer's totals.
set -eu
fuzzer=$1 work=$2 corpus=$3 secs=$4
shift 4
mkdir -p "$work/corpus" "$work/artifacts"
exec "$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" "$corpus"
