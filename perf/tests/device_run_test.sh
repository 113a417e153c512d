#!/usr/bin/env bash
# perf/gpu/device_run.sh's own logic, where there is no GPU: with a stand-in
# nvidia-cuda-mps-control on PATH it must start MPS (pipe and log under its temp dir) after the
# single-process GPU tests and before every multi-rank step, say so, and stop it at the end;
# name every step in the summary (a clean SKIP or MISSING here), write at most the 8 files the
# device tool brings back, honour SQUEEZE_DEVICE_ONLY and the budget, and say when MPS fails;
# and, with a stand-in squeeze-nccl-perf, run each NCCL sweep (collnet included) with its
# options, collect its output and diagnose a failed one with its environment and --route.
# usage: device_run_test.sh [build dir to carry (default: an empty one)]
set -uo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/squeeze-device-run-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
B=${1:-$T/empty-build}
mkdir -p "$B" "$T/bin"
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { grep -q -- "$2" "$1" && ok "$3" || { bad "$3: no '$2' in $(basename "$1")"; }; }

cat >"$T/bin/nvidia-cuda-mps-control" <<EOF
#!/usr/bin/env bash
# stand-in: records how it was called
if [[ \${1:-} == -d ]]; then
  echo "start pipe=\${CUDA_MPS_PIPE_DIRECTORY:-unset} log=\${CUDA_MPS_LOG_DIRECTORY:-unset}" >>"$T/mps.calls"
  [[ -d \${CUDA_MPS_PIPE_DIRECTORY:-/nonexistent} ]] || exit 3
  exit \${FAKE_MPS_RC:-0}
fi
echo "command \$(cat)" >>"$T/mps.calls"
EOF
chmod +x "$T/bin/nvidia-cuda-mps-control"

run() {  # run <out dir> [VAR=value...]
  local out=$1; shift
  env PATH="$T/bin:$PATH" OUT="$out" "$@" timeout 300 bash "$SRC/perf/gpu/device_run.sh" "$B" >"$out.log" 2>&1
}

# 1. A whole run.
rm -f "$T/mps.calls"
run "$T/out1" SQUEEZE_DEVICE_BUDGET_S=240
rc=$?
((rc == 0)) && ok "device_run.sh exits 0" || bad "device_run.sh exited $rc"
S=$T/out1/summary.txt
has "$S" "^versions: device .*; driver .*torch .*NCCL .*JAX .*python " "one versions line: device, driver, torch, NCCL, JAX"
has "$S" "^MPS: on for the multi-rank steps (nvidia-cuda-mps-control -d, pipe /tmp/squeeze-gpu\." "MPS on, its pipe in the run's temp dir"
has "$S" "^MPS: stopped" "MPS stopped at the end"
has "$T/mps.calls" "^start pipe=/tmp/squeeze-gpu\.[^ ]*/mps/pipe log=/tmp/squeeze-gpu\.[^ ]*/mps/log" "the daemon got its own pipe and log dirs"
has "$T/mps.calls" "^command quit" "the daemon was told to quit"
order=$(grep -n -E '^\[gpu-tests\]|^MPS: on|^\[nccl-sweep\]|^\[train\]|^MPS: stopped' "$S" | cut -d: -f2- | cut -c1-14 | tr '\n' '|')
[[ $order == "[gpu-tests] MI|MPS: on for th|[nccl-sweep] M|[train] SKIP (|MPS: stopped|" ]] &&
  ok "MPS starts after the single-process GPU tests, before the multi-rank steps" || bad "order of steps: $order"
for s in gpu-tests nccl-sweep train jax torch torch-staging jax-staging train-staging codec-bench-gpu; do
  grep -q "^\[$s\] \(SKIP\|MISSING\|PASS\)" "$S" || bad "step $s: $(grep "^\[$s\]" "$S" || echo 'not in the summary')"
done
ok "every step is in the summary"
grep -q '^\[.*\] FAIL' "$S" && bad "a step failed: $(grep '^\[.*\] FAIL' "$S")"
n=$(find "$T/out1" -type f | wc -l)
((n <= 8)) && ok "$n files under \$OUT (the device tool brings back 8)" || bad "$n files under \$OUT: $(ls "$T/out1")"
[[ -f $T/out1/logs.tar.gz ]] && ok "logs.tar.gz written" || bad "no logs.tar.gz"
ls -d /tmp/squeeze-gpu.* 2>/dev/null | while read -r d; do grep -q "$d" "$T/mps.calls" && bad "temp dir $d left behind"; done

# 2. Only some steps; MPS failing to start.
rm -f "$T/mps.calls"
run "$T/out2" SQUEEZE_DEVICE_ONLY="jax" FAKE_MPS_RC=1
S=$T/out2/summary.txt
has "$S" "^\[train\] not selected (SQUEEZE_DEVICE_ONLY=jax)" "SQUEEZE_DEVICE_ONLY leaves the other steps out"
has "$S" "^\[jax\] SKIP" "... and runs the one named"
has "$S" "^MPS: failed to start (exit 1" "a failed MPS start is said"
grep -q "^MPS: stopped" "$S" && bad "MPS 'stopped' though it never started"
grep -q "^command quit" "$T/mps.calls" 2>/dev/null && bad "told a daemon that never started to quit"

# 3. A spent budget: the steps say NOT RUN, MPS is still stopped.
rm -f "$T/mps.calls"
run "$T/out3" SQUEEZE_DEVICE_BUDGET_S=25
S=$T/out3/summary.txt
has "$S" "^\[train\] NOT RUN: the 25 s budget is spent" "steps past the budget are NOT RUN"
has "$S" "^MPS: stopped" "MPS stopped even so"

# 4. The NCCL sweeps, with a stand-in squeeze-nccl-perf that records what it was given and
#    fails its sweeps (exit 3): each sweep gets its environment and options, its tables and rows
#    are collected, and each failure is diagnosed with the sweep's environment and --route.
mkdir -p "$T/nccl-build/perf"
cat >"$T/nccl-build/perf/squeeze-nccl-perf" <<EOF
#!/usr/bin/env bash
# stand-in: records its environment and options, prints a sweep's lines, keeps a row
echo "staging=\${SQUEEZE_GPU_STAGING:-} debug=\${NCCL_DEBUG:-} \$*" >>"$T/nccl.calls"
keep=
while ((\$#)); do [[ \$1 == --keep ]] && keep=\$2; shift; done
echo "# sweep summary: busbw"
[[ -n \$keep ]] && mkdir -p "\$keep/run" && echo "{\"keep\":\"\${keep##*/}\"}" >"\$keep/run/rows.jsonl" && exit 3
exit 0
EOF
chmod +x "$T/nccl-build/perf/squeeze-nccl-perf"
B_EMPTY=$B
B=$T/nccl-build
run "$T/out4" SQUEEZE_DEVICE_ONLY="nccl-sweep nccl-sweep-diagnose nccl-sweep-staging nccl-sweep-staging-diagnose collnet collnet-diagnose"
B=$B_EMPTY
C=$T/nccl.calls
has "$C" "^staging= debug= --sweep .*--keep [^ ]*/nccl-sweep .*--bypass off" "the sweep forces the codecs"
has "$C" "^staging=1 debug= --sweep .*--bypass off --sweep-modes raw,lossless,quantize,threshold,cast" \
  "the staging sweep: staging on, no Socket mode"
has "$C" "^staging= debug= --sweep .*--label collnet .*--route collnet --collective allreduce --sweep-modes raw,threshold,quantize$" \
  "the collnet sweep: all-reduce on the collective network"
grep -q -- "--label collnet .*--bypass" "$C" && bad "the collnet sweep got --bypass"
has "$C" "^staging= debug=INFO --policy config/off.json --collective allreduce -b 1M -e 1M .*--timeout 60 --nccl-lib" \
  "a failed sweep is diagnosed"
has "$C" "^staging=1 debug=INFO --policy config/off.json" "... with the sweep's environment"
has "$C" "^staging= debug=INFO --policy config/off.json .*--route collnet" "... and its --route"
(($(grep -c "debug=INFO" "$C") == 3)) && ok "three diagnoses" || bad "diagnoses: $(grep "debug=INFO" "$C")"
has "$T/out4/nccl_sweep.txt" "^#### nccl-sweep-staging (SQUEEZE_GPU_STAGING=1)$" \
  "the staging sweep's tables, headed by its environment"
has "$T/out4/nccl_sweep.txt" "^#### collnet (--route collnet)$" "the collnet sweep's tables, headed by its route"
rows=$(tr '\n' ' ' <"$T/out4/nccl_perf.jsonl" 2>/dev/null)
[[ $rows == '{"keep":"nccl-sweep"} {"keep":"nccl-sweep-staging"} {"keep":"collnet"} ' ]] &&
  ok "the three sweeps' rows in nccl_perf.jsonl" || bad "nccl_perf.jsonl: $rows"
has "$T/out4/summary.txt" "^\[collnet-diagnose\] PASS" "the collnet diagnosis ran"
n=$(find "$T/out4" -type f | wc -l)
((n <= 8)) && ok "$n files under \$OUT with the sweeps" || bad "$n files under \$OUT: $(ls "$T/out4")"

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
((fails == 0))
