// The plugin's statistics file as squeeze-nccl-perf reads it: totals, and the part the collective
// network carried (squeeze-nccl-perf --route collnet fails a row that CollNet did not carry).
#include "perf/collective/stats_file.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace squeeze::perf {
namespace {

TEST(StatsFile, ReadsTotalsAndWhatTheCollectiveNetworkCarried) {
  char dir[] = "/tmp/squeeze-stats-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/stats.json";
  ASSERT_EQ(setenv("SQUEEZE_STATS", path.c_str(), 1), 0);
  StatsFile file(0);
  EXPECT_FALSE(file.read().found) << "no file yet";
  auto write = [&](const char* text) { std::ofstream(path) << text; };
  write(R"({"totals": {"bytes_in": 1000, "bytes_out": 100, "raw_bytes": 50, "messages": 3,
            "raw_messages": 1},
            "routes": {"net": {"bytes_in": 600, "raw_bytes": 0},
                       "collnet": {"bytes_in": 400, "bytes_out": 40, "raw_bytes": 50}}})");
  const WireTotals before = file.read();
  ASSERT_TRUE(before.found);
  EXPECT_EQ(before.handed(), 1050u);
  EXPECT_EQ(before.wire(), 150u);
  EXPECT_EQ(before.collnet_handed, 450u);
  write(R"({"totals": {"bytes_in": 3000, "bytes_out": 300, "raw_bytes": 50},
            "routes": {"collnet": {"bytes_in": 2400, "raw_bytes": 50}}})");
  const WireTotals d = wire_delta(before, file.read());
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.handed(), 2000u);
  EXPECT_EQ(d.collnet_handed, 2000u) << "the row's bytes all went through CollNet";
  write(R"({"totals": {"bytes_in": 5000, "bytes_out": 500, "raw_bytes": 50}})");
  EXPECT_EQ(file.read().collnet_handed, 0u) << "a file without routes carried nothing on CollNet";
  std::remove(path.c_str());
  rmdir(dir);
  unsetenv("SQUEEZE_STATS");
}

}  // namespace
}  // namespace squeeze::perf
