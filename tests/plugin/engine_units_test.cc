// Engine building blocks: reading NCCL's attribute bits, the protocol from the regMr order,
// the compress-only-when-it-pays controller, and the codec worker pool.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "plugin/engine/describe.h"
#include "plugin/engine/pays.h"
#include "plugin/engine/worker_pool.h"

namespace squeeze::plugin {
namespace {

using policy::Collective;
using policy::Proto;

TEST(Describe, AttributeBitsAreOneHot) {
  EXPECT_EQ(single_bit(1u << 4), 4);
  EXPECT_EQ(single_bit(0), -1);
  EXPECT_EQ(single_bit(UINT32_MAX), -1) << "NCCL_NET_ATTR_UNDEF is all ones: unknown";
  EXPECT_EQ(single_bit((1u << 6) | (1u << 7)), -1) << "several ops: unknown";
  EXPECT_EQ(collective_from_func(4), Collective::kAllReduce);
  EXPECT_EQ(collective_from_func(8), Collective::kAllToAll);
  EXPECT_EQ(collective_from_func(5), Collective::kUnknown) << "SendRecv is not an API a rule can name";
}

TEST(Describe, ProtocolFromRegistrationOrder) {
  NetContext ctx;
  SendComm c(&ctx);
  MemRegion ll{nullptr, 512 << 10, 1, 0, nullptr}, ll128{nullptr, 4800 << 10, 1, 1, nullptr}, simple{nullptr, 4 << 20, 1, 2, nullptr};
  c.next_reg_index = 3;
  EXPECT_EQ(proto_from_registration(c, &ll), Proto::kLL);
  EXPECT_EQ(proto_from_registration(c, &ll128), Proto::kLL128);
  EXPECT_EQ(proto_from_registration(c, &simple), Proto::kSimple);
  c.next_reg_index = 2;  // LL128 disabled, or something we do not know: never guess
  EXPECT_EQ(proto_from_registration(c, &ll), Proto::kUnknown);
  c.next_reg_index = 1;
  MemRegion only{nullptr, 4 << 20, 1, 0, nullptr};
  EXPECT_EQ(proto_from_registration(c, &only), Proto::kSimple) << "point-to-point registers SIMPLE only";
  EXPECT_EQ(proto_from_registration(c, nullptr), Proto::kUnknown);
}

TEST(Describe, PointToPointIgnoresStaleAlgoAndProto) {
  NetContext ctx;
  SendComm c(&ctx);
  Request r;
  r.op = 1u << 8;      // AlltoAll
  r.proto = 1u << 0;   // left over from an earlier LL collective
  r.algo = 1u << 1;
  c.next_reg_index = 1;
  MemRegion mr{nullptr, 4 << 20, 1, 0, nullptr};
  policy::MessageMeta m = describe_message(c, r, &mr, 1 << 20, nullptr, true);
  EXPECT_EQ(m.collective, Collective::kAllToAll);
  EXPECT_EQ(m.proto, Proto::kSimple) << "the stale LL bit must not make a p2p message look like LL";
  r.op = 1u << 4;      // AllReduce on a collective connection: attribute and registration must agree
  r.proto = 1u << 2;   // SIMPLE
  c.next_reg_index = 3;
  MemRegion ll{nullptr, 512 << 10, 1, 0, nullptr};
  EXPECT_EQ(describe_message(c, r, &ll, 1024, nullptr, true).proto, Proto::kUnknown);
}

TEST(Pays, CompressesWhileLearningThenBypassesAFastLink) {
  PaysController p({true, 1, 1.15, 1.0, 4, 32});
  auto q = compress::CodecId::kQuantize;
  EXPECT_FALSE(p.should_compress(q)) << "raw until the link is measured";
  p.record_link_rate(10.0 * (1 << 30), false);  // 10 GB/s link: a 1 GB/s codec cannot keep up
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(p.should_compress(q)) << "the codec is not measured yet";
    p.record_encode(q, 1 << 20, 1 << 18, 1e-3);  // 1 GB/s, ratio 4
  }
  int compressed = 0;
  for (int i = 0; i < 320; ++i) compressed += p.should_compress(q);
  EXPECT_EQ(compressed, 10) << "bypass, except one probe in 32";
  EXPECT_FALSE(p.view(q).compressing);
  EXPECT_NEAR(p.view(q).speedup, (1 << 20) / 1e-3 / (10.0 * (1 << 30)), 1e-9) << "min(ratio, encode/link, decode/link)";
}

TEST(Pays, CompressesOnASlowLinkWithHysteresis) {
  PaysController p({true, 2, 1.15, 1.0, 1, 32});
  auto t = compress::CodecId::kThreshold;
  p.record_encode(t, 1 << 20, 1 << 14, 1e-3);   // 1 GB/s, ratio 64
  p.record_link(125'000'000, 1.0);               // 1 Gbit/s
  EXPECT_TRUE(p.should_compress(t));
  p.record_link_rate(50e6, true);                // an application-limited sample: a lower bound
  EXPECT_NEAR(p.view(t).link_Bps, 125e6, 1) << "a lower bound below the estimate says nothing";
  EXPECT_GT(p.view(t).speedup, 5);
  PaysController off({false, 1, 1.15, 1.0, 1, 32});
  off.record_encode(t, 1 << 20, 1 << 19, 1.0);  // hopelessly slow
  off.record_link(100ull << 30, 1.0);
  EXPECT_TRUE(off.should_compress(t)) << "SQUEEZE_BYPASS=off follows the policy";
}

TEST(WorkerPool, RunsEveryJob) {
  WorkerPool pool(2);
  std::atomic<int> n{0};
  for (int i = 0; i < 1000; ++i)
    pool.submit([](void* a) noexcept { static_cast<std::atomic<int>*>(a)->fetch_add(1); }, &n);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (n.load() < 1000 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(n.load(), 1000);
}

}  // namespace
}  // namespace squeeze::plugin
