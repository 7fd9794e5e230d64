#!/usr/bin/env bash
# zcopy_refused.sh SDSMRUN PROG - a 2-rank job whose rank 1 runs as another
# user (nobody), so the kernel refuses it rank 0's heap (/proc/<pid>/fd is
# for processes that may inspect the owner): rank 1 must say so once and
# get its pages over TCP, while rank 0 still reads rank 1's heap.  Needs
# root (to switch users) and setpriv; skipped (77) otherwise.
#   zcopy_refused.sh --rank PROG ARGS...   (the per-rank wrapper)
set -u
if [ "${1:-}" = --rank ]; then
    shift
    [ "${SDSM_RANK:-}" = 1 ] && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    exec "$@"
fi
run=${1:?usage: zcopy_refused.sh SDSMRUN PROG} prog=${2:?usage: zcopy_refused.sh SDSMRUN PROG}
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    echo "zcopy_refused: needs root and setpriv; skipped"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
exec bash "$here/../mp/mp_expect.sh" --status 0 --expect '^OK zcopy$' \
    --expect "rank 1.*zero-copy: opening rank 0's heap failed \(Permission denied\)" \
    --reject "rank 0.*zero-copy:" -- \
    env SDSM_LOG=info SDSM_ZEROCOPY=1 "$run" -n 2 --timeout 60 bash "$here/zcopy_refused.sh" --rank "$prog" refused
