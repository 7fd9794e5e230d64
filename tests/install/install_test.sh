#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds a user program the
# two documented ways (pkg-config and CMake find_package) and runs each with
# the installed sdsmrun.  Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cat > "$tmp/prog.c" <<'C'
#include <sdsm.h>
#include <stdio.h>
int main(int argc, char **argv) {
    sdsm_init(&argc, &argv);
    long *sum = sdsm_calloc(1, sizeof(long), 0);
    sdsm_lock(0); *sum += sdsm_rank(); sdsm_unlock(0);
    sdsm_barrier();
    if (sdsm_rank() == 0) printf("%ld\n", *sum);
    sdsm_finalize();
}
C
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/$(gcc -print-multiarch 2>/dev/null)/pkgconfig"
cc "$tmp/prog.c" $(pkg-config --cflags --libs sdsm) -o "$tmp/prog_pc"
out=$("$tmp/prefix/bin/sdsmrun" -n 8 --timeout 60 "$tmp/prog_pc")
[ "$out" = 28 ] || { echo "pkg-config build printed '$out', expected 28"; exit 1; }
mkdir "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(user C)
find_package(sdsm REQUIRED)
add_executable(prog ../prog.c)
target_link_libraries(prog PRIVATE sdsm::sdsm)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
out=$("$tmp/prefix/bin/sdsmrun" -n 4 --timeout 60 "$tmp/cm/b/prog")
[ "$out" = 6 ] || { echo "find_package build printed '$out', expected 6"; exit 1; }
echo "install OK: pkg-config and find_package(sdsm) builds run"
