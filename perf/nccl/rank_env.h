// The environment of one rank process of squeeze-nccl-perf: what makes NCCL treat each rank
// as a host of its own and carry every byte over the chosen network (NCCL's Socket transport
// or the Squeeze plugin under a mode's policy), and, with --route collnet, what makes it run
// the plugin modes' all-reduce on Squeeze's collective network.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "perf/nccl/options.h"

namespace squeeze::perf::nccl {

// NCCL_ALGO for --route collnet: every collective on the ring except all-reduce, which only
// CollNetChain may carry (NCCL then fails the call if it could not set CollNet up, instead of
// quietly running the ring).
inline constexpr const char* kCollNetAlgo = "Ring;AllReduce:CollNetChain";

// The variables to set for rank `rank` of mode m (an empty value unsets); `pid` names the run
// in NCCL_HOSTID. NCCL_* variables that are only defaults keep the launcher's value, read with
// `lookup` (std::getenv when null).
std::map<std::string, std::string> mode_env(const Options& o, const Mode& m,
                                            const std::string& plugin, const std::string& run_dir,
                                            int rank, int pid,
                                            const char* (*lookup)(const char*) = nullptr);

// `environ` with `set` applied, as execve wants it.
std::vector<std::string> rank_env(const std::map<std::string, std::string>& set);

}  // namespace squeeze::perf::nccl
