// tests/plugin_path.h: the tests find the plugin wherever the build folder lands (the GPU
// machine gets a carried copy at another path), and say which file they tried when it fails.
#include "tests/plugin_path.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using squeeze::testing::choose_plugin;
using squeeze::testing::PluginChoice;

// A scratch folder laid out as a carried build: <root>/tests (the executable's folder) and
// <root>/plugin; removed at the end.
class Layout {
 public:
  Layout() {
    char tmpl[] = "/tmp/squeeze-plugin-path-XXXXXX";
    root_ = mkdtemp(tmpl);
    fs::create_directories(root_ / "tests");
    fs::create_directories(root_ / "plugin");
  }
  ~Layout() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  Layout(const Layout&) = delete;
  Layout& operator=(const Layout&) = delete;
  std::string exe_dir() const { return (root_ / "tests").string(); }
  std::string touch(const std::string& rel) const {
    const fs::path p = root_ / rel;
    std::ofstream(p) << "not a real library\n";
    return p.string();
  }

 private:
  fs::path root_;
};

std::string canonical(const std::string& p) { return fs::weakly_canonical(p).string(); }

TEST(PluginPath, TheEnvironmentVariableComesFirst) {
  Layout l;
  l.touch("plugin/libnccl-net-squeeze.so");
  const PluginChoice c = choose_plugin("/elsewhere/libmine.so", l.exe_dir(), "/compiled/lib.so");
  EXPECT_EQ(c.path, "/elsewhere/libmine.so");
  EXPECT_NE(c.source.find("SQUEEZE_TEST_PLUGIN"), std::string::npos) << c.source;
  // Used as given, even though it is missing: the user asked for that file.
  EXPECT_NE(c.tried.find("/elsewhere/libmine.so (missing)"), std::string::npos) << c.tried;
}

TEST(PluginPath, AnEmptyVariableCountsAsUnset) {
  Layout l;
  const std::string beside = l.touch("plugin/libnccl-net-squeeze.so");
  const PluginChoice c = choose_plugin("", l.exe_dir(), "/compiled/lib.so");
  EXPECT_EQ(canonical(c.path), canonical(beside));
}

TEST(PluginPath, TheBuildLayoutNextToTheTestComesBeforeTheCompiledPath) {
  Layout l;
  const std::string beside = l.touch("plugin/libnccl-net-squeeze.so");
  l.touch("tests/libnccl-net-squeeze.so");
  const PluginChoice c = choose_plugin(nullptr, l.exe_dir(), SQUEEZE_PLUGIN_PATH);
  EXPECT_EQ(canonical(c.path), canonical(beside));
  EXPECT_NE(c.source.find("../plugin"), std::string::npos) << c.source;
}

TEST(PluginPath, ThenTheTestsOwnFolder) {
  Layout l;
  const std::string same = l.touch("tests/libnccl-net-squeeze.so");
  const PluginChoice c = choose_plugin(nullptr, l.exe_dir(), SQUEEZE_PLUGIN_PATH);
  EXPECT_EQ(canonical(c.path), canonical(same));
  EXPECT_NE(c.tried.find("/../plugin/libnccl-net-squeeze.so (missing)"), std::string::npos)
      << c.tried;
}

TEST(PluginPath, TheCompiledPathIsTheLastResortAndEveryCandidateIsNamed) {
  Layout l;
  const PluginChoice c = choose_plugin(nullptr, l.exe_dir(), "/compiled/libnccl-net-squeeze.so");
  EXPECT_EQ(c.path, "/compiled/libnccl-net-squeeze.so");
  EXPECT_NE(c.source.find("SQUEEZE_PLUGIN_PATH"), std::string::npos) << c.source;
  EXPECT_NE(c.tried.find(l.exe_dir() + "/../plugin/libnccl-net-squeeze.so (missing)"),
            std::string::npos)
      << c.tried;
  EXPECT_NE(c.tried.find(l.exe_dir() + "/libnccl-net-squeeze.so (missing)"), std::string::npos)
      << c.tried;
  EXPECT_NE(c.tried.find("/compiled/libnccl-net-squeeze.so (missing)"), std::string::npos)
      << c.tried;
}

TEST(PluginPath, AFailedDlopenSaysWhichFileAndWhy) {
  setenv("SQUEEZE_TEST_PLUGIN", "/nonexistent/squeeze/libnccl-net-squeeze.so", 1);
  std::string why;
  void* lib = squeeze::testing::dlopen_plugin(&why);
  unsetenv("SQUEEZE_TEST_PLUGIN");
  EXPECT_EQ(lib, nullptr);
  EXPECT_NE(why.find("dlopen /nonexistent/squeeze/libnccl-net-squeeze.so"), std::string::npos)
      << why;
  EXPECT_NE(why.find("$SQUEEZE_TEST_PLUGIN"), std::string::npos) << why;
  EXPECT_NE(why.find("No such file"), std::string::npos) << why;
}

// The file dlopen loaded is the one the lookup chose. tests/plugin/plugin_path_layout_test.sh
// runs this test from copies of the executable in carried layouts, with
// SQUEEZE_TEST_EXPECT_PLUGIN naming the copy of the plugin it must find there.
TEST(PluginPath, LoadsTheFileItChose) {
  PluginChoice used;
  std::string why;
  void* lib = squeeze::testing::dlopen_plugin(&why, &used);
  ASSERT_NE(lib, nullptr) << why;
  void* table = dlsym(lib, "ncclNetPlugin_v11");
  ASSERT_NE(table, nullptr);
  Dl_info info{};
  ASSERT_NE(dladdr(table, &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  EXPECT_EQ(canonical(info.dli_fname), canonical(used.path)) << "chosen by " << used.source;
  if (const char* expect = getenv("SQUEEZE_TEST_EXPECT_PLUGIN");
      expect != nullptr && *expect != '\0') {
    EXPECT_EQ(canonical(used.path), canonical(expect))
        << "chosen by " << used.source << "; looked at " << used.tried;
  }
  std::printf("plugin: %s (chosen by %s)\n", used.path.c_str(), used.source.c_str());
}

}  // namespace
