// decide(): first matching rule wins, and the safety rules hold whatever the policy says.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin/policy/names.h"
#include "plugin/policy/policy.h"

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

MessageMeta msg(Collective c, DataType d, uint64_t bytes, Proto proto = Proto::kSimple) {
  MessageMeta m;
  m.collective = c;
  m.dtype = d;
  m.bytes = bytes;
  m.coll_bytes = bytes;
  m.proto = proto;
  return m;
}

constexpr const char* kTwoRules = R"({"version": 1, "rules": [
  {"name": "emb", "match": {"collective": ["alltoall"], "dtype": ["float32", "bfloat16"], "min_bytes": 65536},
   "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}, "row_length": 128},
  {"name": "grad", "match": {"collective": ["allreduce"], "dtype": ["float32"]},
   "codec": "threshold", "keep": 0.01},
  {"name": "rest", "match": {"min_bytes": 1024}, "codec": "lossless"}],
  "default": {"codec": "raw"}})";

TEST(Decide, FirstMatchingRuleWins) {
  auto p = parse(kTwoRules);
  ASSERT_NE(p, nullptr);
  Decision d = p->decide(msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20));
  EXPECT_EQ(d.rule, 0);
  ASSERT_FALSE(d.is_raw());
  EXPECT_EQ(d.params->codec, CodecId::kQuantize);
  EXPECT_EQ(d.codec_dtype, Dtype::kFloat32);
  EXPECT_TRUE(d.lossy);
  EXPECT_EQ(d.params, &p->rules()[0].action.params);  // no copy: points into the policy

  // Too small for "emb": falls through to "rest".
  d = p->decide(msg(Collective::kAllToAll, DataType::kFloat32, 4096));
  EXPECT_EQ(d.rule, 2);
  EXPECT_EQ(d.params->codec, CodecId::kLossless);
  EXPECT_FALSE(d.lossy);

  d = p->decide(msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20));
  EXPECT_EQ(d.rule, 1);
  EXPECT_EQ(d.params->codec, CodecId::kThreshold);

  // Nothing matches a 100-byte send: the default.
  d = p->decide(msg(Collective::kSend, DataType::kFloat32, 100));
  EXPECT_EQ(d.rule, -1);
  EXPECT_TRUE(d.is_raw());
  EXPECT_EQ(d.raw_reason, RawReason::kPolicy);
  EXPECT_EQ(p->stats_slot(d), 3);
}

TEST(Decide, LLAndLL128AreAlwaysRaw) {
  auto p = parse(
      R"({"version": 1, "rules": [{"codec": "lossless"}], "default": {"codec": "lossless"}})");
  ASSERT_NE(p, nullptr);
  for (Proto proto : {Proto::kLL, Proto::kLL128, Proto::kUnknown}) {
    Decision d = p->decide(msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20, proto));
    EXPECT_TRUE(d.is_raw());
    EXPECT_EQ(d.raw_reason, RawReason::kProtocol);
    EXPECT_EQ(d.rule, 0);  // the rule matched; the protocol overrode it
  }
  EXPECT_FALSE(p->decide(msg(Collective::kAllReduce, DataType::kFloat32, 1 << 20)).is_raw());
}

TEST(Decide, ProtoMatchSelectsRules) {
  auto p = parse(R"({"version": 1, "rules": [
      {"name": "ll-raw", "match": {"proto": ["ll", "ll128"]}, "codec": "raw"},
      {"name": "simple", "match": {"proto": "simple"}, "codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->decide(msg(Collective::kAllReduce, DataType::kInt32, 64, Proto::kLL)).rule, 0);
  EXPECT_EQ(p->decide(msg(Collective::kAllReduce, DataType::kInt32, 64, Proto::kSimple)).rule, 1);
  EXPECT_EQ(p->decide(msg(Collective::kAllReduce, DataType::kInt32, 64, Proto::kUnknown)).rule, -1);
}

TEST(Decide, LossyNeedsAKnownFloatDtype) {
  auto p = parse(R"({"version": 1, "rules": [
      {"name": "q", "match": {"collective": "alltoall"}, "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.1}},
      {"name": "t", "match": {"collective": "allreduce"}, "codec": "threshold", "keep": 0.1, "fallback": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  for (DataType d : {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16}) {
    Decision x = p->decide(msg(Collective::kAllToAll, d, 1 << 20));
    EXPECT_TRUE(x.lossy);
    EXPECT_NE(x.codec_dtype, Dtype::kBytes);
  }
  for (DataType d : {DataType::kInt8, DataType::kUint8, DataType::kInt32, DataType::kUint32,
                     DataType::kInt64, DataType::kUint64, DataType::kFloat64, DataType::kFloat8E4M3,
                     DataType::kFloat8E5M2, DataType::kUnknown}) {
    Decision x = p->decide(msg(Collective::kAllToAll, d, 1 << 20));
    EXPECT_EQ(x.rule, 0);
    EXPECT_TRUE(x.is_raw()) << dtype_name(d);  // fallback raw
    EXPECT_EQ(x.raw_reason, RawReason::kDtype);
    Decision y = p->decide(msg(Collective::kAllReduce, d, 1 << 20));
    ASSERT_FALSE(y.is_raw()) << dtype_name(d);  // fallback lossless
    EXPECT_EQ(y.params->codec, CodecId::kLossless);
    EXPECT_FALSE(y.lossy);
    EXPECT_EQ(y.codec_dtype, Dtype::kBytes);
  }
}

TEST(Decide, CastNarrowsOnlyFloat32) {
  auto p = parse(R"({"version": 1, "rules": [{"codec": "cast", "to": "bfloat16"}]})");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->decide(msg(Collective::kAllToAll, DataType::kFloat32, 1 << 20)).lossy);
  EXPECT_TRUE(p->decide(msg(Collective::kAllToAll, DataType::kBfloat16, 1 << 20)).is_raw());
  EXPECT_TRUE(p->decide(msg(Collective::kAllToAll, DataType::kFloat16, 1 << 20)).is_raw());
}

TEST(Decide, UnknownDtypeIsLosslessOrRawUnlessAssumed) {
  auto p = parse(R"({"version": 1, "rules": [
      {"name": "known", "match": {"collective": "alltoall", "dtype": ["float32"]}, "codec": "quantize",
       "error_bound": {"mode": "rel", "value": 0.01}},
      {"name": "assumed", "match": {"collective": "alltoall", "dtype": ["bfloat16"]}, "assume_dtype": "bfloat16",
       "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}},
      {"name": "unknown", "match": {"dtype": "unknown"}, "codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  Decision d = p->decide(msg(Collective::kAllToAll, DataType::kUnknown, 1 << 20));
  EXPECT_EQ(d.rule, 1);
  EXPECT_TRUE(d.lossy);
  EXPECT_EQ(d.dtype, DataType::kBfloat16);
  EXPECT_EQ(d.codec_dtype, Dtype::kBfloat16);
  // assume_dtype never overrides a known dtype: int32 data is not quantized as bfloat16.
  d = p->decide(msg(Collective::kAllToAll, DataType::kInt32, 1 << 20));
  EXPECT_EQ(d.rule, -1);
  // Other collectives of unknown dtype: lossless.
  d = p->decide(msg(Collective::kAllReduce, DataType::kUnknown, 1 << 20));
  EXPECT_EQ(d.rule, 2);
  EXPECT_EQ(d.params->codec, CodecId::kLossless);
}

TEST(Decide, BytesUseTheCallSizeWhenKnown) {
  auto p = parse(
      R"({"version": 1, "rules": [{"match": {"min_bytes": 1000000, "max_bytes": 2000000}, "codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 524288);  // one 512 KiB step ...
  m.coll_bytes = 1500000;                                                   // ... of a 1.5 MB call
  EXPECT_EQ(p->decide(m).rule, 0);
  m.coll_bytes = 0;  // chain unavailable: the message's own size
  EXPECT_EQ(p->decide(m).rule, -1);
  m.bytes = 1000000;
  EXPECT_EQ(p->decide(m).rule, 0);
  m.bytes = 2000001;
  EXPECT_EQ(p->decide(m).rule, -1);
}

TEST(Decide, NranksRangeListAndUnknown) {
  auto p = parse(R"({"version": 1, "rules": [
      {"name": "range", "match": {"nranks": {"min": 4, "max": 8}}, "codec": "lossless"},
      {"name": "list", "match": {"nranks": [2, 16]}, "codec": "lossless", "checksum": true},
      {"name": "min", "match": {"nranks": {"min": 100}}, "codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 4096);
  auto rule_for = [&](int32_t n) {
    m.nranks = n;
    return p->decide(m).rule;
  };
  EXPECT_EQ(rule_for(4), 0);
  EXPECT_EQ(rule_for(8), 0);
  EXPECT_EQ(rule_for(2), 1);
  EXPECT_EQ(rule_for(16), 1);
  EXPECT_EQ(rule_for(3), -1);
  EXPECT_EQ(rule_for(1000), 2);
  EXPECT_EQ(rule_for(0), -1);  // unknown never satisfies a constraint
}

TEST(Decide, CommPatternsResolveOncePerCommunicator) {
  auto p = parse(R"({"version": 1, "rules": [
      {"name": "dp", "match": {"comm": ["dp_*", "data"]}, "codec": "lossless"},
      {"name": "any", "match": {"collective": "allreduce"}, "codec": "raw"}]})");
  ASSERT_NE(p, nullptr);
  MessageMeta m = msg(Collective::kAllReduce, DataType::kFloat32, 4096);
  EXPECT_EQ(p->decide(m).rule, 1);  // unknown name: no match
  CommMatch dp = p->resolve_comm("dp_group_3");
  m.comm = &dp;
  EXPECT_EQ(p->decide(m).rule, 0);
  CommMatch data = p->resolve_comm("data");
  m.comm = &data;
  EXPECT_EQ(p->decide(m).rule, 0);
  CommMatch tp = p->resolve_comm("tp_0");
  m.comm = &tp;
  EXPECT_EQ(p->decide(m).rule, 1);
}

TEST(Decide, StreamMultiplier) {
  auto p =
      parse(R"({"version": 1, "rules": [{"match": {"collective": "alltoall"}, "codec": "quantize",
      "error_bound": {"mode": "abs", "value": 0.1}, "streams": [{"count": 1000, "multiplier": 0.25}]}]})");
  ASSERT_NE(p, nullptr);
  MessageMeta m = msg(Collective::kAllToAll, DataType::kFloat32, 4000);
  m.count = 1000;
  EXPECT_DOUBLE_EQ(p->decide(m).eb_multiplier, 0.25);
  m.count = 999;
  EXPECT_DOUBLE_EQ(p->decide(m).eb_multiplier, 1.0);
}

TEST(Decide, ScheduleMultiplier) {
  EbSchedule none;
  EXPECT_DOUBLE_EQ(schedule_multiplier(none, 5), 1.0);
  EbSchedule step{EbSchedule::Kind::kStep, 4.0, 10};
  EXPECT_DOUBLE_EQ(schedule_multiplier(step, 0), 4.0);
  EXPECT_DOUBLE_EQ(schedule_multiplier(step, 9), 4.0);
  EXPECT_DOUBLE_EQ(schedule_multiplier(step, 10), 1.0);
  EbSchedule lin{EbSchedule::Kind::kLinear, 3.0, 4};
  EXPECT_DOUBLE_EQ(schedule_multiplier(lin, 0), 3.0);
  EXPECT_DOUBLE_EQ(schedule_multiplier(lin, 2), 2.0);
  EXPECT_DOUBLE_EQ(schedule_multiplier(lin, 4), 1.0);
  EbSchedule lg{EbSchedule::Kind::kLog, 16.0, 4};
  EXPECT_DOUBLE_EQ(schedule_multiplier(lg, 0), 16.0);
  EXPECT_NEAR(schedule_multiplier(lg, 2), 4.0, 1e-12);
  EXPECT_DOUBLE_EQ(schedule_multiplier(lg, 100), 1.0);
}

TEST(Decide, MayCompressIsTrueWhenSomeDtypeWouldBe) {
  auto p = parse(R"({"version": 1, "rules": [
      {"match": {"collective": "allreduce", "dtype": "float32", "min_bytes": 1024}, "codec": "quantize",
       "error_bound": {"mode": "rel", "value": 0.01}}]})");
  ASSERT_NE(p, nullptr);
  MessageMeta m = msg(Collective::kAllReduce, DataType::kUnknown, 4096, Proto::kLL);
  EXPECT_TRUE(p->may_compress(m));  // float32 would be, even though proto here is LL
  m.dtype = DataType::kInt32;
  EXPECT_FALSE(p->may_compress(m));  // a known dtype is used as is
  m.dtype = DataType::kUnknown;
  m.coll_bytes = m.bytes = 100;
  EXPECT_FALSE(p->may_compress(m));
  m.collective = Collective::kAllGather;
  m.coll_bytes = m.bytes = 4096;
  EXPECT_FALSE(p->may_compress(m));
}

TEST(Decide, OffPolicyNeverCompresses) {
  auto p = parse(R"({"version": 1, "rules": []})");
  ASSERT_NE(p, nullptr);
  for (int c = 0; c < kNumCollectives; ++c) {
    for (int d = 0; d < kNumDataTypes; ++d) {
      EXPECT_TRUE(
          p->decide(msg(static_cast<Collective>(c), static_cast<DataType>(d), 1 << 24)).is_raw());
    }
  }
}

}  // namespace
