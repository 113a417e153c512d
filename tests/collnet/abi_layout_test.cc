// Our declarations of NCCL's CollNet tables (plugin/nccl/collnet_abi.h) against NCCL's own
// headers: the offset and size of every entry of every version we export, and the enum values
// that cross the ABI.
//
// How the numbers were obtained: a throwaway program (never committed), compiled with g++ on
// x86-64 Linux against the headers of NVIDIA/nccl at v2.28.9-1 and v2.30.7-1
// (src/include/plugin/nccl_net.h and the net/net_v8.h .. net_v12.h it includes; nccl.h from
// src/nccl.h.in), printed offsetof() and sizeof() of each field of ncclCollNet_v8_t ..
// ncclCollNet_v12_t and ncclNetSGE_v11_t by NCCL's field names, which ours repeat. v8..v11
// printed the same numbers under both tags; v12 exists from v2.30.7-1.
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

#include "plugin/nccl/collnet_abi.h"

namespace {

#define EXPECT_SIZE(T, n) EXPECT_EQ(sizeof(T), std::size_t{n}) << #T
#define EXPECT_FIELD(T, f, off, n)                                                \
  do {                                                                            \
    EXPECT_EQ(offsetof(T, f), std::size_t{off}) << #T "." #f " offset";           \
    EXPECT_EQ(sizeof(std::declval<T&>().f), std::size_t{n}) << #T "." #f " size"; \
  } while (0)

TEST(Nccl2289And2307, CollNetV8Table) {
  EXPECT_SIZE(nccl_collnet_v8, 136);
  EXPECT_FIELD(nccl_collnet_v8, name, 0, 8);
  EXPECT_FIELD(nccl_collnet_v8, init, 8, 8);
  EXPECT_FIELD(nccl_collnet_v8, devices, 16, 8);
  EXPECT_FIELD(nccl_collnet_v8, getProperties, 24, 8);
  EXPECT_FIELD(nccl_collnet_v8, listen, 32, 8);
  EXPECT_FIELD(nccl_collnet_v8, connect, 40, 8);
  EXPECT_FIELD(nccl_collnet_v8, reduceSupport, 48, 8);
  EXPECT_FIELD(nccl_collnet_v8, regMr, 56, 8);
  EXPECT_FIELD(nccl_collnet_v8, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_collnet_v8, deregMr, 72, 8);
  EXPECT_FIELD(nccl_collnet_v8, iallreduce, 80, 8);
  EXPECT_FIELD(nccl_collnet_v8, iallgather, 88, 8);
  EXPECT_FIELD(nccl_collnet_v8, ireducescatter, 96, 8);
  EXPECT_FIELD(nccl_collnet_v8, iflush, 104, 8);
  EXPECT_FIELD(nccl_collnet_v8, test, 112, 8);
  EXPECT_FIELD(nccl_collnet_v8, closeColl, 120, 8);
  EXPECT_FIELD(nccl_collnet_v8, closeListen, 128, 8);
}

TEST(Nccl2289And2307, CollNetV9Table) {
  EXPECT_SIZE(nccl_collnet_v9, 144);
  EXPECT_FIELD(nccl_collnet_v9, name, 0, 8);
  EXPECT_FIELD(nccl_collnet_v9, init, 8, 8);
  EXPECT_FIELD(nccl_collnet_v9, devices, 16, 8);
  EXPECT_FIELD(nccl_collnet_v9, getProperties, 24, 8);
  EXPECT_FIELD(nccl_collnet_v9, listen, 32, 8);
  EXPECT_FIELD(nccl_collnet_v9, connect, 40, 8);
  EXPECT_FIELD(nccl_collnet_v9, reduceSupport, 48, 8);
  EXPECT_FIELD(nccl_collnet_v9, regMr, 56, 8);
  EXPECT_FIELD(nccl_collnet_v9, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_collnet_v9, deregMr, 72, 8);
  EXPECT_FIELD(nccl_collnet_v9, iallreduce, 80, 8);
  EXPECT_FIELD(nccl_collnet_v9, iallgather, 88, 8);
  EXPECT_FIELD(nccl_collnet_v9, ireducescatter, 96, 8);
  EXPECT_FIELD(nccl_collnet_v9, iflush, 104, 8);
  EXPECT_FIELD(nccl_collnet_v9, test, 112, 8);
  EXPECT_FIELD(nccl_collnet_v9, closeColl, 120, 8);
  EXPECT_FIELD(nccl_collnet_v9, closeListen, 128, 8);
  EXPECT_FIELD(nccl_collnet_v9, makeVDevice, 136, 8);
}

TEST(Nccl2289And2307, CollNetV10Table) {
  EXPECT_SIZE(nccl_collnet_v10, 144);
  EXPECT_FIELD(nccl_collnet_v10, name, 0, 8);
  EXPECT_FIELD(nccl_collnet_v10, init, 8, 8);
  EXPECT_FIELD(nccl_collnet_v10, devices, 16, 8);
  EXPECT_FIELD(nccl_collnet_v10, getProperties, 24, 8);
  EXPECT_FIELD(nccl_collnet_v10, listen, 32, 8);
  EXPECT_FIELD(nccl_collnet_v10, connect, 40, 8);
  EXPECT_FIELD(nccl_collnet_v10, reduceSupport, 48, 8);
  EXPECT_FIELD(nccl_collnet_v10, regMr, 56, 8);
  EXPECT_FIELD(nccl_collnet_v10, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_collnet_v10, deregMr, 72, 8);
  EXPECT_FIELD(nccl_collnet_v10, iallreduce, 80, 8);
  EXPECT_FIELD(nccl_collnet_v10, iallgather, 88, 8);
  EXPECT_FIELD(nccl_collnet_v10, ireducescatter, 96, 8);
  EXPECT_FIELD(nccl_collnet_v10, iflush, 104, 8);
  EXPECT_FIELD(nccl_collnet_v10, test, 112, 8);
  EXPECT_FIELD(nccl_collnet_v10, closeColl, 120, 8);
  EXPECT_FIELD(nccl_collnet_v10, closeListen, 128, 8);
  EXPECT_FIELD(nccl_collnet_v10, makeVDevice, 136, 8);
}

TEST(Nccl2289And2307, CollNetV11Table) {
  EXPECT_SIZE(nccl_collnet_v11, 152);
  EXPECT_FIELD(nccl_collnet_v11, name, 0, 8);
  EXPECT_FIELD(nccl_collnet_v11, init, 8, 8);
  EXPECT_FIELD(nccl_collnet_v11, devices, 16, 8);
  EXPECT_FIELD(nccl_collnet_v11, getProperties, 24, 8);
  EXPECT_FIELD(nccl_collnet_v11, listen, 32, 8);
  EXPECT_FIELD(nccl_collnet_v11, connect, 40, 8);
  EXPECT_FIELD(nccl_collnet_v11, reduceSupport, 48, 8);
  EXPECT_FIELD(nccl_collnet_v11, regMr, 56, 8);
  EXPECT_FIELD(nccl_collnet_v11, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_collnet_v11, deregMr, 72, 8);
  EXPECT_FIELD(nccl_collnet_v11, iallreduce, 80, 8);
  EXPECT_FIELD(nccl_collnet_v11, iallgather, 88, 8);
  EXPECT_FIELD(nccl_collnet_v11, ireducescatter, 96, 8);
  EXPECT_FIELD(nccl_collnet_v11, iflush, 104, 8);
  EXPECT_FIELD(nccl_collnet_v11, test, 112, 8);
  EXPECT_FIELD(nccl_collnet_v11, closeColl, 120, 8);
  EXPECT_FIELD(nccl_collnet_v11, closeListen, 128, 8);
  EXPECT_FIELD(nccl_collnet_v11, makeVDevice, 136, 8);
  EXPECT_FIELD(nccl_collnet_v11, finalize, 144, 8);
}

TEST(Nccl2307, CollNetV12Table) {
  EXPECT_SIZE(nccl_collnet_v12, 152);
  EXPECT_FIELD(nccl_collnet_v12, name, 0, 8);
  EXPECT_FIELD(nccl_collnet_v12, init, 8, 8);
  EXPECT_FIELD(nccl_collnet_v12, devices, 16, 8);
  EXPECT_FIELD(nccl_collnet_v12, getProperties, 24, 8);
  EXPECT_FIELD(nccl_collnet_v12, listen, 32, 8);
  EXPECT_FIELD(nccl_collnet_v12, connect, 40, 8);
  EXPECT_FIELD(nccl_collnet_v12, reduceSupport, 48, 8);
  EXPECT_FIELD(nccl_collnet_v12, regMr, 56, 8);
  EXPECT_FIELD(nccl_collnet_v12, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_collnet_v12, deregMr, 72, 8);
  EXPECT_FIELD(nccl_collnet_v12, iallreduce, 80, 8);
  EXPECT_FIELD(nccl_collnet_v12, iallgather, 88, 8);
  EXPECT_FIELD(nccl_collnet_v12, ireducescatter, 96, 8);
  EXPECT_FIELD(nccl_collnet_v12, iflush, 104, 8);
  EXPECT_FIELD(nccl_collnet_v12, test, 112, 8);
  EXPECT_FIELD(nccl_collnet_v12, closeColl, 120, 8);
  EXPECT_FIELD(nccl_collnet_v12, closeListen, 128, 8);
  EXPECT_FIELD(nccl_collnet_v12, makeVDevice, 136, 8);
  EXPECT_FIELD(nccl_collnet_v12, finalize, 144, 8);
}

TEST(Nccl2289And2307, NetSge) {
  EXPECT_SIZE(nccl_net_sge, 24);
  EXPECT_FIELD(nccl_net_sge, mhandle, 0, 8);
  EXPECT_FIELD(nccl_net_sge, address, 8, 8);
  EXPECT_FIELD(nccl_net_sge, size, 16, 8);
}

// ncclDataType_t and ncclRedOp_t (src/nccl.h.in, the same at both tags).
TEST(Nccl2289And2307, CollNetEnums) {
  using squeeze::nccl::DataTypeId;
  using squeeze::nccl::RedOpId;
  EXPECT_EQ(static_cast<int>(DataTypeId::kFloat32), 7);
  EXPECT_EQ(static_cast<int>(DataTypeId::kBfloat16), 9);
  EXPECT_EQ(squeeze::nccl::kNumDataTypeIds, 12);
  EXPECT_EQ(static_cast<int>(RedOpId::kSum), 0);
  EXPECT_EQ(static_cast<int>(RedOpId::kMax), 2);
  EXPECT_EQ(static_cast<int>(RedOpId::kMin), 3);
  EXPECT_EQ(static_cast<int>(RedOpId::kAvg), 4);
}

}  // namespace
