// The ib transport on the fake verbs provider: set-up, transfers of many sizes, requests in
// flight, grouped receives, frames against raw messages, several QPs per connection, work
// requests split at the port's maximum. Every test ends with no verbs object leaked and no
// rule broken.
#include "tests/transport/fake_verbs_pair.h"

namespace squeeze::transport::ib::fake {
namespace {

std::vector<uint8_t> pattern(std::size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 16);
  }
  return v;
}

TEST(IbConnect, SetsUpConnectedQueuePairs) {
  IbPair p;
  p.open(2);
  p.connect();
  auto qa = p.fake.qps_on("fake_0"), qb = p.fake.qps_on("fake_1");
  ASSERT_EQ(qa.size(), 2u);
  ASSERT_EQ(qb.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(qa[i].state, IBV_QPS_RTS);
    EXPECT_EQ(qb[i].state, IBV_QPS_RTS);
    EXPECT_EQ(qa[i].dest_qpn, qb[i].qpn);
    EXPECT_EQ(qb[i].dest_qpn, qa[i].qpn);
  }
  p.close_and_check();
}

TEST(IbConnect, BadHandleIsAUsageError) {
  IbPair p;
  p.open();
  uint8_t handle[kHandleBytes] = {1, 2, 3};
  std::unique_ptr<SendComm> c;
  Status s = p.a->connect(0, handle, &c);
  EXPECT_EQ(s.code(), Status::Code::kInvalidUsage);
  EXPECT_NE(s.message().find("not a Squeeze ib handle"), std::string::npos) << s.message();
  EXPECT_EQ(p.a->connect(5, handle, &c).code(), Status::Code::kInvalidUsage);
  p.close_and_check();
}

class IbTransfer : public ::testing::TestWithParam<int> {};

// One message of each size, received into a larger posted buffer: bytes intact, size
// reported, nothing written past the message.
TEST_P(IbTransfer, EverySizeArrivesIntact) {
  IbPair p;
  p.open(GetParam());
  p.connect();
  const std::vector<std::size_t> sizes = {0,
                                          1,
                                          2,
                                          3,
                                          7,
                                          63,
                                          64,
                                          65,
                                          4095,
                                          4096,
                                          4097,
                                          65535,
                                          65536,
                                          65537,
                                          131071,
                                          131073,
                                          262147,
                                          999999,
                                          1 << 20,
                                          (1 << 20) + 3,
                                          (4 << 20) - 1,
                                          4 << 20};
  for (std::size_t n : sizes) {
    auto src = pattern(n, static_cast<uint32_t>(n));
    std::vector<uint8_t> dst(n + 4096, 0xcd);
    RecvItem ri{7, dst.data(), n + 100};
    int rs = -1, ss = -1;
    ASSERT_TRUE(p.recv->post({&ri, 1}, &rs).ok());
    ASSERT_GE(rs, 0);
    SendItem si{{7, PayloadKind::kRaw, n, n}, src.data(), nullptr};
    ASSERT_TRUE(p.send->post(si, &ss).ok());
    ASSERT_GE(ss, 0);
    Received got[1];
    Status s = p.complete(ss, rs, got);
    ASSERT_TRUE(s.ok()) << n << ": " << s.message();
    EXPECT_EQ(got[0].header.original_bytes, n);
    EXPECT_EQ(got[0].header.kind, PayloadKind::kRaw);
    EXPECT_EQ(got[0].header.tag, 7);
    ASSERT_TRUE(std::equal(src.begin(), src.end(), dst.begin())) << "size " << n;
    for (std::size_t i = n; i < dst.size(); ++i)
      ASSERT_EQ(dst[i], 0xcd) << "byte " << i << " past a " << n << "-byte message";
    p.send->release(ss);
    p.recv->release(rs);
  }
  p.close_and_check();
}

INSTANTIATE_TEST_SUITE_P(QpsPerConn, IbTransfer, ::testing::Values(1, 3));

TEST(IbTransferMore, EightInFlightThenQueuesFull) {
  IbPair p;
  p.open();
  p.connect();
  constexpr int kN = 8;
  std::vector<std::vector<uint8_t>> src, dst;
  int rs[kN], ss[kN];
  for (int i = 0; i < kN; ++i) {
    src.push_back(pattern(100000 + static_cast<std::size_t>(i) * 3, static_cast<uint32_t>(i)));
    dst.emplace_back(200000, 0);
    RecvItem ri{i, dst[i].data(), dst[i].size()};
    ASSERT_TRUE(p.recv->post({&ri, 1}, &rs[i]).ok());
    SendItem si{{i, PayloadKind::kRaw, src[i].size(), src[i].size()}, src[i].data(), nullptr};
    ASSERT_TRUE(p.send->post(si, &ss[i]).ok());
    ASSERT_GE(rs[i], 0);
    ASSERT_GE(ss[i], 0);
  }
  for (int i = 0; i < kN; ++i) {
    Received got[1];
    Status s = p.complete(ss[i], rs[i], got);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(got[0].header.original_bytes, src[i].size());
    EXPECT_TRUE(std::equal(src[i].begin(), src[i].end(), dst[i].begin())) << i;
    p.send->release(ss[i]);
    p.recv->release(rs[i]);
  }
  // kMaxRequests receives, then -1; 256 sends, then -1.
  std::vector<uint8_t> buf(64);
  std::vector<int> r, s;
  for (int i = 0; i <= kMaxRequests; ++i) {
    RecvItem ri{1, buf.data(), buf.size()};
    int slot = -2;
    ASSERT_TRUE(p.recv->post({&ri, 1}, &slot).ok());
    if (i < kMaxRequests)
      r.push_back(slot);
    else
      EXPECT_EQ(slot, -1) << "receive " << i + 1 << " must not fit";
  }
  for (int i = 0; i <= kMaxRequests * kMaxRecvs; ++i) {
    SendItem si{{1, PayloadKind::kRaw, 8, 8}, buf.data(), nullptr};
    int slot = -2;
    ASSERT_TRUE(p.send->post(si, &slot).ok());
    if (i < kMaxRequests * kMaxRecvs)
      s.push_back(slot);
    else
      EXPECT_EQ(slot, -1) << "send " << i + 1 << " must not fit";
  }
  // The 32 receives complete with the first 32 sends; the rest wait for receives.
  for (int i = 0; i < kMaxRequests; ++i) {
    Received got[1];
    ASSERT_TRUE(p.complete(s[i], r[i], got).ok());
    EXPECT_EQ(got[0].header.original_bytes, 8u);
    p.recv->release(r[i]);
  }
  p.close_and_check();
}

TEST(IbTransferMore, GroupedReceiveMatchesTagsInAnyOrder) {
  IbPair p;
  p.open();
  p.connect();
  std::vector<std::vector<uint8_t>> src, dst;
  RecvItem items[kMaxRecvs];
  for (int i = 0; i < kMaxRecvs; ++i) {
    src.push_back(
        pattern(1000 * static_cast<std::size_t>(i + 1) + 1, 40 + static_cast<uint32_t>(i)));
    dst.emplace_back(src[i].size() + 10, 0);
    items[i] = RecvItem{100 + i, dst[i].data(), dst[i].size()};
  }
  int rs = -1;
  ASSERT_TRUE(p.recv->post({items, kMaxRecvs}, &rs).ok());
  std::vector<int> ss;
  for (int i = kMaxRecvs - 1; i >= 0; --i) {  // reversed tag order
    int slot = -1;
    SendItem si{{100 + i, PayloadKind::kRaw, src[i].size(), src[i].size()}, src[i].data(), nullptr};
    ASSERT_TRUE(p.send->post(si, &slot).ok());
    ss.push_back(slot);
  }
  Received got[kMaxRecvs];
  for (int s : ss) ASSERT_TRUE(p.complete(s, -1, {}).ok());
  ASSERT_TRUE(p.complete(-1, rs, got).ok());
  for (int i = 0; i < kMaxRecvs; ++i) {
    EXPECT_EQ(got[i].header.tag, 100 + i);
    EXPECT_EQ(got[i].header.original_bytes, src[i].size());
    EXPECT_TRUE(std::equal(src[i].begin(), src[i].end(), dst[i].begin())) << "item " << i;
  }
  p.close_and_check();
}

TEST(IbTransferMore, FramesLandInStagingRawInTheBuffer) {
  IbPair p;
  p.open();
  p.connect();
  auto frame = pattern(3000, 5), raw = pattern(5000, 6);
  std::vector<uint8_t> d0(8192, 0xee), d1(8192, 0xee);
  RecvItem items[2] = {{1, d0.data(), d0.size()}, {2, d1.data(), d1.size()}};
  int rs = -1, s0 = -1, s1 = -1;
  ASSERT_TRUE(p.recv->post({items, 2}, &rs).ok());
  ASSERT_TRUE(
      p.send->post({{1, PayloadKind::kFrame, frame.size(), 8192}, frame.data(), nullptr}, &s0)
          .ok());
  ASSERT_TRUE(
      p.send->post({{2, PayloadKind::kRaw, raw.size(), raw.size()}, raw.data(), nullptr}, &s1)
          .ok());
  Received got[2];
  ASSERT_TRUE(p.complete(s0, -1, {}).ok());
  ASSERT_TRUE(p.complete(s1, rs, got).ok());
  EXPECT_EQ(got[0].header.kind, PayloadKind::kFrame);
  EXPECT_EQ(got[0].header.payload_bytes, frame.size());
  EXPECT_EQ(got[0].header.original_bytes, 8192u);
  ASSERT_EQ(got[0].staged.size(), frame.size());
  EXPECT_TRUE(std::equal(frame.begin(), frame.end(), got[0].staged.begin()));
  EXPECT_TRUE(std::all_of(d0.begin(), d0.end(), [](uint8_t b) { return b == 0xee; }))
      << "a frame never touches the buffer";
  EXPECT_EQ(got[1].header.kind, PayloadKind::kRaw);
  EXPECT_TRUE(got[1].staged.empty());
  EXPECT_TRUE(std::equal(raw.begin(), raw.end(), d1.begin()));
  p.close_and_check();
}

TEST(IbTransferMore, LargeMessagesSpreadOverEveryQp) {
  IbPair p;
  p.open(4);
  p.connect();
  const std::size_t n = (4 << 20) + 12345;
  FakeCounters before = p.fake.counters();
  p.transfer_raw(pattern(n, 77));
  FakeCounters after = p.fake.counters();
  // 1 CTS + 4 parts (three with an immediate each, QP 0's record with one).
  EXPECT_EQ(after.write_imms - before.write_imms, 5u);
  EXPECT_EQ(after.writes - before.writes, 1u) << "QP 0's share before its record";
  p.close_and_check();
}

TEST(IbTransferMore, PartsLongerThanThePortMaximumAreSplit) {
  auto devs = two_devices();
  for (auto& d : devs) d.ports[0].max_msg_sz = 64 * 1024;
  IbPair p(devs);
  p.open(2);
  p.connect();
  const std::size_t n = (1 << 20) + 5;
  FakeCounters before = p.fake.counters();
  p.transfer_raw(pattern(n, 3));
  FakeCounters after = p.fake.counters();
  EXPECT_EQ(after.writes + after.write_imms - before.writes - before.write_imms, 1u + 17u + 1u)
      << "a CTS, 17 writes of at most 64 KiB, a record";
  p.close_and_check();
}

}  // namespace
}  // namespace squeeze::transport::ib::fake
