#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the collective emulator
# (squeeze-perf) through the plugin on this machine with compression on: 2 ranks over
# loopback capped at 1 Gbit/s per connection (SQUEEZE_MAX_RATE, the kernel's TCP pacing; set
# it to 0 for no cap), ring all-reduce of heavy-tailed gradients and all-to-all of DLRM-like
# embeddings, 1 MiB to 16 MiB, under config/dlrm-alltoall.json (all-to-all quantized within
# rel 2e-2, all-reduce lossless) and, in the same processes with iterations alternated, raw
# (--baseline config/off.json): each size prints both rows and the speedup, with the ratio,
# max error and the bound the policy states. Under a minute. Extra arguments go to
# squeeze-perf and win over these (e.g. --policy config/default.json, --json, -N 4, -e 64M).
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
export SQUEEZE_MAX_RATE=${SQUEEZE_MAX_RATE:-1}
exec ./build/perf/squeeze-perf -N 2 -b 1M -e 16M -f 4 -n 5 --policy config/dlrm-alltoall.json \
  --baseline config/off.json "$@"
