// config/policy.schema.json describes exactly the keys and names the parser accepts, so
// editors that validate against the schema agree with the plugin.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "plugin/policy/names.h"
#include "plugin/policy/policy_keys.h"

namespace {

using nlohmann::json;
using namespace squeeze::policy;

json schema() {
  std::ifstream in(std::string(SQUEEZE_SOURCE_DIR) + "/config/policy.schema.json");
  EXPECT_TRUE(in);
  return json::parse(in);
}

template <typename Keys>
std::set<std::string> set_of(const Keys& keys) {
  return {keys.begin(), keys.end()};
}

std::set<std::string> props(const json& obj) {
  std::set<std::string> out;
  for (auto it = obj.at("properties").begin(); it != obj.at("properties").end(); ++it)
    out.insert(it.key());
  return out;
}

std::set<std::string> enum_of(const json& j) {
  std::set<std::string> out;
  for (const auto& v : j.at("enum")) out.insert(v.get<std::string>());
  return out;
}

TEST(Schema, KeysMatchTheParser) {
  json s = schema();
  EXPECT_EQ(s.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(props(s), set_of(keys::kTop));
  const json& defs = s.at("$defs");
  EXPECT_EQ(props(defs.at("action")), set_of(keys::kAction));
  EXPECT_EQ(props(defs.at("rule")), set_of(keys::kRuleOnly));
  EXPECT_EQ(defs.at("rule").at("$ref"), "#/$defs/action");
  EXPECT_EQ(props(defs.at("match")), set_of(keys::kMatch));
  EXPECT_EQ(props(defs.at("errorBound")), set_of(keys::kErrorBound));
  EXPECT_EQ(props(defs.at("ebSchedule")), set_of(keys::kEbSchedule));
  EXPECT_EQ(props(defs.at("stream")), set_of(keys::kStream));
  EXPECT_EQ(props(defs.at("nranksRange")), set_of(keys::kNranksRange));
  EXPECT_EQ(enum_of(defs.at("action").at("properties").at("codec")), set_of(keys::kCodecs));
}

TEST(Schema, NamesMatchTheParser) {
  json s = schema();
  const json& match = s.at("$defs").at("match").at("properties");
  std::set<std::string> collectives, dtypes, protos;
  for (int i = 1; i < kNumCollectives; ++i)
    collectives.insert(collective_name(static_cast<Collective>(i)));
  for (int i = 0; i < kNumDataTypes; ++i) dtypes.insert(dtype_name(static_cast<DataType>(i)));
  for (int i = 1; i < kNumProtos; ++i) protos.insert(proto_name(static_cast<Proto>(i)));
  EXPECT_EQ(enum_of(match.at("collective").at("oneOf")[0]), collectives);
  EXPECT_EQ(enum_of(match.at("dtype").at("oneOf")[0]), dtypes);
  EXPECT_EQ(enum_of(match.at("proto").at("oneOf")[0]), protos);
  dtypes.erase("unknown");
  EXPECT_EQ(enum_of(s.at("$defs").at("action").at("properties").at("assume_dtype")), dtypes);
}

TEST(Schema, ReadmeDocumentsEveryKey) {
  std::ifstream in(std::string(SQUEEZE_SOURCE_DIR) + "/config/README.md");
  ASSERT_TRUE(in);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& group :
       {set_of(keys::kTop), set_of(keys::kRuleOnly), set_of(keys::kAction), set_of(keys::kMatch),
        set_of(keys::kErrorBound), set_of(keys::kEbSchedule), set_of(keys::kStream)}) {
    for (const std::string& k : group) EXPECT_NE(text.find("`" + k + "`"), std::string::npos) << k;
  }
}

}  // namespace
