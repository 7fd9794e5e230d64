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

# The CMake package's SDSM_LAUNCHER names the sdsmrun of the prefix it was
# installed into (the staged one here: the package finds it from its own place).
mkdir "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(user C)
find_package(sdsm REQUIRED)
message(STATUS "launcher=${SDSM_LAUNCHER}")
CM
launcher=$(cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/stage$tmp/second" |
           sed -n 's/^-- launcher=//p')
[ "$launcher" -ef "$tmp/stage$tmp/second/bin/sdsmrun" ] || {
    echo "find_package(sdsm): SDSM_LAUNCHER is '$launcher', not the installed $tmp/stage$tmp/second/bin/sdsmrun"
    exit 1
}
# grep reads it all: with -q it could stop at the first line, and under
# pipefail the launcher's SIGPIPE would fail the test (seen under TSan).
"$launcher" --help | grep sdsmrun >/dev/null || { echo "SDSM_LAUNCHER $launcher --help failed"; exit 1; }

# make install builds only what it installs (install-parts): every file it
# installs from the build tree must be made by that target, or a fresh build
# directory's make install would find it missing.  Ninja only.
# Ninja's inputs tool leaves out a phony target's own inputs: query has them.
if [ -f "$build/build.ninja" ] && ninja -C "$build" -t inputs install-parts >"$tmp/inputs" 2>/dev/null; then
    # (and a phony input's own inputs, as the man pages' target: recursively)
    queue=(install-parts)
    while [ ${#queue[@]} -gt 0 ]; do
        q=$(ninja -C "$build" -t query "${queue[0]}" 2>/dev/null) || q=
        queue=("${queue[@]:1}")
        grep -q '^  input: phony' <<<"$q" || continue
        while read -r f; do
            echo "$f" >>"$tmp/inputs"
            queue+=("$f")
        done < <(sed -n '/^  input:/,/^  outputs:/s/^    //p' <<<"$q")
    done
    ninja -C "$build" -t targets all | sed 's/: [^:]*$//' | sort -u >"$tmp/outputs"
    grep -ho "\"$build/[^\"]*\"" $(find "$build" -name cmake_install.cmake) | tr -d '"' |
        sed "s|^$build/||" | sort -u >"$tmp/installed"
    missing=()
    while read -r f; do
        grep -qxF "$f" "$tmp/outputs" || continue # made at configure time, not by a build step
        real=$(realpath --relative-to="$build" "$build/$f")
        grep -qxF -e "$f" -e "$real" "$tmp/inputs" || missing+=("$f")
    done <"$tmp/installed"
    [ ${#missing[@]} -eq 0 ] || {
        echo "make install installs ${missing[*]}, which the install-parts target does not build (CMakeLists.txt)"
        exit 1
    }
fi
echo "make install OK: PREFIX honoured on an existing build ($# man pages installed)"
