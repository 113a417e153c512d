// The collective network (ncclCollNetPlugin_v8..v12) as NCCL 2.28.9's CollNet
// proxy drives it: 4 ranks (one per node) in separate processes over loopback,
// all-reduces cut into calls as CollNetChain cuts them
// (perf/collective/chain_proxy.h). What users rely on: every rank ends with the
// same bits under every codec; raw and lossless are exact; lossy codecs stay
// within the policy's bound; the wire ratio; integer sums; refused reductions;
// a dead peer is an error within seconds; every exported version works through
// its adapter.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compress/half.h"
#include "tests/collnet/collnet_api.h"
#include "tests/collnet/collnet_run.h"

namespace {

using namespace squeeze::testing;

constexpr int kNodes = 4;
// 1 MiB of float32: 8 whole CollNetChain steps of 2 channels x 64 KiB (no stale
// tail).
constexpr uint64_t kWhole = 1 << 18;
// Not a whole number of steps: the last call's tail is stale slot contents, as
// in NCCL.
constexpr uint64_t kRagged = 100003;

std::string rule(const std::string& action) {
  return R"({"version": 1, "rules": [{"name": "collnet", "match": {"collective": "allreduce", "algo": "collnet"}, )" +
         action + R"(}], "default": {"codec": "raw"}})";
}
const std::string kRaw = R"({"version": 1, "rules": [], "default": {"codec": "raw"}})";
const std::string kLossless = rule(R"("codec": "lossless")");

// Every rank's output of every all-reduce of the last iteration, in the shared
// area.
struct Outputs {
  std::vector<uint64_t> offsets;  // of each all-reduce, in bytes
  std::size_t bytes = 0;
  Outputs(const std::vector<uint64_t>& counts, std::size_t elem) {
    for (uint64_t c : counts) {
      offsets.push_back(bytes);
      bytes += c * elem;
    }
  }
};

RunSpec spec_for(const std::string& policy, const std::vector<uint64_t>& counts,
                 int dtype = kFloat32) {
  RunSpec s;
  s.nodes = kNodes;
  s.policy = policy;
  s.counts = counts;
  s.dtype = dtype;
  return s;
}

// Runs the job and keeps the last iteration's outputs of every rank.
RunResult run_and_keep(RunSpec& s, RankGroup& g, const Outputs& o) {
  s.on_output = [&o, last = s.iterations - 1](RankGroup& grp, int rank, int it, int coll,
                                              const uint8_t* out, std::size_t bytes) {
    if (it == last)
      std::memcpy(grp.out(rank) + o.offsets[static_cast<std::size_t>(coll)], out, bytes);
  };
  return run_collnet(s, g);
}

void expect_ranks_ok(const RunResult& r) {
  ASSERT_FALSE(r.exit_codes.empty());
  for (std::size_t i = 0; i < r.exit_codes.size(); ++i)
    EXPECT_EQ(r.exit_codes[i], 0) << "rank " << i << ": " << rank_exit_reason(r.exit_codes[i])
                                  << " (status " << r.numbers[i][0] << ")";
}

void expect_identical(RankGroup& g, std::size_t bytes) {
  for (int r = 1; r < g.nranks(); ++r)
    EXPECT_EQ(std::memcmp(g.out(0), g.out(r), bytes), 0) << "rank " << r << " differs from rank 0";
}

float widen(const uint8_t* p, int dtype) {
  if (dtype == kFloat32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dtype == kBfloat16 ? squeeze::compress::bf16_to_f32(h) : squeeze::compress::f16_to_f32(h);
}

// The exact sum (double, rank order) of every rank's input.
std::vector<double> exact_sum(int nodes, int coll, uint64_t count, int dtype, uint64_t seed = 1) {
  std::vector<double> s(count, 0.0);
  const std::size_t e = elem_size(dtype);
  for (int r = 0; r < nodes; ++r) {
    const std::vector<uint8_t> in = make_input(r, coll, count, dtype, seed);
    for (uint64_t i = 0; i < count; ++i) s[i] += widen(in.data() + i * e, dtype);
  }
  return s;
}

// What the plugin computes with no coding: the double sum rounded once into the
// dtype.
std::vector<uint8_t> rounded(const std::vector<double>& s, int dtype) {
  const std::size_t e = elem_size(dtype);
  std::vector<uint8_t> out(s.size() * e);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto f = static_cast<float>(s[i]);
    if (dtype == kFloat32) {
      std::memcpy(out.data() + i * 4, &f, 4);
    } else {
      const uint16_t h =
          dtype == kBfloat16 ? squeeze::compress::f32_to_bf16(f) : squeeze::compress::f32_to_f16(f);
      std::memcpy(out.data() + i * 2, &h, 2);
    }
  }
  return out;
}

double range_of(const std::vector<uint8_t>& v, int dtype) {
  const std::size_t e = elem_size(dtype);
  float lo = INFINITY, hi = -INFINITY;
  for (std::size_t i = 0; i < v.size() / e; ++i) {
    const float x = widen(v.data() + i * e, dtype);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  return static_cast<double>(hi) - static_cast<double>(lo);
}

// The wire ratio of the collective network from every rank's statistics file.
double collnet_wire_ratio(const std::string& dir, int nodes) {
  double in = 0, wire = 0;
  for (int r = 0; r < nodes; ++r) {
    std::ifstream f(dir + "/stats.rank" + std::to_string(r) + ".json");
    if (!f) {
      ADD_FAILURE() << "no statistics file for rank " << r << " in " << dir;
      return 0;
    }
    const nlohmann::json doc = nlohmann::json::parse(f);
    if (!doc.contains("routes") || !doc["routes"].contains("collnet")) {
      ADD_FAILURE() << "rank " << r << ": no collnet route in " << doc.dump();
      return 0;
    }
    const auto& c = doc["routes"]["collnet"];
    in += c["bytes_in"].get<double>() + c["raw_bytes"].get<double>();
    wire += c["bytes_out"].get<double>() + c["raw_bytes"].get<double>();
  }
  return wire > 0 ? in / wire : 0;
}

std::string temp_dir() {
  char tmpl[] = "/tmp/squeeze_collnet_stats_XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d != nullptr ? d : "/tmp";
}

// ---- the exported tables
// --------------------------------------------------------------------

TEST(CollNetTables, EveryVersionIsSqueezeWithAllReduceOnly) {
  for (int v : {8, 9, 10, 11, 12}) {
    CollNetApi api(v, true);
    EXPECT_STREQ(api.name(), "Squeeze") << "v" << v;
    // NCCL 2.28 routes AllGather/ReduceScatter to CollNetDirect only through
    // non-null entries.
    EXPECT_FALSE(api.has_iallgather()) << "v" << v;
    EXPECT_FALSE(api.has_ireducescatter()) << "v" << v;
  }
}

TEST(CollNetTables, DevicesAreTheNetDevicesSoNcclMarksThemCollectiveCapable) {
  CollNetApi api(12, true);
  ASSERT_EQ(api.init(0x1234), 0);
  int n = 0;
  ASSERT_EQ(api.devices(&n), 0);
  ASSERT_GT(n, 0);
  for (int d = 0; d < n; ++d) {
    CollNetProps c, net;
    ASSERT_EQ(api.props(d, &c), 0);
    ASSERT_EQ(api.net_props(d, &net), 0);
    EXPECT_EQ(c.name, net.name) << "device " << d;
    EXPECT_EQ(c.pci_path, net.pci_path) << "device " << d;
    EXPECT_EQ(c.ptr_support, net.ptr_support)
        << "device " << d << ": NCCL takes the first table's GPUDirect flag";
    EXPECT_GT(c.max_coll, 0u);
    EXPECT_LE(c.max_coll, std::size_t{1} << 40);
  }
  EXPECT_EQ(api.finalize(), 0);
}

TEST(CollNetTables, ReduceSupportSaysYesOnlyToWhatItImplements) {
  CollNetApi api(11, true);
  auto yes = [&api](int dtype, int op) {
    int s = -1;
    EXPECT_EQ(api.reduce_support(dtype, op, &s), 0);
    return s == 1;
  };
  for (int d : {kFloat32, kBfloat16, kFloat16})
    for (int op : {kSum, kMin, kMax}) EXPECT_TRUE(yes(d, op)) << "dtype " << d << " op " << op;
  for (int d : {0, 1, 2, 3, 4, 5}) {
    EXPECT_TRUE(yes(d, kSum)) << "integer dtype " << d;
    EXPECT_FALSE(yes(d, kMin)) << "integer dtype " << d;
    EXPECT_FALSE(yes(d, kProd)) << "integer dtype " << d;
  }
  for (int d : {kFloat32, kBfloat16, kFloat16}) EXPECT_FALSE(yes(d, kProd));
  for (int d : {kFloat64, 10, 11}) EXPECT_FALSE(yes(d, kSum)) << "dtype " << d;
  EXPECT_FALSE(yes(kFloat32, kAvg));  // NCCL sends Avg as Sum; an Avg itself is not ours
  EXPECT_FALSE(yes(kFloat32, 77));
  EXPECT_FALSE(yes(-1, kSum));
  EXPECT_FALSE(yes(12, kSum));
}

// One node: the mesh is just this rank. An unsupported reduction is refused at
// iallreduce with an error, not run wrongly.
TEST(CollNetTables, UnsupportedReductionIsRefusedAtIallreduce) {
  CollNetApi api(11, true);
  ASSERT_EQ(api.init(0x4321), 0);
  alignas(8) uint8_t handle[128] = {};
  void* l = nullptr;
  ASSERT_EQ(api.listen(0, handle, &l), 0);
  void* handles[1] = {handle};
  void* comm = nullptr;
  ASSERT_EQ(api.connect(handles, 1, 0, l, &comm), 0);
  ASSERT_NE(comm, nullptr);
  std::vector<float> in(64, 1.0f), out(64, 0.0f);
  void* req = nullptr;
  EXPECT_NE(api.iallreduce(comm, in.data(), out.data(), in.size(), kFloat32, kProd, nullptr,
                           nullptr, &req),
            0);
  EXPECT_EQ(req, nullptr);
  EXPECT_NE(api.iallreduce(comm, in.data(), out.data(), in.size(), kFloat64, kSum, nullptr, nullptr,
                           &req),
            0);
  // A supported one works on a single node (a copy).
  ASSERT_EQ(api.iallreduce(comm, in.data(), out.data(), in.size(), kFloat32, kSum, nullptr, nullptr,
                           &req),
            0);
  ASSERT_NE(req, nullptr);
  int done = 0, size = 0;
  while (!done) ASSERT_EQ(api.test(req, &done, &size), 0);
  EXPECT_EQ(size, 64 * 4);
  EXPECT_EQ(out, in);
  // Host memory never needs a flush: no request, which NCCL takes as done.
  void* flush = reinterpret_cast<void*>(1);
  EXPECT_EQ(api.iflush(comm, out.data(), 256, nullptr, &flush), 0);
  EXPECT_EQ(flush, nullptr);
  // GPU memory is refused at regMr with an error (the CPU path cannot read it).
  void* mh = nullptr;
  EXPECT_NE(api.reg_mr(comm, out.data(), 256, squeeze::nccl::kPtrCuda, &mh), 0);
  EXPECT_EQ(api.close_coll(comm), 0);
  EXPECT_EQ(api.close_listen(l), 0);
  EXPECT_EQ(api.finalize(), 0);
}

// ---- exact paths
// ----------------------------------------------------------------------------

class ExactPolicies : public ::testing::TestWithParam<const char*> {};

TEST_P(ExactPolicies, SumIsExactAndIdenticalOnEveryRank) {
  const std::string policy = std::string(GetParam()) == "raw" ? kRaw : kLossless;
  const std::vector<uint64_t> counts = {kWhole, kRagged, 7};
  Outputs o(counts, 4);
  RankGroup g(kNodes, o.bytes);
  RunSpec s = spec_for(policy, counts);
  const RunResult r = run_and_keep(s, g, o);
  expect_ranks_ok(r);
  expect_identical(g, o.bytes);
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const std::vector<uint8_t> want =
        rounded(exact_sum(kNodes, static_cast<int>(k), counts[k], kFloat32), kFloat32);
    EXPECT_EQ(std::memcmp(g.out(0) + o.offsets[k], want.data(), want.size()), 0)
        << "all-reduce " << k;
  }
}

INSTANTIATE_TEST_SUITE_P(CollNet, ExactPolicies, ::testing::Values("raw", "lossless"));

TEST(CollNet, IntegerSumIsExactWhateverThePolicySays) {
  // A lossy rule on integers falls back to lossless; sums wrap as NCCL's do.
  const std::string policy = rule(
      R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01},
                                     "fallback": "lossless")");
  for (int dtype : {kInt32, kUint8}) {
    const std::vector<uint64_t> counts = {kWhole, kRagged};
    const std::size_t e = elem_size(dtype);
    Outputs o(counts, e);
    RankGroup g(kNodes, o.bytes);
    RunSpec s = spec_for(policy, counts, dtype);
    const RunResult r = run_and_keep(s, g, o);
    expect_ranks_ok(r);
    expect_identical(g, o.bytes);
    for (std::size_t k = 0; k < counts.size(); ++k) {
      std::vector<uint8_t> want(counts[k] * e, 0);
      for (int rank = 0; rank < kNodes; ++rank) {
        const std::vector<uint8_t> in = make_input(rank, static_cast<int>(k), counts[k], dtype);
        for (uint64_t i = 0; i < counts[k]; ++i) {
          if (dtype == kInt32) {
            uint32_t a, b;
            std::memcpy(&a, want.data() + i * 4, 4);
            std::memcpy(&b, in.data() + i * 4, 4);
            a += b;
            std::memcpy(want.data() + i * 4, &a, 4);
          } else {
            want[i] = static_cast<uint8_t>(want[i] + in[i]);
          }
        }
      }
      EXPECT_EQ(std::memcmp(g.out(0) + o.offsets[k], want.data(), want.size()), 0)
          << "dtype " << dtype << " all-reduce " << k;
    }
  }
}

// ---- every codec: identical bits, within the bound
// -------------------------------------------

struct CodecCase {
  const char* name;
  std::string action;
  int dtype;
  int op;
  double abs_bound;  // > 0: every element within this of the exact result
  double rel_bound;  // > 0: within this x the largest value range of the inputs
                     // and the result
};

class Codecs : public ::testing::TestWithParam<CodecCase> {};

TEST_P(Codecs, EveryRankEndsWithTheSameBitsWithinTheBound) {
  const CodecCase& c = GetParam();
  const std::vector<uint64_t> counts = {kWhole, kRagged};
  const std::size_t e = elem_size(c.dtype);
  Outputs o(counts, e);
  RankGroup g(kNodes, o.bytes);
  RunSpec s = spec_for(rule(c.action), counts, c.dtype);
  s.op = c.op;
  s.iterations = 2;  // stateful codecs: the second pass reuses tau (and feeds back)
  const RunResult r = run_and_keep(s, g, o);
  expect_ranks_ok(r);
  expect_identical(g, o.bytes);
  if (c.abs_bound <= 0 && c.rel_bound <= 0) return;
  // The bound is checked on the whole steps (the ragged one's tail mixes in
  // stale data, which widens the value range a relative bound is taken of).
  const uint64_t count = counts[0];
  std::vector<double> exact(count, c.op == kSum ? 0.0 : (c.op == kMin ? INFINITY : -INFINITY));
  double range = 0;
  for (int rank = 0; rank < kNodes; ++rank) {
    const std::vector<uint8_t> in = make_input(rank, 0, count, c.dtype);
    range = std::max(range, range_of(in, c.dtype));
    for (uint64_t i = 0; i < count; ++i) {
      const double x = widen(in.data() + i * e, c.dtype);
      exact[i] = c.op == kSum   ? exact[i] + x
                 : c.op == kMin ? std::min(exact[i], x)
                                : std::max(exact[i], x);
    }
  }
  range = std::max(range, range_of(rounded(exact, c.dtype), c.dtype));
  const double bound = c.abs_bound > 0 ? c.abs_bound : c.rel_bound * range;
  double worst = 0;
  uint64_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const double got = widen(g.out(0) + o.offsets[0] + i * e, c.dtype);
    // Rounding the exact result into the element type is not the codec's doing.
    const double ulp = c.dtype == kFloat32
                           ? std::ldexp(std::fabs(exact[i]), -23)
                           : std::ldexp(std::fabs(exact[i]), c.dtype == kBfloat16 ? -7 : -10);
    const double over = std::fabs(got - exact[i]) - ulp;
    if (over > worst) {
      worst = over;
      at = i;
    }
  }
  EXPECT_LE(worst, bound * (1 + 1e-9))
      << c.name << ": element " << at << " is off by " << worst << " > " << bound;
}

INSTANTIATE_TEST_SUITE_P(
    CollNet, Codecs,
    ::testing::Values(
        CodecCase{"quantize_abs",
                  R"("codec": "quantize", "error_bound": {"mode": "abs", "value": 2e-5})", kFloat32,
                  kSum, 2e-5, 0},
        CodecCase{"quantize_rel",
                  R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-3})", kFloat32,
                  kSum, 0, 1e-3},
        CodecCase{"quantize_rel_row",
                  R"("codec": "quantize", "error_bound": {"mode": "rel_row", "value": 1e-3},
                  "row_length": 64)",
                  kFloat32, kSum, 0, 1e-3},
        CodecCase{"quantize_bf16",
                  R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-2})",
                  kBfloat16, kSum, 0, 1e-2},
        CodecCase{"quantize_fp16_max",
                  R"("codec": "quantize", "error_bound": {"mode": "abs", "value": 1e-4})", kFloat16,
                  kMax, 1e-4, 0},
        CodecCase{"quantize_min",
                  R"("codec": "quantize", "error_bound": {"mode": "abs", "value": 1e-5})", kFloat32,
                  kMin, 1e-5, 0},
        CodecCase{"cast_bf16", R"("codec": "cast", "to": "bfloat16")", kFloat32, kSum, 0, 0},
        CodecCase{"threshold", R"("codec": "threshold", "keep": 0.01, "refresh_every": 4)",
                  kFloat32, kSum, 0, 0},
        CodecCase{
            "threshold_feedback",
            R"("codec": "threshold", "keep": 0.01, "refresh_every": 4, "error_feedback": true)",
            kFloat32, kSum, 0, 0},
        CodecCase{"threshold_bf16_values",
                  R"("codec": "threshold", "keep": 0.05, "value_dtype": "bfloat16")", kFloat32,
                  kSum, 0, 0},
        // Dropping values cannot serve a max: the rule's fallback (lossless)
        // applies, exactly.
        CodecCase{"threshold_on_max_falls_back",
                  R"("codec": "threshold", "keep": 0.01, "fallback": "lossless")", kFloat32, kMax,
                  1e-30, 0},
        CodecCase{"lossless_bf16", R"("codec": "lossless")", kBfloat16, kSum, 1e-30, 0}),
    [](const ::testing::TestParamInfo<CodecCase>& i) { return std::string(i.param.name); });

// ---- wire ratios from the plugin's statistics
// -------------------------------------------------

// Training steps: the same layers, new gradients every step.
double measured_ratio(const std::string& action, int iterations, uint64_t count) {
  const std::string dir = temp_dir();
  const std::vector<uint64_t> counts = {count};
  RankGroup g(kNodes, 0);
  RunSpec s = spec_for(rule(action), counts);
  s.iterations = iterations;
  s.same_input_every_iteration = false;
  s.stats_dir = dir;
  const RunResult r = run_collnet(s, g);
  expect_ranks_ok(r);
  const double ratio = collnet_wire_ratio(dir, kNodes);
  if (getenv("SQUEEZE_TEST_KEEP_STATS") != nullptr)
    std::printf("statistics kept in %s\n", dir.c_str());
  else
    std::filesystem::remove_all(dir);
  return ratio;
}

// config/dp-allreduce.json's threshold rule with float32 values: keep 1%, tau
// refreshed every 1000 messages of a stream (and when the kept count drifts),
// error feedback.
TEST(CollNetRatio, ThresholdKeep1PercentIsAtLeast20x) {
  const double ratio = measured_ratio(
      R"("codec": "threshold", "keep": 0.01, "refresh_every": 1000, "error_feedback": true)", 16,
      1 << 19);
  std::printf(
      "collnet wire ratio, threshold keep 1%% + error feedback, 4 "
      "nodes, 16 steps of 2 MiB float32: %.1fx\n",
      ratio);
  EXPECT_GE(ratio, 20.0) << "the issue's floor; its goal is 40x";
}

// The issue asks for 5x. With a bound that holds for every element, 4 nodes
// split rel 1e-3 into 1e-3/6 per contribution and 1e-3/2 for the result
// (plugin/policy/plan.h), each relative to the range of a node's input to the
// whole call (the message NCCL hands the plugin, as on the ring), and the codes
// are Rice-coded where the rule says rice_codes (CPU only, compress/FORMAT.md).
// Taken relative to each piece's own range, even an ideal entropy coder stays
// near 4.6x on these gradients (Student-t(3) noise: the range is set by rare
// outliers); 3.70x bit-packed. Rice coding costs speed (config/README.md).
TEST(CollNetRatio, QuantizeRel1em3) {
  const double packed = measured_ratio(
      R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-3})", 2, 1 << 20);
  std::printf("collnet wire ratio, quantize rel 1e-3, 4 nodes, 4 MiB float32: %.2fx\n", packed);
  EXPECT_GE(packed, 4.0) << "bit-packed codes, relative to the call's range";
  const double ratio = measured_ratio(
      R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-3}, "rice_codes": true)",
      2, 1 << 20);
  std::printf("collnet wire ratio, quantize rel 1e-3 + rice_codes, 4 nodes, 4 MiB float32: %.2fx\n",
              ratio);
  EXPECT_GE(ratio, 5.0) << "the issue's floor";
  const double loose = measured_ratio(
      R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-2})", 2, 1 << 20);
  std::printf("collnet wire ratio, quantize rel 1e-2, 4 nodes, 4 MiB float32: %.2fx\n", loose);
  EXPECT_GE(loose, 5.0);
}

// ---- error feedback
// ---------------------------------------------------------------------------

// The same gradients all-reduced K times: with error feedback the values a step
// drops come back later, so the running sum of the results tracks K x the exact
// sum; without it the dropped mass is gone for good.
double cumulative_error(bool feedback, bool profiler) {
  constexpr int kIterations = 64;
  constexpr uint64_t kCount = 1 << 15;  // one call per all-reduce
  const std::vector<uint64_t> counts = {kCount};
  RankGroup g(kNodes, kCount * sizeof(double));
  RunSpec s =
      spec_for(rule(std::string(R"("codec": "threshold", "keep": 0.02, "refresh_every": 4)") +
                    (feedback ? R"(, "error_feedback": true)" : "")),
               counts);
  s.iterations = kIterations;
  s.profiler = profiler;
  s.on_output = [](RankGroup& grp, int rank, int, int, const uint8_t* out, std::size_t bytes) {
    auto* acc = reinterpret_cast<double*>(grp.out(rank));
    for (std::size_t i = 0; i < bytes / 4; ++i) {
      float f;
      std::memcpy(&f, out + i * 4, 4);
      acc[i] += f;
    }
  };
  const RunResult r = run_collnet(s, g);
  expect_ranks_ok(r);
  const std::vector<double> exact = exact_sum(kNodes, 0, kCount, kFloat32);
  const auto* acc = reinterpret_cast<const double*>(g.out(0));
  double err = 0, mass = 0;
  for (uint64_t i = 0; i < kCount; ++i) {
    err += std::fabs(acc[i] - kIterations * exact[i]);
    mass += std::fabs(kIterations * exact[i]);
  }
  return err / mass;
}

TEST(CollNetFeedback, DroppedMassIsDelayedNotLost) {
  const double with = cumulative_error(true, true);
  const double without = cumulative_error(false, true);
  std::printf(
      "cumulative relative error after 64 all-reduces, threshold keep "
      "2%%: %.4f with error feedback, %.4f "
      "without\n",
      with, without);
  EXPECT_LT(with, 0.5 * without);
}

TEST(CollNetFeedback, WhereTheCallsPlaceIsUnknownTheRuleFallsBackInsteadOfDropping) {
  // Without the profiler's Coll events nothing says which tensor a call carries (under NCCL
  // 2.28.9 that is always so): the plugin must not feed one piece's residual into another,
  // nor drop values for good where the rule asked for feedback. So the pieces go by the
  // rule's fallback (raw here), and the results are the exact sums up to float rounding,
  // while a rule without feedback still drops.
  const double unknown = cumulative_error(true, false);
  const double without = cumulative_error(false, false);
  std::printf("cumulative relative error, place unknown: %.2e asking for feedback, %.4f not\n",
              unknown, without);
  EXPECT_LT(unknown, 1e-5);
  EXPECT_GT(without, 0.05);
}

// ---- a dead peer
// ------------------------------------------------------------------------------

TEST(CollNet, KilledPeerIsAnErrorWithinSeconds) {
  const std::vector<uint64_t> counts = {kWhole, kWhole};
  RankGroup g(kNodes, 0);
  RunSpec s = spec_for(
      rule(R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-3})"), counts);
  s.kill_rank = 2;
  s.kill_at = 1;
  s.timeout_s = 60;
  const RunResult r = run_collnet(s, g);
  ASSERT_EQ(r.exit_codes.size(), static_cast<std::size_t>(kNodes));
  for (int rank = 0; rank < kNodes; ++rank)
    std::printf("rank %d: exit %d (%s), status %g after %.3f s\n", rank, r.exit_codes[rank],
                rank_exit_reason(r.exit_codes[rank]), r.numbers[rank][0], r.numbers[rank][1]);
  EXPECT_EQ(r.exit_codes[2], 128 + SIGKILL);
  for (int rank : {0, 1, 3}) {
    EXPECT_EQ(r.exit_codes[static_cast<std::size_t>(rank)], 15)
        << "rank " << rank << ": " << rank_exit_reason(r.exit_codes[rank]);
    const double status = r.numbers[static_cast<std::size_t>(rank)][0];
    const double seconds = r.numbers[static_cast<std::size_t>(rank)][1];
    EXPECT_GT(status, 0) << "rank " << rank
                         << ": the plugin's error, not the harness's timeout (-1)";
    EXPECT_LT(seconds, 10.0) << "rank " << rank;
  }
}

// ---- every exported version
// ---------------------------------------------------------------------

class Versions : public ::testing::TestWithParam<int> {};

TEST_P(Versions, AllReduceThroughTheAdapter) {
  for (const std::string& policy :
       {kLossless, rule(R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 1e-3})")}) {
    const std::vector<uint64_t> counts = {kRagged};
    Outputs o(counts, 4);
    RankGroup g(3, o.bytes);
    RunSpec s = spec_for(policy, counts);
    s.nodes = 3;
    s.version = GetParam();
    const RunResult r = run_and_keep(s, g, o);
    expect_ranks_ok(r);
    expect_identical(g, o.bytes);
    if (policy == kLossless) {
      const std::vector<uint8_t> want = rounded(exact_sum(3, 0, kRagged, kFloat32), kFloat32);
      EXPECT_EQ(std::memcmp(g.out(0), want.data(), want.size()), 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(CollNet, Versions, ::testing::Values(8, 9, 10, 11, 12),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string("v").append(std::to_string(i.param));
                         });

}  // namespace
