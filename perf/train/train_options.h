// squeeze-train-check's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "perf/train/mlp.h"

namespace squeeze::perf {

struct TrainOptions {
  int nranks = 4;
  std::string plugin;
  std::string policy;      // the compressed run's policy
  std::string raw_policy;  // the raw run's policy (a private copy of the plugin)
  // --rank-policy R=FILE: rank R's compressed run uses FILE instead of `policy`, as nodes
  // whose environments differ (the collective network keeps them bit-identical regardless).
  std::vector<std::pair<int, std::string>> rank_policies;
  MlpShape shape;
  std::size_t teacher_hidden = 64;
  std::size_t batch = 32;  // per rank and step
  int steps = 300;
  double lr = 0.1, momentum = 0.0;  // plain SGD: error feedback without momentum correction
  uint64_t seed = 1;
  std::size_t eval = 2048;  // held-out samples
  int report_every = 50;
  double tolerance = 0.02;  // the compressed run's final loss may exceed the raw one's by this
  int channels = 2;         // CollNetChain channels
  bool bypass = false;      // let the plugin send raw where coding does not pay (loopback: always)
  bool json = false;
  double timeout_s = 120;

  // The compressed run's policy on `rank`.
  const std::string& policy_of(int rank) const;
};

// Parses argv (perf/common/cli_args.h): --help prints the usage and exits 0; a bad option is
// one line on stderr and exit 2.
TrainOptions parse_train_options(int argc, char** argv);

}  // namespace squeeze::perf
