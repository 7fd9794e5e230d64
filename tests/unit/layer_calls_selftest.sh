#!/usr/bin/env bash
# layer_calls_selftest.sh - layer_calls.sh must fail on an upward call and
# on a C library name defined outside omp/override.c: two small objects of
# our own, compiled here, break each rule once.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/core" "$tmp/src/proto" "$tmp/obj/src/core" "$tmp/obj/src/proto"
echo 'void sdsm_upward(void); void sdsm_low(void) { sdsm_upward(); }' >"$tmp/src/core/low.c"
echo 'void sdsm_upward(void) {} int puts(const char *s) { (void)s; return 0; }' >"$tmp/src/proto/high.c"
${CC:-cc} -c "$tmp/src/core/low.c" -o "$tmp/obj/src/core/low.c.o"
${CC:-cc} -c "$tmp/src/proto/high.c" -o "$tmp/obj/src/proto/high.c.o"
set +e
out=$(bash "$here/layer_calls.sh" "$tmp/src" "$tmp/obj" 2>&1)
rc=$?
set -e
echo "$out"
[ "$rc" -ne 0 ] || { echo "selftest: layer_calls.sh passed a tree it must fail"; exit 1; }
grep -q "core/low.c calls sdsm_upward, defined in proto" <<<"$out" || { echo "selftest: upward call not reported"; exit 1; }
grep -q "proto/high.c defines puts, a C library function" <<<"$out" || { echo "selftest: C library name not reported"; exit 1; }
echo "layer_calls selftest OK"
