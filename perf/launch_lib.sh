# What perf/torch/launch.sh and perf/jax/launch.sh share, sourced by both: their common options,
# the environment that sends a process's NCCL traffic through the Squeeze plugin (or keeps NCCL
# on the network when every process shares one machine), waiting for N processes where the
# first failure stops the rest, and the plugin's statistics summed over a run.
#
# The caller defines die() and the variables these functions read and set: N GPUS BUILD PLUGIN
# PY OUT TIMEOUT IFNAME DRY USER_ENV (array); launch_check_common sets GPU_LIST.

# launch_option ARGS...: takes one option both launchers have from the front of ARGS; sets
# LAUNCH_SHIFT to the words it used (0: not a common option).
launch_option() {
  LAUNCH_SHIFT=2
  case $1 in
    -n | --gpus | --build | --plugin | --python | --out | --timeout | --ifname | --env)
      [[ $# -ge 2 ]] || die "$1 needs a value" ;;
  esac
  case $1 in
    -n) N=$2 ;;
    --gpus) GPUS=$2 ;;
    --build) BUILD=$2 ;;
    --plugin) PLUGIN=$2 ;;
    --python) PY=$2 ;;
    --out) OUT=$2 ;;
    --timeout) TIMEOUT=$2 ;;
    --ifname) IFNAME=$2 ;;
    --env)
      [[ $2 =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env needs VAR=VALUE, got '$2'"
      USER_ENV+=("$2") ;;
    --dry-run) DRY=1 LAUNCH_SHIFT=1 ;;
    -h | --help)
      awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"
      exit 0 ;;
    *) LAUNCH_SHIFT=0 ;;
  esac
}

# launch_check_common: the common options' values, and GPU_LIST from --gpus.
launch_check_common() {
  [[ $N =~ ^[0-9]+$ && $N -ge 2 ]] || die "-n must be a number >= 2"
  [[ $TIMEOUT =~ ^[0-9]+$ && $TIMEOUT -ge 1 ]] || die "--timeout must be a number of seconds"
  IFS=, read -r -a GPU_LIST <<<"$GPUS"
}

# launch_plugin NEEDED: PLUGIN from --plugin or --build; when NEEDED is 1 (and this is not a
# dry run) it must exist, and becomes an absolute path.
launch_plugin() {
  [[ -n $PLUGIN ]] || PLUGIN=$BUILD/plugin/libnccl-net-squeeze.so
  if (($1)) && ((!DRY)); then
    [[ -f $PLUGIN ]] || die "no plugin at $PLUGIN (build nccl-net-squeeze, or pass --build DIR / --plugin PATH)"
    PLUGIN=$(cd "$(dirname "$PLUGIN")" && pwd)/$(basename "$PLUGIN")
  fi
}

# launch_free_port: a free TCP port on 127.0.0.1 (a fixed one in a dry run).
launch_free_port() {
  ((DRY)) && { echo 29500; return; }
  "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# gpu_of INDEX: the GPU of process INDEX, round robin over --gpus.
gpu_of() { echo "${GPU_LIST[$(($1 % ${#GPU_LIST[@]}))]}"; }

# nccl_own_host_env HOSTID: appends to ENV what makes NCCL treat this process as a host of its
# own that talks over IFNAME's network (no IB, P2P, SHM or NVLS unless the caller's environment
# says otherwise).
nccl_own_host_env() {
  ENV+=(NCCL_HOSTID=$1 NCCL_SOCKET_IFNAME=$IFNAME NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
    NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-1} NCCL_SHM_DISABLE=${NCCL_SHM_DISABLE:-1}
    NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0})
}

# squeeze_env POLICY STATS RANK: appends to ENV what sends NCCL's network traffic through the
# plugin under POLICY, its statistics to STATS, then the user's --env assignments.
squeeze_env() {
  ENV+=(NCCL_NET=Squeeze NCCL_NET_PLUGIN=$PLUGIN NCCL_NET_PLUGIN_REF_COUNT=1 SQUEEZE_POLICY=$1
    SQUEEZE_STATS=$2 SQUEEZE_RANK=$3 SQUEEZE_SOCKET_IFNAME=$IFNAME "${USER_ENV[@]}")
}

# launch_wait TAG LOG_FORMAT PID...: waits for every PID. The first that fails (or skips, 77)
# decides the result and stops the others, which would otherwise wait for it until their
# timeout. With a LOG_FORMAT (printf, the process index), a failure other than a skip is
# reported with the tail of that process's log. Returns the deciding exit code (0: all passed).
launch_wait() {
  local tag=$1 logs=$2 worst=0 stopping=0 alive rc i p q
  shift 2
  local pids=("$@")
  while :; do
    alive=0
    for i in "${!pids[@]}"; do
      p=${pids[$i]}
      [[ $p == done ]] && continue
      if kill -0 "$p" 2>/dev/null; then alive=1; continue; fi
      wait "$p"; rc=$?; pids[$i]=done
      ((rc == 0 || stopping)) && continue
      worst=$rc stopping=1
      if [[ -n $logs ]] && ((rc != 77)); then
        local log
        # shellcheck disable=SC2059  # the format is the caller's
        log=$(printf "$logs" "$i")
        echo "launch.sh: $tag: process $i exited $rc; stopping the others (log: $log)" >&2
        tail -n 20 "$log" >&2
      fi
      for q in "${pids[@]}"; do [[ $q != done ]] && kill "$q" 2>/dev/null; done
    done
    ((alive)) || break
    sleep 0.2
  done
  return "$worst"
}

# plugin_stats_line DIR: one line from the plugin's statistics files DIR/stats*.json: bytes
# handed to it and put on the wire, in all and by rule and collective.
plugin_stats_line() {
  "$PY" - "$1" <<'PYEOF'
import glob, json, sys
handed = wire = collnet = 0
per = {}
for f in sorted(glob.glob(sys.argv[1] + "/stats*.json")):
    doc = json.load(open(f))
    t = doc.get("totals", {})
    handed += t.get("bytes_in", 0) + t.get("raw_bytes", 0)
    wire += t.get("bytes_out", 0) + t.get("raw_bytes", 0)
    c = doc.get("routes", {}).get("collnet", {})
    collnet += c.get("bytes_in", 0) + c.get("raw_bytes", 0)
    for rule in doc.get("rules", []):
        for coll, c in rule.get("collectives", {}).items():
            k = f"{rule['name']}/{coll}"
            e = per.setdefault(k, [0, 0, 0])
            e[0] += c.get("bytes_in", 0); e[1] += c.get("bytes_out", 0); e[2] += c.get("raw_bytes", 0)
if not handed:
    print("plugin stats: none written (socket run, or the plugin carried nothing)")
else:
    parts = ", ".join(f"{k}: {v[0] + v[2]} B -> {v[1] + v[2]} B" for k, v in per.items())
    on_collnet = f", {collnet} B of it on the collective network" if collnet else ""
    print(f"plugin stats: {handed} B handed, {wire} B on the wire, ratio {handed / max(wire, 1):.2f}"
          f"{on_collnet} ({parts})")
PYEOF
}
