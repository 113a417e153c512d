// The enums the engine fills from NCCL: setNetAttr bits, ncclFunc_t values and profiler strings.
#include <gtest/gtest.h>

#include "plugin/policy/names.h"

namespace {

using namespace squeeze::policy;

TEST(Names, NetAttrOpBitsAreOneShiftedByNcclFunc) {
  // NCCL 2.28.9 src/transport/net.cc: netAttr.op = BIT(args->collAPI).
  EXPECT_EQ(collective_from_net_op(1u << 0), Collective::kBroadcast);
  EXPECT_EQ(collective_from_net_op(1u << 1), Collective::kReduce);
  EXPECT_EQ(collective_from_net_op(1u << 2), Collective::kAllGather);
  EXPECT_EQ(collective_from_net_op(1u << 3), Collective::kReduceScatter);
  EXPECT_EQ(collective_from_net_op(1u << 4), Collective::kAllReduce);
  EXPECT_EQ(collective_from_net_op(1u << 5), Collective::kUnknown);  // SendRecv
  EXPECT_EQ(collective_from_net_op(1u << 6), Collective::kSend);
  EXPECT_EQ(collective_from_net_op(1u << 7), Collective::kRecv);
  EXPECT_EQ(collective_from_net_op(1u << 8), Collective::kAllToAll);
  EXPECT_EQ(collective_from_net_op(1u << 9), Collective::kScatter);
  EXPECT_EQ(collective_from_net_op(1u << 10), Collective::kGather);
  EXPECT_EQ(collective_from_net_op(0), Collective::kUnknown);
  EXPECT_EQ(collective_from_net_op((1u << 4) | (1u << 8)), Collective::kUnknown);
  EXPECT_EQ(collective_from_net_op(1u << 31), Collective::kUnknown);
}

TEST(Names, NetAttrProtoAndAlgoBits) {
  EXPECT_EQ(proto_from_net_bits(1u << 0), Proto::kLL);
  EXPECT_EQ(proto_from_net_bits(1u << 1), Proto::kLL128);
  EXPECT_EQ(proto_from_net_bits(1u << 2), Proto::kSimple);
  EXPECT_EQ(proto_from_net_bits(0), Proto::kUnknown);
  EXPECT_EQ(proto_from_net_bits(7), Proto::kUnknown);
  EXPECT_EQ(algo_from_net_bits(1u << 0), Algo::kTree);
  EXPECT_EQ(algo_from_net_bits(1u << 1), Algo::kRing);
  EXPECT_EQ(algo_from_net_bits(1u << 6), Algo::kPat);
  EXPECT_EQ(algo_from_net_bits(1u << 7), Algo::kUnknown);
}

TEST(Names, ProfilerStrings) {
  EXPECT_EQ(collective_from_nccl_string("AllReduce"), Collective::kAllReduce);
  EXPECT_EQ(collective_from_nccl_string("AlltoAll"), Collective::kAllToAll);
  EXPECT_EQ(collective_from_nccl_string("Send"), Collective::kSend);
  EXPECT_EQ(collective_from_nccl_string("Recv"), Collective::kRecv);
  EXPECT_EQ(collective_from_nccl_string("SendRecv"), Collective::kUnknown);
  EXPECT_EQ(collective_from_nccl_string(nullptr), Collective::kUnknown);
  EXPECT_EQ(collective_from_nccl_string(""), Collective::kUnknown);
  EXPECT_EQ(dtype_from_nccl_string("ncclFloat32"), DataType::kFloat32);
  EXPECT_EQ(dtype_from_nccl_string("ncclBfloat16"), DataType::kBfloat16);
  EXPECT_EQ(dtype_from_nccl_string("ncclFloat16"), DataType::kFloat16);
  EXPECT_EQ(dtype_from_nccl_string("ncclInt8"), DataType::kInt8);
  EXPECT_EQ(dtype_from_nccl_string("ncclUint64"), DataType::kUint64);
  EXPECT_EQ(dtype_from_nccl_string("ncclFloat8e5m2"), DataType::kFloat8E5M2);
  EXPECT_EQ(dtype_from_nccl_string("Unknown"),
            DataType::kUnknown);  // NCCL 2.28.9 prints this for ncclUint8
  EXPECT_EQ(dtype_from_nccl_string(nullptr), DataType::kUnknown);
  EXPECT_EQ(proto_from_nccl_string("SIMPLE"), Proto::kSimple);
  EXPECT_EQ(proto_from_nccl_string("LL128"), Proto::kLL128);
  EXPECT_EQ(algo_from_nccl_string("RING"), Algo::kRing);
  EXPECT_EQ(algo_from_nccl_string("NVLS_TREE"), Algo::kNvlsTree);
}

TEST(Names, PolicyNamesRoundTrip) {
  for (int i = 1; i < kNumCollectives; ++i) {
    Collective c{};
    ASSERT_TRUE(parse_collective(collective_name(static_cast<Collective>(i)), &c));
    EXPECT_EQ(c, static_cast<Collective>(i));
  }
  for (int i = 0; i < kNumDataTypes; ++i) {
    DataType d{};
    ASSERT_TRUE(parse_dtype(dtype_name(static_cast<DataType>(i)), &d));
    EXPECT_EQ(d, static_cast<DataType>(i));
  }
  Collective c{};
  EXPECT_FALSE(parse_collective("unknown", &c));
  EXPECT_FALSE(parse_collective("AllReduce", &c));  // policy names are lower case
}

TEST(Names, SizesAndCapabilities) {
  EXPECT_EQ(dtype_size(DataType::kFloat32), 4u);
  EXPECT_EQ(dtype_size(DataType::kBfloat16), 2u);
  EXPECT_EQ(dtype_size(DataType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DataType::kFloat8E4M3), 1u);
  EXPECT_EQ(dtype_size(DataType::kUnknown), 0u);
  EXPECT_TRUE(lossy_capable(DataType::kFloat16));
  EXPECT_FALSE(lossy_capable(DataType::kFloat64));
  EXPECT_FALSE(lossy_capable(DataType::kInt32));
  EXPECT_FALSE(lossy_capable(DataType::kUnknown));
  EXPECT_TRUE(is_integer(DataType::kUint8));
  EXPECT_FALSE(is_integer(DataType::kFloat8E4M3));
}

}  // namespace
