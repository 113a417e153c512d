// The built-in default policy is the file users read: config/default.json.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "plugin/policy/policy_load.h"

namespace {

using namespace squeeze::policy;

TEST(DefaultPolicy, EmbeddedTextEqualsConfigDefaultJson) {
  std::ifstream in(std::string(SQUEEZE_SOURCE_DIR) + "/config/default.json", std::ios::binary);
  ASSERT_TRUE(in);
  std::ostringstream s;
  s << in.rdbuf();
  EXPECT_EQ(std::string(default_policy_text()), s.str())
      << "plugin/policy/default_policy.cc and config/default.json differ: edit both";
}

TEST(DefaultPolicy, IsValidAndBitExact) {
  std::string error;
  auto p = load_policy(nullptr, &error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_EQ(p->source(), "(built-in default)");
  for (const Rule& r : p->rules())
    EXPECT_FALSE(r.action.lossy()) << r.name << ": the default must never be lossy";
  EXPECT_FALSE(p->default_action().lossy());
}

TEST(DefaultPolicy, PathSelectsTheFile) {
  std::string error;
  auto p = load_policy((std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json").c_str(), &error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_TRUE(p->rules().empty());
  EXPECT_EQ(load_policy("/nonexistent/policy.json", &error), nullptr);
  EXPECT_EQ(error, "policy /nonexistent/policy.json: cannot open: No such file or directory");
  auto d = load_policy("", &error);  // unset: the default
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->source(), "(built-in default)");
}

}  // namespace
