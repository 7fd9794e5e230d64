#!/usr/bin/env bash
# `make install PREFIX=...` must install into PREFIX even when the build
# directory was configured earlier (with another prefix).  DESTDIR stages the
# install under a scratch directory, so a wrong prefix shows up there instead
# of writing into the real /usr/local.  The man pages, when the build has
# them (pandoc found), must be installed too.
# Usage: make_install_test.sh BUILD_DIR SOURCE_DIR [MAN_PAGE...]
# (MAN_PAGE relative to the prefix, e.g. share/man/man1/sdsmrun.1)
set -euo pipefail
build=$1 src=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for prefix in "$tmp/first" "$tmp/second"; do
    DESTDIR="$tmp/stage" make -s -C "$src" BUILD="$build" PREFIX="$prefix" JOBS=2 install >/dev/null
    for f in bin/sdsmrun include/sdsm.h "$@"; do
        [ -e "$tmp/stage$prefix/$f" ] || {
            echo "make install PREFIX=$prefix: $f is not under the prefix; installed files:"
            (cd "$tmp/stage" && find . -type f | head -20)
            exit 1
        }
    done
done
[ ! -e "$tmp/stage/usr/local" ] || { echo "make install wrote into /usr/local despite PREFIX"; exit 1; }
echo "make install OK: PREFIX honoured on an existing build ($# man pages installed)"
