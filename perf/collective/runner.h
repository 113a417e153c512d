// Runs one collective at one size on this rank: builds the inputs and the exact result,
// sets up a communicator, runs warm-up and timed iterations (a bootstrap barrier before
// each; after each a second barrier, then the checks against the exact result and against
// the policy's stated bound, so no rank's checks share the CPU with another rank's timed
// iteration), finalizes, and gathers every rank's timings, errors, elements beyond the
// bound, output hashes and plugin wire statistics into one Row (on rank 0). With
// a --baseline instance (baseline_lib), every iteration runs through both instances, in
// alternating order, and two rows come back: the main instance's first, with its speedup.
// An all-reduce takes each instance's route (--route, --baseline-route): NCCL's ring over the
// net table, or the collective network (collnet_comm.h), each checked against the result it
// produces raw and the bound its policy states on that route.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf/collective/bootstrap.h"
#include "perf/collective/options.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/stats_file.h"
#include "perf/collective/table.h"
#include "plugin/policy/policy.h"

namespace squeeze::perf {

struct RankContext {
  const Options& opt;
  Bootstrap& boot;
  const PluginLib& lib;
  const StatsFile& stats;
  int dev = 0;             // the same device in both instances: they discover the same interfaces
  uint64_t comm_base = 0;  // same on every rank; each communicator adds its index
  uint64_t comm_index = 0;
  const PluginLib* baseline_lib = nullptr;  // --baseline: a private copy of the plugin
  const StatsFile* baseline_stats = nullptr;
  // The policies the two instances run (null: no compression), for the bound each states.
  const policy::Policy* policy = nullptr;
  const policy::Policy* baseline_policy = nullptr;
  // The profiler chain tells the net table the dtype; without it nothing lossy applies on the
  // ring (the collective network always knows the dtype: iallreduce passes it).
  bool chain_active = true;
};

std::vector<Row> run_allreduce(RankContext& ctx, std::size_t bytes);
// `bytes` per rank in total (nranks blocks); per-peer count = bytes / elem / nranks.
std::vector<Row> run_alltoall(RankContext& ctx, std::size_t bytes);

}  // namespace squeeze::perf
