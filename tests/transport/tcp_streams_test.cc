// Multi-stream TCP: a connection with a control socket and several data sockets, driven by
// helper threads, delivers every byte of every message in the order sent, with small messages
// on the control socket and large ones cut into parts; a dead socket fails the connection
// within seconds on both ends; the pacing cap reaches each socket and holds the rate.
#include <arpa/inet.h>
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/tcp/stream_layout.h"
#include "transport/tcp/stream_log.h"
#include "transport/tcp/tcp_transport.h"

namespace squeeze::transport::tcp {
namespace {

using Clock = std::chrono::steady_clock;

sock::Interface loopback() {
  sock::Interface lo;
  lo.name = "lo";
  auto* a = reinterpret_cast<sockaddr_in*>(&lo.addr.storage);
  a->sin_family = AF_INET;
  a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  lo.addr.len = sizeof(sockaddr_in);
  return lo;
}

TcpOptions layout(int per_thread, int threads, double rate_bps = 0) {
  TcpOptions o;
  o.nsocks_per_thread = per_thread;
  o.nthreads = threads;
  o.max_rate_bps = rate_bps;
  return o;
}

struct Pair {
  std::unique_ptr<TcpTransport> transport;
  std::unique_ptr<Listener> listener;
  std::unique_ptr<SendComm> send;
  std::unique_ptr<RecvComm> recv;
  uint16_t port = 0;  // the listener's
};

// Connects a send comm to a receive comm over loopback, as NCCL does: connect() and accept()
// called in turn until both return a comm.
void connect_pair(const TcpOptions& o, Pair* p, const sock::SocketOptions& so = {}) {
  p->transport = std::make_unique<TcpTransport>(std::vector<sock::Interface>{loopback()}, so, o);
  alignas(8) uint8_t handle[kHandleBytes] = {};
  ASSERT_TRUE(p->transport->listen(0, handle, &p->listener).ok());
  sockaddr_in addr;
  std::memcpy(&addr, handle + 8, sizeof addr);
  p->port = ntohs(addr.sin_port);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while ((!p->send || !p->recv) && Clock::now() < deadline) {
    if (!p->send) {
      ASSERT_TRUE(p->transport->connect(0, handle, &p->send).ok());
    }
    if (!p->recv) {
      ASSERT_TRUE(p->listener->accept(&p->recv).ok());
    }
  }
  ASSERT_TRUE(p->send && p->recv) << "no connection within 5 s";
}

// The sockets of this process connected to `port` (the sending end of the pair), in fd order:
// the control socket is dialled first.
std::vector<int> sender_sockets(uint16_t port) {
  std::vector<int> fds;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return fds;
  while (dirent* e = readdir(d)) {
    const int fd = atoi(e->d_name);
    if (fd <= 2) continue;
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 &&
        peer.sin_family == AF_INET && ntohs(peer.sin_port) == port)
      fds.push_back(fd);
  }
  closedir(d);
  std::sort(fds.begin(), fds.end());
  return fds;
}

uint8_t pattern(std::size_t msg, std::size_t i) {
  return static_cast<uint8_t>((msg * 131 + i * 7 + (i >> 9)) & 0xff);
}

// The sizes every layout must carry: empty, tiny, around the control-socket limit and the
// part size, odd sizes that leave a short last part, and large ones.
const std::vector<std::size_t> kSizes = {0,
                                         1,
                                         31,
                                         4096,
                                         kMinPartBytes - 1,
                                         kMinPartBytes + 3,
                                         kStripeMinBytes - 1,
                                         kStripeMinBytes,
                                         kStripeMinBytes + 1,
                                         (1u << 20) + 7,
                                         3 * kMinPartBytes + 5,
                                         (3u << 20) + 11,
                                         8,
                                         16u << 20,
                                         100,
                                         (5u << 20) - 1};

class StreamRoundTrip : public ::testing::TestWithParam<std::pair<int, int>> {};

// Messages of every size, up to 8 in flight on each side, raw and frames alike: each arrives
// whole, byte for byte, with its own tag, in the order sent.
TEST_P(StreamRoundTrip, EveryByteInOrder) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect_pair(layout(GetParam().first, GetParam().second), &p));
  constexpr int kRounds = 2;
  constexpr int kDepth = 8;
  const std::size_t n = kSizes.size() * kRounds;
  std::vector<std::vector<uint8_t>> out(n), in(n);
  for (std::size_t m = 0; m < n; ++m) {
    out[m].resize(kSizes[m % kSizes.size()]);
    for (std::size_t i = 0; i < out[m].size(); ++i) out[m][i] = pattern(m, i);
    in[m].assign(out[m].size() + 1, 0xee);  // one guard byte that must stay untouched
  }
  std::atomic<bool> send_ok{true};
  std::thread sender([&] {
    std::vector<int> slots;
    std::size_t posted = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    while ((posted < n || !slots.empty()) && Clock::now() < deadline) {
      if (posted < n && slots.size() < kDepth) {
        SendItem it;
        it.header.tag = static_cast<int32_t>(posted);
        it.header.kind = posted % 3 == 1 ? PayloadKind::kFrame : PayloadKind::kRaw;
        it.header.payload_bytes = it.header.original_bytes = out[posted].size();
        it.data = out[posted].data();
        int slot = -1;
        if (!p.send->post(it, &slot).ok()) break;
        if (slot >= 0) {
          slots.push_back(slot);
          ++posted;
        }
      }
      if (!slots.empty()) {
        bool done = false;
        if (!p.send->test(slots.front(), &done).ok()) break;
        if (done) {
          p.send->release(slots.front());
          slots.erase(slots.begin());
        }
      }
    }
    send_ok = posted == n && slots.empty();
  });
  std::size_t got = 0, posted = 0;
  std::vector<std::pair<int, std::size_t>> slots;  // slot, message
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  while (got < n && Clock::now() < deadline) {
    if (posted < n && slots.size() < kDepth) {
      RecvItem it;
      it.tag = static_cast<int32_t>(posted);
      it.data = in[posted].data();
      it.capacity = out[posted].size();
      int slot = -1;
      ASSERT_TRUE(p.recv->post({&it, 1}, &slot).ok());
      if (slot >= 0) slots.emplace_back(slot, posted++);
    }
    if (slots.empty()) continue;
    bool done = false;
    Received r[1];
    Status st = p.recv->test(slots.front().first, &done, r);
    ASSERT_TRUE(st.ok()) << st.message();
    if (!done) continue;
    const std::size_t m = slots.front().second;
    ASSERT_EQ(r[0].header.tag, static_cast<int32_t>(m));
    ASSERT_EQ(r[0].header.payload_bytes, out[m].size());
    if (r[0].header.kind == PayloadKind::kFrame) {
      ASSERT_EQ(r[0].staged.size(), out[m].size());
      ASSERT_TRUE(std::equal(out[m].begin(), out[m].end(), r[0].staged.begin())) << "frame " << m;
    } else {
      ASSERT_TRUE(std::equal(out[m].begin(), out[m].end(), in[m].begin()))
          << "message " << m << " of " << out[m].size();
      ASSERT_EQ(in[m].back(), 0xee) << "written past the end of message " << m;
    }
    p.recv->release(slots.front().first);
    slots.erase(slots.begin());
    ++got;
  }
  sender.join();
  EXPECT_EQ(got, n);
  EXPECT_TRUE(send_ok);
}

// (sockets per thread, threads): 4 data sockets on 2 threads, 3 on 1, 16 on 4, and the
// single-socket connection (1 x 1: fewer than two data sockets).
INSTANTIATE_TEST_SUITE_P(Layouts, StreamRoundTrip,
                         ::testing::Values(std::pair{2, 2}, std::pair{3, 1}, std::pair{4, 4},
                                           std::pair{1, 1}),
                         [](const auto& param_info) {
                           return std::to_string(param_info.param.first) + "x" +
                                  std::to_string(param_info.param.second);
                         });

class KilledStream : public ::testing::TestWithParam<bool> {};

// While 4 MiB messages stream, one socket of the connection is shut down under it (a data
// socket, or the control socket): both ends report an error within seconds, and neither hangs.
TEST_P(KilledStream, FailsTheConnectionWithinSeconds) {
  const bool control = GetParam();
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect_pair(layout(2, 2), &p));
  const std::vector<int> fds = sender_sockets(p.port);
  ASSERT_EQ(fds.size(), 5u) << "a control socket and 4 data sockets";
  std::vector<uint8_t> out(4u << 20, 0x11), in(4u << 20);
  std::atomic<bool> stop{false};
  std::atomic<double> send_failed_after{-1};
  Clock::time_point killed_at{};
  std::atomic<bool> killed{false};
  std::thread sender([&] {
    int slot = -1;
    while (!stop) {
      if (slot < 0) {
        SendItem it;
        it.header.payload_bytes = it.header.original_bytes = out.size();
        it.data = out.data();
        if (!p.send->post(it, &slot).ok()) break;
        continue;
      }
      bool done = false;
      if (!p.send->test(slot, &done).ok()) break;
      if (done) {
        p.send->release(slot);
        slot = -1;
      }
    }
    if (killed) send_failed_after = std::chrono::duration<double>(Clock::now() - killed_at).count();
  });
  int slot = -1, received = 0;
  Status err;
  const auto deadline = Clock::now() + std::chrono::seconds(12);
  while (Clock::now() < deadline) {
    if (received == 3 && !killed) {  // traffic flows: kill one socket
      killed_at = Clock::now();
      killed = true;
      ASSERT_EQ(shutdown(control ? fds.front() : fds.back(), SHUT_RDWR), 0);
    }
    if (slot < 0) {
      RecvItem it;
      it.data = in.data();
      it.capacity = in.size();
      err = p.recv->post({&it, 1}, &slot);
      if (!err.ok()) break;
      continue;
    }
    bool done = false;
    Received r[1];
    err = p.recv->test(slot, &done, r);
    if (!err.ok()) break;
    if (done) {
      p.recv->release(slot);
      slot = -1;
      ++received;
    }
  }
  const double recv_after = std::chrono::duration<double>(Clock::now() - killed_at).count();
  // The sender fails on its own once its socket is shut down; give it the same seconds.
  const auto send_deadline = Clock::now() + std::chrono::seconds(5);
  while (send_failed_after < 0 && Clock::now() < send_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  sender.join();
  ASSERT_TRUE(killed) << "no traffic before the kill";
  EXPECT_FALSE(err.ok()) << "the receiver never saw the dead socket";
  EXPECT_LT(recv_after, 5.0);
  EXPECT_GE(send_failed_after, 0.0) << "the sender never saw the dead socket";
  EXPECT_LT(send_failed_after, 5.0);
  if (!err.ok()) {
    EXPECT_NE(err.message().find("127.0.0.1"), std::string::npos)
        << "names the peer: " << err.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Which, KilledStream, ::testing::Values(false, true),
                         [](const auto& param_info) {
                           return param_info.param ? "Control" : "Data";
                         });

// SQUEEZE_MAX_RATE's cap reaches the kernel: the control socket may use all of it, each of the
// 4 data sockets a quarter.
TEST(Pacing, CapReachesEverySocket) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect_pair(layout(2, 2, 2e9), &p));
  const std::vector<int> fds = sender_sockets(p.port);
  ASSERT_EQ(fds.size(), 5u);
  for (std::size_t i = 0; i < fds.size(); ++i) {
    uint64_t rate = 0;
    ASSERT_TRUE(sock::max_pacing_rate(fds[i], &rate).ok());
    EXPECT_EQ(rate, i == 0 ? 250000000u : 62500000u) << "socket " << i;
  }
  Pair plain;
  ASSERT_NO_FATAL_FAILURE(connect_pair(layout(1, 1), &plain));
  const std::vector<int> one = sender_sockets(plain.port);
  ASSERT_EQ(one.size(), 1u);
  uint64_t rate = 0;
  ASSERT_TRUE(sock::max_pacing_rate(one[0], &rate).ok());
  EXPECT_EQ(rate, ~uint64_t{0}) << "no cap asked: unpaced";
}

// The cap holds: 24 MiB at 1 Gbit/s on a 4-data-socket connection take 0.2 s or more (a
// lower bound only: a busy machine can be slower, never faster).
TEST(Pacing, HoldsTheRate) {
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect_pair(layout(2, 2, 1e9), &p));
  std::vector<uint8_t> out(8u << 20, 1), in(8u << 20);
  std::thread sender([&] {
    for (int m = 0; m < 3; ++m) {
      SendItem it;
      it.header.payload_bytes = it.header.original_bytes = out.size();
      it.data = out.data();
      int slot = -1;
      while (slot < 0) ASSERT_TRUE(p.send->post(it, &slot).ok());
      bool done = false;
      while (!done) ASSERT_TRUE(p.send->test(slot, &done).ok());
      p.send->release(slot);
    }
  });
  const auto t0 = Clock::now();
  for (int m = 0; m < 3; ++m) {
    RecvItem it;
    it.data = in.data();
    it.capacity = in.size();
    int slot = -1;
    while (slot < 0) ASSERT_TRUE(p.recv->post({&it, 1}, &slot).ok());
    bool done = false;
    Received r[1];
    while (!done) ASSERT_TRUE(p.recv->test(slot, &done, r).ok());
    p.recv->release(slot);
  }
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  sender.join();
  const double gbit = 3.0 * static_cast<double>(out.size()) * 8 / s / 1e9;
  EXPECT_LT(gbit, 1.1) << "24 MiB took " << s << " s";
}

std::vector<std::string>& logged() {
  static std::vector<std::string> lines;
  return lines;
}
void capture(bool warn, const char* message) {
  logged().push_back(std::string(warn ? "WARN " : "INFO ") + message);
}

// Each end logs one INFO line when the connection is made, with its data sockets and helper
// threads and where the numbers came from.
TEST(StreamLog, EachEndLogsItsStreamsOnce) {
  TcpOptions o = layout(2, 2);
  o.nsocks_per_thread_from = "NCCL_NSOCKS_PERTHREAD=2";
  o.nthreads_from = "SQUEEZE_SOCKET_NTHREADS=2";
  sock::SocketOptions so;
  so.log = capture;
  logged().clear();
  Pair p;
  ASSERT_NO_FATAL_FAILURE(connect_pair(o, &p, so));
  ASSERT_EQ(logged().size(), 2u);
  const std::string& to =
      logged()[0].find("connection to") != std::string::npos ? logged()[0] : logged()[1];
  const std::string& from = &to == &logged()[0] ? logged()[1] : logged()[0];
  const std::string port = ":" + std::to_string(p.port);
  EXPECT_EQ(to, "INFO TCP connection to 127.0.0.1" + port +
                    ": 4 data sockets and a control socket, 2 helper threads; sockets per thread: "
                    "NCCL_NSOCKS_PERTHREAD=2 (NCCL's variable), threads: "
                    "SQUEEZE_SOCKET_NTHREADS=2");
  EXPECT_EQ(from.rfind("INFO TCP connection from 127.0.0.1:", 0), 0u) << from;
  EXPECT_NE(from.find(": 4 data sockets and a control socket, 2 helper threads, as the "
                      "connecting end chose"),
            std::string::npos)
      << from;

  logged().clear();
  Pair single;
  ASSERT_NO_FATAL_FAILURE(connect_pair(TcpOptions{}, &single, so));
  ASSERT_EQ(logged().size(), 2u);
  for (const std::string& line : logged())
    EXPECT_NE(line.find(": one socket, no data sockets or helper threads"), std::string::npos)
        << line;
}

TEST(StreamLog, AutoSaysWhatItSawAndMixedSaysBoth) {
  const StreamLayout l = choose_streams(TcpOptions{}, 100000, 32);
  EXPECT_EQ(connect_log_line("10.0.0.2:7000", l, TcpOptions{}, 100000, 32),
            "TCP connection to 10.0.0.2:7000: 8 data sockets and a control socket, 8 helper "
            "threads; sockets per thread: auto, threads: auto (auto: from the link speed and the "
            "cores; link 100000 Mbit/s, 32 cores)");
  TcpOptions mixed = layout(TcpOptions::kAuto, 0);
  mixed.nthreads_from = "NCCL_SOCKET_NTHREADS=0";
  EXPECT_EQ(connect_log_line("h:1", choose_streams(mixed, 0, 2), mixed, 0, 2),
            "TCP connection to h:1: one socket, no data sockets or helper threads; sockets per "
            "thread: auto, threads: NCCL_SOCKET_NTHREADS=0 (NCCL's variable) (auto: one socket "
            "keeps up with this link or these cores; link speed unknown, 2 cores)");
}

TEST(StreamLayout, PartsCoverThePayloadExactly) {
  for (int nsocks : {2, 3, 4, 7, 16, 64}) {
    for (uint64_t bytes : {kStripeMinBytes, kStripeMinBytes + 1, uint64_t{1} << 20,
                           (uint64_t{64} << 20) + 3, uint64_t{5} * kMinPartBytes - 1}) {
      const int n = part_count(bytes, nsocks);
      ASSERT_GE(n, 1);
      ASSERT_LE(n, nsocks) << "never more parts than sockets";
      uint64_t next = 0;
      for (int i = 0; i < n; ++i) {
        const Part part = part_at(bytes, nsocks, i);
        EXPECT_EQ(part.offset, next);
        EXPECT_GT(part.bytes, 0u);
        if (i + 1 < n) {
          EXPECT_GE(part.bytes, kMinPartBytes);
        }
        next += part.bytes;
      }
      EXPECT_EQ(next, bytes) << bytes << " bytes over " << nsocks;
    }
  }
  EXPECT_EQ(part_count(0, 4), 0);
}

TEST(StreamLayout, ExplicitValuesWinAndAreCapped) {
  StreamLayout l = choose_streams(layout(4, 2), 1000, 2);
  EXPECT_EQ(l.nthreads, 2);
  EXPECT_EQ(l.nsocks, 8);
  l = choose_streams(layout(1, 1), 400000, 64);
  EXPECT_EQ(l.nsocks, 0) << "one data socket in all: the single-socket connection";
  l = choose_streams(layout(64, 16), 400000, 64);
  EXPECT_EQ(l.nthreads, 16);
  EXPECT_EQ(l.nsocks, 64) << "at most 64 sockets, as NCCL";
  l = choose_streams(layout(4, 0), 400000, 64);
  EXPECT_EQ(l.nsocks, 0) << "no helper threads: one socket";
}

TEST(StreamLayout, AutoFollowsLinkSpeedAndCores) {
  const TcpOptions a = layout(TcpOptions::kAuto, TcpOptions::kAuto);
  EXPECT_EQ(choose_streams(a, 10000, 64).nsocks, 0) << "10 Gbit/s: one socket keeps up";
  EXPECT_EQ(choose_streams(a, 100000, 2).nsocks, 0) << "2 cores: no helper threads";
  StreamLayout l = choose_streams(a, 100000, 32);
  EXPECT_EQ(l.nsocks, 8);
  EXPECT_EQ(l.nthreads, 8);
  l = choose_streams(a, 400000, 16);
  EXPECT_EQ(l.nthreads, 8) << "one thread per two cores";
  EXPECT_EQ(l.nsocks, 32);
  l = choose_streams(layout(TcpOptions::kAuto, 2), 100000, 32);
  EXPECT_EQ(l.nthreads, 2);
  EXPECT_EQ(l.nsocks, 8) << "sockets per thread fill the link's want";
}

}  // namespace
}  // namespace squeeze::transport::tcp
