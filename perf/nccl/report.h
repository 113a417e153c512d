// squeeze-nccl-perf's output: nccl-tests' table (perf/common/nccl_table.h) with ratio, max
// error, the stated bound and rank agreement after nccl-tests' columns; the same rows as JSON
// lines; and the sweep's summary of busbw by mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "perf/common/nccl_table.h"

namespace squeeze::perf::nccl {

struct Row {
  std::string mode;        // "socket", "raw", "quantize", "plugin", ...
  std::string collective;  // "allreduce" | "alltoall"
  std::size_t bytes = 0;   // per rank, as nccl-tests counts it
  std::size_t count = 0;   // elements of the call, as nccl-tests counts them (all-to-all: per peer)
  std::string type, redop;  // nccl-tests' names: "float", "sum" | "none"
  std::string data;         // data set
  int nranks = 0, iters = 0;
  double time_us = 0;           // slowest rank's mean time per iteration
  double algbw = 0, busbw = 0;  // GB/s
  bool have_ratio = false;      // the plugin's statistics covered this row
  double ratio = 1;             // bytes handed to the plugin / bytes on the wire
  uint64_t handed = 0, wire = 0;
  double max_err = 0;          // max |result - exact| over ranks; NaN: a non-finite result
  int64_t wrong = 0;           // elements beyond the bound, over ranks; -1: no bound stated
  std::string bound;           // the policy's bound for this call, in words
  int agree = -1;              // all-reduce: 1 ranks bit-identical, 0 not; -1 n/a
  bool agree_required = true;  // false when the policy relaxes all-reduce consistency
  // "ring", or "collnet" for a plugin mode's all-reduce under --route collnet; then
  // collnet_handed is what the plugin's collective network carried of `handed`.
  std::string route = "ring";
  uint64_t collnet_handed = 0;
};

struct RunInfo {
  std::string mode, net, plugin, policy, nccl, devices, ifname, label, bypass;
  std::string a2a_api;   // "alltoall" (ncclAlltoAll) | "sendrecv"
  std::string algo;      // NCCL_ALGO as the ranks got it ("" = unset)
  bool collnet = false;  // --route collnet in a plugin mode (NCCL_COLLNET_ENABLE=1)
  int nranks = 0;
};

// The run's description, as "#" lines before the tables.
void print_header(const RunInfo& info);
std::string row_json(const Row& r, const RunInfo& info);  // one line, no newline
bool parse_row_json(const std::string& line, Row* r);     // for the sweep summary

// What --check requires of a row: nothing beyond the bound, ranks that agree where the policy
// keeps them so, and, on --route collnet, an all-reduce the collective network carried. Prints
// why it fails to stderr.
bool row_passes(const Row& r);

// The sweep's summary: per collective and size, busbw of each mode, raw/socket and each
// codec's busbw over raw. Rows are those the modes printed, in order.
void print_sweep_summary(const std::vector<Row>& rows, bool json, const std::string& label);

}  // namespace squeeze::perf::nccl
