// The bound a policy states for a call (perf/common/stated_bound.h) and the checks that count
// #wrong against it (perf/common/result_check.h): what squeeze-perf and squeeze-nccl-perf
// report for every row, so a lossy policy is judged by its own promise.
#include "perf/common/result_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compress/half.h"
#include "perf/common/stated_bound.h"
#include "plugin/policy/policy_load.h"

namespace squeeze::perf {
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
  for (std::size_t i = 0; i < n; ++i)
    v[i] = offset + scale * std::sin(static_cast<float>(i) * 0.37f);
  return v;
}

TEST(Bound, NoPolicyAndRawAndLosslessAreExact) {
  EXPECT_EQ(bound_for(nullptr, Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind,
            Bound::Kind::kExact);
  auto off = load("config/off.json");
  EXPECT_EQ(bound_for(off.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 20, 2).kind,
            Bound::Kind::kExact);
  auto lossless = load("config/lossless.json");
  EXPECT_EQ(bound_for(lossless.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind,
            Bound::Kind::kExact);
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
  EXPECT_EQ(bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1000, 2).kind,
            Bound::Kind::kExact);
  // dlrm-alltoall.json starts its schedule at 2x the bound.
  auto dlrm = load("config/dlrm-alltoall.json");
  b = bound_for(dlrm.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kRel);
  EXPECT_DOUBLE_EQ(b.value, 0.02);
}

TEST(Bound, ThresholdStatesNoneAndCastNamesItsType) {
  auto t = load("perf/nccl/policies/threshold.json");
  EXPECT_EQ(bound_for(t.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).kind,
            Bound::Kind::kNone);
  EXPECT_EQ(bound_for(t.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 20, 2).kind,
            Bound::Kind::kExact);
  auto c = load("perf/nccl/policies/cast.json");
  Bound b = bound_for(c.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2);
  EXPECT_EQ(b.kind, Bound::Kind::kCast);
  EXPECT_EQ(b.cast_to, Dtype::kBfloat16);
  EXPECT_EQ(bound_for(c.get(), Coll::kAllReduce, Dtype::kBfloat16, 1 << 20, 2).kind,
            Bound::Kind::kExact);  // fp32 only
}

// The collective network codes both halves of an all-reduce (plugin/policy/plan.h): a sum's
// n - 1 contributions share half the rule's bound, the result the other half, so the bound it
// states for the result is the rule's, and its ranks always agree.
TEST(CollNetBound, QuantizeStatesTheRulesBoundOverBothHops) {
  auto q = load("perf/collective/policies/collnet-quantize.json");
  for (int nodes : {2, 4, 7}) {
    for (RedOp op : {RedOp::kSum, RedOp::kAvg, RedOp::kMin, RedOp::kMax}) {
      const Bound b = collnet_bound_for(q.get(), Dtype::kFloat32, 1 << 20, nodes, op);
      EXPECT_EQ(b.kind, Bound::Kind::kRel) << nodes;
      EXPECT_NEAR(b.value, 1e-3, 1e-15) << nodes << " nodes, " << red_op_name(op);
      EXPECT_TRUE(b.bitwise);
      EXPECT_EQ(b.text, "rel=0.001");
    }
  }
  // perf/nccl's quantize policy has no "algo": its all-reduce rule applies on CollNet too.
  auto nccl = load("perf/nccl/policies/quantize.json");
  EXPECT_NEAR(collnet_bound_for(nccl.get(), Dtype::kBfloat16, 1 << 20, 3, RedOp::kSum).value, 1e-3,
              1e-15);
  // One node sends nothing; below the rule's 64 KiB the call goes raw.
  EXPECT_EQ(collnet_bound_for(q.get(), Dtype::kFloat32, 1 << 20, 1, RedOp::kSum).kind,
            Bound::Kind::kExact);
  EXPECT_EQ(collnet_bound_for(q.get(), Dtype::kFloat32, 1000, 4, RedOp::kSum).kind,
            Bound::Kind::kExact);
}

TEST(CollNetBound, RawRingOnlyThresholdAndCast) {
  EXPECT_EQ(collnet_bound_for(nullptr, Dtype::kFloat32, 1 << 20, 4, RedOp::kSum).kind,
            Bound::Kind::kExact);
  auto off = load("config/off.json");
  EXPECT_EQ(collnet_bound_for(off.get(), Dtype::kFloat32, 1 << 20, 4, RedOp::kSum).kind,
            Bound::Kind::kExact);
  // A rule matching the ring's algorithm does not apply on the collective network.
  std::vector<std::string> errors;
  auto ring = policy::Policy::parse(
      R"({"version": 1, "rules": [{"match": {"collective": "allreduce", "algo": "ring"},
          "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.5}}]})",
      "ring.json", &errors);
  ASSERT_NE(ring, nullptr) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(collnet_bound_for(ring.get(), Dtype::kFloat32, 1 << 20, 4, RedOp::kSum).kind,
            Bound::Kind::kExact);
  auto t = load("perf/collective/policies/collnet-threshold.json");
  EXPECT_EQ(collnet_bound_for(t.get(), Dtype::kFloat32, 1 << 20, 2, RedOp::kSum).kind,
            Bound::Kind::kNone);
  // A min or max cannot drop values: the rule's lossless fallback, exact.
  EXPECT_EQ(collnet_bound_for(t.get(), Dtype::kFloat32, 1 << 20, 2, RedOp::kMax).kind,
            Bound::Kind::kExact);
  auto c = load("perf/nccl/policies/cast.json");
  const Bound b = collnet_bound_for(c.get(), Dtype::kFloat32, 1 << 20, 5, RedOp::kSum);
  EXPECT_EQ(b.kind, Bound::Kind::kCast);
  EXPECT_EQ(b.cast_hops, 2);  // the contribution and the result, whatever the node count
}

TEST(CollNetBound, CheckCountsAgainstIt) {
  // Four ranks; each element may be off by the rule's bound times the inputs' ranges.
  std::vector<std::vector<uint8_t>> in;
  std::vector<const uint8_t*> ptrs;
  for (int q = 0; q < 4; ++q) in.push_back(f32(ramp(300, 1.0f, 0.1f * static_cast<float>(q))));
  for (const auto& v : in) ptrs.push_back(v.data());
  auto q = load("perf/collective/policies/collnet-quantize.json");
  const Bound b = collnet_bound_for(q.get(), Dtype::kFloat32, 1 << 20, 4, RedOp::kSum);
  ASSERT_EQ(b.kind, Bound::Kind::kRel);
  std::vector<float> sum(300, 0.0f);
  for (const auto& v : in)
    for (std::size_t i = 0; i < 300; ++i) {
      float x;
      std::memcpy(&x, &v[4 * i], 4);
      sum[i] += x;
    }
  // Ranges ~2 each: a budget of ~8e-3 per element.
  sum[10] += 4e-3f;
  sum[11] += 2e-2f;
  auto got = f32(sum);
  const CheckResult r = check_allreduce(ptrs, got.data(), 300, Dtype::kFloat32, b);
  EXPECT_EQ(r.wrong, 1u);
  EXPECT_NEAR(r.max_err, 2e-2, 1e-4);
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
  auto a = f32(ramp(512, 1.0f, 0.0f)), b = f32(ramp(512, 1e-3f, 5.0f)),
       c = f32(ramp(512, 7.0f, -1.0f));
  std::vector<float> other_order(512);
  for (std::size_t i = 0; i < 512; ++i) {
    float x, y, z;
    std::memcpy(&x, &a[4 * i], 4);
    std::memcpy(&y, &b[4 * i], 4);
    std::memcpy(&z, &c[4 * i], 4);
    other_order[i] = (z + y) + x;
  }
  auto got = f32(other_order);
  EXPECT_EQ(
      check_allreduce({a.data(), b.data(), c.data()}, got.data(), 512, Dtype::kFloat32, Bound{})
          .wrong,
      0u);
  other_order[3] += 1e-3f;
  got = f32(other_order);
  EXPECT_EQ(
      check_allreduce({a.data(), b.data(), c.data()}, got.data(), 512, Dtype::kFloat32, Bound{})
          .wrong,
      1u);
}

TEST(CheckAllReduce, RelativeBoundCountsOnlyErrorsBeyondIt) {
  auto av = ramp(256, 1.0f, 0.0f), bv = ramp(256, 1.0f, 0.0f);
  auto a = f32(av), b = f32(bv);
  Bound rel;
  rel.kind = Bound::Kind::kRel;
  rel.value = 0.01;  // ranges are ~2 each, so the budget is ~0.04
  std::vector<float> out(256);
  for (std::size_t i = 0; i < 256; ++i)
    out[i] = av[i] + bv[i] + (i == 5 ? 0.03f : i == 9 ? 0.06f : 0.0f);
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
  std::vector<float> w = {0.0f, 0.1f, 0.05f, 0.0f, 0.0f,  10.0f,
                          5.0f, 0.0f, 0.0f,  0.1f, 0.05f, 0.0f};
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
  for (std::size_t i = 0; i < w.size(); ++i)
    g[i] = compress::bf16_to_f32(compress::f32_to_bf16(w[i]));
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

TEST(Bound, GroupedSendRecvIsDecidedAsSend) {
  // Both match "send"/"recv" too, because grouped ncclSend/ncclRecv is how PyTorch's
  // all_to_all_single and nccl-tests' alltoall_perf reach the plugin.
  auto dlrm = load("config/dlrm-alltoall.json");
  EXPECT_EQ(bound_for(dlrm.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2, true).kind,
            Bound::Kind::kRel);
  auto q = load("perf/nccl/policies/quantize.json");  // alltoall, send and recv
  EXPECT_EQ(bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2, true).kind,
            Bound::Kind::kRel);
}

TEST(Bound, TextIsOneWordForTables) {
  auto q = load("perf/nccl/policies/quantize.json");
  EXPECT_EQ(bound_for(q.get(), Coll::kAllToAll, Dtype::kFloat32, 1 << 18, 2).text, "rel=0.01");
  EXPECT_EQ(bound_for(nullptr, Coll::kAllReduce, Dtype::kFloat32, 1 << 18, 2).text, "exact");
  auto c = load("perf/nccl/policies/cast.json");
  EXPECT_EQ(bound_for(c.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).text,
            "cast=bfloat16");
  auto t = load("perf/nccl/policies/threshold.json");
  EXPECT_EQ(bound_for(t.get(), Coll::kAllReduce, Dtype::kFloat32, 1 << 20, 2).text,
            "none(threshold)");
}

TEST(CheckAllReduce, TwoRanksMatchEachReductionBitForBit) {
  auto av = ramp(500, 1.0f, 0.1f), bv = ramp(500, 3.0f, -0.2f);
  auto a = f32(av), b = f32(bv);
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg}) {
    SCOPED_TRACE(red_op_name(op));
    std::vector<float> out(500);
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = op == RedOp::kAvg ? (av[i] + bv[i]) * 0.5f : apply_red_op(op, av[i], bv[i]);
    auto got = f32(out);
    CheckResult r =
        check_allreduce({a.data(), b.data()}, got.data(), 500, Dtype::kFloat32, Bound{}, op);
    EXPECT_EQ(r.wrong, 0u);
    EXPECT_LT(r.max_err, 1e-5);
    got[4 * 3] ^= 1;
    EXPECT_EQ(
        check_allreduce({a.data(), b.data()}, got.data(), 500, Dtype::kFloat32, Bound{}, op).wrong,
        1u);
  }
}

TEST(CheckAllReduce, ThreeRanksMinMaxAreExactAndAvgDividesTheSum) {
  auto av = ramp(256, 1.0f, 0.0f), bv = ramp(256, 2.0f, 1.0f), cv = ramp(256, 0.5f, -1.0f);
  auto a = f32(av), b = f32(bv), c = f32(cv);
  std::vector<float> mx(256), avg(256);
  for (std::size_t i = 0; i < 256; ++i) {
    mx[i] = std::max(av[i], std::max(bv[i], cv[i]));
    avg[i] = av[i] / 3 + bv[i] / 3 + cv[i] / 3;  // NCCL premultiplies by 1/n
  }
  auto got = f32(mx);
  EXPECT_EQ(check_allreduce({a.data(), b.data(), c.data()}, got.data(), 256, Dtype::kFloat32,
                            Bound{}, RedOp::kMax)
                .wrong,
            0u);
  mx[7] = std::nextafter(mx[7], 100.0f);  // one ulp is wrong for max: it rounds nothing
  got = f32(mx);
  EXPECT_EQ(check_allreduce({a.data(), b.data(), c.data()}, got.data(), 256, Dtype::kFloat32,
                            Bound{}, RedOp::kMax)
                .wrong,
            1u);
  got = f32(avg);
  CheckResult r = check_allreduce({a.data(), b.data(), c.data()}, got.data(), 256, Dtype::kFloat32,
                                  Bound{}, RedOp::kAvg);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_LT(r.max_err, 1e-6);
}

TEST(CheckAllReduce, ALossyProductStatesNoBound) {
  auto a = f32(ramp(64, 1.0f, 0.0f)), b = f32(ramp(64, 1.0f, 0.0f));
  std::vector<uint8_t> got(64 * 4, 0);
  Bound rel;
  rel.kind = Bound::Kind::kRel;
  rel.value = 0.01;
  CheckResult r =
      check_allreduce({a.data(), b.data()}, got.data(), 64, Dtype::kFloat32, rel, RedOp::kProd);
  EXPECT_FALSE(r.wrong_applies);
  EXPECT_EQ(r.wrong, 0u);
  EXPECT_GT(r.max_err, 0.0);
}

}  // namespace
}  // namespace squeeze::perf
