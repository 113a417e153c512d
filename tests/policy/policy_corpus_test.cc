// Every malformed policy in tests/policy/corpus/bad is rejected with exactly one error that
// names the file and the JSON pointer of its fault (listed in expected.txt); every example
// policy users start from (config/*.json) is valid.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "plugin/policy/policy.h"
#include "plugin/policy/policy_load.h"

namespace fs = std::filesystem;
using squeeze::policy::load_policy;

namespace {

const fs::path kBad = fs::path(SQUEEZE_SOURCE_DIR) / "tests/policy/corpus/bad";

std::map<std::string, std::string> expected_pointers() {
  std::map<std::string, std::string> out;
  std::ifstream in(kBad / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string file, ptr;
    ls >> file >> ptr;
    out[file] = ptr;
  }
  return out;
}

TEST(PolicyCorpus, EveryBadPolicyIsRejectedWithItsPointer) {
  auto expected = expected_pointers();
  ASSERT_GT(expected.size(), 50u);
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(kBad)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    auto it = expected.find(name);
    ASSERT_NE(it, expected.end()) << "add " << name << " to expected.txt";
    std::string error;
    auto p = load_policy(entry.path().c_str(), &error);
    EXPECT_EQ(p, nullptr);
    // One fault per file, so exactly one line.
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    const std::string want = "policy " + entry.path().string() + ": " + it->second + ": ";
    EXPECT_EQ(error.rfind(want, 0), 0u) << "got: " << error << "\nwant prefix: " << want;
    EXPECT_GT(error.size(), want.size()) << "the reason is missing";
  }
  EXPECT_EQ(files, expected.size()) << "expected.txt lists files that do not exist";
}

TEST(PolicyCorpus, ExamplePoliciesAreValid) {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SQUEEZE_SOURCE_DIR) / "config")) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "policy.schema.json")
      continue;
    SCOPED_TRACE(entry.path().string());
    std::string error;
    EXPECT_NE(load_policy(entry.path().c_str(), &error), nullptr) << error;
    ++n;
  }
  EXPECT_GE(n, 5u);  // default, dlrm-alltoall, dp-allreduce, lossless, off
}

TEST(PolicyCorpus, FuzzSeedsIncludeTheExamples) {
  const fs::path seeds = fs::path(SQUEEZE_SOURCE_DIR) / "tests/fuzz/corpus/policy";
  for (const char* f :
       {"default.json", "dlrm-alltoall.json", "dp-allreduce.json", "lossless.json", "off.json"}) {
    EXPECT_TRUE(fs::exists(seeds / f)) << f;
  }
}

}  // namespace
