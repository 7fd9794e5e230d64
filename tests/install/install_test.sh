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
file(WRITE ${CMAKE_BINARY_DIR}/launcher "${SDSM_LAUNCHER}")
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
# Run by the package's SDSM_LAUNCHER: the installed sdsmrun, wherever the
# build directory was meant to install at configure time.
launcher=$(cat "$tmp/cm/b/launcher")
[ -x "$launcher" ] || { echo "find_package(sdsm): SDSM_LAUNCHER '$launcher' is not an installed program"; exit 1; }
out=$("$launcher" -n 4 --timeout 60 "$tmp/cm/b/prog")
[ "$out" = 6 ] || { echo "find_package build printed '$out', expected 6"; exit 1; }
# The compatibility interfaces: a TreadMarks-style program through
# pkg-config sdsm-compat and through the sdsm::sdsm_compat CMake target.
cat > "$tmp/tmk.c" <<'C'
#include <Tmk.h>
#include <stdio.h>
static long *sum;
int main(int argc, char **argv) {
    Tmk_startup(argc, argv);
    if (Tmk_proc_id == 0) { sum = Tmk_malloc(sizeof *sum); Tmk_distribute(&sum, sizeof sum); }
    Tmk_barrier(0);
    Tmk_lock_acquire(0); *sum += Tmk_proc_id + 1; Tmk_lock_release(0);
    Tmk_barrier(0);
    if (Tmk_proc_id == 0) printf("%ld\n", *sum);
    Tmk_exit(0);
}
C
cc "$tmp/tmk.c" $(pkg-config --cflags --libs sdsm-compat) -o "$tmp/tmk_pc"
out=$("$tmp/prefix/bin/sdsmrun" -n 4 --timeout 60 "$tmp/tmk_pc")
[ "$out" = 10 ] || { echo "pkg-config sdsm-compat build printed '$out', expected 10"; exit 1; }
mkdir "$tmp/cmc"
cat > "$tmp/cmc/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(user C)
find_package(sdsm REQUIRED)
add_executable(tmk ../tmk.c)
target_link_libraries(tmk PRIVATE sdsm::sdsm_compat)
CM
cmake -S "$tmp/cmc" -B "$tmp/cmc/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cmc/b" >/dev/null
out=$("$tmp/prefix/bin/sdsmrun" -n 3 --timeout 60 "$tmp/cmc/b/tmk")
[ "$out" = 6 ] || { echo "find_package sdsm::sdsm_compat build printed '$out', expected 6"; exit 1; }
# An unmodified OpenMP program through the installed sdsmcc, run by the
# installed sdsmrun: the same output as gcc -fopenmp on one machine.
cat > "$tmp/omp.c" <<'C'
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    long n = 100000, *a = malloc(n * sizeof *a), sum = 0;
#pragma omp parallel for reduction(+ : sum)
    for (long i = 0; i < n; i++) { a[i] = i; sum += a[i]; }
    printf("%d %ld\n", omp_get_max_threads(), sum);
    return 0;
}
C
PATH="$tmp/prefix/bin:$PATH" sdsmcc -O2 -fopenmp "$tmp/omp.c" -o "$tmp/omp_sdsm"
out=$(PATH="$tmp/prefix/bin:$PATH" sdsmrun -n 2 --timeout 60 "$tmp/omp_sdsm")
[ "$out" = "2 4999950000" ] || { echo "sdsmcc build printed '$out', expected '2 4999950000'"; exit 1; }
# A PARMACS program through the installed threads-model macro file and
# sdsmcc -pthread: the workers read a global the master set after CREATE.
cat > "$tmp/pmt.C" <<'C'
MAIN_ENV
static long base, P = 3, *sum;
LOCKDEC(lk)
BARDEC(bar)
static void Work(void) {
    static long next;
    long id;
    LOCK(lk) id = next++; UNLOCK(lk)
    if (id == 0) base = 100;
    BARRIER(bar, P)
    LOCK(lk) *sum += base + id; UNLOCK(lk)
}
int main(void) {
    sum = G_MALLOC(sizeof *sum)
    MAIN_INITENV(, 0)
    *sum = 0;
    LOCKINIT(lk)
    BARINIT(bar, P)
    CREATE(Work, P)
    WAIT_FOR_END(P)
    printf("%ld\n", *sum);
    MAIN_END
}
C
if command -v m4 >/dev/null; then
    m4 "$(pkg-config --variable=parmacs_threads sdsm-compat)" "$tmp/pmt.C" > "$tmp/pmt.c"
    PATH="$tmp/prefix/bin:$PATH" sdsmcc -O2 -pthread "$tmp/pmt.c" -o "$tmp/pmt_sdsm"
    out=$(PATH="$tmp/prefix/bin:$PATH" sdsmrun -n 3 --timeout 60 "$tmp/pmt_sdsm")
    [ "$out" = 303 ] || { echo "PARMACS threads-model build printed '$out', expected 303"; exit 1; }
fi
echo "install OK: pkg-config, find_package(sdsm) and sdsmcc builds run (sdsm, sdsm-compat, OpenMP, PARMACS threads)"
