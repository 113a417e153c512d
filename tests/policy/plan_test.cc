// plan_message(): the one decision per message, on every path. These are the rules the ring,
// the GPU staging path and the perf tools' expectations rely on.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "plugin/policy/plan.h"

namespace {

using namespace squeeze::policy;
using squeeze::compress::CodecId;
using squeeze::compress::Dtype;

std::shared_ptr<const Policy> parse(const std::string& text) {
  std::vector<std::string> errors;
  auto p = Policy::parse(text, "t.json", &errors);
  for (const auto& e : errors) ADD_FAILURE() << e;
  return p;
}

MessageMeta msg(Collective c, DataType d, uint64_t bytes) {
  MessageMeta m;
  m.collective = c;
  m.dtype = d;
  m.bytes = bytes;
  m.coll_bytes = bytes;
  m.proto = Proto::kSimple;
  return m;
}

// The engine's side, recorded.
struct Hooks : PlanHooks {
  bool pays_answer = true;
  bool dedupe_answer = true;
  int pays_asked = 0, dedupe_asked = 0;
  std::map<StreamKey, uint64_t> counts;
  uint64_t stream_message(const StreamKey& key) override { return counts[key]++; }
  bool dedupe_open(const StreamKey&) override {
    ++dedupe_asked;
    return dedupe_answer;
  }
  bool pays(CodecId, uint64_t) override {
    ++pays_asked;
    return pays_answer;
  }
};

constexpr const char* kQuantizeAllreduce = R"({"version": 1, "rules": [
  {"name": "q", "match": {"collective": ["allreduce", "alltoall"], "dtype": ["float32"]},
   "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.03}, "fallback": "lossless"}],
  "default": {"codec": "raw"}})";

TEST(Plan, RingAllReduceCodesOnlyPartialSumsAndSplitsTheBound) {
  auto p = parse(kQuantizeAllreduce);
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20);
  m.algo = Algo::kRing;
  m.nranks = 4;
  Hooks h;
  // Steps 0..5 of a 4-rank ring are the reduce-scatter (partial sums): lossy, a third each.
  m.step = 0;
  Plan plan = plan_message(*p, m, Path::kHost, true, &h);
  ASSERT_TRUE(plan.compress);
  EXPECT_TRUE(plan.lossy);
  EXPECT_EQ(plan.params.codec, CodecId::kQuantize);
  EXPECT_DOUBLE_EQ(plan.params.quantize.error_bound, 0.03 / 3);
  EXPECT_DOUBLE_EQ(plan.hop_share, 1.0 / 3);
  // Step 6 carries final values: bitwise consistency sends them lossless (the fallback).
  m.step = 6;
  plan = plan_message(*p, m, Path::kHost, true, &h);
  ASSERT_TRUE(plan.compress);
  EXPECT_FALSE(plan.lossy);
  EXPECT_EQ(plan.params.codec, CodecId::kLossless);
  // An unknown position is never lossy.
  m.step = -1;
  EXPECT_FALSE(plan_message(*p, m, Path::kHost, true, &h).lossy);
  // Nor is an all-reduce that is not on the ring.
  m.step = 0;
  m.algo = Algo::kTree;
  EXPECT_FALSE(plan_message(*p, m, Path::kHost, true, &h).lossy);
}

TEST(Plan, AllToAllIsOneHopWithTheWholeBound) {
  auto p = parse(kQuantizeAllreduce);
  MessageMeta m = msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20);
  m.nranks = 8;
  Plan plan = plan_message(*p, m, Path::kHost, true, nullptr);
  ASSERT_TRUE(plan.compress);
  EXPECT_DOUBLE_EQ(plan.params.quantize.error_bound, 0.03);
  EXPECT_EQ(plan.count, (1u << 20) / 4);
  EXPECT_EQ(plan.dtype, Dtype::kFloat32);
  EXPECT_EQ(plan.stream, (StreamKey{0, (1u << 20) / 4}));
}

TEST(Plan, RawCausesAreNamed) {
  auto p = parse(kQuantizeAllreduce);
  MessageMeta m = msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20);
  EXPECT_EQ(plan_message(*p, m, Path::kDevice, true, nullptr).raw_cause, RawCause::kDeviceMemory);
  EXPECT_EQ(plan_message(*p, m, Path::kHost, false, nullptr).raw_cause, RawCause::kDtype)
      << "no address";
  Hooks h;
  h.pays_answer = false;
  Plan plan = plan_message(*p, m, Path::kHost, true, &h);
  EXPECT_FALSE(plan.compress);
  EXPECT_EQ(plan.raw_cause, RawCause::kNotWorthIt);
  // A lossy rule on the GPU is coded as the rule says: the gate does not judge it.
  h.pays_asked = 0;
  EXPECT_TRUE(plan_message(*p, m, Path::kGpuStaged, true, &h).compress);
  EXPECT_EQ(h.pays_asked, 0);
  m.collective = Collective::kBroadcast;
  plan = plan_message(*p, m, Path::kHost, true, nullptr);
  EXPECT_EQ(plan.raw_cause, RawCause::kPolicy);
  EXPECT_EQ(plan.stats_slot, 1) << "the default's slot follows the rules'";
  m = msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20);
  m.proto = Proto::kLL;
  EXPECT_EQ(plan_message(*p, m, Path::kHost, true, nullptr).raw_cause, RawCause::kProtocol);
}

// The default policy (lossless) costs nothing where coding does not pay: GPU-staged messages
// coded losslessly ask the gate as host messages do, and go raw when it says no (issue 24).
TEST(Plan, LosslessOnTheGpuGoesRawWhereItDoesNotPay) {
  auto p = parse(R"({"version": 1, "rules": [], "default": {"codec": "lossless"}})");
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 4 << 20);
  Hooks h;
  h.pays_answer = false;
  Plan plan = plan_message(*p, m, Path::kGpuStaged, true, &h);
  EXPECT_FALSE(plan.compress);
  EXPECT_EQ(plan.raw_cause, RawCause::kNotWorthIt);
  EXPECT_EQ(h.pays_asked, 1);
  h.pays_answer = true;
  EXPECT_TRUE(plan_message(*p, m, Path::kGpuStaged, true, &h).compress);
  // A lossy rule's lossless fallback (final values of a bitwise all-reduce) is judged too.
  auto q = parse(kQuantizeAllreduce);
  m = msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20);
  m.nranks = 4;
  m.algo = Algo::kRing;
  m.step = 6;
  h.pays_answer = false;
  h.pays_asked = 0;
  plan = plan_message(*q, m, Path::kGpuStaged, true, &h);
  EXPECT_FALSE(plan.compress);
  EXPECT_EQ(h.pays_asked, 1);
  m.step = 0;  // a partial sum: lossy, not judged
  h.pays_asked = 0;
  EXPECT_TRUE(plan_message(*q, m, Path::kGpuStaged, true, &h).compress);
  EXPECT_EQ(h.pays_asked, 0);
}

TEST(Plan, LosslessCodesUnknownDataAsWordsWhenTheyDivideIt) {
  auto p = parse(R"({"version": 1, "rules": [], "default": {"codec": "lossless"}})");
  MessageMeta m = msg(Collective::kSend, DataType::kUnknown, 1 << 20);
  Plan plan = plan_message(*p, m, Path::kHost, true, nullptr);
  ASSERT_TRUE(plan.compress);
  EXPECT_EQ(plan.dtype, Dtype::kFloat32);
  EXPECT_EQ(plan.count, (1u << 20) / 4);
  m.bytes = (1 << 20) + 2;
  plan = plan_message(*p, m, Path::kHost, true, nullptr);
  ASSERT_TRUE(plan.compress);
  EXPECT_EQ(plan.dtype, Dtype::kBytes);
  EXPECT_EQ(plan.count, (1u << 20) + 2);
}

TEST(Plan, TheScheduleAndStreamBoundsScaleTheBoundPerStream) {
  auto p = parse(R"({"version": 1, "rules": [{"name": "q", "match": {"dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.1},
      "eb_schedule": {"kind": "step", "start": 4, "messages": 2},
      "streams": [{"count": 1024, "multiplier": 0.5}]}]})");
  Hooks h;
  MessageMeta m = msg(Collective::kAllToAll, DataType::kFloat32, 4096);
  m.count = 1024;
  EXPECT_DOUBLE_EQ(plan_message(*p, m, Path::kHost, true, &h).params.quantize.error_bound,
                   0.1 * 0.5 * 4);
  EXPECT_DOUBLE_EQ(plan_message(*p, m, Path::kHost, true, &h).params.quantize.error_bound,
                   0.1 * 0.5 * 4);
  EXPECT_DOUBLE_EQ(plan_message(*p, m, Path::kHost, true, &h).params.quantize.error_bound,
                   0.1 * 0.5)
      << "the third message of the stream is past the schedule";
  m.count = 2048;
  m.bytes = 8192;
  EXPECT_DOUBLE_EQ(plan_message(*p, m, Path::kHost, true, &h).params.quantize.error_bound, 0.1 * 4)
      << "another stream starts its own schedule";
}

TEST(Plan, RowDedupeGateAppliesToHostMessagesOnly) {
  auto p = parse(R"({"version": 1, "rules": [{"name": "q", "match": {"dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}, "row_length": 64,
      "dedupe_rows": true}]})");
  Hooks h;
  h.dedupe_answer = false;
  MessageMeta m = msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20);
  EXPECT_FALSE(plan_message(*p, m, Path::kHost, true, &h).params.quantize.dedupe_rows);
  EXPECT_EQ(h.dedupe_asked, 1);
  EXPECT_TRUE(plan_message(*p, m, Path::kGpuStaged, true, &h).params.quantize.dedupe_rows)
      << "the GPU codec always dedupes";
  EXPECT_EQ(h.dedupe_asked, 1);
}

TEST(Plan, PartialSumsFollowNcclsRingSteps) {
  // 2 ranks: chunks alternate reduce-scatter, all-gather; 2 isends per chunk.
  EXPECT_TRUE(ring_allreduce_partial_sum(0, 2));
  EXPECT_TRUE(ring_allreduce_partial_sum(1, 2));
  EXPECT_FALSE(ring_allreduce_partial_sum(2, 2));
  EXPECT_FALSE(ring_allreduce_partial_sum(3, 2));
  EXPECT_TRUE(ring_allreduce_partial_sum(4, 2));
  EXPECT_FALSE(ring_allreduce_partial_sum(-1, 2));
  EXPECT_DOUBLE_EQ(allreduce_hop_share(2, Consistency::kBitwise), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_hop_share(5, Consistency::kBitwise), 0.25);
  EXPECT_DOUBLE_EQ(allreduce_hop_share(5, Consistency::kRelaxed), 0.125) << "all-gather hops too";
  EXPECT_EQ(allreduce_lossy_hops(0, Consistency::kRelaxed), 0) << "unknown rank count";
}

TEST(Plan, RelaxedAllReduceBudgetsEveryHopAndNeedsTheRankCount) {
  auto p = parse(R"({"version": 1, "rules": [{"name": "q", "match": {"dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.06}, "consistency": "relaxed"}]})");
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20);
  m.nranks = 4;
  m.step = 7;  // an all-gather hop: lossy too under relaxed consistency
  Plan plan = plan_message(*p, m, Path::kHost, true, nullptr);
  EXPECT_TRUE(plan.lossy);
  EXPECT_DOUBLE_EQ(plan.params.quantize.error_bound, 0.06 / 6)
      << "3 reduce-scatter + 3 all-gather hops";
  m.nranks = 0;
  EXPECT_FALSE(plan_message(*p, m, Path::kHost, true, nullptr).compress)
      << "no budget without the rank count";
}

}  // namespace
