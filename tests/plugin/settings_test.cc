// A bad setting stops the plugin at init with a message that names the variable and the
// value, whichever exported version NCCL loads. Each case runs in a fresh child process: the
// plugin reads its settings once, at the first init.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "tests/plugin/fork_peer.h"
#include "tests/plugin/plugin_api.h"

namespace squeeze::testing {
namespace {

struct InitOutcome {
  int rc = -1;      // init's ncclResult_t, or the child's failure
  std::string err;  // what the plugin said on stderr
};

InitOutcome init_with(int version, const std::vector<std::pair<std::string, std::string>>& env) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  ForkPeer child([&] {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    PluginApi api(version);
    return api.init();
  });
  close(fds[1]);
  InitOutcome o;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    o.err.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  o.rc = child.wait(60);
  return o;
}

class Settings : public ::testing::TestWithParam<int> {};

TEST_P(Settings, ABadSqueezeValueStopsInitAndNamesIt) {
  const struct {
    const char* var;
    const char* value;
    const char* says;
  } cases[] = {
      {"SQUEEZE_BYPASS", "maybe", "SQUEEZE_BYPASS='maybe' is not a switch"},
      {"SQUEEZE_THREADS", "lots", "SQUEEZE_THREADS='lots' is not a whole number"},
      {"SQUEEZE_QUANTIZE_SIMD", "sse9",
       "SQUEEZE_QUANTIZE_SIMD='sse9' is not one of scalar, avx2, avx512"},
      {"SQUEEZE_SOCKET_FAMILY", "inet6",
       "SQUEEZE_SOCKET_FAMILY='inet6' is not one of AF_INET, AF_INET6"},
      {"SQUEEZE_TRANSPORT", "rdma", "SQUEEZE_TRANSPORT='rdma' is not one of auto, tcp, ucx, ib"},
      {"SQUEEZE_GPU_STAGING", "2", "SQUEEZE_GPU_STAGING='2' is not a switch"},
      {"SQUEEZE_TCP_TIMEOUT_MS", "10s", "SQUEEZE_TCP_TIMEOUT_MS='10s' is not a whole number"},
      {"SQUEEZE_TCP_TIMEOUT_MS", "0", "SQUEEZE_TCP_TIMEOUT_MS='0' is outside [1, 1073741823]"},
      {"SQUEEZE_TCP_KEEPIDLE_S", "40000", "SQUEEZE_TCP_KEEPIDLE_S='40000' is outside [1, 32767]"},
      {"SQUEEZE_IB_QPS_PER_CONNECTION", "9", "SQUEEZE_IB_QPS_PER_CONNECTION='9' is outside [1, 8]"},
      {"SQUEEZE_IB_QPS_PER_CONN", "9", "SQUEEZE_IB_QPS_PER_CONN='9' is outside [1, 8]"},
      {"SQUEEZE_POLICY", "/nonexistent/policy.json",
       "policy /nonexistent/policy.json: cannot open"},
      {"SQUEEZE_SOCKET_IFNAME", "=bogus0",
       "no usable network interface matches SQUEEZE_SOCKET_IFNAME='=bogus0'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.var);
    const InitOutcome o = init_with(GetParam(), {{c.var, c.value}});
    EXPECT_NE(o.rc, 0) << "init must fail";
    EXPECT_NE(o.err.find(c.says), std::string::npos) << o.err;
  }
}

TEST_P(Settings, ABadNcclValueIsAWarningAndInitGoesOn) {
  const InitOutcome o = init_with(GetParam(), {{"NCCL_SOCKET_FAMILY", "inet6"}});
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_NE(o.err.find("NCCL_SOCKET_FAMILY='inet6' is not one of AF_INET, AF_INET6; ignored"),
            std::string::npos)
      << o.err;
}

INSTANTIATE_TEST_SUITE_P(AllVersions, Settings, ::testing::Values(8, 9, 10, 11, 12),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string("v").append(std::to_string(p.param));
                         });

}  // namespace
}  // namespace squeeze::testing
