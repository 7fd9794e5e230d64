#!/usr/bin/env bash
# sdsmcc_wrap.sh - what sdsmcc (gcc on x86-64, tools/sdsmcc/sdsmcc-wrap)
# makes of a program's fences: every fence the compiler emits for a flush,
# __sync_synchronize or a sequentially consistent atomic_thread_fence
# becomes a call of sdsm_omp_fence, with the file marked (.sdsm_fence);
# a fence in an asm statement stays; a file without fences gets no mark.
# Checked on -S output (AT&T and Intel syntax), on -c with and without
# -pipe, and on objects linked into a program.
#
#   sdsmcc_wrap.sh SDSMCC
set -u
sdsmcc=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "sdsmcc_wrap: $*"; exit 1; }

cat >"$work/f.c" <<'EOF'
#include <stdatomic.h>
int flag[4];
void w(int i) { flag[i] = 1;
#pragma omp flush(flag)
}
void r(int i) { while (flag[i] == 0) {
#pragma omp flush(flag)
} }
void s(void) { __sync_synchronize(); }
void c11(void) { atomic_thread_fence(memory_order_seq_cst); }
void own(void) { __asm__ volatile("mfence" ::: "memory"); }
EOF
cat >"$work/plain.c" <<'EOF'
int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
EOF

calls() { grep -cE '^[[:space:]]*call[[:space:]]+sdsm_omp_fence@PLT' "$1"; }
fences() { grep -cE '^[[:space:]]*(mfence|lock[[:space:]]+or)' "$1"; }

for syntax in att intel; do
    "$sdsmcc" -O2 -fopenmp -masm=$syntax -S "$work/f.c" -o "$work/f.$syntax.s" || fail "-S -masm=$syntax failed"
    n=$(calls "$work/f.$syntax.s")
    [ "$n" = 4 ] || fail "-masm=$syntax: $n calls of sdsm_omp_fence, not 4 (flush twice, __sync_synchronize, atomic_thread_fence)"
    n=$(fences "$work/f.$syntax.s")
    [ "$n" = 1 ] || fail "-masm=$syntax: $n fence instructions left, not 1 (the asm statement's)"
    grep -q '\.sdsm_fence' "$work/f.$syntax.s" || fail "-masm=$syntax: no .sdsm_fence section"
done

for pipe in "" -pipe; do
    "$sdsmcc" -O2 -fopenmp $pipe -c "$work/f.c" -o "$work/f.o" || fail "-c $pipe failed"
    objdump -h "$work/f.o" | grep -q ' \.sdsm_fence ' || fail "-c $pipe: no .sdsm_fence section"
    n=$(objdump -dr "$work/f.o" | grep -c 'R_X86_64_PLT32[[:space:]]*sdsm_omp_fence')
    [ "$n" = 4 ] || fail "-c $pipe: $n calls of sdsm_omp_fence, not 4"
    "$sdsmcc" -O2 $pipe -c "$work/plain.c" -o "$work/plain.o" || fail "-c $pipe plain.c failed"
    objdump -h "$work/plain.o" | grep -q ' \.sdsm_fence ' && fail "-c $pipe: a file without fences was marked"
done

# The mark survives the link (the runtime reads it from the program's file).
cat >"$work/main.c" <<'EOF'
void w(int);
int main(void) { w(0); return 0; }
EOF
"$sdsmcc" -O2 -fopenmp "$work/main.c" "$work/f.o" -o "$work/prog" || fail "link failed"
objdump -h "$work/prog" | grep -q ' \.sdsm_fence ' || fail "the linked program lost the .sdsm_fence section"
# Preprocessing only and syntax checks pass through untouched.
"$sdsmcc" -fopenmp -E "$work/f.c" -o "$work/f.i" || fail "-E failed"
grep -q 'pragma omp flush' "$work/f.i" || fail "-E output changed"
"$sdsmcc" -fopenmp -fsyntax-only "$work/f.c" || fail "-fsyntax-only failed"
echo "sdsmcc_wrap: ok"
