// What the UCX transport reads from peers before UCX does: the set-up hello (checked field by
// field, fed in any chunking), and the tag layout that keeps comms sharing a worker apart.
#include "transport/ucx/ucx_wire.h"

#include <gtest/gtest.h>

#include <cstring>

#include "compress/byte_io.h"

namespace squeeze::transport::ucx {
namespace {

std::string feed_all(HelloReader& r, const std::vector<uint8_t>& bytes, std::size_t chunk) {
  std::size_t off = 0;
  while (off < bytes.size() && !r.done()) {
    std::size_t n = std::min({chunk, r.want(), bytes.size() - off});
    if (std::string bad = r.feed(bytes.data() + off, n); !bad.empty()) return bad;
    off += n;
  }
  return r.done() ? "" : "incomplete";
}

TEST(UcxHello, RoundTripsInAnyChunking) {
  std::vector<uint8_t> addr(300);
  for (std::size_t i = 0; i < addr.size(); ++i) addr[i] = static_cast<uint8_t>(i * 13);
  std::vector<uint8_t> msg = encode_hello(kAcceptMagic, 0x1122334455667788ull, 42, addr);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{24}, std::size_t{4096}}) {
    HelloReader r(kAcceptMagic, 0x1122334455667788ull, true);
    ASSERT_EQ(feed_all(r, msg, chunk), "") << "chunk " << chunk;
    EXPECT_EQ(r.address(), addr);
    EXPECT_EQ(r.comm_id(), 42u);
    EXPECT_EQ(r.want(), 0u);
  }
}

TEST(UcxHello, ConnectHelloCarriesNothing) {
  HelloReader r(kConnectMagic, 9, false);
  ASSERT_EQ(feed_all(r, encode_hello(kConnectMagic, 9, 0, {}), 5), "");
  EXPECT_TRUE(r.address().empty());
}

TEST(UcxHello, BadFieldsAreNamed) {
  std::vector<uint8_t> addr(16, 1);
  auto check = [&](std::vector<uint8_t> msg, const char* what) {
    HelloReader r(kAcceptMagic, 5, true);
    std::string bad = feed_all(r, msg, 64);
    EXPECT_NE(bad.find(what), std::string::npos) << "got: " << bad;
  };
  std::vector<uint8_t> good = encode_hello(kAcceptMagic, 5, 3, addr);
  std::vector<uint8_t> m = good;
  m[0] ^= 1;
  check(m, "magic");
  m = good;
  m[4] = 9;
  check(m, "version");
  check(encode_hello(kAcceptMagic, 6, 3, addr), "nonce");
  check(encode_hello(kAcceptMagic, 5, 0, addr), "comm id 0");
  check(encode_hello(kAcceptMagic, 5, 3, {}), "address length 0");
  m = good;
  compress::store_le32(m.data() + 16, static_cast<uint32_t>(kMaxWorkerAddressBytes + 1));
  check(m, "address length");
  HelloReader c(kConnectMagic, 5, false);
  EXPECT_NE(
      feed_all(c, encode_hello(kConnectMagic, 5, 0, addr), 64).find("unexpected worker address"),
      std::string::npos);
}

TEST(UcxHello, NeverTakesMoreThanAnnounced) {
  std::vector<uint8_t> msg = encode_hello(kAcceptMagic, 1, 1, std::vector<uint8_t>(8, 2));
  HelloReader r(kAcceptMagic, 1, true);
  ASSERT_EQ(r.feed(msg.data(), kHelloFixedBytes), "");
  EXPECT_EQ(r.want(), 8u);
  std::vector<uint8_t> more(9, 2);
  EXPECT_NE(r.feed(more.data(), more.size()), "") << "9 bytes offered where 8 were announced";
}

TEST(UcxTags, CommsAndKindsNeverCollide) {
  EXPECT_NE(header_tag(1, 5), payload_tag(1, 5));
  EXPECT_NE(header_tag(1, 5), header_tag(2, 5));
  EXPECT_NE(payload_tag(1, 5), header_tag(1, 5 | 0x80000000u)) << "seq wraps within 31 bits";
  EXPECT_EQ(header_tag(7, 0x80000003u), header_tag(7, 3));
  EXPECT_EQ(payload_tag(0xffffffffu, 0) >> 32, 0xffffffffu);
}

}  // namespace
}  // namespace squeeze::transport::ucx
