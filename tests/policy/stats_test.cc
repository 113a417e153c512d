// Statistics: per rule and collective, safe from many threads, written as a JSON file per rank.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugin/policy/policy_load.h"
#include "plugin/policy/stats.h"

namespace {

using namespace squeeze::policy;
using squeeze::compress::CodecId;

TEST(Stats, AggregatesPerRuleAndCollective) {
  Stats s({"emb", "grad"});
  ASSERT_EQ(s.slots(), 3);
  EXPECT_EQ(s.slot_name(2), "default");
  s.record_encode(0, Collective::kAllToAll, 1000, 250, 100);
  s.record_encode(0, Collective::kAllToAll, 3000, 750, 300);
  s.record_encode(1, Collective::kAllReduce, 800, 100, 50);
  s.record_raw(0, Collective::kAllToAll, 64, RawCause::kProtocol);
  s.record_raw(2, Collective::kSend, 10, RawCause::kPolicy);
  s.record_error(0, Collective::kAllToAll, 0.5);
  s.record_error(0, Collective::kAllToAll, 0.25);
  s.record_decode(CodecId::kQuantize, Collective::kAllToAll, 250, 1000, 70);

  Stats::Counters a = s.cell(0, Collective::kAllToAll);
  EXPECT_EQ(a.messages, 2u);
  EXPECT_EQ(a.bytes_in, 4000u);
  EXPECT_EQ(a.bytes_out, 1000u);
  EXPECT_EQ(a.encode_ns, 400u);
  EXPECT_EQ(a.raw_messages[static_cast<int>(RawCause::kProtocol)], 1u);
  EXPECT_EQ(a.raw_bytes, 64u);
  EXPECT_EQ(a.error_samples, 2u);
  EXPECT_DOUBLE_EQ(a.max_error, 0.5);
  EXPECT_EQ(s.cell(0, Collective::kAllReduce).messages, 0u);

  Stats::Counters t = s.totals();
  EXPECT_EQ(t.messages, 3u);
  EXPECT_EQ(t.bytes_in, 4800u);
  EXPECT_EQ(t.raw_total(), 2u);
  EXPECT_EQ(s.decode_totals().bytes_out, 1000u);
}

TEST(Stats, IgnoresOutOfRangeInput) {
  Stats s({});
  s.record_encode(-1, Collective::kAllReduce, 1, 1, 1);
  s.record_encode(1, Collective::kAllReduce, 1, 1, 1);
  s.record_encode(0, static_cast<Collective>(200), 1, 1, 1);
  s.record_raw(0, Collective::kAllReduce, 1, static_cast<RawCause>(99));
  s.record_error(0, Collective::kAllReduce, -1.0);
  s.record_error(0, Collective::kAllReduce, std::numeric_limits<double>::quiet_NaN());
  s.record_decode(static_cast<CodecId>(77), Collective::kAllReduce, 1, 1, 1);
  EXPECT_EQ(s.totals().messages, 0u);
  EXPECT_EQ(s.totals().raw_total(), 0u);
  EXPECT_EQ(s.totals().error_samples, 0u);
  EXPECT_EQ(s.decode_totals().messages, 0u);
}

TEST(Stats, ManyThreadsLoseNothing) {
  Stats s({"r"});
  constexpr int kThreads = 8, kPer = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&s, t] {
      for (int i = 0; i < kPer; ++i) {
        s.record_encode(0, Collective::kAllReduce, 10, 3, 1);
        s.record_raw(1, Collective::kAllToAll, 7, RawCause::kNotWorthIt);
        s.record_error(0, Collective::kAllReduce, static_cast<double>(t * kPer + i));
      }
    });
  }
  for (auto& th : threads) th.join();
  Stats::Counters c = s.cell(0, Collective::kAllReduce);
  EXPECT_EQ(c.messages, uint64_t{kThreads} * kPer);
  EXPECT_EQ(c.bytes_in, uint64_t{kThreads} * kPer * 10);
  EXPECT_DOUBLE_EQ(c.max_error, static_cast<double>(kThreads * kPer - 1));
  EXPECT_EQ(s.cell(1, Collective::kAllToAll).raw_bytes, uint64_t{kThreads} * kPer * 7);
}

TEST(Stats, SummaryLine) {
  Stats s({"emb"});
  s.record_encode(0, Collective::kAllToAll, 4 << 20, 1 << 20, 2000000);
  s.record_raw(1, Collective::kSend, 1024, RawCause::kPolicy);
  std::string line = s.summary_line();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("1 messages encoded, 4.0 MiB -> 1.0 MiB (ratio 4.00)"), std::string::npos)
      << line;
  EXPECT_NE(line.find("1 raw (1.0 KiB: policy 1"), std::string::npos) << line;
}

TEST(Stats, JsonDocument) {
  std::string error;
  auto p =
      load_policy((std::string(SQUEEZE_SOURCE_DIR) + "/config/dlrm-alltoall.json").c_str(), &error);
  ASSERT_NE(p, nullptr) << error;
  auto s = Stats::for_policy(*p);
  ASSERT_EQ(s->slots(), 3);
  s->record_encode(0, Collective::kAllToAll, 4000, 1000, 5000);
  s->record_error(0, Collective::kAllToAll, 0.01);
  s->record_raw(2, Collective::kSend, 100, RawCause::kPolicy);
  s->record_decode(CodecId::kLossless, Collective::kAllReduce, 100, 400, 10);
  auto j = nlohmann::json::parse(s->to_json(3));
  EXPECT_EQ(j["rank"], 3);
  EXPECT_EQ(j["policy"], std::string(SQUEEZE_SOURCE_DIR) + "/config/dlrm-alltoall.json");
  EXPECT_EQ(j["totals"]["messages"], 1);
  ASSERT_EQ(j["rules"].size(), 3u);
  const auto& emb = j["rules"][0];
  EXPECT_EQ(emb["name"], "embeddings");
  EXPECT_EQ(emb["default"], false);
  const auto& a2a = emb["collectives"]["alltoall"];
  EXPECT_EQ(a2a["bytes_in"], 4000);
  EXPECT_EQ(a2a["bytes_out"], 1000);
  EXPECT_DOUBLE_EQ(a2a["ratio"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(a2a["encode_seconds"].get<double>(), 5e-6);
  EXPECT_DOUBLE_EQ(a2a["max_error"].get<double>(), 0.01);
  EXPECT_FALSE(emb["collectives"].contains("allreduce"));
  EXPECT_EQ(j["rules"][2]["name"], "default");
  EXPECT_EQ(j["rules"][2]["collectives"]["send"]["raw_by_cause"]["policy"], 1);
  EXPECT_EQ(j["decode"]["lossless"]["allreduce"]["bytes_out"], 400);
}

TEST(Stats, PathPerRank) {
  EXPECT_EQ(stats_path_for_rank("/tmp/stats.json", 3), "/tmp/stats.rank3.json");
  EXPECT_EQ(stats_path_for_rank("/tmp/sq", 0), "/tmp/sq.rank0.json");
  EXPECT_EQ(stats_path_for_rank("/tmp/run-%r/stats-%r.json", 12), "/tmp/run-12/stats-12.json");
  EXPECT_EQ(stats_path_for_rank(".json", 1), ".json.rank1.json");
}

TEST(Stats, WritesTheFileAtomically) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("squeeze-stats-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Stats s({"r"});
  s.record_encode(0, Collective::kAllGather, 10, 5, 1);
  std::string error;
  ASSERT_TRUE(s.write_json((dir / "stats.json").string(), 5, &error)) << error;
  std::ifstream in(dir / "stats.rank5.json");
  ASSERT_TRUE(in);
  auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["rank"], 5);
  EXPECT_FALSE(fs::exists(dir / "stats.rank5.json.tmp"));
  EXPECT_FALSE(s.write_json((dir / "missing-dir/x.json").string(), 0, &error));
  EXPECT_NE(error.find("missing-dir/x.rank0.json.tmp: cannot create"), std::string::npos) << error;
  fs::remove_all(dir);
}

}  // namespace
