// The parser reads what users write into the model decide() uses, and reports every problem
// of a file at once, each with the file, the JSON pointer and the reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plugin/policy/policy.h"

namespace {

using namespace squeeze::policy;
using squeeze::compress::BoundMode;
using squeeze::compress::CodecId;
using squeeze::compress::Dtype;

// The minimum shape from the issue, verbatim.
constexpr const char* kIssueExample = R"({ "version": 1,
  "rules": [
    { "name": "embeddings",
      "match": { "collective": ["alltoall"], "dtype": ["float32", "bfloat16"], "min_bytes": 65536 },
      "codec": "quantize", "error_bound": { "mode": "rel", "value": 0.01 }, "row_length": 128 },
    { "name": "gradients",
      "match": { "collective": ["allreduce"], "dtype": ["float32"] },
      "codec": "threshold", "keep": 0.01, "refresh_every": 1000 } ],
  "default": { "codec": "raw" } })";

std::shared_ptr<const Policy> parse_ok(const std::string& text) {
  std::vector<std::string> errors;
  auto p = Policy::parse(text, "test.json", &errors);
  EXPECT_NE(p, nullptr);
  for (const auto& e : errors) ADD_FAILURE() << e;
  return p;
}

std::vector<std::string> parse_errors(const std::string& text) {
  std::vector<std::string> errors;
  EXPECT_EQ(Policy::parse(text, "test.json", &errors), nullptr);
  return errors;
}

TEST(PolicyParse, IssueExample) {
  auto p = parse_ok(kIssueExample);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->rules().size(), 2u);
  const Rule& e = p->rules()[0];
  EXPECT_EQ(e.name, "embeddings");
  EXPECT_EQ(e.pointer, "/rules/0");
  EXPECT_FALSE(e.match.any_collective);
  EXPECT_TRUE(e.match.collectives.test(static_cast<std::size_t>(Collective::kAllToAll)));
  EXPECT_EQ(e.match.collectives.count(), 1u);
  EXPECT_TRUE(e.match.dtypes.test(static_cast<std::size_t>(DataType::kFloat32)));
  EXPECT_TRUE(e.match.dtypes.test(static_cast<std::size_t>(DataType::kBfloat16)));
  EXPECT_EQ(e.match.dtypes.count(), 2u);
  EXPECT_EQ(e.match.min_bytes, 65536u);
  EXPECT_TRUE(e.match.any_proto);
  EXPECT_FALSE(e.action.raw);
  EXPECT_EQ(e.action.params.codec, CodecId::kQuantize);
  EXPECT_EQ(e.action.params.quantize.mode, BoundMode::kRel);
  EXPECT_DOUBLE_EQ(e.action.params.quantize.error_bound, 0.01);
  EXPECT_EQ(e.action.params.quantize.row_length, 128u);
  EXPECT_EQ(e.action.fallback, Fallback::kRaw);
  const Rule& g = p->rules()[1];
  EXPECT_EQ(g.action.params.codec, CodecId::kThreshold);
  EXPECT_DOUBLE_EQ(g.action.params.threshold.keep, 0.01);
  EXPECT_EQ(g.action.params.threshold.refresh_every, 1000u);
  EXPECT_TRUE(p->default_action().raw);
  EXPECT_TRUE(p->tuner_enabled());  // on unless the policy says otherwise
  EXPECT_EQ(p->source(), "test.json");
}

TEST(PolicyParse, EveryExtensionField) {
  auto p = parse_ok(R"({
    "version": 1, "tuner": false, "description": "all fields",
    "rules": [
      { "name": "q", "description": "d",
        "match": { "collective": "alltoall", "dtype": "float16", "proto": ["simple"], "min_bytes": 1e3,
                   "max_bytes": 1048576, "nranks": {"min": 2, "max": 64}, "comm": ["dlrm_*", "emb"] },
        "codec": "quantize", "error_bound": {"mode": "rel_row", "value": 0.5}, "row_length": 64,
        "dedupe_rows": true, "eb_schedule": {"kind": "log", "start": 4, "messages": 100},
        "streams": [{"count": 4096, "multiplier": 0.5}], "fallback": "lossless", "checksum": true,
        "assume_dtype": "float16" },
      { "name": "t", "match": { "collective": ["allreduce"], "nranks": [2, 4, 8] },
        "codec": "threshold", "keep": 1, "refresh_every": 10, "sample_size": 1000, "value_dtype": "bfloat16",
        "error_feedback": true, "consistency": "relaxed" },
      { "name": "c", "match": { "nranks": 16 }, "codec": "cast", "to": "float16" },
      { "name": "l", "codec": "lossless" } ],
    "default": { "codec": "raw" } })");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->tuner_enabled());
  const Rule& q = p->rules()[0];
  EXPECT_EQ(q.match.min_bytes, 1000u);  // an integral float is an integer
  EXPECT_EQ(q.match.max_bytes, 1048576u);
  EXPECT_TRUE(q.match.protos.test(static_cast<std::size_t>(Proto::kSimple)));
  EXPECT_EQ(q.match.nranks_min, 2);
  EXPECT_EQ(q.match.nranks_max, 64);
  EXPECT_EQ(q.match.comm_patterns, (std::vector<std::string>{"dlrm_*", "emb"}));
  EXPECT_EQ(q.action.params.quantize.mode, BoundMode::kRelRow);
  EXPECT_TRUE(q.action.params.quantize.dedupe_rows);
  EXPECT_EQ(q.action.schedule.kind, EbSchedule::Kind::kLog);
  EXPECT_DOUBLE_EQ(q.action.schedule.start, 4.0);
  EXPECT_EQ(q.action.schedule.messages, 100u);
  ASSERT_EQ(q.action.streams.size(), 1u);
  EXPECT_EQ(q.action.streams[0].count, 4096u);
  EXPECT_EQ(q.action.fallback, Fallback::kLossless);
  EXPECT_TRUE(q.action.params.checksum);
  EXPECT_EQ(q.action.fallback_params.codec, CodecId::kLossless);
  EXPECT_TRUE(q.action.fallback_params.checksum);
  EXPECT_EQ(q.action.assume_dtype, DataType::kFloat16);
  const Rule& t = p->rules()[1];
  EXPECT_EQ(t.match.nranks_list, (std::vector<int32_t>{2, 4, 8}));
  EXPECT_EQ(t.action.params.threshold.sample_size, 1000u);
  EXPECT_EQ(t.action.params.threshold.value_dtype, Dtype::kBfloat16);
  EXPECT_TRUE(t.action.params.threshold.error_feedback);
  EXPECT_EQ(t.action.consistency, Consistency::kRelaxed);
  EXPECT_EQ(p->rules()[2].match.nranks_list, (std::vector<int32_t>{16}));
  EXPECT_EQ(p->rules()[2].action.params.cast.to, Dtype::kFloat16);
  EXPECT_EQ(p->rules()[3].name, "l");
}

TEST(PolicyParse, DefaultsWhenOmitted) {
  auto p = parse_ok(
      R"({"version": 1, "rules": [{"match": {"collective": "allreduce"}, "codec": "threshold", "keep": 0.1},
                                            {"codec": "cast"}]})");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->rules()[0].name, "rule0");
  EXPECT_EQ(p->rules()[1].name, "rule1");
  EXPECT_TRUE(p->rules()[1].match.any_collective);
  EXPECT_TRUE(p->rules()[1].match.any_dtype);
  EXPECT_TRUE(p->rules()[1].match.comm_patterns.empty());
  EXPECT_EQ(p->rules()[0].action.params.threshold.refresh_every, 1000u);
  EXPECT_EQ(p->rules()[0].action.consistency, Consistency::kBitwise);
  EXPECT_EQ(p->rules()[1].action.params.cast.to, Dtype::kBfloat16);
  EXPECT_TRUE(p->default_action().raw);  // no "default": raw
}

TEST(PolicyParse, ReportsEveryProblemWithFileAndPointer) {
  auto errors = parse_errors(R"({"version": 1, "rules": [
      {"match": {"collective": "allreduce"}, "codec": "threshold", "keep": 0, "refresh_every": 0},
      {"match": {"collective": "alltoall"}, "codec": "quantize", "error_bound": {"mode": "abs", "value": -1}},
      {"codec": "gzip"} ], "default": {"codec": "raw"}, "extra": 1})");
  ASSERT_EQ(errors.size(), 5u);
  EXPECT_EQ(errors[0],
            "policy test.json: /extra: unknown key; allowed here: \"$schema\", \"description\", "
            "\"version\", "
            "\"tuner\", \"rules\" or \"default\"");
  EXPECT_EQ(errors[1], "policy test.json: /rules/0/keep: must be in (0, 1], not 0");
  EXPECT_EQ(
      errors[2],
      "policy test.json: /rules/0/refresh_every: must be an integer from 1 to 4294967295, not 0");
  EXPECT_EQ(errors[3], "policy test.json: /rules/1/error_bound/value: must be > 0, not -1");
  EXPECT_EQ(errors[4].rfind("policy test.json: /rules/2/codec: unknown codec \"gzip\"", 0), 0u)
      << errors[4];
}

TEST(PolicyParse, LossyOnIntegerOnlyDataNamesTheDtypes) {
  auto errors = parse_errors(R"({"version": 1, "rules": [
      {"match": {"dtype": ["int32", "int64"]}, "codec": "quantize", "error_bound": {"mode": "abs", "value": 1}}]})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("/rules/0/codec: lossy codec \"quantize\" can never apply"),
            std::string::npos)
      << errors[0];
  EXPECT_NE(errors[0].find("int32, int64"), std::string::npos) << errors[0];
}

TEST(PolicyParse, MixedDtypesWithLossyAreAllowed) {
  // Float messages are quantized; int32 ones take the fallback.
  auto p = parse_ok(
      R"({"version": 1, "rules": [{"match": {"dtype": ["int32", "float32"]}, "codec": "quantize",
      "error_bound": {"mode": "abs", "value": 1}}]})");
  EXPECT_NE(p, nullptr);
}

TEST(PolicyParse, AssumeDtypeMakesUnknownDataLossyCapable) {
  auto p = parse_ok(
      R"({"version": 1, "rules": [{"match": {"dtype": ["float32"]}, "assume_dtype": "float32",
      "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}}]})");
  EXPECT_NE(p, nullptr);
}

TEST(PolicyParse, TooManyRules) {
  std::string text = R"({"version": 1, "rules": [)";
  for (int i = 0; i <= kMaxRules; ++i)
    text += std::string(i ? "," : "") + R"({"match": {"min_bytes": )" + std::to_string(i) +
            R"(}, "codec": "raw"})";
  text += "]}";
  auto errors = parse_errors(text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "policy test.json: /rules: has 257 rules; at most 256 are allowed");
}

TEST(PolicyParse, InvalidJsonGivesLineAndColumn) {
  auto errors = parse_errors("{\n  \"version\": 1,\n  \"rules\": [,]\n}");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("policy test.json: (document): not valid JSON at line 3, column 13", 0),
            0u)
      << errors[0];
}

TEST(PolicyParse, DuplicateKeysAreErrorsNotSilentlyDropped) {
  auto errors = parse_errors(
      R"({"version": 1, "rules": [{"codec": "raw"}, {"match": {"min_bytes": 1, "min_bytes": 2}, "codec": "raw"}]})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("policy test.json: /rules/1/match/min_bytes: duplicate key", 0), 0u)
      << errors[0];
}

TEST(PolicyParse, EmptyAndGarbageInputs) {
  EXPECT_FALSE(parse_errors("").empty());
  EXPECT_FALSE(parse_errors("null").empty());
  EXPECT_FALSE(parse_errors("{}").empty());
  EXPECT_FALSE(parse_errors(std::string("{\"version\":1,\"rules\":[]}\0junk", 29)).empty());
}

}  // namespace
