// Building blocks of the TCP transport: interface filters, the wire header, slot pools.
#include <gtest/gtest.h>

#include "transport/tcp/interfaces.h"
#include "transport/tcp/tcp_comm.h"
#include "transport/tcp/wire.h"

namespace squeeze::transport::tcp {
namespace {

TEST(IfFilter, PrefixListMatchesLikeNccl) {
  IfFilter f = IfFilter::parse("eth,ib");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_TRUE(f.matches("ib1"));
  EXPECT_FALSE(f.matches("lo"));
}

TEST(IfFilter, CaretExcludes) {
  IfFilter f = IfFilter::parse("^docker,lo");
  EXPECT_FALSE(f.matches("docker0"));
  EXPECT_FALSE(f.matches("lo"));
  EXPECT_TRUE(f.matches("eth0"));
}

TEST(IfFilter, EqualsMeansExactName) {
  IfFilter f = IfFilter::parse("=eth0");
  EXPECT_TRUE(f.matches("eth0"));
  EXPECT_FALSE(f.matches("eth00"));
  IfFilter g = IfFilter::parse("^=eth0");
  EXPECT_FALSE(g.matches("eth0"));
  EXPECT_TRUE(g.matches("eth01"));
}

TEST(Interfaces, LoopbackIsFoundWhenAskedFor) {
  auto ifs = find_interfaces("lo", 0);
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(ifs[0].name, "lo");
  EXPECT_EQ(ifs[0].addr.port(), 0);
  EXPECT_EQ(interface_speed_mbps("lo"), 10000) << "no /sys speed for lo: default 10 Gb/s";
  EXPECT_TRUE(find_interfaces("=no-such-if", 0).empty());
}

TEST(Wire, HeaderRoundTrips) {
  MessageHeader h{-5, PayloadKind::kFrame, 1234, 99999};
  uint8_t buf[kWireHeaderBytes];
  encode_header(h, buf);
  MessageHeader back;
  ASSERT_EQ(decode_header(buf, &back), "");
  EXPECT_EQ(back.tag, -5);
  EXPECT_EQ(back.kind, PayloadKind::kFrame);
  EXPECT_EQ(back.payload_bytes, 1234u);
  EXPECT_EQ(back.original_bytes, 99999u);
}

TEST(Wire, CorruptHeadersAreNamed) {
  MessageHeader h{1, PayloadKind::kRaw, 10, 10}, back;
  uint8_t buf[kWireHeaderBytes];
  encode_header(h, buf);
  buf[0] ^= 1;
  EXPECT_NE(decode_header(buf, &back).find("magic"), std::string::npos);
  encode_header(h, buf);
  buf[4] = 9;
  EXPECT_NE(decode_header(buf, &back).find("kind"), std::string::npos);
  encode_header(h, buf);
  buf[5] = 2;
  EXPECT_NE(decode_header(buf, &back).find("version"), std::string::npos);
  encode_header(MessageHeader{1, PayloadKind::kRaw, 10, 11}, buf);
  EXPECT_NE(decode_header(buf, &back).find("raw message"), std::string::npos);
}

struct TestOp {
  bool in_use = false;
  int value = 0;
  void reset() { *this = TestOp{}; }
};

TEST(SlotRing, HandsOutEverySlotOnceThenRefuses) {
  SlotRing<TestOp, 4> ring;
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) got.push_back(ring.acquire());
  EXPECT_EQ(ring.acquire(), -1) << "a full ring must refuse, not overwrite";
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3}));
  ring.release(2);
  EXPECT_FALSE(ring.valid(2));
  EXPECT_EQ(ring.acquire(), 2);
  ring.release(7);  // out of range: ignored
  EXPECT_EQ(ring.order().size(), 5u);
}

}  // namespace
}  // namespace squeeze::transport::tcp
