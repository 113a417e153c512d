#!/usr/bin/env bash
# Starts unmodified torch.distributed scripts as N ranks on this machine, setting only their
# environment: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR/PORT, CUDA_VISIBLE_DEVICES, and the
# variables that send their NCCL traffic through the Squeeze plugin (NCCL_NET_PLUGIN,
# NCCL_NET=Squeeze, SQUEEZE_POLICY, SQUEEZE_STATS) or NCCL's own Socket transport. Each rank
# gets its own NCCL_HOSTID, so NCCL treats it as a host of its own and uses the network even
# when all ranks share GPU 0.
#
#   launch.sh [options] collectives   collectives_check.py over socket, raw and quantized
#   launch.sh [options] dlrm          dlrm_tiny.py raw vs quantized all-to-all: final losses
#                                     within --tolerance (1%), both curves plotted
#   launch.sh [options] all           both
#   launch.sh [options] run [--policy FILE | --baseline socket] [--tag T] SCRIPT [ARGS...]
#
# Options: -n N ranks (2); --gpus LIST (0); --build DIR (build) holding
# plugin/libnccl-net-squeeze.so, or --plugin PATH; --python PY (python3); --out DIR (a new
# /tmp dir); --steps N (200); --tolerance X (0.01); --timeout S per launch (600); --ifname IF
# (lo); --backend gloo runs the scripts on the CPU without NCCL (a dry run of their logic).
# Exit: 0 pass, 1 fail, 2 usage, 77 skipped (no torch, or no CUDA device for NCCL).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
N=2 GPUS=0 BUILD=$SRC/build PLUGIN="" PY=python3 OUT="" STEPS=200 TOL=0.01 TIMEOUT=600 IFNAME=lo BACKEND=nccl

die() { echo "launch.sh: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    -n) N=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --steps) STEPS=$2; shift 2 ;;
    --tolerance) TOL=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --ifname) IFNAME=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || die "give a command: collectives, dlrm, all or run (see --help)"
CMD=$1; shift
[[ $N =~ ^[0-9]+$ && $N -ge 2 ]] || die "-n must be a number >= 2"
[[ $BACKEND == nccl || $BACKEND == gloo ]] || die "--backend must be nccl or gloo"
IFS=, read -r -a GPU_LIST <<<"$GPUS"

# Skip cleanly where the scripts cannot run.
probe=$("$PY" - "$BACKEND" <<'PYEOF' 2>&1
import sys
try:
    import torch
except ImportError as e:
    print(f"torch not importable with {sys.executable} ({e})"); sys.exit(77)
if sys.argv[1] == "nccl" and not torch.cuda.is_available():
    print("no CUDA device (torch.cuda.is_available() is False)"); sys.exit(77)
print(f"torch {torch.__version__}" + (f", NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
      f"{torch.cuda.get_device_name(0)}" if sys.argv[1] == "nccl" else ", gloo on the CPU"))
PYEOF
)
case $? in
  0) echo "launch.sh: $probe" ;;
  77) echo "SKIP: $probe"; exit 77 ;;
  *) echo "SKIP: $PY does not run ($probe)"; exit 77 ;;
esac

[[ -n $PLUGIN ]] || PLUGIN=$BUILD/plugin/libnccl-net-squeeze.so
if [[ $BACKEND == nccl ]]; then
  [[ -f $PLUGIN ]] || die "no plugin at $PLUGIN (build nccl-net-squeeze, or pass --build DIR / --plugin PATH)"
  PLUGIN=$(cd "$(dirname "$PLUGIN")" && pwd)/$(basename "$PLUGIN")
fi
[[ -n $OUT ]] || OUT=$(mktemp -d /tmp/squeeze-torch.XXXXXX)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.jsonl

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# rank_env <rank> <policy file | "socket"> <stats dir>: the assignments for `env`.
rank_env() {
  local r=$1 policy=$2 dir=$3 gpu=${GPU_LIST[$(( $1 % ${#GPU_LIST[@]} ))]}
  ENV=(RANK=$r WORLD_SIZE=$N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT
       PYTHONUNBUFFERED=1 PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}")
  if [[ $BACKEND == gloo ]]; then ENV+=(CUDA_VISIBLE_DEVICES=); return; fi
  ENV+=(CUDA_VISIBLE_DEVICES=$gpu NCCL_HOSTID=squeeze-torch-$$-rank$r NCCL_SOCKET_IFNAME=$IFNAME
        NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1} NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1}
        NCCL_SHM_DISABLE=${NCCL_SHM_DISABLE:-1} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0})
  if [[ $policy == socket ]]; then
    ENV+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none)
  else
    ENV+=(NCCL_NET=Squeeze NCCL_NET_PLUGIN=$PLUGIN NCCL_NET_PLUGIN_REF_COUNT=1 SQUEEZE_POLICY=$policy
          SQUEEZE_STATS=$dir/stats.json SQUEEZE_RANK=$r SQUEEZE_SOCKET_IFNAME=$IFNAME)
  fi
}

# launch <tag> <policy | socket> <script> [args...]: N ranks, logs in $OUT/<tag>/rank<R>.log
# (rank 0's also on stdout). The first rank that fails stops the others. Returns the worst
# exit code (77 if a rank skipped).
launch() {
  local tag=$1 policy=$2 dir=$OUT/$1; shift 2
  mkdir -p "$dir"; rm -f "$dir"/stats*.json
  PORT=$(free_port)
  echo "=== $tag: $N ranks, $([[ $BACKEND == gloo ]] && echo "gloo" || { [[ $policy == socket ]] && echo "NCCL_NET=Socket" || echo "NCCL_NET=Squeeze, SQUEEZE_POLICY=$policy"; })"
  local pids=() r
  for ((r = 0; r < N; r++)); do
    rank_env "$r" "$policy" "$dir"
    if ((r == 0)); then
      env -u SQUEEZE_POLICY -u SQUEEZE_STATS "${ENV[@]}" timeout "$TIMEOUT" "$PY" "$@" > >(tee "$dir/rank0.log") 2>&1 &
    else
      env -u SQUEEZE_POLICY -u SQUEEZE_STATS "${ENV[@]}" timeout "$TIMEOUT" "$PY" "$@" >"$dir/rank$r.log" 2>&1 &
    fi
    pids+=($!)
  done
  local worst=0 stopping=0 alive rc p
  while :; do
    alive=0
    for i in "${!pids[@]}"; do
      p=${pids[$i]}; [[ $p == done ]] && continue
      if kill -0 "$p" 2>/dev/null; then alive=1; continue; fi
      wait "$p"; rc=$?; pids[$i]=done
      ((rc == 0 || stopping)) && continue
      # The first rank to fail (or skip) decides; the others would wait for it forever.
      worst=$rc stopping=1
      if ((rc != 77)); then
        echo "launch.sh: $tag: rank $i exited $rc; stopping the others (log: $dir/rank$i.log)" >&2
        tail -n 20 "$dir/rank$i.log" >&2
      fi
      for q in "${pids[@]}"; do [[ $q != done ]] && kill "$q" 2>/dev/null; done
    done
    ((alive)) || break
    sleep 0.2
  done
  sleep 0.2  # let tee flush rank 0's last lines
  return "$worst"
}

# The plugin's own statistics for one launch: bytes handed to it, on the wire, by collective.
stats_line() {
  "$PY" - "$OUT/$1" <<'PYEOF'
import glob, json, sys
handed = wire = 0
per = {}
for f in sorted(glob.glob(sys.argv[1] + "/stats*.json")):
    doc = json.load(open(f))
    t = doc.get("totals", {})
    handed += t.get("bytes_in", 0) + t.get("raw_bytes", 0)
    wire += t.get("bytes_out", 0) + t.get("raw_bytes", 0)
    for rule in doc.get("rules", []):
        for coll, c in rule.get("collectives", {}).items():
            k = f"{rule['name']}/{coll}"
            e = per.setdefault(k, [0, 0, 0])
            e[0] += c.get("bytes_in", 0); e[1] += c.get("bytes_out", 0); e[2] += c.get("raw_bytes", 0)
if not handed:
    print("plugin stats: none written (socket run, or the plugin carried nothing)")
else:
    parts = ", ".join(f"{k}: {v[0] + v[2]} B -> {v[1] + v[2]} B" for k, v in per.items())
    print(f"plugin stats: {handed} B handed, {wire} B on the wire, ratio {handed / max(wire, 1):.2f} ({parts})")
PYEOF
}

policy_of() { [[ $1 == socket ]] && echo socket || echo "$1"; }

run_collectives() {
  local failed=0 tag policy bound rc
  for spec in "socket|socket|0" "raw|$SRC/config/off.json|0" "quantize|$HERE/dlrm-quantize.json|0.02"; do
    IFS='|' read -r tag policy bound <<<"$spec"
    [[ $BACKEND == gloo && $tag != raw ]] && continue
    launch "collectives-$tag" "$policy" "$HERE/collectives_check.py" --backend "$BACKEND" \
      --a2a-rel-bound "$bound" --label "$tag"
    rc=$?
    ((rc == 77)) && return 77
    grep -h '^{' "$OUT/collectives-$tag/rank0.log" >>"$SUMMARY"
    [[ $BACKEND == nccl ]] && stats_line "collectives-$tag"
    if ((rc != 0)) || ! grep -q '^RESULT: PASS' "$OUT/collectives-$tag/rank0.log"; then
      echo "collectives $tag: FAIL"; failed=1
    else
      echo "collectives $tag: PASS"
    fi
  done
  return $failed
}

run_dlrm() {
  local rc tag policy
  for spec in "raw|$SRC/config/off.json" "quantize|$HERE/dlrm-quantize.json"; do
    IFS='|' read -r tag policy <<<"$spec"
    launch "dlrm-$tag" "$policy" "$HERE/dlrm_tiny.py" --backend "$BACKEND" --steps "$STEPS" \
      --log "$OUT/dlrm-$tag.csv" --label "$tag"
    rc=$?
    ((rc == 77)) && return 77
    if ((rc != 0)); then echo "dlrm $tag: FAIL (exit $rc)"; return 1; fi
    grep -h '^{' "$OUT/dlrm-$tag/rank0.log" >>"$SUMMARY"
    [[ $BACKEND == nccl ]] && stats_line "dlrm-$tag"
  done
  "$PY" "$HERE/plot_loss.py" "$OUT/dlrm-loss.png" raw="$OUT/dlrm-raw.csv" quantize="$OUT/dlrm-quantize.csv"
  local raw q
  raw=$(awk '/^FINAL_LOSS/ {print $2}' "$OUT/dlrm-raw/rank0.log")
  q=$(awk '/^FINAL_LOSS/ {print $2}' "$OUT/dlrm-quantize/rank0.log")
  [[ -n $raw && -n $q ]] || { echo "dlrm: FAIL (no FINAL_LOSS line)"; return 1; }
  "$PY" - "$raw" "$q" "$TOL" "$SUMMARY" <<'PYEOF'
import json, sys
raw, q, tol = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
diff = abs(q - raw) / abs(raw)
ok = diff <= tol
print(f"dlrm: mean loss of the last 10 steps: raw {raw:.6f}, quantized all-to-all {q:.6f}, "
      f"difference {100 * diff:.3f}% (limit {100 * tol:g}%): {'PASS' if ok else 'FAIL'}")
with open(sys.argv[4], "a") as f:
    f.write(json.dumps({"check": "dlrm_loss", "raw": raw, "quantize": q, "rel_diff": diff, "tolerance": tol,
                        "ok": ok}) + "\n")
sys.exit(0 if ok else 1)
PYEOF
}

status=0
case $CMD in
  collectives) run_collectives; status=$? ;;
  dlrm) run_dlrm; status=$? ;;
  all)
    run_collectives; status=$?
    if ((status != 77)); then run_dlrm; rc=$?; ((rc != 0)) && status=$rc; fi ;;
  run)
    policy=$SRC/config/off.json tag=run
    while [[ $# -gt 0 && $1 == --* ]]; do
      case $1 in
        --policy) policy=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
        --baseline) [[ $2 == socket ]] || die "--baseline must be socket"; policy=socket; shift 2 ;;
        --tag) tag=$2; shift 2 ;;
        *) die "run: unknown option $1" ;;
      esac
    done
    [[ $# -ge 1 ]] || die "run needs a script"
    launch "$tag" "$policy" "$@"; status=$?
    [[ $BACKEND == nccl && $policy != socket ]] && stats_line "$tag" ;;
  *) die "unknown command $CMD" ;;
esac
echo "launch.sh: outputs in $OUT"
exit $status
