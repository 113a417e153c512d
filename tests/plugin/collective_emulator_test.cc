// The collective emulator (perf/squeeze-perf) end to end: three local ranks run ring
// all-reduce and all-to-all through the built plugin and must get the exact result on every
// rank, and say so in JSON lines users parse. Skipped where the perf tools are not built
// (the sanitizer build sets SQUEEZE_BUILD_PERF=OFF).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

const std::string kTool = std::string(SQUEEZE_BINARY_DIR) + "/perf/squeeze-perf";

struct Outcome {
  int status = -1;  // exit code, or 128+signal
  std::string out, err;
};

// Runs squeeze-perf with `args`, collecting stdout and stderr; kills it after limit_s.
Outcome run_tool(const std::vector<std::string>& args, double limit_s = 60) {
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(kTool.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execv(kTool.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  Outcome o;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&o.out, &o.err};
  int open_fds = 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  while (open_fds > 0 && std::chrono::steady_clock::now() < deadline) {
    if (poll(fds, 2, 200) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  if (open_fds > 0) kill(pid, SIGKILL);  // over the limit: the test fails on the status
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int st = 0;
  waitpid(pid, &st, 0);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    if (!j.is_discarded()) rows.push_back(j);
  }
  return rows;
}

class CollectiveEmulator : public ::testing::Test {
 protected:
  // squeeze-perf -n N sets LOCAL_WORLD_SIZE, and ranks sharing few cores then get no codec
  // thread: one each keeps the worker path tested on any machine (one test sets 0).
  void SetUp() override {
    if (access(kTool.c_str(), X_OK) != 0)
      GTEST_SKIP() << kTool << " is not built (SQUEEZE_BUILD_PERF=OFF?)";
    setenv("SQUEEZE_THREADS", "1", 1);
  }
  void TearDown() override { unsetenv("SQUEEZE_THREADS"); }
};

// Every row of a raw or lossless run: exact on every rank, ranks agree, numbers present.
void expect_exact_rows(const std::vector<nlohmann::json>& rows, const std::string& type) {
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["bench"], "squeeze-perf");
    EXPECT_EQ(r["nranks"], 3);
    EXPECT_EQ(r["type"], type);
    EXPECT_EQ(r["bit_exact"], true);
    EXPECT_EQ(r["differing"], 0);
    EXPECT_EQ(r["max_abs_err"], 0.0);
    EXPECT_GT(r["time_us"].get<double>(), 0.0);
    EXPECT_GT(r["algbw_GBps"].get<double>(), 0.0);
    const double n = 3, factor = r["collective"] == "allreduce" ? 2 * (n - 1) / n : (n - 1) / n;
    EXPECT_NEAR(r["busbw_GBps"].get<double>(), r["algbw_GBps"].get<double>() * factor, 1e-9);
    if (r["collective"] == "allreduce")
      EXPECT_EQ(r["ranks_agree"], true);
    else
      EXPECT_TRUE(r["ranks_agree"].is_null());
  }
}

TEST_F(CollectiveEmulator, RawRunIsExactOnEveryRankForBothCollectives) {
  // Sizes from below one element per rank's segment up to several ring loops (a 32 KiB step
  // makes a loop 3 x 128 KiB), with empty slices, partial tail loops and multi-message peers.
  Outcome o = run_tool({"-N",          "3",
                        "--policy",    std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json",
                        "--check",     "--json",
                        "-b",          "8",
                        "-e",          "3M",
                        "-f",          "32",
                        "--step",      "32K",
                        "--p2p-chunk", "32K",
                        "--data",      "activations",
                        "--iters",     "2",
                        "--warmup",    "0",
                        "--timeout",   "30"});
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  auto rows = json_lines(o.out);
  std::set<std::string> seen;
  for (const auto& r : rows)
    seen.insert(r["collective"].get<std::string>() + "/" + std::to_string(r["size"].get<long>()));
  // 8 B all-to-all is below one float per peer and is skipped; all-to-all sizes are whole elements
  // per peer.
  EXPECT_EQ(seen, (std::set<std::string>{"allreduce/8", "allreduce/256", "allreduce/8192",
                                         "allreduce/262144", "allreduce/3145728", "alltoall/252",
                                         "alltoall/8184", "alltoall/262140", "alltoall/3145728"}));
  expect_exact_rows(rows, "float");
  for (const auto& r : rows)
    EXPECT_EQ(r["policy"].get<std::string>().find("off.json") != std::string::npos, true);
}

TEST_F(CollectiveEmulator, DefaultPolicyIsBitExactInBfloat16) {
  // The built-in policy is lossless only: whatever it compresses must come back bit for bit.
  Outcome o = run_tool({"-N", "3", "--check", "--json", "--dtype", "bfloat16", "-b", "1M", "-e",
                        "1M", "--iters", "1", "--warmup", "1", "--timeout", "30"});
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  auto rows = json_lines(o.out);
  ASSERT_EQ(rows.size(), 2u) << o.out;
  expect_exact_rows(rows, "bfloat16");
  for (const auto& r : rows) {
    // The plugin's own statistics were read; a lossless or raw run never grows the data much.
    ASSERT_FALSE(r["ratio"].is_null()) << r.dump();
    EXPECT_GT(r["ratio"].get<double>(), 0.9);
    EXPECT_EQ(r["ratio_source"], "plugin-stats");
  }
}

TEST_F(CollectiveEmulator, ProfilerChainCarriesTheDtypeToThePolicy) {
  // The DLRM policy quantizes float all-to-alls; only the profiler chain tells the plugin the
  // data is float32. SQUEEZE_BYPASS=off makes the plugin compress even where loopback is too
  // fast for compression to pay.
  const std::string policy = std::string(SQUEEZE_SOURCE_DIR) + "/config/dlrm-alltoall.json";
  setenv("SQUEEZE_BYPASS", "off", 1);
  Outcome on =
      run_tool({"-N", "2",       "--policy",    policy, "--collective", "alltoall", "--json",
                "-b", "1M",      "-e",          "1M",   "--iters",      "1",        "--warmup",
                "0",  "--check", "--max-error", "0.1",  "--timeout",    "30"});
  Outcome off =
      run_tool({"-N", "2",       "--policy", policy, "--collective", "alltoall", "--json",
                "-b", "1M",      "-e",       "1M",   "--iters",      "1",        "--warmup",
                "0",  "--check", "--chain",  "off",  "--timeout",    "30"});
  unsetenv("SQUEEZE_BYPASS");
  ASSERT_EQ(on.status, 0) << on.err << on.out;
  ASSERT_EQ(off.status, 0) << off.err << off.out;
  auto with_chain = json_lines(on.out), without = json_lines(off.out);
  ASSERT_EQ(with_chain.size(), 1u);
  ASSERT_EQ(without.size(), 1u);
  // Quantized: smaller on the wire, within the bound, not exact.
  EXPECT_EQ(with_chain[0]["chain"], true);
  EXPECT_GT(with_chain[0]["ratio"].get<double>(), 2.0) << with_chain[0].dump();
  EXPECT_GT(with_chain[0]["max_abs_err"].get<double>(), 0.0);
  EXPECT_LE(with_chain[0]["max_abs_err"].get<double>(), 0.1);
  // Without the chain the dtype is unknown: the rule's lossless fallback, bit-exact.
  EXPECT_EQ(without[0]["chain"], false);
  EXPECT_EQ(without[0]["bit_exact"], true) << without[0].dump();
}

TEST_F(CollectiveEmulator, GpuCopiesSendTheSameMessagesAndLandTheSameResults) {
  // --copies gpu moves the copies NCCL's GPU kernels make out of the timed region; the
  // plugin must see the same messages: raw stays exact on 3 ranks with odd sizes, and a
  // quantized run puts the same bytes on the wire with the same error as --copies cpu.
  Outcome raw = run_tool({"-N",           "3",
                          "--policy",     std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json",
                          "--check",      "--json",
                          "-b",           "8184",
                          "-e",           "3M",
                          "-f",           "24",
                          "--p2p-chunk",  "32K",
                          "--collective", "alltoall",
                          "--copies",     "gpu",
                          "--iters",      "2",
                          "--warmup",     "0",
                          "--timeout",    "30"});
  ASSERT_EQ(raw.status, 0) << raw.err << raw.out;
  auto rows = json_lines(raw.out);
  ASSERT_EQ(rows.size(), 3u) << raw.out;
  expect_exact_rows(rows, "float");
  for (const auto& r : rows) EXPECT_EQ(r["copies"], "gpu");

  const std::string policy = std::string(SQUEEZE_SOURCE_DIR) + "/config/dlrm-alltoall.json";
  setenv("SQUEEZE_BYPASS", "off", 1);
  std::vector<nlohmann::json> got[2];
  for (int g = 0; g < 2; ++g) {
    Outcome o =
        run_tool({"-N",        "2",           "--policy", policy,     "--collective",
                  "alltoall",  "--json",      "-b",       "1M",       "-e",
                  "1M",        "--iters",     "2",        "--warmup", "0",
                  "--check",   "--max-error", "0.1",      "--copies", g == 0 ? "cpu" : "gpu",
                  "--timeout", "30"});
    ASSERT_EQ(o.status, 0) << o.err << o.out;
    got[g] = json_lines(o.out);
    ASSERT_EQ(got[g].size(), 1u) << o.out;
  }
  unsetenv("SQUEEZE_BYPASS");
  EXPECT_EQ(got[0][0]["copies"], "cpu");
  EXPECT_EQ(got[1][0]["copies"], "gpu");
  EXPECT_GT(got[1][0]["ratio"].get<double>(), 2.0) << got[1][0].dump();
  EXPECT_EQ(got[1][0]["bytes_wire"], got[0][0]["bytes_wire"]);
  EXPECT_EQ(got[1][0]["max_abs_err"], got[0][0]["max_abs_err"]);
}

TEST_F(CollectiveEmulator, NcclTestsFlagsKeepNcclTestsMeanings) {
  // -n iterations, -w warm-up, -c check, -d datatype, -o reduction; ranks are -N.
  Outcome o = run_tool({"-N",
                        "3",
                        "-b",
                        "64K",
                        "-e",
                        "64K",
                        "-n",
                        "2",
                        "-w",
                        "0",
                        "-c",
                        "1",
                        "-d",
                        "bfloat16",
                        "-o",
                        "max",
                        "--collective",
                        "allreduce",
                        "--json",
                        "--policy",
                        std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json",
                        "--timeout",
                        "30"});
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  auto rows = json_lines(o.out);
  ASSERT_EQ(rows.size(), 1u) << o.out;
  EXPECT_EQ(rows[0]["nranks"], 3);
  EXPECT_EQ(rows[0]["iters"], 2);
  EXPECT_EQ(rows[0]["type"], "bfloat16");
  EXPECT_EQ(rows[0]["redop"], "max");
  EXPECT_EQ(rows[0]["bound"], "exact");
  EXPECT_EQ(rows[0]["wrong"], 0);
  EXPECT_EQ(rows[0]["ranks_agree"], true);
}

TEST_F(CollectiveEmulator, LossyResultsAreJudgedByTheStatedBound) {
  // -c 1 under a quantizing policy: the all-to-all is not bit-exact, and passes because every
  // element is within the bound the policy states (rel 0.01 x the schedule's start of 2).
  const std::string policy = std::string(SQUEEZE_SOURCE_DIR) + "/config/dlrm-alltoall.json";
  setenv("SQUEEZE_BYPASS", "off", 1);
  Outcome o = run_tool({"-N", "2", "--policy", policy, "--collective", "alltoall", "--json", "-b",
                        "1M", "-e", "1M", "-n", "1", "-w", "0", "-c", "1", "--timeout", "30"});
  unsetenv("SQUEEZE_BYPASS");
  ASSERT_EQ(o.status, 0) << o.err << o.out;
  auto rows = json_lines(o.out);
  ASSERT_EQ(rows.size(), 1u) << o.out;
  EXPECT_EQ(rows[0]["bound"], "rel=0.02");
  EXPECT_EQ(rows[0]["bit_exact"], false);
  EXPECT_GT(rows[0]["max_abs_err"].get<double>(), 0.0);
  EXPECT_EQ(rows[0]["wrong"], 0);
  EXPECT_GT(rows[0]["ratio"].get<double>(), 2.0);
}

TEST_F(CollectiveEmulator, BadOptionsAreNamed) {
  Outcome o = run_tool({"-N", "2", "--dtype", "int8"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--dtype 'int8'"), std::string::npos) << o.err;
  o = run_tool({"-N", "2", "--data", "nosuch"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--data 'nosuch': expected one of embeddings"), std::string::npos) << o.err;
  o = run_tool({"-N", "2", "--copies", "dma"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--copies 'dma'"), std::string::npos) << o.err;
  o = run_tool({"-N", "2", "--ifname", "bogus0"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--ifname 'bogus0': expected a network interface of this host (lo"),
            std::string::npos)
      << o.err;
  o = run_tool({"-N", "2", "--policy", "/nonexistent/policy.json"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("/nonexistent/policy.json"), std::string::npos) << o.err;
}

TEST_F(CollectiveEmulator, UnreachableRendezvousIsAClearErrorNotAHang) {
  // Port 1 on loopback: nobody listens, so rank 1 can never join.
  Outcome o = run_tool(
      {"--rank", "1", "--nranks", "2", "--rendezvous", "127.0.0.1:1", "--timeout", "1"}, 30);
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("cannot reach rank 0 at 127.0.0.1:1"), std::string::npos) << o.err;
}

// Writes a policy to a temporary file for one test.
std::string temp_policy(const std::string& name, const std::string& json) {
  std::string path = "/tmp/squeeze-emu-" + std::to_string(getpid()) + "-" + name + ".json";
  FILE* f = fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  fputs(json.c_str(), f);
  fclose(f);
  return path;
}

// Runs 3 ranks with the policy, compression forced (loopback is too fast for it to pay).
std::vector<nlohmann::json> run_codec(const std::string& policy,
                                      const std::vector<std::string>& extra) {
  setenv("SQUEEZE_BYPASS", "off", 1);
  std::vector<std::string> args = {"-N", "3",        "--policy", policy,      "--json",
                                   "-b", "1M",       "-e",       "1M",        "--iters",
                                   "1",  "--warmup", "1",        "--timeout", "60"};
  args.insert(args.end(), extra.begin(), extra.end());
  Outcome o = run_tool(args, 90);
  unsetenv("SQUEEZE_BYPASS");
  EXPECT_EQ(o.status, 0) << o.err << o.out;
  return json_lines(o.out);
}

TEST_F(CollectiveEmulator, QuantizeStaysWithinItsAbsoluteBoundOnBothCollectives) {
  const double eb = 0.01;
  std::string p = temp_policy("quantize", R"({"version": 1, "rules": [{"name": "q",
      "match": {"collective": ["alltoall", "allreduce"], "dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.01}}], "default": {"codec": "raw"}})");
  // All-reduce: the bound is budgeted over the ring's hops, and ranks stay bit-identical.
  auto rows = run_codec(p, {"--check", "--max-error", std::to_string(eb * 1.0001)});
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    EXPECT_LE(r["max_abs_err"].get<double>(), eb * 1.0001);
    EXPECT_GT(r["ratio"].get<double>(), 1.5);
    if (r["collective"] == "allreduce") {
      EXPECT_EQ(r["ranks_agree"], true);
    }
  }
  unlink(p.c_str());
}

// A rank pinned to one core has no codec threads: every encode and decode runs on the thread
// that tests the request (or closes the comm). Nothing may wait on a job nobody runs.
TEST_F(CollectiveEmulator, WithoutCodecThreadsEveryJobStillRunsAndStaysInBound) {
  std::string p = temp_policy("nothreads", R"({"version": 1, "rules": [{"name": "q",
      "match": {"collective": ["alltoall", "allreduce"], "dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.01}}], "default": {"codec": "raw"}})");
  setenv("SQUEEZE_THREADS", "0", 1);
  auto rows = run_codec(p, {"--check", "--max-error", "0.010001", "-e", "4M", "--iters", "3"});
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    EXPECT_LE(r["max_abs_err"].get<double>(), 0.010001);
    EXPECT_GT(r["ratio"].get<double>(), 1.5) << "the messages were compressed";
    if (r["collective"] == "allreduce") {
      EXPECT_EQ(r["ranks_agree"], true);
    }
  }
  unlink(p.c_str());
}

TEST_F(CollectiveEmulator, LosslessIsBitExactAndThresholdKeepsRanksInAgreement) {
  std::string lossless =
      temp_policy("lossless", R"({"version": 1, "rules": [{"name": "l", "match": {},
      "codec": "lossless", "checksum": true}], "default": {"codec": "raw"}})");
  auto rows = run_codec(lossless, {"--check", "--data", "sparse_grads"});
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["bit_exact"], true);
    EXPECT_GT(r["ratio"].get<double>(), 2.0) << "mostly-zero gradients must shrink";
  }
  std::string threshold = temp_policy("threshold", R"({"version": 1, "rules": [{"name": "t",
      "match": {"collective": ["allreduce"], "dtype": ["float32"]}, "codec": "threshold", "keep": 0.01,
      "fallback": "lossless"}], "default": {"codec": "raw"}})");
  rows = run_codec(threshold, {"--collective", "allreduce"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["ranks_agree"], true) << rows[0].dump();
  EXPECT_GT(rows[0]["ratio"].get<double>(), 1.5) << rows[0].dump();
  unlink(lossless.c_str());
  unlink(threshold.c_str());
}

TEST_F(CollectiveEmulator, CastHalvesTheBytesWithinBfloat16Rounding) {
  std::string p = temp_policy("cast", R"({"version": 1, "rules": [{"name": "c",
      "match": {"collective": ["alltoall"], "dtype": ["float32"]}, "codec": "cast", "to": "bfloat16"}],
      "default": {"codec": "raw"}})");
  auto rows = run_codec(p, {"--collective", "alltoall"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0]["ratio"].get<double>(), 2.0, 0.05) << rows[0].dump();
  EXPECT_GT(rows[0]["max_abs_err"].get<double>(), 0.0);
  EXPECT_LT(rows[0]["max_abs_err"].get<double>(), 0.05) << rows[0].dump();
  unlink(p.c_str());
}

TEST_F(CollectiveEmulator, PluginRefusesToStartOnAnInvalidPolicy) {
  // The plugin's init fails, and says why on stderr (even without NCCL_DEBUG) with the file,
  // the JSON pointer of the fault and the reason; nothing runs under a policy nobody meant.
  std::string p = temp_policy("invalid", R"({"version": 1, "rules": [{"name": "x", "match": {},
      "codec": "threshold", "keep": 1.5}]})");
  Outcome o = run_tool({"-N", "2", "-b", "1M", "-e", "1M", "--policy", p, "--timeout", "20"});
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("refusing to start"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("policy " + p + ": /rules/0/keep: must be in (0, 1]"), std::string::npos)
      << o.err;
  EXPECT_EQ(o.out.find("alltoall "), std::string::npos) << "no collective may run";
  unlink(p.c_str());
}

}  // namespace

TEST_F(CollectiveEmulator, BaselineRunsASecondPluginInstanceSideBySideWithItsOwnPolicyAndCounts) {
  // --baseline loads a private copy of the plugin: its policy, statistics and profiler chain
  // must stay its own, or the comparison compares nothing. Main: quantize (lossy, ratio > 1);
  // baseline: raw (exact, ratio 1). A shared instance would give both the same policy.
  const double eb = 0.01;
  std::string p = temp_policy("quantize-vs-raw", R"({"version": 1, "rules": [{"name": "q",
      "match": {"collective": ["alltoall", "allreduce"], "dtype": ["float32"]},
      "codec": "quantize", "error_bound": {"mode": "abs", "value": 0.01}}], "default": {"codec": "raw"}})");
  auto rows = run_codec(
      p, {"--baseline", std::string(SQUEEZE_SOURCE_DIR) + "/config/off.json", "--iters", "3"});
  ASSERT_EQ(rows.size(), 4u);  // per collective: the main row, then the baseline's
  for (std::size_t i = 0; i < rows.size(); i += 2) {
    const auto& main = rows[i];
    const auto& base = rows[i + 1];
    SCOPED_TRACE(main.dump() + "\n" + base.dump());
    EXPECT_EQ(main["arm"], "main");
    EXPECT_EQ(base["arm"], "baseline");
    EXPECT_EQ(main["collective"], base["collective"]);
    EXPECT_EQ(main["size"], base["size"]);
    EXPECT_NE(main["policy"].get<std::string>().find("quantize-vs-raw"), std::string::npos);
    EXPECT_NE(base["policy"].get<std::string>().find("off.json"), std::string::npos);
    EXPECT_GT(main["ratio"].get<double>(), 1.5);
    EXPECT_GT(main["max_abs_err"].get<double>(), 0.0);
    EXPECT_LE(main["max_abs_err"].get<double>(), eb * 1.0001);
    EXPECT_EQ(base["ratio"].get<double>(), 1.0);
    EXPECT_EQ(base["bit_exact"], true);
    EXPECT_GT(main["speedup_vs_baseline"].get<double>(), 0.0);
    EXPECT_FALSE(base.contains("speedup_vs_baseline"));
  }
  unlink(p.c_str());
}

TEST_F(CollectiveEmulator, UnreadableBaselinePolicyIsNamed) {
  Outcome o = run_tool({"-N", "2", "--baseline", "/nonexistent/policy.json", "--iters", "1"});
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("--baseline /nonexistent/policy.json"), std::string::npos) << o.err;
}
