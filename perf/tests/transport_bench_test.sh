#!/usr/bin/env bash
# squeeze-transport-bench's parallel-sockets column as a user reads it: N defaults to the
# plugin's data sockets for the run (from SQUEEZE_NSOCKS_PERTHREAD x SQUEEZE_SOCKET_NTHREADS
# or their NCCL fallbacks), --sockets overrides it, the JSON lines carry it, and the table
# keeps its columns with the parallel one beside the plain socket's.
#
#   transport_bench_test.sh <squeeze-transport-bench>
set -uo pipefail
bench=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export SQUEEZE_SOCKET_IFNAME=lo
unset SQUEEZE_NSOCKS_PERTHREAD SQUEEZE_SOCKET_NTHREADS NCCL_NSOCKS_PERTHREAD NCCL_SOCKET_NTHREADS

# json_field <line> <field>: the field's value.
json_field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# The plugin's layout sets N: 2 sockets per thread x 1 thread, through NCCL's variables. 256 KiB
# messages are cut in 2 parts of 128 KiB, so both parallel sockets carry bytes.
out=$(NCCL_NSOCKS_PERTHREAD=2 NCCL_SOCKET_NTHREADS=1 "$bench" -b 256K -e 256K --reps 1 --json 2>&1) ||
  fail "the bench failed with NCCL_NSOCKS_PERTHREAD=2 NCCL_SOCKET_NTHREADS=1: $out"
[[ $(grep -c . <<<"$out") -eq 1 ]] || fail "--json printed more than one line for one size: $out"
line=$(tail -1 <<<"$out")
[[ $(json_field "$line" sockets) == 2 ]] || fail "N is not the plugin's 2 data sockets: $line"
python3 - "$line" <<'PY' || fail "the JSON fields do not add up: $line"
import json, sys
r = json.loads(sys.argv[1])
assert r["size"] == 262144
assert r["sockets_GBps"] > 0 and r["socket_GBps"] > 0 and r["squeeze_GBps"] > 0
assert abs(r["bw_ratio_sockets"] - r["squeeze_GBps"] / r["sockets_GBps"]) < 1e-3 * r["bw_ratio_sockets"] + 1e-3
assert abs(r["bw_ratio"] - r["squeeze_GBps"] / r["socket_GBps"]) < 1e-3 * r["bw_ratio"] + 1e-3
PY

# Nothing set on a link of unknown speed with these cores: one socket, and the parallel column
# repeats the plain socket's figure.
out=$("$bench" -b 8 -e 8 --reps 1 --json 2>&1) || fail "the bench failed with nothing set: $out"
line=$(tail -1 <<<"$out")
[[ $(json_field "$line" sockets) == 1 ]] || fail "auto on lo should be one socket: $line"
[[ $(json_field "$line" sockets_GBps) == $(json_field "$line" socket_GBps) ]] ||
  fail "with one socket the parallel column should be the plain socket's: $line"

# --sockets wins over the plugin's layout; the table names N in its header.
out=$(NCCL_NSOCKS_PERTHREAD=2 NCCL_SOCKET_NTHREADS=1 "$bench" -b 8 -e 8 --reps 1 --sockets 3 2>&1) ||
  fail "the bench failed with --sockets 3: $out"
grep -q "vs 3 in parallel (one thread each.*--sockets)" <<<"$out" || fail "the title does not say 3 --sockets: $out"
header=$(grep -m1 '^ *size(B)' <<<"$out")
for col in "squeeze GB/s" "socket GB/s" "3 socks GB/s" "squeeze us" "socket us" "lat x"; do
  [[ $header == *"$col"* ]] || fail "the table has no '$col' column: $header"
done
row=$(grep -E '^ +8 ' <<<"$out")
[[ $(wc -w <<<"$row") -eq 9 ]] || fail "the 8-byte row does not have 9 columns: '$row'"

((failures == 0)) && echo PASS
exit $((failures != 0))
