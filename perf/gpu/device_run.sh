#!/usr/bin/env bash
# Everything the GPU machine has to prove, in one call (about 9 minutes at most):
#   1. the machine: nvidia-smi, and one "versions:" line (device, driver, CUDA, NCCL, torch, JAX);
#   2. tests/squeeze_gpu_tests: the CUDA codecs against the CPU reference, and the plugin's GPU
#      staging (they find the carried plugin beside themselves: tests/plugin_path.h);
#   3. MPS (nvidia-cuda-mps-control -d, its pipe and log under this run's temp dir) for every
#      multi-rank step, so the two ranks on GPU 0 run side by side instead of time-slicing it;
#      stopped when the script ends, however it ends;
#   4. squeeze-nccl-perf --sweep: all-reduce and all-to-all under real NCCL, 2 ranks on GPU 0,
#      NCCL's Socket transport, the plugin raw and each codec, results checked;
#   5. perf/torch/launch.sh train: the tiny DLRM (all-to-all quantized) and a DDP model
#      (gradients by config/dp-allreduce.json) raw vs compressed at SQUEEZE_MAX_RATE 1 and 10
#      Gbit/s: step time, speedup, losses, communication share, curves;
#   6. perf/jax/launch.sh: an unmodified multi-process JAX script, psum and all_to_all exact;
#   7. perf/torch/launch.sh all: unmodified torch.distributed collectives checked, and the tiny
#      DLRM raw vs quantized all-to-all (losses within 1%);
#   8. each NCCL step again with SQUEEZE_GPU_STAGING=1 (the sweep without the Socket baseline,
#      which never loads the plugin), squeeze-codec-bench --gpu before the last (the training
#      steps with staging), while the budget lasts.
#   9. only when SQUEEZE_DEVICE_ONLY names them ("collnet collnet-train"), issue 23 on real NCCL:
#      squeeze-nccl-perf --route collnet (all-reduce on Squeeze's collective network: raw,
#      threshold, quantize, checked, CollNet must carry it), and the DDP model trained through
#      CollNet with top 1% + error feedback against the raw ring at 1 and 10 Gbit/s.
# Run from the repository root:  bash perf/gpu/device_run.sh [CARRIED_BUILD (build-gpu-carry)]
# Writes 8 files under $OUT (or ./gpu-out), the most the device tool brings back: summary.txt
# (read this first), device_run.log, nccl_sweep.txt (both sweeps), nccl_perf.jsonl,
# torch_summary.jsonl, train-dlrm-loss.png, train-ddp-loss.png, and logs.tar.gz (every rank's
# log, the plugin's statistics, the other plots).
# Environment: SQUEEZE_DEVICE_BUDGET_S (540) bounds the whole; SQUEEZE_DEVICE_ONLY="step ..."
# runs only those steps (names as in the summary, e.g. "train jax"), for a rerun.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
B=${1:-build-gpu-carry}
[[ -d $B ]] || B=build-gpu
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/squeeze-gpu.XXXXXX)
SUMMARY=$OUT/summary.txt
START=$(date +%s)
BUDGET=${SQUEEZE_DEVICE_BUDGET_S:-540}
ONLY=${SQUEEZE_DEVICE_ONLY:-}
STAGING=SQUEEZE_GPU_STAGING=1
: >"$SUMMARY"
exec > >(tee "$OUT/device_run.log") 2>&1

note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# wanted <name>: whether SQUEEZE_DEVICE_ONLY (if set) names this step.
wanted() { [[ -z $ONLY || " $ONLY " == *" $1 "* ]]; }
# step <name> <timeout s> <log> <command...>: runs with a time limit (never past the budget)
# and notes PASS / FAIL(rc) / SKIP / TIMEOUT in the summary.
step() {
  local name=$1 limit=$2 log=$3; shift 3
  if ! wanted "$name"; then note "[$name] not selected (SQUEEZE_DEVICE_ONLY=$ONLY)"; return 98; fi
  local remaining; remaining=$(left)
  ((limit > remaining - 10)) && limit=$((remaining - 10))
  if ((limit < 20)); then note "[$name] NOT RUN: the ${BUDGET} s budget is spent"; return 99; fi
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  local rc=$?
  local took=$((SECONDS - t0))
  case $rc in
    0) note "[$name] PASS (${took} s)" ;;
    77) note "[$name] SKIP (${took} s): $(grep -m1 -h 'SKIP' "$log")" ;;
    124|137) note "[$name] TIMEOUT after ${limit} s (log: $(basename "$log"))" ;;
    *) note "[$name] FAIL, exit $rc (${took} s; log: $(basename "$log"))" ;;
  esac
  return $rc
}

# MPS: one control daemon for this run, its pipe and log directories in $WORK (exported, so
# every process started afterwards is its client). Stopped on exit, whatever happens.
MPS=off
start_mps() {
  if ! command -v nvidia-cuda-mps-control >/dev/null 2>&1; then
    note "MPS: not available (no nvidia-cuda-mps-control): the ranks time-slice GPU 0, so timings have a floor"
    return
  fi
  export CUDA_MPS_PIPE_DIRECTORY=$WORK/mps/pipe CUDA_MPS_LOG_DIRECTORY=$WORK/mps/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d >"$WORK/mps/start.log" 2>&1; then
    MPS=on
    note "MPS: on for the multi-rank steps (nvidia-cuda-mps-control -d, pipe $CUDA_MPS_PIPE_DIRECTORY): the ranks share GPU 0 side by side"
  else
    note "MPS: failed to start (exit $?: $(head -c 300 "$WORK/mps/start.log")): the ranks time-slice GPU 0"
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
}
stop_mps() {
  [[ $MPS == on ]] || return 0
  # quit waits for the daemon's clients; a rank left over from a timed-out step (its own
  # `timeout` outlives the step's) must not hold the script past its budget.
  if echo quit | timeout 30 nvidia-cuda-mps-control >/dev/null 2>&1; then
    note "MPS: stopped"
  else
    note "MPS: quit did not return within 30 s (clients still attached?); the daemon may outlive this run"
  fi
  MPS=stopped
}
finish() {
  stop_mps
  tar -czf "$OUT/logs.tar.gz" -C "$WORK" . 2>/dev/null
  rm -rf "$WORK"
}
trap finish EXIT
trap 'note "interrupted"; exit 130' INT TERM

note "# Squeeze on a GPU, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), build $B, budget ${BUDGET} s"

# libnccl for squeeze-nccl-perf: the CUDA toolkit's (what DESIGN.md's facts were read from),
# else PyTorch's bundled one.
NCCL_LIB=${SQUEEZE_NCCL_LIB:-}
if [[ -z $NCCL_LIB ]]; then
  for c in /usr/local/cuda/lib64/libnccl.so.2 /usr/local/cuda/lib/libnccl.so.2; do [[ -f $c ]] && NCCL_LIB=$c && break; done
fi
if [[ -z $NCCL_LIB ]]; then
  NCCL_LIB=$(python3 - <<'PYEOF' 2>/dev/null
import glob, site
for d in site.getsitepackages():
    for f in sorted(glob.glob(d + "/nvidia/**/libnccl.so*", recursive=True)):
        print(f); raise SystemExit
PYEOF
)
fi

# 1. The machine, and one line naming what was measured.
{
  echo "## machine"
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "kernel: $(uname -r), cpus: $(nproc)"
  echo "libnccl files:"
  ls -l /usr/local/cuda/lib64/libnccl.so* 2>/dev/null
  python3 -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null | while read -r d; do
    find "$d" -name 'libnccl.so*' 2>/dev/null
  done
  echo "carried build: $(ls -R "$B" 2>/dev/null | tr '\n' ' ')"
} >"$WORK/machine.txt" 2>&1
cat "$WORK/machine.txt"
versions=$(python3 - "$NCCL_LIB" <<'PYEOF' 2>&1
import ctypes, importlib.metadata as md, subprocess, sys
def meta(name):
    try:
        return md.version(name)
    except Exception:
        return None
parts = []
try:
    q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                       capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    name, driver = (q[0].split(", ") + ["?"])[:2] if q else ("none", "none")
except Exception as e:
    name, driver = "none", f"none ({e.__class__.__name__})"
parts += [f"device {name}", f"driver {driver}"]
try:
    import torch
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "n/a"
    parts += [f"torch {torch.__version__} (CUDA {torch.version.cuda}, NCCL {nccl})"]
except Exception as e:
    parts += [f"torch absent ({e.__class__.__name__})"]
lib, nccl = sys.argv[1], "unknown"
try:  # ncclGetVersion: major * 10000 + minor * 100 + patch (NCCL >= 2.9)
    code = ctypes.c_int()
    if lib and ctypes.CDLL(lib).ncclGetVersion(ctypes.byref(code)) == 0:
        nccl = f"{code.value // 10000}.{code.value // 100 % 100}.{code.value % 100}"
except OSError as e:
    nccl = f"unloadable ({e})"
parts += [f"squeeze-nccl-perf NCCL {nccl} ({lib or 'none found'})"]
jax = meta("jax")
if jax:
    plugin = next((f"{p} {meta(p)}" for p in ("jax-cuda13-plugin", "jax-cuda12-plugin") if meta(p)), "no CUDA plugin")
    nccl = next((f"{p} {meta(p)}" for p in ("nvidia-nccl-cu13", "nvidia-nccl-cu12") if meta(p)), "NCCL unknown")
    parts += [f"JAX {jax} (jaxlib {meta('jaxlib')}, {plugin}, {nccl})"]
else:
    parts += ["JAX absent"]
parts += [f"python {sys.version.split()[0]}"]
print("versions: " + "; ".join(parts))
PYEOF
)
note "$versions"
note "libnccl for squeeze-nccl-perf: ${NCCL_LIB:-none found}"
max_rate=no
grep -aq SQUEEZE_MAX_RATE "$B/plugin/libnccl-net-squeeze.so" 2>/dev/null && max_rate=yes
note "plugin knows SQUEEZE_MAX_RATE (per-connection TCP pacing, for the train step): $max_rate"

# 2. CUDA codecs vs the CPU reference, and the plugin's GPU staging (one process: before MPS).
if [[ -x $B/tests/squeeze_gpu_tests ]]; then
  step gpu-tests 120 "$WORK/gpu_tests.log" "$B/tests/squeeze_gpu_tests" --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? (ran|passed|failed)|chosen by' "$WORK/gpu_tests.log" | head -20 | tee -a "$SUMMARY"
else
  note "[gpu-tests] MISSING: $B/tests/squeeze_gpu_tests was not carried (perf/gpu/pack.sh)"
fi

# 3. MPS for everything with two ranks.
start_mps

# 4. Real NCCL: socket vs the plugin raw vs each codec, results checked (--check), codecs forced
#    (--bypass off) so their ratio and error show even on this fast loopback.
# nccl_sweep <step name> [VAR=value...] [-- squeeze-nccl-perf options...]: one checked sweep
# (1 to 16 MiB, its rows kept under $WORK/<step name>) with that environment and those options;
# its tables appended to $OUT/nccl_sweep.txt under "#### <step name> (environment, route)", its
# JSON rows to $OUT/nccl_perf.jsonl, its summary to the summary. A sweep that did not run to
# the end is followed by one raw 1 MiB all-reduce with NCCL_DEBUG=INFO, with the same
# environment and --route.
nccl_sweep() {
  local name=$1 out=$WORK/$1.txt; shift
  local envs=() opts=() route=()
  while (($# > 0)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  (($# > 0)) && shift
  opts=("$@")
  while (($# > 0)); do
    [[ $1 == --route ]] && route=(--route "${2:-}")
    shift
  done
  local args=(--sweep -b 1M -e 16M -f 4 --iters 10 --warmup 3 --check --timeout 100
              --keep "$WORK/$name" --label "$name")
  [[ -n $NCCL_LIB ]] && args+=(--nccl-lib "$NCCL_LIB")
  step "$name" 150 "$out" env "${envs[@]}" "$B/perf/squeeze-nccl-perf" "${args[@]}" "${opts[@]}"
  local rc=$?
  local what="${envs[*]} ${route[*]}"
  what=${what# }
  what=${what% }
  { echo "#### $name${what:+ ($what)}"; cat "$out"; } >>"$OUT/nccl_sweep.txt" 2>/dev/null
  cat "$WORK/$name"/*/rows.jsonl >>"$OUT/nccl_perf.jsonl" 2>/dev/null
  grep -h -m 1 'route collnet' "$out" | tee -a "$SUMMARY"
  sed -n '/sweep summary/,$p' "$out" | tee -a "$SUMMARY"
  grep -h 'check failed\|rank .*(mode' "$out" | head -20 | tee -a "$SUMMARY"
  if ((rc != 0 && rc != 1 && rc != 77 && rc < 98)); then
    note "[$name-diagnose] one raw 1 MiB all-reduce with NCCL_DEBUG=INFO (log in logs.tar.gz)"
    local dargs=(--policy config/off.json --collective allreduce -b 1M -e 1M --iters 2 --warmup 1 --timeout 60
                 "${route[@]}")
    [[ -n $NCCL_LIB ]] && dargs+=(--nccl-lib "$NCCL_LIB")
    step "$name-diagnose" 70 "$WORK/$name-diagnose.log" env "${envs[@]}" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
      "$B/perf/squeeze-nccl-perf" "${dargs[@]}"
    grep -h -m 15 -i 'warn\|error\|Squeeze\|plugin' "$WORK/$name-diagnose.log" | tee -a "$SUMMARY"
  fi
}
HAVE_NCCL_PERF=0
[[ -x $B/perf/squeeze-nccl-perf ]] && HAVE_NCCL_PERF=1
# The codecs are forced (--bypass off) so that their ratio and error show on a fast loopback.
FORCED=(--bypass off)
if ((HAVE_NCCL_PERF)); then
  nccl_sweep nccl-sweep -- "${FORCED[@]}"
else
  note "[nccl-sweep] MISSING: $B/perf/squeeze-nccl-perf was not carried (built only with CUDA and nccl.h)"
fi

# 5. Training steps on capped links: raw vs compressed at 1 and 10 Gbit/s.
# train_step <step name> [launch.sh options...]
train_step() {
  local name=$1; shift
  step "$name" 200 "$WORK/$name.log" bash perf/torch/launch.sh --build "$B" --out "$WORK/$name" --timeout 90 \
    "$@" train
  grep -h '^train \|^plugin stats\|FAIL' "$WORK/$name.log" | tee -a "$SUMMARY"
  local f
  [[ $name == train ]] && for f in "$WORK/$name"/train-*-loss.png; do [[ -f $f ]] && cp "$f" "$OUT/"; done
  grep -h '"check": "train"' "$WORK/$name/summary.jsonl" >>"$OUT/torch_summary.jsonl" 2>/dev/null
}
train_step train

# 6. JAX, unmodified, through the plugin: psum and all_to_all exact.
jax_step() {
  local name=$1; shift
  step "$name" 90 "$WORK/$name.log" bash perf/jax/launch.sh --build "$B" --out "$WORK/jax" --tag "$name" \
    --timeout 80 "$@"
  grep -h '^proc 0\|^plugin stats\|Using network\|FAIL\|did not' "$WORK/$name.log" | head -8 | tee -a "$SUMMARY"
}
jax_step jax

# 7. Unmodified PyTorch: collectives checked, DLRM raw vs quantized all-to-all.
torch_step() {
  local name=$1; shift
  step "$name" 150 "$WORK/$name.log" bash perf/torch/launch.sh --build "$B" --out "$WORK/$name" --timeout 90 \
    --steps 100 "$@" all
  grep -h '^collectives \|^dlrm\|^plugin stats\|^RESULT' "$WORK/$name.log" | tee -a "$SUMMARY"
  grep -h . "$WORK/$name/summary.jsonl" >>"$OUT/torch_summary.jsonl" 2>/dev/null
}
torch_step torch

# 8. The same NCCL steps with the plugin's GPU staging and the codec bench, while time lasts.
# With staging the Socket baseline is the same run as without (it never loads the plugin).
((HAVE_NCCL_PERF)) &&
  nccl_sweep nccl-sweep-staging "$STAGING" -- "${FORCED[@]}" --sweep-modes raw,lossless,quantize,threshold,cast
torch_step torch-staging --env "$STAGING"
jax_step jax-staging --env "$STAGING"

if [[ -x $B/perf/squeeze-codec-bench ]]; then
  help=$("$B/perf/squeeze-codec-bench" --help 2>&1)
  if grep -q -- '--gpu' <<<"$help"; then
    step codec-bench-gpu 60 "$WORK/codec_bench_gpu.log" "$B/perf/squeeze-codec-bench" --gpu --json
  else
    note "[codec-bench-gpu] OWED: squeeze-codec-bench has no GPU mode (its --help names no --gpu)"
  fi
else
  note "[codec-bench-gpu] MISSING: $B/perf/squeeze-codec-bench was not carried"
fi

train_step train-staging --env "$STAGING" --train-steps 30

# 9. The collective network under real NCCL (opt-in: SQUEEZE_DEVICE_ONLY="collnet").
if [[ " $ONLY " == *" collnet "* || " $ONLY " == *" collnet-train "* ]]; then
  ((HAVE_NCCL_PERF)) &&
    nccl_sweep collnet -- --route collnet --collective allreduce --sweep-modes raw,threshold,quantize
  train_step collnet-train --route collnet --models ddp
fi

note "# done in $(($(date +%s) - START)) s (budget ${BUDGET} s), MPS $MPS"
exit 0
