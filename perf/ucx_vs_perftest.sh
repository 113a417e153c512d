#!/usr/bin/env bash
# UCX transport through the plugin against UCX's own ucx_perftest, on one UCX transport, at
# 1 MiB messages, in one run. The issue asks for squeeze >= 0.9x ucx_perftest tag_bw.
#
#   perf/ucx_vs_perftest.sh [BUILD_DIR]        (default: build)
#   env: UCX_TLS      UCX transports for both sides (default tcp; e.g. shm, sm, rc_x)
#        ROUNDS       alternating rounds of each measurement; the best of each counts (3)
#        DEPTH        messages in flight for ucx_perftest -O (8, what squeeze-transport-bench
#                     keeps in flight through the plugin, as NCCL's proxy does)
#        ITERS        ucx_perftest iterations per round (2000)
#        PORT         ucx_perftest's TCP port for its own set-up (13370)
#
# Both run server and client on loopback. squeeze-transport-bench goes through the plugin
# (SQUEEZE_TRANSPORT=ucx, policy off: every message raw).
#
# Error handling: the UCX transport creates its endpoints with UCP_ERR_HANDLING_MODE_PEER
# (without it UCX aborts the process when a tcp peer dies) and falls back to none only where
# UCX has no transport that supports it (UCX 1.13's shared memory). UCX picks different
# protocols per mode (1.13 over tcp: no zero-copy rendezvous lanes under peer mode), so the
# like-for-like baseline is ucx_perftest -e (peer mode) when UCX accepts it on this UCX_TLS,
# and plain ucx_perftest otherwise. Plain ucx_perftest is measured and printed as well.
#
# Prints a table and one JSON line:
#   {"bench":"ucx_vs_perftest","ucx_tls":...,"size":1048576,"squeeze_GBps":...,
#    "perftest_GBps":...,"perftest_err_mode":"peer"|"none","ratio":...,"meets_0_9":...,
#    "perftest_plain_GBps":...,"ratio_vs_plain":...}
# GB/s is 1e9 bytes/s for both (ucx_perftest's "MB/s" is MiB/s and is converted).
set -euo pipefail

build=${1:-build}
bench=$build/perf/squeeze-transport-bench
tls=${UCX_TLS:-tcp}
rounds=${ROUNDS:-3}
depth=${DEPTH:-8}
iters=${ITERS:-2000}
port=${PORT:-13370}
size=1048576

command -v ucx_perftest >/dev/null || { echo "ucx_perftest not found (Debian: apt-get install ucx-utils)" >&2; exit 2; }
[[ -x $bench ]] || { echo "$bench not built (cmake --build $build --target squeeze-transport-bench)" >&2; exit 2; }
export UCX_TLS=$tls

# One ucx_perftest tag_bw run (extra arguments: e.g. -e); prints its overall bandwidth in GB/s.
perftest_once() {
  local args=(-t tag_bw -s "$size" -n "$iters" -w 100 -O "$depth" -p "$port" -f "$@")
  local server_log out line
  server_log=$(mktemp)
  ucx_perftest "${args[@]}" >"$server_log" 2>&1 &
  local server=$!
  for _ in $(seq 50); do  # until the server listens
    ss -ltn 2>/dev/null | grep -q ":$port " && break
    sleep 0.1
  done
  out=$(timeout 120 ucx_perftest 127.0.0.1 "${args[@]}" 2>&1) || { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -f "$server_log"; return 1; }
  wait "$server" || true
  rm -f "$server_log"
  # Final line: iterations, overhead p50/avg/overall (us), bandwidth avg/overall (MiB/s), rates.
  line=$(grep -E '^[[:space:]]+[0-9]+[[:space:]]' <<<"$out" | tail -1)
  awk '{printf "%.4f\n", $6 * 1048576 / 1e9}' <<<"$line"
}

# One squeeze-transport-bench run at 1 MiB; prints the plugin's GB/s.
squeeze_once() {
  local out
  out=$(SQUEEZE_TRANSPORT=ucx timeout 300 "$bench" --min "$size" --max "$size" --reps 5 --json 2>/dev/null) ||
    { echo "squeeze-transport-bench failed" >&2; return 1; }
  sed -nE 's/.*"squeeze_GBps":([0-9.]+).*/\1/p' <<<"$out" | tail -1
}

# Peer-mode baseline where UCX supports it on this UCX_TLS, as the transport does.
mode=peer
perftest_once -e >/dev/null 2>&1 || mode=none
matched_args=()
[[ $mode == peer ]] && matched_args=(-e)

max() { awk -v a="$1" -v b="$2" 'BEGIN{print (b > a ? b : a)}'; }
best_m=0 best_p=0 best_s=0 all_m="" all_p="" all_s=""
for ((r = 1; r <= rounds; r++)); do
  m=$(perftest_once "${matched_args[@]}") || { echo "ucx_perftest (${mode} mode) failed" >&2; exit 1; }
  s=$(squeeze_once)
  if [[ $mode == peer ]]; then
    p=$(perftest_once) || { echo "ucx_perftest failed" >&2; exit 1; }
  else
    p=$m
  fi
  all_m+="${all_m:+,}$m" all_p+="${all_p:+,}$p" all_s+="${all_s:+,}$s"
  best_m=$(max "$best_m" "$m") best_p=$(max "$best_p" "$p") best_s=$(max "$best_s" "$s")
done
ratio=$(awk -v s="$best_s" -v p="$best_m" 'BEGIN{printf "%.4f", (p > 0 ? s / p : 0)}')
ratio_plain=$(awk -v s="$best_s" -v p="$best_p" 'BEGIN{printf "%.4f", (p > 0 ? s / p : 0)}')
meets=$(awk -v r="$ratio" 'BEGIN{print (r >= 0.9 ? "true" : "false")}')

printf "# UCX_TLS=%s, %d B messages, %d in flight, best of %d alternating rounds\n" "$tls" "$size" "$depth" "$rounds"
printf "%-40s %10s   %s\n" "path" "GB/s" "rounds"
printf "%-40s %10.3f   %s\n" "ucx_perftest tag_bw -O $depth ${matched_args[*]:-}" "$best_m" "$all_m"
[[ $mode == peer ]] && printf "%-40s %10.3f   %s\n" "ucx_perftest tag_bw -O $depth (no -e)" "$best_p" "$all_p"
printf "%-40s %10.3f   %s\n" "squeeze-transport-bench (ucx)" "$best_s" "$all_s"
printf "%-40s %10.3f   (>= 0.9: %s)\n" "ratio, same error mode ($mode)" "$ratio" "$meets"
[[ $mode == peer ]] && printf "%-40s %10.3f\n" "ratio vs perftest without -e" "$ratio_plain"
printf '{"bench":"ucx_vs_perftest","ucx_tls":"%s","size":%d,"depth":%d,"rounds":%d,"squeeze_GBps":%s,"perftest_GBps":%s,"perftest_err_mode":"%s","ratio":%s,"meets_0_9":%s,"perftest_plain_GBps":%s,"ratio_vs_plain":%s}\n' \
  "$tls" "$size" "$depth" "$rounds" "$best_s" "$best_m" "$mode" "$ratio" "$meets" "$best_p" "$ratio_plain"
