#include "perf/train/trainer.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

#include "perf/collective/collnet_comm.h"
#include "perf/collective/data.h"
#include "perf/collective/plugin_lib.h"
#include "perf/collective/scoped_env.h"
#include "perf/collective/stats_file.h"
#include "perf/common/plugin_log.h"
#include "perf/train/mlp.h"

namespace squeeze::perf {

namespace {

constexpr int kNcclFloat32 = 7, kNcclSum = 0;

// One of the two runs: its plugin instance, communicator, model and optimiser.
struct Run {
  const PluginLib* lib = nullptr;
  const StatsFile* stats = nullptr;
  std::string policy;
  std::unique_ptr<CollNetComm> comm;
  std::optional<Mlp> model;
  std::optional<Sgd> opt;
  std::vector<float> grad, sum;
  double allreduce_s = 0;
  uint64_t allreduces = 0;
  uint64_t sums_hash = 0;  // every step's all-reduce result, in order
  WireTotals before;
  RunOutcome out;
};

uint64_t batch_seed(uint64_t seed, int rank, int step) {
  return derive_seed(seed, 1000 + static_cast<uint64_t>(rank), static_cast<uint64_t>(step));
}

// One step of one run: the local gradient, its sum over the ranks, the update. Returns the
// local batch loss.
double step_once(Run& r, const Batch& b, int nranks) {
  const double loss = r.model->loss(b, &r.grad);
  const auto t0 = std::chrono::steady_clock::now();
  r.comm->allreduce(reinterpret_cast<const uint8_t*>(r.grad.data()),
                    reinterpret_cast<uint8_t*>(r.sum.data()), r.grad.size(), kNcclFloat32,
                    sizeof(float), "ncclFloat32", kNcclSum);
  r.allreduce_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ++r.allreduces;
  r.sums_hash = hash_bytes(r.sum.data(), r.sum.size() * sizeof(float), r.sums_hash);
  const auto inv = static_cast<float>(1.0 / nranks);
  for (float& g : r.sum) g *= inv;
  r.opt->step(r.model->params(), r.sum);
  return loss;
}

}  // namespace

TrainOutcome train_rank(const TrainOptions& o, const std::string& plugin, Bootstrap& boot) {
  const int rank = boot.rank(), n = boot.nranks();
  StatsFile stats(rank), raw_stats(rank, true);
  PluginLib lib(plugin);
  PluginLib raw_lib(plugin, PluginLib::Load::kPrivateCopy);
  Run runs[2];
  runs[0].lib = &lib;
  runs[0].stats = &stats;
  runs[0].policy = o.policy_of(rank);
  runs[1].lib = &raw_lib;
  runs[1].stats = &raw_stats;
  runs[1].policy = o.raw_policy;

  // Rank 0 picks the communicators' ids, as NCCL derives commHash from the unique id.
  uint64_t base =
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (static_cast<uint64_t>(rank + 1) << 40);
  base = boot.allgather(base)[0];
  int dev = 0;
  for (Run& r : runs) {
    // The first init makes the instance load its policy and find its devices.
    ScopedEnv env("SQUEEZE_POLICY", r.policy);
    void* ctx = nullptr;
    nccl_net_comm_config cfg{-1};
    check_nccl(r.lib->net()->init(&ctx, base, &cfg, perf_logger, nullptr), "init");
    dev = r.lib->device("lo");
    ScopedEnv writes_to = r.stats->plugin_writes_here();
    if (r.lib->net()->finalize != nullptr) r.lib->net()->finalize(ctx);
  }
  const Teacher teacher(o.shape, o.teacher_hidden, o.seed);
  const Batch eval = teacher.draw(o.eval, derive_seed(o.seed, 7, 7));
  for (std::size_t i = 0; i < 2; ++i) {
    Run& r = runs[i];
    r.before = r.stats->read();
    CollNetSpec spec;
    spec.comm_id = base + 1 + i;
    spec.name = i == 0 ? "train-compressed" : "train-raw";
    spec.dev = dev;
    spec.channels = o.channels;
    spec.timeout_s = o.timeout_s;
    r.comm = std::make_unique<CollNetComm>(*r.lib, boot, spec);
    r.model.emplace(o.shape, o.seed);  // the same initial model in both runs, on every rank
    r.opt.emplace(o.shape.params(), o.lr, o.momentum);
    r.grad.resize(o.shape.params());
    r.sum.resize(o.shape.params());
    r.out.policy = r.policy;
  }

  for (int step = 0; step < o.steps; ++step) {
    const Batch b = teacher.draw(o.batch, batch_seed(o.seed, rank, step));
    double loss[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const int i = (step + k) % 2;
      loss[i] = step_once(runs[i], b, n);
    }
    const bool report = (step + 1) % o.report_every == 0 || step + 1 == o.steps;
    if (!report) continue;
    for (int i = 0; i < 2; ++i) {
      const std::vector<double> all = boot.allgather(loss[i]);
      double mean = 0;
      for (double l : all) mean += l / n;
      RunOutcome& out = runs[i].out;
      out.steps.push_back(step + 1);
      out.train_loss.push_back(mean);
      out.eval_loss.push_back(rank == 0 ? runs[i].model->loss(eval, nullptr) : 0.0);
    }
  }

  TrainOutcome result;
  for (int i = 0; i < 2; ++i) {
    Run& r = runs[i];
    const std::vector<float>& p = r.model->params();
    const uint64_t h = hash_bytes(p.data(), p.size() * sizeof(float));
    const std::vector<uint64_t> hashes = boot.allgather(h);
    for (uint64_t x : hashes) r.out.ranks_agree = r.out.ranks_agree && x == hashes[0];
    const std::vector<uint64_t> sums = boot.allgather(r.sums_hash);
    for (uint64_t x : sums) r.out.ranks_agree = r.out.ranks_agree && x == sums[0];
    {
      ScopedEnv writes_to = r.stats->plugin_writes_here();
      r.comm.reset();  // finalizes: the instance writes its statistics
    }
    const WireTotals d = wire_delta(r.before, r.stats->read());
    const std::vector<uint64_t> handed = boot.allgather(d.found ? d.handed() : uint64_t{0});
    const std::vector<uint64_t> wire = boot.allgather(d.found ? d.wire() : uint64_t{0});
    uint64_t in_total = 0, wire_total = 0;
    for (int q = 0; q < n; ++q) {
      in_total += handed[static_cast<std::size_t>(q)];
      wire_total += wire[static_cast<std::size_t>(q)];
    }
    r.out.ratio =
        wire_total > 0 ? static_cast<double>(in_total) / static_cast<double>(wire_total) : 0;
    r.out.allreduce_ms =
        r.allreduces > 0 ? r.allreduce_s * 1e3 / static_cast<double>(r.allreduces) : 0;
    if (rank == 0) (i == 0 ? result.compressed : result.raw) = r.out;
  }
  boot.barrier();  // nobody closes the bootstrap while others still read from it
  return result;
}

}  // namespace squeeze::perf
