#!/usr/bin/env bash
# Does compressing cost anything where it cannot pay? Runs squeeze-perf over unthrottled
# loopback, raw (config/off.json) and with a compressing policy, alternated --runs times so
# that both see the same machine, and prints per collective and size the median time of each
# and their ratio (raw time / compressed time: >= 1 means the compressing policy lost nothing),
# plus the compressed run's median ratio from the plugin's statistics. The plugin's
# compress-only-when-it-pays controller should send nearly everything raw here.
#
#   perf/bypass_check.sh [--runs 5] [--policy config/dlrm-alltoall.json] [--bin PATH] [--json]
#                        [-- squeeze-perf args (default: -n 2 -b 1M -e 16M -f 4 --iters 50
#                         --collective alltoall)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5; policy=$root/config/dlrm-alltoall.json; json=0
bin=${SQUEEZE_PERF:-$root/build/perf/squeeze-perf}
args=(-n 2 -b 1M -e 16M -f 4 --iters 50 --collective alltoall)
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --policy) policy=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; args=("$@"); break ;;
    *) echo "bypass_check.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "bypass_check.sh: $*" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs: '$runs' is not a positive integer"
[[ -x $bin ]] || die "$bin not found: build it with 'cmake --build build --target squeeze-perf' or pass --bin PATH"
[[ -r $policy ]] || die "--policy $policy: not readable"
command -v python3 >/dev/null || die "python3 not found (apt-get install python3)"

work=$(mktemp -d /tmp/squeeze-bypass.XXXXXX)
trap 'rm -rf "$work"' EXIT
for ((i = 0; i < runs; ++i)); do
  "$bin" "${args[@]}" --policy "$root/config/off.json" --json --label raw >"$work/raw.$i.jsonl"
  "$bin" "${args[@]}" --policy "$policy" --json --label compressed >"$work/comp.$i.jsonl"
done
python3 - "$work" "$runs" "$json" "$policy" <<'EOF'
import json, statistics, sys
work, runs, as_json, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
def load(kind):
    rows = {}
    for i in range(runs):
        for line in open("%s/%s.%d.jsonl" % (work, kind, i)):
            r = json.loads(line) if line.strip() else None
            if r and "collective" in r:
                rows.setdefault((r["collective"], r["size"]), []).append(r)
    return rows
raw, comp = load("raw"), load("comp")
out = []
for key in sorted(raw):
    if key not in comp:
        continue
    t_raw = statistics.median(r["time_us"] for r in raw[key])
    t_comp = statistics.median(r["time_us"] for r in comp[key])
    ratios = [r["ratio"] for r in comp[key] if r.get("ratio") is not None]
    out.append({"bench": "bypass-check", "collective": key[0], "size": key[1], "runs": runs,
                "raw_us_median": t_raw, "compressed_us_median": t_comp, "raw_over_compressed": t_raw / t_comp,
                "ratio_median": statistics.median(ratios) if ratios else None, "policy": policy})
if as_json:
    for r in out:
        print(json.dumps(r))
    sys.exit(0)
print("# bypass check: %d alternated runs each, loopback; compressed policy %s" % (runs, policy))
print("%-10s %10s %13s %13s %10s %7s" % ("# coll", "size(B)", "raw(us)", "comp(us)", "raw/comp", "ratio"))
for r in out:
    ratio = "-" if r["ratio_median"] is None else "%.2f" % r["ratio_median"]
    print("%-10s %10d %13.1f %13.1f %10.3f %7s" % (r["collective"], r["size"], r["raw_us_median"],
          r["compressed_us_median"], r["raw_over_compressed"], ratio))
EOF
