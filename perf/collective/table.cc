#include "perf/collective/table.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace squeeze::perf {

double busbw_factor(const std::string& collective, int nranks) {
  const double n = nranks;
  if (nranks < 2) return 0;
  return collective == "allreduce" ? 2.0 * (n - 1) / n : (n - 1) / n;
}

void print_header(const RunInfo& info) {
  std::printf("# squeeze-perf: %d ranks through %s\n", info.nranks, info.plugin.c_str());
  std::printf("#   policy %s, interface %s, dtype %s\n", info.policy.c_str(),
              info.ifname.empty() ? "(plugin default)" : info.ifname.c_str(), info.dtype.c_str());
  std::printf("#   profiler chain %s\n", info.chain.c_str());
  if (!info.baseline_policy.empty())
    std::printf("#   baseline: a private copy of the plugin under policy %s; iterations alternate between the two, "
                "speedup = baseline time / time\n",
                info.baseline_policy.c_str());
  if (info.gpu_copies)
    std::printf("#   copies gpu: all-to-all time leaves out the copies NCCL's GPU kernels make (user buffer <-> FIFO, "
                "own block)\n");
  std::printf("#   ratio = bytes handed to the plugin / bytes it put on the wire, from the plugin's own "
              "statistics (SQUEEZE_STATS), over the warm-up and timed iterations; \"-\" = not reported\n");
  std::printf("#   max_err = max |result - exact|, exact = the uncompressed ring's result; agree = all ranks' "
              "all-reduce outputs bit-identical\n");
  std::printf("#\n%-10s %12s %11s %9s %13s %10s %9s %9s %7s %10s %6s\n", "# coll", "size(B)", "count", "type", "data",
              "time(us)", "algbw", "busbw", "ratio", "max_err", "agree");
  std::printf("%-10s %12s %11s %9s %13s %10s %9s %9s %7s %10s %6s\n", "#", "", "", "", "", "", "(GB/s)", "(GB/s)", "", "",
              "");
}

void print_row(const Row& r) {
  char ratio[32] = "-";
  if (r.have_ratio) std::snprintf(ratio, sizeof ratio, "%.2f", r.ratio);
  const char* agree = r.agree < 0 ? "n/a" : r.agree ? "yes" : "NO";
  std::printf("%-10s %12zu %11zu %9s %13s %10.1f %9.3f %9.3f %7s %10.3g %6s\n", r.collective.c_str(), r.bytes, r.count,
              r.type.c_str(), r.data.c_str(), r.time_us, r.algbw, r.busbw, ratio, r.max_err, agree);
  std::fflush(stdout);
}

void print_baseline(const Row& main, const Row& baseline) {
  char ratio[32] = "-";
  if (baseline.have_ratio) std::snprintf(ratio, sizeof ratio, "%.2f", baseline.ratio);
  std::printf("#   baseline: time %.1f us, algbw %.3f GB/s, ratio %s, max_err %.3g -> speedup %.3f\n", baseline.time_us,
              baseline.algbw, ratio, baseline.max_err, main.speedup);
  std::fflush(stdout);
}

void print_json(const Row& r, const RunInfo& info) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = {{"bench", "squeeze-perf"},
                      {"collective", r.collective},
                      {"nranks", r.nranks},
                      {"size", r.bytes},
                      {"count", r.count},
                      {"type", r.type},
                      {"data", r.data},
                      {"iters", r.iters},
                      {"time_us", num(r.time_us)},
                      {"algbw_GBps", num(r.algbw)},
                      {"busbw_GBps", num(r.busbw)},
                      {"ratio", r.have_ratio ? num(r.ratio) : nlohmann::json(nullptr)},
                      {"ratio_source", r.have_ratio ? "plugin-stats" : "unavailable"},
                      {"bytes_handed", r.handed},
                      {"bytes_wire", r.wire},
                      {"max_abs_err", num(r.max_err)},
                      {"differing", r.differing},
                      {"bit_exact", r.differing == 0},
                      {"ranks_agree", r.agree < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.agree == 1)},
                      {"policy", r.arm == "baseline" ? info.baseline_policy : info.policy},
                      {"ifname", info.ifname},
                      {"chain", info.chain_active},
                      {"copies", r.collective == "alltoall" && info.gpu_copies ? "gpu" : "cpu"}};
  if (!info.label.empty()) j["label"] = info.label;
  if (!r.arm.empty()) j["arm"] = r.arm;
  if (r.speedup > 0) j["speedup_vs_baseline"] = num(r.speedup);
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

}  // namespace squeeze::perf
