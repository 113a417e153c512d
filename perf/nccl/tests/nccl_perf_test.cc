// squeeze-nccl-perf's host-side logic, which decides what a GPU run reports: its options, the
// size list, the sweep's modes, the JSON rows the sweep summary reads back, and the
// run-directory files the ranks meet through. No GPU needed. (The bound each policy states and
// the checks that count #wrong are perf/common's, tested in perf/common/tests.)
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "perf/collective/data.h"
#include "perf/nccl/options.h"
#include "perf/nccl/paths.h"
#include "perf/nccl/report.h"
#include "perf/nccl/run_files.h"
#include "plugin/policy/policy_load.h"

namespace squeeze::perf::nccl {
namespace {

using compress::Dtype;

TEST(Options, SizesStepLikeNcclTests) {
  Options o;
  o.min_bytes = 1 << 20;
  o.max_bytes = 16 << 20;
  o.step_factor = 4;
  EXPECT_EQ(size_list(o), (std::vector<std::size_t>{1 << 20, 4 << 20, 16 << 20}));
  o.max_bytes = 10 << 20;
  EXPECT_EQ(size_list(o), (std::vector<std::size_t>{1 << 20, 4 << 20, 10 << 20}));
}

TEST(Options, SweepModesAndTheirPolicyFilesExist) {
  std::vector<Mode> modes;
  std::string error;
  ASSERT_TRUE(sweep_modes(SQUEEZE_SOURCE_DIR, "", &modes, &error)) << error;
  ASSERT_EQ(modes.size(), 6u);
  EXPECT_TRUE(modes[0].socket);
  for (const Mode& m : modes) {
    if (m.socket) continue;
    std::string perr;
    EXPECT_TRUE(policy::load_policy(m.policy.c_str(), &perr)) << m.name << ": " << perr;
  }
  ASSERT_TRUE(sweep_modes(SQUEEZE_SOURCE_DIR, "socket,quantize", &modes, &error));
  EXPECT_EQ(modes.size(), 2u);
  EXPECT_FALSE(sweep_modes(SQUEEZE_SOURCE_DIR, "socket,zstd", &modes, &error));
  EXPECT_NE(error.find("zstd"), std::string::npos);
}

TEST(Options, RankArgvKeepsOnlyWorkOptions) {
  std::vector<std::string> args = {"squeeze-nccl-perf", "--sweep", "-b", "64K", "--gpus", "0,1", "--collective",
                                   "alltoall", "--json", "--plugin", "/x.so"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o = parse_options(static_cast<int>(argv.size()), argv.data());
  EXPECT_TRUE(o.sweep);
  EXPECT_EQ(o.min_bytes, 64u << 10);
  EXPECT_EQ(o.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(o.do_allreduce);
  EXPECT_TRUE(o.do_alltoall);
  EXPECT_EQ(o.work_args, (std::vector<std::string>{"-b", "64K", "--collective", "alltoall", "--json"}));
}

TEST(Options, CollectiveChoiceIsSharedWithSqueezePerf) {
  bool ar = false, a2a = false;
  ASSERT_TRUE(parse_collective_choice("both", &ar, &a2a));
  EXPECT_TRUE(ar && a2a);
  ASSERT_TRUE(parse_collective_choice("allreduce", &ar, &a2a));
  EXPECT_TRUE(ar && !a2a);
  EXPECT_FALSE(parse_collective_choice("reduce", &ar, &a2a));
  EXPECT_TRUE(ar && !a2a) << "a bad name leaves the choice as it was";
}

TEST(Options, PolicyModeIsNamedAfterItsFile) {
  std::vector<std::string> args = {"squeeze-nccl-perf", "--policy", "config/dlrm-alltoall.json"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o = parse_options(static_cast<int>(argv.size()), argv.data());
  ASSERT_EQ(o.modes.size(), 1u);
  EXPECT_EQ(o.modes[0].name, "dlrm-alltoall");
  EXPECT_FALSE(o.modes[0].socket);
  EXPECT_EQ(o.modes[0].policy, "config/dlrm-alltoall.json");
}

TEST(Paths, BuildTreeExecutableFindsThePluginAndTheSourcesBesideIt) {
  // This test binary sits where squeeze-nccl-perf does (<build>/perf/), as in a carried copy.
  const std::string plugin = default_plugin_path();
  EXPECT_TRUE(file_exists(plugin)) << plugin;
  EXPECT_NE(plugin.find("/plugin/libnccl-net-squeeze.so"), std::string::npos) << plugin;
  EXPECT_TRUE(file_exists(default_source_dir() + "/perf/nccl/policies/quantize.json")) << default_source_dir();
}

TEST(Report, JsonRowsRoundTripAndBusBwFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor("allreduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("alltoall", 4), 0.75);
  Row r;
  r.mode = "quantize";
  r.collective = "alltoall";
  r.bytes = 1 << 20;
  r.busbw = 1.5;
  r.have_ratio = true;
  r.ratio = 7.25;
  r.wrong = -1;
  r.max_err = NAN;
  Row back;
  ASSERT_TRUE(parse_row_json(row_json(r, RunInfo{}), &back));
  EXPECT_EQ(back.mode, "quantize");
  EXPECT_EQ(back.bytes, r.bytes);
  EXPECT_DOUBLE_EQ(back.busbw, 1.5);
  EXPECT_TRUE(back.have_ratio);
  EXPECT_DOUBLE_EQ(back.ratio, 7.25);
  EXPECT_EQ(back.wrong, -1);
  EXPECT_TRUE(std::isnan(back.max_err));
  EXPECT_FALSE(parse_row_json("not json", &back));
}

TEST(RunFiles, PublishAwaitAppendAndCleanUp) {
  std::string path;
  {
    RunDir dir("", "x");
    path = dir.path();
    publish(path, "id.0", std::string("\0abc", 4));
    EXPECT_EQ(await(path, "id.0", 1), std::string("\0abc", 4));
    append_line(path, "rows.jsonl", "{\"a\":1}");
    append_line(path, "rows.jsonl", "{\"a\":2}");
    EXPECT_EQ(read_lines(path, "rows.jsonl").size(), 2u);
    try {
      await(path, "id.1", 0.05);
      ADD_FAILURE() << "await of a missing file returned";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + "/id.1"), std::string::npos) << e.what();
    }
  }
  struct stat st{};
  EXPECT_NE(stat(path.c_str(), &st), 0) << path << " should be removed";
}

}  // namespace
}  // namespace squeeze::perf::nccl
