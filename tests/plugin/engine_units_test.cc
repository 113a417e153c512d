// Engine building blocks: reading NCCL's attribute bits, the protocol from the regMr order,
// the compress-only-when-it-pays controller, the row dedupe gate, and the codec worker pool.
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plugin/engine/comm_base.h"
#include "plugin/engine/dedupe_gate.h"
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
  EXPECT_EQ(collective_from_func(5), Collective::kUnknown)
      << "SendRecv is not an API a rule can name";
}

TEST(Describe, ProtocolFromRegistrationOrder) {
  MemRegion ll{nullptr, 512 << 10, 1, 0, nullptr}, ll128{nullptr, 4800 << 10, 1, 1, nullptr},
      simple{nullptr, 4 << 20, 1, 2, nullptr};
  EXPECT_EQ(proto_from_registration(3, &ll), Proto::kLL);
  EXPECT_EQ(proto_from_registration(3, &ll128), Proto::kLL128);
  EXPECT_EQ(proto_from_registration(3, &simple), Proto::kSimple);
  // LL128 disabled, or something we do not know: never guess
  EXPECT_EQ(proto_from_registration(2, &ll), Proto::kUnknown);
  MemRegion only{nullptr, 4 << 20, 1, 0, nullptr};
  EXPECT_EQ(proto_from_registration(1, &only), Proto::kSimple)
      << "point-to-point registers SIMPLE only";
  EXPECT_EQ(proto_from_registration(1, nullptr), Proto::kUnknown);
}

// A comm with no transport behind it: registers host memory and nothing else.
class BareComm : public CommBase {
 public:
  BareComm(NetContext* ctx, const Engine* engine)
      : CommBase(CommKind::kSend, ctx, engine, 0, false) {}

 private:
  transport::Status register_memory(const transport::MemoryDesc&,
                                    std::unique_ptr<transport::Registration>* reg) override {
    reg->reset();
    return transport::Status::Ok();
  }
};

TEST(Describe, PointToPointIgnoresStaleAlgoAndProto) {
  NetContext ctx;
  Engine engine;
  BareComm c(&ctx, &engine);
  ctx.attr.op = 1u << 8;     // AlltoAll
  ctx.attr.proto = 1u << 0;  // left over from an earlier LL collective
  ctx.attr.algo = 1u << 1;
  MemRegion* mr = nullptr;
  ASSERT_TRUE(c.register_region({nullptr, 4 << 20, transport::kPtrHost, -1, 0}, &mr).ok());
  policy::MessageMeta m = describe_message(c, mr, 1 << 20, nullptr, true);
  EXPECT_EQ(m.collective, Collective::kAllToAll);
  EXPECT_EQ(m.proto, Proto::kSimple) << "the stale LL bit must not make a p2p message look like LL";
  ctx.attr.op =
      1u << 4;  // AllReduce on a collective connection: attribute and registration must agree
  ctx.attr.proto = 1u << 2;  // SIMPLE
  MemRegion* ll128 = nullptr;
  MemRegion* simple = nullptr;
  ASSERT_TRUE(c.register_region({nullptr, 4800 << 10, transport::kPtrHost, -1, 0}, &ll128).ok());
  ASSERT_TRUE(c.register_region({nullptr, 4 << 20, transport::kPtrHost, -1, 0}, &simple).ok());
  EXPECT_EQ(describe_message(c, mr, 1024, nullptr, true).proto, Proto::kUnknown) << "the LL buffer";
  EXPECT_EQ(describe_message(c, simple, 1024, nullptr, true).proto, Proto::kSimple);
}

TEST(Pays, CompressesWhileLearningThenBypassesAFastLink) {
  PaysController p(
      {.workers = 1, .warmup = 4, .probe_every = 32, .probe_max = 128, .link_warmup = 3});
  auto q = compress::CodecId::kQuantize;
  EXPECT_FALSE(p.should_compress(q)) << "raw until the link is measured";
  p.record_link_rate(10.0 * (1 << 30), false);  // 10 GB/s link: a 1 GB/s codec cannot keep up
  p.record_link_rate(10.0 * (1 << 30), false);
  EXPECT_FALSE(p.should_compress(q)) << "two samples are not yet a measurement";
  p.record_link_rate(10.0 * (1 << 30), false);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(p.should_compress(q)) << "the codec is not measured yet";
    p.record_encode(q, 1 << 20, 1 << 18, 1e-3);  // 1 GB/s, ratio 4
  }
  int compressed = 0;
  for (int i = 0; i < 32 + 64 + 128; ++i) compressed += p.should_compress(q);
  EXPECT_EQ(compressed, 3) << "bypass, except probes after 32, 64 and 128 messages";
  for (int i = 0; i < 128 * 4; ++i) compressed += p.should_compress(q);
  EXPECT_EQ(compressed, 3 + 4) << "then one in probe_max";
  EXPECT_FALSE(p.view(q).compressing);
  EXPECT_NEAR(p.view(q).speedup, (1 << 20) / 1e-3 / (10.0 * (1 << 30)), 1e-9)
      << "min(ratio, encode/link, decode/link)";
}

TEST(Pays, ARankThatAlsoReceivesPaysForEncodeAndDecodeOnTheSameThreads) {
  // Measured at 10 Gbit/s (tc tbf, 8.4 Gbit/s achieved) in an all-to-all: encode 2.3 GB/s,
  // decode 3.8 GB/s, link 1.28 GB/s. Each rank encodes what it sends and decodes as much
  // that it receives, on one codec thread, so it cannot send faster than 1/(1/2.3 + 1/3.8)
  // = 1.43 GB/s: 1.12x, not the 1.80x that encode/link alone promises, and compressing lost.
  auto q = compress::CodecId::kQuantize;
  PaysController both({.workers = 1, .warmup = 1, .link_warmup = 1});
  PaysController sender({.workers = 1, .warmup = 1, .link_warmup = 1});
  for (PaysController* p : {&both, &sender}) {
    p->record_link_rate(1.28e9, false);
    p->record_encode(q, 8 << 20, 1 << 20, (8 << 20) / 2.3e9);
    p->record_decode(q, 8 << 20, (8 << 20) / 3.8e9);  // a probe of the peer's
    p->record_sent(8 << 20);
  }
  both.record_received(8 << 20);
  EXPECT_NEAR(both.view(q).decode_share, 1.0, 1e-12);
  EXPECT_NEAR(both.view(q).speedup, 1 / (1.28e9 * (1 / 2.3e9 + 1 / 3.8e9)), 1e-9);
  EXPECT_FALSE(both.should_compress(q)) << "1.12x is below start_above";
  EXPECT_NEAR(sender.view(q).decode_share, 0.0, 1e-12);
  EXPECT_NEAR(sender.view(q).speedup, 2.3 / 1.28, 1e-9)
      << "a rank that only sends pays only the encode";
  EXPECT_TRUE(sender.should_compress(q));
  // On a 1 Gbit/s link the codecs keep up with room to spare: the ratio limits.
  PaysController slow({.workers = 1, .warmup = 1, .link_warmup = 1});
  slow.record_link_rate(117e6, false);
  slow.record_encode(q, 8 << 20, 1 << 20, (8 << 20) / 2.3e9);
  slow.record_decode(q, 8 << 20, (8 << 20) / 3.8e9);
  slow.record_sent(8 << 20);
  slow.record_received(8 << 20);
  EXPECT_NEAR(slow.view(q).speedup, 8.0, 1e-9);
  EXPECT_TRUE(slow.should_compress(q));
  // The share forgets: after much one-way traffic the old receives hardly count.
  for (int i = 0; i < 400; ++i) both.record_sent(8 << 20);
  EXPECT_LT(both.view(q).decode_share, 0.02);
}

TEST(Pays, MeasuresTheCodecWithWarmupEncodesEvenWithMessagesInFlight) {
  PaysController p({.warmup = 2, .probe_every = 32, .link_warmup = 1});
  auto q = compress::CodecId::kQuantize;
  p.record_link_rate(10e9, false);
  int compressed = 0;
  for (int i = 0; i < 8; ++i)
    compressed += p.should_compress(q);  // 8 isends before any encode ends
  EXPECT_EQ(compressed, 2) << "only `warmup` encodes while their measurements are outstanding";
  p.record_encode(q, 1 << 20, 1 << 18, 1e-3);
  p.record_encode(q, 1 << 20, 1 << 18, 1e-3);
  EXPECT_FALSE(p.should_compress(q)) << "measured: a 1 GB/s codec does not pay on a 10 GB/s link";
  PaysController lost({.warmup = 1, .probe_every = 4, .link_warmup = 1});
  lost.record_link_rate(10e6, false);
  compressed = 0;
  for (int i = 0; i < 9; ++i)
    compressed += lost.should_compress(q);  // the one encode never reports
  EXPECT_EQ(compressed, 3) << "a try every probe_every messages while no measurement arrives";
}

// The collective network asks for two pieces per call when NCCL posts it (up to 8 calls
// ahead), and the second warm-up sample (a result's encode) arrives only once the other nodes'
// contributions are in. Counting outstanding encodes rather than started ones keeps the calls
// posted meanwhile coded; the old rule sent 14 of an all-reduce's first 128 pieces raw at
// 1 Gbit/s.
TEST(Pays, AWarmupEncodeThatReportsLetsTheNextMessageCompress) {
  PaysController p({.warmup = 2, .probe_every = 32, .link_warmup = 1});
  auto t = compress::CodecId::kThreshold;
  p.record_link_rate(125e6, false);            // 1 Gbit/s
  EXPECT_TRUE(p.should_compress(t));           // call 8's contribution
  EXPECT_TRUE(p.should_compress(t));           // call 8's result
  EXPECT_FALSE(p.should_compress(t));          // two outstanding: the next goes raw
  p.record_encode(t, 128 << 10, 2700, 40e-6);  // call 8's contribution reports
  EXPECT_TRUE(p.should_compress(t)) << "one outstanding: another warm-up encode may start";
  EXPECT_FALSE(p.should_compress(t));
  p.record_encode(t, 128 << 10, 2700, 40e-6);
  p.record_decode(t, 128 << 10, 20e-6);
  p.record_sent(256 << 10);
  p.record_received(128 << 10);
  EXPECT_TRUE(p.should_compress(t)) << "measured: 3.3 GB/s at ratio 48 pays on 1 Gbit/s";
  // Where coding does not pay (loopback), the warm-up still costs `warmup` encodes in flight,
  // one more per report, and no more once measured.
  PaysController fast({.warmup = 2, .probe_every = 32, .link_warmup = 1});
  fast.record_link_rate(3e9, false);
  int compressed = 0;
  for (int i = 0; i < 8; ++i) compressed += fast.should_compress(t);
  EXPECT_EQ(compressed, 2);
  fast.record_encode(t, 128 << 10, 2700, 130e-6);  // 1 GB/s
  compressed += fast.should_compress(t);
  fast.record_encode(t, 128 << 10, 2700, 130e-6);
  EXPECT_EQ(compressed, 3);
  EXPECT_FALSE(fast.should_compress(t)) << "measured: a 1 GB/s codec does not pay on 3 GB/s";
  EXPECT_FALSE(fast.view(t).compressing);
}

TEST(Pays, ACodecsColdFirstRunsDoNotDragItsSpeedDown) {
  // Measured at 10 Gbit/s: the first encode of a process read 2.8-3.2 GB/s, the next ones
  // 5.4-6.7. As the seed of a moving average the cold one kept the estimate near 4 GB/s, the
  // prediction at the start threshold, and the controller compressed late or never.
  PaysController p({.warmup = 2, .link_warmup = 1});
  auto q = compress::CodecId::kQuantize;
  const double mb = 1 << 20;
  p.record_encode(q, 1 << 20, 1 << 17, mb / 3e9);  // cold
  p.record_encode(q, 1 << 20, 1 << 17, mb / 6e9);
  p.record_decode(q, 1 << 20, mb / 5e9);  // cold
  p.record_decode(q, 1 << 20, mb / 15e9);
  EXPECT_NEAR(p.view(q).encode_Bps, 6e9, 1e3) << "the best of the first runs";
  EXPECT_NEAR(p.view(q).decode_Bps, 15e9, 1e3);
  p.record_encode(q, 1 << 20, 1 << 17, mb / 5e9);
  p.record_encode(q, 1 << 20, 1 << 17, mb / 5e9);
  EXPECT_NEAR(p.view(q).encode_Bps, 6e9, 1e3) << "still seeding: four runs";
  p.record_encode(q, 1 << 20, 1 << 17, mb / 1e9);
  EXPECT_NEAR(p.view(q).encode_Bps, 6e9 + 0.2 * (1e9 - 6e9), 1e3)
      << "then a moving average, which follows a slowdown";
}

TEST(Pays, NeverStartsOnACodecThatCannotGainMuch) {
  // Lossless on dense float gradients: ratio 1.02, however fast the codec. Compressing
  // would cost CPU for 2%, so after its warm-up the codec must not keep going.
  PaysController p({.warmup = 2, .link_warmup = 1});
  auto l = compress::CodecId::kLossless;
  p.record_link_rate(100e6, false);  // a slow link: encode/link = 30
  EXPECT_TRUE(p.should_compress(l));
  EXPECT_TRUE(p.should_compress(l));
  p.record_encode(l, 3000000, 2941176, 1e-3);
  p.record_encode(l, 3000000, 2941176, 1e-3);
  int compressed = 0;
  for (int i = 0; i < 31; ++i) compressed += p.should_compress(l);
  EXPECT_EQ(compressed, 0) << "predicted speedup 1.02 is below start_above";
}

TEST(Pays, CompressesOnASlowLinkWithHysteresis) {
  PaysController p({.workers = 2, .warmup = 1, .link_warmup = 1});
  auto t = compress::CodecId::kThreshold;
  p.record_encode(t, 1 << 20, 1 << 14, 1e-3);  // 1 GB/s, ratio 64
  p.record_link(125'000'000, 1.0);             // 1 Gbit/s
  EXPECT_TRUE(p.should_compress(t));
  p.record_link_rate(50e6, true);  // an application-limited sample: a lower bound
  EXPECT_NEAR(p.view(t).link_Bps, 125e6, 1) << "a lower bound below the estimate says nothing";
  EXPECT_GT(p.view(t).speedup, 5);
  PaysController off({.enabled = false, .warmup = 1, .link_warmup = 1});
  off.record_encode(t, 1 << 20, 1 << 19, 1.0);  // hopelessly slow
  off.record_link(100ull << 30, 1.0);
  EXPECT_TRUE(off.should_compress(t)) << "SQUEEZE_BYPASS=off follows the policy";
}

TEST(Pays, BurstsThroughATokenBucketDoNotHideASlowLink) {
  // Behind tc tbf at 1 Gbit/s, the kernel's application-limited samples of compressed traffic
  // read the veth's speed (3.5 GB/s measured), because each small burst fits the bucket; and
  // the first saturated samples of a connection, while the bucket is still full, read 1.1 GB/s.
  PaysController p({.workers = 1, .warmup = 1, .link_warmup = 3});
  auto q = compress::CodecId::kQuantize;
  p.record_link_rate(2e9, true);  // before any saturated sample a lower bound stands in...
  p.record_link_rate(3e9, true);  // ...and only raises the estimate
  p.record_link_rate(1e9, true);
  EXPECT_NEAR(p.view(q).link_Bps, 3e9, 1);
  p.record_link_rate(1.1e9, false);  // saturated samples replace the bursts' estimate
  EXPECT_NEAR(p.view(q).link_Bps, 1.1e9, 1);
  p.record_link_rate(1.1e9, false);
  for (double r : {120e6, 125e6, 118e6}) p.record_link_rate(r, false);
  EXPECT_NEAR(p.view(q).link_Bps, 125e6, 1) << "the median of the last samples";
  p.record_encode(q, 1 << 20, 1 << 17, 1e-3);  // ~1 GB/s, ratio 8
  EXPECT_TRUE(p.should_compress(q));
  for (int i = 0; i < 50; ++i) p.record_link_rate(3.5e9, true);
  EXPECT_NEAR(p.view(q).link_Bps, 125e6, 1) << "bursts after a saturated sample say nothing";
  for (double r : {2e9, 121e6, 119e6, 124e6})
    p.record_link_rate(r, false);  // an outlier among them
  EXPECT_NEAR(p.view(q).link_Bps, 124e6, 1)
      << "9 samples: 1.1e9 1.1e9 120e6 125e6 118e6 2e9 121e6 119e6 124e6";
  int compressed = 0;
  for (int i = 0; i < 100; ++i) compressed += p.should_compress(q);
  EXPECT_EQ(compressed, 100);
  for (int i = 0; i < 5; ++i) p.record_link_rate(10e9, false);  // the link really got faster
  EXPECT_NEAR(p.view(q).link_Bps, 10e9, 1);
  EXPECT_FALSE(p.should_compress(q));
}

TEST(Pays, ALinkThatKeepsUpWithRawTrafficGainsOnlyItsBusyShare) {
  // Loopback, measured: the link (a kernel copy) read ~1-2 GB/s while busy, and was busy ~60%
  // of the time raw traffic had messages to move. Compressing can shorten only that 60%:
  // 1 / (0.4 + 0.6 / 1.90) = 1.40, below start_above, where the link's speed alone said 1.90.
  auto q = compress::CodecId::kQuantize;
  auto feed = [q](PaysController& p, double utilization) {
    p.record_link_rate(1.5e9, false, utilization);
    p.record_encode(q, 8 << 20, 1 << 20, (8 << 20) / 4e9);
    p.record_decode(q, 8 << 20, (8 << 20) / 10e9);
    p.record_sent(1 << 20);
    p.record_received(1 << 20);
  };
  PaysController loopback({.workers = 1, .warmup = 1, .link_warmup = 1});
  feed(loopback, 0.6);
  const double alone = 1 / (1.5e9 * (1 / 4e9 + 1 / 10e9));
  EXPECT_NEAR(loopback.view(q).speedup, 1 / (0.4 + 0.6 / alone), 1e-9);
  EXPECT_NEAR(loopback.view(q).utilization, 0.6, 1e-12);
  int compressed = 0;
  for (int i = 0; i < 31; ++i) compressed += loopback.should_compress(q);
  EXPECT_EQ(compressed, 0) << "1.40 is below start_above (and the first probe is due after 32)";

  PaysController saturated({.workers = 1, .warmup = 1, .link_warmup = 1});
  feed(saturated, 1.0);
  EXPECT_NEAR(saturated.view(q).speedup, alone, 1e-9)
      << "a link busy all the time keeps the whole gain";
  PaysController unknown({.workers = 1, .warmup = 1, .link_warmup = 1});
  feed(unknown, -1);
  EXPECT_NEAR(unknown.view(q).speedup, alone, 1e-9) << "no utilization measured: no cap";
}

TEST(Pays, UtilizationIsLearnedOnlyWhileSendingRaw) {
  // Compressed traffic leaves the link idle more by design; that must not talk the codec out
  // of a link that raw traffic keeps busy.
  auto q = compress::CodecId::kQuantize;
  PaysController p({.workers = 4, .warmup = 1, .link_warmup = 1});
  p.record_link_rate(125e6, false, 1.0);  // 1 Gbit/s, busy all the time raw
  p.should_compress(q);
  p.record_encode(q, 8 << 20, 1 << 20, (8 << 20) / 2e9);
  EXPECT_TRUE(p.should_compress(q));
  for (int i = 0; i < 20; ++i) p.record_link_rate(125e6, false, 0.1);
  EXPECT_NEAR(p.view(q).utilization, 1.0, 1e-12);
  EXPECT_TRUE(p.should_compress(q));
}

TEST(DedupeGate, AStreamWhoseRowsDoNotRepeatSkipsDedupeAndProbesAgain) {
  DedupeGate g;
  EXPECT_TRUE(g.open()) << "dedupe runs until a message shows it finds too little";
  EXPECT_FALSE(g.saw(256, 200)) << "56 of 256 rows removed: worth it";
  EXPECT_FALSE(g.saw(256, 248)) << "8 of 256 = 1/32: still worth it";
  EXPECT_TRUE(g.open());
  EXPECT_FALSE(g.saw(0, 0)) << "dedupe did not run (no full row)";
  EXPECT_TRUE(g.open());
  EXPECT_TRUE(g.saw(256, 249)) << "7 of 256 < 1/32: closes";
  for (uint32_t i = 0; i < DedupeGate::kRest; ++i)
    EXPECT_FALSE(g.open()) << "message " << i << " skips it";
  EXPECT_TRUE(g.open()) << "then one message probes again";
  EXPECT_FALSE(g.saw(256, 100)) << "rows repeat now: stays open";
  EXPECT_TRUE(g.open());
  EXPECT_TRUE(g.open());
  EXPECT_FALSE(g.saw(10, 11)) << "a report that cannot be true changes nothing";
  EXPECT_TRUE(g.open());
}

// Settings as a process with exactly these variables would read them.
params::Settings settings(std::initializer_list<std::pair<const char*, const char*>> env) {
  std::vector<std::pair<std::string, std::string>> vars(env.begin(), env.end());
  return params::Settings::from([vars](const char* name) -> const char* {
    for (const auto& [k, v] : vars)
      if (k == name) return v.c_str();
    return nullptr;
  });
}

TEST(WorkerPool, CountsTheCoresOfItsAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const int all = WorkerPool::usable_cores();
  EXPECT_EQ(all, CPU_COUNT(&saved));
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &saved)) {
      CPU_SET(c, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(WorkerPool::usable_cores(), 1) << "pinned to one core (taskset -c N)";
  EXPECT_EQ(WorkerPool::configured_threads(settings({})), 0)
      << "one core: the progress thread runs the codec jobs itself";
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}

TEST(WorkerPool, SqueezeThreadsSetsTheCount) {
  EXPECT_EQ(WorkerPool::configured_threads(settings({{"SQUEEZE_THREADS", "0"}})), 0);
  EXPECT_EQ(WorkerPool::configured_threads(settings({{"SQUEEZE_THREADS", "3"}})), 3);
  // A bad value is the parameter table's error (init refuses it); the count is the default.
  const int by_cores = WorkerPool::configured_threads(settings({}));
  for (const char* bad : {"three", "2x", "-1", "100000"}) {
    const params::Settings st = settings({{"SQUEEZE_THREADS", bad}});
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(WorkerPool::configured_threads(st), by_cores) << bad;
  }
}

// Ranks that share a host's cores each size their pool by their share of them.
TEST(WorkerPool, RanksThatShareTheHostsCoresSplitThem) {
  const int cores = WorkerPool::usable_cores();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const int alone = WorkerPool::configured_threads(settings({}));
  EXPECT_EQ(settings({}).integer(params::Id::kLocalRanks), 1);
  EXPECT_EQ(WorkerPool::configured_threads(settings({{"LOCAL_WORLD_SIZE", "1"}})), alone)
      << "one rank: the whole mask";
  const std::string ranks = std::to_string(online + 1);  // cannot have disjoint masks of >= 1 core
  EXPECT_EQ(WorkerPool::configured_threads(settings({{"LOCAL_WORLD_SIZE", ranks.c_str()}})), 0)
      << "under one core each: the progress threads run the jobs";
  EXPECT_EQ(
      WorkerPool::configured_threads(settings({{"OMPI_COMM_WORLD_LOCAL_SIZE", ranks.c_str()}})), 0)
      << "Open MPI's variable counts too";
  if (cores >= 4 && 2L * cores > online) {
    EXPECT_EQ(WorkerPool::configured_threads(settings({{"LOCAL_WORLD_SIZE", "2"}})),
              std::clamp(cores / 4, 1, 8))
        << "half the cores each";
  }
  for (const char* bad : {"0", "two", "-2", ""}) {
    const params::Settings st = settings({{"LOCAL_WORLD_SIZE", bad}});
    EXPECT_TRUE(st.ok()) << "a launcher's variable is not ours to refuse";
    EXPECT_EQ(st.integer(params::Id::kLocalRanks), 1) << "'" << bad << "' says nothing";
  }
  EXPECT_EQ(WorkerPool::configured_threads(
                settings({{"LOCAL_WORLD_SIZE", ranks.c_str()}, {"SQUEEZE_THREADS", "3"}})),
            3)
      << "SQUEEZE_THREADS wins";
}

TEST(WorkerPool, WithoutThreadsJobsRunOnlyOnTheThreadThatAsks) {
  WorkerPool pool(0);
  EXPECT_EQ(pool.threads(), 0);
  struct Job {
    std::thread::id ran_on;
    bool ran = false;
  } jobs[3];
  for (Job& j : jobs)
    pool.submit(
        [](void* a) noexcept {
          auto* job = static_cast<Job*>(a);
          job->ran_on = std::this_thread::get_id();
          job->ran = true;
        },
        &j);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (const Job& j : jobs) EXPECT_FALSE(j.ran) << "no thread of its own runs a job";
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(pool.try_run_one());
  EXPECT_FALSE(pool.try_run_one()) << "the queue is empty";
  for (const Job& j : jobs) {
    EXPECT_TRUE(j.ran);
    EXPECT_EQ(j.ran_on, std::this_thread::get_id());
  }
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
