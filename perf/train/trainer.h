// One rank of squeeze-train-check: loads the plugin twice (the compressed policy's instance and
// a private copy under the raw policy), opens one collective-network communicator on each
// (perf/collective/collnet_comm.h), and trains two copies of the same MLP side by side, step by
// step: the same batch, the gradient summed over the ranks by each instance's all-reduce, then
// averaged and applied by SGD with momentum. The two runs alternate which goes first each step,
// so both see the same machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perf/collective/bootstrap.h"
#include "perf/train/train_options.h"

namespace squeeze::perf {

// One run's outcome, as rank 0 reports it (gathered from every rank).
struct RunOutcome {
  std::string policy;
  std::vector<int> steps;          // the reported steps
  std::vector<double> train_loss;  // mean over ranks of the batch loss at those steps
  std::vector<double> eval_loss;   // held-out loss at those steps
  bool ranks_agree = true;         // every all-reduce gave every rank the same sum, and every rank
                                   // ended with the same parameters
  double ratio = 0;                // bytes handed to the plugin / bytes on the wire (0: n/a)
  double allreduce_ms = 0;         // mean wall time of one gradient all-reduce (rank 0)
};

struct TrainOutcome {
  RunOutcome compressed, raw;
};

// Runs rank `rank` of the job; rank 0's return value holds the outcome (the others' are empty).
// Throws std::runtime_error naming what failed.
TrainOutcome train_rank(const TrainOptions& o, const std::string& plugin, Bootstrap& boot);

}  // namespace squeeze::perf
