#!/usr/bin/env bash
# The GPU proof's scripts, checked where there is no GPU: perf/torch/*.py and perf/jax/*.py
# compile and answer --help without torch or jax; the launchers refuse bad options (exit 2),
# plan the right runs (--dry-run: rates, channels, policies, SQUEEZE_GPU_STAGING), skip (77)
# without torch / jax / SQUEEZE_MAX_RATE, and `launch.sh train` turns the ranks' JSON lines
# into speedups, loss checks and summary rows (with a stand-in trainer that reports step times
# from the SQUEEZE_MAX_RATE and SQUEEZE_POLICY it was started with).
# usage: gpu_scripts_test.sh <python3>
set -uo pipefail
PY=${1:-python3}
# The interpreter itself, not a version manager's shim (a shim costs ~1 s a start under load).
PY=$("$PY" -c 'import sys; print(sys.executable)') || { echo "FAIL: no python at ${1:-python3}"; exit 1; }
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/squeeze-gpu-scripts.XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_rc <rc> <what> <command...>: runs it (output in $T/out), checks the exit code.
expect_rc() {
  local want=$1 what=$2; shift 2
  "$@" >"$T/out" 2>&1
  local rc=$?
  if ((rc == want)); then ok "$what (exit $rc)"; else bad "$what: exit $rc, expected $want"; tail -15 "$T/out"; fi
}
has() { grep -q -- "$1" "$T/out" && ok "$2" || { bad "$2: no '$1' in the output"; tail -15 "$T/out"; }; }

# 1. The scripts compile and explain themselves without torch or jax.
for f in "$SRC"/perf/torch/*.py "$SRC"/perf/jax/*.py; do
  expect_rc 0 "py_compile $(basename "$f")" "$PY" -m py_compile "$f"
done
for f in dlrm_tiny.py ddp_train.py collectives_check.py; do
  expect_rc 0 "$f --help" env PYTHONPATH="$SRC/perf/torch" "$PY" "$SRC/perf/torch/$f" --help
done
expect_rc 0 "jax collectives.py --help" "$PY" "$SRC/perf/jax/collectives.py" --help
expect_rc 2 "ddp_train.py --steps 0 is refused" "$PY" "$SRC/perf/torch/ddp_train.py" --steps 0
expect_rc 2 "collectives.py without a coordinator is refused" env -u JAX_COORDINATOR_ADDRESS \
  "$PY" "$SRC/perf/jax/collectives.py"
has "coordinator" "it names what is missing"

# 2. The launchers' help is their header comment, whole and nothing else; bad options exit 2.
L=$SRC/perf/torch/launch.sh J=$SRC/perf/jax/launch.sh
for l in "$L" "$J"; do
  expect_rc 0 "$(basename "$(dirname "$l")")/launch.sh --help" bash "$l" --help
  [[ $(tail -1 "$T/out") == Exit:* || $(tail -2 "$T/out" | head -1) == Exit:* ]] && ! grep -q 'set -uo' "$T/out" &&
    ok "the help ends with the exit codes, no code" || { bad "help text"; tail -3 "$T/out"; }
  [[ $l == "$L" ]] && has "launch.sh \[options\] train" "the torch launcher's help names train"
done
expect_rc 2 "torch launch.sh --rates 0" bash "$L" --dry-run --rates 0 train
has "not a positive rate" "names the bad rate"
expect_rc 2 "torch launch.sh --models xyz" bash "$L" --dry-run --models xyz train
expect_rc 2 "torch launch.sh --env without =" bash "$L" --dry-run --env SQUEEZE_GPU_STAGING train
expect_rc 2 "jax launch.sh --platform tpu" bash "$J" --platform tpu
expect_rc 2 "jax launch.sh -n 1" bash "$J" -n 1

# 3. What a train run would start: 2 models x 2 rates x (raw, compressed), capped and
#    on one connection each way, with staging when asked.
expect_rc 0 "train --dry-run" bash "$L" --dry-run --build "$T/nowhere" --out "$T/dry" --env SQUEEZE_GPU_STAGING=1 train
n=$(grep -c '^=== train-' "$T/out")
((n == 8)) && ok "8 launches planned" || bad "$n launches planned, expected 8"
for r in 1 10; do
  for m in dlrm ddp; do
    for v in raw compressed; do
      grep -q "^=== train-$m-${r}g-$v: " "$T/out" || bad "no launch train-$m-${r}g-$v"
    done
  done
done
has "DRY-RUN rank 1: .*SQUEEZE_MAX_RATE=10 SQUEEZE_TRANSPORT=tcp NCCL_MAX_NCHANNELS=1 NCCL_NCHANNELS_PER_NET_PEER=1" \
  "the cap, TCP and one connection each way reach rank 1"
has "train-dlrm-1g-compressed: .*SQUEEZE_POLICY=$SRC/perf/torch/dlrm-quantize.json" "DLRM compressed by dlrm-quantize.json"
has "train-ddp-10g-compressed: .*SQUEEZE_POLICY=$SRC/config/dp-allreduce.json" "DDP compressed by dp-allreduce.json"
has "train-ddp-1g-raw: .*SQUEEZE_POLICY=$SRC/config/off.json" "raw is config/off.json"
has "SQUEEZE_GPU_STAGING=1 SQUEEZE_MAX_RATE=1" "--env reaches the plugin runs"
expect_rc 0 "jax --dry-run" bash "$J" --dry-run --build "$T/nowhere" --env SQUEEZE_GPU_STAGING=1
has "DRY-RUN process 1: .*JAX_PROCESS_ID=1 .*NCCL_NET=Squeeze NCCL_NET_PLUGIN=$T/nowhere/plugin/libnccl-net-squeeze.so" \
  "JAX gets the plugin through NCCL's own variables"
has "XLA_PYTHON_CLIENT_PREALLOCATE=false" "the JAX processes share the GPU"
has "SQUEEZE_POLICY=$SRC/config/off.json SQUEEZE_STATS=.* SQUEEZE_GPU_STAGING=1" "raw policy and staging for JAX"

# 4. Skips: no torch / no jax / a plugin without SQUEEZE_MAX_RATE.
mkdir -p "$T/bin" "$T/build/plugin"
cat >"$T/bin/python-notorch" <<EOF
#!/usr/bin/env bash
exec "$PY" -c 'import sys; sys.path = []; import torch' "\$@"
EOF
cat >"$T/bin/python-nojax" <<EOF
#!/usr/bin/env bash
exec "$PY" -c 'import sys; sys.path = []; import jax' "\$@"
EOF
chmod +x "$T/bin/"*
expect_rc 77 "no torch: skipped" bash "$L" --python "$T/bin/python-notorch" --out "$T/o1" train
has "^SKIP: " "says SKIP and why"
expect_rc 77 "no jax: skipped" bash "$J" --python "$T/bin/python-nojax" --out "$T/o2"
has "^SKIP: jax not importable" "says SKIP and why"

# A stand-in python: answers launch.sh's torch probe as a GPU machine would, runs the two
# training scripts as a trainer whose steps take (raw: 100 ms, compressed: 30 ms) / rate,
# and anything else with the real python.
cat >"$T/fake_trainer.py" <<'EOF'
import argparse, json, os, sys
ap = argparse.ArgumentParser()
ap.add_argument("--steps", type=int); ap.add_argument("--log"); ap.add_argument("--label")
ap.add_argument("--backend"); ap.add_argument("--warmup-steps"); ap.add_argument("--compute-steps")
ap.add_argument("--batch")
a = ap.parse_args()
need = {"NCCL_NET": "Squeeze", "SQUEEZE_TRANSPORT": "tcp", "NCCL_MAX_NCHANNELS": "1", "NCCL_NCHANNELS_PER_NET_PEER": "1"}
for k, v in need.items():
    if os.environ.get(k) != v:
        print(f"stand-in trainer: {k}={os.environ.get(k)!r}, expected {v!r}", file=sys.stderr); sys.exit(3)
rate = float(os.environ["SQUEEZE_MAX_RATE"])
compressed = not os.environ["SQUEEZE_POLICY"].endswith("off.json")
step = (30.0 if compressed else 100.0) / rate
skew = float(os.environ.get("FAKE_LOSS_SKEW", "0")) if compressed else 0.0
loss = 0.5 * (1 + skew)
if os.environ["RANK"] == "0":
    with open(a.log, "w") as f:
        f.write("step,loss\n" + "".join(f"{s},{loss + 1.0 / (s + 1):.6f}\n" for s in range(a.steps)))
    first = float(os.environ.get("FAKE_FIRST_LOSS", "1.0")) if compressed else 1.0
    print(json.dumps({"final_loss": loss, "mean_last10": loss, "first_loss": first, "mean_step_ms": step,
                      "compute_step_ms": 2.0,
                      "comm_share": 1 - 2.0 / step, "sent_bytes_per_step": 16 << 20, "steps": a.steps}))
    print(f"FINAL_LOSS {loss:.6f}")
EOF
cat >"$T/bin/python-gpu" <<EOF
#!/usr/bin/env bash
if [[ \${1:-} == - && \${2:-} == nccl ]]; then cat >/dev/null; echo "torch stand-in, NCCL 2.28.9, a GPU"; exit 0; fi
case \$(basename "\${1:-}") in
  dlrm_tiny.py|ddp_train.py) shift; exec "$PY" "$T/fake_trainer.py" "\$@" ;;
esac
exec "$PY" "\$@"
EOF
chmod +x "$T/bin/python-gpu"
echo "not a library" >"$T/build/plugin/libnccl-net-squeeze.so"
expect_rc 77 "a plugin without SQUEEZE_MAX_RATE: skipped" bash "$L" --python "$T/bin/python-gpu" --build "$T/build" \
  --out "$T/o3" train
has "does not know SQUEEZE_MAX_RATE" "says which variable is missing"

# 5. The train summary from the ranks' JSON lines.
echo "SQUEEZE_MAX_RATE" >"$T/build/plugin/libnccl-net-squeeze.so"
expect_rc 0 "train with the stand-in trainer" bash "$L" --python "$T/bin/python-gpu" --build "$T/build" \
  --out "$T/o4" --train-steps 20 train
has "^train dlrm @ 1 Gbit/s x 1 connection(s): raw 100.0 ms/step (communication 98%), compressed 30.0 ms/step (communication 93%): speedup 3.33x, goal >= 3x: met" \
  "DLRM at 1 Gbit/s: step times, communication share, speedup against the goal"
has "^train dlrm @ 10 Gbit/s .*speedup 3.33x, goal >= 1.5x: met; loss raw 0.50000, compressed 0.50000 (0.00% limit 1%): PASS" \
  "DLRM at 10 Gbit/s: the loss check"
has "^train ddp @ 1 Gbit/s .*speedup 3.33x; loss" "DDP: speedup reported, no goal"
has "raw moved 1.37 Gbit/s while communicating" "the effective rate of the raw run"
rows=$(grep -c '"check": "train"' "$T/o4/summary.jsonl" 2>/dev/null)
[[ $rows == 4 ]] && ok "4 summary rows" || bad "$rows summary rows, expected 4"
expect_rc 1 "a compressed loss 5% off fails DLRM (limit 1%)" env FAKE_LOSS_SKEW=0.05 bash "$L" \
  --python "$T/bin/python-gpu" --build "$T/build" --out "$T/o5" --train-steps 20 --models dlrm --rates 1 train
has "(5.00% limit 1%): FAIL" "names the difference and the limit"
expect_rc 0 "DDP 5% apart from raw passes: it learns" env FAKE_LOSS_SKEW=0.05 bash "$L" \
  --python "$T/bin/python-gpu" --build "$T/build" --out "$T/o6" --train-steps 20 --models ddp --rates 1 train
has "(5.00% apart; from 1.00000 compressed fell 0.47500, raw 0.50000: must fall at least half as much): PASS" \
  "says how far apart and that it learnt"
expect_rc 1 "DDP whose compressed loss falls less than half as much as raw's fails" env FAKE_FIRST_LOSS=0.55 bash "$L" \
  --python "$T/bin/python-gpu" --build "$T/build" --out "$T/o7" --train-steps 20 --models ddp --rates 1 train
expect_rc 0 "DDP through the collective network (--route collnet)" bash "$L" --python "$T/bin/python-gpu" \
  --build "$T/build" --out "$T/o8" --train-steps 20 --models ddp --rates 1 --route collnet train
has "^=== train-ddp-collnet-1g-compressed: .*collnet-threshold.json, .*NCCL_COLLNET_ENABLE=1 NCCL_ALGO=Ring;AllReduce:CollNetChain" \
  "the compressed arm: CollNet on, all-reduce only on CollNetChain, the CollNet policy"
has "^=== train-ddp-collnet-1g-raw: .*off.json, SQUEEZE_MAX_RATE=1 SQUEEZE_TRANSPORT=tcp NCCL_MAX_NCHANNELS=1 NCCL_NCHANNELS_PER_NET_PEER=1$" \
  "the raw arm stays on the ring"
has "^train ddp-collnet @ 1 Gbit/s .*: PASS" "compared under its own name"
expect_rc 2 "--route names a route" bash "$L" --route tree train

echo "$((fails == 0 ? 1 : 0)) passed, $fails failed"
((fails == 0))
