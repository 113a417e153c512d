#include "perf/collective/table.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "perf/common/row_fields.h"

namespace squeeze::perf {

void print_header(const RunInfo& info) {
  std::printf("# squeeze-perf: %d ranks through %s\n", info.nranks, info.plugin.c_str());
  std::printf("#   policy %s, interface %s, dtype %s\n", info.policy.c_str(),
              info.ifname.empty() ? "(plugin default)" : info.ifname.c_str(), info.dtype.c_str());
  std::printf("#   profiler chain %s\n", info.chain.c_str());
  if (!info.baseline_policy.empty())
    std::printf(
        "#   baseline: a private copy of the plugin under policy %s; iterations alternate between "
        "the two, "
        "speedup = baseline time / time\n",
        info.baseline_policy.c_str());
  if (info.route == "collnet" || info.baseline_route == "collnet")
    std::printf(
        "#   all-reduce route %s%s%s: collnet = the plugin's collective network "
        "(ncclCollNetPlugin_v11) as NCCL 2.28's CollNetChain proxy drives it, one rank per node, "
        "%d channels; ring = NCCL's ring over the net table\n",
        info.route.c_str(), info.baseline_policy.empty() ? "" : ", baseline's ",
        info.baseline_policy.empty() ? "" : info.baseline_route.c_str(), info.collnet_channels);
  if (info.gpu_copies)
    std::printf(
        "#   copies gpu: all-to-all time leaves out the copies NCCL's GPU kernels make (user "
        "buffer <-> FIFO, "
        "own block)\n");
  std::printf(
      "#   time = mean over iterations of the slowest rank's time; busbw = algbw * 2(n-1)/n "
      "(all-reduce), "
      "(n-1)/n (all-to-all), as nccl-tests\n");
  std::printf(
      "#   #wrong = elements beyond the policy's stated bound, over ranks and iterations "
      "(bit-exact where "
      "nothing lossy applies; N/A = no bound stated)\n");
  std::printf(
      "#   ratio = bytes handed to the plugin / bytes it put on the wire, from the plugin's own "
      "statistics (SQUEEZE_STATS), over the warm-up and timed iterations; \"-\" = not reported\n");
  std::printf(
      "#   max_err = max |result - exact|, exact = the uncompressed result on the row's route; "
      "agree = all ranks' all-reduce outputs bit-identical (\"no\" where the policy does not keep "
      "them so)\n");
  std::fflush(stdout);
}

void print_baseline(const Row& main, const Row& baseline) {
  char ratio[32] = "-";
  if (baseline.have_ratio) std::snprintf(ratio, sizeof ratio, "%.2f", baseline.ratio);
  std::printf(
      "#   baseline (%s): time %.1f us, algbw %.3f GB/s, ratio %s, max_err %.3g -> speedup %.3f; "
      "cpu per rank %.1f us, baseline %.1f us\n",
      baseline.route.c_str(), baseline.time_us, baseline.algbw, ratio, baseline.max_err,
      main.speedup, main.cpu_us, baseline.cpu_us);
  std::fflush(stdout);
}

void print_json(const Row& r, const RunInfo& info) {
  namespace k = row_key;
  nlohmann::json j = {{k::kBench, "squeeze-perf"},
                      {"cpu_us", json_number(r.cpu_us)},
                      {"ratio_source", r.have_ratio ? "plugin-stats" : "unavailable"},
                      {"differing", r.differing},
                      {"bit_exact", r.differing == 0},
                      {k::kPolicy, r.arm == "baseline" ? info.baseline_policy : info.policy},
                      {"ifname", info.ifname},
                      {"chain", info.chain_active},
                      {"copies", r.collective == "alltoall" && info.gpu_copies ? "gpu" : "cpu"}};
  put_row_fields(r, j);
  if (!info.label.empty()) j[k::kLabel] = info.label;
  if (!r.arm.empty()) j["arm"] = r.arm;
  if (r.speedup > 0) j["speedup_vs_baseline"] = json_number(r.speedup);
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

}  // namespace squeeze::perf
