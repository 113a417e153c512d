// What the perf tools print besides their tables: ncclResult values by name, and log lines
// that reach stderr whole and tagged with the rank.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "perf/common/nccl_result.h"
#include "perf/common/plugin_log.h"
#include "plugin/nccl/common.h"

namespace squeeze::perf {
namespace {

TEST(NcclResultName, NamesEveryValueNcclDefines) {
  EXPECT_EQ(nccl_result_name(kNcclSuccess), "ncclSuccess (0)");
  EXPECT_EQ(nccl_result_name(kNcclSystemError), "ncclSystemError (2)");
  EXPECT_EQ(nccl_result_name(kNcclInvalidUsage), "ncclInvalidUsage (5)");
  EXPECT_EQ(nccl_result_name(kNcclRemoteError), "ncclRemoteError (6)");
  EXPECT_EQ(nccl_result_name(42), "ncclResult 42");
}

// stderr, captured while `fn` runs.
template <typename Fn>
std::string stderr_of(Fn&& fn) {
  std::fflush(stderr);
  FILE* tmp = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  fn();
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string out;
  char buf[512];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, tmp)) > 0) out.append(buf, n);
  std::fclose(tmp);
  return out;
}

TEST(PluginLog, WarningsAreOneTaggedLineInfoIsQuiet) {
  unsetenv("SQUEEZE_PERF_VERBOSE");  // read at the logger's first call, which is this test's
  set_log_tag("rank 3");
  const std::string out = stderr_of([] {
    perf_logger(kLogWarn, 0, "net.cc", 94, "no interface %s (%d)", "eth9", 7);
    perf_logger(kLogInfo, 0, "net.cc", 95, "chatter");  // SQUEEZE_PERF_VERBOSE is unset here
    log_line("squeeze-perf: %s", "done");
  });
  set_log_tag("");
  EXPECT_EQ(out, "[rank 3] WARN [net.cc:94] no interface eth9 (7)\n[rank 3] squeeze-perf: done\n");
}

}  // namespace
}  // namespace squeeze::perf
