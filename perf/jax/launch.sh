#!/usr/bin/env bash
# Starts an unmodified multi-process JAX script (collectives.py by default) as N processes on
# this machine, setting only their environment: where the coordinator is and each process's
# id (JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID), the GPU (CUDA_VISIBLE_DEVICES;
# every process on GPU 0 by default, with XLA_PYTHON_CLIENT_PREALLOCATE=false so they share
# it), and the variables that send XLA's NCCL traffic through the Squeeze plugin
# (NCCL_NET_PLUGIN, NCCL_NET=Squeeze, SQUEEZE_POLICY, SQUEEZE_STATS). Each process gets its own
# NCCL_HOSTID, so NCCL treats it as a host of its own and uses the network even when all share
# one GPU. NCCL logs at INFO (INIT,NET) into each process's log: the run passes only if every
# process says the script passed and NCCL logged that it uses the network Squeeze.
#
#   launch.sh [options] [-- SCRIPT_ARGS...]
#
# Options: -n N processes (2); --gpus LIST (0); --build DIR (build) holding
# plugin/libnccl-net-squeeze.so, or --plugin PATH; --policy FILE (config/off.json: raw, so
# every result is exact); --env VAR=VALUE (repeatable), e.g. SQUEEZE_GPU_STAGING=1; --script
# PY (collectives.py); --python PY (python3); --out DIR (a new /tmp dir); --timeout S (300);
# --ifname IF (lo); --tag T (jax); --platform cpu runs the script on the CPU without NCCL (gloo
# collectives, a dry run of its logic); --dry-run prints each process's environment and
# command and starts nothing.
# Exit: 0 pass, 1 fail, 2 usage, 77 skipped (no jax, or no GPU for it).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
N=2 GPUS=0 BUILD=$SRC/build PLUGIN="" POLICY=$SRC/config/off.json PY=python3 OUT="" TIMEOUT=300
IFNAME=lo TAG=jax PLATFORM=gpu DRY=0 SCRIPT=$HERE/collectives.py USER_ENV=()

die() { echo "launch.sh: $*" >&2; exit 2; }
# shellcheck source=../launch_lib.sh
source "$HERE/../launch_lib.sh"
while [[ $# -gt 0 ]]; do
  launch_option "$@"
  if ((LAUNCH_SHIFT)); then shift "$LAUNCH_SHIFT"; continue; fi
  case $1 in
    --policy | --script | --tag | --platform) [[ $# -ge 2 ]] || die "$1 needs a value" ;;
  esac
  case $1 in
    --policy) POLICY=$2; shift 2 ;;
    --script) SCRIPT=$2; shift 2 ;;
    --tag) TAG=$2; shift 2 ;;
    --platform) PLATFORM=$2; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option $1 (script arguments go after --)" ;;
  esac
done
launch_check_common
[[ $PLATFORM == gpu || $PLATFORM == cpu ]] || die "--platform must be gpu or cpu"
[[ -f $SCRIPT ]] || die "no script $SCRIPT"
[[ -f $POLICY ]] || die "no policy file $POLICY"
POLICY=$(cd "$(dirname "$POLICY")" && pwd)/$(basename "$POLICY")

if ((DRY)); then
  echo "launch.sh: dry run: nothing is started"
else
  probe=$("$PY" -c 'import jax; print("jax", jax.__version__)' 2>&1)
  (($? == 0)) || { echo "SKIP: jax not importable with $PY (${probe##*$'\n'})"; exit 77; }
  echo "launch.sh: $probe"
fi
launch_plugin "$([[ $PLATFORM == gpu ]] && echo 1 || echo 0)"
[[ -n $OUT ]] || OUT=$(mktemp -d /tmp/squeeze-jax.XXXXXX)
DIR=$OUT/$TAG
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
rm -f "$DIR"/stats*.json "$DIR"/proc*.log
PORT=$(launch_free_port)

# proc_env <id>: the assignments for `env`.
proc_env() {
  local p=$1
  ENV=(JAX_COORDINATOR_ADDRESS=127.0.0.1:$PORT JAX_NUM_PROCESSES=$N JAX_PROCESS_ID=$p PYTHONUNBUFFERED=1)
  if [[ $PLATFORM == cpu ]]; then ENV+=(CUDA_VISIBLE_DEVICES= JAX_PLATFORMS=cpu); return; fi
  ENV+=(CUDA_VISIBLE_DEVICES=$(gpu_of "$p") XLA_PYTHON_CLIENT_PREALLOCATE=false
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET)
  nccl_own_host_env "squeeze-jax-$$-proc$p"
  squeeze_env "$POLICY" "$DIR/stats.json" "$p"
}

echo "=== $TAG: $N processes, $([[ $PLATFORM == cpu ]] && echo "CPU (gloo), no NCCL" || echo "NCCL_NET=Squeeze, SQUEEZE_POLICY=$POLICY${USER_ENV[*]:+, ${USER_ENV[*]}}")"
pids=()
for ((p = 0; p < N; p++)); do
  proc_env "$p"
  if ((DRY)); then
    echo "DRY-RUN process $p: env -u SQUEEZE_POLICY -u SQUEEZE_STATS ${ENV[*]} timeout $TIMEOUT $PY $SCRIPT --platform $PLATFORM --label $TAG $*"
    continue
  fi
  env -u SQUEEZE_POLICY -u SQUEEZE_STATS "${ENV[@]}" timeout "$TIMEOUT" "$PY" "$SCRIPT" --platform "$PLATFORM" \
    --label "$TAG" "$@" >"$DIR/proc$p.log" 2>&1 &
  pids+=($!)
done
((DRY)) && exit 0

launch_wait "$TAG" "" "${pids[@]}"
worst=$?

for ((p = 0; p < N; p++)); do grep -h '^{\|^RESULT\|^SKIP\|^mismatch' "$DIR/proc$p.log" | sed "s/^/proc $p: /"; done
if ((worst == 77)) || grep -qh '^SKIP' "$DIR"/proc*.log; then
  echo "SKIP: $(grep -h -m1 '^SKIP' "$DIR"/proc*.log | head -1 | sed 's/^SKIP: //')"
  exit 77
fi
failed=0
if ((worst != 0)); then
  echo "$TAG: a process exited $worst (logs: $DIR/proc*.log)"
  for ((p = 0; p < N; p++)); do echo "--- proc $p"; tail -n 15 "$DIR/proc$p.log"; done
  failed=1
fi
for ((p = 0; p < N; p++)); do
  grep -q '^RESULT: PASS' "$DIR/proc$p.log" || { echo "$TAG: process $p did not pass"; failed=1; }
  if [[ $PLATFORM == gpu ]] && ! grep -qE 'Using network Squeeze|NET/Squeeze' "$DIR/proc$p.log"; then
    echo "$TAG: process $p: NCCL did not log that it uses the network Squeeze (NCCL_DEBUG=INFO)"
    grep -h -m5 -i 'NET/\|Using network\|plugin' "$DIR/proc$p.log"
    failed=1
  fi
done
if [[ $PLATFORM == gpu ]]; then
  plugin_stats_line "$DIR"
  grep -h -m1 'Using network' "$DIR/proc0.log"
fi
echo "launch.sh: $TAG: $( ((failed)) && echo FAIL || echo PASS ) (logs in $DIR)"
exit $failed
