#!/bin/sh
# xchg_ref.sh REF_MICRO - ref_micro's page exchange on loopback: a server
# (xchg-serve on any free port) and a client keeping 4 requests in flight
# each way; passes when the client prints one sample per batch.
ref=$1
out=$(mktemp) || exit 1
"$ref" xchg-serve 0 >"$out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$out"' EXIT
for _ in $(seq 100); do
    grep -q '^listening' "$out" && break
    sleep 0.05
done
port=$(awk '/^listening/ {print $2}' "$out")
[ -n "$port" ] || { echo "xchg_ref.sh: no server"; cat "$out"; exit 1; }
samples=$("$ref" xchg-to 127.0.0.1 "$port" 4 14 3) || exit 1
echo "$samples"
n=$(echo "$samples" | grep -c '^sample xchg_4 [1-9][0-9.]*$')
[ "$n" = 3 ] || { echo "xchg_ref.sh: $n samples, 3 expected"; exit 1; }
