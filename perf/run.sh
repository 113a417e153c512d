#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the benchmark through
# the plugin on this machine. Extra arguments go to the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target nccl-net-squeeze squeeze-transport-bench
export SQUEEZE_SOCKET_IFNAME=${SQUEEZE_SOCKET_IFNAME:-lo}
exec ./build/perf/squeeze-transport-bench --ifname "$SQUEEZE_SOCKET_IFNAME" "$@"
