// One rank process of one mode: for each collective and size it shares a fresh ncclUniqueId
// through the run directory, creates a communicator, runs warm-up and timed iterations on
// the GPU, checks its output against the exact host result, destroys the communicator (the
// plugin writes its statistics then) and publishes a summary. Rank 0 gathers the summaries
// and prints the row.
#pragma once

#include "perf/nccl/options.h"

namespace squeeze::perf::nccl {

inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRankError = 3;
inline constexpr int kExitSkip = 77;

// Returns the process's exit code; never throws.
int run_rank(const Options& o);

}  // namespace squeeze::perf::nccl
