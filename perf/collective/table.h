// squeeze-perf's output: nccl-tests' table (perf/common/nccl_table.h) with the compression
// ratio, the max abs error, the policy's stated bound and rank agreement after nccl-tests'
// columns, or the same rows as JSON lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perf/common/nccl_table.h"

namespace squeeze::perf {

struct Row {
  std::string collective;  // "allreduce" | "alltoall"
  std::size_t bytes = 0;   // per rank, as nccl-tests counts it
  std::size_t count = 0;   // elements of the call, as nccl-tests counts them (all-to-all: per peer)
  std::string type;        // nccl-tests' names: float | bfloat16 | half
  std::string redop;       // sum | prod | min | max | avg; "none" for all-to-all
  std::string data;        // data set name
  int nranks = 0;
  int iters = 0;
  double time_us = 0;           // mean over iterations of the slowest rank's time
  double algbw = 0, busbw = 0;  // GB/s
  // The mean over ranks and timed iterations of a rank's CPU time (user + system, all its
  // threads) in the collective: what it cost, which a loaded machine does not inflate as it
  // does the wall time.
  double cpu_us = 0;
  bool have_ratio = false;  // the plugin's statistics were readable
  double ratio = 1;         // bytes handed to the plugin / bytes it put on the wire
  uint64_t handed = 0, wire = 0;
  double max_err = 0;  // max |out - exact| over ranks and iterations (NaN: NaN mismatch)
  uint64_t differing =
      0;  // elements not bit-identical to the exact result, summed over ranks and iterations
  int64_t wrong =
      0;  // elements beyond the stated bound, over ranks and iterations; -1: no bound stated
  std::string bound;            // the policy's stated bound, one word ("exact", "rel=0.02")
  int agree = -1;               // all-reduce: 1 all ranks bit-identical, 0 not; -1 not applicable
  bool agree_required = true;   // false where the policy lets all-reduce ranks differ
  std::string arm;              // with --baseline: "main" or "baseline"; else ""
  std::string route;            // "ring" | "collnet" (all-reduce), "p2p" (all-to-all)
  std::vector<double> iter_us;  // each timed iteration's slowest-rank time
  // Main row with --baseline: the median over iterations of baseline time / this time, the
  // two run back to back; else 0.
  double speedup = 0;
};

struct RunInfo {
  int nranks = 0;
  std::string plugin, policy, ifname, dtype, label;
  std::string baseline_policy;        // --baseline, "" when none
  std::string route, baseline_route;  // the all-reduce's route in each instance
  int collnet_channels = 0;
  std::string chain;  // how the profiler chain is played, in words
  bool chain_active = false;
  bool gpu_copies = false;  // --copies gpu
};

// The run's description, as "#" lines before the tables.
void print_header(const RunInfo& info);
// With --baseline: a comment line after the main row with the baseline's time and ratio and
// the speedup.
void print_baseline(const Row& main, const Row& baseline);
void print_json(const Row& r, const RunInfo& info);

}  // namespace squeeze::perf
