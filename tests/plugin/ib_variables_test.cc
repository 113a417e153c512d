// NCCL's InfiniBand variables, end to end: the parameter table reads them (SQUEEZE_IB_* first),
// the plugin turns them into the verbs transport's options, and the transport on the fake
// verbs provider uses them: which ports it opens, what its modify-QP calls set, how it
// registers memory. A fleet's NCCL_IB_* settings apply to Squeeze as they do to NCCL.
#include <sys/socket.h>

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugin/engine/transport_options.h"
#include "tests/transport/fake_verbs_pair.h"

namespace squeeze::transport::ib::fake {
namespace {

using Env = std::map<std::string, std::string>;

params::Settings settings(const Env& env) {
  return params::Settings::from([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

// The verbs options the plugin would pass with `env` as its environment (no GPU here; the
// out-of-band exchange on loopback).
IbOptions ib_options(const Env& env) {
  const params::Settings st = settings(env);
  EXPECT_TRUE(st.ok()) << st.errors().front();
  IbOptions o = plugin::transport_options(st).ib;
  o.gdr = 0;
  o.oob_interfaces = sock::find_interfaces("lo", AF_INET);
  return o;
}

// The ports the transport opens with `env`, or "error: <why>".
std::vector<std::string> opened(FakeVerbs& fake, const Env& env) {
  std::string why;
  auto t = open_transport_with(fake.api(), ib_options(env), &why);
  if (t == nullptr) return {"error: " + why};
  std::vector<std::string> names;
  for (const DeviceProps& d : t->devices()) names.push_back(d.name);
  return names;
}

std::vector<FakeDevice> four_devices() {
  std::vector<FakeDevice> d(4);
  d[0].name = "mlx5_0";
  d[0].ports.resize(2);
  d[1].name = "mlx5_1";
  d[2].name = "mlx5_10";
  d[3].name = "roce_0";
  return d;
}

using Names = std::vector<std::string>;

TEST(NcclIbVariables, HcaPicksPortsWithNcclsSyntax) {
  FakeVerbs fake(four_devices());
  EXPECT_EQ(opened(fake, {}), (Names{"mlx5_0:1", "mlx5_0:2", "mlx5_1:1", "mlx5_10:1", "roce_0:1"}));
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "mlx5_1"}}), (Names{"mlx5_1:1", "mlx5_10:1"}))
      << "a prefix";
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "=mlx5_1"}}), (Names{"mlx5_1:1"})) << "exact";
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "^mlx5"}}), (Names{"roce_0:1"})) << "excluded";
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "mlx5_0:2,roce"}}), (Names{"mlx5_0:2", "roce_0:1"}))
      << "a port";
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "^=mlx5_1,mlx5_0:1"}}),
            (Names{"mlx5_0:2", "mlx5_10:1", "roce_0:1"}));
  EXPECT_EQ(opened(fake, {{"NCCL_IB_HCA", "mlx5_0"}, {"SQUEEZE_IB_HCA", "roce"}}),
            (Names{"roce_0:1"}))
      << "Squeeze's own variable wins";
}

TEST(NcclIbVariables, HcaProblemsNameTheVariable) {
  FakeVerbs fake(four_devices());
  const Names bad_port = opened(fake, {{"NCCL_IB_HCA", "mlx5_0:one"}});
  ASSERT_EQ(bad_port.size(), 1u);
  EXPECT_EQ(bad_port[0],
            "error: NCCL_IB_HCA='mlx5_0:one': entry 'mlx5_0:one' has no port number in [1, 255] "
            "after ':'");
  const Names none = opened(fake, {{"NCCL_IB_HCA", "=mlx9"}});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].find("mlx5_0:1 excluded by NCCL_IB_HCA='=mlx9'"), std::string::npos) << none[0];
  const Names own = opened(fake, {{"SQUEEZE_IB_HCA", "=mlx9"}});
  EXPECT_NE(own[0].find("excluded by SQUEEZE_IB_HCA='=mlx9'"), std::string::npos) << own[0];
}

// Two RoCE hosts (fake_0, fake_1) connected with `env` on both sides.
struct RocePair : IbPair {
  explicit RocePair(uint8_t link = IBV_LINK_LAYER_ETHERNET) : IbPair(devices(link)) {}
  static std::vector<FakeDevice> devices(uint8_t link) {
    std::vector<FakeDevice> d = two_devices();
    for (FakeDevice& x : d) x.ports[0].link_layer = link;
    return d;
  }
  void open_with(Env env) {
    env["NCCL_IB_HCA"] = "=fake_0";
    IbOptions sender = ib_options(env);
    env["NCCL_IB_HCA"] = "=fake_1";
    open(sender, ib_options(env));
  }
};

TEST(NcclIbVariables, QueuePairsGetTheirAttributes) {
  RocePair p;
  p.open_with({{"NCCL_IB_TIMEOUT", "14"},
               {"NCCL_IB_RETRY_CNT", "3"},
               {"NCCL_IB_SL", "5"},
               {"NCCL_IB_TC", "106"},
               {"NCCL_IB_GID_INDEX", "0"},
               {"NCCL_IB_QPS_PER_CONNECTION", "3"}});
  EXPECT_EQ(p.a->devices()[0].address.rfind("gid fe80::", 0), 0u) << p.a->devices()[0].address;
  p.connect();
  for (const char* dev : {"fake_0", "fake_1"}) {
    const std::vector<QpInfo> qps = p.fake.qps_on(dev);
    EXPECT_EQ(qps.size(), 3u) << dev << ": NCCL_IB_QPS_PER_CONNECTION";
    for (const QpInfo& q : qps) {
      SCOPED_TRACE(dev);
      EXPECT_EQ(q.state, IBV_QPS_RTS);
      EXPECT_EQ(q.timeout, 14);
      EXPECT_EQ(q.retry_cnt, 3);
      EXPECT_EQ(q.sl, 5);
      EXPECT_TRUE(q.is_global);
      EXPECT_EQ(q.traffic_class, 106);
      EXPECT_EQ(q.sgid_index, 0) << "NCCL_IB_GID_INDEX";
    }
  }
  p.transfer_raw(std::vector<uint8_t>(300000, 7));
  p.close_and_check();
}

TEST(NcclIbVariables, UnsetTheDefaultsApply) {
  RocePair p;
  p.open_with({});
  p.connect();
  const std::vector<QpInfo> qps = p.fake.qps_on("fake_0");
  ASSERT_EQ(qps.size(), 1u);
  EXPECT_EQ(qps[0].timeout, 20);
  EXPECT_EQ(qps[0].retry_cnt, 7);
  EXPECT_EQ(qps[0].sl, 0);
  EXPECT_EQ(qps[0].traffic_class, 0);
  EXPECT_EQ(qps[0].sgid_index, 1) << "the RoCE v2 IPv4 GID";
  p.close_and_check();
}

TEST(NcclIbVariables, SqueezeVariablesWinOverNcclOnes) {
  RocePair p(IBV_LINK_LAYER_INFINIBAND);
  p.open_with({{"NCCL_IB_TIMEOUT", "14"},
               {"SQUEEZE_IB_TIMEOUT", "16"},
               {"NCCL_IB_SL", "5"},
               {"SQUEEZE_IB_SL", "2"},
               {"NCCL_IB_QPS_PER_CONNECTION", "4"},
               {"SQUEEZE_IB_QPS_PER_CONNECTION", "2"}});
  p.connect();
  const std::vector<QpInfo> qps = p.fake.qps_on("fake_1");
  ASSERT_EQ(qps.size(), 2u);
  EXPECT_EQ(qps[0].timeout, 16);
  EXPECT_EQ(qps[0].sl, 2);
  EXPECT_FALSE(qps[0].is_global) << "InfiniBand: addressed by LID";
  p.transfer_raw(std::vector<uint8_t>(5000, 3));
  p.close_and_check();
}

// Registers a buffer on the pair's send comm and returns how many registrations so far
// carried relaxed ordering.
uint64_t relaxed_after_register(IbPair& p) {
  std::vector<uint8_t> buf(64 * 1024);
  std::unique_ptr<Registration> reg;
  EXPECT_TRUE(p.send->register_memory({buf.data(), buf.size(), kPtrHost, -1, 0}, &reg).ok());
  reg.reset();
  return p.fake.counters().relaxed_mrs;
}

TEST(NcclIbVariables, PciRelaxedOrderingSetsTheAccessFlag) {
  {
    RocePair p;
    p.open_with({});
    p.connect();
    EXPECT_GT(relaxed_after_register(p), 0u) << "default 2: on where ibv_reg_mr_iova2 exists";
    p.close_and_check();
  }
  {
    RocePair p;
    p.open_with({{"NCCL_IB_PCI_RELAXED_ORDERING", "0"}});
    p.connect();
    EXPECT_EQ(relaxed_after_register(p), 0u);
    p.close_and_check();
  }
  {
    RocePair p;
    std::string why;
    Env env{{"NCCL_IB_PCI_RELAXED_ORDERING", "1"}, {"NCCL_IB_HCA", "=fake_0"}};
    p.a = open_transport_with(p.fake.api(true, /*with_iova2=*/false), ib_options(env), &why);
    ASSERT_NE(p.a, nullptr) << why;
    env["NCCL_IB_HCA"] = "=fake_1";
    p.b = open_transport_with(p.fake.api(true, false), ib_options(env), &why);
    ASSERT_NE(p.b, nullptr) << why;
    p.connect();
    EXPECT_EQ(relaxed_after_register(p), 0u) << "a library without ibv_reg_mr_iova2";
    p.transfer_raw(std::vector<uint8_t>(5000, 3));
    p.close_and_check();
  }
}

TEST(NcclIbVariables, ABadNcclValueIsSkippedWithAWarning) {
  const params::Settings st =
      settings({{"NCCL_IB_QPS_PER_CONNECTION", "16"}, {"NCCL_IB_TIMEOUT", "soon"}});
  EXPECT_TRUE(st.ok());
  ASSERT_EQ(st.warnings().size(), 2u);
  EXPECT_EQ(st.warnings()[0], "NCCL_IB_QPS_PER_CONNECTION='16' is outside [1, 8]; ignored");
  EXPECT_EQ(st.warnings()[1],
            "NCCL_IB_TIMEOUT='soon' is not a whole number (expected one in [1, 31]); ignored");
  const IbOptions o = plugin::transport_options(st).ib;
  EXPECT_EQ(o.qps_per_conn, 1);
  EXPECT_EQ(o.timeout, 20);
}

TEST(NcclIbVariables, TheOldQpsNameStillWorksWithAWarning) {
  params::Settings st =
      settings({{"SQUEEZE_IB_QPS_PER_CONN", "3"}, {"NCCL_IB_QPS_PER_CONNECTION", "5"}});
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(plugin::transport_options(st).ib.qps_per_conn, 3) << "a Squeeze name wins over NCCL's";
  ASSERT_EQ(st.warnings().size(), 1u);
  EXPECT_EQ(st.warnings()[0],
            "SQUEEZE_IB_QPS_PER_CONN is deprecated; set SQUEEZE_IB_QPS_PER_CONNECTION instead");
  st = settings({{"SQUEEZE_IB_QPS_PER_CONN", "3"}, {"SQUEEZE_IB_QPS_PER_CONNECTION", "2"}});
  EXPECT_EQ(plugin::transport_options(st).ib.qps_per_conn, 2) << "the new name wins";
  EXPECT_TRUE(st.warnings().empty());
}

}  // namespace
}  // namespace squeeze::transport::ib::fake
