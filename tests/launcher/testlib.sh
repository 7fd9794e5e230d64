# testlib.sh - what the launcher test scripts share (sourced, not run).
# The script sets CASE, OUT, ERR and TAG (a word on every rank's command
# line), runs its jobs into RC, MS, OUT and ERR, then calls run_case.
# LEFTOVER_SETTLE: seconds to let a stopped job's processes go before
# looking for leftovers (default 0).
RC=0 MS=0 FAILED=0

fail() {
    echo "FAIL [$CASE]: $*"
    FAILED=1
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_err() { grep -qF -- "$1" "$ERR" || fail "stderr lacks '$1'"; }
expect_out() { grep -qF -- "$1" "$OUT" || fail "stdout lacks '$1'"; }
expect_no_err() { grep -qF -- "$1" "$ERR" && fail "stderr has '$1'"; }
expect_quiet() { [ ! -s "$ERR" ] || fail "stderr is not empty"; }
expect_faster() { [ "$MS" -lt "$1" ] || fail "took $MS ms, limit $1 ms"; }
expect_count() { # expect_count N TEXT: TEXT appears on exactly N lines of stderr
    local n
    n=$(grep -cF -- "$2" "$ERR")
    [ "$n" -eq "$1" ] || fail "stderr has '$2' $n times, expected $1"
}
expect_no_leftovers() {
    local left
    [ "${LEFTOVER_SETTLE:-0}" = 0 ] || sleep "$LEFTOVER_SETTLE"
    left=$(pgrep -f -- "$TAG")
    if [ -n "$left" ]; then
        fail "processes left behind: $(ps -o pid,args -p "$(echo $left | tr ' ' ,)")"
        pkill -KILL -f -- "$TAG"
    fi
}

# run_case: run case_$CASE, print the outputs if it failed, PASS otherwise.
run_case() {
    if ! declare -F "case_$CASE" >/dev/null; then
        echo "unknown case $CASE"
        exit 2
    fi
    "case_$CASE"
    if [ "$FAILED" -ne 0 ]; then
        echo "--- stdout:"
        cat "$OUT"
        echo "--- stderr:"
        cat "$ERR"
        exit 1
    fi
    echo "PASS [$CASE] ($MS ms)"
}
