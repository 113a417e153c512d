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
while [[ $# -gt 0 ]]; do
  case $1 in
    -n) N=$2; shift 2 ;;
    --gpus) GPUS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --plugin) PLUGIN=$2; shift 2 ;;
    --policy) POLICY=$2; shift 2 ;;
    --env) [[ ${2:-} =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env needs VAR=VALUE, got '${2:-}'"
           USER_ENV+=("$2"); shift 2 ;;
    --script) SCRIPT=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --ifname) IFNAME=$2; shift 2 ;;
    --tag) TAG=$2; shift 2 ;;
    --platform) PLATFORM=$2; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    --) shift; break ;;
    *) die "unknown option $1 (script arguments go after --)" ;;
  esac
done
[[ $N =~ ^[0-9]+$ && $N -ge 2 ]] || die "-n must be a number >= 2"
[[ $TIMEOUT =~ ^[0-9]+$ && $TIMEOUT -ge 1 ]] || die "--timeout must be a number of seconds"
[[ $PLATFORM == gpu || $PLATFORM == cpu ]] || die "--platform must be gpu or cpu"
[[ -f $SCRIPT ]] || die "no script $SCRIPT"
[[ -f $POLICY ]] || die "no policy file $POLICY"
POLICY=$(cd "$(dirname "$POLICY")" && pwd)/$(basename "$POLICY")
IFS=, read -r -a GPU_LIST <<<"$GPUS"

if ((DRY)); then
  echo "launch.sh: dry run: nothing is started"
else
  probe=$("$PY" -c 'import jax; print("jax", jax.__version__)' 2>&1)
  (($? == 0)) || { echo "SKIP: jax not importable with $PY (${probe##*$'\n'})"; exit 77; }
  echo "launch.sh: $probe"
fi
[[ -n $PLUGIN ]] || PLUGIN=$BUILD/plugin/libnccl-net-squeeze.so
if [[ $PLATFORM == gpu ]] && ((!DRY)); then
  [[ -f $PLUGIN ]] || die "no plugin at $PLUGIN (build nccl-net-squeeze, or pass --build DIR / --plugin PATH)"
  PLUGIN=$(cd "$(dirname "$PLUGIN")" && pwd)/$(basename "$PLUGIN")
fi
[[ -n $OUT ]] || OUT=$(mktemp -d /tmp/squeeze-jax.XXXXXX)
DIR=$OUT/$TAG
mkdir -p "$DIR" && DIR=$(cd "$DIR" && pwd)
rm -f "$DIR"/stats*.json "$DIR"/proc*.log
if ((DRY)); then PORT=29600; else
  PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

# proc_env <id>: the assignments for `env`.
proc_env() {
  local p=$1 gpu=${GPU_LIST[$(($1 % ${#GPU_LIST[@]}))]}
  ENV=(JAX_COORDINATOR_ADDRESS=127.0.0.1:$PORT JAX_NUM_PROCESSES=$N JAX_PROCESS_ID=$p PYTHONUNBUFFERED=1)
  if [[ $PLATFORM == cpu ]]; then ENV+=(CUDA_VISIBLE_DEVICES= JAX_PLATFORMS=cpu); return; fi
  ENV+=(CUDA_VISIBLE_DEVICES=$gpu XLA_PYTHON_CLIENT_PREALLOCATE=false
        NCCL_HOSTID=squeeze-jax-$$-proc$p NCCL_SOCKET_IFNAME=$IFNAME NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
        NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1} NCCL_SHM_DISABLE=${NCCL_SHM_DISABLE:-1}
        NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET
        NCCL_NET=Squeeze NCCL_NET_PLUGIN=$PLUGIN NCCL_NET_PLUGIN_REF_COUNT=1 SQUEEZE_POLICY=$POLICY
        SQUEEZE_STATS=$DIR/stats.json SQUEEZE_RANK=$p SQUEEZE_SOCKET_IFNAME=$IFNAME "${USER_ENV[@]}")
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

# The first process that fails stops the others (they would wait for it until the timeout).
worst=0 stopping=0
while :; do
  alive=0
  for i in "${!pids[@]}"; do
    pid=${pids[$i]}; [[ $pid == done ]] && continue
    if kill -0 "$pid" 2>/dev/null; then alive=1; continue; fi
    wait "$pid"; rc=$?; pids[$i]=done
    ((rc == 0 || stopping)) && continue
    worst=$rc stopping=1
    for q in "${pids[@]}"; do [[ $q != done ]] && kill "$q" 2>/dev/null; done
  done
  ((alive)) || break
  sleep 0.2
done

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
  "$PY" - "$DIR" <<'PYEOF'
import glob, json, sys
handed = wire = 0
for f in sorted(glob.glob(sys.argv[1] + "/stats*.json")):
    t = json.load(open(f)).get("totals", {})
    handed += t.get("bytes_in", 0) + t.get("raw_bytes", 0)
    wire += t.get("bytes_out", 0) + t.get("raw_bytes", 0)
print(f"plugin stats: {handed} B handed, {wire} B on the wire" if handed else
      "plugin stats: none written (the plugin carried nothing?)")
PYEOF
  grep -h -m1 'Using network' "$DIR/proc0.log"
fi
echo "launch.sh: $TAG: $( ((failed)) && echo FAIL || echo PASS ) (logs in $DIR)"
exit $failed
