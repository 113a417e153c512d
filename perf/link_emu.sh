#!/usr/bin/env bash
# Link emulation: two network namespaces joined by a veth pair, each end shaped with tc tbf
# to 1, 10 and 25 Gbit/s in turn; squeeze-perf runs one rank in each namespace, compressed (the
# plugin's default policy, or --policy FILE) with raw (config/off.json, a private copy of the
# plugin: squeeze-perf --baseline) alternating iteration by iteration in the same processes over
# the same link. The speedup (the median over iterations of raw time / compressed time) is
# printed per rate, collective and size, as a table and as JSON lines; raw(us) and comp(us) are
# each arm's mean. Needs root, ip and tc (iproute2), python3.
# Everything it creates is removed on exit, Ctrl-C or kill.
#
#   perf/link_emu.sh [--rates "1 10 25"] [--latency 20ms] [--min 1M] [--max 16M] [--iters 5] [--warmup 5]
#                    [--policy FILE] [--collective both] [--route ring] [--raw-route ring] [--bin PATH]
#                    [--json] [--logs DIR] [--pin] [-- squeeze-perf args]
#
# --route collnet runs the compressed arm's all-reduces on the plugin's collective network
# (squeeze-perf --route collnet); the raw arm stays on the ring unless --raw-route collnet, so
# `--route collnet` compares the collective network under --policy with the raw ring, and
# `--route collnet --policy config/off.json` raw CollNet with the raw ring. All-to-alls always
# take the net table; with a collnet route --collective defaults to allreduce.
# --logs DIR keeps each rank's stderr (the plugin's NCCL_DEBUG log) as DIR/<Gbit/s>-<run>-rank<r>.log.
# --pin gives each rank (each emulated host) its own half of this machine's cores (taskset),
# as two hosts would have; without it both ranks, their codec threads and the kernel's network
# work float over all cores. Raw and compressed runs are pinned alike.
#
# Addresses: 198.18.0.1/30 and 198.18.0.2/30 (RFC 2544 benchmarking range); the only traffic
# is between the two namespaces.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

rates="1 10 25"; latency=20ms; min=1M; max=16M; iters=5; warmup=5; policy=""; collective=; json=0; logs=; pin=0
route=ring; raw_route=ring
bin=${SQUEEZE_PERF:-$root/build/perf/squeeze-perf}
extra=()
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }
while (($#)); do
  case $1 in
    --rates) rates=$2; shift 2 ;;
    --latency) latency=$2; shift 2 ;;
    --min|-b) min=$2; shift 2 ;;
    --max|-e) max=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --policy) policy=$2; shift 2 ;;
    --collective) collective=$2; shift 2 ;;
    --route) route=$2; shift 2 ;;
    --raw-route) raw_route=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --json) json=1; shift ;;
    --logs) logs=$2; shift 2 ;;
    --pin) pin=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "link_emu.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

die() { echo "link_emu.sh: $*" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces and tc); run it with sudo"
command -v ip >/dev/null || die "'ip' not found: install iproute2 (apt-get install iproute2)"
command -v tc >/dev/null || die "'tc' not found: install iproute2 (apt-get install iproute2)"
command -v python3 >/dev/null || die "python3 not found (apt-get install python3)"
[[ -x $bin ]] || die "$bin not found: build it with 'cmake --build build --target squeeze-perf' or pass --bin PATH"
# The collective network carries all-reduces only: measure those unless told otherwise.
[[ -n $collective ]] || { [[ $route == collnet || $raw_route == collnet ]] && collective=allreduce || collective=both; }
for r in "$route" "$raw_route"; do [[ $r == ring || $r == collnet ]] || die "--route/--raw-route: '$r' is not ring or collnet"; done
for r in $rates; do [[ $r =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--rates: '$r' is not a number of Gbit/s"; done
if [[ -n $policy ]]; then
  [[ -r $policy ]] || die "--policy $policy: not readable"
  policy=$(cd "$(dirname "$policy")" && pwd)/$(basename "$policy")
fi
if [[ -n $logs ]]; then
  mkdir -p "$logs" || die "--logs $logs: cannot create it"
  logs=$(cd "$logs" && pwd)
fi
# --pin: rank 0 gets the first half of the cores this shell may use, rank 1 the second half.
cpus=("" "")
if ((pin)); then
  command -v taskset >/dev/null || die "--pin needs 'taskset' (apt-get install util-linux)"
  mapfile -t allowed < <(python3 -c "import os; print(*sorted(os.sched_getaffinity(0)), sep='\n')")
  ((${#allowed[@]} >= 2)) || die "--pin needs at least 2 cores, this shell may use ${#allowed[@]}"
  half=$((${#allowed[@]} / 2))
  cpus[0]=$(IFS=,; echo "${allowed[*]:0:half}")
  cpus[1]=$(IFS=,; echo "${allowed[*]:half:half}")
fi
# Runs in the background (&), so exec keeps the recorded pid the process cleanup must kill.
pinned() { local c=$1; shift; if [[ -n $c ]]; then exec taskset -c "$c" "$@"; else exec "$@"; fi; }
off_policy=$root/config/off.json
[[ -r $off_policy ]] || die "$off_policy is missing (the raw run's policy)"

# Unique names (perf/netns_pair.sh: the pid in each), so two runs (or a leftover) never collide.
source "$here/netns_pair.sh"
port=29517
work=$(mktemp -d /tmp/squeeze-link-emu.XXXXXX)
pids=()

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  netns_pair_remove
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "link_emu.sh: interrupted, cleaning up" >&2; exit 130' INT
trap 'echo "link_emu.sh: terminated, cleaning up" >&2; exit 143' TERM

netns_pair_create sqz 198.18.0.1 198.18.0.2

# tbf on the egress of both ends, so both directions are shaped (perf/netns_pair.sh: burst 1 ms
# at line rate, at least 64 KiB; --latency, default 20ms, how long a packet may queue before
# tbf drops it). Prints the burst.
shape() { netns_pair_shape "$1" "$latency"; }

# run_pair <label> <policy or ""> <out.jsonl> <squeeze-perf args...>: one rank per namespace.
# An empty policy means the plugin's built-in default (SQUEEZE_POLICY unset).
run_pair() {
  local label=$1 pol=$2 out=$3; shift 3
  local common=(--nranks 2 --rendezvous "$addr_a:$port" --json --label "$label" --timeout 60 "$@")
  # The plugin's statistics (the ratio) go under $work, which cleanup removes even when the
  # ranks are killed; SQUEEZE_RANK names each rank's file.
  export SQUEEZE_STATS=$work/stats.json
  [[ -n $pol ]] && common+=(--policy "$pol")
  pinned "${cpus[0]}" env -u SQUEEZE_POLICY ip netns exec "$ns_a" "$bin" --rank 0 --ifname "$if_a" "${common[@]}" >"$out" 2>"$out.err0" &
  local p0=$!
  pids+=("$p0")
  pinned "${cpus[1]}" env -u SQUEEZE_POLICY ip netns exec "$ns_b" "$bin" --rank 1 --ifname "$if_b" "${common[@]}" >/dev/null 2>"$out.err1" &
  local p1=$!
  pids+=("$p1")
  local rc=0
  wait "$p0" || rc=$?
  wait "$p1" || rc=$?
  pids=()
  if [[ -n $logs ]]; then
    cp "$out.err0" "$logs/$gbit-$label-rank0.log"
    cp "$out.err1" "$logs/$gbit-$label-rank1.log"
  fi
  if ((rc)); then
    echo "link_emu.sh: squeeze-perf ($label) failed:" >&2
    cat "$out.err0" "$out.err1" >&2
    exit 1
  fi
}

results=$work/results.jsonl
: >"$results"
comp_label=compressed
[[ $json -eq 1 ]] || echo "# link_emu: 2 ranks, one per network namespace, veth $addr_a <-> $addr_b shaped with tc tbf"
((pin == 0)) || [[ $json -eq 1 ]] || echo "# pinned: rank 0 on cores ${cpus[0]}, rank 1 on cores ${cpus[1]}"
for gbit in $rates; do
  burst=$(shape "$gbit")
  # How fast the shaped link really is: a raw all-to-all of 64 MiB per rank (32 MiB each way).
  run_pair probe "$off_policy" "$work/probe.jsonl" --collective alltoall -b 64M -e 64M --iters 3 --warmup 1 \
    --data activations
  achieved=$(python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]; print('%.3f' % (r[-1]['busbw_GBps']*8))" "$work/probe.jsonl")
  [[ $json -eq 1 ]] || echo "# tbf rate ${gbit} Gbit/s (burst $burst B, latency $latency): measured ${achieved} Gbit/s each way (raw all-to-all, 64 MiB per rank)"
  args=(--collective "$collective" -b "$min" -e "$max" --iters "$iters" --warmup "$warmup"
        --route "$route" --baseline-route "$raw_route" "${extra[@]}")
  # Raw rides along as the --baseline: a private copy of the plugin under config/off.json in
  # the same processes, over the same shaped link, iterations alternated, so both arms see the
  # same machine. (Separate raw and compressed runs differed by up to 27% with one policy.)
  run_pair "$comp_label" "$policy" "$work/comp.jsonl" "${args[@]}" --baseline "$off_policy"
  python3 - "$gbit" "$achieved" "$work/comp.jsonl" >>"$results" <<'EOF'
import json, sys
gbit, achieved, comp_f = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
rows = [json.loads(l) for l in open(comp_f) if l.strip()]
arm = lambda name: {(r["collective"], r["size"]): r for r in rows if r.get("arm") == name}
raw, comp = arm("baseline"), arm("main")
for key in sorted(raw, key=lambda k: (k[0], k[1])):
    if key not in comp:
        continue
    a, b = raw[key], comp[key]
    print(json.dumps({"bench": "link-emu", "rate_gbit": gbit, "measured_gbit": achieved, "collective": key[0],
                      "route": b.get("route"), "raw_route": a.get("route"),
                      "size": key[1], "type": a["type"], "data": a["data"], "raw_us": a["time_us"],
                      "compressed_us": b["time_us"], "speedup": b["speedup_vs_baseline"],
                      "raw_busbw_GBps": a["busbw_GBps"], "compressed_busbw_GBps": b["busbw_GBps"],
                      "ratio": b["ratio"], "max_abs_err": b["max_abs_err"], "ranks_agree": b["ranks_agree"],
                      "policy": b["policy"]}))
EOF
done

if [[ $json -eq 1 ]]; then
  cat "$results"
else
  python3 - "$results" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
if rows:
    print("# compressed policy: %s" % rows[0]["policy"])
print("%-9s %9s %-10s %-15s %10s %11s %11s %8s %7s %10s %6s" % ("# Gbit/s", "measured", "coll", "route(raw)",
      "size(B)", "raw(us)", "comp(us)", "speedup", "ratio", "max_err", "agree"))
for r in rows:
    ratio = "-" if r["ratio"] is None else "%.2f" % r["ratio"]
    err = "nan" if r["max_abs_err"] is None else "%.3g" % r["max_abs_err"]
    agree = "n/a" if r["ranks_agree"] is None else ("yes" if r["ranks_agree"] else "NO")
    route = "%s(%s)" % (r["route"], r["raw_route"])
    print("%-9g %9.2f %-10s %-15s %10d %11.1f %11.1f %8.2f %7s %10s %6s" % (r["rate_gbit"], r["measured_gbit"],
          r["collective"], route, r["size"], r["raw_us"], r["compressed_us"], r["speedup"], ratio, err, agree))
print()
for r in rows:
    print(json.dumps(r))
EOF
fi
