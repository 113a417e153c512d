#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the collective emulator
# (squeeze-perf) through the plugin on this machine with compression on: 2 ranks over
# loopback, ring all-reduce of heavy-tailed gradients and all-to-all of DLRM-like embeddings,
# 1 MiB to 64 MiB, with the plugin's embedded default policy (lossless, bit-exact). Extra
# arguments go to squeeze-perf (e.g. --policy config/dlrm-alltoall.json, --json, -N 4).
#
# stdout carries only squeeze-perf's results (the tables, or JSON lines with --json); the
# installation and the build report on stderr. An existing build/ (say the README's Release
# build, made with Makefiles) is reconfigured with its own generator and build type;
# otherwise build/ is made with Ninja, RelWithDebInfo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install-deps.sh >&2
if [[ -f build/CMakeCache.txt ]]; then
  cmake -S . -B build >&2
else
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >&2
fi
cmake --build build -j "$(nproc)" --target nccl-net-squeeze squeeze-perf >&2
exec ./build/perf/squeeze-perf -N 2 -b 1M -e 64M -f 4 -n 5 "$@"
