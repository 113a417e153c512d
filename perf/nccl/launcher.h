// The launcher: checks for a CUDA device (exit 77 with the reason when there is none),
// finds libnccl and the plugin, then for each mode starts the ranks as processes of this
// program with the environment that makes NCCL treat each as its own host (NCCL_HOSTID) and
// carry all traffic over the chosen net, waits for them (killing the rest when one fails),
// and after a sweep prints the summary.
#pragma once

#include "perf/nccl/options.h"

namespace squeeze::perf::nccl {

// Returns the exit code: 0, kExitCheckFailed, kExitUsage, kExitRankError or kExitSkip.
int launch(const Options& o);

}  // namespace squeeze::perf::nccl
