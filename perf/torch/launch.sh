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
#   launch.sh [options] train         training steps timed on a capped link: each of --models
#                                     (dlrm_tiny.py, quantized all-to-all by dlrm-quantize.json;
#                                     ddp_train.py, gradients by config/dp-allreduce.json) raw
#                                     and compressed at each SQUEEZE_MAX_RATE of --rates; mean
#                                     step time, speedup, final losses, communication share,
#                                     curves in train-<model>-loss.png, JSON in summary.jsonl
#   launch.sh [options] run [--policy FILE | --baseline socket] [--tag T] SCRIPT [ARGS...]
#
# Options: -n N ranks (2); --gpus LIST (0); --build DIR (build) holding
# plugin/libnccl-net-squeeze.so, or --plugin PATH; --python PY (python3); --out DIR (a new
# /tmp dir); --steps N (200); --tolerance X (0.01); --timeout S per launch (600); --ifname IF
# (lo); --backend gloo runs the scripts on the CPU without NCCL (a dry run of their logic);
# --env VAR=VALUE (repeatable) adds to the plugin runs' environment, e.g. SQUEEZE_GPU_STAGING=1;
# --dry-run prints each rank's environment and command instead of starting it.
# train options: --rates "1 10" (Gbit/s per connection); --models "dlrm ddp"; --train-steps N
# (60); --channels N (1): NCCL_MAX_NCHANNELS and NCCL_NCHANNELS_PER_NET_PEER, so the link
# between two ranks is N connections each way, N x the rate; --route collnet: the DDP model's
# compressed arm all-reduces on Squeeze's collective network (NCCL_COLLNET_ENABLE=1,
# NCCL_ALGO=Ring;AllReduce:CollNetChain) with perf/collective/policies/collnet-threshold.json
# (top 1% with error feedback, ranks bit-identical), against the raw ring. The DLRM's losses must agree
# within --tolerance; the DDP model's compressed gradients (top 1% with error feedback) change
# its path, so it must learn (last 10 steps below 90% of its first loss) and the gap is reported.
# Exit: 0 pass, 1 fail, 2 usage, 77 skipped (no torch, or no CUDA device for NCCL, or train
# with a plugin that has no SQUEEZE_MAX_RATE).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
N=2 GPUS=0 BUILD=$SRC/build PLUGIN="" PY=python3 OUT="" STEPS=200 TOL=0.01 TIMEOUT=600 IFNAME=lo BACKEND=nccl
DRY=0 USER_ENV=() RUN_ENV=() RATES="1 10" MODELS="dlrm ddp" TRAIN_STEPS=60 CHANNELS=1 ROUTE=ring

die() { echo "launch.sh: $*" >&2; exit 2; }
# shellcheck source=../launch_lib.sh
source "$HERE/../launch_lib.sh"
while [[ $# -gt 0 ]]; do
  launch_option "$@"
  if ((LAUNCH_SHIFT)); then shift "$LAUNCH_SHIFT"; continue; fi
  case $1 in
    --steps | --tolerance | --backend | --rates | --models | --train-steps | --channels | --route)
      [[ $# -ge 2 ]] || die "$1 needs a value" ;;
  esac
  case $1 in
    --steps) STEPS=$2; shift 2 ;;
    --tolerance) TOL=$2; shift 2 ;;
    --backend) BACKEND=$2; shift 2 ;;
    --rates) RATES=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --train-steps) TRAIN_STEPS=$2; shift 2 ;;
    --channels) CHANNELS=$2; shift 2 ;;
    --route) ROUTE=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || die "give a command: collectives, dlrm, all, train or run (see --help)"
CMD=$1; shift
launch_check_common
[[ $BACKEND == nccl || $BACKEND == gloo ]] || die "--backend must be nccl or gloo"
[[ $TRAIN_STEPS =~ ^[0-9]+$ && $TRAIN_STEPS -ge 12 ]] || die "--train-steps must be a number >= 12"
[[ $CHANNELS =~ ^[0-9]+$ && $CHANNELS -ge 1 ]] || die "--channels must be a number >= 1"
[[ $ROUTE == ring || $ROUTE == collnet ]] || die "--route must be ring or collnet"
for r in $RATES; do [[ $r =~ ^[0-9]+([.][0-9]+)?$ ]] && [[ $r != 0 && $r != 0.0 ]] || die "--rates: '$r' is not a positive rate in Gbit/s"; done
[[ -n ${RATES// /} ]] || die "--rates is empty"
for m in $MODELS; do [[ $m == dlrm || $m == ddp ]] || die "--models: '$m' is not dlrm or ddp"; done

# Skip cleanly where the scripts cannot run (a dry run starts nothing, so it needs nothing).
if ((DRY)); then
  echo "launch.sh: dry run: nothing is started"
else
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
fi

launch_plugin "$([[ $BACKEND == nccl ]] && echo 1 || echo 0)"
[[ -n $OUT ]] || OUT=$(mktemp -d /tmp/squeeze-torch.XXXXXX)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
SUMMARY=$OUT/summary.jsonl

# rank_env <rank> <policy file | "socket"> <stats dir>: the assignments for `env`.
rank_env() {
  local r=$1 policy=$2 dir=$3
  ENV=(RANK=$r WORLD_SIZE=$N LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT
       PYTHONUNBUFFERED=1 PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}")
  if [[ $BACKEND == gloo ]]; then ENV+=(CUDA_VISIBLE_DEVICES=); return; fi
  ENV+=(CUDA_VISIBLE_DEVICES=$(gpu_of "$r"))
  nccl_own_host_env "squeeze-torch-$$-rank$r"
  if [[ $policy == socket ]]; then
    ENV+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none)
  else
    squeeze_env "$policy" "$dir/stats.json" "$r"
    ENV+=("${RUN_ENV[@]}")
  fi
}

# launch <tag> <policy | socket> <script> [args...]: N ranks, logs in $OUT/<tag>/rank<R>.log
# (rank 0's also on stdout). The first rank that fails stops the others. Returns the worst
# exit code (77 if a rank skipped).
launch() {
  local tag=$1 policy=$2 dir=$OUT/$1; shift 2
  mkdir -p "$dir"; rm -f "$dir"/stats*.json
  PORT=$(launch_free_port)
  echo "=== $tag: $N ranks, $([[ $BACKEND == gloo ]] && echo "gloo" || { [[ $policy == socket ]] && echo "NCCL_NET=Socket" || echo "NCCL_NET=Squeeze, SQUEEZE_POLICY=$policy${USER_ENV[*]:+, ${USER_ENV[*]}}${RUN_ENV[*]:+, ${RUN_ENV[*]}}"; })"
  local pids=() r
  if ((DRY)); then
    for ((r = 0; r < N; r++)); do
      rank_env "$r" "$policy" "$dir"
      echo "DRY-RUN rank $r: env -u SQUEEZE_POLICY -u SQUEEZE_STATS ${ENV[*]} timeout $TIMEOUT $PY $*"
    done
    return 0
  fi
  for ((r = 0; r < N; r++)); do
    rank_env "$r" "$policy" "$dir"
    if ((r == 0)); then
      env -u SQUEEZE_POLICY -u SQUEEZE_STATS "${ENV[@]}" timeout "$TIMEOUT" "$PY" "$@" > >(tee "$dir/rank0.log") 2>&1 &
    else
      env -u SQUEEZE_POLICY -u SQUEEZE_STATS "${ENV[@]}" timeout "$TIMEOUT" "$PY" "$@" >"$dir/rank$r.log" 2>&1 &
    fi
    pids+=($!)
  done
  launch_wait "$tag" "$dir/rank%d.log" "${pids[@]}"
  local worst=$?
  sleep 0.2  # let tee flush rank 0's last lines
  return "$worst"
}

# The plugin's own statistics for one launch: bytes handed to it, on the wire, by collective.
stats_line() { plugin_stats_line "$OUT/$1"; }

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

# train_compare <model> <rate> <raw json> <compressed json> <tolerance | learns> <policy>: one
# line and one JSON row per model and rate; exit 1 when the losses differ by more than the
# tolerance (or, with "learns", when the compressed run's loss fell by less than half as much as
# raw's did from the same start: on the H100, 60 steps took raw's only from 0.337 to 0.312, so
# a fixed "below 90% of the first loss" failed raw itself).
train_compare() {
  "$PY" - "$@" "$CHANNELS" "$SUMMARY" "${USER_ENV[*]:-}" <<'PYEOF'
import json, math, sys
model, rate, raw_f, comp_f, tol, policy, channels, summary, extra = sys.argv[1:10]
rate, channels = float(rate), int(channels)
tol = None if tol == "learns" else float(tol)
raw, comp = (json.loads(open(f).read().strip().splitlines()[-1]) for f in (raw_f, comp_f))
# What issue 26 asks of each model at each cap (none for DDP: it reports what it gains).
goals = {("dlrm", 1.0): 3.0, ("dlrm", 10.0): 1.5}
goal = goals.get((model, rate))
speedup = raw["mean_step_ms"] / comp["mean_step_ms"]
diff = abs(comp["mean_last10"] - raw["mean_last10"]) / abs(raw["mean_last10"])
if tol is None:
    raw_drop = raw["first_loss"] - raw["mean_last10"]
    comp_drop = comp["first_loss"] - comp["mean_last10"]
    ok = math.isfinite(comp["mean_last10"]) and raw_drop > 0 and comp_drop >= 0.5 * raw_drop
    check = (f"apart; from {comp['first_loss']:.5f} compressed fell {comp_drop:.5f}, raw {raw_drop:.5f}: "
             f"must fall at least half as much")
else:
    ok = math.isfinite(comp["mean_last10"]) and diff <= tol
    check = f"limit {100 * tol:g}%"
exposed_ms = raw["mean_step_ms"] - (raw.get("compute_step_ms") or 0.0)
eff = 8 * raw["sent_bytes_per_step"] / (exposed_ms * 1e-3) / 1e9 if raw.get("compute_step_ms") and exposed_ms > 0 else None
def pct(x):
    return "n/a" if x is None else f"{100 * x:.0f}%"
goal_text = f", goal >= {goal:g}x: {'met' if speedup >= goal else 'NOT met'}" if goal else ""
print(f"train {model} @ {rate:g} Gbit/s x {channels} connection(s){' (' + extra + ')' if extra else ''}: "
      f"raw {raw['mean_step_ms']:.1f} ms/step (communication {pct(raw['comm_share'])}), "
      f"compressed {comp['mean_step_ms']:.1f} ms/step (communication {pct(comp['comm_share'])}): "
      f"speedup {speedup:.2f}x{goal_text}; loss raw {raw['mean_last10']:.5f}, compressed "
      f"{comp['mean_last10']:.5f} ({100 * diff:.2f}% {check}): {'PASS' if ok else 'FAIL'}"
      + (f"; raw moved {eff:.2f} Gbit/s while communicating" if eff else ""))
row = {"check": "train", "model": model, "rate_gbit": rate, "channels": channels, "env": extra, "policy": policy,
       "raw_step_ms": raw["mean_step_ms"], "compressed_step_ms": comp["mean_step_ms"], "speedup": speedup,
       "goal": goal, "goal_met": (speedup >= goal) if goal else None,
       "raw_loss": raw["mean_last10"], "compressed_loss": comp["mean_last10"], "loss_rel_diff": diff,
       "tolerance": tol, "ok": ok, "comm_share_raw": raw["comm_share"], "comm_share_compressed": comp["comm_share"],
       "compute_step_ms": raw.get("compute_step_ms"), "sent_bytes_per_step": raw["sent_bytes_per_step"],
       "raw_effective_gbit": eff, "steps": raw["steps"]}
with open(summary, "a") as f:
    f.write(json.dumps(row) + "\n")
sys.exit(0 if ok else 1)
PYEOF
}

# Training steps on a link capped by SQUEEZE_MAX_RATE (the plugin's per-connection TCP pacing),
# raw against compressed, for each model and rate.
run_train() {
  if ((!DRY)) && [[ $BACKEND == nccl ]] && ! grep -aq 'SQUEEZE_MAX_RATE' "$PLUGIN"; then
    echo "SKIP: $PLUGIN does not know SQUEEZE_MAX_RATE (per-connection TCP pacing); uncapped, the loopback is no slow link"
    return 77
  fi
  local failed=0 m model rate variant policy cpolicy script tol tag rc curves margs route_env
  for m in $MODELS; do
    route_env=() model=$m
    if [[ $m == dlrm ]]; then
      # 8 tables of 64 floats for 16384 samples: 16 MiB of pooled embeddings each way per step.
      script=$HERE/dlrm_tiny.py cpolicy=$HERE/dlrm-quantize.json tol=$TOL margs=(--batch 16384)
    else
      # 3.4 M float32 parameters: 13.6 MiB of gradients all-reduced per step.
      script=$HERE/ddp_train.py cpolicy=$SRC/config/dp-allreduce.json tol=learns margs=()
      if [[ $ROUTE == collnet ]]; then
        # Every rank is a node of its own (NCCL_HOSTID), so two ranks pass CollNet's node
        # threshold; all-reduce may only take CollNetChain, so NCCL fails rather than ring.
        cpolicy=$SRC/perf/collective/policies/collnet-threshold.json
        route_env=(NCCL_COLLNET_ENABLE=1 "NCCL_ALGO=Ring;AllReduce:CollNetChain") model=$m-collnet
      fi
    fi
    curves=()
    for rate in $RATES; do
      for variant in raw compressed; do
        [[ $variant == raw ]] && policy=$SRC/config/off.json || policy=$cpolicy
        tag=train-$model-${rate}g-$variant
        RUN_ENV=(SQUEEZE_MAX_RATE=$rate SQUEEZE_TRANSPORT=tcp NCCL_MAX_NCHANNELS=$CHANNELS
                 NCCL_NCHANNELS_PER_NET_PEER=$CHANNELS)
        [[ $variant == compressed ]] && RUN_ENV+=("${route_env[@]}")
        launch "$tag" "$policy" "$script" --backend "$BACKEND" --steps "$TRAIN_STEPS" --warmup-steps 5 \
          --compute-steps 10 --log "$OUT/$tag.csv" --label "$tag" "${margs[@]}"
        rc=$?
        RUN_ENV=()
        ((rc == 77)) && return 77
        ((DRY)) && continue
        if ((rc != 0)); then echo "train $tag: FAIL (exit $rc)"; failed=1; continue 2; fi
        grep -h '^{' "$OUT/$tag/rank0.log" | tail -1 >"$OUT/$tag.json"
        [[ $BACKEND == nccl ]] && stats_line "$tag"
        curves+=("$variant ${rate} Gbit/s=$OUT/$tag.csv")
      done
      ((DRY)) && continue
      train_compare "$model" "$rate" "$OUT/train-$model-${rate}g-raw.json" \
        "$OUT/train-$model-${rate}g-compressed.json" \
        "$tol" "$(basename "$cpolicy")" || failed=1
    done
    ((DRY)) || "$PY" "$HERE/plot_loss.py" --title "$m: raw vs compressed on capped links (SQUEEZE_MAX_RATE)" \
      "$OUT/train-$m-loss.png" "${curves[@]}"
  done
  return $failed
}

status=0
case $CMD in
  collectives) run_collectives; status=$? ;;
  dlrm) run_dlrm; status=$? ;;
  train) run_train; status=$? ;;
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
