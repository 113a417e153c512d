// Units of the collective network's engine, in this process: the split of a call, the
// reduction in node order, the call identity learned from the profiler, and what a node does
// with malformed messages from a peer (a rogue end of a real TCP mesh): an error from test()
// that names the peer, and nothing written outside the piece.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "compress/codec.h"
#include "compress/half.h"
#include "plugin/collnet/call_identity.h"
#include "plugin/collnet/coll_comm.h"
#include "plugin/collnet/mesh.h"
#include "plugin/collnet/pieces.h"
#include "plugin/collnet/reduce.h"
#include "plugin/engine/engine.h"
#include "plugin/profiler/comm_registry.h"
#include "transport/registry.h"

namespace {

using namespace squeeze;
using collnet::Piece;
using policy::DataType;
using policy::ReduceOp;

TEST(Pieces, CoverTheCallOnceInBalancedPieces) {
  for (uint64_t count : {0ull, 1ull, 3ull, 4ull, 7ull, 100003ull, (1ull << 40) + 5}) {
    for (int n : {1, 2, 3, 4, 7, 64}) {
      uint64_t next = 0;
      for (int j = 0; j < n; ++j) {
        const Piece p = collnet::piece_of(count, n, j);
        EXPECT_EQ(p.begin, next);
        EXPECT_LE(p.count, count / static_cast<uint64_t>(n) + 1);
        EXPECT_GE(p.count, count / static_cast<uint64_t>(n));
        next = p.begin + p.count;
      }
      EXPECT_EQ(next, count) << count << " over " << n;
    }
  }
}

TEST(Reduce, SumsInNodeOrderInDoubleAndRoundsOnce) {
  // 1 + 2^-30 + (-1) in float would lose the small term; the result keeps it.
  const float a[] = {1.0f, 3.0f}, b[] = {std::ldexp(1.0f, -30), 4.0f}, c[] = {-1.0f, 5.0f};
  const void* in[] = {a, b, c};
  float out[2];
  ASSERT_TRUE(collnet::reduce_in_order(DataType::kFloat32, ReduceOp::kSum, in, out, 2));
  EXPECT_EQ(out[0], std::ldexp(1.0f, -30));
  EXPECT_EQ(out[1], 12.0f);
}

TEST(Reduce, BlocksGiveTheBitsOfOneElementAtATimeInPlaceToo) {
  // Counts around the block size (the vectorised passes, then a scalar tail), three inputs
  // whose sums round, and the owner's own input as the output (in place).
  for (uint64_t count : {1ull, 255ull, 256ull, 257ull, 1000ull, 4099ull}) {
    std::vector<float> a(count), b(count), c(count);
    for (uint64_t i = 0; i < count; ++i) {
      const auto x = static_cast<float>(i);
      a[i] = std::sin(x) * 1e3f;
      b[i] = std::cos(x * 0.7f) * 1e-4f;
      c[i] = -a[i] + std::ldexp(1.0f, -20) * x;
    }
    std::vector<float> want(count), got(count), in_place = b;
    for (uint64_t i = 0; i < count; ++i) {
      double s = a[i];
      s += b[i];
      s += c[i];
      want[i] = static_cast<float>(s);
    }
    const void* in[] = {a.data(), b.data(), c.data()};
    ASSERT_TRUE(
        collnet::reduce_in_order(DataType::kFloat32, ReduceOp::kSum, in, got.data(), count));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), count * 4), 0) << count;
    const void* in2[] = {a.data(), in_place.data(), c.data()};
    ASSERT_TRUE(
        collnet::reduce_in_order(DataType::kFloat32, ReduceOp::kSum, in2, in_place.data(), count));
    EXPECT_EQ(std::memcmp(in_place.data(), want.data(), count * 4), 0) << count << " in place";
  }
}

TEST(Reduce, MinMaxPickAnInputsBitsAndNanWins) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float a[] = {1.0f, -0.0f, 2.0f}, b[] = {-3.0f, 0.0f, nan};
  const void* in[] = {a, b};
  float lo[3], hi[3];
  ASSERT_TRUE(collnet::reduce_in_order(DataType::kFloat32, ReduceOp::kMin, in, lo, 3));
  ASSERT_TRUE(collnet::reduce_in_order(DataType::kFloat32, ReduceOp::kMax, in, hi, 3));
  EXPECT_EQ(lo[0], -3.0f);
  EXPECT_EQ(hi[0], 1.0f);
  EXPECT_TRUE(std::signbit(lo[1])) << "equal values: the first in node order";
  EXPECT_TRUE(std::isnan(lo[2]));
  EXPECT_TRUE(std::isnan(hi[2]));
}

TEST(Reduce, HalvesAndIntegers) {
  const uint16_t a[] = {compress::f32_to_bf16(1.5f)}, b[] = {compress::f32_to_bf16(2.25f)};
  const void* hin[] = {a, b};
  uint16_t h = 0;
  ASSERT_TRUE(collnet::reduce_in_order(DataType::kBfloat16, ReduceOp::kSum, hin, &h, 1));
  EXPECT_EQ(compress::bf16_to_f32(h), 3.75f);
  const int32_t x[] = {INT32_MAX, -5}, y[] = {1, 7};
  const void* iin[] = {x, y};
  int32_t s[2];
  ASSERT_TRUE(collnet::reduce_in_order(DataType::kInt32, ReduceOp::kSum, iin, s, 2));
  EXPECT_EQ(s[0], INT32_MIN) << "sums wrap";
  EXPECT_EQ(s[1], 2);
  EXPECT_FALSE(collnet::reduce_in_order(DataType::kInt32, ReduceOp::kMax, iin, s, 2));
  EXPECT_FALSE(collnet::reduce_in_order(DataType::kFloat64, ReduceOp::kSum, iin, s, 1));
}

// ---- call identity ------------------------------------------------------------------------

struct Registered {
  profiler::ProfilerContext* ctx;
  explicit Registered(uint64_t hash, int nranks) {
    profiler::CommInfo info;
    info.comm_hash = hash;
    info.nranks = nranks;
    info.nnodes = nranks;
    ctx = profiler::CommRegistry::instance().add(info);
  }
  ~Registered() { profiler::CommRegistry::instance().remove(ctx); }
  void announce(uint64_t seq, uint64_t count, int channels) {
    profiler::CollNetColl c;
    c.seq = seq;
    c.count = count;
    c.dtype = DataType::kFloat32;
    c.algo = policy::Algo::kCollNetChain;
    c.nchannels = channels;
    profiler::CommRegistry::instance().note_collnet_coll(ctx, c);
  }
};

TEST(CallIdentity, FollowsNcclsCutOfEachCollective) {
  Registered r(0xabc1, 4);
  collnet::CallIdentity id(0xabc1, 4);
  // 100000 elements over 2 channels of 8192-element chunks: 7 steps of one call each.
  r.announce(11, 100000, 2);
  r.announce(12, 16384, 10);  // 10 channels: 2 calls per step (8 and 2 channels)
  for (uint64_t k = 0; k < 7; ++k) {
    const auto c = id.next(16384, DataType::kFloat32);
    ASSERT_TRUE(c.known) << k;
    EXPECT_EQ(c.stream_count, 100000u);
    EXPECT_EQ(c.position, k * 16384);
    EXPECT_EQ(c.algo, policy::Algo::kCollNetChain);
  }
  auto a = id.next(8 * 1024, DataType::kFloat32);  // chunk 1024, group 0 of 8 channels
  ASSERT_TRUE(a.known);
  EXPECT_EQ(a.position, 0u);
  auto b = id.next(2 * 1024, DataType::kFloat32);  // group 1: channels 8 and 9
  ASSERT_TRUE(b.known);
  EXPECT_EQ(b.position, 8u * 1024);
  EXPECT_EQ(b.stream_count, 16384u);
  // Step 1 of the same collective (10 x 1024 per step).
  auto c = id.next(8 * 1024, DataType::kFloat32);
  ASSERT_TRUE(c.known);
  EXPECT_EQ(c.position, 10u * 1024);
}

TEST(CallIdentity, LosesItsPlaceForGoodOnAMismatch) {
  Registered r(0xabc2, 2);
  collnet::CallIdentity id(0xabc2, 2);
  r.announce(1, 4096, 2);
  r.announce(2, 4096, 2);
  EXPECT_TRUE(id.next(2048, DataType::kFloat32).known);
  EXPECT_FALSE(id.next(1000, DataType::kFloat32).known) << "not the shape NCCL cuts";
  EXPECT_FALSE(id.next(2048, DataType::kFloat32).known)
      << "a cursor that lost its place must not guess";
  EXPECT_FALSE(id.why_unknown().empty());
}

TEST(CallIdentity, UnknownWithoutTheProfilerSeveralRanksPerNodeOrNoCommId) {
  collnet::CallIdentity none(0, 4);
  EXPECT_FALSE(none.next(1024, DataType::kFloat32).known);
  collnet::CallIdentity silent(0xabc3, 4);  // nothing recorded for this communicator
  EXPECT_FALSE(silent.next(1024, DataType::kFloat32).known);
  Registered r(0xabc4, 8);  // 8 ranks on 4 nodes
  r.announce(1, 4096, 2);
  collnet::CallIdentity shared(0xabc4, 4);
  EXPECT_FALSE(shared.next(2048, DataType::kFloat32).known);
  Registered r2(0xabc5, 2);
  r2.announce(1, 4096, 2);
  collnet::CallIdentity one(0xabc5, 2), two(0xabc5, 2);  // two comms: each sees part
  EXPECT_FALSE(one.next(2048, DataType::kFloat32).known);
}

// ---- malformed messages from a peer ----------------------------------------------------------

// A 2-node mesh in this process over TCP on loopback: node 0 is a CollComm, node 1 a rogue
// that writes whatever it likes on its links.
class Rogue : public ::testing::Test {
 protected:
  static constexpr uint64_t kCount = 1024;  // float32; node 0 owns [0, 512), node 1 [512, 1024)
  static constexpr std::size_t kGuard = 64;

  void SetUp() override {
    transport::Options o;
    o.name = "tcp";
    o.socket.ifname = "lo";
    std::string why;
    t_ = transport::open_transport(o, &why);
    ASSERT_NE(t_, nullptr) << why;
    std::vector<std::string> errors;
    engine_.policy = policy::Policy::parse(
        R"({"version": 1, "rules": [], "default": {"codec": "raw"}})", "raw", &errors);
    ASSERT_NE(engine_.policy, nullptr);
    engine_.stats = policy::Stats::for_policy(*engine_.policy);
    alignas(8) uint8_t h0[128] = {}, h1[128] = {};
    ASSERT_TRUE(t_->listen(0, h0, &l0_).ok());
    ASSERT_TRUE(t_->listen(0, h1, &l1_).ok());
    void* handles[2] = {h0, h1};
    collnet::MeshConnector m0(*t_, 0, *l0_, handles, 2, 0), m1(*t_, 0, *l1_, handles, 2, 1);
    bool d0 = false, d1 = false;
    for (int i = 0; i < 2000000 && !(d0 && d1); ++i) {
      ASSERT_TRUE(m0.progress(&d0).ok());
      ASSERT_TRUE(m1.progress(&d1).ok());
    }
    ASSERT_TRUE(d0 && d1);
    comm_ = std::make_unique<collnet::CollComm>(engine_, 0, 2, 0, 0, m0.take());
    rogue_ = m1.take();
    send_.assign(kCount, 1.0f);
    recv_.assign(kCount * 4 + 2 * kGuard, 0xEE);
  }

  uint8_t* recv() { return recv_.data() + kGuard; }

  void* start() {
    void* req = nullptr;
    EXPECT_EQ(comm_->iallreduce(send_.data(), recv(), kCount, 7 /*float32*/, 0 /*sum*/, nullptr,
                                nullptr, &req),
              kNcclSuccess);
    return req;
  }

  // Sends `bytes` at `data` as node 1 on its link to node 0 (hop 0: contributions, 1: results).
  void rogue_send(int hop, const void* data, std::size_t bytes, transport::PayloadKind kind,
                  uint64_t original) {
    transport::SendItem item;
    item.header.tag = 0;  // the first call
    item.header.kind = kind;
    item.header.payload_bytes = bytes;
    item.header.original_bytes = original;
    item.data = data;
    auto& link = rogue_[0].send[static_cast<std::size_t>(hop)];
    int slot = -1;
    ASSERT_TRUE(link->post(item, &slot).ok());
    ASSERT_GE(slot, 0);
    bool done = false;
    for (int i = 0; i < 1000000 && !done; ++i) {
      ASSERT_TRUE(link->test(slot, &done).ok());
      (void)comm_->test(static_cast<collnet::Call*>(pending_), &done_flag_, nullptr);
    }
    link->release(slot);
  }

  // Drives the call until test() fails; expects an error, never done.
  void expect_error(void* req) {
    int done = 0;
    nccl_result_t r = kNcclSuccess;
    for (int i = 0; i < 1000000 && r == kNcclSuccess && !done; ++i)
      r = comm_->test(static_cast<collnet::Call*>(req), &done, nullptr);
    EXPECT_EQ(done, 0);
    EXPECT_NE(r, kNcclSuccess);
  }

  bool guards_intact() {
    for (std::size_t i = 0; i < kGuard; ++i)
      if (recv_[i] != 0xEE || recv_[recv_.size() - 1 - i] != 0xEE) return false;
    return true;
  }

  std::vector<uint8_t> frame_of(const void* data, uint64_t count, compress::Dtype dtype,
                                compress::CodecId codec) {
    compress::CodecParams p;
    p.codec = codec;
    p.quantize.mode = compress::BoundMode::kAbs;
    p.quantize.error_bound = 1e-3;
    compress::EncodeRequest er;
    er.dtype = dtype;
    er.src = data;
    er.count = count;
    er.params = &p;
    std::vector<uint8_t> f(compress::max_frame_bytes(er));
    std::size_t n = 0;
    EXPECT_TRUE(compress::encode_frame(er, f, &n).ok());
    f.resize(n);
    return f;
  }

  std::unique_ptr<transport::Transport> t_;
  std::unique_ptr<transport::Listener> l0_, l1_;
  plugin::Engine engine_;
  std::unique_ptr<collnet::CollComm> comm_;
  std::vector<collnet::PeerLinks> rogue_;
  std::vector<float> send_;
  std::vector<uint8_t> recv_;
  void* pending_ = nullptr;
  int done_flag_ = 0;
};

TEST_F(Rogue, ARawContributionOfTheWrongSizeIsAnError) {
  pending_ = start();
  std::vector<float> half(256, 2.0f);
  rogue_send(0, half.data(), half.size() * 4, transport::PayloadKind::kRaw, half.size() * 4);
  expect_error(pending_);
  EXPECT_TRUE(guards_intact());
}

TEST_F(Rogue, AFrameWithABadHeaderIsAnError) {
  pending_ = start();
  std::vector<float> piece(512, 2.0f);
  std::vector<uint8_t> f =
      frame_of(piece.data(), 512, compress::Dtype::kFloat32, compress::CodecId::kLossless);
  f[0] ^= 0xFF;  // magic
  rogue_send(0, f.data(), f.size(), transport::PayloadKind::kFrame, 2048);
  expect_error(pending_);
  EXPECT_TRUE(guards_intact());
}

TEST_F(Rogue, AFrameOfAnotherSizeIsAnError) {
  pending_ = start();
  std::vector<float> piece(256, 2.0f);
  std::vector<uint8_t> f =
      frame_of(piece.data(), 256, compress::Dtype::kFloat32, compress::CodecId::kLossless);
  rogue_send(0, f.data(), f.size(), transport::PayloadKind::kFrame, 1024);
  expect_error(pending_);
  EXPECT_TRUE(guards_intact());
}

TEST_F(Rogue, ALossyFrameOfAnotherElementTypeIsAnError) {
  pending_ = start();
  // 1024 bfloat16 values decode to the piece's 2048 bytes, but they are not float32 values.
  std::vector<uint16_t> piece(1024, compress::f32_to_bf16(2.0f));
  std::vector<uint8_t> f =
      frame_of(piece.data(), 1024, compress::Dtype::kBfloat16, compress::CodecId::kQuantize);
  rogue_send(0, f.data(), f.size(), transport::PayloadKind::kFrame, 2048);
  expect_error(pending_);
  EXPECT_TRUE(guards_intact());
}

TEST_F(Rogue, ATruncatedResultIsAnErrorAndNothingOutsideThePieceIsWritten) {
  pending_ = start();
  std::vector<float> contribution(512, 2.0f);  // a good contribution to node 0's piece
  rogue_send(0, contribution.data(), 2048, transport::PayloadKind::kRaw, 2048);
  std::vector<float> piece(512, 3.0f);
  std::vector<uint8_t> f =
      frame_of(piece.data(), 512, compress::Dtype::kFloat32, compress::CodecId::kLossless);
  rogue_send(1, f.data(), f.size() - 7, transport::PayloadKind::kFrame, 2048);
  expect_error(pending_);
  EXPECT_TRUE(guards_intact());
}

}  // namespace
