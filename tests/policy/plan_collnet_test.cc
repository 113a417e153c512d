// plan_message() on the collective network's path (Path::kCollNet): rules match it by
// algorithm, each hop gets its share of the bound so the result stays within it on every
// element, codecs that drop values serve sums only, rows do not apply, and error feedback goes
// off where a piece's place in its tensor is unknown.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "plugin/policy/plan.h"
#include "plugin/policy/stats.h"

namespace {

using namespace squeeze::policy;
using squeeze::compress::BoundMode;
using squeeze::compress::CodecId;

std::shared_ptr<const Policy> parse(const std::string& text) {
  std::vector<std::string> errors;
  auto p = Policy::parse(text, "t.json", &errors);
  for (const auto& e : errors) ADD_FAILURE() << e;
  return p;
}

MessageMeta piece(CollNetHop hop, ReduceOp op, int nodes, uint64_t bytes) {
  MessageMeta m;
  m.collective = Collective::kAllReduce;
  m.dtype = DataType::kFloat32;
  m.proto = Proto::kSimple;
  m.algo = Algo::kCollNet;
  m.bytes = bytes;
  m.coll_bytes = 64 * bytes;
  m.count = m.coll_bytes / 4;
  m.nranks = nodes;
  m.collnet.hop = hop;
  m.collnet.op = op;
  m.collnet.nodes = nodes;
  m.collnet.stream_count = m.count;
  m.collnet.position = 4096;
  m.collnet.position_known = true;
  return m;
}

struct Hooks : PlanHooks {
  std::map<StreamKey, uint64_t> counts;
  int pays_asked = 0;
  uint64_t stream_message(const StreamKey& key) override { return counts[key]++; }
  bool dedupe_open(const StreamKey&) override { return true; }
  bool pays(CodecId, uint64_t) override {
    ++pays_asked;
    return true;
  }
};

std::string rule(const std::string& match, const std::string& action) {
  return R"({"version": 1, "rules": [{"name": "r", "match": )" + match + ", " + action +
         R"(}], "default": {"codec": "raw"}})";
}

TEST(PlanCollNet, HopSharesAddUpToTheWholeBound) {
  for (int n : {2, 3, 4, 16}) {
    const double contribution = collnet_hop_share(CollNetHop::kContribution, ReduceOp::kSum, n);
    const double result = collnet_hop_share(CollNetHop::kResult, ReduceOp::kSum, n);
    EXPECT_DOUBLE_EQ((n - 1) * contribution + result, 1.0) << n << " nodes";
    EXPECT_DOUBLE_EQ(collnet_hop_share(CollNetHop::kContribution, ReduceOp::kMax, n) +
                         collnet_hop_share(CollNetHop::kResult, ReduceOp::kMax, n),
                     1.0);
  }
  EXPECT_DOUBLE_EQ(collnet_hop_share(CollNetHop::kContribution, ReduceOp::kSum, 4), 1.0 / 6);
  EXPECT_DOUBLE_EQ(collnet_hop_share(CollNetHop::kResult, ReduceOp::kSum, 1), 1.0);
}

TEST(PlanCollNet, QuantizeGetsTheHopsShareAndNoRows) {
  auto p = parse(rule(R"({"algo": "collnet"})",
                      R"("codec": "quantize", "error_bound": {"mode": "rel_row", "value": 0.01},
                         "row_length": 64, "dedupe_rows": true)"));
  Hooks h;
  Plan c = plan_message(*p, piece(CollNetHop::kContribution, ReduceOp::kSum, 4, 65536),
                        Path::kCollNet, true, &h);
  ASSERT_TRUE(c.compress);
  EXPECT_TRUE(c.lossy);
  EXPECT_DOUBLE_EQ(c.params.quantize.error_bound, 0.01 / 6);
  EXPECT_EQ(c.params.quantize.mode, BoundMode::kRel) << "rows mean nothing in NCCL's calls";
  EXPECT_EQ(c.params.quantize.row_length, 0u);
  EXPECT_FALSE(c.params.quantize.dedupe_rows);
  EXPECT_EQ(h.pays_asked, 1) << "the pays gate judges the CPU codecs here too";
  Plan r = plan_message(*p, piece(CollNetHop::kResult, ReduceOp::kSum, 4, 65536), Path::kCollNet,
                        true, &h);
  ASSERT_TRUE(r.compress);
  EXPECT_DOUBLE_EQ(r.params.quantize.error_bound, 0.01 / 2);
  // Rice-coded codes only where the rule asks (rice_codes) and only here, where the CPU codes
  // and decodes; never on a path whose frames a GPU may decode. (The reference range is the
  // call's, set by the collective network from the data, plugin/collnet/call_jobs.cc.)
  EXPECT_FALSE(c.params.quantize.rice_codes) << "bit-packed unless the rule says rice_codes";
  EXPECT_EQ(c.params.quantize.reference_range, 0.0);
  auto rice = parse(rule(R"({"algo": "collnet"})",
                         R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01},
                            "rice_codes": true)"));
  EXPECT_TRUE(plan_message(*rice, piece(CollNetHop::kContribution, ReduceOp::kSum, 4, 65536),
                           Path::kCollNet, true, &h)
                  .params.quantize.rice_codes);
  EXPECT_TRUE(plan_message(*rice, piece(CollNetHop::kResult, ReduceOp::kSum, 4, 65536),
                           Path::kCollNet, true, &h)
                  .params.quantize.rice_codes);
  auto any = parse(rule("{}", R"("codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01},
                                 "rice_codes": true)"));
  MessageMeta a2a = piece(CollNetHop::kNone, ReduceOp::kSum, 4, 65536);
  a2a.collective = Collective::kAllToAll;
  a2a.algo = Algo::kUnknown;
  for (Path path : {Path::kHost, Path::kGpuStaged}) {
    const Plan h2 = plan_message(*any, a2a, path, true, nullptr);
    EXPECT_TRUE(h2.compress && h2.lossy) << static_cast<int>(path);
    EXPECT_FALSE(h2.params.quantize.rice_codes) << static_cast<int>(path);
  }
  // Each hop of each piece of each tensor is a stream of its own.
  EXPECT_EQ(c.stream, (StreamKey{0, 64 * 65536 / 4, 4096, 1}));
  EXPECT_EQ(r.stream, (StreamKey{0, 64 * 65536 / 4, 4096, 2}));
}

TEST(PlanCollNet, BitwiseConsistencyDoesNotHoldTheResultBack) {
  // On the ring a bitwise rule codes only partial sums; the collective network codes both
  // halves and still ends bit-identical.
  auto p = parse(rule(R"({"collective": "allreduce"})",
                      R"("codec": "quantize", "error_bound": {"mode": "abs", "value": 0.1},
                         "consistency": "bitwise")"));
  Plan r = plan_message(*p, piece(CollNetHop::kResult, ReduceOp::kSum, 4, 4096), Path::kCollNet,
                        true, nullptr);
  EXPECT_TRUE(r.lossy);
  EXPECT_EQ(r.params.codec, CodecId::kQuantize);
}

TEST(PlanCollNet, DroppingValuesServesSumsOnly) {
  auto lossless = parse(rule(R"({"algo": "collnet"})",
                             R"("codec": "threshold", "keep": 0.01, "fallback": "lossless")"));
  auto raw = parse(rule(R"({"algo": "collnet"})", R"("codec": "threshold", "keep": 0.01)"));
  for (ReduceOp op : {ReduceOp::kMin, ReduceOp::kMax}) {
    const MessageMeta m = piece(CollNetHop::kContribution, op, 4, 4096);
    Plan a = plan_message(*lossless, m, Path::kCollNet, true, nullptr);
    ASSERT_TRUE(a.compress);
    EXPECT_FALSE(a.lossy);
    EXPECT_EQ(a.params.codec, CodecId::kLossless);
    Plan b = plan_message(*raw, m, Path::kCollNet, true, nullptr);
    EXPECT_FALSE(b.compress);
    EXPECT_EQ(b.raw_cause, RawCause::kReduceOp);
  }
  Plan s = plan_message(*raw, piece(CollNetHop::kContribution, ReduceOp::kSum, 4, 4096),
                        Path::kCollNet, true, nullptr);
  EXPECT_TRUE(s.compress);
  EXPECT_EQ(s.params.codec, CodecId::kThreshold);
}

// A rule that asks for error feedback never drops values without it: where a piece's place in
// its tensor is unknown (always, under NCCL 2.28.9), the piece goes by the rule's fallback.
TEST(PlanCollNet, ErrorFeedbackOrTheFallbackNeverDropsForGood) {
  auto raw = parse(rule(R"({"algo": "collnet"})",
                        R"("codec": "threshold", "keep": 0.01, "error_feedback": true)"));
  auto lossless = parse(rule(R"({"algo": "collnet"})",
                             R"("codec": "threshold", "keep": 0.01, "error_feedback": true,
                                "fallback": "lossless")"));
  auto no_feedback = parse(rule(R"({"algo": "collnet"})", R"("codec": "threshold", "keep": 0.01)"));
  for (CollNetHop hop : {CollNetHop::kContribution, CollNetHop::kResult}) {
    SCOPED_TRACE(static_cast<int>(hop));
    MessageMeta m = piece(hop, ReduceOp::kSum, 4, 4096);
    Plan known = plan_message(*raw, m, Path::kCollNet, true, nullptr);
    ASSERT_TRUE(known.compress);
    EXPECT_EQ(known.params.codec, CodecId::kThreshold);
    EXPECT_TRUE(known.params.threshold.error_feedback);
    EXPECT_FALSE(known.feedback_off);

    m.collnet.position_known = false;
    Plan to_raw = plan_message(*raw, m, Path::kCollNet, true, nullptr);
    EXPECT_FALSE(to_raw.compress);
    EXPECT_EQ(to_raw.raw_cause, RawCause::kNoFeedback);
    EXPECT_TRUE(to_raw.feedback_off);
    Plan to_lossless = plan_message(*lossless, m, Path::kCollNet, true, nullptr);
    ASSERT_TRUE(to_lossless.compress);
    EXPECT_FALSE(to_lossless.lossy);
    EXPECT_EQ(to_lossless.params.codec, CodecId::kLossless);
    EXPECT_TRUE(to_lossless.feedback_off);
    // A rule without feedback drops values by design, wherever the piece is.
    Plan plain = plan_message(*no_feedback, m, Path::kCollNet, true, nullptr);
    ASSERT_TRUE(plain.compress);
    EXPECT_EQ(plain.params.codec, CodecId::kThreshold);
    EXPECT_FALSE(plain.feedback_off);
  }
}

TEST(PlanCollNet, IntegersGoLosslessOrRaw) {
  auto p = parse(rule(R"({"algo": "collnet"})",
                      R"("codec": "quantize", "error_bound": {"mode": "abs", "value": 1},
                         "fallback": "lossless")"));
  MessageMeta m = piece(CollNetHop::kContribution, ReduceOp::kSum, 4, 4096);
  m.dtype = DataType::kInt32;
  Plan plan = plan_message(*p, m, Path::kCollNet, true, nullptr);
  ASSERT_TRUE(plan.compress);
  EXPECT_FALSE(plan.lossy);
  EXPECT_EQ(plan.params.codec, CodecId::kLossless);
}

TEST(PolicyAlgo, CollnetMatchesTheCollectiveNetworkAndNcclsCollNetAlgorithms) {
  auto p = parse(rule(R"({"algo": "collnet"})", R"("codec": "lossless")"));
  MessageMeta m = piece(CollNetHop::kContribution, ReduceOp::kSum, 4, 4096);
  for (Algo a : {Algo::kCollNet, Algo::kCollNetChain, Algo::kCollNetDirect}) {
    m.algo = a;
    EXPECT_EQ(p->decide(m).rule, 0) << static_cast<int>(a);
  }
  for (Algo a : {Algo::kRing, Algo::kTree, Algo::kUnknown}) {
    m.algo = a;
    EXPECT_EQ(p->decide(m).rule, -1) << "an unknown algorithm never matches a constraint";
  }
  auto ring = parse(rule(R"({"algo": ["ring", "pat"]})", R"("codec": "lossless")"));
  m.algo = Algo::kRing;
  EXPECT_EQ(ring->decide(m).rule, 0);
  m.algo = Algo::kCollNet;
  EXPECT_EQ(ring->decide(m).rule, -1);
}

TEST(PolicyAlgo, AnUnknownAlgorithmIsAnErrorNamingTheChoices) {
  std::vector<std::string> errors;
  auto p = Policy::parse(rule(R"({"algo": "sharp"})", R"("codec": "lossless")"), "t.json", &errors);
  EXPECT_EQ(p, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/rules/0/match/algo"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("\"collnet\""), std::string::npos) << errors[0];
}

TEST(StatsRoutes, TheCollectiveNetworkCountsApart) {
  Stats s({"r"});
  s.record_encode(0, Collective::kAllReduce, 1000, 10, 5, Route::kCollNet);
  s.record_encode(0, Collective::kAllReduce, 1000, 500, 5);
  s.record_raw(0, Collective::kAllReduce, 300, RawCause::kReduceOp, Route::kCollNet);
  s.record_decode(CodecId::kThreshold, Collective::kAllReduce, 10, 1000, 7, Route::kCollNet);
  EXPECT_EQ(s.route_totals(Route::kCollNet).bytes_out, 10u);
  EXPECT_EQ(s.route_totals(Route::kNet).bytes_out, 500u);
  EXPECT_EQ(s.totals().bytes_in, 2000u);
  EXPECT_EQ(s.cell(0, Collective::kAllReduce).bytes_out, 500u) << "the default route is the net's";
  EXPECT_EQ(s.decode_totals().messages, 1u);
  const std::string j = s.to_json(0);
  EXPECT_NE(j.find("\"collnet\""), std::string::npos);
  EXPECT_NE(j.find("\"routes\""), std::string::npos);
  EXPECT_NE(j.find("\"collnet_decode\""), std::string::npos);
  EXPECT_NE(j.find("\"reduce_op\""), std::string::npos);
  EXPECT_NE(s.summary_line().find("CollNet"), std::string::npos);
}

}  // namespace
