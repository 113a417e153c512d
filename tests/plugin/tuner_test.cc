// The built-in tuner steers to Ring/Simple only collectives the policy compresses, and only
// by editing an entry NCCL left enabled.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "plugin/nccl/tuner_abi.h"
#include "plugin/policy/policy_load.h"
#include "plugin/tuner/tuner.h"
#include "plugin/tuner/tuner_v5_adapter.h"

namespace {

using namespace squeeze;
using policy::Policy;

constexpr int kA = nccl::kNumAlgorithms, kP = nccl::kNumProtocols;
using Table = std::array<std::array<float, kP>, kA>;

// A cost table as NCCL builds it: some entries disabled (-1), the rest positive times.
Table nccl_table() {
  Table t{};
  for (int a = 0; a < kA; ++a) {
    for (int p = 0; p < kP; ++p) t[a][p] = 10.0f + static_cast<float>(a * kP + p);
  }
  t[nccl::kAlgoCollNetDirect] = {-1, -1, -1};
  t[nccl::kAlgoCollNetChain] = {-1, -1, -1};
  t[nccl::kAlgoTree][nccl::kProtoLL] = 1.0f;  // NCCL's favourite
  return t;
}

std::shared_ptr<const Policy> parse(const std::string& text) {
  std::vector<std::string> errors;
  auto p = Policy::parse(text, "t.json", &errors);
  for (const auto& e : errors) ADD_FAILURE() << e;
  return p;
}

constexpr const char* kPolicy = R"({"version": 1, "rules": [
  {"name": "grad", "match": {"collective": "allreduce", "dtype": "float32", "min_bytes": 1048576},
   "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}},
  {"name": "ag", "match": {"collective": "allgather", "min_bytes": 65536}, "codec": "lossless"},
  {"name": "small-raw", "match": {"collective": "reducescatter"}, "codec": "raw"}]})";

int changed(const Table& before, const Table& after, int* algo, int* proto) {
  int n = 0;
  for (int a = 0; a < kA; ++a) {
    for (int p = 0; p < kP; ++p) {
      if (before[a][p] != after[a][p]) {
        ++n;
        *algo = a;
        *proto = p;
      }
    }
  }
  return n;
}

TEST(Tuner, SteersCompressedCollectivesToRingSimple) {
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  Table t = nccl_table(), before = t;
  tuner::CollQuery q{nccl::kFuncAllReduce, 4 << 20, 8, policy::DataType::kUnknown, nullptr};
  EXPECT_TRUE(tuner::steer(*p, q, &t[0][0], kA, kP));
  int a = -1, pr = -1;
  EXPECT_EQ(changed(before, t, &a, &pr), 1);  // exactly one entry
  EXPECT_EQ(a, nccl::kAlgoRing);
  EXPECT_EQ(pr, nccl::kProtoSimple);
  EXPECT_EQ(t[nccl::kAlgoRing][nccl::kProtoSimple], 0.0f);  // now the cheapest
}

TEST(Tuner, LeavesUncompressedCollectivesAlone) {
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  struct Case {
    int func;
    uint64_t nbytes;
    policy::DataType hint;
  };
  for (const Case& c : {Case{nccl::kFuncAllReduce, 1024, policy::DataType::kUnknown},      // too small
                        Case{nccl::kFuncAllReduce, 4 << 20, policy::DataType::kInt32},     // not float32
                        Case{nccl::kFuncReduceScatter, 4 << 20, policy::DataType::kUnknown},  // raw rule
                        Case{nccl::kFuncBroadcast, 4 << 20, policy::DataType::kUnknown},      // no rule
                        Case{nccl::kFuncAllGather, 8 * 1024, policy::DataType::kUnknown},     // 1 KiB per rank
                        Case{nccl::kFuncAlltoAll, 4 << 20, policy::DataType::kFloat32},
                        Case{nccl::kFuncSend, 4 << 20, policy::DataType::kFloat32}, Case{99, 4 << 20, {}}}) {
    Table t = nccl_table(), before = t;
    tuner::CollQuery q{c.func, c.nbytes, 8, c.hint, nullptr};
    EXPECT_FALSE(tuner::steer(*p, q, &t[0][0], kA, kP)) << c.func << " " << c.nbytes;
    EXPECT_EQ(t, before);
  }
  // AllGather's nBytes covers all ranks: 8 ranks x 64 KiB is compressed.
  Table t = nccl_table();
  EXPECT_TRUE(tuner::steer(*p, {nccl::kFuncAllGather, 8 * 65536, 8, {}, nullptr}, &t[0][0], kA, kP));
}

TEST(Tuner, NeverEnablesADisabledEntry) {
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  Table t = nccl_table();
  t[nccl::kAlgoRing][nccl::kProtoSimple] = nccl::kAlgoProtoIgnore;  // e.g. NCCL_ALGO=Tree
  Table before = t;
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, &t[0][0], kA, kP));
  EXPECT_EQ(t, before);
}

TEST(Tuner, PolicyCanTurnItOff) {
  auto p = parse(R"({"version": 1, "tuner": false, "rules": [{"codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  Table t = nccl_table(), before = t;
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, &t[0][0], kA, kP));
  EXPECT_EQ(t, before);
}

TEST(Tuner, RejectsTablesTooSmallToHoldRingSimple) {
  auto p = parse(R"({"version": 1, "rules": [{"codec": "lossless"}]})");
  ASSERT_NE(p, nullptr);
  std::array<float, 4> small{1, 2, 3, 4};
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, small.data(), 2, 2));
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, small.data(), 1, 3));
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, nullptr, kA, kP));
}

TEST(Tuner, AdapterSteersOnlyWithThePolicyItIsGiven) {
  // No policy (the Squeeze net plugin is not in use): NCCL's choice stands.
  void* ctx = nullptr;
  ASSERT_EQ(tuner::init_v5(&ctx, nullptr, 0x1234, 8, nullptr), kNcclSuccess);
  Table t = nccl_table(), before = t;
  EXPECT_EQ(tuner::get_coll_info_v5(ctx, nccl::kFuncAllReduce, 4 << 20, reinterpret_cast<float**>(&t[0][0]), kA, kP),
            kNcclSuccess);
  EXPECT_EQ(t, before);
  EXPECT_EQ(tuner::finalize_v5(ctx), kNcclSuccess);

  ASSERT_EQ(tuner::init_v5(&ctx, parse(kPolicy), 0x1234, 8, nullptr), kNcclSuccess);
  EXPECT_EQ(tuner::get_coll_info_v5(ctx, nccl::kFuncAllReduce, 4 << 20, reinterpret_cast<float**>(&t[0][0]), kA, kP),
            kNcclSuccess);
  EXPECT_EQ(t[nccl::kAlgoRing][nccl::kProtoSimple], 0.0f);
  EXPECT_EQ(tuner::get_coll_info_v5(nullptr, nccl::kFuncAllReduce, 4 << 20, nullptr, kA, kP), kNcclSuccess);
  EXPECT_EQ(tuner::finalize_v5(ctx), kNcclSuccess);
  EXPECT_EQ(tuner::init_v5(nullptr, nullptr, 0, 8, nullptr), kNcclInvalidArgument);
}

}  // namespace
