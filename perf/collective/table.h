// squeeze-perf's output: an nccl-tests-style table (size, count, type, time, algbw, busbw)
// with the compression ratio, the max abs error and rank agreement added, or the same rows
// as JSON lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace squeeze::perf {

struct Row {
  std::string collective;      // "allreduce" | "alltoall"
  std::size_t bytes = 0;       // per rank, as nccl-tests counts it
  std::size_t count = 0;       // elements per rank (all-to-all: in total, nranks x per peer)
  std::string type;            // float32 | bfloat16 | float16
  std::string data;            // data set name
  int nranks = 0;
  int iters = 0;
  double time_us = 0;          // mean over iterations of the slowest rank's time
  double algbw = 0, busbw = 0; // GB/s
  bool have_ratio = false;     // the plugin's statistics were readable
  double ratio = 1;            // bytes handed to the plugin / bytes it put on the wire
  uint64_t handed = 0, wire = 0;
  double max_err = 0;          // max |out - exact| over ranks and iterations (NaN: NaN mismatch)
  uint64_t differing = 0;      // elements not bit-identical to the exact result, summed over ranks and iterations
  int agree = -1;              // all-reduce: 1 all ranks bit-identical, 0 not; -1 not applicable
  std::string arm;             // with --baseline: "main" or "baseline"; else ""
  std::vector<double> iter_us;  // each timed iteration's slowest-rank time
  // Main row with --baseline: the median over iterations of baseline time / this time, the
  // two run back to back; else 0.
  double speedup = 0;
};

struct RunInfo {
  int nranks = 0;
  std::string plugin, policy, ifname, dtype, label;
  std::string baseline_policy;  // --baseline, "" when none
  std::string chain;  // how the profiler chain is played, in words
  bool chain_active = false;
  bool gpu_copies = false;  // --copies gpu
};

void print_header(const RunInfo& info);
void print_row(const Row& r);
// With --baseline: a comment line after the main row with the baseline's time and ratio and
// the speedup.
void print_baseline(const Row& main, const Row& baseline);
void print_json(const Row& r, const RunInfo& info);

// nccl-tests' bus bandwidth factors: all-reduce 2(n-1)/n, all-to-all (n-1)/n.
double busbw_factor(const std::string& collective, int nranks);

}  // namespace squeeze::perf
