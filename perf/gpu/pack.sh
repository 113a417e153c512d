#!/usr/bin/env bash
# Copies what perf/gpu/device_run.sh runs out of a CUDA build folder into a small folder to
# carry to the GPU machine (the device tool carries at most 64 MiB with the tree), keeping
# the build tree's layout so the tools find the plugin (../plugin/) and the sources (../../),
# and the GPU tests find it too (tests/plugin_path.h: <exe dir>/../plugin/). The scripts it
# runs (perf/torch, perf/jax, config/) travel with the tree.
#
#   bash perf/gpu/pack.sh [BUILD_DIR (build-gpu)] [CARRY_DIR (build-gpu-carry)]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build-gpu} CARRY=${2:-build-gpu-carry}
[[ -d $BUILD ]] || { echo "pack.sh: no build folder $BUILD (see perf/gpu/README.md)" >&2; exit 2; }
rm -rf "$CARRY"
for f in plugin/libnccl-net-squeeze.so plugin/cli/squeeze-policy tests/squeeze_gpu_tests perf/squeeze-nccl-perf \
         perf/squeeze-codec-bench perf/squeeze-perf; do
  if [[ -f $BUILD/$f ]]; then
    mkdir -p "$CARRY/$(dirname "$f")"
    cp "$BUILD/$f" "$CARRY/$f"
    strip --strip-debug "$CARRY/$f" 2>/dev/null || true
  else
    echo "pack.sh: note: $BUILD/$f not built; device_run.sh will report it missing"
  fi
done
if [[ -f $CARRY/plugin/libnccl-net-squeeze.so ]] && ! grep -aq SQUEEZE_MAX_RATE "$CARRY/plugin/libnccl-net-squeeze.so"; then
  echo "pack.sh: note: this plugin has no SQUEEZE_MAX_RATE (TCP pacing); device_run.sh's train steps will skip"
fi
du -sh "$CARRY"
size=$(du -sm "$CARRY" | cut -f1)
# What travels besides: the tracked and untracked-not-ignored files of the checkout.
tree=$(( ($(git ls-files -co --exclude-standard -z 2>/dev/null | du -bc --files0-from=- 2>/dev/null | tail -1 | cut -f1) + 1048575) / 1048576 ))
echo "pack.sh: $CARRY ${size} MiB + the tree ${tree} MiB = $((size + tree)) MiB (the device tool carries 64 MiB)"
((size < 60)) || echo "pack.sh: WARNING: $CARRY is ${size} MiB; the device tool carries at most 64 MiB with the tree"
((size + tree < 64)) || echo "pack.sh: WARNING: with the tree that is over the device tool's 64 MiB"
