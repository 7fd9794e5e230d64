# twohosts.sh - sourced by the tests that run on two emulated hosts with
# network profiles (netprofile_test.sh, threads_prefetch_test.sh), with
# HERE (this folder) and BUILD (the build directory) set.  It sets NP (the
# netprofile.sh command) and defines twohosts_up NAME: checks for
# iptables, makes TMP (a temporary folder) and D (the cluster's folder in
# it), brings two hosts up and arranges that at exit the profile is turned
# off, the hosts taken down and TMP removed.  NAME names the test in the
# skip message.  Exits 77 (skipped, with a message) without root,
# namespaces or iptables.  twohosts_profile PROFILE sets a profile on both
# hosts, or fails the test.

NP="bash $HERE/netprofile.sh --build $BUILD"

twohosts_cleanup() {
    $NP "$D" off >/dev/null 2>&1
    bash "$HERE/cluster.sh" down "$D" 2>/dev/null
    rm -rf "$TMP"
}

twohosts_up() {
    command -v iptables >/dev/null ||
        { echo "SKIP: $1: no iptables (Debian: apt-get install iptables)"; exit 77; }
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/sdsm-$1.XXXXXX")
    D=$TMP/cluster
    trap twohosts_cleanup EXIT
    trap 'exit 143' TERM INT
    bash "$HERE/cluster.sh" up "$D" 2
    local rc=$?
    [ $rc -eq 0 ] || exit $rc # 77: skipped by cluster.sh with its message
}

twohosts_profile() {
    $NP "$D" "$1" >"$TMP/np.log" 2>&1 ||
        { cat "$TMP/np.log"; echo "FAIL: netprofile.sh $1"; exit 1; }
}
