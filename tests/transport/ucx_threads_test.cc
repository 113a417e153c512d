// All UCX comms of a process share one worker, and NCCL drives them from several threads: two
// connected pairs, each end on its own thread, move data at the same time, and every byte
// arrives where it should.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tests/transport/ucx_test_util.h"

namespace squeeze::transport::ucx {
namespace {

using testutil::Clock;
using testutil::Pair;

constexpr int kMessages = 300;

std::size_t size_of(int m) {
  return static_cast<std::size_t>((m * 7919) % (192 * 1024)) + static_cast<std::size_t>(m % 3);
}
uint8_t byte_of(int pair, int m, std::size_t i) {
  return static_cast<uint8_t>(i * 31 + static_cast<std::size_t>(m) * 7 + pair);
}

// Sends kMessages with 8 in flight; returns "" or what went wrong.
std::string send_side(SendComm& s, int pair) {
  std::vector<std::vector<uint8_t>> bufs(kMessages);
  std::vector<int> slots(kMessages, -1);
  int posted = 0, done = 0;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (done < kMessages) {
    if (Clock::now() > deadline) return "sender timed out";
    while (posted < kMessages && posted - done < 8) {
      bufs[posted].resize(size_of(posted));
      for (std::size_t i = 0; i < bufs[posted].size(); ++i)
        bufs[posted][i] = byte_of(pair, posted, i);
      SendItem it{{posted % 5, PayloadKind::kRaw, bufs[posted].size(), bufs[posted].size()},
                  bufs[posted].data(),
                  nullptr};
      if (Status st = s.post(it, &slots[posted]); !st.ok()) return st.message();
      if (slots[posted] < 0) break;
      ++posted;
    }
    bool ok = false;
    if (Status st = s.test(slots[done], &ok); !st.ok()) return st.message();
    if (ok) {
      s.release(slots[done]);
      bufs[done].clear();
      ++done;
    }
  }
  return "";
}

std::string recv_side(RecvComm& r, int pair) {
  std::vector<std::vector<uint8_t>> bufs(kMessages);
  std::vector<int> slots(kMessages, -1);
  int posted = 0, done = 0;
  Received got[kMaxRecvs];
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (done < kMessages) {
    if (Clock::now() > deadline) return "receiver timed out";
    while (posted < kMessages && posted - done < 8) {
      bufs[posted].assign(size_of(posted) + 100, 0);
      RecvItem it{posted % 5, bufs[posted].data(), bufs[posted].size(), nullptr};
      if (Status st = r.post({&it, 1}, &slots[posted]); !st.ok()) return st.message();
      if (slots[posted] < 0) break;
      ++posted;
    }
    bool ok = false;
    if (Status st = r.test(slots[done], &ok, got); !st.ok()) return st.message();
    if (!ok) continue;
    if (got[0].header.original_bytes != size_of(done))
      return "message " + std::to_string(done) + " has the wrong size";
    for (std::size_t i = 0; i < size_of(done); ++i)
      if (bufs[done][i] != byte_of(pair, done, i))
        return "message " + std::to_string(done) + " is corrupt at byte " + std::to_string(i);
    r.release(slots[done]);
    ++done;
  }
  return "";
}

TEST(UcxThreads, TwoPairsFourThreadsOneWorker) {
  for (const char* tls : {"tcp", "shm"}) {
    testutil::ScopedEnv env("UCX_TLS", tls);
    std::string why;
    std::unique_ptr<Transport> t = testutil::open_on_loopback(&why);
    if (!t) GTEST_SKIP() << "UCX cannot start here with UCX_TLS=" << tls << ": " << why;
    Pair a, b;
    ASSERT_TRUE(testutil::connect_pair(*t, &a));
    ASSERT_TRUE(testutil::connect_pair(*t, &b));
    std::string errors[4];
    std::vector<std::thread> threads;
    threads.emplace_back([&] { errors[0] = send_side(*a.s, 0); });
    threads.emplace_back([&] { errors[1] = recv_side(*a.r, 0); });
    threads.emplace_back([&] { errors[2] = send_side(*b.s, 1); });
    threads.emplace_back([&] { errors[3] = recv_side(*b.r, 1); });
    for (std::thread& th : threads) th.join();
    for (const std::string& e : errors) EXPECT_EQ(e, "") << "UCX_TLS=" << tls;
  }
}

}  // namespace
}  // namespace squeeze::transport::ucx
