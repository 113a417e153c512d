#!/usr/bin/env bash
# Does SQUEEZE_MAX_RATE hold? For each rate, squeeze-transport-bench streams --size messages
# (8 in flight, one direction, raw) three ways, runs alternated, --rounds times:
#   pacing-lo:    loopback, SQUEEZE_MAX_RATE=<rate> (the kernel's TCP pacing, no qdisc)
#   pacing-veth:  a veth pair between two network namespaces, SQUEEZE_MAX_RATE=<rate>
#   tbf-veth:     the same veth pair shaped with tc tbf at <rate> (as perf/link_emu.sh shapes it:
#                 burst 1 ms at line rate, at least 64 KiB; latency 20ms: perf/netns_pair.sh),
#                 no pacing
# and prints the achieved Gbit/s and its ratio to the rate asked. Extra environment (for
# example SQUEEZE_NSOCKS_PERTHREAD=4 SQUEEZE_SOCKET_NTHREADS=1) applies to every run.
# Needs root, ip and tc. Everything it creates is removed on exit.
#
#   perf/pacing_check.sh [--rates "1 10"] [--size 64M] [--rounds 2] [--bench PATH]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rates="1 10"; size=64M; rounds=2
bench=${SQUEEZE_TRANSPORT_BENCH:-$root/build/perf/squeeze-transport-bench}
while (($#)); do
  case $1 in
    --rates) rates=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bench) bench=$2; shift 2 ;;
    -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
    *) echo "pacing_check.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
die() { echo "pacing_check.sh: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces and tc)"
command -v ip >/dev/null && command -v tc >/dev/null || die "needs ip and tc (iproute2)"
[[ -x $bench ]] || die "$bench not found: cmake --build build --target squeeze-transport-bench"

source "$here/netns_pair.sh"
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  netns_pair_remove
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
netns_pair_create sqp 198.18.1.1 198.18.1.2
shape() { netns_pair_shape "$1" >/dev/null; }  # shape <gbit>|off

# measure <label> <gbit asked> <env...> -- <bench args>: prints one row
measure() {
  local label=$1 asked=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out
  out=$(env "${envs[@]}" "$@" -b "$size" -e "$size" --reps 2 --json 2>/dev/null | tail -1)
  python3 - "$label" "$asked" "$out" <<'PY'
import json, sys
label, asked, row = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
got = row["squeeze_GBps"] * 8
print("%-12s %8g %10.3f %8.3f" % (label, asked, got, got / asked))
PY
}
echo "# pacing_check: squeeze-transport-bench, $size messages, 8 in flight, one direction; $(uname -r)"
echo "# extra environment: $(env | grep -E '^(SQUEEZE|NCCL)_' | tr '\n' ' ')"
printf "%-12s %8s %10s %8s\n" "# path" "asked" "Gbit/s" "ratio"
for ((round = 1; round <= rounds; round++)); do
  for gbit in $rates; do
    measure pacing-lo "$gbit" SQUEEZE_MAX_RATE=$gbit -- "$bench" --ifname lo
    shape off
    measure pacing-veth "$gbit" SQUEEZE_MAX_RATE=$gbit -- ip netns exec "$ns_a" "$bench" --ifname "$if_a" \
      --peer-netns "$ns_b" --peer-ifname "$if_b" --socket-addr "$addr_a"
    shape "$gbit"
    measure tbf-veth "$gbit" SQUEEZE_MAX_RATE=0 -- ip netns exec "$ns_a" "$bench" --ifname "$if_a" \
      --peer-netns "$ns_b" --peer-ifname "$if_b" --socket-addr "$addr_a"
    shape off
  done
done
