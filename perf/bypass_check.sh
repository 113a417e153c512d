#!/usr/bin/env bash
# Does compressing cost anything where it cannot pay? Runs squeeze-perf over unthrottled
# loopback --runs times, each run with the compressing policy and, as its --baseline, a
# private copy of the plugin under config/off.json (raw): the two alternate iteration by
# iteration, so both see the same machine. Prints per collective and size the median over
# runs of each run's speedup (the median over iterations of raw time / compressed time:
# >= 1 means the compressing policy lost nothing), its range, and the median ratio from the
# plugin's statistics. Separate raw and compressed processes, as this script ran before,
# differed by up to 27% with the same policy in both: more than the effect it looks for.
#
#   perf/bypass_check.sh [--runs 10] [--policy config/dlrm-alltoall.json] [--bin PATH] [--json]
#                        [-- squeeze-perf args (default: -N 2 -b 1M -e 16M -f 4 -n 100
#                         --collective alltoall)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=10; policy=$root/config/dlrm-alltoall.json; json=0
bin=${SQUEEZE_PERF:-$root/build/perf/squeeze-perf}
args=(-N 2 -b 1M -e 16M -f 4 -n 100 --collective alltoall)
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
  "$bin" "${args[@]}" --policy "$policy" --baseline "$root/config/off.json" --json >"$work/run.$i.jsonl"
done
python3 - "$work" "$runs" "$json" "$policy" <<'EOF'
import json, statistics, sys
work, runs, as_json, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4]
rows = {}
for i in range(runs):
    for line in open("%s/run.%d.jsonl" % (work, i)):
        r = json.loads(line) if line.strip() else None
        if r and r.get("arm") == "main":
            rows.setdefault((r["collective"], r["size"]), []).append(r)
out = []
for key in sorted(rows):
    sp = [r["speedup_vs_baseline"] for r in rows[key]]
    ratios = [r["ratio"] for r in rows[key] if r.get("ratio") is not None]
    out.append({"bench": "bypass-check", "collective": key[0], "size": key[1], "runs": runs,
                "iters": rows[key][0]["iters"], "raw_over_compressed": statistics.median(sp),
                "min": min(sp), "max": max(sp),
                "ratio_median": statistics.median(ratios) if ratios else None, "policy": policy})
if as_json:
    for r in out:
        print(json.dumps(r))
    sys.exit(0)
print("# bypass check: %d runs, loopback, compressed policy %s against raw, iterations alternated" % (runs, policy))
print("# raw/comp = median over runs of each run's median over iterations of raw time / compressed time")
print("%-10s %10s %10s %15s %7s" % ("# coll", "size(B)", "raw/comp", "(min-max)", "ratio"))
for r in out:
    ratio = "-" if r["ratio_median"] is None else "%.2f" % r["ratio_median"]
    print("%-10s %10d %10.3f %15s %7s" % (r["collective"], r["size"], r["raw_over_compressed"],
          "(%.3f-%.3f)" % (r["min"], r["max"]), ratio))
EOF
