// One collective-network job for the tests: N forked ranks, each loading the
// built plugin, initialising it (net table first, then the CollNet table, then
// the built-in profiler, as NCCL does at communicator init), building the mesh
// through listen + connect, and running all-reduces through ChainProxy (NCCL's
// CollNetChain proxy on host memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/collnet/rank_group.h"

namespace squeeze::testing {

// ncclDataType_t / ncclRedOp_t values the tests use.
inline constexpr int kInt32 = 2, kUint8 = 1, kFloat16 = 6, kFloat32 = 7, kBfloat16 = 9,
                     kFloat64 = 8;
inline constexpr int kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4;

std::size_t elem_size(int nccl_dtype);

// The input of `rank` for collective `coll`: data-parallel gradients for the
// float types (the same layers on every rank, sizes 4096..65536 elements with
// scales 1e-4..1e-2, each rank's own Student-t(3) noise: perf/common's
// "gradients"), uniform words for the integers. Deterministic: the parent
// recomputes them for the reference. `iteration` changes the noise, not the
// layers (a training step's new gradients).
std::vector<uint8_t> make_input(int rank, int coll, uint64_t count, int nccl_dtype,
                                uint64_t seed = 1, int iteration = 0);

struct RunSpec {
  int version = 11;  // CollNet table version
  int nodes = 4;
  int channels = 2;
  std::string policy;      // JSON; "" = the built-in default
  bool profiler = true;    // announce each all-reduce's Coll event
  bool bypass_off = true;  // SQUEEZE_BYPASS=off: loopback would (rightly) never pay
  int dtype = kFloat32;
  int op = kSum;
  std::vector<uint64_t> counts;  // one all-reduce per entry, per iteration
  int iterations = 1;
  uint64_t seed = 1;
  bool same_input_every_iteration = true;  // false: new noise every iteration (same layers)
  std::string stats_dir;                   // non-empty: SQUEEZE_STATS=<dir>/stats.json (per rank)
  int kill_rank = -1;  // this rank SIGKILLs itself right after posting all-reduce kill_at
  int kill_at = -1;
  double timeout_s = 120;
  std::size_t out_bytes_per_rank = 0;
  // In the child, after each all-reduce: where its output goes in the shared
  // area.
  std::function<void(RankGroup& g, int rank, int iteration, int coll, const uint8_t* out,
                     std::size_t bytes)>
      on_output;
};

struct RunResult {
  std::vector<int> exit_codes;
  // Per rank: numbers[0] = status of the first failing all-reduce (0 = none),
  // numbers[1] = seconds from its start to the error, numbers[2] = the plugin's
  // CollNet calls issued.
  std::vector<std::vector<double>> numbers;
};

RunResult run_collnet(const RunSpec& spec, RankGroup& group);

// Exit codes a rank returns for a failed step (the test prints which).
const char* rank_exit_reason(int code);

}  // namespace squeeze::testing
