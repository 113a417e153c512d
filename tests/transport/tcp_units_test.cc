// Building blocks of the TCP transport: the wire header, slot pools, the link rate.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/tcp/tcp_comm.h"
#include "transport/tcp/wire.h"

namespace squeeze::transport::tcp {
namespace {

using sock::Fd;

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

// The pays controller's link speed: one sample per window of a few milliseconds of busy
// time, counted once. Reading TCP_INFO again without new traffic gives no new sample, and a
// window the connection mostly sat idle in is only a lower bound (bursts).
class LinkRateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Fd listener(socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_GE(listener.get(), 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(listener.get(), 1), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
    Fd client(socket(AF_INET, SOCK_STREAM, 0));
    ASSERT_EQ(connect(client.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    server_ = Fd(accept(listener.get(), nullptr, nullptr));
    ASSERT_GE(server_.get(), 0);
    s_ = std::make_unique<TcpSendComm>(std::move(client), "loopback");
    drain_ = std::thread([this] {
      std::vector<uint8_t> sink(1 << 16);
      while (read(server_.get(), sink.data(), sink.size()) > 0) {
      }
    });
  }
  void TearDown() override {
    s_.reset();  // closes the client: the drain sees end of file
    if (drain_.joinable()) drain_.join();
  }
  // Sends `bytes` and waits until they are written.
  void send(std::size_t bytes) {
    std::vector<uint8_t> payload(bytes, 0x5a);
    SendItem item;
    item.header.payload_bytes = item.header.original_bytes = payload.size();
    item.data = payload.data();
    int slot = -1;
    ASSERT_TRUE(s_->post(item, &slot).ok());
    ASSERT_GE(slot, 0);
    bool done = false;
    while (!done) ASSERT_TRUE(s_->test(slot, &done).ok());
    s_->release(slot);
  }
  Fd server_;
  std::unique_ptr<TcpSendComm> s_;
  std::thread drain_;
};

TEST_F(LinkRateTest, OneSamplePerWindowOfBusyTime) {
  LinkSample got;
  bool fresh = false;
  for (int i = 0; i < 2000 && !fresh; ++i) {  // 16 MiB a round: a few ms busy, however fast
    send(16u << 20);
    ASSERT_TRUE(s_->link_rate(&got))
        << "Linux reports TCP_INFO's busy time and bytes acked since 4.10";
    fresh = got.fresh;
  }
  ASSERT_TRUE(fresh) << "no window closed";
  EXPECT_GT(got.bytes_per_s, 0);
  LinkSample again;
  ASSERT_TRUE(s_->link_rate(&again));
  EXPECT_FALSE(again.fresh) << "nothing was sent since the last sample";
}

TEST_F(LinkRateTest, AWindowMostlyIdleIsALowerBound) {
  LinkSample got;
  bool fresh = false;
  for (int i = 0; i < 2000 && !fresh; ++i) {
    send(1u << 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // idle far longer than busy
    ASSERT_TRUE(s_->link_rate(&got));
    fresh = got.fresh;
  }
  ASSERT_TRUE(fresh) << "no window closed";
  EXPECT_TRUE(got.lower_bound)
      << "bursts with long pauses between them measure the wire, not a token bucket";
}

}  // namespace
}  // namespace squeeze::transport::tcp
