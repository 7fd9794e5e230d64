#!/usr/bin/env bash
# PMIx installed after the first configure: the configure step says it is
# missing and how to get it, and the next build configures again and finds
# it.  A scratch project runs the build's PMIx detection
# (cmake/SdsmFeatures.cmake) with pkg-config directories of its own; the
# system's PMIx is linked into one of them to "install" it.
# Usage: pmix_recheck_test.sh SOURCE_DIR
set -euo pipefail
src=$1
pc=$(pkg-config --path pmix 2>/dev/null) || { echo "SKIP: no PMIx on this system (pkg-config pmix)"; exit 77; }
command -v ninja >/dev/null || { echo "SKIP: ninja not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/pc" "$tmp/p"
cat >"$tmp/p/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.18)
project(pmix_recheck NONE)
option(SDSM_PMIX "" ON)
list(APPEND CMAKE_MODULE_PATH "$src/cmake")
include(SdsmFeatures)
sdsm_find_pmix()
message(STATUS "PMIx: \${SDSM_PMIX_NOTE}")
add_custom_target(nothing ALL)
CM
unset PKG_CONFIG_PATH
export PKG_CONFIG_LIBDIR=$tmp/pc
cmake -S "$tmp/p" -B "$tmp/b" -G Ninja >"$tmp/conf" 2>&1 || { cat "$tmp/conf"; exit 1; }
grep -q "PMIx: no: pkg-config finds no pmix. Install .*libpmix-dev.* the next build notices them" "$tmp/conf" || {
    echo "the configure step does not say PMIx is missing and how to get it:"
    cat "$tmp/conf"
    exit 1
}
# Nothing changed: the build does not configure again.
cmake --build "$tmp/b" >"$tmp/build1" 2>&1
! grep -q "Re-running CMake" "$tmp/build1" || { echo "configured again with nothing changed:"; cat "$tmp/build1"; exit 1; }
sleep 1 # a directory time stamp one second later, whatever the file system's resolution
ln -s "$pc" "$tmp/pc/pmix.pc"
cmake --build "$tmp/b" >"$tmp/build2" 2>&1
grep -q "PMIx: yes, PMIx" "$tmp/build2" || {
    echo "the build after PMIx appeared did not find it:"
    cat "$tmp/build2"
    exit 1
}
echo "PMIx recheck OK: reported missing, found by the next build"
