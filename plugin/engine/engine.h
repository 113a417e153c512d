// The collaborators every comm works with: the running policy, the statistics, the
// compress-only-when-it-pays controller and the codec worker pool. Net makes one at its first
// init and hands it to each comm it creates, so nothing below Net reaches for a singleton.
#pragma once

#include <memory>

#include "plugin/engine/pays.h"
#include "plugin/engine/worker_pool.h"
#include "plugin/policy/policy.h"
#include "plugin/policy/stats.h"

namespace squeeze::plugin {

struct Engine {
  std::shared_ptr<const policy::Policy> policy;  // never null once init succeeded
  std::unique_ptr<policy::Stats> stats;
  std::unique_ptr<PaysController> pays;
  // The process's codec threads (rebuilt in a forked child; see WorkerPool::shared).
  WorkerPool& workers() const { return WorkerPool::shared(); }
};

}  // namespace squeeze::plugin
