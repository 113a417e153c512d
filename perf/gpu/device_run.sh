#!/usr/bin/env bash
# Everything the GPU machine has to prove, in one call (about 9 minutes at most):
#   1. the machine: nvidia-smi, driver, nvcc, cmake, python, torch and the NCCL libraries;
#   2. tests/squeeze_gpu_tests: the CUDA codecs against the CPU reference;
#   3. squeeze-codec-bench on the GPU, if it has a GPU mode (else listed as owed);
#   4. squeeze-nccl-perf --sweep: all-reduce and all-to-all under real NCCL, 2 ranks on GPU 0
#      through NCCL's Socket transport, the plugin raw, and each codec, results checked;
#   5. perf/torch/launch.sh all: unmodified torch.distributed collectives checked against
#      exact results, and the tiny DLRM raw vs quantized all-to-all (losses within 1%).
# Run from the repository root:  bash perf/gpu/device_run.sh [CARRIED_BUILD (build-gpu-carry)]
# Writes under $OUT (or ./gpu-out): summary.txt (read this first), device_run.log,
# nccl_sweep.txt, nccl_perf.jsonl, torch_summary.jsonl, dlrm-loss.png, logs.tar.gz.
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
: >"$SUMMARY"
exec > >(tee "$OUT/device_run.log") 2>&1

note() { echo "$*" | tee -a "$SUMMARY"; }
left() { echo $((BUDGET - ($(date +%s) - START))); }
# step <name> <timeout s> <log> <command...>: runs with a time limit (never past the budget)
# and notes PASS / FAIL(rc) / SKIP / TIMEOUT in the summary.
step() {
  local name=$1 limit=$2 log=$3; shift 3
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

note "# Squeeze on a GPU, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), build $B"
{
  echo "## machine"
  nvidia-smi 2>&1 || echo "nvidia-smi: not available"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  echo "nvcc: $(nvcc --version 2>&1 | tail -1)"
  echo "cmake: $(cmake --version 2>&1 | head -1)"
  echo "kernel: $(uname -r), cpus: $(nproc)"
  python3 - <<'PYEOF' 2>&1
import sys
print("python", sys.version.split()[0], sys.executable)
try:
    import torch
    print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())
    print("torch NCCL", ".".join(map(str, torch.cuda.nccl.version())))
    if torch.cuda.is_available():
        print("device", torch.cuda.get_device_name(0))
except Exception as e:
    print("torch: not usable:", e)
PYEOF
  echo "libnccl files:"
  ls -l /usr/local/cuda/lib64/libnccl.so* 2>/dev/null
  python3 -c 'import site; print("\n".join(site.getsitepackages()))' 2>/dev/null | while read -r d; do
    find "$d" -name 'libnccl.so*' 2>/dev/null
  done
  ldconfig -p 2>/dev/null | grep -i nccl
  echo "carried build: $(ls -R "$B" 2>/dev/null | tr '\n' ' ')"
} >"$WORK/machine.txt"
cat "$WORK/machine.txt" | tee -a "$SUMMARY"

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
note "libnccl for squeeze-nccl-perf: ${NCCL_LIB:-none found}"

# 2. CUDA codecs vs the CPU reference.
if [[ -x $B/tests/squeeze_gpu_tests ]]; then
  step gpu-tests 150 "$WORK/gpu_tests.log" "$B/tests/squeeze_gpu_tests" --gtest_brief=1
  grep -E '^\[  (PASSED|FAILED|SKIPPED) |tests? (ran|passed|failed)' "$WORK/gpu_tests.log" | head -20 | tee -a "$SUMMARY"
else
  note "[gpu-tests] MISSING: $B/tests/squeeze_gpu_tests was not carried (perf/gpu/pack.sh)"
fi

# 3. Codec throughput on the GPU, where the bench has a GPU mode.
if [[ -x $B/perf/squeeze-codec-bench ]]; then
  help=$("$B/perf/squeeze-codec-bench" --help 2>&1)
  if grep -q -- '--gpu' <<<"$help"; then
    step codec-bench-gpu 60 "$WORK/codec_bench_gpu.log" "$B/perf/squeeze-codec-bench" --gpu --json
  elif grep -q -- '--device' <<<"$help"; then
    step codec-bench-gpu 60 "$WORK/codec_bench_gpu.log" "$B/perf/squeeze-codec-bench" --device gpu --json
  else
    note "[codec-bench-gpu] OWED: squeeze-codec-bench has no GPU mode yet (its --help names no --gpu/--device)"
  fi
else
  note "[codec-bench-gpu] MISSING: $B/perf/squeeze-codec-bench was not carried"
fi

# 4. Real NCCL: socket vs the plugin raw vs each codec, results checked (--check), codecs forced
#    (--bypass off) so their ratio and error show even on this fast loopback.
if [[ -x $B/perf/squeeze-nccl-perf ]]; then
  args=(--sweep -b 1M -e 16M -f 4 --iters 20 --warmup 5 --check --bypass off --timeout 150 --keep "$WORK/nccl")
  [[ -n $NCCL_LIB ]] && args+=(--nccl-lib "$NCCL_LIB")
  step nccl-sweep 270 "$OUT/nccl_sweep.txt" "$B/perf/squeeze-nccl-perf" "${args[@]}"
  rc=$?
  cat "$WORK"/nccl/*/rows.jsonl >"$OUT/nccl_perf.jsonl" 2>/dev/null
  sed -n '/sweep summary/,$p' "$OUT/nccl_sweep.txt" | tee -a "$SUMMARY"
  grep -h 'check failed\|rank .*(mode' "$OUT/nccl_sweep.txt" | head -20 | tee -a "$SUMMARY"
  if ((rc != 0 && rc != 1 && rc != 77)); then
    note "[nccl-diagnose] one raw 1 MiB all-reduce with NCCL_DEBUG=INFO (log in logs.tar.gz)"
    dargs=(--policy config/off.json --collective allreduce -b 1M -e 1M --iters 2 --warmup 1 --timeout 60)
    [[ -n $NCCL_LIB ]] && dargs+=(--nccl-lib "$NCCL_LIB")
    step nccl-diagnose 70 "$WORK/nccl_diagnose.log" env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV \
      "$B/perf/squeeze-nccl-perf" "${dargs[@]}"
    grep -h -m 15 -i 'warn\|error\|Squeeze\|plugin' "$WORK/nccl_diagnose.log" | tee -a "$SUMMARY"
  fi
else
  note "[nccl-sweep] MISSING: $B/perf/squeeze-nccl-perf was not carried (built only with CUDA and nccl.h)"
fi

# 5. Unmodified PyTorch: collectives checked, DLRM raw vs quantized all-to-all.
step torch 200 "$WORK/torch.log" bash perf/torch/launch.sh --build "$B" --out "$WORK/torch" --timeout 120 all
grep -h '^collectives \|^dlrm\|^plugin stats\|^RESULT\|SKIP' "$WORK/torch.log" | tee -a "$SUMMARY"
cp "$WORK/torch/summary.jsonl" "$OUT/torch_summary.jsonl" 2>/dev/null
cp "$WORK/torch/dlrm-loss.png" "$OUT/dlrm-loss.png" 2>/dev/null

note "# done in $(( $(date +%s) - START )) s"
tar -czf "$OUT/logs.tar.gz" -C "$WORK" . 2>/dev/null
rm -rf "$WORK"
exit 0
