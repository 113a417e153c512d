// Opening the ib transport: devices and their properties on the fake provider (ports,
// speed, GID choice, pointer support), and every way it declines with a one-sentence reason,
// including the real libibverbs on this machine.
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "tests/transport/fake_verbs_pair.h"
#include "transport/ib/verbs_api.h"

namespace squeeze::transport::ib::fake {
namespace {

void expect_clean(const FakeVerbs& f) {
  FakeCounters c = f.counters();
  EXPECT_EQ(c.contexts + c.pds + c.mrs + c.cqs + c.qps + c.device_lists, 0)
      << "leaked: contexts " << c.contexts << " pds " << c.pds << " mrs " << c.mrs << " cqs "
      << c.cqs << " qps " << c.qps;
  for (const auto& v : f.violations()) ADD_FAILURE() << v;
}

TEST(IbOpen, DescribesEachActivePort) {
  FakeDevice d;
  d.name = "mlx5_7";
  d.ports.resize(2);
  d.ports[1].state = IBV_PORT_DOWN;
  FakeVerbs fake({d});
  {
    std::string why;
    IbOptions o = test_options("mlx5_7");
    auto t = open_transport_with(fake.api(), o, &why);
    ASSERT_NE(t, nullptr) << why;
    EXPECT_STREQ(t->name(), "ib");
    ASSERT_EQ(t->devices().size(), 1u) << "the down port is skipped";
    const DeviceProps& p = t->devices()[0];
    EXPECT_EQ(p.name, "mlx5_7:1");
    EXPECT_EQ(p.guid, d.guid);
    EXPECT_EQ(p.speed_mbps, 4 * 25000) << "4x EDR";
    EXPECT_EQ(p.ptr_support, kPtrHost | kPtrDmaBuf);
    EXPECT_FALSE(p.force_flush);
    EXPECT_EQ(p.max_recvs, kMaxRecvs);
    EXPECT_EQ(p.address, "lid 1");
    o.gdr = 1;
    auto g = open_transport_with(fake.api(/*with_dmabuf=*/false), o, &why);
    ASSERT_NE(g, nullptr) << why;
    EXPECT_EQ(g->devices()[0].ptr_support, kPtrHost | kPtrCuda) << "GDR on, no ibv_reg_dmabuf_mr";
    EXPECT_TRUE(g->devices()[0].force_flush);
  }
  expect_clean(fake);
}

TEST(IbOpen, RocePortPicksTheRoceV2Gid) {
  FakeDevice d;
  d.ports[0].link_layer = IBV_LINK_LAYER_ETHERNET;
  d.ports[0].active_speed = 128;  // NDR lanes
  d.ports[0].active_width = 1;
  d.dmabuf = false;
  FakeVerbs fake({d});
  {
    std::string why;
    auto t = open_transport_with(fake.api(), test_options("fake_0"), &why);
    ASSERT_NE(t, nullptr) << why;
    EXPECT_EQ(t->devices()[0].address, "gid ::ffff:10.0.1.1 (index 1)");
    EXPECT_EQ(t->devices()[0].speed_mbps, 100000);
    EXPECT_EQ(t->devices()[0].ptr_support, kPtrHost) << "kernel without dma-buf";
  }
  expect_clean(fake);
}

TEST(IbOpen, EnosysFromTheDeviceListIsTheReason) {
  FakeVerbs fake;
  fake.fail_device_list(ENOSYS);
  std::string why;
  EXPECT_EQ(open_transport_with(fake.api(), test_options("fake_0"), &why), nullptr);
  EXPECT_EQ(why, "ibv_get_device_list: Function not implemented");
  expect_clean(fake);
}

TEST(IbOpen, NoUsablePortIsNamed) {
  FakeDevice d;
  d.ports[0].state = IBV_PORT_DOWN;
  FakeVerbs fake({d});
  std::string why;
  EXPECT_EQ(open_transport_with(fake.api(), test_options("fake_0"), &why), nullptr);
  EXPECT_NE(why.find("fake_0:1 is not active"), std::string::npos) << why;
  EXPECT_EQ(open_transport_with(fake.api(), test_options("mlx9"), &why), nullptr);
  EXPECT_NE(why.find("excluded by SQUEEZE_IB_HCA"), std::string::npos) << why;
  expect_clean(fake);
}

TEST(IbOpen, RealLibraryOnThisMachineSaysWhyNot) {
  std::error_code ec;
  if (std::filesystem::exists("/sys/class/infiniband", ec) &&
      !std::filesystem::is_empty("/sys/class/infiniband", ec))
    GTEST_SKIP() << "this machine has RDMA devices";
  std::string why;
  EXPECT_EQ(open_transport(IbOptions{}, sock::SocketOptions{}, &why), nullptr);
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(why.find('\n'), std::string::npos) << "one sentence";
  std::string lib;
  if (system_verbs(&lib) != nullptr)  // libibverbs present: the device list is what fails
    EXPECT_TRUE(why.rfind("ibv_get_device_list: ", 0) == 0 || why == "no RDMA device found") << why;
  else
    EXPECT_EQ(why.rfind("libibverbs.so.1 not found", 0), 0u) << why;
}

}  // namespace
}  // namespace squeeze::transport::ib::fake
