// squeeze-nccl-perf's host-side logic, which decides what a GPU run reports: the bound each
// policy states, the checks that count #wrong against the exact result, the size list, the
// sweep's modes, the JSON rows the sweep summary reads back, and the run-directory files the
// ranks meet through. No GPU needed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compress/half.h"
#include "perf/collective/data.h"
#include "perf/nccl/expected.h"
#include "perf/nccl/options.h"
#include "perf/nccl/paths.h"
#include "perf/nccl/report.h"
#include "perf/nccl/run_files.h"
#include "plugin/policy/policy_load.h"

namespace squeeze::perf::nccl {
namespace {

using compress::Dtype;

std::shared_ptr<const policy::Policy> load(const std::string& rel) {
  std::string error;
  auto p = policy::load_policy((std::string(SQUEEZE_SOURCE_DIR) + "/" + rel).c_str(), &error);
  EXPECT_TRUE(p) << error;
  return p;
}

std::vector<uint8_t> f32(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<float> ramp(std::size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = offset + scale * std::sin(static_cast<float>(i) * 0.37f);
  return v;
}

TEST(Bound, NoPolicyAndRawAndLosslessAreExact) {
  EXPECT_EQ(bound_for(nullptr, Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind, Bound::Kind::kExact);
  auto off = load("config/off.json");
  EXPECT_EQ(bound_for(off.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 20, 2).kind, Bound::Kind::kExact);
  auto lossless = load("config/lossless.json");
  EXPECT_EQ(bound_for(lossless.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind, Bound::Kind::kExact);
}

TEST(Bound, QuantizeStatesItsRelativeBoundWithTheScheduleStart) {
  auto q = load("perf/nccl/policies/quantize.json");
  Bound b = bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kRel);
  EXPECT_DOUBLE_EQ(b.value, 0.01);
  b = bound_for(q.get(), Coll::kAllReduce, Dtype::kBfloat16, 1 << 18, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kRel);
  EXPECT_DOUBLE_EQ(b.value, 0.001);
  EXPECT_TRUE(b.bitwise);
  // Below the rule's 64 KiB the call goes raw.
  EXPECT_EQ(bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1000, 2).kind, Bound::Kind::kExact);
  // dlrm-alltoall.json starts its schedule at 2x the bound.
  auto dlrm = load("config/dlrm-alltoall.json");
  b = bound_for(dlrm.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kRel);
  EXPECT_DOUBLE_EQ(b.value, 0.02);
}

TEST(Bound, ThresholdStatesNoneAndCastNamesItsType) {
  auto t = load("perf/nccl/policies/threshold.json");
  EXPECT_EQ(bound_for(t.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind, Bound::Kind::kNone);
  EXPECT_EQ(bound_for(t.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 20, 2).kind, Bound::Kind::kExact);
  auto c = load("perf/nccl/policies/cast.json");
  Bound b = bound_for(c.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kCast);
  EXPECT_EQ(b.cast_to, Dtype::kBfloat16);
  EXPECT_EQ(bound_for(c.get(), Coll::kAllReduce, Dtype::kBfloat16, 1 << 20, 2).kind, Bound::Kind::kExact);  // fp32 only
}

TEST(CheckAllReduce, TwoRanksMustMatchTheFloatSumBitForBit) {
  auto a = f32(ramp(1000, 1.0f, 0.1f)), b = f32(ramp(1000, 3.0f, -0.2f));
  std::vector<float> sum(1000);
  for (std::size_t i = 0; i < sum.size(); ++i) {
    float x, y;
    std::memcpy(&x, &a[4 * i], 4);
    std::memcpy(&y, &b[4 * i], 4);
    sum[i] = x + y;
  }
  auto got = f32(sum);
  Bound exact;
  CheckResult r = check_allreduce({a.data(), b.data()}, got.data(), 1000, Dtype::kFloat32, exact);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_LT(r.max_err, 1e-6);
  got[4 * 17] ^= 1;  // one ulp off
  r = check_allreduce({a.data(), b.data()}, got.data(), 1000, Dtype::kFloat32, exact);
  EXPECT_EQ(r.wrong, 1u);
}

TEST(CheckAllReduce, ThreeRanksAllowOnlyTheSummationRounding) {
  auto a = f32(ramp(512, 1.0f, 0.0f)), b = f32(ramp(512, 1e-3f, 5.0f)), c = f32(ramp(512, 7.0f, -1.0f));
  std::vector<float> other_order(512);
  for (std::size_t i = 0; i < 512; ++i) {
    float x, y, z;
    std::memcpy(&x, &a[4 * i], 4);
    std::memcpy(&y, &b[4 * i], 4);
    std::memcpy(&z, &c[4 * i], 4);
    other_order[i] = (z + y) + x;
  }
  auto got = f32(other_order);
  EXPECT_EQ(check_allreduce({a.data(), b.data(), c.data()}, got.data(), 512, Dtype::kFloat32, Bound{}).wrong, 0u);
  other_order[3] += 1e-3f;
  got = f32(other_order);
  EXPECT_EQ(check_allreduce({a.data(), b.data(), c.data()}, got.data(), 512, Dtype::kFloat32, Bound{}).wrong, 1u);
}

TEST(CheckAllReduce, RelativeBoundCountsOnlyErrorsBeyondIt) {
  auto av = ramp(256, 1.0f, 0.0f), bv = ramp(256, 1.0f, 0.0f);
  auto a = f32(av), b = f32(bv);
  Bound rel;
  rel.kind = Bound::Kind::kRel;
  rel.value = 0.01;  // ranges are ~2 each, so the budget is ~0.04
  std::vector<float> out(256);
  for (std::size_t i = 0; i < 256; ++i) out[i] = av[i] + bv[i] + (i == 5 ? 0.03f : i == 9 ? 0.06f : 0.0f);
  auto got = f32(out);
  CheckResult r = check_allreduce({a.data(), b.data()}, got.data(), 256, Dtype::kFloat32, rel);
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NEAR(r.max_err, 0.06, 1e-6);
}

TEST(CheckAllReduce, NonFiniteResultIsWrongAndMaxErrorIsNan) {
  auto a = f32(ramp(64, 1.0f, 0.0f)), b = f32(ramp(64, 1.0f, 0.0f));
  std::vector<uint8_t> got(64 * 4, 0xFF);  // what arrives where nothing was written
  CheckResult r = check_allreduce({a.data(), b.data()}, got.data(), 64, Dtype::kFloat32, Bound{});
  EXPECT_EQ(r.wrong, 64u);
  EXPECT_TRUE(std::isnan(r.max_err));
}

TEST(CheckAllToAll, ExactBlocksAndOneWrongElement) {
  auto want = f32(ramp(300, 0.1f, 0.0f));
  auto got = want;
  EXPECT_EQ(check_alltoall(want.data(), got.data(), 100, 3, Dtype::kFloat32, Bound{}).wrong, 0u);
  got[4 * 150 + 1] ^= 0x10;
  CheckResult r = check_alltoall(want.data(), got.data(), 100, 3, Dtype::kFloat32, Bound{});
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_GT(r.max_err, 0.0);
}

TEST(CheckAllToAll, RowBoundUsesTheRowsRange) {
  // Two rows of 4: a narrow one (range 0.1) and a wide one (range 10).
  std::vector<float> w = {0.0f, 0.1f, 0.05f, 0.0f, 0.0f, 10.0f, 5.0f, 0.0f, 0.0f, 0.1f, 0.05f, 0.0f};
  Bound row;
  row.kind = Bound::Kind::kRelRow;
  row.value = 0.01;
  row.row_length = 4;
  auto want = f32(w);
  std::vector<float> g = w;
  g[10] += 0.05f;  // row 2's neighbour is the wide row: 0.05 is within 0.01 * 10
  auto got = f32(g);
  EXPECT_EQ(check_alltoall(want.data(), got.data(), 12, 1, Dtype::kFloat32, row).wrong, 0u);
  row.row_length = 12;  // one row with range 10
  g[10] += 0.1f;        // now 0.15 off: beyond 0.1
  got = f32(g);
  EXPECT_EQ(check_alltoall(want.data(), got.data(), 12, 1, Dtype::kFloat32, row).wrong, 1u);
}

TEST(CheckAllToAll, CastToBf16IsWithinItsBoundAndThresholdCountsNothing) {
  std::vector<float> w = ramp(128, 3.0f, 0.5f), g(128);
  for (std::size_t i = 0; i < w.size(); ++i) g[i] = compress::bf16_to_f32(compress::f32_to_bf16(w[i]));
  auto want = f32(w), got = f32(g);
  Bound cast;
  cast.kind = Bound::Kind::kCast;
  cast.cast_to = Dtype::kBfloat16;
  EXPECT_EQ(check_alltoall(want.data(), got.data(), 64, 2, Dtype::kFloat32, cast).wrong, 0u);
  Bound none;
  none.kind = Bound::Kind::kNone;
  CheckResult r = check_alltoall(want.data(), got.data(), 64, 2, Dtype::kFloat32, none);
  EXPECT_FALSE(r.wrong_applies);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_GT(r.max_err, 0.0);
}

TEST(Options, SizesStepLikeNcclTests) {
  Options o;
  o.min_bytes = 1 << 20;
  o.max_bytes = 16 << 20;
  o.step_factor = 4;
  EXPECT_EQ(size_list(o), (std::vector<std::size_t>{1 << 20, 4 << 20, 16 << 20}));
  o.max_bytes = 10 << 20;
  EXPECT_EQ(size_list(o), (std::vector<std::size_t>{1 << 20, 4 << 20, 10 << 20}));
}

TEST(Options, SweepModesAndTheirPolicyFilesExist) {
  std::vector<Mode> modes;
  std::string error;
  ASSERT_TRUE(sweep_modes(SQUEEZE_SOURCE_DIR, "", &modes, &error)) << error;
  ASSERT_EQ(modes.size(), 6u);
  EXPECT_TRUE(modes[0].socket);
  for (const Mode& m : modes) {
    if (m.socket) continue;
    std::string perr;
    EXPECT_TRUE(policy::load_policy(m.policy.c_str(), &perr)) << m.name << ": " << perr;
  }
  ASSERT_TRUE(sweep_modes(SQUEEZE_SOURCE_DIR, "socket,quantize", &modes, &error));
  EXPECT_EQ(modes.size(), 2u);
  EXPECT_FALSE(sweep_modes(SQUEEZE_SOURCE_DIR, "socket,zstd", &modes, &error));
  EXPECT_NE(error.find("zstd"), std::string::npos);
}

TEST(Options, RankArgvKeepsOnlyWorkOptions) {
  std::vector<std::string> args = {"squeeze-nccl-perf", "--sweep", "-b", "64K", "--gpus", "0,1", "--collective",
                                   "alltoall", "--json", "--plugin", "/x.so"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o = parse_options(static_cast<int>(argv.size()), argv.data());
  EXPECT_TRUE(o.sweep);
  EXPECT_EQ(o.min_bytes, 64u << 10);
  EXPECT_EQ(o.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(o.do_allreduce);
  EXPECT_TRUE(o.do_alltoall);
  EXPECT_EQ(o.work_args, (std::vector<std::string>{"-b", "64K", "--collective", "alltoall", "--json"}));
}

TEST(Options, CollectiveChoiceIsSharedWithSqueezePerf) {
  bool ar = false, a2a = false;
  ASSERT_TRUE(parse_collective_choice("both", &ar, &a2a));
  EXPECT_TRUE(ar && a2a);
  ASSERT_TRUE(parse_collective_choice("allreduce", &ar, &a2a));
  EXPECT_TRUE(ar && !a2a);
  EXPECT_FALSE(parse_collective_choice("reduce", &ar, &a2a));
  EXPECT_TRUE(ar && !a2a) << "a bad name leaves the choice as it was";
}

TEST(Options, PolicyModeIsNamedAfterItsFile) {
  std::vector<std::string> args = {"squeeze-nccl-perf", "--policy", "config/dlrm-alltoall.json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o = parse_options(static_cast<int>(argv.size()), argv.data());
  ASSERT_EQ(o.modes.size(), 1u);
  EXPECT_EQ(o.modes[0].name, "dlrm-alltoall");
  EXPECT_FALSE(o.modes[0].socket);
  EXPECT_EQ(o.modes[0].policy, "config/dlrm-alltoall.json");
}

TEST(Paths, BuildTreeExecutableFindsThePluginAndTheSourcesBesideIt) {
  // This test binary sits where squeeze-nccl-perf does (<build>/perf/), as in a carried copy.
  const std::string plugin = default_plugin_path();
  EXPECT_TRUE(file_exists(plugin)) << plugin;
  EXPECT_NE(plugin.find("/plugin/libnccl-net-squeeze.so"), std::string::npos) << plugin;
  EXPECT_TRUE(file_exists(default_source_dir() + "/perf/nccl/policies/quantize.json")) << default_source_dir();
}

TEST(Bound, GroupedSendRecvIsDecidedAsSend) {
  // Both match "send"/"recv" too, because grouped ncclSend/ncclRecv is how PyTorch's
  // all_to_all_single and nccl-tests' alltoall_perf reach the plugin.
  auto dlrm = load("config/dlrm-alltoall.json");
  EXPECT_EQ(bound_for(dlrm.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2, true).kind, Bound::Kind::kRel);
  auto q = load("perf/nccl/policies/quantize.json");  // alltoall, send and recv
  EXPECT_EQ(bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2, true).kind, Bound::Kind::kRel);
}

TEST(Report, JsonRowsRoundTripAndBusBwFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor("allreduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("alltoall", 4), 0.75);
  Row r;
  r.mode = "quantize";
  r.collective = "alltoall";
  r.bytes = 1 << 20;
  r.busbw = 1.5;
  r.have_ratio = true;
  r.ratio = 7.25;
  r.wrong = -1;
  r.max_err = NAN;
  Row back;
  ASSERT_TRUE(parse_row_json(row_json(r, RunInfo{}), &back));
  EXPECT_EQ(back.mode, "quantize");
  EXPECT_EQ(back.bytes, r.bytes);
  EXPECT_DOUBLE_EQ(back.busbw, 1.5);
  EXPECT_TRUE(back.have_ratio);
  EXPECT_DOUBLE_EQ(back.ratio, 7.25);
  EXPECT_EQ(back.wrong, -1);
  EXPECT_TRUE(std::isnan(back.max_err));
  EXPECT_FALSE(parse_row_json("not json", &back));
}

TEST(RunFiles, PublishAwaitAppendAndCleanUp) {
  std::string path;
  {
    RunDir dir("", "x");
    path = dir.path();
    publish(path, "id.0", std::string("\0abc", 4));
    EXPECT_EQ(await(path, "id.0", 1), std::string("\0abc", 4));
    append_line(path, "rows.jsonl", "{\"a\":1}");
    append_line(path, "rows.jsonl", "{\"a\":2}");
    EXPECT_EQ(read_lines(path, "rows.jsonl").size(), 2u);
    try {
      await(path, "id.1", 0.05);
      ADD_FAILURE() << "await of a missing file returned";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + "/id.1"), std::string::npos) << e.what();
    }
  }
  struct stat st{};
  EXPECT_NE(stat(path.c_str(), &st), 0) << path << " should be removed";
}

}  // namespace
}  // namespace squeeze::perf::nccl
