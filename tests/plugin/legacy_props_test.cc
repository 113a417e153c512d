// The older net tables describe the engine's devices through legacy_props.h: every field the
// older layout has, from the engine's v12 properties, and nothing it cannot hold.
#include "plugin/exports/legacy_props.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

nccl_net_props_v12 engine_props(int ndevs) {
  static char name[] = "eth7";
  static char pci[] = "/sys/devices/pci0000:00/0000:00:03.0";
  nccl_net_props_v12 p{};
  p.name = name;
  p.pciPath = pci;
  p.guid = 0x1122334455667788;
  p.ptrSupport = 3;
  p.regIsGlobal = 1;
  p.forceFlush = 1;
  p.speed = 400000;
  p.port = 2;
  p.latency = 1.5f;
  p.maxComms = 65536;
  p.maxRecvs = 8;
  p.netDeviceType = 0;
  p.netDeviceVersion = 0;
  p.vProps.ndevs = ndevs;
  for (int i = 0; i < ndevs; ++i) p.vProps.devs[i] = 10 + i;
  p.maxP2pBytes = std::size_t{1} << 40;
  p.maxCollBytes = std::size_t{1} << 30;
  p.maxMultiRequestSize = 1;
  p.railId = 3;
  p.planeId = 1;
  return p;
}

template <typename Props>
void expect_common(const nccl_net_props_v12& in, const Props& out) {
  EXPECT_EQ(out.name, in.name);
  EXPECT_EQ(out.pciPath, in.pciPath);
  EXPECT_EQ(out.guid, in.guid);
  EXPECT_EQ(out.ptrSupport, in.ptrSupport);
  EXPECT_EQ(out.regIsGlobal, in.regIsGlobal);
  EXPECT_EQ(out.speed, in.speed);
  EXPECT_EQ(out.port, in.port);
  EXPECT_EQ(out.latency, in.latency);
  EXPECT_EQ(out.maxComms, in.maxComms);
  EXPECT_EQ(out.maxRecvs, in.maxRecvs);
  EXPECT_EQ(out.netDeviceType, in.netDeviceType);
  EXPECT_EQ(out.netDeviceVersion, in.netDeviceVersion);
}

template <typename Props>
void expect_extended(const nccl_net_props_v12& in, const Props& out) {
  expect_common(in, out);
  EXPECT_EQ(out.forceFlush, in.forceFlush);
  ASSERT_EQ(out.vProps.ndevs, in.vProps.ndevs);
  for (int i = 0; i < in.vProps.ndevs; ++i) EXPECT_EQ(out.vProps.devs[i], in.vProps.devs[i]);
  for (int i = in.vProps.ndevs; i < squeeze::nccl::kMaxDevsPerNic; ++i) {
    EXPECT_EQ(out.vProps.devs[i], 0);
  }
  EXPECT_EQ(out.maxP2pBytes, in.maxP2pBytes);
  EXPECT_EQ(out.maxCollBytes, in.maxCollBytes);
}

// NCCL hands getProperties an uninitialised struct.
template <typename Props>
Props garbage() {
  Props p;
  std::memset(static_cast<void*>(&p), 0xa5, sizeof p);
  return p;
}

TEST(LegacyProps, V11GetsEveryFieldButRailAndPlane) {
  const nccl_net_props_v12 in = engine_props(1);
  auto out = garbage<nccl_net_props_v11>();
  ASSERT_EQ(squeeze::plugin::to_v11(in, &out), kNcclSuccess);
  expect_extended(in, out);
  EXPECT_EQ(out.maxMultiRequestSize, in.maxMultiRequestSize);
}

TEST(LegacyProps, V9AndV10GetTheirFields) {
  const nccl_net_props_v12 in = engine_props(2);
  auto out = garbage<nccl_net_props_v9>();
  ASSERT_EQ(squeeze::plugin::to_v9(in, &out), kNcclSuccess);
  expect_extended(in, out);
}

TEST(LegacyProps, V8GetsItsFields) {
  const nccl_net_props_v12 in = engine_props(1);
  auto out = garbage<nccl_net_props_v8>();
  squeeze::plugin::to_v8(in, &out);
  expect_common(in, out);
}

// v12 holds 8 virtual devices per NIC, v9..v11 only 4: a longer list is refused, not cut.
TEST(LegacyProps, AVirtualDeviceListTheOlderLayoutCannotHoldIsAnError) {
  nccl_net_props_v11 v11{};
  nccl_net_props_v9 v9{};
  const nccl_net_props_v12 four = engine_props(squeeze::nccl::kMaxDevsPerNic);
  EXPECT_EQ(squeeze::plugin::to_v11(four, &v11), kNcclSuccess);
  EXPECT_EQ(v11.vProps.devs[3], 13);
  const nccl_net_props_v12 five = engine_props(squeeze::nccl::kMaxDevsPerNic + 1);
  EXPECT_EQ(squeeze::plugin::to_v11(five, &v11), kNcclInternalError);
  EXPECT_EQ(squeeze::plugin::to_v9(five, &v9), kNcclInternalError);
  nccl_net_props_v12 negative = engine_props(1);
  negative.vProps.ndevs = -1;
  EXPECT_EQ(squeeze::plugin::to_v11(negative, &v11), kNcclInternalError);
}

}  // namespace
