#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the collective emulator
# (squeeze-perf) through the plugin on this machine with compression on: 2 ranks over
# loopback, ring all-reduce of heavy-tailed gradients and all-to-all of DLRM-like embeddings,
# 1 MiB to 64 MiB, with the plugin's embedded default policy (lossless, bit-exact). Extra
# arguments go to squeeze-perf (e.g. --policy config/dlrm-alltoall.json, --json, -N 4).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target nccl-net-squeeze squeeze-perf
exec ./build/perf/squeeze-perf -N 2 -b 1M -e 64M -f 4 -n 5 "$@"
