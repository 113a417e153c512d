// squeeze-nccl-perf's host-side logic, which decides what a GPU run reports: its options, the
// size list, the sweep's modes, the JSON rows the sweep summary reads back, and the
// run-directory files the ranks meet through. No GPU needed. (The bound each policy states and
// the checks that count #wrong are perf/common's, tested in perf/common/tests.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "perf/collective/data.h"
#include "perf/nccl/options.h"
#include "perf/nccl/paths.h"
#include "perf/nccl/rank_env.h"
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
  std::vector<std::string> args = {
      "squeeze-nccl-perf", "--sweep",  "-b",     "64K",      "--gpus", "0,1",
      "--collective",      "alltoall", "--json", "--plugin", "/x.so"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  Options o = parse_options(static_cast<int>(argv.size()), argv.data());
  EXPECT_TRUE(o.sweep);
  EXPECT_EQ(o.min_bytes, 64u << 10);
  EXPECT_EQ(o.gpus, (std::vector<int>{0, 1}));
  EXPECT_FALSE(o.do_allreduce);
  EXPECT_TRUE(o.do_alltoall);
  EXPECT_EQ(o.work_args,
            (std::vector<std::string>{"-b", "64K", "--collective", "alltoall", "--json"}));
}

// argv for parse_options.
Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "squeeze-nccl-perf");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

TEST(Options, NcclTestsFlagsHaveNcclTestsMeanings) {
  Options o = parse({"-b", "64K", "-e", "1M", "-f", "2", "-n", "7", "-w", "3", "-c", "1", "-d",
                     "half", "-o", "max", "-N", "3"});
  EXPECT_EQ(o.min_bytes, 64u << 10);
  EXPECT_EQ(o.max_bytes, 1u << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.iters, 7) << "-n is nccl-tests' iteration count";
  EXPECT_EQ(o.warmup, 3);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.dtype, compress::Dtype::kFloat16);
  EXPECT_EQ(o.op, RedOp::kMax);
  EXPECT_EQ(o.nranks, 3) << "ranks are -N / --nranks";
  // Rank processes get the work options verbatim; the launcher adds -N, --rank and the rest.
  EXPECT_EQ(o.work_args,
            (std::vector<std::string>{"-b", "64K", "-e", "1M", "-f", "2", "-n", "7", "-w", "3",
                                      "-c", "1", "-d", "half", "-o", "max"}));
  o = parse({"--iters", "4", "--warmup_iters", "1", "--datatype", "bfloat16", "--op", "avg",
             "--check", "0"});
  EXPECT_EQ(o.iters, 4);
  EXPECT_EQ(o.warmup, 1);
  EXPECT_EQ(o.dtype, compress::Dtype::kBfloat16);
  EXPECT_EQ(o.op, RedOp::kAvg);
  EXPECT_FALSE(o.check);
  o = parse({"--dtype", "float32", "--warmup", "2", "--check"});  // the names it took before
  EXPECT_EQ(o.dtype, compress::Dtype::kFloat32);
  EXPECT_EQ(o.warmup, 2);
  EXPECT_TRUE(o.check);
}

TEST(Options, BadValuesExitTwoWithOneLine) {
  EXPECT_EXIT(parse({"-d", "int32"}), ::testing::ExitedWithCode(2),
              "^squeeze-nccl-perf: -d 'int32': expected one of float, half, bfloat16, float32 or "
              "float16\n$");
  EXPECT_EXIT(parse({"-o", "xor"}), ::testing::ExitedWithCode(2),
              "^squeeze-nccl-perf: -o 'xor': expected one of sum");
  EXPECT_EXIT(parse({"--data", "bogus"}), ::testing::ExitedWithCode(2),
              "--data 'bogus': expected one of embeddings");
  EXPECT_EXIT(parse({"-b", "abc"}), ::testing::ExitedWithCode(2),
              "-b 'abc': expected a size in bytes");
  EXPECT_EXIT(parse({"-N", "1"}), ::testing::ExitedWithCode(2),
              "-N '1': expected an integer from 2 to 64");
  EXPECT_EXIT(parse({"--bogus"}), ::testing::ExitedWithCode(2), "unknown option '--bogus'");
}

TEST(Options, RouteCollNetReachesTheRanksAndRefusesProd) {
  Options o = parse({"--route", "collnet", "--collective", "allreduce", "-o", "max"});
  EXPECT_TRUE(o.collnet);
  EXPECT_EQ(o.work_args, (std::vector<std::string>{"--route", "collnet", "--collective",
                                                   "allreduce", "-o", "max"}))
      << "each rank states the collective network's bound, so it must know the route";
  EXPECT_FALSE(parse({}).collnet) << "the ring is the default";
  EXPECT_EXIT(parse({"--route", "collnet", "-o", "prod"}), ::testing::ExitedWithCode(2),
              "--route collnet: the collective network reduces sum, avg, min and max, not prod");
  EXPECT_EXIT(parse({"--route", "tree"}), ::testing::ExitedWithCode(2),
              "--route 'tree': expected one of ring or collnet");
}

const char* no_env(const char*) { return nullptr; }
const char* user_algo(const char* k) { return std::strcmp(k, "NCCL_ALGO") == 0 ? "Tree" : nullptr; }

TEST(RankEnv, CollNetRouteTurnsCollNetOnForPluginModesOnly) {
  Options o;
  o.collnet = true;
  const Mode plugin{"raw", false, std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json"};
  const Mode socket{"socket", true, ""};
  auto env = mode_env(o, plugin, "/p.so", "/run", 1, 42, no_env);
  EXPECT_EQ(env["NCCL_COLLNET_ENABLE"], "1");
  EXPECT_EQ(env["NCCL_ALGO"], kCollNetAlgo);
  EXPECT_EQ(env["NCCL_NET"], "Squeeze");
  EXPECT_EQ(env["NCCL_HOSTID"], "squeeze-nccl-perf-42-rank1") << "every rank a node of its own";
  env = mode_env(o, socket, "/p.so", "/run", 1, 42, no_env);
  EXPECT_EQ(env["NCCL_COLLNET_ENABLE"], "0") << "NCCL's Socket transport has no CollNet";
  EXPECT_EQ(env["NCCL_ALGO"], "Ring");
  o.collnet = false;
  env = mode_env(o, plugin, "/p.so", "/run", 0, 42, no_env);
  EXPECT_EQ(env["NCCL_COLLNET_ENABLE"], "0");
  EXPECT_EQ(env["NCCL_ALGO"], "Ring");
  o.collnet = true;
  env = mode_env(o, plugin, "/p.so", "/run", 0, 42, user_algo);
  EXPECT_EQ(env["NCCL_ALGO"], "Tree") << "the user's NCCL_ALGO wins";
}

TEST(Report, ACollNetRowTheCollectiveNetworkDidNotCarryFailsTheCheck) {
  Row r;
  r.mode = "raw";
  r.collective = "allreduce";
  r.bytes = 1 << 20;
  r.route = "collnet";
  r.have_ratio = true;
  r.handed = 2u << 20;
  r.wire = 2u << 20;
  r.collnet_handed = 0;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(row_passes(r));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("NCCL did not use CollNet"),
            std::string::npos);
  r.collnet_handed = r.handed;
  EXPECT_TRUE(row_passes(r));
  RunInfo info;
  Row back;
  ASSERT_TRUE(parse_row_json(row_json(r, info), &back));
  EXPECT_EQ(back.route, "collnet");
  EXPECT_EQ(back.collnet_handed, r.collnet_handed);
  r.route = "ring";
  r.collnet_handed = 0;
  EXPECT_TRUE(row_passes(r)) << "the ring needs no CollNet bytes";
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
  EXPECT_TRUE(file_exists(default_source_dir() + "/perf/nccl/policies/quantize.json"))
      << default_source_dir();
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

TEST(Report, TableParsesAsNcclTestsOutput) {
  // The rows squeeze-nccl-perf prints (no GPU needed to print them), read back by a parser
  // written for nccl-tests' output.
  if (std::string(SQUEEZE_PYTHON3).empty()) GTEST_SKIP() << "no python3";
  const std::string path = "/tmp/squeeze-nccl-table-" + std::to_string(getpid()) + ".txt";
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ResultTable table(f);
  Row r;
  r.collective = "allreduce";
  r.bytes = 1 << 20;
  r.count = 1 << 18;
  r.type = "float";
  r.redop = "sum";
  r.time_us = 123.456;
  r.algbw = 8.5;
  r.busbw = 8.5;
  r.wrong = 0;
  r.have_ratio = true;
  r.ratio = 1.84;
  r.max_err = 2.5e-4;
  r.bound = "rel=0.001";
  r.agree = 1;
  table.header();
  table.row(table_row(r));
  r.bytes = 4 << 20;
  r.count = 1 << 20;
  r.wrong = -1;  // threshold: no bound stated
  r.bound = "none(threshold)";
  r.time_us = 12345.6;
  table.row(table_row(r));
  table.footer();
  std::fclose(f);
  const std::string out = path + ".json";
  const std::string cmd = std::string(SQUEEZE_PYTHON3) + " " + SQUEEZE_SOURCE_DIR +
                          "/perf/nccl_table.py --expect-columns ratio,max_err,bound,agree " + path +
                          " > " + out;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::vector<std::string> lines = read_lines("/tmp", out.substr(5));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("\"size\": 1048576, \"count\": 262144, \"type\": \"float\", \"redop\": "
                          "\"sum\", \"root\": -1"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("\"bound\": \"rel=0.001\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("\"wrong\": null"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("\"avg_busbw\": 8.5"), std::string::npos) << lines[2];
  std::remove(path.c_str());
  std::remove(out.c_str());
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
  struct stat st {};
  EXPECT_NE(stat(path.c_str(), &st), 0) << path << " should be removed";
}

}  // namespace
}  // namespace squeeze::perf::nccl
