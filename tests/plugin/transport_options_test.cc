// The transports get what the user set: every transport variable of the parameter table
// reaches transport::Options, NCCL's socket variables stand in for unset SQUEEZE_ ones, and
// with nothing set the options are the transports' own defaults.
#include <sys/socket.h>

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "plugin/engine/transport_options.h"

namespace squeeze::plugin {
namespace {

params::Settings from_map(const std::map<std::string, std::string>& env) {
  return params::Settings::from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(TransportOptions, NothingSetGivesTheTransportsDefaults) {
  const params::Settings st = from_map({});
  ASSERT_TRUE(st.ok());
  const transport::Options got = transport_options(st);
  const transport::Options want;
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.socket.ifname, want.socket.ifname);
  EXPECT_EQ(got.socket.family, want.socket.family);
  EXPECT_EQ(got.socket.user_timeout_ms, want.socket.user_timeout_ms);
  EXPECT_EQ(got.socket.keepidle_s, want.socket.keepidle_s);
  EXPECT_EQ(got.socket.handshake_timeout_ms, want.socket.handshake_timeout_ms);
  EXPECT_EQ(got.socket.max_pending, want.socket.max_pending);
  EXPECT_EQ(got.socket.stall_timeout_ms, want.socket.stall_timeout_ms);
  EXPECT_NE(got.socket.log, nullptr) << "the listeners log through NCCL's logger";
  EXPECT_EQ(got.ucx.library, want.ucx.library);
  EXPECT_EQ(got.ucx.tls, want.ucx.tls);
  EXPECT_EQ(got.ib.hca, want.ib.hca);
  EXPECT_EQ(got.ib.qps_per_conn, want.ib.qps_per_conn);
  EXPECT_EQ(got.ib.gid_index, want.ib.gid_index);
  EXPECT_EQ(got.ib.timeout, want.ib.timeout);
  EXPECT_EQ(got.ib.retry_cnt, want.ib.retry_cnt);
  EXPECT_EQ(got.ib.service_level, want.ib.service_level);
  EXPECT_EQ(got.ib.traffic_class, want.ib.traffic_class);
  EXPECT_EQ(got.ib.gdr, want.ib.gdr);
  EXPECT_EQ(got.ib.gdr_flush, want.ib.gdr_flush);
  EXPECT_EQ(got.ib.dmabuf, want.ib.dmabuf);
  EXPECT_EQ(got.ib.mr_cache_entries, want.ib.mr_cache_entries);
  EXPECT_EQ(got.ib.relaxed_ordering, want.ib.relaxed_ordering);
  EXPECT_EQ(got.ib.hca_variable, want.ib.hca_variable);
  EXPECT_TRUE(got.ib.oob_interfaces.empty());
  EXPECT_EQ(got.tcp.nsocks_per_thread, transport::tcp::TcpOptions::kAuto);
  EXPECT_EQ(got.tcp.nthreads, transport::tcp::TcpOptions::kAuto);
  EXPECT_EQ(got.tcp.max_rate_bps, 0.0) << "no pacing unless asked";
}

TEST(TransportOptions, EveryVariableReachesItsField) {
  const params::Settings st = from_map({{"SQUEEZE_TRANSPORT", "ucx"},
                                        {"SQUEEZE_SOCKET_IFNAME", "^docker"},
                                        {"SQUEEZE_SOCKET_FAMILY", "AF_INET6"},
                                        {"SQUEEZE_TCP_TIMEOUT_MS", "2500"},
                                        {"SQUEEZE_TCP_KEEPIDLE_S", "9"},
                                        {"SQUEEZE_HANDSHAKE_TIMEOUT_S", "7"},
                                        {"SQUEEZE_LISTEN_PENDING", "32"},
                                        {"SQUEEZE_STALL_TIMEOUT_S", "0"},
                                        {"SQUEEZE_UCX_LIBRARY", "/opt/ucx/lib/libucp.so.0"},
                                        {"UCX_TLS", "rc,sm"},
                                        {"SQUEEZE_IB_HCA", "=mlx5_1"},
                                        {"SQUEEZE_IB_QPS_PER_CONNECTION", "4"},
                                        {"SQUEEZE_IB_GID_INDEX", "3"},
                                        {"SQUEEZE_IB_TIMEOUT", "18"},
                                        {"SQUEEZE_IB_RETRY_CNT", "5"},
                                        {"SQUEEZE_IB_SL", "2"},
                                        {"SQUEEZE_IB_TC", "106"},
                                        {"SQUEEZE_IB_GDR", "0"},
                                        {"SQUEEZE_IB_GDR_FLUSH", "off"},
                                        {"SQUEEZE_IB_DMABUF", "0"},
                                        {"SQUEEZE_IB_MR_CACHE", "256"},
                                        {"SQUEEZE_IB_PCI_RELAXED_ORDERING", "0"},
                                        {"SQUEEZE_NSOCKS_PERTHREAD", "4"},
                                        {"SQUEEZE_SOCKET_NTHREADS", "2"},
                                        {"SQUEEZE_MAX_RATE", "2.5"}});
  ASSERT_TRUE(st.ok()) << st.errors().front();
  const transport::Options o = transport_options(st);
  EXPECT_EQ(o.name, "ucx");
  EXPECT_EQ(o.socket.ifname, "^docker");
  EXPECT_EQ(o.socket.family, AF_INET6);
  EXPECT_EQ(o.socket.user_timeout_ms, 2500);
  EXPECT_EQ(o.socket.keepidle_s, 9);
  EXPECT_EQ(o.socket.handshake_timeout_ms, 7000);
  EXPECT_EQ(o.socket.max_pending, 32);
  EXPECT_EQ(o.socket.stall_timeout_ms, 0) << "0: no stall deadline";
  EXPECT_EQ(o.ucx.library, "/opt/ucx/lib/libucp.so.0");
  EXPECT_EQ(o.ucx.tls, "rc,sm");
  EXPECT_EQ(o.ib.hca, "=mlx5_1");
  EXPECT_EQ(o.ib.qps_per_conn, 4);
  EXPECT_EQ(o.ib.gid_index, 3);
  EXPECT_EQ(o.ib.timeout, 18);
  EXPECT_EQ(o.ib.retry_cnt, 5);
  EXPECT_EQ(o.ib.service_level, 2);
  EXPECT_EQ(o.ib.traffic_class, 106);
  EXPECT_EQ(o.ib.gdr, 0);
  EXPECT_FALSE(o.ib.gdr_flush);
  EXPECT_FALSE(o.ib.dmabuf);
  EXPECT_EQ(o.ib.mr_cache_entries, 256u);
  EXPECT_EQ(o.ib.relaxed_ordering, 0);
  EXPECT_EQ(o.ib.hca_variable, "SQUEEZE_IB_HCA");
  EXPECT_EQ(o.tcp.nsocks_per_thread, 4);
  EXPECT_EQ(o.tcp.nthreads, 2);
  EXPECT_DOUBLE_EQ(o.tcp.max_rate_bps, 2.5e9) << "Gbit/s to bit/s";
}

TEST(TransportOptions, NcclIbVariablesStandInForUnsetSqueezeOnes) {
  const transport::Options o = transport_options(from_map({{"NCCL_IB_HCA", "^mlx5_2"},
                                                           {"NCCL_IB_QPS_PER_CONNECTION", "2"},
                                                           {"NCCL_IB_GID_INDEX", "3"},
                                                           {"NCCL_IB_TIMEOUT", "22"},
                                                           {"NCCL_IB_RETRY_CNT", "4"},
                                                           {"NCCL_IB_SL", "1"},
                                                           {"NCCL_IB_TC", "41"},
                                                           {"NCCL_IB_PCI_RELAXED_ORDERING", "1"}}));
  EXPECT_EQ(o.ib.hca, "^mlx5_2");
  EXPECT_EQ(o.ib.hca_variable, "NCCL_IB_HCA") << "messages name the variable the user set";
  EXPECT_EQ(o.ib.qps_per_conn, 2);
  EXPECT_EQ(o.ib.gid_index, 3);
  EXPECT_EQ(o.ib.timeout, 22);
  EXPECT_EQ(o.ib.retry_cnt, 4);
  EXPECT_EQ(o.ib.service_level, 1);
  EXPECT_EQ(o.ib.traffic_class, 41);
  EXPECT_EQ(o.ib.relaxed_ordering, 1);
}

TEST(TransportOptions, NcclSocketVariablesStandInForUnsetSqueezeOnes) {
  transport::Options o = transport_options(
      from_map({{"NCCL_SOCKET_IFNAME", "eth"}, {"NCCL_SOCKET_FAMILY", "AF_INET"}}));
  EXPECT_EQ(o.socket.ifname, "eth");
  EXPECT_EQ(o.socket.family, AF_INET);
  o = transport_options(
      from_map({{"NCCL_SOCKET_IFNAME", "eth"}, {"SQUEEZE_SOCKET_IFNAME", "=lo"}}));
  EXPECT_EQ(o.socket.ifname, "=lo") << "Squeeze's own variable wins";
  o = transport_options(from_map({{"NCCL_SOCKET_FAMILY", "AF_UNIX"}}));
  EXPECT_EQ(o.socket.family, 0) << "a value NCCL would not take is skipped: any family";
}

// NCCL's own stream variables apply where Squeeze's are unset; Squeeze's win; a value NCCL
// itself would refuse is skipped (auto), while a bad SQUEEZE_ value stops the plugin.
TEST(TransportOptions, NcclStreamVariablesStandInForUnsetSqueezeOnes) {
  transport::Options o =
      transport_options(from_map({{"NCCL_NSOCKS_PERTHREAD", "8"}, {"NCCL_SOCKET_NTHREADS", "2"}}));
  EXPECT_EQ(o.tcp.nsocks_per_thread, 8);
  EXPECT_EQ(o.tcp.nthreads, 2);
  o = transport_options(
      from_map({{"NCCL_NSOCKS_PERTHREAD", "8"}, {"SQUEEZE_NSOCKS_PERTHREAD", "2"}}));
  EXPECT_EQ(o.tcp.nsocks_per_thread, 2) << "Squeeze's own variable wins";
  const params::Settings st =
      from_map({{"NCCL_SOCKET_NTHREADS", "99"}, {"NCCL_NSOCKS_PERTHREAD", "-2"}});
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.warnings().size(), 2u);
  o = transport_options(st);
  EXPECT_EQ(o.tcp.nthreads, transport::tcp::TcpOptions::kAuto);
  EXPECT_EQ(o.tcp.nsocks_per_thread, transport::tcp::TcpOptions::kAuto);
}

// Each TCP connection logs where its socket and thread counts came from: the variable the
// user set, with its value, or nothing (auto).
TEST(TransportOptions, StreamCountsNameTheVariableThatSetThem) {
  transport::Options o = transport_options(
      from_map({{"NCCL_NSOCKS_PERTHREAD", "8"}, {"SQUEEZE_SOCKET_NTHREADS", "2"}}));
  EXPECT_EQ(o.tcp.nsocks_per_thread_from, "NCCL_NSOCKS_PERTHREAD=8");
  EXPECT_EQ(o.tcp.nthreads_from, "SQUEEZE_SOCKET_NTHREADS=2");
  o = transport_options(from_map({{"NCCL_SOCKET_NTHREADS", "99"}}));
  EXPECT_EQ(o.tcp.nthreads_from, "") << "a skipped NCCL value is auto";
  EXPECT_EQ(o.tcp.nsocks_per_thread_from, "");
}

TEST(TransportOptions, BadStreamAndRateValuesAreErrorsThatNameThem) {
  const std::map<std::string, std::string> bad[] = {
      {{"SQUEEZE_NSOCKS_PERTHREAD", "0"}},  {{"SQUEEZE_NSOCKS_PERTHREAD", "65"}},
      {{"SQUEEZE_NSOCKS_PERTHREAD", "4x"}}, {{"SQUEEZE_SOCKET_NTHREADS", "17"}},
      {{"SQUEEZE_SOCKET_NTHREADS", "-1"}},  {{"SQUEEZE_MAX_RATE", "-1"}},
      {{"SQUEEZE_MAX_RATE", "fast"}},       {{"SQUEEZE_MAX_RATE", "nan"}},
      {{"SQUEEZE_MAX_RATE", "1e9"}},
  };
  for (const auto& env : bad) {
    const params::Settings st = from_map(env);
    ASSERT_FALSE(st.ok()) << env.begin()->first << "=" << env.begin()->second << " was accepted";
    EXPECT_NE(st.errors().front().find(env.begin()->first), std::string::npos)
        << st.errors().front();
  }
  EXPECT_TRUE(from_map({{"SQUEEZE_MAX_RATE", "0"}}).ok()) << "0 turns the cap off";
  EXPECT_TRUE(from_map({{"SQUEEZE_SOCKET_NTHREADS", "0"}}).ok()) << "0 threads: one socket";
}

}  // namespace
}  // namespace squeeze::plugin
