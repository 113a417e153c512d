// squeeze-train-check: does a compressing policy still train? N forked ranks train the same
// two-layer MLP data-parallel, each step's gradient summed on the plugin's collective network
// (perf/train/trainer.h), under --policy and, side by side, under --raw-policy; the
// compressed run must end within --tolerance of the raw run's held-out loss, with every rank's
// summed gradients (every step) and parameters bit-identical in both runs, also when ranks run
// different policies (--rank-policy). See perf/train/train_options.cc for the options.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "perf/collective/bootstrap.h"
#include "perf/collective/stats_file.h"
#include "perf/common/plugin_log.h"
#include "perf/train/trainer.h"

namespace {

using namespace squeeze::perf;

constexpr int kFailed = 1, kError = 3;

int verdict(const TrainOptions& o, const TrainOutcome& t) {
  const RunOutcome &c = t.compressed, &r = t.raw;
  const double lc = c.eval_loss.back(), lr = r.eval_loss.back();
  const double excess = (lc - lr) / lr;
  const bool loss_ok = std::isfinite(lc) && excess <= o.tolerance;
  const bool ok = loss_ok && c.ranks_agree && r.ranks_agree;
  if (o.json) {
    for (const RunOutcome* run : {&r, &c}) {
      for (std::size_t i = 0; i < run->steps.size(); ++i)
        std::printf("%s\n", nlohmann::json({{"bench", "squeeze-train-check"},
                                            {"run", run == &c ? "compressed" : "raw"},
                                            {"policy", run->policy},
                                            {"step", run->steps[i]},
                                            {"train_loss", run->train_loss[i]},
                                            {"eval_loss", run->eval_loss[i]}})
                                .dump()
                                .c_str());
    }
    std::printf("%s\n", nlohmann::json({{"bench", "squeeze-train-check"},
                                        {"nranks", o.nranks},
                                        {"steps", o.steps},
                                        {"seed", o.seed},
                                        {"params", o.shape.params()},
                                        {"policy", o.policy},
                                        {"rank_policies", o.rank_policies},
                                        {"raw_eval_loss", lr},
                                        {"compressed_eval_loss", lc},
                                        {"excess", excess},
                                        {"tolerance", o.tolerance},
                                        {"compressed_ratio", c.ratio},
                                        {"raw_ratio", r.ratio},
                                        {"compressed_allreduce_ms", c.allreduce_ms},
                                        {"raw_allreduce_ms", r.allreduce_ms},
                                        {"ranks_agree", c.ranks_agree && r.ranks_agree},
                                        {"pass", ok}})
                            .dump()
                            .c_str());
  } else {
    std::printf("#  step  raw_train  comp_train   raw_eval  comp_eval\n");
    for (std::size_t i = 0; i < c.steps.size(); ++i)
      std::printf("%7d %10.4f %11.4f %10.4f %10.4f\n", c.steps[i], r.train_loss[i], c.train_loss[i],
                  r.eval_loss[i], c.eval_loss[i]);
    std::printf(
        "# wire ratio: compressed %.2f, raw %.2f; mean gradient all-reduce %.2f ms / %.2f ms\n",
        c.ratio, r.ratio, c.allreduce_ms, r.allreduce_ms);
    std::printf(
        "# ranks bit-identical (every step's summed gradient and the final parameters): "
        "compressed %s, raw %s\n",
        c.ranks_agree ? "yes" : "NO", r.ranks_agree ? "yes" : "NO");
    std::printf(
        "# final held-out loss after %d steps: raw %.4f, compressed %.4f (%+.2f%%, tolerance "
        "%.2f%%): %s\n",
        o.steps, lr, lc, 100 * excess, 100 * o.tolerance, ok ? "PASS" : "FAIL");
  }
  std::fflush(stdout);
  return ok ? 0 : kFailed;
}

int run_rank(const TrainOptions& o, int rank, const HostPort& where, Fd listener) {
  try {
    setenv("SQUEEZE_RANK", std::to_string(rank).c_str(), 1);
    set_log_tag("rank " + std::to_string(rank));
    Bootstrap boot(rank, o.nranks, where, std::move(listener), o.timeout_s);
    const std::string plugin = o.plugin.empty() ? std::string(SQUEEZE_PLUGIN_PATH) : o.plugin;
    const TrainOutcome t = train_rank(o, plugin, boot);
    return rank == 0 ? verdict(o, t) : 0;
  } catch (const std::exception& e) {
    log_line("squeeze-train-check: %s", e.what());
    return kError;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const TrainOptions o = parse_train_options(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> policies{o.policy, o.raw_policy};
  for (const auto& rp : o.rank_policies) policies.push_back(rp.second);
  for (const std::string& p : policies) {
    if (access(p.c_str(), R_OK) != 0) {
      std::fprintf(stderr, "squeeze-train-check: policy %s: %s\n", p.c_str(), std::strerror(errno));
      return 2;
    }
  }
  setenv("SQUEEZE_SOCKET_IFNAME", "lo", 1);
  if (!o.bypass) setenv("SQUEEZE_BYPASS", "off", 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(o.nranks).c_str(), 0);
  if (!o.json) {
    std::printf(
        "# squeeze-train-check: %d ranks, MLP %zu-%zu-%zu (%zu parameters: one %zu-byte gradient "
        "all-reduce per step), teacher %zu tanh units\n",
        o.nranks, o.shape.in, o.shape.hidden, o.shape.out, o.shape.params(),
        o.shape.params() * sizeof(float), o.teacher_hidden);
    std::printf(
        "#   batch %zu per rank, %d steps, SGD lr %g momentum %g, seed %llu, held-out %zu "
        "samples\n",
        o.batch, o.steps, o.lr, o.momentum, static_cast<unsigned long long>(o.seed), o.eval);
    std::printf(
        "#   gradient all-reduce on the collective network (CollNetChain proxy, %d channels)%s\n",
        o.channels, o.bypass ? "" : "; SQUEEZE_BYPASS=off (coding never pays on loopback)");
    std::printf("#   compressed: policy %s\n", o.policy.c_str());
    for (int r = 0; r < o.nranks; ++r)
      if (o.policy_of(r) != o.policy)
        std::printf("#     rank %d: policy %s\n", r, o.policy_of(r).c_str());
    std::printf("#   raw: policy %s (a private copy of the plugin)\n", o.raw_policy.c_str());
    std::fflush(stdout);
  }
  HostPort where{"127.0.0.1", 0};
  Fd listener;
  try {
    listener = listen_on(where, &where.port);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "squeeze-train-check: %s\n", e.what());
    return kError;
  }
  StatsDir stats_dir(0, o.nranks);
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int r = 1; r < o.nranks; ++r) {
    const pid_t pid = fork();
    if (pid < 0) {
      std::fprintf(stderr, "squeeze-train-check: fork failed: %s\n", std::strerror(errno));
      for (pid_t c : children) kill(c, SIGTERM);
      for (pid_t c : children) waitpid(c, nullptr, 0);
      return kError;
    }
    if (pid == 0) {
      listener.reset();
      _exit(run_rank(o, r, where, Fd()));
    }
    children.push_back(pid);
  }
  int rc = run_rank(o, 0, where, std::move(listener));
  for (pid_t c : children) {
    int st = 0;
    if (rc == kError) kill(c, SIGTERM);  // they may be waiting on rank 0
    if (waitpid(c, &st, 0) == c && !(WIFEXITED(st) && WEXITSTATUS(st) == 0) && rc == 0) rc = kError;
  }
  return rc;
}
