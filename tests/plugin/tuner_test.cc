// The built-in tuner steers only collectives the policy compresses, and only by editing an entry
// NCCL left enabled: all-reduces to CollNet where NCCL offers it, else to Ring/Simple.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <tuple>
#include <utility>
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
  for (const Case& c :
       {Case{nccl::kFuncAllReduce, 1024, policy::DataType::kUnknown},         // too small
        Case{nccl::kFuncAllReduce, 4 << 20, policy::DataType::kInt32},        // not float32
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
  EXPECT_TRUE(
      tuner::steer(*p, {nccl::kFuncAllGather, 8 * 65536, 8, {}, nullptr}, &t[0][0], kA, kP));
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
  EXPECT_FALSE(
      tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, small.data(), 2, 2));
  EXPECT_FALSE(
      tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, small.data(), 1, 3));
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, nullptr, kA, kP));
}

// The table NCCL 2.28.9 builds when the communicator has CollNet (NCCL_COLLNET_ENABLE=1, enough
// nodes, reduceSupport said yes): CollNet's Simple entries hold times, its LL and LL128 stay -1.
Table collnet_table(bool chain, bool direct) {
  Table t = nccl_table();
  if (chain) t[nccl::kAlgoCollNetChain][nccl::kProtoSimple] = 30.0f;
  if (direct) t[nccl::kAlgoCollNetDirect][nccl::kProtoSimple] = 25.0f;
  return t;
}

TEST(Tuner, SteersCompressedAllReducesOntoCollNetWhereNcclOffersIt) {
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  const tuner::CollQuery q{nccl::kFuncAllReduce, 4 << 20, 8, policy::DataType::kUnknown, nullptr};
  for (const auto& [chain, direct, want] :
       {std::tuple{true, false, nccl::kAlgoCollNetChain},
        std::tuple{true, true, nccl::kAlgoCollNetChain},  // Chain first: one rank per node
        std::tuple{false, true, nccl::kAlgoCollNetDirect}}) {
    Table t = collnet_table(chain, direct), before = t;
    EXPECT_TRUE(tuner::steer(*p, q, &t[0][0], kA, kP));
    int a = -1, pr = -1;
    EXPECT_EQ(changed(before, t, &a, &pr), 1) << chain << direct;
    EXPECT_EQ(a, want);
    EXPECT_EQ(pr, nccl::kProtoSimple);
    EXPECT_EQ(t[want][nccl::kProtoSimple], 0.0f);  // now NCCL's cheapest
    EXPECT_EQ(t[nccl::kAlgoRing][nccl::kProtoSimple], before[nccl::kAlgoRing][nccl::kProtoSimple]);
  }
}

TEST(Tuner, WithoutCollNetCompressedAllReducesStayOnTheRing) {
  // NCCL_COLLNET_ENABLE unset (or reduceSupport said no for the op and dtype): every CollNet
  // entry is -1, and the ring takes the compressed all-reduce as before.
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  Table t = collnet_table(false, false), before = t;
  EXPECT_TRUE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, &t[0][0], kA, kP));
  int a = -1, pr = -1;
  EXPECT_EQ(changed(before, t, &a, &pr), 1);
  EXPECT_EQ(a, nccl::kAlgoRing);
  EXPECT_EQ(t[nccl::kAlgoCollNetChain][nccl::kProtoSimple], nccl::kAlgoProtoIgnore);
  // A table too small to hold CollNet's rows (2 algorithms: Tree and Ring) is read as such.
  std::array<float, 6> small{1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(
      tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, small.data(), 2, 3));
  EXPECT_EQ(small[nccl::kAlgoRing * 3 + nccl::kProtoSimple], 0.0f);
}

TEST(Tuner, LeavesEverythingElseAloneWhenCollNetIsOffered) {
  auto p = parse(kPolicy);
  ASSERT_NE(p, nullptr);
  // Uncompressed all-reduces (too small, not float32): NCCL's choice, CollNet or not.
  for (const auto& [nbytes, hint] :
       {std::pair<uint64_t, policy::DataType>{1024, {}},
        std::pair<uint64_t, policy::DataType>{4 << 20, policy::DataType::kInt32}}) {
    Table t = collnet_table(true, true), before = t;
    EXPECT_FALSE(
        tuner::steer(*p, {nccl::kFuncAllReduce, nbytes, 8, hint, nullptr}, &t[0][0], kA, kP))
        << nbytes;
    EXPECT_EQ(t, before);
  }
  // Other collectives never go to CollNet (Squeeze has no iallgather/ireducescatter); a
  // compressed AllGather still takes the ring.
  Table t = collnet_table(true, true), before = t;
  EXPECT_TRUE(
      tuner::steer(*p, {nccl::kFuncAllGather, 8 * 65536, 8, {}, nullptr}, &t[0][0], kA, kP));
  int a = -1, pr = -1;
  EXPECT_EQ(changed(before, t, &a, &pr), 1);
  EXPECT_EQ(a, nccl::kAlgoRing);
  // Already NCCL's cheapest: nothing to change.
  t = collnet_table(true, false);
  t[nccl::kAlgoCollNetChain][nccl::kProtoSimple] = 0.0f;
  before = t;
  EXPECT_FALSE(tuner::steer(*p, {nccl::kFuncAllReduce, 4 << 20, 8, {}, nullptr}, &t[0][0], kA, kP));
  EXPECT_EQ(t, before);
}

TEST(Tuner, RulesForTheRingOnlyKeepTheirAllReducesOnTheRing) {
  // A rule that matches the ring's algorithm only does not compress on CollNet: the tuner
  // steers to the ring, where it does, even with CollNet offered. And a rule for CollNet only
  // takes CollNet, and leaves NCCL's choice when CollNet is not offered.
  auto ring =
      parse(R"({"version": 1, "rules": [{"match": {"collective": "allreduce", "algo": "ring"},
    "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}}]})");
  auto collnet =
      parse(R"({"version": 1, "rules": [{"match": {"collective": "allreduce", "algo": "collnet"},
    "codec": "threshold", "keep": 0.01, "error_feedback": true}]})");
  ASSERT_NE(ring, nullptr);
  ASSERT_NE(collnet, nullptr);
  const tuner::CollQuery q{nccl::kFuncAllReduce, 4 << 20, 8, policy::DataType::kFloat32, nullptr};
  Table t = collnet_table(true, false), before = t;
  EXPECT_TRUE(tuner::steer(*ring, q, &t[0][0], kA, kP));
  int a = -1, pr = -1;
  EXPECT_EQ(changed(before, t, &a, &pr), 1);
  EXPECT_EQ(a, nccl::kAlgoRing);
  t = collnet_table(true, false);
  EXPECT_TRUE(tuner::steer(*collnet, q, &t[0][0], kA, kP));
  EXPECT_EQ(changed(before, t, &a, &pr), 1);
  EXPECT_EQ(a, nccl::kAlgoCollNetChain);
  t = collnet_table(false, false);
  before = t;
  EXPECT_FALSE(tuner::steer(*collnet, q, &t[0][0], kA, kP));
  EXPECT_EQ(t, before);
}

TEST(Tuner, AdapterSteersOnlyWithThePolicyItIsGiven) {
  // No policy (the Squeeze net plugin is not in use): NCCL's choice stands.
  void* ctx = nullptr;
  ASSERT_EQ(tuner::init_v5(&ctx, nullptr, 0x1234, 8, nullptr), kNcclSuccess);
  Table t = nccl_table(), before = t;
  EXPECT_EQ(tuner::get_coll_info_v5(ctx, nccl::kFuncAllReduce, 4 << 20,
                                    reinterpret_cast<float**>(&t[0][0]), kA, kP),
            kNcclSuccess);
  EXPECT_EQ(t, before);
  EXPECT_EQ(tuner::finalize_v5(ctx), kNcclSuccess);

  ASSERT_EQ(tuner::init_v5(&ctx, parse(kPolicy), 0x1234, 8, nullptr), kNcclSuccess);
  EXPECT_EQ(tuner::get_coll_info_v5(ctx, nccl::kFuncAllReduce, 4 << 20,
                                    reinterpret_cast<float**>(&t[0][0]), kA, kP),
            kNcclSuccess);
  EXPECT_EQ(t[nccl::kAlgoRing][nccl::kProtoSimple], 0.0f);
  EXPECT_EQ(tuner::get_coll_info_v5(nullptr, nccl::kFuncAllReduce, 4 << 20, nullptr, kA, kP),
            kNcclSuccess);
  EXPECT_EQ(tuner::finalize_v5(ctx), kNcclSuccess);
  EXPECT_EQ(tuner::init_v5(nullptr, nullptr, 0, 8, nullptr), kNcclInvalidArgument);
}

}  // namespace
