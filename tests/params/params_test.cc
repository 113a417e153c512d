// The parameter table: every variable validates, bad SQUEEZE_* values are errors that name
// the variable, bad NCCL_*/launcher values are skipped with a warning, and the README's
// table is the table's own markdown.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/params/params.h"

namespace squeeze::params {
namespace {

Settings from_map(const std::map<std::string, std::string>& env) {
  return Settings::from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// A value the entry's type refuses (kText accepts anything, so it has none).
const char* bad_value(const Spec& s) {
  switch (s.type) {
    case Type::kInt: return "12abc";
    case Type::kNumber: return "fast";
    case Type::kBool: return "maybe";
    case Type::kChoice: return "bogus";
    case Type::kText: return nullptr;
  }
  return nullptr;
}

TEST(Params, DefaultsApplyWhenNothingIsSet) {
  const Settings st = from_map({});
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(st.warnings().empty());
  EXPECT_FALSE(st.is_set(Id::kThreads));
  EXPECT_EQ(st.text(Id::kTransport), "auto");
  EXPECT_TRUE(st.flag(Id::kBypass));
  EXPECT_FALSE(st.flag(Id::kGpuStaging));
  EXPECT_EQ(st.integer(Id::kTcpTimeoutMs), 10000);
  EXPECT_EQ(st.integer(Id::kIbGidIndex), -1);
  EXPECT_EQ(st.text(Id::kUcxLibrary), "libucp.so.0");
  EXPECT_EQ(st.integer_or(Id::kThreads, 7), 7);
}

// One bad value for each SQUEEZE_* variable that has a type to violate: an error naming the
// variable and the value, and the setting is not applied.
TEST(Params, EveryBadSqueezeValueIsAnErrorNamingTheVariable) {
  int checked = 0;
  for (const Spec& s : kSpecs) {
    const char* bad = bad_value(s);
    if (bad == nullptr || !std::string(s.name).starts_with("SQUEEZE_")) continue;
    SCOPED_TRACE(s.name);
    const Settings st = from_map({{s.name, bad}});
    ASSERT_EQ(st.errors().size(), 1u);
    EXPECT_NE(st.errors()[0].find(s.name), std::string::npos) << st.errors()[0];
    EXPECT_NE(st.errors()[0].find(bad), std::string::npos) << st.errors()[0];
    EXPECT_FALSE(st.is_set(s.id));
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(Params, MessagesSayWhatIsAccepted) {
  EXPECT_EQ(from_map({{"SQUEEZE_THREADS", "65"}}).errors().at(0),
            "SQUEEZE_THREADS='65' is outside [0, 64]");
  EXPECT_EQ(from_map({{"SQUEEZE_TRANSPORT", "rdma"}}).errors().at(0),
            "SQUEEZE_TRANSPORT='rdma' is not one of auto, tcp, ucx, ib");
  EXPECT_NE(from_map({{"SQUEEZE_BYPASS", "auto"}}).errors().at(0).find("0/1, off/on"),
            std::string::npos);
  EXPECT_NE(from_map({{"SQUEEZE_TCP_TIMEOUT_MS", "10s"}}).errors().at(0).find("whole number"),
            std::string::npos);
}

// The transport variables' bounds, as the transports checked them before the table owned them
// (tests deleted with transport/env_int.cc): a value outside them stops the plugin.
TEST(Params, TransportBoundsAreErrorsNamingTheVariable) {
  EXPECT_EQ(from_map({{"SQUEEZE_TCP_TIMEOUT_MS", "10s"}}).errors().at(0),
            "SQUEEZE_TCP_TIMEOUT_MS='10s' is not a whole number (expected one in [1, 1073741823])");
  // 0 is not "no timeout": TCP_USER_TIMEOUT=0 would silently fall back to the kernel's
  // default (minutes), so the documented range starts at 1.
  EXPECT_EQ(from_map({{"SQUEEZE_TCP_TIMEOUT_MS", "0"}}).errors().at(0),
            "SQUEEZE_TCP_TIMEOUT_MS='0' is outside [1, 1073741823]");
  EXPECT_TRUE(from_map({{"SQUEEZE_TCP_TIMEOUT_MS", "1073741823"}}).ok());
  EXPECT_EQ(from_map({{"SQUEEZE_TCP_KEEPIDLE_S", "40000"}}).errors().at(0),
            "SQUEEZE_TCP_KEEPIDLE_S='40000' is outside [1, 32767]");
  EXPECT_EQ(from_map({{"SQUEEZE_IB_QPS_PER_CONNECTION", "9"}}).errors().at(0),
            "SQUEEZE_IB_QPS_PER_CONNECTION='9' is outside [1, 8]");
  EXPECT_EQ(from_map({{"SQUEEZE_IB_QPS_PER_CONN", "9"}}).errors().at(0),
            "SQUEEZE_IB_QPS_PER_CONN='9' is outside [1, 8]")
      << "the deprecated name is still a SQUEEZE_ variable: an error, not a warning";
  const Settings st = from_map({{"SQUEEZE_IB_QPS_PER_CONN", "4"}});
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.integer(Id::kIbQpsPerConnection), 4);
  EXPECT_STREQ(st.source(Id::kIbQpsPerConnection), "SQUEEZE_IB_QPS_PER_CONN");
}

TEST(Params, SwitchesMeanTheSameEverywhere) {
  for (const char* on : {"1", "on", "ON", "true", "yes"}) {
    SCOPED_TRACE(on);
    const Settings st = from_map({{"SQUEEZE_GPU_STAGING", on}, {"SQUEEZE_PROFILER", on}});
    EXPECT_TRUE(st.ok());
    EXPECT_TRUE(st.flag(Id::kGpuStaging));
    EXPECT_TRUE(st.flag(Id::kProfiler));
  }
  for (const char* off : {"0", "off", "Off", "false", "no"}) {
    SCOPED_TRACE(off);
    const Settings st = from_map({{"SQUEEZE_BYPASS", off}, {"SQUEEZE_PROFILER", off}});
    EXPECT_TRUE(st.ok());
    EXPECT_FALSE(st.flag(Id::kBypass));
    EXPECT_FALSE(st.flag(Id::kProfiler));
  }
}

TEST(Params, ChoicesIgnoreCaseAndKeepTheTablesSpelling) {
  const Settings st =
      from_map({{"SQUEEZE_QUANTIZE_SIMD", "AVX2"}, {"SQUEEZE_SOCKET_FAMILY", "af_inet6"}});
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.text(Id::kQuantizeSimd), "avx2");
  EXPECT_EQ(st.text(Id::kSocketFamily), "AF_INET6");
}

TEST(Params, SqueezeNameWinsOverNcclAndEmptyIsUnset) {
  Settings st = from_map({{"SQUEEZE_SOCKET_IFNAME", "eth"}, {"NCCL_SOCKET_IFNAME", "ib"}});
  EXPECT_EQ(st.text(Id::kSocketIfname), "eth");
  EXPECT_STREQ(st.source(Id::kSocketIfname), "SQUEEZE_SOCKET_IFNAME");
  st = from_map({{"SQUEEZE_SOCKET_IFNAME", ""}, {"NCCL_SOCKET_IFNAME", "ib"}});
  EXPECT_EQ(st.text(Id::kSocketIfname), "ib");
  EXPECT_STREQ(st.source(Id::kSocketIfname), "NCCL_SOCKET_IFNAME");
}

// NCCL's convention for its own variables: a bad value is reported and skipped.
TEST(Params, BadNcclOrLauncherValuesAreWarningsAndSkipped) {
  Settings st = from_map({{"NCCL_SOCKET_FAMILY", "inet6"}});
  EXPECT_TRUE(st.ok());
  ASSERT_EQ(st.warnings().size(), 1u);
  EXPECT_NE(st.warnings()[0].find("NCCL_SOCKET_FAMILY='inet6'"), std::string::npos);
  EXPECT_FALSE(st.is_set(Id::kSocketFamily));
  // A bad launcher variable falls through to the next one.
  st = from_map({{"LOCAL_WORLD_SIZE", "x"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.integer(Id::kLocalRanks), 4);
  EXPECT_STREQ(st.source(Id::kLocalRanks), "OMPI_COMM_WORLD_LOCAL_SIZE");
  // But a bad SQUEEZE_ value never falls through to NCCL's.
  st = from_map({{"SQUEEZE_SOCKET_FAMILY", "inet"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}});
  EXPECT_FALSE(st.ok());
  EXPECT_FALSE(st.is_set(Id::kSocketFamily));
}

// NCCL_IB_* variables Squeeze does not read are named at init (net.cc logs them).
TEST(Params, UnreadNcclIbVariablesAreFound) {
  const char* env[] = {
      "NCCL_IB_HCA=mlx5_0", "NCCL_IB_PKEY=1", "NCCL_IB_TIMEOUT=22", "NCCL_IB_ADAPTIVE_ROUTING=0",
      "NCCL_IBEXT=1",       "PATH=/bin",      "NCCL_IB_DISABLE",    nullptr};
  EXPECT_EQ(
      unread_variables(env, "NCCL_IB_"),
      (std::vector<std::string>{"NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_DISABLE", "NCCL_IB_PKEY"}));
  EXPECT_TRUE(unread_variables(nullptr, "NCCL_IB_").empty());
}

TEST(Params, SetOverridesOneEntryWithTheSameRules) {
  Settings st = from_map({});
  EXPECT_EQ(st.set(Id::kThreads, "3"), "");
  EXPECT_EQ(st.integer(Id::kThreads), 3);
  EXPECT_NE(st.set(Id::kThreads, "-1"), "");
  EXPECT_EQ(st.integer(Id::kThreads), 3);
}

TEST(Params, DefaultsAreValidValuesOfTheirType) {
  for (const Spec& s : kSpecs) {
    if (*s.value == '\0') continue;
    SCOPED_TRACE(s.name);
    Value v;
    EXPECT_EQ(parse_value(s, s.name, s.value, &v), "");
  }
}

// The README's table is generated: `squeeze-params --markdown` between the markers.
TEST(Params, ReadmeTableIsTheTablesMarkdown) {
  std::ifstream in(std::string(SQUEEZE_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const std::string begin = "<!-- params:begin (squeeze-params --markdown) -->\n";
  const std::string end = "<!-- params:end -->";
  const std::size_t b = readme.find(begin), e = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "README.md lacks the marker " << begin;
  ASSERT_NE(e, std::string::npos) << "README.md lacks the marker " << end;
  EXPECT_EQ(readme.substr(b + begin.size(), e - b - begin.size()), markdown_table())
      << "README.md's variable table differs from plugin/params/param_table.h: regenerate it "
         "with build/plugin/cli/squeeze-params --markdown";
}

}  // namespace
}  // namespace squeeze::params
